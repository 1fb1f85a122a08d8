"""The scratchpad: the agent's whole state, its trajectory, and what a user inspects after a run."""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, Field

from deltaseek.files import write_text_atomically
from deltaseek.programs.agent.lm_faults import LMFault
from deltaseek.programs.lm.profile import ProfileName
from deltaseek.programs.tools.base import ToolStatus
from deltaseek.signatures import AnswerabilityStatus


class ToolCall(BaseModel):
    step: int
    tool: str
    args: dict[str, str]
    status: ToolStatus
    executed: bool
    result_count: int = 0
    new_facts: int = 0
    top_score: float | None = None
    blocked_reason: str | None = None
    origin: Literal["structured", "text", "diversified", "rerouted", "tool_first", "program"] = "structured"
    """Who chose the call: the LM (structured or text), the LM asked for another angle (diversified),
    or the program (rerouted from a failed tool, tool first, or `program`: its own query in place of
    an unusable proposal)."""
    proposed: str | None = None
    """What the LM proposed when the program replaced it."""
    replaced_because: str | None = None
    summary: str = ""

    @property
    def query(self) -> str:
        return self.args.get("query", "")


class Fact(BaseModel):
    source: str
    title: str
    url: str | None = None
    text: str
    step: int


class StepRecord(BaseModel):
    step: int
    new_evidence: list[str] = Field(default_factory=list)
    uncertain: list[str] = Field(default_factory=list)
    answerability: str = "unknown"
    move: str = ""
    observation: str = ""
    note: str = ""


class Scratchpad(BaseModel):
    question: str
    task_kind: str = "lookup"
    profile: ProfileName = "capable"
    """The profile the run goes on with (see `programs/agent/profile.py`)."""
    profile_because: str = ""
    """Who chose it, or what reply switched the run to the small profile."""
    profile_follows_replies: bool = False
    """Nobody chose the profile: a reply that fails a check switches the run to the small one."""
    assumptions: list[str] = Field(default_factory=list)
    plan: list[str] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    uncertainties: list[str] = Field(default_factory=list)
    answer: str | None = None
    """The final answer, set once (what the model proposed is in the prediction's `proposed_answer`)."""
    answered_by: Literal["model", "evidence", "program"] | None = None
    """With stop reason `answered`, who ended the search: the model asked for the answer, the facts
    held a typed answer, or the program had no query of its own left."""
    stop_because: str = ""
    """Why the search ended, in the words of the check that ended it (`policy.STOP_CHECKS`, or the step's)."""
    answer_origin: Literal["lm", "extracted", "evidence"] | None = None
    """lm: the model's answer passed the checks; extracted: a span read from a fact; evidence: what
    was found, said by the program (a quote, or that the exact answer was not found)."""
    answer_replaced_because: str | None = None
    """The check the model's answer failed, when the program answered in its place."""
    claimed_answerability: AnswerabilityStatus | None = None
    """The model's latest claim (a step's or the judge's label); None before it made one."""
    evidence_answerability: str = "unknown"
    """The evidence's reading after the last search (`evidence.read_evidence`): direct, proxy_only,
    unlikely, unknown, or untyped (the question names no answer type to look for)."""
    answerability: AnswerabilityStatus = "unknown"
    """The final label, set once, with the answer."""
    confidence: float | None = None
    """The calibrated probability that the answer is right (`confidence.py`); None without a model."""
    confidence_signals: dict[str, float] = Field(default_factory=dict)
    """What the confidence was computed from, kept so a model can be refitted on the runs."""
    subject_presence: dict[str, bool | None] = Field(default_factory=dict)
    subject_unknown_to: dict[str, list[str]] = Field(default_factory=dict)
    """For each subject of the question, the tools that cannot tell whether they hold it: only a
    search naming it on each of them shows it missing."""
    """For each subject of the question, whether the tools hold a passage naming it (None: no tool can tell)."""
    model_unusable: bool = False
    """The model's replies could not be used this many times in a row that the program went on alone."""
    replaced_moves_in_a_row: int = 0
    program_leads: bool = False
    """The model's moves were replaced so many times in a row (`replaced_moves_before_program_leads`)
    that the program makes the moves; the model is still asked for the answer."""
    steps: list[StepRecord] = Field(default_factory=list)
    soft_budget: int = 4
    hard_budget: int = 8
    max_searches: int | None = None
    """Executed searches this question gets at most: the setting, tightened by the task kind's cap."""
    strategy_order: list[str] = Field(default_factory=list)
    strategies_used: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="guardrail messages for the next step")
    lm_calls: int = 0
    """The LM calls the program made (a helper call is made only where a step made none: at most steps + 1)."""
    consecutive_lm_failures: int = 0
    lm_faults: list[LMFault] = Field(default_factory=list)
    """LM calls the run went on without: rate-limited, failed, or a reply that could not be read."""
    read_leniently: list[str] = Field(default_factory=list)
    """Fields of the model's replies read as what they say (`lenient_reply`), by the call: a near
    miss of a field's type that DSPy's adapter refused ("synthesize: answerability 'Direct' as
    'direct'"), or a text it read as a list's Python form or with a reasoning model's scratch."""

    @property
    def program_moves(self) -> bool:
        """The program makes the moves, not the model: its replies could not be used, or its moves
        were replaced too often in a row."""
        return self.model_unusable or self.program_leads

    @property
    def step(self) -> int:
        return len(self.steps)

    @property
    def executed_calls(self) -> list[ToolCall]:
        return [c for c in self.tool_calls if c.executed]

    @property
    def blocked_calls(self) -> list[ToolCall]:
        return [c for c in self.tool_calls if not c.executed]

    @property
    def tried_queries(self) -> list[str]:
        """Every query run so far, with no repeats, in order."""
        return list(dict.fromkeys(c.query for c in self.executed_calls))

    def add_facts(self, facts: list[Fact]) -> int:
        """Add facts not already known (one per source); returns how many were new."""
        known = {f.source for f in self.facts}
        fresh = [f for f in facts if f.source not in known]
        self.facts.extend(fresh)
        return len(fresh)

    def render(self, fact_chars: int = 160, max_facts: int = 6, facts: list[Fact] | None = None,
               brief: bool = False) -> str:
        """A compact view for the LM: it grows with what was learned, not with the number of steps.
        `facts`: the facts to show (default: the last `max_facts`). `brief`: without the lines a
        small model cannot use (the question restated, the answerability so far)."""
        lines = []
        if not brief:
            lines.append(f"Interpretation: {self.question}")
        if self.assumptions:
            lines.append("Assumptions: " + "; ".join(self.assumptions))
        lines.append("Facts:" if self.facts else "Facts: none yet")
        shown = self.facts[-max_facts:] if facts is None else facts
        lines += [f"- [{f.source}] {f.title}: {f.text[:fact_chars]}" for f in shown]
        if self.tool_calls:
            lines.append("Searches already run (do not repeat):")
            lines += [f"- {c.tool}: \"{c.query}\" -> {c.result_count} results, {c.status.value}" for c in self.executed_calls]
            lines += [f"- {c.tool}: \"{c.query}\" -> blocked ({c.blocked_reason})" for c in self.blocked_calls[-3:]]
        if self.uncertainties:
            lines.append("Still unknown: " + "; ".join(self.uncertainties[-2:]))
        if not brief:
            lines.append(f"Answerability so far: {self.claimed_answerability or self.evidence_answerability}")
        return "\n".join(lines)

    def save(self, path: str | os.PathLike) -> None:
        """Atomic write: a crash mid-write never leaves a truncated trajectory."""
        write_text_atomically(path, self.model_dump_json(indent=2))
