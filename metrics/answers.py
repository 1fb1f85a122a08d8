"""Answer correctness: SQuAD-style exact match and token F1 against the answer and its aliases.

A question labelled "unlikely" has no answer to match: the only correct output is an
abstention, so it scores 1 when the prediction abstains and 0 when it asserts anything.
"""

from __future__ import annotations

from collections import Counter

from dspy.evaluate.metrics import normalize_text

from deltaseek.metrics.contract import abstains, never_raises, read_gold, read_outcome


def normalize_answer(text: str) -> str:
    """Lowercase, drop punctuation and the articles a/an/the, collapse whitespace (SQuAD)."""
    return normalize_text(text)


def exact_match_score(prediction: str, reference: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(reference))


def f1_score(prediction: str, reference: str) -> float:
    """Token F1 between two strings after normalization; 0 when either is empty."""
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(reference).split()
    same = sum((Counter(predicted) & Counter(expected)).values())
    if not same:
        return 0.0
    precision, recall = same / len(predicted), same / len(expected)
    return 2 * precision * recall / (precision + recall)


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
