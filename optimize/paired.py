"""Two programs on the same questions: each metric for both, and the difference B - A with a
paired bootstrap 95% interval (`deltaseek evaluate --compare A B`; for two results files that
exist already, `python -m deltaseek.optimize.paired A.jsonl B.jsonl`).

The rows are `evaluate.evaluate_program`'s per-example rows (or `bench --speed`'s, one set's
rows of its results file), paired by example id: each resample
draws the same questions for both programs, so a question hard for both weighs on neither side of
the difference (scipy.stats.bootstrap with `paired=True`). The intervals are percentile
intervals: the metrics are 0/1 or few-valued per question, and where every question agrees
(a difference of zero throughout, common on a small set) BCa's jackknife acceleration is
undefined and scipy returns NaN; the percentile interval is then the point itself. An interval
that excludes zero is a difference the questions measured, not one resampling made up.

| metric | per question | on |
|---|---|---|
| combined, exact_match, token_f1 | the row's score | every question |
| f1_on_answerable | the row's token F1 | gold answerability not "unlikely" |
| abstention_on_unanswerable | 1 if the answer abstains (`metrics.contract.abstains`) | gold answerability "unlikely" |
| false_abstention | 1 if the answer abstains | every other question |
| lm_calls | the run's LM calls (mean) | every question |
| seconds_median | the run's wall seconds (the median) | every question |
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np

from deltaseek.errors import DeltaSeekError
from deltaseek.metrics.contract import abstains
from deltaseek.programs.corpus_files import json_problem

CONFIDENCE = 0.95
RESAMPLES = 9999


def unanswerable(row: dict) -> bool:
    """`evaluate`'s rows hold the gold record; `bench --speed`'s say whether it is `answerable`."""
    if "answerable" in row:
        return not row["answerable"]
    gold = row.get("gold")
    return isinstance(gold, dict) and gold.get("answerability") == "unlikely"


@dataclass(frozen=True)
class PairedMetric:
    name: str
    value: Callable[[dict], float]
    """The metric's value on one row."""
    applies: Callable[[dict], bool] = lambda row: True
    """Which questions it is measured on (read from the first program's row: the gold is shared)."""
    statistic: Callable = np.mean


PAIRED_METRICS = (
    PairedMetric("combined", lambda row: row["scores"]["combined"]),
    PairedMetric("exact_match", lambda row: row["scores"]["exact_match"]),
    PairedMetric("token_f1", lambda row: row["scores"]["token_f1"]),
    PairedMetric("f1_on_answerable", lambda row: row["scores"]["token_f1"], lambda row: not unanswerable(row)),
    PairedMetric("abstention_on_unanswerable", lambda row: float(abstains(row)), unanswerable),
    PairedMetric("false_abstention", lambda row: float(abstains(row)), lambda row: not unanswerable(row)),
    PairedMetric("lm_calls", lambda row: float(row.get("lm_calls") or 0)),
    PairedMetric("seconds_median", lambda row: float(row.get("seconds") or 0.0), statistic=np.median),
)


def pair_rows(rows_a: list[dict], rows_b: list[dict]) -> list[tuple[dict, dict]]:
    """The rows of the questions both hold, paired by id, in A's order; ValueError when none is shared."""
    by_id = {str(row["id"]): row for row in rows_b}
    pairs = [(row, by_id[str(row["id"])]) for row in rows_a if str(row["id"]) in by_id]
    if not pairs:
        raise ValueError(f"the two programs' results share no question ({len(rows_a)} and {len(rows_b)} rows)")
    return pairs


def difference_interval(a: np.ndarray, b: np.ndarray, statistic: Callable, confidence: float, resamples: int,
                        seed: int) -> tuple[float, float] | tuple[None, None]:
    """The paired bootstrap interval of statistic(B) - statistic(A); none from fewer than 2 questions."""
    if len(a) < 2:
        return None, None
    from scipy.stats import bootstrap  # deferred: scipy takes a second to import, and only a comparison needs it

    result = bootstrap((a, b), lambda x, y, axis: statistic(y, axis=axis) - statistic(x, axis=axis), paired=True,
                       vectorized=True, n_resamples=resamples, confidence_level=confidence, method="percentile",
                       rng=np.random.default_rng(seed))
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def beyond_chance(before: list[float], after: list[float]) -> bool:
    """Whether a retrained or fine-tuned part scores the same dev questions better than the one it
    would replace beyond chance: the paired bootstrap 95% interval of the mean difference lies above
    zero. `optimize` on a user's few hundred questions gains answers and loses others about as
    often as it adds them, and the same questions choose what it keeps; a gain within chance is
    taken as none, and what the program had stays."""
    low, _ = difference_interval(np.array(before, dtype=float), np.array(after, dtype=float), np.mean, CONFIDENCE,
                                 RESAMPLES, seed=0)
    return low is not None and low > 0


def paired_table(rows_a: list[dict], rows_b: list[dict], confidence: float = CONFIDENCE,
                 resamples: int = RESAMPLES, seed: int = 0) -> list[dict]:
    """One row per metric of PAIRED_METRICS: the questions it is measured on (`n`), A's and B's
    value, B - A, and the paired bootstrap interval of the difference (`low`, `high`: None when
    fewer than 2 questions count; every value None when none does)."""
    pairs = pair_rows(rows_a, rows_b)
    table = []
    for metric in PAIRED_METRICS:
        counted = [(a, b) for a, b in pairs if metric.applies(a)]
        a = np.array([metric.value(row) for row, _ in counted], dtype=float)
        b = np.array([metric.value(row) for _, row in counted], dtype=float)
        row = {"metric": metric.name, "n": len(counted), "a": None, "b": None, "difference": None,
               "low": None, "high": None}
        if counted:
            row.update(a=float(metric.statistic(a)), b=float(metric.statistic(b)))
            row["difference"] = row["b"] - row["a"]
            row["low"], row["high"] = difference_interval(a, b, metric.statistic, confidence, resamples, seed)
        table.append(row)
    return table


def excludes_zero(row: dict) -> bool:
    return row["low"] is not None and (row["low"] > 0 or row["high"] < 0)


def format_paired(table: list[dict], name_a: str = "A", name_b: str = "B") -> str:
    """The table as markdown; an interval that excludes zero is marked."""
    def number(value) -> str:
        return "-" if value is None else f"{value:.3f}"

    lines = [f"A = {name_a}", f"B = {name_b}",
             "| metric | questions | A | B | B - A | 95% interval (paired bootstrap) |", "|---|---:|---:|---:|---:|---|"]
    for row in table:
        interval = "-" if row["low"] is None else f"[{row['low']:+.3f}, {row['high']:+.3f}]"
        if excludes_zero(row):
            interval += " excludes 0"
        difference = "-" if row["difference"] is None else f"{row['difference']:+.3f}"
        lines.append(f"| {row['metric']} | {row['n']} | {number(row['a'])} | {number(row['b'])} | {difference} | "
                     f"{interval} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """The paired table of two `evaluate --out` results files, paired by question id."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("a", help="results of program A (JSONL, one row a question)")
    parser.add_argument("b", help="results of program B")
    args = parser.parse_args(argv)
    try:
        rows = [read_rows(path) for path in (args.a, args.b)]
    except DeltaSeekError as exc:
        sys.exit(f"deltaseek: error: {exc}")
    print(format_paired(paired_table(*rows), args.a, args.b))


def read_rows(path: str) -> list[dict]:
    """The rows of a results file; DeltaSeekError naming the file and line of one that is not a result row."""
    rows = []
    try:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line.rstrip("\r\n"))
                except json.JSONDecodeError as exc:
                    raise DeltaSeekError(f"{path}:{number}: not a JSON row ({json_problem(exc)})") from None
                if not isinstance(row, dict) or "id" not in row or not isinstance(row.get("scores"), dict):
                    raise DeltaSeekError(f"{path}:{number}: not a result row (a JSON object with \"id\" and "
                                         "\"scores\", as evaluate --out writes)")
                rows.append(row)
    except (OSError, UnicodeDecodeError) as exc:
        raise DeltaSeekError(f"{path}: cannot read the results file ({type(exc).__name__}: {exc})") from None
    return rows


if __name__ == "__main__":
    main()
