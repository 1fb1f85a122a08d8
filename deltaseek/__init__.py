"""deltaseek: a DSPy search agent that never gets stuck.

    import dspy
    from deltaseek import DeltaSeek, configure_lm

    configure_lm()                      # the embedded SmolLM2; or configure_lm("openai/gpt-4o-mini")
    program = DeltaSeek()               # tools: the bundled corpus; or tools=build_tools("web,wikipedia")
                                        # shipped_program(): the compiled one, when this version ships it
    print(program(question="Who designed the Ruby language?").answer)
"""

from deltaseek.bundled import SEED_QUESTIONS, bundled_corpora, corpus_path, labeled_set
from deltaseek.errors import (
    CorpusError,
    DatasetError,
    DeltaSeekError,
    LMConfigError,
    ProgramFileError,
    ToolConfigError,
    UsageError,
)
from deltaseek.metrics import answerability_accuracy, combined_metric, exact_match, gepa_feedback_metric, token_f1
from deltaseek.optimize.compile import OPTIMIZERS, compile_program
from deltaseek.optimize.evaluate import evaluate_program
from deltaseek.optimize.labeled_data import load_labeled, split
from deltaseek.programs.agent import (AgentSettings, DeltaSeek, Scratchpad, log_program, run_question, save_program,
                                      shipped_program)
from deltaseek.programs.index import CorpusIndex
from deltaseek.programs.lm import configure_lm, make_lm
from deltaseek.programs.tools import SearchTool, ToolResult, ToolStatus, build_tools

__all__ = [
    "OPTIMIZERS",
    "SEED_QUESTIONS",
    "AgentSettings",
    "CorpusError",
    "CorpusIndex",
    "DatasetError",
    "DeltaSeek",
    "DeltaSeekError",
    "LMConfigError",
    "ProgramFileError",
    "Scratchpad",
    "SearchTool",
    "ToolConfigError",
    "ToolResult",
    "ToolStatus",
    "UsageError",
    "answerability_accuracy",
    "build_tools",
    "bundled_corpora",
    "combined_metric",
    "compile_program",
    "configure_lm",
    "corpus_path",
    "evaluate_program",
    "exact_match",
    "gepa_feedback_metric",
    "labeled_set",
    "load_labeled",
    "log_program",
    "make_lm",
    "run_question",
    "save_program",
    "shipped_program",
    "split",
    "token_f1",
]
