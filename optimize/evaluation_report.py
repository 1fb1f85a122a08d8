"""What an evaluation reports: the metrics each run is scored on, the report of a run over a
labeled set (means, crashes, costs), and that report as printed lines and as MLflow table columns.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

import dspy

from deltaseek.metrics import answerability_accuracy, combined_metric, efficiency, exact_match, token_f1
from deltaseek.metrics.calibration import direct_figures, expected_calibration_error, is_right

METRICS = {
    "exact_match": exact_match,
    "token_f1": token_f1,
    "answerability_accuracy": answerability_accuracy,
    "efficiency": efficiency,
    "combined": combined_metric,
}


def score(example: dspy.Example, record: dict | None) -> dict[str, float]:
    """Every metric on one run; a crashed run (no record) scores 0 everywhere."""
    return {name: float(metric(example, record)) for name, metric in METRICS.items()}


@dataclass
class EvalReport:
    label: str
    rows: list[dict]
    path: Path
    resumed: int = 0
    """Rows taken from an earlier run of the same results file (`--resume`)."""

    @property
    def means(self) -> dict[str, float]:
        if not self.rows:
            return {name: 0.0 for name in METRICS}
        return {name: sum(r["scores"][name] for r in self.rows) / len(self.rows) for name in METRICS}

    @property
    def crashed(self) -> int:
        return sum(1 for r in self.rows if r["error"])

    @property
    def calibration(self) -> dict[str, float]:
        """How well the answers' confidences match how often they were right (`metrics.calibration`),
        and how often `direct` was right; empty when no run carried a confidence."""
        runs = [r for r in self.rows if r.get("confidence") is not None and not r["error"]]
        if not runs:
            return {}
        rights = [is_right(r["scores"]["token_f1"]) for r in runs]
        figures = direct_figures([r["answerability"] for r in runs], rights)
        return {"confidence_ece": expected_calibration_error([r["confidence"] for r in runs], rights),
                "direct_share": figures["direct_share"], "direct_right": figures["direct_right"]}

    @property
    def costs(self) -> dict[str, float]:
        """What a question cost: LM calls and tokens (mean), wall seconds (median and mean)."""
        runs = [r for r in self.rows if r.get("seconds") is not None]
        if not runs:
            return {}
        seconds = [r["seconds"] for r in runs]
        return {"lm_calls_mean": statistics.fmean(r.get("lm_calls") or 0 for r in runs),
                "tokens_mean": statistics.fmean(r.get("tokens") or 0 for r in runs),
                "seconds_median": statistics.median(seconds), "seconds_mean": statistics.fmean(seconds)}


def table_columns(rows: list[dict]) -> dict[str, list]:
    """The per-example rows as flat columns, for `mlflow.log_table`."""
    columns: dict[str, list] = {name: [] for name in (
        "id", "question", "gold_answer", "gold_answerability", "answer", "answerability", "stop_reason",
        "executed_calls", "blocked_calls", "confidence", "seconds", "error", *METRICS)}
    for row in rows:
        calls = row["tool_calls"] or []
        values = {"id": row["id"], "question": row["question"], "gold_answer": row["gold"]["answer"],
                  "gold_answerability": row["gold"]["answerability"], "answer": row["answer"],
                  "answerability": row["answerability"], "stop_reason": row["stop_reason"],
                  "executed_calls": sum(1 for c in calls if c.get("executed")),
                  "blocked_calls": sum(1 for c in calls if not c.get("executed")),
                  "confidence": row.get("confidence"), "seconds": row["seconds"], "error": row["error"], **row["scores"]}
        for name in columns:
            columns[name].append(values[name])
    return columns


def format_report(report: EvalReport) -> str:
    lines = [f"{report.label}: {len(report.rows)} examples" + (f", {report.crashed} crashed" if report.crashed else "")
             + (f" ({report.resumed} kept from the earlier run)" if report.resumed else ""),
             f"{'metric':<24}{'mean':>8}"]
    lines += [f"{name:<24}{value:>8.3f}" for name, value in report.means.items()]
    if calibration := report.calibration:
        lines.append(f"confidence: calibration error {calibration['confidence_ece']:.3f}; labelled direct "
                     f"{calibration['direct_share']:.0%} of questions, {calibration['direct_right']:.0%} of them right")
    costs = report.costs
    if costs:
        lines.append(f"per question: {costs['lm_calls_mean']:.1f} LM calls, {costs['tokens_mean']:,.0f} tokens, "
                     f"{costs['seconds_median']:.1f} s median ({costs['seconds_mean']:.1f} s mean)")
    return "\n".join(lines)


def format_comparison(title: str, baseline: EvalReport, compiled: EvalReport) -> str:
    lines = [f"{title}: {len(baseline.rows)} examples", f"{'metric':<24}{'baseline':>10}{'compiled':>10}{'lift':>9}"]
    for name in METRICS:
        before, after = baseline.means[name], compiled.means[name]
        lines.append(f"{name:<24}{before:>10.3f}{after:>10.3f}{after - before:>+9.3f}")
    return "\n".join(lines)
