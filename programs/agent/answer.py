"""The final answer: the model's, unless a check names what is wrong with it; else the program's own.

The model's answer is used as written when `checks.answer_failure` finds nothing wrong; its
answerability claim is then the final label. Otherwise the program answers from its reading of
the evidence: the reader's confident span, else the related figures, else what was found and
that the exact answer was not (`unlikely`, or `unknown` when nothing could be searched or the
model could not be used). The caveats say which happened and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deltaseek.programs.agent.checks import is_abstention
from deltaseek.programs.agent.evidence import Reading, asks_in_english, extracted_answer, proxy_answer
from deltaseek.programs.agent.fallbacks import best_effort_fact
from deltaseek.programs.agent.scratchpad import Scratchpad
from deltaseek.signatures import ANSWERABILITY, StopReason
from deltaseek.signatures import guidance as text


@dataclass
class Proposal:
    """What the synthesis step proposed, before the checks."""
    answer: str
    caveats: list[str]
    assumptions: list[str]
    sources: list[str]
    answerability: str | None
    asked: bool = True
    """False when the model was not asked: the evidence decided the answer."""
    prediction: Any = None
    """The synthesis predictor's own output (DSPy's trace holds it), when the model was asked."""


@dataclass
class FinalAnswer:
    text: str
    origin: str
    """lm, extracted or evidence (see `Scratchpad.answer_origin`)."""
    sources: list[str]
    answerability: str
    replaced_because: str | None = None


def model_answer(pad: Scratchpad, proposal: Proposal) -> FinalAnswer:
    """The model's answer as written, its sources those of the facts it names, its label its own
    claim: an abstention is `unlikely` (or `proxy_only` when the model says proxies answer it)."""
    known = {f.source for f in pad.facts}
    sources = [s for s in proposal.sources if s in known] or [f.source for f in pad.facts[:3]]
    claimed = proposal.answerability if proposal.answerability in ANSWERABILITY else None
    if is_abstention(proposal.answer):
        label = "proxy_only" if claimed == "proxy_only" else "unlikely"
        return FinalAnswer(proposal.answer, "lm", [], label)
    return FinalAnswer(proposal.answer, "lm", sources, claimed or "direct")


def cannot_deny(pad: Scratchpad, missing_subjects: list[str]) -> bool:
    """Whether "no information found" cannot be taken to mean the answer does not exist: the model
    could not be used and no subject was found missing, or the question is in another language than
    the reader's (its subject may be in the sources under another spelling: "Ксиззивилл")."""
    return (pad.model_unusable and not missing_subjects) or not asks_in_english(pad.question)


def program_answer(pad: Scratchpad, reading: Reading) -> FinalAnswer:
    """The program's own answer: the reader's confident span, else the related figures, else what
    was found and that the exact answer was not. That last is `unlikely`, or `unknown` where the
    program cannot deny it (`cannot_deny`: the closest passage is quoted, not denied). (A run whose
    every search failed is answered before this, in `final.final_answer`.)"""
    if reading.spans:
        return FinalAnswer(extracted_answer(reading), "extracted",
                           list(dict.fromkeys(e.source for e in reading.spans)), reading.answerability)
    if reading.proxies:
        titles = {f.source: f.title for f in pad.facts}
        return FinalAnswer(proxy_answer(pad.question, reading, titles), "extracted",
                           list(dict.fromkeys(e.source for e in reading.proxies)), "proxy_only")
    label = "unknown" if cannot_deny(pad, []) else "unlikely"
    closest = reading.unsure[0] if reading.unsure else None
    if closest is not None:
        title = next((f.title for f in pad.facts if f.source == closest.source), "")
        return FinalAnswer(f"The passages found do not state the answer for sure. Closest evidence{_titled(title)}: "
                           f"{closest.sentence}", "evidence", [closest.source], label)
    best = best_effort_fact(pad)
    if best is None:
        return FinalAnswer(f"No information found about \"{pad.question}\".", "evidence", [], label)
    if reading.answerability == "untyped" and not asks_in_english(pad.question):
        # The reader reads English question words, and this question has none (another language):
        # the program cannot tell whether the passage answers it, so it neither denies nor asserts
        # it. An English question it read and found unanswered is denied as ever.
        return FinalAnswer(f"The closest passage found{_titled(best.title)}: {best.text[:300]}", "evidence",
                           [best.source], "unknown")
    return FinalAnswer(f"The passages found do not state the answer. Closest evidence{_titled(best.title)}: "
                       f"{best.text[:300]}", "evidence", [best.source], label)


def _titled(title: str) -> str:
    """" (Title)" after "Closest evidence", or nothing for a passage without a title."""
    return f" ({title.strip()})" if title.strip() else ""


def state_caveats(pad: Scratchpad, stop: StopReason, final: FinalAnswer, model_asked: bool = True) -> list[str]:
    """Caveats the program states from its own state, whatever the model wrote: why the search
    stopped, which tools failed, and where the answer came from (and why not from the model)."""
    caveats = []
    if stop in text.STOP_CAVEATS:
        caveats.append(text.STOP_CAVEATS[stop])
    for call in pad.executed_calls:
        if call.status.failed:
            caveats.append(f"{call.tool} failed ({call.status.value}): {call.summary}")
    if pad.model_unusable:
        caveats.append("The model's replies could not be used; the program searched with its own queries "
                       "and read the passages itself.")
    if final.origin == "lm" or not pad.facts:
        return caveats
    if final.replaced_because and model_asked:
        read = "; the answer was read from the passages found" if final.origin == "extracted" else ""
        caveats.append(f"The model's answer was set aside ({final.replaced_because}){read}.")
    elif final.origin == "extracted":
        caveats.append("The answer was read from the passages found, as the span of the kind asked for.")
    if final.origin == "evidence":
        caveats.append("No passage found states the exact answer for sure; the answer says what was found.")
    return caveats
