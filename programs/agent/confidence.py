"""The answer's confidence: what a finished run says about whether its answer is right, and the
label that follows from it.

`answer_signals` describes the run in numbers that carry over to new text (where the answer came
from, the type asked, the reader's own doubts, whether the model and the reader agree, how often
and how near the question's words the passages read write the answer); the reader's
`ConfidenceModel` turns them into the probability that the answer is right (for an abstention,
that the passages do not state it). `settle` takes the reader's span as an answer or as none by
that probability and the probability that the passages do not state the answer (the reader's
own threshold decides only whether to search on);
`follow_confidence` then labels the answer: `direct` only at or above the model's bound, else a
best guess (`unknown`) whose caveat states the confidence.
"""

from __future__ import annotations

import math
import re

from deltaseek.programs.agent.answer import FinalAnswer, Proposal, program_answer
from deltaseek.programs.agent.checks import is_abstention
from deltaseek.programs.agent.evidence import Reading
from deltaseek.programs.agent.learned_reader import ReaderModel, expected_answer_types, sentences
from deltaseek.programs.agent.learned_reader.model import ConfidenceModel
from deltaseek.programs.agent.scratchpad import Scratchpad
from deltaseek.programs.agent.settings import AgentSettings
from deltaseek.programs.text import fold_accents, meaningful_tokens


def answer_signals(pad: Scratchpad, final: FinalAnswer, reading: Reading, proposal: Proposal,
                   missing_subjects: list[str], stopped_early: bool) -> dict[str, float]:
    """The run's signals (names in `model.CONFIDENCE_SIGNALS`): zeros are left out."""
    kinds = expected_answer_types(pad.question)
    asked = sorted(meaningful_tokens(pad.question))
    values = {f"origin_{final.origin}": 1.0, f"label_{final.answerability}": 1.0, "parts": float(len(kinds)),
              "question_words_log": math.log1p(len(asked)),
              "subject_missing": float(bool(missing_subjects)), "facts_log": math.log1p(len(pad.facts)),
              "stopped_early": float(stopped_early), "model_proposed": float(bool(proposal.asked and proposal.answer))}
    values.update({f"ask_{kind}": 1.0 for kind in kinds})
    read = reading.spans[0] if reading.spans else reading.unsure[0] if reading.unsure else None
    if read is not None:
        values.update({"read_span": 1.0, "reader_sure": float(bool(reading.spans)),
                       "reader_confidence": read.confidence, f"span_{read.kind}": 1.0, **read.signals})
    if final.origin == "evidence" or final.answerability == "unlikely" or is_abstention(final.text):
        values["abstains"] = 1.0  # the rest describes an answer's text, and an abstention asserts none
        return {name: round(v, 4) for name, v in values.items() if v}
    answer = _words(final.text)
    # each part of a two-part answer ("Ada Lind; 1850") is read as an answer of its own: all must be written
    parts = [_how_written(_words(part), pad, asked) for part in final.text.split("; ")] if len(kinds) > 1 else [
        _how_written(answer, pad, asked)]
    values.update({
        "answer_words_log": sum(math.log1p(part["words"]) for part in parts) / len(parts),
        "answer_in_question": _share(answer, set(_words(pad.question))),
        "answer_in_facts": float(all(part["in_text"] for part in parts)),
        "answer_in_titles": float(all(part["titled"] for part in parts)),
        "answer_passages_log": math.log1p(min(part["passages"] for part in parts)),
        "question_near_answer": sum(part["near"] for part in parts) / len(parts),
    })
    if read is not None:
        values["answer_is_read_span"] = _share(_words(read.span), set(answer))
        if proposal.asked and proposal.answer:
            values["model_agrees_reader"] = _share(_words(read.span), set(_words(proposal.answer)))
    return {name: round(v, 4) for name, v in values.items() if v}


READ_BY_THE_READER = "ranker_share"
"""The signal every span the ranker (or the adapter beside it) read carries, and no comparison,
description or restated span does: only such spans can be set aside for a low confidence."""


SET_ASIDE = "was set aside for its low confidence"
"""What the caveat of a reader's span taken as no answer says of it."""


def settle(pad: Scratchpad, final: FinalAnswer, reading: Reading, proposal: Proposal, missing_subjects: list[str],
           stopped_early: bool, reader: ReaderModel,
           settings: AgentSettings) -> tuple[FinalAnswer, float | None, dict[str, float], str | None]:
    """The final answer as its confidence leaves it, the confidence, the signals it was read from,
    and the caveat saying what the confidence changed. One margin, the abstain margin, decides
    whether a span the reader read is an answer: one is taken as no answer (the facts read are
    said not to state it, its sentence quoted as the closest evidence) where that is likelier
    right than the span by more than the margin (`should_set_aside`), and one the reader doubted
    (below its own threshold) that is not set aside so is shown as an answer. An abstention's confidence
    is the probability that the passages do not state the answer; an answer's label then follows
    its confidence (`follow_confidence`)."""
    signals = answer_signals(pad, final, reading, proposal, missing_subjects, stopped_early)
    model = reader.confidence if reader.confidence and reader.confidence.profile == pad.profile else None
    if model is None:
        return final, None, signals, None
    margin = _setting(settings.abstain_margin, model.abstain_margin)
    direct = _setting(settings.direct_confidence, model.direct_bound)
    if margin is not None and doubted_by_the_reader(final, reading, missing_subjects):
        span = program_answer(pad, Reading(spans=reading.unsure, answerability="unknown"))
        span.replaced_because = final.replaced_because
        span_signals = answer_signals(pad, span, reading, proposal, missing_subjects, stopped_early)
        confidence, absent = _span_and_absence(model, span_signals)
        if should_set_aside(confidence, absent, margin):
            return final, absent, span_signals, _set_aside_caveat(span, confidence, absent, margin)
        # the doubted span is given: not likely enough to be no answer
        return span, confidence, span_signals, follow_confidence(span, confidence, direct)
    if "abstains" in signals:
        return final, _rounded(model.abstention_probability(signals)), signals, None
    confidence = _rounded(model.probability(signals))
    if margin is not None and settable_aside(signals, final.answerability):
        absent = _rounded(model.abstention_probability(signals))
        if should_set_aside(confidence, absent, margin):
            doubted = program_answer(pad, Reading(unsure=[*reading.spans, *reading.unsure], answerability="unlikely"))
            doubted.replaced_because = final.replaced_because
            return doubted, absent, signals, _set_aside_caveat(final, confidence, absent, margin)
    return final, confidence, signals, follow_confidence(final, confidence, direct)


def settable_aside(signals: dict[str, float], label: str | None) -> bool:
    """Whether an answer of these signals and label is a span the reader read, which the abstain
    margin can take as no answer: not an abstention, a proxy answer, the model's own answer, a
    comparison or a description. `settle` asks it of a run, `fit_confidence` of a run's record."""
    return ("abstains" not in signals and label in ("direct", "unknown")
            and "origin_extracted" in signals and READ_BY_THE_READER in signals)


def should_set_aside(span_confidence: float, abstention_confidence: float, margin: float) -> bool:
    """Whether the reader's span is taken as no answer: saying the passages do not state the answer
    (`abstention_confidence`) is likelier right than the span (`span_confidence`) by more than the
    abstain `margin`. Where both are about as unlikely (an answerable question the reader read
    badly, or a question unlike those fitted on), the span stays, shown as the best guess its
    confidence makes it: saying the passages do not state an answer is a claim too, and no
    likelier. `settle` applies it to a run, `fit_confidence` to a run's record."""
    return abstention_confidence - span_confidence > margin


def _span_and_absence(model: ConfidenceModel, signals: dict[str, float]) -> tuple[float, float]:
    """The probability that the span `signals` describe is right, and that the passages do not state
    the answer (the confidence it carries when set aside, read from the span's signals, as fitted)."""
    return _rounded(model.probability(signals)), _rounded(model.abstention_probability(signals))


def _set_aside_caveat(span: FinalAnswer, confidence: float, absent: float, margin: float) -> str:
    """The caveat of taking the reader's `span` as no answer."""
    return (f"The reader's span \"{span.text}\" {SET_ASIDE}, {confidence:.1%}, against {absent:.1%} that the "
            f"passages do not state the answer, which leads it by more than the program's abstain margin of "
            f"{margin:.1%}.")


def _rounded(probability: float) -> float:
    """A confidence as shown and compared with the bounds: four decimals."""
    return round(probability, 4)


def doubted_by_the_reader(final: FinalAnswer, reading: Reading, missing_subjects: list[str]) -> bool:
    """Whether `final` is the program's "not stated for sure" for the reader's doubt alone: every
    span it read fell below its threshold, and nothing else (a subject no source names, figures
    about the subject) decided the answer."""
    return (final.origin == "evidence" and not missing_subjects and not reading.spans and not reading.proxies
            and bool(reading.unsure) and all(READ_BY_THE_READER in e.signals for e in reading.unsure)
            and final.sources == [reading.unsure[0].source])


def _setting(value: float | None, fitted: float | None) -> float | None:
    """A bound set in the settings, else the one the confidence model was fitted with."""
    return value if value is not None else fitted


def follow_confidence(final: FinalAnswer, confidence: float, bound: float) -> str | None:
    """Relabel `final` by its confidence: an answer (not an abstention, not a proxy answer) is
    `direct` at or above `bound`, else `unknown`; returns the caveat saying a best guess is one."""
    if final.answerability not in ("direct", "unknown"):
        return None
    if final.origin == "evidence" or is_abstention(final.text):
        return None
    if confidence >= bound:
        final.answerability = "direct"
        return None
    final.answerability = "unknown"
    return (f"A best guess: the program's confidence that this answer is right is {confidence:.0%}, "
            f"below the {bound:.0%} it needs to state it as the answer.")


def _how_written(answer: list[str], pad: Scratchpad, asked: list[str]) -> dict[str, float]:
    """How the facts write an answer's words: in a passage's text, in a title, in how many passages,
    and the most of the question's words one sentence writing it holds. A passage titled with the
    answer speaks of it throughout ("He was appointed ..."): each of its sentences writes it."""
    titled = [_contains(_words(f.title), answer) for f in pad.facts]
    in_text = [_contains(_words(f.text), answer) for f in pad.facts]
    writing = [s for f, title in zip(pad.facts, titled) for s in sentences(f.text)
               if title or _contains(_words(s), answer)]
    return {"words": len(answer), "in_text": any(in_text), "titled": any(titled),
            "passages": sum(t or w for t, w in zip(titled, in_text)),
            "near": max((_share(asked, set(_words(s))) for s in writing), default=0.0)}


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", fold_accents(text).lower())


def _share(words: list[str], within: set[str]) -> float:
    return sum(w in within for w in words) / len(words) if words else 0.0


def _contains(words: list[str], part: list[str]) -> bool:
    """Whether `part` is written in `words` as a run of words."""
    n = len(part)
    return n > 0 and any(words[i:i + n] == part for i in range(len(words) - n + 1))
