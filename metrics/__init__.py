"""Metrics with DSPy's signature `metric(example, pred, trace=None)`; none of them ever raises."""

from deltaseek.metrics.answerability import answerability_accuracy
from deltaseek.metrics.answers import exact_match, normalize_answer, token_f1
from deltaseek.metrics.combined import PASS_THRESHOLD, WEIGHTS, combined_metric, gepa_feedback_metric
from deltaseek.metrics.contract import abstains
from deltaseek.metrics.efficiency import efficiency

__all__ = [
    "PASS_THRESHOLD",
    "WEIGHTS",
    "abstains",
    "answerability_accuracy",
    "combined_metric",
    "efficiency",
    "exact_match",
    "gepa_feedback_metric",
    "normalize_answer",
    "token_f1",
]
