"""The abstain margin: the reader's span is taken as no answer where the passages' not stating the
answer is likelier than the span is right by more than it (`confidence.should_set_aside`). A
lower margin abstains on more unanswerable questions and on more answerable ones too;
`abstain_margin` chooses the lowest whose false abstention stays within a limit, `trade_off` says
what each limit buys, on runs whose every span was answered.
"""

from __future__ import annotations

from deltaseek.programs.agent.confidence import SET_ASIDE, settable_aside, should_set_aside

TRADE_OFF_LIMITS = (0.05, 0.10, 0.15, 0.20, 0.30, 0.40)
"""The false abstentions at which the fit reports the abstention reached."""


def abstain_margin(rows: list[dict], confidences: list[float], absent: list[float],
                   max_false: float) -> tuple[float | None, dict]:
    """The lowest margin at which setting the reader's spans aside (those whose passages' not
    stating the answer, `absent`, leads the span's `confidences` by more) keeps the false
    abstention within `max_false` (the runs' own abstentions counted), and the abstention, false
    abstention and spans set aside there. Both are measured on the runs of the sets holding
    unanswerable questions (`source` of each row): a set with none, two-hop questions say, tells
    nothing of the trade between them. None where no set holds one, or no margin keeps to it."""
    figures = abstention_at(rows, confidences, absent)
    if figures is None:
        return None, {}
    # a margin of a span's own lead sets aside the spans leading by more: raised one lead at a
    # time, the false abstention only falls, so the first that keeps to the limit is the lowest
    for margin in sorted({round(float(absent[i] - confidences[i]), 6) for i in readers_spans(rows)}):
        if (at_margin := figures(margin))["false_abstention"] <= max_false:
            return margin, at_margin
    return None, figures(None)


def abstention_at(rows: list[dict], confidences: list[float], absent: list[float]):
    """The function of a margin giving the abstention, false abstention and spans set aside at it,
    on the runs of the sets holding unanswerable questions (the runs' own abstentions counted);
    None where no set holds one."""
    gold = [row.get("gold", {}).get("answerability") for row in rows]
    mixed = {row.get("source") for row, g in zip(rows, gold) if g == "unlikely"}
    unanswerable = [i for i, g in enumerate(gold) if g == "unlikely"]
    answerable = [i for i, g in enumerate(gold) if g == "direct" and rows[i].get("source") in mixed]
    if not unanswerable or not answerable:
        return None
    abstained = {i for i, row in enumerate(rows) if row["confidence_signals"].get("abstains")}

    def figures(margin: float | None) -> dict[str, float]:
        aside = set(set_aside(rows, confidences, absent, margin))
        out = abstained | aside
        return {"abstention": round(sum(i in out for i in unanswerable) / len(unanswerable), 4),
                "false_abstention": round(sum(i in out for i in answerable) / len(answerable), 4),
                "set_aside": len(aside)}

    return figures


def set_aside(rows: list[dict], confidences: list[float], absent: list[float], margin: float | None) -> list[int]:
    """The rows whose reader's span the abstain `margin` takes as no answer, each row's confidence
    in `confidences` and the probability that the passages do not state its answer in `absent`."""
    if margin is None:
        return []
    return [i for i in readers_spans(rows) if should_set_aside(confidences[i], absent[i], margin)]


def set_aside_in_record(row: dict) -> bool:
    """Whether a run's record says the abstain margin set its reader's span aside (its caveat)."""
    return any(SET_ASIDE in str(caveat) for caveat in row.get("caveats") or [])


def readers_spans(rows: list[dict]) -> list[int]:
    """The rows whose answer is a span the reader read: those an abstain margin can set aside."""
    return [i for i, row in enumerate(rows) if settable_aside(row["confidence_signals"], row.get("answerability"))]


def trade_off(rows: list[dict], confidences: list[float], absent: list[float]) -> list[dict]:
    """Where the trade-off lies: at each limit of false abstention, the margin chosen and the
    abstention and false abstention it gives (the limits no margin keeps to are left out)."""
    curve = []
    for limit in TRADE_OFF_LIMITS:
        margin, figures = abstain_margin(rows, confidences, absent, limit)
        if margin is not None:
            curve.append({"max_false_abstention": limit, "margin": margin, **figures})
    return curve
