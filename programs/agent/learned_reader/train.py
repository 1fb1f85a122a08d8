"""Training the reader: the ranker on labeled spans, the answerability model on whether the
ranker's best span is right, the threshold on a dev split within a false-abstention bound.

Pure functions over `Question`s (a question, the facts read for it, its gold answers); the
command that builds them from a labeled set and a corpus is `python -m
deltaseek.optimize.train_reader`. scikit-learn fits; what it learned is copied into a
`ReaderModel` as plain numbers.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

import numpy as np
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression

from deltaseek.metrics.answers import exact_match_score, f1_score
from deltaseek.programs.agent.learned_reader.candidates import sentence_candidates
from deltaseek.programs.agent.learned_reader.features import FEATURES, LEXICAL_PREFIX
from deltaseek.programs.agent.learned_reader.model import (ANSWERABILITY_FEATURES, FORMAT_VERSION, Linear, ReaderModel)
from deltaseek.programs.agent.learned_reader.questions import expected_answer_types, question_parts, sentences
from deltaseek.programs.agent.learned_reader.read import Scored, candidate_rows, score_rows, summary_features

NEGATIVES_PER_QUESTION = 40
"""Wrong candidates kept per question for the ranker (all right ones are kept): enough to learn
from, few enough that training takes seconds."""
RIGHT_F1 = 0.5
"""A best span at least this close to the gold (token F1) counts as answering the question."""
ANSWER_WEIGHT, ANSWERABILITY_WEIGHT = 0.5, 0.3
"""The combined metric's weights of the answer and of the answerability (`metrics/combined.py`)."""


@dataclass
class Question:
    """A labeled question with the facts read for it; no answers: it is unanswerable."""

    id: str
    question: str
    facts: list
    answers: tuple[str, ...] = ()
    rows: list[Scored] = field(default_factory=list)
    subject_absent: bool = False
    """A subject of the question that no passage of the collection names."""

    @property
    def kind(self) -> str:
        return expected_answer_types(question_parts(self.question)[0])[0]

    @property
    def answerable(self) -> bool:
        return bool(self.answers)


def prepare(questions: list[Question]) -> list[Question]:
    """Each question's candidates with their features (its first part: the part a reader reads first)."""
    for q in questions:
        kind = q.kind
        q.rows = [] if kind == "yes_no" else candidate_rows(question_parts(q.question)[0], kind, q.facts)
    return questions


def is_gold(text: str, answers: tuple[str, ...]) -> bool:
    return any(exact_match_score(text, a) for a in answers)


def best_f1(text: str, answers: tuple[str, ...]) -> float:
    return max((f1_score(text, a) for a in answers), default=0.0)


def fold_of(question_id: str) -> int:
    return int(hashlib.sha256(question_id.encode()).hexdigest()[:4], 16) % 2


def matrix(rows: list[dict], names) -> np.ndarray:
    return np.array([[r.get(n, 0.0) for n in names] for r in rows], dtype=float).reshape(len(rows), len(names))


def fit_linear(rows: list[dict], labels: list[int], names, c: float = 1.0) -> Linear:
    """A logistic regression over named features, as numbers. One class only: the log-odds of it."""
    names = list(names)
    if len(set(labels)) < 2:
        rate = (sum(labels) + 1) / (len(labels) + 2)
        return Linear(features=names, coef=[0.0] * len(names), intercept=float(np.log(rate / (1 - rate))))
    model = LogisticRegression(C=c, max_iter=3000)
    model.fit(matrix(rows, names), np.array(labels))
    return Linear(features=names, coef=[round(float(v), 6) for v in model.coef_[0]],
                  intercept=round(float(model.intercept_[0]), 6))


LEXICAL_MIN_COUNT = 5
"""A lexical feature (`features.lexical_features`) is learned only when this many training
questions' candidates carry it: rarer ones would be noise."""
MIN_WEIGHT = 0.01
"""Weights smaller than this are written as 0, and left out for lexical features (they change no choice)."""


def lexical_vocabulary(questions: list[Question]) -> list[str]:
    counts: dict[str, int] = {}
    for q in questions:
        for name in {n for r in q.rows for n in r.features if n.startswith(LEXICAL_PREFIX)}:
            counts[name] = counts.get(name, 0) + 1
    return sorted(n for n, c in counts.items() if c >= LEXICAL_MIN_COUNT)


def fit_ranker(questions: list[Question], seed: int = 0, c: float = 0.5) -> Linear:
    """The ranker, trained on pairs: a right candidate (exact match with a gold answer) against a
    wrong one of the same question, as the difference of their features (pairwise logistic
    regression: what decides is how candidates of one question compare, not their level)."""
    rng = random.Random(seed)
    names = list(FEATURES) + lexical_vocabulary(questions)
    diffs, labels = [], []
    for q in questions:
        gold = [is_gold(r.candidate.text, q.answers) for r in q.rows]
        right = [r for r, g in zip(q.rows, gold) if g]
        if not right:
            continue
        wrong = [r for r, g in zip(q.rows, gold) if not g]
        for bad in rng.sample(wrong, min(len(wrong), NEGATIVES_PER_QUESTION)):
            good = rng.choice(right)
            sign = rng.random() < 0.5  # both orders, so the classes balance
            a, b = (good, bad) if sign else (bad, good)
            diffs.append({n: a.features.get(n, 0.0) - b.features.get(n, 0.0) for n in set(a.features) | set(b.features)})
            labels.append(int(sign))
    if len(set(labels)) < 2:
        return Linear(features=names, coef=[0.0] * len(names), intercept=0.0)
    vectorizer = DictVectorizer()
    vectorizer.fit([{n: 1.0 for n in names}])
    model = LogisticRegression(C=c, max_iter=3000, fit_intercept=False)
    model.fit(vectorizer.transform(diffs), np.array(labels))
    # Every feature the code computes is written, a small weight as 0, so that a file missing one is
    # one cut short or edited (`model.feature_mismatch`); a lexical feature is written only when it weighs.
    kept = [(n, round(float(w), 6) if abs(w) >= MIN_WEIGHT else 0.0)
            for n, w in zip(vectorizer.get_feature_names_out(), model.coef_[0])
            if abs(w) >= MIN_WEIGHT or not n.startswith(LEXICAL_PREFIX)]
    return Linear(features=[n for n, _ in kept], coef=[w for _, w in kept], intercept=0.0)


def best_span(q: Question) -> str:
    return max(q.rows, key=lambda r: r.score).candidate.text if q.rows else ""


def fit_answerability(questions: list[Question], seed: int = 0) -> Linear:
    """Whether the ranker's best span answers the question, from what its scores say. The scores
    come from a ranker that did not train on the question (two folds), as they will at run time."""
    halves = [[q for q in questions if fold_of(q.id) == f] for f in (0, 1)]
    rankers = [fit_ranker(halves[1 - f], seed) for f in (0, 1)]
    rows, labels = [], []
    for f, half in enumerate(halves):
        model = ReaderModel(format_version=FORMAT_VERSION, ranker=rankers[f],
                            answerability=Linear(features=[], coef=[], intercept=0.0), threshold=0.0)
        for q in half:
            score_rows(q.rows, model)
            rows.append(summary_features(q.rows, q.kind))
            labels.append(int(q.answerable and best_f1(best_span(q), q.answers) >= RIGHT_F1))
    return fit_linear(rows, labels, ANSWERABILITY_FEATURES)


@dataclass
class Outcome:
    """A question as the reader would answer it: its best span, the probability, how right."""

    answerable: bool
    probability: float
    f1: float
    subject_absent: bool = False
    names_no_type: bool = False
    """The question names no answer type (`other`): the program reads it only with `reads_untyped`."""


def outcomes(reader: ReaderModel, questions: list[Question]) -> list[Outcome]:
    found = []
    for q in questions:
        score_rows(q.rows, reader)
        p = reader.answerability.probability(summary_features(q.rows, q.kind)) if q.rows else 0.0
        found.append(Outcome(q.answerable, p, best_f1(best_span(q), q.answers) if q.answerable else 0.0,
                             q.subject_absent, q.kind == "other"))
    return found


def scores_at(found: list[Outcome], threshold: float, absent_subject_abstains: bool = False,
              untyped_left: bool = False) -> dict[str, float]:
    """The reader's own figures at a threshold: F1 on answerables (0 when it abstains), abstention
    on unanswerables, false abstention, and the answer and answerability part of the combined
    metric (an abstention on an unanswerable question scores both). With `absent_subject_abstains`,
    a question whose subject the collection lacks is abstained on whatever the probability, as the
    program does (`ReaderModel.abstain_on_absent_subject`); with `untyped_left`, so is a question
    naming no answer type (left to the model, which the reader cannot count on: `reads_untyped`)."""
    return figures_of(found, answered_at(found, threshold, absent_subject_abstains, untyped_left))


def answered_at(found: list[Outcome], threshold: float, absent_subject_abstains: bool = False,
                untyped_left: bool = False) -> list[bool]:
    """Whether the reader answers each question at a threshold (`scores_at`'s flags)."""
    return [o.probability >= threshold and not (absent_subject_abstains and o.subject_absent)
            and not (untyped_left and o.names_no_type) for o in found]


def question_scores(found: list[Outcome], answered: list[bool]) -> list[float]:
    """Each question's answer and answerability part of the combined metric: `answer_score` is their mean."""
    return [(ANSWER_WEIGHT * o.f1 + ANSWERABILITY_WEIGHT) if a and o.answerable else
            (ANSWER_WEIGHT + ANSWERABILITY_WEIGHT) if not a and not o.answerable else 0.0
            for o, a in zip(found, answered)]


def figures_of(found: list[Outcome], answered: list[bool]) -> dict[str, float]:
    answerable = [(o, a) for o, a in zip(found, answered) if o.answerable]
    unanswerable = [(o, a) for o, a in zip(found, answered) if not o.answerable]
    per_question = question_scores(found, answered)
    return {
        "f1_answerable": sum(o.f1 for o, a in answerable if a) / max(1, len(answerable)),
        "abstention": sum(not a for _, a in unanswerable) / max(1, len(unanswerable)),
        "false_abstention": sum(not a for _, a in answerable) / max(1, len(answerable)),
        "answer_score": sum(per_question) / max(1, len(found)),
    }


def choose_threshold(found: list[Outcome], max_false_abstention: float) -> tuple[float, dict[str, float]]:
    """The threshold that abstains on the most unanswerable questions within the false-abstention
    bound; ties (a set with no unanswerable question ties everywhere) go to the best answer score,
    then to the lower threshold."""
    grid = sorted({0.0, *(round(o.probability, 4) for o in found)})
    best = None
    for t in grid:
        figures = scores_at(found, t)
        key = (figures["abstention"], figures["answer_score"])
        if figures["false_abstention"] <= max_false_abstention and (best is None or key > best[2]):
            best = (t, figures, key)
    return best[0], best[1]


def candidate_recall(questions: list[Question]) -> dict[str, float]:
    """How often the gold is among the candidates of a passage read that holds it (every sentence
    of those passages), and how often the facts read hold the gold at all."""
    holding, recalled, answerable = 0, 0, 0
    for q in questions:
        if not q.answerable:
            continue
        answerable += 1
        passages = [f for f in q.facts if any(a.lower() in f.text.lower() for a in q.answers)]
        if not passages:
            continue
        holding += 1
        texts = (c.text for f in passages for s in sentences(f.text) for c in sentence_candidates(s))
        recalled += any(is_gold(t, q.answers) for t in texts)
    return {"candidate_recall": recalled / max(1, holding), "facts_hold_gold": holding / max(1, answerable)}


def fit_reader(train: list[Question], dev: list[Question], max_false_abstention: float,
               trained_on: dict | None = None, seed: int = 0) -> ReaderModel:
    """A reader trained on `train` (its questions prepared), its threshold chosen on `dev`."""
    ranker = fit_ranker(train, seed)
    answerability = fit_answerability(train, seed)
    reader = ReaderModel(format_version=FORMAT_VERSION, ranker=ranker, answerability=answerability, threshold=0.0,
                         trained_on=trained_on or {})
    return rethreshold(reader, dev, max_false_abstention)


def rethreshold(reader: ReaderModel, dev: list[Question], max_false_abstention: float) -> ReaderModel:
    """The same weights with the threshold chosen on `dev`, and its dev figures recorded."""
    threshold, figures = choose_threshold(outcomes(reader, dev), max_false_abstention)
    metrics = {**{k: round(v, 4) for k, v in figures.items()}, "dev_questions": len(dev),
               "max_false_abstention": max_false_abstention}
    return reader.model_copy(update={"threshold": threshold, "metrics": metrics})
