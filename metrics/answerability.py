"""Answerability accuracy: did the program judge correctly whether the corpus answers the question?

- gold "unlikely": 1 when the prediction abstains (answerability "unlikely", or an answer
  saying no information was found / it cannot be determined), 0 for a confident answer:
  a made-up fact about something nobody publishes is the worst outcome.
- gold "direct": 1 when the prediction says "direct" and does not decline to answer.
- gold "proxy_only": 1 when the prediction says "proxy_only" (its answer may well say the
  exact figure was not found: that is the point of a proxy answer).
A prediction with no answer, or without a valid answerability label, scores 0 on the last two.
"""

from __future__ import annotations

from deltaseek.metrics.contract import abstains, never_raises, read_gold, read_outcome


@never_raises()
def answerability_accuracy(example, pred, trace=None) -> float:
    gold, outcome = read_gold(example), read_outcome(pred)
    if outcome.crashed:
        return 0.0
    if gold.expects_abstention:
        return float(abstains(outcome))
    if gold.answerability == "direct":
        return float(outcome.answerability == "direct" and not abstains(outcome))
    return float(outcome.answerability == gold.answerability)
