"""The metric deltaseek is optimized for, and its GEPA variant that says what went wrong.

    combined = 0.5 * token_f1 + 0.3 * answerability_accuracy + 0.2 * efficiency

Correctness dominates; judging answerability right (abstaining on "unlikely" questions,
answering through proxies on "proxy_only" ones) is the next most important; efficiency breaks
ties between runs that got the same answer. Efficiency is never a reward on its own: when both
the answer and the answerability score 0 (for example a made-up answer to an "unlikely"
question), the combined score is 0. A crashed prediction scores 0.

With a `trace` (during bootstrapping), `combined_metric` returns whether the run is good enough
to serve as a demonstration: score >= PASS_THRESHOLD.
"""

from __future__ import annotations

import dspy

from deltaseek.metrics.answerability import answerability_accuracy
from deltaseek.metrics.answers import exact_match, token_f1
from deltaseek.metrics.contract import abstains, never_raises, read_gold, read_outcome
from deltaseek.metrics.efficiency import count_calls, efficiency

WEIGHTS = {"answer": 0.5, "answerability": 0.3, "efficiency": 0.2}
PASS_THRESHOLD = 0.7
MANY_SEARCHES = 4
"""From this many executed searches on, the feedback asks for fewer."""


def combined_parts(example, pred) -> dict[str, float]:
    """The three component scores and the weighted total."""
    parts = {
        "answer": token_f1(example, pred),
        "answerability": answerability_accuracy(example, pred),
        "efficiency": efficiency(example, pred),
    }
    if parts["answer"] == 0 and parts["answerability"] == 0:
        total = 0.0
    else:
        total = sum(WEIGHTS[name] * score for name, score in parts.items())
    return {**parts, "score": round(total, 6)}


@never_raises()
def combined_metric(example, pred, trace=None) -> float | bool:
    score = combined_parts(example, pred)["score"]
    return score if trace is None else score >= PASS_THRESHOLD


def expected_text(answers: tuple[str, ...]) -> str:
    text = repr(answers[0])
    if len(answers) > 1:
        text += " (also accepted: " + ", ".join(repr(a) for a in answers[1:]) + ")"
    return text


def answer_feedback(example, pred) -> list[str]:
    """What the answer and the answerability judgement got right or wrong, in words."""
    gold, outcome = read_gold(example), read_outcome(pred)
    answer, label = outcome.answer, outcome.answerability
    if gold.expects_abstention:
        if abstains(outcome):
            return ["Correctly abstained: the corpus does not answer this question."]
        return [f"Missed abstention: nothing in the corpus answers this question (it is labelled 'unlikely'), "
                f"yet the program answered {answer!r} with answerability {label!r}. That is a made-up fact. "
                "When the searches find nothing about the subject of the question, say that no information "
                "was found and set answerability to 'unlikely'."]
    expected = expected_text(gold.answers)
    if gold.answerability == "proxy_only":
        if label == "proxy_only":
            lines = ["Correctly recognised that the exact figure is not published (proxy_only)."]
            if token_f1(example, pred) < 0.3:
                lines.append(f"The proxies the corpus offers were mostly missed; a good answer reads like: {expected}.")
            return lines
        if abstains(outcome):
            return [f"Gave up, but the corpus holds proxies for this question (it is 'proxy_only'): say the exact "
                    f"figure is not published and answer from the proxies, e.g. {expected}."]
        return [f"Answerability was {label!r}, but no source publishes this exact figure: it is 'proxy_only'. "
                f"Say that the exact number is unavailable and answer from proxies, e.g. {expected}."]
    if abstains(outcome):
        return [f"Gave up: the program answered {answer!r} (answerability {label!r}), but the corpus does answer "
                f"this question: expected {expected}. Search for the entities of the question with different "
                "keywords before concluding that nothing is there."]
    lines = []
    if exact_match(example, pred):
        lines.append(f"Correct answer ({answer!r}).")
    elif (f1 := token_f1(example, pred)) > 0:
        lines.append(f"Partly right: the answer {answer!r} overlaps the expected {expected} only in part "
                     f"(token F1 {f1:.2f}). Answer with just the fact asked for.")
    else:
        lines.append(f"Wrong answer: got {answer!r}, expected {expected}.")
    if label != "direct":
        lines.append(f"Answerability was {label!r}, but the corpus states the answer directly ('direct').")
    return lines


def search_feedback(pred) -> list[str]:
    """Loops, budget stops and wasted searches, in words."""
    outcome = read_outcome(pred)
    lines = []
    if outcome.stop_reason == "lm_error":
        lines.append("The language model failed during the run (stop reason 'lm_error').")
    if outcome.tool_calls is None:
        lines.append("The prediction carries no tool-call record, so its searches cannot be checked.")
        return lines
    counts = count_calls(outcome.tool_calls)
    if counts.blocked:
        tried = "; ".join(f"{q!r} ({reason})" for q, reason in zip(counts.blocked_queries, counts.blocked_reasons))
        lines.append(f"Looped: {counts.blocked} tool call(s) were blocked instead of run: "
                     f"{tried}. Each search must try a new angle, or the program should move on to answering.")
    if outcome.stop_reason == "hard_budget":
        lines.append("Over budget: the run was stopped by the hard budget instead of answering on its own; "
                     "answer earlier from what has already been found.")
    if counts.executed >= MANY_SEARCHES:
        lines.append(f"Used {counts.executed} searches; stop searching as soon as the evidence answers the question "
                     "or shows that it cannot be answered.")
    return lines


@never_raises(zero=lambda exc: dspy.Prediction(score=0.0, feedback=f"The metric could not score this run: {exc!r}."))
def gepa_feedback_metric(gold, pred, trace=None, pred_name=None, pred_trace=None) -> dspy.Prediction:
    """The combined score plus feedback in words, for `dspy.GEPA(metric=gepa_feedback_metric)`."""
    outcome = read_outcome(pred)
    if outcome.crashed:
        stop = f" (stop reason {outcome.stop_reason!r})" if outcome.stop_reason else ""
        return dspy.Prediction(score=0.0, feedback=f"The program crashed or returned no answer{stop}. "
                                                   "It must always end with an answer, even a best-effort one.")
    parts = combined_parts(gold, pred)
    lines = answer_feedback(gold, pred) + search_feedback(pred)
    lines.append(f"Score {parts['score']:.2f} (answer {parts['answer']:.2f}, answerability "
                 f"{parts['answerability']:.2f}, efficiency {parts['efficiency']:.2f}).")
    return dspy.Prediction(score=parts["score"], feedback="\n".join(lines))
