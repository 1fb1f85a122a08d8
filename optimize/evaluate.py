"""Run a program over labeled examples, score each run, and keep every result as it arrives.

Each finished example is appended to a JSONL file at once (question, gold, answer,
answerability, stop reason, tool calls, scores), so an interrupted or crashing evaluation
loses nothing already computed. An example whose run raises is kept with its error and
scores 0 on every metric.
"""

from __future__ import annotations

import contextvars
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import dspy

from deltaseek.bundled import CORPUS_NAMES, corpus_path
from deltaseek.errors import DatasetError, UsageError
from deltaseek.metrics import answerability_accuracy, combined_metric, efficiency, exact_match, token_f1
from deltaseek.optimize.labeled_data import LabeledSet, load_labeled, split
from deltaseek.programs.agent import run_question
METRICS = {
    "exact_match": exact_match,
    "token_f1": token_f1,
    "answerability_accuracy": answerability_accuracy,
    "efficiency": efficiency,
    "combined": combined_metric,
}
SPLIT_CHOICES = ("dev", "test", "train", "all")
RECORD_FIELDS = ("answer", "answerability", "caveats", "assumptions", "stop_reason", "steps", "tool_calls",
                 "sources", "lm_calls", "tokens", "seconds")


def load_dataset(path: str) -> LabeledSet:
    """The labeled set, or a DatasetError whose one line names the file, line and field of the problem."""
    try:
        return load_labeled(path)
    except DatasetError as exc:
        raise DatasetError(exc.one_line()) from None


def select(examples: list[dspy.Example], split_name: str, limit: int | None = None) -> list[dspy.Example]:
    chosen = list(examples) if split_name == "all" else split(examples)[split_name]
    return chosen[:limit] if limit else chosen


def corpora_for(examples: list[dspy.Example]) -> list[str]:
    """The bundled corpus files the examples are asked against, in order of first use."""
    names = list(dict.fromkeys(str(ex.corpus) for ex in examples))
    unknown = [n for n in names if n not in CORPUS_NAMES]
    if unknown:
        raise UsageError(f"corpus {', '.join(map(repr, unknown))} is not bundled (known: {', '.join(CORPUS_NAMES)}); "
                         "pass the corpus file with --corpus")
    return [str(corpus_path(n)) for n in names]


def score(example: dspy.Example, record: dict | None) -> dict[str, float]:
    """Every metric on one run; a crashed run (no record) scores 0 everywhere."""
    return {name: float(metric(example, record)) for name, metric in METRICS.items()}


def run_example(program: dspy.Module, example: dspy.Example, index: int) -> dict:
    row = {"index": index, "id": example.get("id"), "split": example.get("split"), "question": example.question,
           "gold": {"answer": example.get("answer"), "aliases": list(example.get("aliases") or []),
                    "answerability": example.get("answerability")}}
    started = time.perf_counter()
    try:
        record = run_question(program, example.question)
    except Exception as exc:  # one crashing example must not end the evaluation
        record = None
        row.update({field: None for field in RECORD_FIELDS})
        row["seconds"] = round(time.perf_counter() - started, 2)
        row["error"] = f"{type(exc).__name__}: {exc}"
    else:
        row.update({field: record[field] for field in RECORD_FIELDS})
        row["error"] = None
    row["scores"] = score(example, record)
    return row


class ResultsFile:
    """A JSONL file that each finished row is appended to (and flushed) at once."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("", encoding="utf-8")
        self._lock = threading.Lock()

    def append(self, row: dict) -> None:
        line = json.dumps(row, ensure_ascii=False, default=str) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)


@dataclass
class EvalReport:
    label: str
    rows: list[dict]
    path: Path

    @property
    def means(self) -> dict[str, float]:
        if not self.rows:
            return {name: 0.0 for name in METRICS}
        return {name: sum(r["scores"][name] for r in self.rows) / len(self.rows) for name in METRICS}

    @property
    def crashed(self) -> int:
        return sum(1 for r in self.rows if r["error"])


def evaluate_program(program: dspy.Module, examples: list[dspy.Example], results_path: str | Path,
                     threads: int = 1, label: str = "evaluate") -> EvalReport:
    """Run and score every example (in `threads` threads), appending each row to `results_path` as it ends."""
    from tqdm import tqdm

    out = ResultsFile(results_path)
    rows: list[dict] = []
    bar = tqdm(total=len(examples), desc=label, unit="q", file=sys.stderr, dynamic_ncols=True)

    def finished(row: dict) -> None:
        out.append(row)
        rows.append(row)
        bar.update(1)
        bar.set_postfix(combined=f"{sum(r['scores']['combined'] for r in rows) / len(rows):.3f}")

    try:
        if threads <= 1:
            for index, example in enumerate(examples):
                finished(run_example(program, example, index))
        else:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                # Each task runs in a copy of this context, so DSPy's settings overrides follow it.
                futures = [pool.submit(contextvars.copy_context().run, run_example, program, example, index)
                           for index, example in enumerate(examples)]
                for future in as_completed(futures):
                    finished(future.result())
    finally:
        bar.close()
    rows.sort(key=lambda r: r["index"])
    return EvalReport(label, rows, out.path)


def table_columns(rows: list[dict]) -> dict[str, list]:
    """The per-example rows as flat columns, for `mlflow.log_table`."""
    columns: dict[str, list] = {name: [] for name in (
        "id", "question", "gold_answer", "gold_answerability", "answer", "answerability", "stop_reason",
        "executed_calls", "blocked_calls", "seconds", "error", *METRICS)}
    for row in rows:
        calls = row["tool_calls"] or []
        values = {"id": row["id"], "question": row["question"], "gold_answer": row["gold"]["answer"],
                  "gold_answerability": row["gold"]["answerability"], "answer": row["answer"],
                  "answerability": row["answerability"], "stop_reason": row["stop_reason"],
                  "executed_calls": sum(1 for c in calls if c.get("executed")),
                  "blocked_calls": sum(1 for c in calls if not c.get("executed")),
                  "seconds": row["seconds"], "error": row["error"], **row["scores"]}
        for name in columns:
            columns[name].append(values[name])
    return columns


def format_report(report: EvalReport) -> str:
    lines = [f"{report.label}: {len(report.rows)} examples" + (f", {report.crashed} crashed" if report.crashed else ""),
             f"{'metric':<24}{'mean':>8}"]
    lines += [f"{name:<24}{value:>8.3f}" for name, value in report.means.items()]
    return "\n".join(lines)


def format_comparison(title: str, baseline: EvalReport, compiled: EvalReport) -> str:
    lines = [f"{title}: {len(baseline.rows)} examples", f"{'metric':<24}{'baseline':>10}{'compiled':>10}{'lift':>9}"]
    for name in METRICS:
        before, after = baseline.means[name], compiled.means[name]
        lines.append(f"{name:<24}{before:>10.3f}{after:>10.3f}{after - before:>+9.3f}")
    return "\n".join(lines)
