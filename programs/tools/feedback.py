"""Tool feedback (seed 003): every observation says WHAT happened, WHAT was found and WHAT to do
next. NEXT STEPS name only tools that exist and moves not yet tried."""

from __future__ import annotations

from deltaseek.programs.tools.base import ToolResult, ToolStatus

SNIPPET_CHARS = 240

_STATUS_LINES = {
    ToolStatus.SUCCESS: "✓ {tool} found {n} result(s) for \"{query}\"",
    ToolStatus.PARTIAL: "⚠ {tool} found results for \"{query}\" but they may not directly answer the question",
    ToolStatus.NO_RESULTS: "⚠ {tool} found no results for \"{query}\"",
    ToolStatus.RATE_LIMITED: "✗ {tool} is rate limited",
    ToolStatus.UNAVAILABLE: "✗ {tool} is temporarily unavailable",
    ToolStatus.BLOCKED: "✗ {tool}(\"{query}\") was not run",
}


def next_steps(result: ToolResult, tried_queries: list[str], alternatives: list[str], strategy: str | None,
               brief: bool = False) -> list[str]:
    """`alternatives`: the healthy tools that have not run this query yet, in the user's order.
    `brief`: the refinement step does not list the queries tried (the prompt lists them elsewhere)."""
    switch = [f"Try {t}(query: \"{result.query}\")" for t in alternatives]
    angle = f" (strategy: {strategy})" if strategy else ""
    refine = f"Search {result.tool} with new terms from another angle{angle}"
    if not brief:
        refine += "; do not repeat: " + "; ".join(f"\"{q}\"" for q in tried_queries[-4:])
    if result.status is ToolStatus.SUCCESS:
        return ["If this answers the question → next_move: synthesize",
                f"If a detail is missing → {refine}"]
    if result.status is ToolStatus.PARTIAL:
        return [f"Try a more specific search → {refine}", *switch,
                "If you have enough → next_move: synthesize"]
    if result.status is ToolStatus.NO_RESULTS:
        return [*switch, f"Try alternate terms → {refine}",
                "If the topic does not exist → next_move: synthesize, saying no information was found"]
    if result.status.failed:
        return [*(switch or ["No other tool is available"]),
                "If you have results from other tools → next_move: synthesize with that information"]
    # Blocked: the seed's three ways out.
    return [f"Change the query → {refine}", *switch, "Move to synthesis → next_move: synthesize",
            "Or declare the question unanswerable as asked (answerability: unlikely)"]


def format_observation(result: ToolResult, tried_queries: list[str], alternatives: list[str],
                       strategy: str | None = None, brief: bool = False) -> str:
    """`brief`: for a prompt that shows the passages found and the queries tried elsewhere (the
    scratchpad's facts and searches), the observation says what happened and what to do next only."""
    lines = [_STATUS_LINES[result.status].format(tool=result.tool, n=len(result.hits), query=result.query)]
    if result.note:
        lines.append(f"({result.note})")
    if not brief:
        lines += [f"## [{hit.source}] {hit.title}\n{hit.text[:SNIPPET_CHARS]}" for hit in result.hits]
    steps = next_steps(result, tried_queries, alternatives, strategy, brief)
    heading = "ALTERNATIVES:" if result.status.failed else "NEXT STEPS:"
    lines.append(heading + "\n" + "\n".join(f"- {s}" for s in steps))
    return "\n".join(lines)
