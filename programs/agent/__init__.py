"""The guarded agent: the DeltaSeek module, its scratchpad, its guardrails and its fallbacks."""

from deltaseek.programs.agent.deltaseek import DeltaSeek, shipped_program
from deltaseek.programs.agent.logged_model import log_program
from deltaseek.programs.agent.program_file import load_program_file, save_program
from deltaseek.programs.agent.run import run_question
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad, StepRecord, ToolCall
from deltaseek.programs.agent.settings import AgentSettings

__all__ = [
    "AgentSettings",
    "DeltaSeek",
    "Fact",
    "Scratchpad",
    "StepRecord",
    "ToolCall",
    "load_program_file",
    "log_program",
    "run_question",
    "save_program",
    "shipped_program",
]
