"""The abstain bound: under it, the reader's span is taken as no answer where that is likelier
right (`confidence.should_set_aside`). A higher bound abstains on more unanswerable questions and
on more answerable ones too; `abstain_bound` chooses the highest whose false abstention stays
within a limit, `trade_off` says what each limit buys, on runs whose every span was answered.
"""

from __future__ import annotations

from deltaseek.programs.agent.confidence import settable_aside, should_set_aside

TRADE_OFF_LIMITS = (0.05, 0.10, 0.15, 0.20, 0.30, 0.40)
"""The false abstentions at which the fit reports the abstention reached."""


def abstain_bound(rows: list[dict], confidences: list[float], absent: list[float],
                  max_false: float) -> tuple[float | None, dict]:
    """The highest bound under which setting the reader's spans aside (those whose passages'
    not stating the answer, `absent`, is likelier than the span is right) keeps the false
    abstention within `max_false` (the runs' own abstentions counted), and the abstention, false abstention
    and spans set aside there. Both are measured on the runs of the sets holding unanswerable
    questions (`source` of each row): a set with none, two-hop questions say, tells nothing of
    the trade between them. None where no set holds one, or no bound keeps to it."""
    gold = [row.get("gold", {}).get("answerability") for row in rows]
    mixed = {row.get("source") for row, g in zip(rows, gold) if g == "unlikely"}
    unanswerable = [i for i, g in enumerate(gold) if g == "unlikely"]
    answerable = [i for i, g in enumerate(gold) if g == "direct" and rows[i].get("source") in mixed]
    if not unanswerable or not answerable:
        return None, {}
    abstained = {i for i, row in enumerate(rows) if row["confidence_signals"].get("abstains")}
    doubtable = readers_spans(rows)

    def figures(bound: float) -> dict[str, float]:
        aside = set(set_aside(rows, confidences, absent, bound))
        out = abstained | aside
        return {"abstention": round(sum(i in out for i in unanswerable) / len(unanswerable), 4),
                "false_abstention": round(sum(i in out for i in answerable) / len(answerable), 4),
                "set_aside": len(aside)}

    chosen = None
    for bound in sorted({confidences[i] + 1e-6 for i in doubtable}):
        if figures(bound)["false_abstention"] <= max_false:
            chosen = bound
    return (None, figures(0.0)) if chosen is None else (round(chosen, 6), figures(chosen))


def set_aside(rows: list[dict], confidences: list[float], absent: list[float], bound: float | None) -> list[int]:
    """The rows whose reader's span the abstain `bound` takes as no answer, each row's confidence
    in `confidences` and the probability that the passages do not state its answer in `absent`."""
    if bound is None:
        return []
    return [i for i in readers_spans(rows) if should_set_aside(confidences[i], absent[i], bound)]


def readers_spans(rows: list[dict]) -> list[int]:
    """The rows whose answer is a span the reader read: those an abstain bound can set aside."""
    return [i for i, row in enumerate(rows) if settable_aside(row["confidence_signals"], row.get("answerability"))]


def trade_off(rows: list[dict], confidences: list[float], absent: list[float]) -> list[dict]:
    """Where the trade-off lies: at each limit of false abstention, the bound chosen and the
    abstention and false abstention it gives (the limits no bound keeps to are left out)."""
    curve = []
    for limit in TRADE_OFF_LIMITS:
        bound, figures = abstain_bound(rows, confidences, absent, limit)
        if bound is not None:
            curve.append({"max_false_abstention": limit, "bound": bound, **figures})
    return curve
