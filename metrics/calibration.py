"""How well answers' confidences match how often they are right.

An answer is right when its token F1 against the gold answer is at least `RIGHT_F1` (on a
question the passages do not answer, when it abstains: `answers.best_match`). A calibrated
confidence of 0.7 means about seven in ten such answers are right: the reliability table puts the
answers in ten bins of confidence and sets each bin's mean confidence beside its share right; the
expected calibration error (ECE) is the gap between the two, weighted by the bin's answers.
"""

from __future__ import annotations

from dataclasses import dataclass

RIGHT_F1 = 0.5
BINS = 10


@dataclass
class Bin:
    low: float
    high: float
    answers: int
    mean_confidence: float
    right: float


def is_right(token_f1: float) -> bool:
    return token_f1 >= RIGHT_F1


def reliability(confidences: list[float], rights: list[bool], bins: int = BINS) -> list[Bin]:
    """The answers in `bins` equal bins of confidence (the last one closed), each with its mean
    confidence and share right; empty bins included, with zeros."""
    table = []
    for i in range(bins):
        low, high = i / bins, (i + 1) / bins
        inside = [(c, r) for c, r in zip(confidences, rights) if low <= c < high or (i == bins - 1 and c == high)]
        n = len(inside)
        table.append(Bin(low, high, n, sum(c for c, _ in inside) / n if n else 0.0,
                         sum(r for _, r in inside) / n if n else 0.0))
    return table


def expected_calibration_error(confidences: list[float], rights: list[bool], bins: int = BINS) -> float:
    total = len(confidences)
    if not total:
        return 0.0
    return sum(b.answers / total * abs(b.mean_confidence - b.right) for b in reliability(confidences, rights, bins))


def direct_figures(labels: list[str], rights: list[bool]) -> dict[str, float | int]:
    """How many answers are labelled `direct`, and the share of those that are right."""
    direct = [r for label, r in zip(labels, rights) if label == "direct"]
    return {"questions": len(labels), "direct": len(direct),
            "direct_share": len(direct) / len(labels) if labels else 0.0,
            "direct_right": sum(direct) / len(direct) if direct else 0.0}


def reliability_lines(confidences: list[float], rights: list[bool]) -> list[str]:
    """The reliability table as Markdown rows, with the ECE under it."""
    lines = ["| confidence | answers | mean confidence | right |", "|---|---:|---:|---:|"]
    for b in reliability(confidences, rights):
        if b.answers:
            lines.append(f"| {b.low:.1f}-{b.high:.1f} | {b.answers} | {b.mean_confidence:.2f} | {b.right:.2f} |")
    lines.append(f"\nExpected calibration error: {expected_calibration_error(confidences, rights):.3f} "
                 f"over {len(confidences)} answers.")
    return lines
