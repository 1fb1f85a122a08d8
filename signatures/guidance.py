"""The templates the loop fills into the `guidance` and `missing` inputs of the signatures.

They are prompt text like the docstrings beside them: what the LM reads about its plan, its
budget, a weak search and why the search stopped. The loop only chooses which to use and
fills in the numbers and names.
"""

from __future__ import annotations

from deltaseek.signatures.values import StopReason, TaskKind

PLANS: dict[TaskKind, list[str]] = {
    "lookup": ["Search the question's key terms", "Refine once if the passage does not name the answer", "Answer"],
    "multi_hop": ["Find the first entity", "Search the second hop from what was found", "Answer from both"],
    "comparison": ["Broad scan", "Search each side separately", "Compare with caveats"],
    "aggregate_or_ill_posed": ["Broad scan for a published figure", "Search proxies if none exists",
                               "Answer qualitatively, naming the missing metric and the assumptions"],
    "codebase": ["Search the code for the name", "Read the definition", "Answer"],
}
"""The plan each kind of task starts from (seed 004: the task kind sets the strategy)."""

TOOLS_LINE = "Tools: {tools}"
TOOL_ENTRY = "{name}(query): {description}"
START = "Start with the {strategy} search strategy. Plan: {plan}"

BUDGET_LEFT = "Step {step} of at most {hard_budget} ({left} left)."
BUDGET_NUDGE = ("Step {step} of at most {hard_budget}. You have already used several steps: "
                "prefer next_move=synthesize now, using what you have.")
"""The soft budget's nudge toward synthesis (seed 000, 7.2)."""

REFINE = "REFINE: the last search {reason}. Use a materially different query{strategy}, or synthesize."
REFINE_STRATEGY = " (strategy: {strategy})"

STOP_CAVEATS: dict[StopReason, str] = {
    "hard_budget": "The search stopped at its step budget before it was complete.",
    "max_searches": "The search stopped at its limit on searches.",
    "exhausted": "Several searches in a row found nothing new; the search was stopped.",
    "no_new_query": "No materially different query was left to try.",
    "lm_error": "The model's replies could not be used; the answer rests on the searches that ran.",
    "answerability": "The exact question does not look answerable from the available sources.",
}
"""What each early stop leaves missing: given to Synthesize as `missing`, and shown as a caveat."""

INCOMPLETE_STOPS: frozenset[StopReason] = frozenset({"hard_budget", "max_searches", "exhausted", "no_new_query",
                                                     "lm_error"})
"""Stops that cut the search short: the synthesis is told what they left missing."""


def budget_guidance(step: int, soft_budget: int, hard_budget: int) -> str:
    """The budget line for the step about to run (`step` steps are already done)."""
    template = BUDGET_NUDGE if step >= soft_budget else BUDGET_LEFT
    return template.format(step=step + 1, hard_budget=hard_budget, left=hard_budget - step)


def refine_note(reason: str, strategy: str | None) -> str:
    return REFINE.format(reason=reason, strategy=REFINE_STRATEGY.format(strategy=strategy) if strategy else "")

COMPACT_STRUCTURE = ("Each input comes in a section headed [[ ## name ## ]]. Reply with one JSON object holding "
                     "{fields}, in that order.")
"""For a model whose decoding is held to the JSON schema by a grammar: the one line that replaces
DSPy's field-by-field structure template and its per-call output reminder (the grammar already
enforces both), so the prompt is shorter and every call reads fewer tokens."""
