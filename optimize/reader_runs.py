"""The reader's rules chosen on the program's own runs of the dev split.

`train_reader.reader_for_dataset` chooses the reader's threshold and its two rules that end a
question early (a subject the collection never names; a question naming no answer type) from what
one search reads with the feature ranker alone. The program reads on: more searches, the reader
adapter, the model. Where the two disagree, the runs are what a user gets, so `choose_by_runs`
runs the program on the dev split with each candidate (the proposal, and each rule turned the
other way) and keeps the best only where it beats the reader the program started with beyond
chance, question by question (`paired.beyond_chance`, the test every retrained part passes).
"""

from __future__ import annotations

from collections.abc import Callable

from deltaseek.optimize.paired import beyond_chance
from deltaseek.programs.agent.learned_reader import ReaderModel

RULES = {
    "abstain_on_absent_subject": ("a subject the collection lacks: read on",
                                  "a subject the collection lacks: abstain"),
    "reads_untyped": ("a question naming no type: left to the model", "a question naming no type: read"),
}
"""The reader's rules a run can turn, each with what it says off (False) and on (True)."""

RUN_SCORE = "combined"
"""The per-question score the runs are compared by: the one `optimize` reports."""


def reader_candidates(start: ReaderModel, proposed: ReaderModel) -> dict[str, ReaderModel]:
    """The readers worth a run beside the one the program started with: the proposal, and each
    rule of the start and of the proposal turned the other way, named by what they change; none
    the same as the start or as each other."""
    found: dict[str, ReaderModel] = {}
    seen = {decisive(start)}

    def add(name: str, reader: ReaderModel) -> None:
        if (key := decisive(reader)) not in seen:
            seen.add(key)
            found[name] = reader

    add("the proposal", proposed)
    for base_name, base in (("the starting reader", start), ("the proposal", proposed)):
        for rule, words in RULES.items():
            turned = not getattr(base, rule)
            add(f"{base_name}, {words[turned]}", base.model_copy(update={rule: turned}))
    return found


def decisive(reader: ReaderModel) -> str:
    """What decides a reader's runs: everything but the record of how it was made."""
    return reader.model_dump_json(exclude={"trained_on", "metrics"})


def choose_by_runs(start: ReaderModel, start_scores: list[float], proposed: ReaderModel,
                   run: Callable[[str, ReaderModel], list[float]]) -> tuple[str, ReaderModel, dict[str, float]]:
    """The reader the program keeps: the candidate (`reader_candidates`) whose runs of the dev
    split (`run(name, reader)`: each question's score, in the order of `start_scores`, the start's
    own) score best, where it beats the start beyond chance; else the start. Its name, the reader,
    and each run's mean score as figures, the start's first."""
    scores = {"the starting reader": start_scores}
    candidates = reader_candidates(start, proposed)
    for name, reader in candidates.items():
        scores[name] = run(name, reader)
    means = {name: sum(s) / max(1, len(s)) for name, s in scores.items()}
    best = max(candidates, key=means.__getitem__, default=None)
    if best is None or not beyond_chance(start_scores, scores[best]):
        return "the starting reader", start, means
    return best, candidates[best], means
