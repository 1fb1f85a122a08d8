"""The closed sets of values the LM chooses from and the program reports, defined once.

Signatures use the Literal types as output types (so constrained decoding cannot invent a
value); the loop, the caveats, the metrics and the labeled-set loader use the same tuples.
"""

from __future__ import annotations

from typing import Literal, get_args

Answerability = Literal["direct", "proxy_only", "unlikely"]
ANSWERABILITY: tuple[str, ...] = get_args(Answerability)
"""direct: the exact question is answerable; proxy_only: only approximately, through proxies;
unlikely: the data probably does not exist or is not public."""

AnswerabilityStatus = Literal["unknown", "direct", "proxy_only", "unlikely"]
"""The scratchpad's running answerability: `unknown` until a step or the evidence decides."""

TaskKind = Literal["lookup", "multi_hop", "comparison", "aggregate_or_ill_posed", "codebase"]
TASK_KINDS: tuple[str, ...] = get_args(TaskKind)

StopReason = Literal["answered", "answerability", "exhausted", "no_new_query", "max_searches", "hard_budget",
                     "lm_error"]
STOP_REASONS: tuple[str, ...] = get_args(StopReason)
"""Why the search ended: answered (the prediction's `answered_by` says who: the model chose to
synthesize, the evidence held a typed answer, or the program had no query left), answerability (the exact
question looked unanswerable), exhausted (searches in a row found nothing new), no_new_query
(no materially different query was left), max_searches, hard_budget, lm_error (the model's
replies could not be used)."""
