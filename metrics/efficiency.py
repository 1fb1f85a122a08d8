"""Efficiency: fewer executed tool calls is better; loops and budget stops cost extra.

    efficiency = 1 - EXECUTED_CALL_COST * (executed calls beyond FREE_CALLS)
                   - BLOCKED_CALL_COST * (calls the guardrails blocked, e.g. duplicates)
                   - HARD_BUDGET_COST  (if the run was stopped by the hard budget)
    clipped to [0, 1]. A run without `tool_calls`, or one that ended in "lm_error", scores 0.

A blocked call costs more than an executed one: it means the program asked for something it
had already tried, which is exactly the loop deltaseek exists to avoid.
"""

from __future__ import annotations

from dataclasses import dataclass

from deltaseek.metrics.contract import never_raises, read_outcome

FREE_CALLS = 1
EXECUTED_CALL_COST = 0.1
BLOCKED_CALL_COST = 0.2
HARD_BUDGET_COST = 0.3


def was_executed(call: dict) -> bool:
    """A call ran unless it says it did not (`executed: false`, a `blocked_reason`, or status "blocked")."""
    if "executed" in call:
        return bool(call["executed"])
    return not call.get("blocked_reason") and call.get("status") != "blocked"


@dataclass(frozen=True)
class CallCounts:
    executed: int
    blocked: int
    blocked_queries: tuple[str, ...]
    blocked_reasons: tuple[str, ...]


def count_calls(tool_calls: list[dict]) -> CallCounts:
    blocked = [c for c in tool_calls if not was_executed(c)]
    args = [c.get("args") if isinstance(c.get("args"), dict) else {} for c in blocked]
    return CallCounts(
        executed=len(tool_calls) - len(blocked),
        blocked=len(blocked),
        blocked_queries=tuple(str(a.get("query", "")) for a in args),
        blocked_reasons=tuple(str(c.get("blocked_reason") or c.get("status") or "blocked") for c in blocked),
    )


@never_raises()
def efficiency(example, pred, trace=None) -> float:
    outcome = read_outcome(pred)
    if outcome.tool_calls is None or outcome.stop_reason == "lm_error":
        return 0.0
    counts = count_calls(outcome.tool_calls)
    cost = (EXECUTED_CALL_COST * max(0, counts.executed - FREE_CALLS)
            + BLOCKED_CALL_COST * counts.blocked
            + (HARD_BUDGET_COST if outcome.stop_reason == "hard_budget" else 0.0))
    return round(max(0.0, min(1.0, 1.0 - cost)), 6)
