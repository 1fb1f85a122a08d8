"""The folds the confidence fit scores each run in: a question is scored by a model fitted on
other articles (or question groups) than its own, as a user's new text will be.

Folding runs at random scores an article's questions with a model fitted on its other questions,
and the figures chosen on them (the `direct` bound, the abstain margin) come out optimistic: on
the shipped fit's runs, random folds chose the bound 0.658 where holding one article out at a
time chose 0.697 (`docs/experiments/2026-11-29-squad-in-full-and-the-bound-by-article.md`).
"""

from __future__ import annotations

import hashlib
from collections import Counter

import numpy as np

FOLDS = 5
MOST_OF_AN_OUTCOME = 0.75


def fold_groups(groups: np.ndarray, ids: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The groups the folds hold out whole: each run's group, except that a group holding more than
    `MOST_OF_AN_OUTCOME` of one outcome's runs is cut into `FOLDS` pieces by a hash of the run's id,
    or the model fitted without it would learn that outcome from almost nothing (a set whose
    unanswerable questions are all of one article). As many pieces as folds: each fold's model then
    sees the outcome about as often as the others', so their held-out probabilities rank alike.
    Cut in two, the fold holding out one half learned from the other half alone, gave that article's
    runs a lower probability of the outcome than the other articles' runs got from models fitted on
    both halves, and the pooled probability that the passages do not state the answer ranked SQuAD's
    unanswerable dev questions below the answerable ones (ROC AUC 0.14)."""
    cut = groups.astype(object)  # a fixed-width string array would truncate the longer names
    for outcome in (0, 1):
        for group, count in Counter(groups[y == outcome]).items():
            if count > MOST_OF_AN_OUTCOME * (y == outcome).sum():
                inside = groups == group
                cut[inside] = [f"{group} / {id_piece(i, FOLDS)}" for i in ids[inside]]
    return cut


def id_piece(question_id: str, pieces: int) -> int:
    """Which of `pieces` a run falls in by a hash of its id: the same run, the same piece, in any order."""
    return int(hashlib.md5(question_id.encode()).hexdigest(), 16) % pieces


def held_out_folds(x: np.ndarray, y: np.ndarray, groups: np.ndarray | None, seed: int) -> list:
    """Stratified folds that hold each group out whole (scikit-learn's StratifiedGroupKFold; one
    group a fold where there are fewer groups than folds). Where there are no groups, every run is
    its own, or a fold would leave the model one outcome to learn from, stratified folds of the runs."""
    from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

    splits = min(FOLDS, len(set(groups))) if groups is not None else 0
    if 2 <= splits and len(set(groups)) < len(groups):
        folds = list(StratifiedGroupKFold(splits, shuffle=True, random_state=seed).split(x, y, groups))
        if all(len(set(y[fitted])) == 2 for fitted, _ in folds):
            return folds
    return list(StratifiedKFold(FOLDS, shuffle=True, random_state=seed).split(x, y))
