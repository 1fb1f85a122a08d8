"""What ends the search before a step: a list of small named checks, run in order.

Each check reads the run's state (the scratchpad, and the program's settings and readings of the
evidence) and returns a `Verdict` (the stop reason and why) or None to go on. `stop_verdict`
returns the first verdict; the loop records its reason on the scratchpad (`stop_because`), so the
trajectory says which check ended the search and why. The step's own stops (the model asked for the
answer, its claim settled the answerability, no new query was left) are recorded the same way.
"""

from __future__ import annotations

from typing import Literal, NamedTuple, Protocol

from deltaseek.programs.agent import guardrails as guard
from deltaseek.programs.agent.scratchpad import Scratchpad
from deltaseek.programs.agent.settings import AgentSettings
from deltaseek.signatures import StopReason


class Verdict(NamedTuple):
    stop: StopReason
    because: str
    answered_by: Literal["model", "evidence", "program"] | None = None


class Agent(Protocol):
    """What the checks read of the program besides the scratchpad."""

    settings: AgentSettings

    def steering(self, pad: Scratchpad) -> str: ...

    def evidence_answers(self, pad: Scratchpad) -> bool: ...


def hard_budget(agent: Agent, pad: Scratchpad) -> Verdict | None:
    if guard.hard_budget_reached(pad, pad.hard_budget):
        return Verdict("hard_budget", f"{pad.step} steps: the hard budget")
    return None


def search_limit(agent: Agent, pad: Scratchpad) -> Verdict | None:
    if not guard.search_limit_reached(pad, pad.max_searches):
        return None
    if agent.evidence_answers(pad):  # the last search allowed found the answer: nothing was cut short
        return Verdict("answered", "the last search allowed found a typed answer", "evidence")
    return Verdict("max_searches", f"{len(pad.executed_calls)} searches: the most this question gets")


def answerability_settled(agent: Agent, pad: Scratchpad) -> Verdict | None:
    if guard.answerability_stops_search(pad, steering := agent.steering(pad)):
        return Verdict("answerability", f"the answerability steering the search is {steering}")
    return None


def search_exhausted(agent: Agent, pad: Scratchpad) -> Verdict | None:
    window = agent.settings.exhaustion_window
    if guard.search_exhausted(pad, window):
        return Verdict("exhausted", f"the last {window} searches found nothing new or relevant")
    return None


def evidence_answers(agent: Agent, pad: Scratchpad) -> Verdict | None:
    if agent.evidence_answers(pad):
        return Verdict("answered", "the facts hold a typed answer and cover every term of the question", "evidence")
    return None


STOP_CHECKS = (hard_budget, search_limit, answerability_settled, search_exhausted, evidence_answers)
"""In order: the first that returns a verdict ends the search."""


def stop_verdict(agent: Agent, pad: Scratchpad) -> Verdict | None:
    """The first stop check's verdict, or None: the loop takes another step."""
    return next((verdict for check in STOP_CHECKS if (verdict := check(agent, pad)) is not None), None)
