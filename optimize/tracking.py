"""MLflow tracking for evaluations and compiles, which never stops a run or loses a result.

Where runs go: `--tracking-uri`, else `$MLFLOW_TRACKING_URI`, else `sqlite:///mlflow.db` in the
working folder (artifacts in `./mlruns/`; see `programs/mlflow_store.py`).

A server is probed (`GET /health`, a few seconds) before any MLflow call, and a sqlite store's
file and folder must be writable: an unreachable server or a read-only store gives one warning
line and the run goes on untracked (MLflow itself retries a sqlite store it cannot open for
about 100 s, with no setting to shorten it: `mlflow.store.db.utils.MAX_RETRY_COUNT`). MLflow's HTTP retries are turned down
(unless set in the environment) so a server that dies mid-run costs seconds, not minutes.
Every MLflow call goes through `Tracker`, which turns a failure into one warning and stops
tracking; the caller's local files are written regardless.

The run's id is printed when it starts. A run the server could not be told to end (it went
away) is not left RUNNING: what it was not sent (the metrics of the rows kept, the results file)
is sent and the run ended with the command's status as soon as the server answers again, at the
end of the command or else when a later command reaches that server (`unsettled_runs.py`; the
note waits in the cache folder, under `unsettled-runs/`). A run that cannot be settled so is
marked FAILED with the reason.

An evaluation's traces are MLflow 3's (`trace_example`): one trace per labeled example with
DSPy's spans inside it, the example's scores on it as feedback and its labeled answer as an
expectation; the labeled examples are the run's dataset input (`log_dataset`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import urlparse

from deltaseek.errors import warn
from deltaseek.optimize.tracing import TRACE_EXPORT_FAILURES, Score
from deltaseek.optimize.unsettled_runs import LOST_TAG, settle_later, settle_unsettled
from deltaseek.programs.agent.logged_model import log_program
from deltaseek.programs.mlflow_store import (broken_store_problem, fail_quickly, first_opening,
                                             resolve_tracking_uri, unreachable_reason)

EXPERIMENT_NAME = "deltaseek"
PARAM_CHARS = 500
EXPERIMENT_KIND = ("mlflow.experimentKind", "genai_development")
"""The experiment tag that opens MLflow's GenAI views (Traces, Evaluation runs, Datasets) at once."""


def run_status(exc_type: type[BaseException] | None) -> str:
    """FINISHED, KILLED for a stop asked by a signal (KeyboardInterrupt and its kin), else FAILED."""
    if exc_type is None:
        return "FINISHED"
    return "KILLED" if issubclass(exc_type, KeyboardInterrupt) else "FAILED"


def flatten(params: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested dicts become dotted keys; values become short strings (MLflow params are text)."""
    flat: dict[str, str] = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = str(value)[:PARAM_CHARS]
    return flat


class Tracker:
    """One MLflow run, or nothing at all when tracking is unavailable. No method ever raises.

        with Tracker(uri, run_name="evaluate seed_set dev") as tracker:
            ...                       # DSPy traces go to the run (mlflow.dspy.autolog)
            tracker.log_params({...}); tracker.log_metrics({...}); tracker.log_artifact(path)
    """

    def __init__(self, uri: str | None = None, run_name: str | None = None, traces: bool = True,
                 experiment: str = EXPERIMENT_NAME):
        self.uri = resolve_tracking_uri(uri)
        self.run_name = run_name
        self.traces = traces
        self.experiment = experiment
        self.run_id: str | None = None
        self.ended_run_id: str | None = None
        """The run's id after it ended (for the one line an interrupted command prints)."""
        self._autolog_on = False
        self._nested = 0
        self._lost: dict | None = None
        """The run the server went away from: its id, why, and what it was not sent (`unsent`)."""
        self._warned = False

    def warn_once(self, message: str) -> None:
        """A tracking problem costs one warning line per run, however many calls it fails."""
        if not self._warned:
            self._warned = True
            warn(message)

    @property
    def active(self) -> bool:
        return self.run_id is not None

    def __enter__(self) -> "Tracker":
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.end(run_status(exc_type))

    def start(self) -> bool:
        reason = unreachable_reason(self.uri)
        if reason:
            what = "store" if urlparse(self.uri).scheme == "sqlite" else "server"
            state = "cannot be written" if what == "store" else "is unreachable"
            warn(f"MLflow tracking {what} {self.uri} {state} ({reason}); "
                 "the run goes on untracked, results are saved locally only")
            return False
        fail_quickly()
        try:
            import mlflow

            with first_opening(self.uri):  # one process at a time creates a new store's tables
                if problem := broken_store_problem(self.uri):
                    warn(f"MLflow tracking store {self.uri} is broken ({problem}); the run goes on untracked, "
                         "results are saved locally only")
                    return False
                mlflow.set_tracking_uri(self.uri)
                experiment = mlflow.set_experiment(self.experiment)
            if EXPERIMENT_KIND[0] not in experiment.tags:
                mlflow.set_experiment_tag(*EXPERIMENT_KIND)
            settle_unsettled(self.uri)
            self.run_id = mlflow.start_run(run_name=self.run_name).info.run_id
            # now, not at the end: a run whose command dies can still be found
            print(f"MLflow run {self.run_id} in {self.uri} (experiment {self.experiment!r})", file=sys.stderr)
            if self.traces:
                TRACE_EXPORT_FAILURES.tracker = self
                mlflow.dspy.autolog(log_traces=True, log_traces_from_compile=False, silent=True)
                self._autolog_on = True
        except Exception as exc:  # MLflow raises many types (MlflowException, OSError, HTTP errors)
            self._give_up("start a run", exc)
            return False
        return True

    def log_params(self, params: dict[str, Any]) -> None:
        flat = flatten(params)
        self._call("log params", lambda mlflow: mlflow.log_params(flat), unsent=("params", flat))

    def log_metrics(self, metrics: dict[str, float]) -> None:
        values = {k: float(v) for k, v in metrics.items()}
        self._call("log metrics", lambda mlflow: mlflow.log_metrics(values), unsent=("metrics", values))

    def set_tags(self, tags: dict[str, Any]) -> None:
        flat = flatten(tags)
        self._call("set tags", lambda mlflow: mlflow.set_tags(flat), unsent=("tags", flat))

    @contextlib.contextmanager
    def nested(self, run_name: str) -> Iterator["Tracker"]:
        """A child run of this one, active inside the block: what is logged there (traces too)
        goes to it. It ends with the block (KILLED or FAILED when the block raises)."""
        started = self.active and self._call(f"start the nested run {run_name!r}",
                                             lambda mlflow: mlflow.start_run(run_name=run_name, nested=True))
        status = "FINISHED"
        self._nested += 1
        try:
            yield self
        except BaseException as exc:
            status = run_status(type(exc))
            raise
        finally:
            self._nested -= 1
            if started:
                self._call(f"end the nested run {run_name!r}", lambda mlflow: mlflow.end_run(status=status))

    def log_dataset(self, rows: list[dict], source: str, name: str, context: str = "evaluation") -> None:
        """The labeled examples a run used as its dataset input (`mlflow.log_input`): `name` says
        which file and split, MLflow's digest which rows, `source` where they were read."""
        def log(mlflow):
            import mlflow.data
            import pandas as pd

            where = str(Path(source).absolute()) if Path(source).exists() else None
            with warnings.catch_warnings():  # a local path matches two of MLflow's own sources alike
                warnings.filterwarnings("ignore", message="The specified dataset source can be interpreted")
                dataset = mlflow.data.from_pandas(pd.DataFrame(rows), source=where, targets="answer", name=name)
            mlflow.log_input(dataset, context=context)

        self._call(f"log the dataset {name!r}", log)

    @contextlib.contextmanager
    def trace_example(self, inputs: dict[str, Any]) -> Iterator[Score | None]:
        """One trace for one labeled example, its root span holding `inputs`; DSPy's spans nest
        in it. Yields `score` (None when traces are off or the run untracked): the example's
        outputs, scores and labels, logged on the trace while it is open, so MLflow sends them
        with the trace itself rather than in calls of their own."""
        if not (self._autolog_on and self.active):
            yield None
            return
        import mlflow

        with mlflow.start_span(name="deltaseek example", span_type="AGENT") as span:
            span.set_inputs(inputs)
            yield lambda outputs, **labels: self._score(span, outputs, **labels)

    def _score(self, span, outputs: dict[str, Any], feedback: dict[str, tuple[float, str]],
               expectations: dict[str, Any], tags: dict[str, Any], rationale: str | None = None) -> None:
        def log(mlflow):
            from mlflow.entities import AssessmentSource

            span.set_outputs(outputs)
            mlflow.update_current_trace(tags={k: str(v) for k, v in tags.items() if v is not None})
            for name, (value, source_id) in feedback.items():
                mlflow.log_feedback(trace_id=span.trace_id, name=name, value=value, rationale=rationale,
                                    source=AssessmentSource(source_type="CODE", source_id=source_id))
            for name, value in expectations.items():
                mlflow.log_expectation(trace_id=span.trace_id, name=name, value=value,
                                       source=AssessmentSource(source_type="HUMAN", source_id="labeled dataset"))

        self._call("score a trace", log)

    def log_artifact(self, path: str | os.PathLike, folder: str | None = None) -> None:
        self._call(f"log {Path(path).name}", lambda mlflow: mlflow.log_artifact(str(path), artifact_path=folder),
                   unsent=("artifact", str(Path(path).absolute()), folder))

    def log_table(self, columns: dict[str, list], artifact_file: str) -> None:
        self._call(f"log {artifact_file}", lambda mlflow: mlflow.log_table(data=columns, artifact_file=artifact_file),
                   unsent=("table", columns, artifact_file))

    def log_program(self, program, question: str, register: str | None = None) -> str | None:
        """The program as an MLflow model of the DSPy flavor in this run (`log_program`: the LM
        configured now, a signature, `question` as the input example), registered as `register`
        when given. Returns its URI (`models:/NAME/VERSION` when registered), or None when the run
        is untracked or the model could not be logged: then one warning, and the run, its
        metrics and the program's JSON state stay as they are."""
        if not self.active:
            return None
        try:
            info = log_program(program, question, registered_model_name=register)
        except Exception as exc:  # pickling, MLflow and registry errors alike: the run itself is fine
            warn(f"MLflow could not log the program as a model at {self.uri} ({type(exc).__name__}: {exc}); "
                 "the run keeps its metrics and the program's JSON state")
            return None
        return f"models:/{register}/{info.registered_model_version}" if register else info.model_uri

    def end(self, status: str = "FINISHED") -> None:
        if self._autolog_on:
            self._autolog_on = False
            self._call("flush traces", lambda mlflow: mlflow.flush_trace_async_logging(), keep_run=True)
            self._call("turn off tracing", lambda mlflow: mlflow.dspy.autolog(disable=True, silent=True), keep_run=True)
            if TRACE_EXPORT_FAILURES.tracker is self:
                TRACE_EXPORT_FAILURES.tracker = None
        if self.active:
            self._call("end the run", lambda mlflow: mlflow.end_run(status=status))
            if self.active:
                self.ended_run_id, self.run_id = self.run_id, None
        if self._lost:
            self.ended_run_id = self._lost["run_id"]
            settle_later({**self._lost, "uri": self.uri, "status": status})
            self._lost = None

    def _call(self, what: str, action: Callable, keep_run: bool = False, unsent: tuple | None = None) -> bool:
        """Whether `action(mlflow)` ran. What the run was not sent, because this call failed or an
        earlier one lost the server, is kept to send when the server answers again."""
        if not self.active and not keep_run:
            if self._lost and unsent and not self._nested:
                self._lost["unsent"].append(unsent)
            return False
        try:
            import mlflow

            action(mlflow)
        except Exception as exc:
            self._give_up(what, exc)
            if self._lost and unsent and not self._nested:
                self._lost["unsent"].append(unsent)
            return False
        return True

    def _give_up(self, what: str, exc: Exception) -> None:
        reason = f"could not {what} at {self.uri} ({type(exc).__name__}: {' '.join(str(exc).split())})"
        self.warn_once(f"MLflow {reason}; tracking stops, results are saved locally")
        run_id, self.run_id = self.run_id, None
        try:
            import mlflow

            if self._autolog_on:
                mlflow.dspy.autolog(disable=True, silent=True)
            while mlflow.active_run() is not None:  # a nested run, then its parent
                mlflow.set_tag(LOST_TAG, reason)
                mlflow.end_run(status="FAILED")
        except Exception:  # the server is gone: the run is ended later (`settle_later`)
            left_open = []
            while (run := mlflow.active_run()) is not None:
                left_open.append(run.info.run_id)
                with contextlib.suppress(Exception):
                    mlflow.end_run(status="FAILED")  # MLflow forgets the run before it tells the server
            if run_id:
                children = [child for child in left_open if child != run_id]
                self._lost = {"run_id": run_id, "reason": reason, "unsent": [], "children": children}
        self._autolog_on = False
