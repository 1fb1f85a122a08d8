"""Run a program over labeled examples, score each run, and keep every result as it arrives.

Each finished example is appended to a JSONL file at once (question, gold, answer,
answerability, stop reason, tool calls, scores), so an interrupted or crashing evaluation
loses nothing already computed. An existing results file is never overwritten: it is refused,
or continued with `resume=True` (examples it already holds without an error, scored for the same
state of the program, are skipped; a line a kill left half-written is dropped).

An example whose run raises is kept with its error and scores 0 on every metric; so is a run
that ended on an LM error without one successful LM call. An LM that cannot be used at all (no
key, unknown model, unreachable server: `is_fatal_lm_error`) stops the evaluation after the
first such row with `LMUnusable`; an evaluation in which most rows could not reach the model
(every call rate-limited or failed) raises it once every row has run. SIGINT / SIGTERM (see
`stopping`) stop scheduling examples at once, let the running ones finish, and raise
`Interrupted`; both carry the report so far.

Given a `Tracker`, each example is one MLflow trace carrying its row's scores as feedback (the
source naming the metric's function), its labeled answer and answerability as expectations, and
its stop reason and answer origin as tags (`tracking.Tracker.trace_example`).
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import hashlib
import json
import signal
import stat
import statistics
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import dspy

from deltaseek.bundled import CORPUS_NAMES, corpus_path
from deltaseek.errors import DatasetError, DeltaSeekError, UsageError
from deltaseek.files import unwritable_reason, write_text_atomically
from deltaseek.metrics import answerability_accuracy, combined_metric, efficiency, exact_match, token_f1
from deltaseek.optimize import stopping
from deltaseek.optimize.labeled_data import LabeledSet, load_labeled, split
from deltaseek.optimize.tracking import Tracker
from deltaseek.programs.agent import run_question
from deltaseek.programs.agent.lm_faults import describe_faults
from deltaseek.programs.lm import is_fatal_lm_error

METRICS = {
    "exact_match": exact_match,
    "token_f1": token_f1,
    "answerability_accuracy": answerability_accuracy,
    "efficiency": efficiency,
    "combined": combined_metric,
}
RECORD_FIELDS = ("answer", "answerability", "caveats", "assumptions", "stop_reason", "answer_origin", "steps",
                 "tool_calls", "sources", "lm_calls", "tokens", "seconds", "lm_faults")
LABEL_FIELDS = ("id", "question", "answer", "aliases", "answerability", "split", "corpus")
"""What an example's row of the dataset input holds (MLflow's digest is over these)."""


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
    """The bundled corpus files the examples name, in order of first use; none when no example
    names one (their corpus is then --corpus, or the bundled corpus)."""
    names = list(dict.fromkeys(str(ex.get("corpus")) for ex in examples if ex.get("corpus")))
    unknown = [n for n in names if n not in CORPUS_NAMES]
    if unknown:
        raise UsageError(f"corpus {', '.join(map(repr, unknown))} is not bundled (known: {', '.join(CORPUS_NAMES)}); "
                         "pass the corpus file with --corpus")
    return [str(corpus_path(n)) for n in names]


def score(example: dspy.Example, record: dict | None) -> dict[str, float]:
    """Every metric on one run; a crashed run (no record) scores 0 everywhere."""
    return {name: float(metric(example, record)) for name, metric in METRICS.items()}


def labeled_rows(examples: list[dspy.Example]) -> list[dict]:
    """The examples as the rows of a run's dataset input."""
    return [{name: example.get(name) for name in LABEL_FIELDS} for example in examples]


def run_example(program: dspy.Module, example: dspy.Example, index: int, tracker: Tracker | None = None) -> dict:
    """One scored row, and its trace when `tracker` traces. `lm_unusable` is true when the LM cannot
    be used at all (the run must stop)."""
    traced = tracker.trace_example({"question": example.question}) if tracker else contextlib.nullcontext()
    with traced as score_trace:
        row = scored_row(program, example, index)
        if score_trace:
            score_trace({"answer": row["answer"], "answerability": row["answerability"]},
                        feedback={name: (value, f"{METRICS[name].__module__}.{METRICS[name].__name__}")
                                  for name, value in row["scores"].items()},
                        expectations={"expected_response": row["gold"]["answer"],
                                      "expected_answerability": row["gold"]["answerability"]},
                        tags={"example_id": row["id"], "stop_reason": row["stop_reason"],
                              "answer_origin": row["answer_origin"], "error": row["error"]},
                        rationale=row["error"])
    return row


def scored_row(program: dspy.Module, example: dspy.Example, index: int) -> dict:
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
        row["error"] = " ".join(f"{type(exc).__name__}: {exc}".split())
        row["lm_unusable"] = is_fatal_lm_error(exc)
    else:
        row.update({field: record[field] for field in RECORD_FIELDS})
        row["error"] = no_lm_call_error(record)
        row["lm_unusable"] = False
        if row["error"]:
            record = None
    row["scores"] = score(example, record)
    return row


def no_lm_call_error(record: dict) -> str | None:
    """A run that ended on an LM error without one successful LM call answered from searches
    alone: an error, never a score. The error names the faults (`LMRateLimitError (429) on ...`)."""
    if record.get("stop_reason") == "lm_error" and not record.get("lm_calls"):
        faults = describe_faults(record.get("lm_faults") or [])
        return "no LM call succeeded (the run stopped on an LM error)" + (f": {faults}" if faults else "")
    return None


def could_not_reach_model(row: dict) -> bool:
    """No LM call of the run succeeded and at least one failed (rate-limited, refused, timed out)."""
    return not row.get("lm_calls") and bool(row.get("lm_faults"))


def check_model_reached(report: "EvalReport", total: int) -> None:
    """`LMUnusable` when most rows could not reach the model: their scores measure the searches
    alone, and an evaluation that reports them as a result would hide the fault."""
    unreached = [row for row in report.rows if could_not_reach_model(row)]
    if len(unreached) * 2 > len(report.rows):
        faults = describe_faults([fault for row in unreached for fault in row["lm_faults"]])
        raise LMUnusable(f"the model could not be reached on {len(unreached)} of {total} examples ({faults}); "
                         f"results kept in {report.path}", report)


class LMUnusable(DeltaSeekError):
    """The LM cannot be used at all; the evaluation stopped. `report` holds the rows so far."""

    def __init__(self, message: str, report: "EvalReport"):
        super().__init__(message)
        self.report = report


def refuse_overwrite(path: Path, resume: bool, name: str | None = None) -> bool:
    """Whether `path` already holds results; a UsageError (naming it as `name`) when it does and
    `resume` is off: results are never overwritten."""
    held = path.is_file() and path.stat().st_size > 0
    if held and not resume:
        raise UsageError(f"{name or path} already holds results; pass --resume to run only the examples it does not "
                         "hold, or choose another output file (results are never overwritten)")
    return held


def check_writable(path: Path, name: str | None = None) -> None:
    """A UsageError (naming `path` as `name`) when the results cannot be written there: said before
    the model loads and the first example runs, not at its first result."""
    if reason := unwritable_reason(path):
        raise UsageError(f"{name or path}: {reason}; make it writable or choose another output file")


def program_digest(program: dspy.Module) -> str:
    """A digest of the program's saved state (prompts, demos, settings, reader): each result row
    carries it, so a resume keeps only the rows of the very program it scores."""
    state = json.dumps(program.dump_state(), sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(state.encode("utf-8")).hexdigest()


class ResultsFile:
    """A JSONL file that each finished row is appended to (and flushed) at once.

    An existing non-empty file is refused unless `resume`; then its rows are read (a line cut
    short by a kill is dropped from the file) and `finished` maps each id to its last row without
    an error; given `digest`, only rows of that program state count (`other_program`: how many
    were another's, a program edited since).
    """

    def __init__(self, path: str | Path, resume: bool = False, digest: str | None = None):
        self.path = Path(path)
        self.digest = digest
        self.finished: dict[str, dict] = {}
        self.other_program = 0
        held = refuse_overwrite(self.path, resume)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if held:
            self._read_earlier()
        self.written = len(self.finished)  # rows a --resume keeps: the earlier run's, then each one appended
        self._lock = threading.Lock()

    def _read_earlier(self) -> None:
        text = self.path.read_text(encoding="utf-8", errors="replace")
        kept = []
        for line in text.split("\n"):  # not splitlines(): a row's text may hold U+2028, which it splits at
            if not line:
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # the last line of a killed run may be cut short
            kept.append(line)
            if isinstance(row, dict) and row.get("id") is not None and set(METRICS) <= set(row.get("scores") or {}):
                if self.digest is not None and row.get("program_digest") != self.digest:
                    self.other_program += 1  # the scores of another program: run again, never reported as this one's
                    self.finished.pop(str(row["id"]), None)
                elif row.get("error"):
                    self.finished.pop(str(row["id"]), None)
                else:
                    self.finished[str(row["id"])] = row
        whole = "".join(line + "\n" for line in kept)
        if whole != text:  # a fragment dropped at once: a reader of the file later finds whole rows only
            write_text_atomically(self.path, whole, mode=stat.S_IMODE(self.path.stat().st_mode))

    def append(self, row: dict) -> None:
        line = json.dumps(row, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            try:
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(line)
            except OSError as exc:  # a full disk: say which file, and that what it holds is kept
                mend = ("free some space" if exc.errno in (errno.ENOSPC, errno.EDQUOT)
                        else "make the file writable" if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS)
                        else "mend the cause")
                raise DeltaSeekError(f"{self.path}: the result of example {row.get('id')} could not be written "
                                     f"({exc.strerror or exc}); the {self.written} rows written before it are kept: "
                                     f"{mend}, then run again with --resume") from None
            self.written += 1


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
    def costs(self) -> dict[str, float]:
        """What a question cost: LM calls and tokens (mean), wall seconds (median and mean)."""
        runs = [r for r in self.rows if r.get("seconds") is not None]
        if not runs:
            return {}
        seconds = [r["seconds"] for r in runs]
        return {"lm_calls_mean": statistics.fmean(r.get("lm_calls") or 0 for r in runs),
                "tokens_mean": statistics.fmean(r.get("tokens") or 0 for r in runs),
                "seconds_median": statistics.median(seconds), "seconds_mean": statistics.fmean(seconds)}


def evaluate_program(program: dspy.Module, examples: list[dspy.Example], results_path: str | Path,
                     threads: int = 1, label: str = "evaluate", resume: bool = False,
                     tracker: Tracker | None = None) -> EvalReport:
    """Run and score every example (at most `threads` at a time, in worker threads), appending each
    row to `results_path` as it ends. With `resume`, examples the file already holds are skipped.
    With `tracker`, each example run is a scored trace of its run.

    Raises `stopping.Interrupted` after a SIGINT/SIGTERM and `LMUnusable` after an LM that cannot
    be used; both only once the running examples have finished, and both carry the report so far.
    """
    from tqdm import tqdm

    digest = program_digest(program)
    out = ResultsFile(results_path, resume=resume, digest=digest)
    if out.other_program:
        print(f"deltaseek: note: {out.path}: {out.other_program} rows were not scored for this state of the program "
              "(it was changed since, or the rows are older than the digest they carry now); those examples run again",
              file=sys.stderr)
    rows = [{**out.finished[str(ex.get("id"))], "index": i} for i, ex in enumerate(examples)
            if str(ex.get("id")) in out.finished]
    todo = [(i, ex) for i, ex in enumerate(examples) if str(ex.get("id")) not in out.finished]
    report = EvalReport(label, rows, out.path, resumed=len(rows))
    bar = tqdm(total=len(examples), initial=len(rows), desc=label, unit="q", file=sys.stderr, dynamic_ncols=True)
    unusable: dict | None = None

    def finished(row: dict) -> None:
        nonlocal unusable
        row["program_digest"] = digest
        out.append(row)
        rows.append(row)
        unusable = unusable or (row if row["lm_unusable"] else None)
        bar.update(1)
        bar.set_postfix(combined=f"{sum(r['scores']['combined'] for r in rows) / len(rows):.3f}")

    stop = stopping.current()
    queue = iter(todo)
    running: dict[Future, int] = {}
    pool = ThreadPoolExecutor(max_workers=threads)
    interrupted: KeyboardInterrupt | None = None
    try:
        with stop.defer():
            while True:
                while len(running) < threads and not (stop.requested or unusable or interrupted):
                    index, example = next(queue, (None, None))
                    if example is None:
                        break
                    # Each task runs in a copy of this context, so DSPy's settings overrides follow it.
                    future = pool.submit(contextvars.copy_context().run, run_example, program, example, index,
                                         tracker)
                    running[future] = index
                if not running:
                    break
                done, _ = wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
                for future in done:
                    running.pop(future)
                    try:
                        finished(future.result())
                    except KeyboardInterrupt as exc:  # raised inside an example: stop like a signal
                        interrupted = exc
    except KeyboardInterrupt as exc:  # a second signal (or Ctrl-C with no handler): stop waiting
        exc.report = report
        exc.abandoned = bool(running)  # examples still running in threads: the process must not wait for them
        raise
    finally:
        pool.shutdown(wait=not running, cancel_futures=True)
        bar.close()
        rows.sort(key=lambda r: r["index"])
    if stop.requested or interrupted:
        error = stopping.Interrupted(stop.signum or getattr(interrupted, "signum", signal.SIGINT))
        error.report = report
        raise error
    if unusable:
        raise LMUnusable(f"the LM cannot be used ({unusable['error']}); stopped after {len(rows)} of "
                         f"{len(examples)} examples, results kept in {out.path}", report)
    check_model_reached(report, len(examples))
    return report


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
    lines = [f"{report.label}: {len(report.rows)} examples" + (f", {report.crashed} crashed" if report.crashed else "")
             + (f" ({report.resumed} kept from the earlier run)" if report.resumed else ""),
             f"{'metric':<24}{'mean':>8}"]
    lines += [f"{name:<24}{value:>8.3f}" for name, value in report.means.items()]
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
