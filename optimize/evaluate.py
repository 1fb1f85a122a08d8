"""Run a program over labeled examples, score each run, and keep every result as it arrives.

Each finished example is appended to a JSONL file at once (question, gold, answer,
answerability, stop reason, tool calls, scores), so an interrupted or crashing evaluation
loses nothing already computed. An existing results file is never overwritten: it is refused,
or continued with `resume=True` (examples it already holds without an error, scored for the same
state of the program, are skipped; a line a kill left half-written is dropped: `results_file`).
The metrics and the report are `evaluation_report`'s.

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
import signal
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

import dspy

from deltaseek.bundled import CORPUS_NAMES, corpus_path
from deltaseek.errors import DatasetError, DeltaSeekError, UsageError
from deltaseek.optimize import stopping
from deltaseek.optimize.evaluation_report import METRICS, EvalReport, score
from deltaseek.optimize.labeled_data import LabeledSet, load_labeled, split
from deltaseek.optimize.results_file import ResultsFile, program_digest
from deltaseek.optimize.tracking import Tracker
from deltaseek.programs.agent import run_question
from deltaseek.programs.agent.lm_faults import describe_faults
from deltaseek.programs.lm import is_fatal_lm_error

RECORD_FIELDS = ("answer", "answerability", "confidence", "confidence_signals", "profile", "caveats", "assumptions",
                 "stop_reason", "answer_origin", "steps", "tool_calls", "sources", "lm_calls", "tokens", "seconds", "lm_faults")
LABEL_FIELDS = ("id", "question", "answer", "aliases", "answerability", "split", "corpus", "group")
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
    row = {"index": index, "id": example.get("id"), "split": example.get("split"), "group": example.get("group"),
           "question": example.question,
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
