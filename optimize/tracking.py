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
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlparse

from deltaseek.programs.agent.logged_model import log_program
from deltaseek.programs.mlflow_store import fail_quickly, resolve_tracking_uri, unreachable_reason

EXPERIMENT_NAME = "deltaseek"
PARAM_CHARS = 500


def run_status(exc_type: type[BaseException] | None) -> str:
    """FINISHED, KILLED for a stop asked by a signal (KeyboardInterrupt and its kin), else FAILED."""
    if exc_type is None:
        return "FINISHED"
    return "KILLED" if issubclass(exc_type, KeyboardInterrupt) else "FAILED"


def warn(message: str) -> None:
    print("deltaseek: warning: " + " ".join(str(message).split()), file=sys.stderr)


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

            mlflow.set_tracking_uri(self.uri)
            mlflow.set_experiment(self.experiment)
            self.run_id = mlflow.start_run(run_name=self.run_name).info.run_id
            if self.traces:
                mlflow.dspy.autolog(log_traces=True, log_traces_from_compile=False, silent=True)
                self._autolog_on = True
        except Exception as exc:  # MLflow raises many types (MlflowException, OSError, HTTP errors)
            self._give_up("start a run", exc)
            return False
        return True

    def log_params(self, params: dict[str, Any]) -> None:
        self._call("log params", lambda mlflow: mlflow.log_params(flatten(params)))

    def log_metrics(self, metrics: dict[str, float]) -> None:
        self._call("log metrics", lambda mlflow: mlflow.log_metrics({k: float(v) for k, v in metrics.items()}))

    def set_tags(self, tags: dict[str, Any]) -> None:
        self._call("set tags", lambda mlflow: mlflow.set_tags(flatten(tags)))

    def log_nested_run(self, run_name: str, params: dict[str, Any], metrics: dict[str, float]) -> None:
        """A finished child run of this one (one trial of a search, say): its params and metrics."""
        def log(mlflow):
            with mlflow.start_run(run_name=run_name, nested=True):
                mlflow.log_params(flatten(params))
                mlflow.log_metrics({k: float(v) for k, v in metrics.items()})

        self._call(f"log the nested run {run_name!r}", log)

    def log_artifact(self, path: str | os.PathLike, folder: str | None = None) -> None:
        self._call(f"log {Path(path).name}", lambda mlflow: mlflow.log_artifact(str(path), artifact_path=folder))

    def log_table(self, columns: dict[str, list], artifact_file: str) -> None:
        self._call(f"log {artifact_file}", lambda mlflow: mlflow.log_table(data=columns, artifact_file=artifact_file))

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
        if self.active:
            self._call("end the run", lambda mlflow: mlflow.end_run(status=status))
            if self.active and status != "KILLED":  # an interrupted command names the run in its own line
                print(f"MLflow run {self.run_id} in {self.uri} (experiment {self.experiment!r})", file=sys.stderr)
            self.ended_run_id, self.run_id = self.run_id, None

    def _call(self, what: str, action: Callable, keep_run: bool = False) -> None:
        if not self.active and not keep_run:
            return
        try:
            import mlflow

            action(mlflow)
        except Exception as exc:
            self._give_up(what, exc)

    def _give_up(self, what: str, exc: Exception) -> None:
        warn(f"MLflow could not {what} at {self.uri} ({type(exc).__name__}: {exc}); "
             "tracking stops, results are saved locally")
        try:
            import mlflow

            if self._autolog_on:
                mlflow.dspy.autolog(disable=True, silent=True)
            if mlflow.active_run() is not None:
                mlflow.end_run(status="FAILED")
        except Exception:
            pass  # already failing: the warning above is all the user needs
        self._autolog_on = False
        self.run_id = None
