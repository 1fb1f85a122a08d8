"""The reader's abstention threshold, calibrated on labeled data with unanswerable questions.

The program runs each question once with the threshold at 0 (the reader answers whenever it has
a span); each run's answer spans keep their confidence (`reader.support`). A threshold then
decides, for every question at once, where the reader would have abstained instead:

    abstention on unanswerables:  unanswerable questions whose best span is below the threshold
    false abstention:             answerable questions whose span is below it (or that have none)
    F1 on answerables:            token F1 of the spans kept

The chosen threshold abstains on as many unanswerable questions as it can while false abstention
stays at most `max_false_abstention` (ties: the higher F1, then the lower threshold). Then each answer
type with at least `MIN_QUESTIONS_PER_TYPE` questions read (a person, a named thing, a date ...) may
get a threshold of its own, one type at a time, while a change abstains on more unanswerable
questions (or, as many, with a higher F1) within the same bound: how surely a sentence must say what
the question does to be trusted differs by what is asked for (a person's name beside most of the
question's words, a date beside few).

    deltaseek calibrate --dataset datasets/squad2.jsonl --split train --scenario echo
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass, field
from typing import Callable

import dspy

from deltaseek.errors import UsageError
from deltaseek.metrics.answers import f1_score
from deltaseek.optimize.agent_options import AgentOptions, SetupLM, build_program, configure_agent_lm
from deltaseek.optimize.evaluate import load_dataset, select
from deltaseek.optimize.run_tracking import TrackingOptions, positive, with_bundled_corpora
from deltaseek.optimize.scenario_lms import scenario_lm
from deltaseek.programs.agent import DeltaSeek
from deltaseek.programs.agent.evidence import extracted_answer, read_evidence
from deltaseek.programs.lm import adapter_for

THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(21))


MIN_QUESTIONS_PER_TYPE = 20
"""An answer type gets a threshold of its own only when this many of the questions calibrated on
were read with a span of it: fewer would fit the threshold to a handful of questions."""


@dataclass
class ReaderOutcome:
    """One question's reading at threshold 0: the spans' weakest confidence (None: no span), the F1
    the extracted answer would score, and the weakest confidence of each answer type read."""

    answerable: bool
    confidence: float | None
    f1: float
    by_type: dict[str, float] = field(default_factory=dict)

    def answers(self, threshold: float, by_type: dict[str, float]) -> bool:
        """Whether the reader answers at these thresholds (every span at least its type's)."""
        if self.confidence is None:
            return False
        if not self.by_type:
            return self.confidence >= threshold
        return all(confidence >= by_type.get(kind, threshold) for kind, confidence in self.by_type.items())


@dataclass
class ThresholdScore:
    threshold: float
    abstention_on_unanswerable: float
    false_abstention: float
    f1_answerable: float
    by_type: dict[str, float] = field(default_factory=dict)
    """The answer types' own thresholds, in place of `threshold` for their spans."""


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
    by_type: dict[str, float] = {}
    for span in reading.spans:
        by_type[span.kind] = min(span.confidence, by_type.get(span.kind, 1.0))
    return ReaderOutcome(answerable, min(e.confidence for e in reading.spans), f1, by_type)


def collect(program: DeltaSeek, examples: list[dspy.Example], lm: dspy.BaseLM | None = None,
            progress: Callable | None = None) -> list[ReaderOutcome]:
    """Each example's reading with the reader never abstaining, on a copy of the program. Without
    `lm`, the program's own moves (the echo scenario) with the small profile: in seconds, no model."""
    settings = program.settings.model_copy(update={"reader_min_confidence": 0.0, "reader_min_confidence_by_type": {}})
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
    program.settings = program.settings.model_copy(update={"reader_min_confidence": chosen.threshold,
                                                           "reader_min_confidence_by_type": chosen.by_type})
    return chosen


def score(outcomes: list[ReaderOutcome], threshold: float, by_type: dict[str, float] | None = None) -> ThresholdScore:
    by_type = by_type or {}
    answerable = [o for o in outcomes if o.answerable]
    unanswerable = [o for o in outcomes if not o.answerable]
    mean = lambda values: statistics.fmean(values) if values else 0.0  # noqa: E731
    return ThresholdScore(threshold,
                          mean([not o.answers(threshold, by_type) for o in unanswerable]),
                          mean([not o.answers(threshold, by_type) for o in answerable]),
                          mean([o.f1 if o.answers(threshold, by_type) else 0.0 for o in answerable]), by_type)


def choose(outcomes: list[ReaderOutcome], max_false_abstention: float = 0.25) -> tuple[ThresholdScore, list[ThresholdScore]]:
    """The thresholds that abstain most on unanswerable questions within the false-abstention bound:
    one for every answer type, then one of its own for each type read often enough, changed one
    type at a time while a change helps. Returns the chosen scores and the table of the first."""
    table = [score(outcomes, t) for t in THRESHOLDS]
    allowed = [s for s in table if s.false_abstention <= max_false_abstention] or table[:1]
    best = max(allowed, key=lambda s: (s.abstention_on_unanswerable, s.f1_answerable, -s.threshold))
    if best.false_abstention > max_false_abstention:
        return best, table  # not even one threshold keeps within the bound: no type can do better
    read = [kind for o in outcomes for kind in o.by_type]
    types = sorted(kind for kind in set(read) if read.count(kind) >= MIN_QUESTIONS_PER_TYPE)
    gain = lambda s: (s.abstention_on_unanswerable, s.f1_answerable)  # noqa: E731
    while True:
        moves = [score(outcomes, best.threshold, {**best.by_type, kind: t}) for kind in types for t in THRESHOLDS]
        moves = [s for s in moves if s.false_abstention <= max_false_abstention and gain(s) > gain(best)]
        if not moves:
            return best, table
        best = max(moves, key=lambda s: (*gain(s), -sum(s.by_type.values())))


def describe(chosen: ThresholdScore) -> str:
    """The chosen thresholds as the settings that hold them."""
    own = ", ".join(f"{kind}: {t:.2f}" for kind, t in sorted(chosen.by_type.items()))
    return f"reader_min_confidence = {chosen.threshold:.2f}, reader_min_confidence_by_type = {{{own}}}"


def threshold_metrics(chosen: ThresholdScore) -> dict[str, float]:
    """The chosen thresholds as MLflow metrics (one per answer type with its own)."""
    return {"reader_min_confidence": chosen.threshold,
            **{f"reader_min_confidence_{kind}": t for kind, t in chosen.by_type.items()}}


def format_table(table: list[ThresholdScore], chosen: ThresholdScore) -> str:
    """The one-threshold table with the chosen row marked, then the answer types' own thresholds."""
    lines = ["| threshold | abstention on unanswerable | false abstention | F1 on answerable |", "|---:|---:|---:|---:|"]
    for s in table:
        mark = " **chosen**" if s.threshold == chosen.threshold else ""
        lines.append(f"| {s.threshold:.2f}{mark} | {s.abstention_on_unanswerable:.0%} | {s.false_abstention:.0%} | "
                     f"{s.f1_answerable:.3f} |")
    if chosen.by_type:
        own = ", ".join(f"{kind} {t:.2f}" for kind, t in sorted(chosen.by_type.items()))
        lines.append(f"\nAnswer types' own thresholds: {own}; with them, abstention on unanswerable "
                     f"{chosen.abstention_on_unanswerable:.0%}, false abstention {chosen.false_abstention:.0%}, "
                     f"F1 on answerable {chosen.f1_answerable:.3f}.")
    return "\n".join(lines)


def calibrate_reader(dataset: str, agent: AgentOptions = AgentOptions(), tracking: TrackingOptions = TrackingOptions(),
                     split: str = "train", limit: int | None = None, scenario: str = "echo",
                     max_false_abstention: float = 0.25, setup_lm: SetupLM = configure_agent_lm) -> ThresholdScore:
    """`deltaseek calibrate`: the reader's thresholds for the `split` of `dataset`, chosen so that
    false abstention stays at most `max_false_abstention`; the table of thresholds and the one
    chosen are printed, logged in an MLflow run, and the chosen one returned. `scenario`: "echo"
    (the program's own moves, no model) or "model" (the LM `setup_lm(agent)` configures)."""
    positive("--limit", limit)
    if not 0 <= max_false_abstention <= 1:
        raise UsageError(f"--max-false-abstention must be between 0 and 1, got {max_false_abstention}")
    examples = select(load_dataset(dataset).examples, split, limit)
    if not examples:
        raise UsageError(f"{dataset}: the {split} split holds no examples (try --split all)")
    agent = with_bundled_corpora(agent, examples)
    program = build_program(agent)
    lm = setup_lm(agent) if scenario == "model" else None  # echo: the program's own moves
    from tqdm import tqdm

    with tqdm(total=len(examples), desc="calibrate", unit="q", file=sys.stderr) as bar:
        outcomes = collect(program, examples, lm, progress=lambda: bar.update(1))
    chosen, table = choose(outcomes, max_false_abstention)
    print(format_table(table, chosen))
    print(f"{describe(chosen)} ({dataset}, {split} split, {len(examples)} questions, "
          f"{sum(not o.answerable for o in outcomes)} unanswerable; false abstention at most "
          f"{max_false_abstention:.0%})")
    with tracking.tracker("calibrate", traces=False) as tracker:
        tracker.log_params({"command": "calibrate", "dataset": dataset, "split": split, "scenario": scenario,
                            "max_false_abstention": max_false_abstention})
        tracker.log_metrics({**threshold_metrics(chosen), "abstention_on_unanswerable": chosen.abstention_on_unanswerable,
                             "false_abstention": chosen.false_abstention, "f1_answerable": chosen.f1_answerable})
    return chosen
