"""Answer correctness: SQuAD-style exact match and token F1 against the answer and its aliases.

A question labelled "unlikely" has no answer to match: the only correct output is an
abstention, so it scores 1 when the prediction abstains and 0 when it asserts anything.
"""

from __future__ import annotations

from functools import lru_cache

from dspy.evaluate.metrics import normalize_text
from dspy.evaluate.metrics import f1_score as dspy_f1_score

from deltaseek.metrics.contract import abstains, never_raises, read_gold, read_outcome


@lru_cache(maxsize=1 << 16)
def normalize_answer(text: str) -> str:
    """Lowercase, drop punctuation and the articles a/an/the, collapse whitespace (SQuAD).
    Remembered: training compares every candidate span with its question's answers, and the same
    passages' spans come back question after question."""
    return normalize_text(text)


def exact_match_score(prediction: str, reference: str) -> float:
    """DSPy's exact match (`em_score`: the normalized strings are equal), on the remembered normalization."""
    return float(normalize_answer(prediction) == normalize_answer(reference))


def f1_score(prediction: str, reference: str) -> float:
    """Token F1 between two strings after normalization (DSPy's); 0 when either is empty."""
    if not normalize_answer(prediction) or not normalize_answer(reference):
        return 0.0  # DSPy's scores this 0 too, but prints a diagnostic line on stdout each time
    return float(dspy_f1_score(prediction, reference))


def best_match(example, pred, score) -> float:
    gold, outcome = read_gold(example), read_outcome(pred)
    if outcome.crashed:
        return 0.0
    if gold.expects_abstention or not gold.answers:
        return float(abstains(outcome))
    return max(score(outcome.answer, reference) for reference in gold.answers)


@never_raises()
def exact_match(example, pred, trace=None) -> float:
    """1.0 when the normalized answer equals the normalized answer or an alias."""
    return best_match(example, pred, exact_match_score)


@never_raises()
def token_f1(example, pred, trace=None) -> float:
    """The best token F1 of the answer against the answer and each alias."""
    return best_match(example, pred, f1_score)
