"""What steers the search and what ends it before a step: small named functions of the run's
state (the scratchpad, the settings, the profile), each unit-testable without an LM.

`steering` is the answerability that steers the search; each stop check returns a `Verdict` (the
stop reason and why) or None to go on. `stop_verdict` returns the first verdict; the loop records
its reason on the scratchpad (`stop_because`), so the trajectory says which check ended the
search and why. The step's own stops (the model asked for the answer, its claim settled the
answerability, no new query was left) are recorded the same way.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from deltaseek.programs.agent import guardrails as guard
from deltaseek.programs.agent.evidence import unexplored_meaning
from deltaseek.programs.agent.profile import Profile
from deltaseek.programs.agent.scratchpad import Scratchpad
from deltaseek.programs.agent.settings import AgentSettings
from deltaseek.signatures import StopReason


class Verdict(NamedTuple):
    stop: StopReason
    because: str
    answered_by: Literal["model", "evidence", "program"] | None = None


def steps_left(pad: Scratchpad) -> bool:
    """Room for one more search and the answer after it."""
    return pad.step < pad.hard_budget - 1


def steering(pad: Scratchpad) -> str:
    """The answerability that steers the search, from the two kept apart on the scratchpad:
    the evidence's reading where it can decide (a 135M model says "unlikely" out of habit),
    the model's claim where it cannot (the question names no answer type to look for)."""
    reading, claimed = pad.evidence_answerability, pad.claimed_answerability or "unknown"
    if reading == "untyped":
        return claimed
    open_leads = guard.uncovered_terms(pad) or unexplored_meaning(pad)
    if reading == "proxy_only" and claimed != "proxy_only" and open_leads and steps_left(pad):
        return "unknown"  # proxies so far, the model does not agree, and a lead is open: follow it first
    return reading


def evidence_answers(pad: Scratchpad, profile: Profile) -> bool:
    """Where the profile lets the evidence decide (or no model moves), a typed answer in the
    facts, with every term of the question covered, ends the search without another step call:
    a small model's step at that point could only repeat it."""
    return ((profile.evidence_decides or pad.program_moves) and bool(pad.executed_calls)
            and steering(pad) == "direct" and not guard.uncovered_terms(pad))


def hard_budget(pad: Scratchpad, settings: AgentSettings, profile: Profile) -> Verdict | None:
    if guard.hard_budget_reached(pad, pad.hard_budget):
        return Verdict("hard_budget", f"{pad.step} steps: the hard budget")
    return None


def search_limit(pad: Scratchpad, settings: AgentSettings, profile: Profile) -> Verdict | None:
    if not guard.search_limit_reached(pad, pad.max_searches):
        return None
    if evidence_answers(pad, profile):  # the last search allowed found the answer: nothing was cut short
        return Verdict("answered", "the last search allowed found a typed answer", "evidence")
    return Verdict("max_searches", f"{len(pad.executed_calls)} searches: the most this question gets")


def answerability_settled(pad: Scratchpad, settings: AgentSettings, profile: Profile) -> Verdict | None:
    if guard.answerability_stops_search(pad, steered := steering(pad)):
        return Verdict("answerability", f"the answerability steering the search is {steered}")
    return None


def search_exhausted(pad: Scratchpad, settings: AgentSettings, profile: Profile) -> Verdict | None:
    window = settings.exhaustion_window
    if guard.search_exhausted(pad, window):
        return Verdict("exhausted", f"the last {window} searches found nothing new or relevant")
    return None


def evidence_decides(pad: Scratchpad, settings: AgentSettings, profile: Profile) -> Verdict | None:
    if evidence_answers(pad, profile):
        return Verdict("answered", "the facts hold a typed answer and cover every term of the question", "evidence")
    return None


STOP_CHECKS = (hard_budget, search_limit, answerability_settled, search_exhausted, evidence_decides)
"""In order: the first that returns a verdict ends the search."""


def stop_verdict(pad: Scratchpad, settings: AgentSettings, profile: Profile) -> Verdict | None:
    """The first stop check's verdict, or None: the loop takes another step."""
    return next((verdict for check in STOP_CHECKS if (verdict := check(pad, settings, profile)) is not None), None)


def count_model_move(pad: Scratchpad, profile: Profile, replaced: bool) -> None:
    """Count the model's moves the checks replaced in a row; at the profile's limit the program
    leads (on unseen questions four in five of the embedded model's later moves were replaced,
    each after a step call whose seconds were spent for nothing)."""
    pad.replaced_moves_in_a_row = pad.replaced_moves_in_a_row + 1 if replaced else 0
    limit = profile.replaced_moves_before_program_leads
    if limit and pad.replaced_moves_in_a_row >= limit:
        pad.program_leads = True
        pad.steps[-1].note += (("; " if pad.steps[-1].note else "") + "the program makes the next moves: the "
                               f"model's last {pad.replaced_moves_in_a_row} move(s) were replaced")
