"""The final answer: the LM's proposal, checked against the program's own reading of the evidence.

The LM's answer is kept only if it is grounded in a fact and holds a span of the type the question
asks for; otherwise the reader's extracted span, else the related figures, else the best evidence.
Answerability comes from the evidence; the caveats from the program's own state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deltaseek.programs.agent import guardrails as guard
from deltaseek.programs.agent.evidence import Reading, answer_fits_question, extracted_answer, proxy_answer
from deltaseek.programs.agent.fallbacks import best_effort_answer, best_effort_fact
from deltaseek.programs.agent.scratchpad import Scratchpad
from deltaseek.signatures import StopReason
from deltaseek.signatures import guidance as text


@dataclass
class Proposal:
    """What the synthesis step proposed, before the guardrails dispose of it."""
    answer: str
    caveats: list[str]
    assumptions: list[str]
    sources: list[str]
    answerability: str | None
    asked: bool = True
    """False when the model was not asked: the evidence decided the answer."""
    prediction: Any = None
    """The synthesis predictor's own output (DSPy's trace holds it), when the model was asked."""


def choose_answer(pad: Scratchpad, proposal: Proposal, reading: Reading) -> tuple[str, str, list[str]]:
    """The LM's answer if it is grounded in a fact and fits the question's type; else the span
    the reader extracted (with its sentence's fact as the source); else the best evidence."""
    known = {f.source for f in pad.facts}
    copied = reading.spans and guard.quotes_a_fact(proposal.answer, pad)  # a quote when a typed span exists
    if (proposal.answer and pad.facts and guard.answer_is_grounded(proposal.answer, pad) and not copied
            and answer_fits_question(proposal.answer, pad.question)):
        return proposal.answer, "lm", [s for s in proposal.sources if s in known] or [f.source for f in pad.facts[:3]]
    if reading.spans:
        return extracted_answer(reading), "extracted", list(dict.fromkeys(e.source for e in reading.spans))
    if reading.proxies:
        titles = {f.source: f.title for f in pad.facts}
        return (proxy_answer(pad.question, reading, titles), "extracted",
                list(dict.fromkeys(e.source for e in reading.proxies)))
    best = best_effort_fact(pad)
    return best_effort_answer(pad, best), "evidence", [best.source] if best else []

def final_answerability(pad: Scratchpad, reading: Reading, proposal: Proposal, origin: str) -> str:
    """From the evidence where it decides. The LM's label may tighten it only when its own
    answer passed the checks; it never makes an answer without a typed span "direct"."""
    if reading.answerability == "untyped":
        return guard.settle_answerability(pad, proposal.answerability)
    if reading.answerability == "unknown":
        tightened = proposal.answerability if proposal.answerability in ("proxy_only", "unlikely") else None
        return tightened or ("proxy_only" if origin == "lm" else "unlikely")
    if (origin == "lm" and reading.answerability == "direct"
            and proposal.answerability in ("proxy_only", "unlikely")):
        return proposal.answerability
    return reading.answerability

def state_caveats(pad: Scratchpad, stop: StopReason, origin: str, model_asked: bool = True) -> list[str]:
    """Caveats the program states from its own state, whatever the LM wrote. `origin` is the
    answer's, or "none" when the answer says that nothing was found (it quotes nothing)."""
    caveats = []
    if stop in text.STOP_CAVEATS:
        caveats.append(text.STOP_CAVEATS[stop])
    for call in pad.executed_calls:
        if call.status.failed:
            caveats.append(f"{call.tool} failed ({call.status.value}): {call.summary}")
    if origin == "extracted" and model_asked:
        caveats.append("The model's answer did not fit the question or the facts; the answer was read "
                       "from the passages found.")
    elif origin == "extracted":
        caveats.append("The answer was read from the passages found, as the span of the kind asked for.")
    elif origin == "evidence":
        caveats.append("No passage found states an answer of the kind asked for; the answer quotes the "
                       "most relevant evidence.")
    return caveats
