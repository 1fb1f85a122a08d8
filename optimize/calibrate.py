"""The reader's abstention threshold, calibrated on labeled data with unanswerable questions.

The program runs each question once with the threshold at 0 (the reader answers whenever it has
a span); each run's answer spans keep their confidence (`reader.support`). A threshold then
decides, for every question at once, where the reader would have abstained instead:

    abstention on unanswerables:  unanswerable questions whose best span is below the threshold
    false abstention:             answerable questions whose span is below it (or that have none)
    F1 on answerables:            token F1 of the spans kept

The chosen threshold abstains on as many unanswerable questions as it can while false abstention
stays at most `max_false_abstention` (ties: the higher F1, then the lower threshold).

    deltaseek calibrate --dataset datasets/squad2.jsonl --split train --scenario echo
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable

import dspy

from deltaseek.metrics.answers import f1_score
from deltaseek.optimize.scenario_lms import scenario_lm
from deltaseek.programs.agent import DeltaSeek
from deltaseek.programs.agent.evidence import extracted_answer, read_evidence
from deltaseek.programs.lm import adapter_for

THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(21))


@dataclass
class ReaderOutcome:
    """One question's reading at threshold 0: the spans' weakest confidence (None: no span) and
    the F1 the extracted answer would score."""

    answerable: bool
    confidence: float | None
    f1: float


@dataclass
class ThresholdScore:
    threshold: float
    abstention_on_unanswerable: float
    false_abstention: float
    f1_answerable: float


def reader_outcome(program: DeltaSeek, example: dspy.Example) -> ReaderOutcome:
    """Run the question with the reader never abstaining, and read its facts the same way."""
    pred = program(question=example.question)
    reading = read_evidence(pred.scratchpad, 0.0)
    golds = [example.get("answer") or "", *(example.get("aliases") or [])]
    answerable = example.get("answerability") != "unlikely"
    if not reading.spans or reading.answerability not in ("direct", "unknown"):
        return ReaderOutcome(answerable, None, 0.0)
    answer = extracted_answer(reading)
    f1 = max((f1_score(answer, g) for g in golds if g), default=0.0)
    return ReaderOutcome(answerable, min(e.confidence for e in reading.spans), f1)


def collect(program: DeltaSeek, examples: list[dspy.Example], lm: dspy.BaseLM | None = None,
            progress: Callable | None = None) -> list[ReaderOutcome]:
    """Each example's reading with the reader never abstaining, on a copy of the program. Without
    `lm`, the program's own moves (the echo scenario) with the small profile: in seconds, no model."""
    settings = program.settings.model_copy(update={"reader_min_confidence": 0.0})
    if lm is None:
        settings = settings.model_copy(update={"profile": "small"})
    runner = DeltaSeek(tools=list(program.tools.values()), settings=settings)
    lm = lm or scenario_lm("echo", runner.tool_names[0])
    outcomes = []
    with dspy.context(lm=lm, adapter=adapter_for(lm)):
        for example in examples:
            outcomes.append(reader_outcome(runner, example))
            if progress:
                progress()
    return outcomes


def recalibrate(program: DeltaSeek, examples: list[dspy.Example], max_false_abstention: float = 0.25
                ) -> ThresholdScore | None:
    """Set the program's reader threshold from labeled examples (None, and nothing changed, when
    they hold no unanswerable question: abstention cannot be measured on them)."""
    if not any(ex.get("answerability") == "unlikely" for ex in examples):
        return None
    chosen, _ = choose(collect(program, examples), max_false_abstention)
    program.settings = program.settings.model_copy(update={"reader_min_confidence": chosen.threshold})
    return chosen


def score(outcomes: list[ReaderOutcome], threshold: float) -> ThresholdScore:
    def answers(o: ReaderOutcome) -> bool:
        return o.confidence is not None and o.confidence >= threshold

    answerable = [o for o in outcomes if o.answerable]
    unanswerable = [o for o in outcomes if not o.answerable]
    mean = lambda values: statistics.fmean(values) if values else 0.0  # noqa: E731
    return ThresholdScore(threshold,
                          mean([not answers(o) for o in unanswerable]),
                          mean([not answers(o) for o in answerable]),
                          mean([o.f1 if answers(o) else 0.0 for o in answerable]))


def choose(outcomes: list[ReaderOutcome], max_false_abstention: float = 0.25) -> tuple[ThresholdScore, list[ThresholdScore]]:
    """The threshold that abstains most on unanswerable questions within the false-abstention bound."""
    table = [score(outcomes, t) for t in THRESHOLDS]
    allowed = [s for s in table if s.false_abstention <= max_false_abstention] or table[:1]
    best = max(allowed, key=lambda s: (s.abstention_on_unanswerable, s.f1_answerable, -s.threshold))
    return best, table


def format_table(table: list[ThresholdScore], chosen: ThresholdScore) -> str:
    lines = ["| threshold | abstention on unanswerable | false abstention | F1 on answerable |", "|---:|---:|---:|---:|"]
    for s in table:
        mark = " **chosen**" if s is chosen else ""
        lines.append(f"| {s.threshold:.2f}{mark} | {s.abstention_on_unanswerable:.0%} | {s.false_abstention:.0%} | "
                     f"{s.f1_answerable:.3f} |")
    return "\n".join(lines)
