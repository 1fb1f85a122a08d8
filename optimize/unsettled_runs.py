"""Runs a server went away from, ended later: when it answers again, a run left RUNNING is sent
what it missed and ended with its command's status (see `optimize/tracking.py`)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from deltaseek.errors import warn
from deltaseek.files import write_text_atomically
from deltaseek.programs.index import cache_dir
from deltaseek.programs.mlflow_store import unreachable_reason

LOST_TAG = "deltaseek.tracking_lost"
"""Set on a run ended late: why it could not be ended when its command did."""


def unsettled_folder() -> Path:
    return cache_dir() / "unsettled-runs"


def settle_later(note: dict) -> None:
    """End the run of `note` now if its server answers again, else keep the note for the next
    command that reaches that server (one line says which)."""
    if unreachable_reason(note["uri"]) is None and settle(note):
        return
    path = unsettled_folder() / f"{note['run_id']}.json"
    try:
        write_text_atomically(path, json.dumps(note, default=str))
    except OSError as exc:
        warn(f"MLflow run {note['run_id']} stays RUNNING at {note['uri']}: the note to end it later could not be "
             f"written ({type(exc).__name__}: {exc})")
        return
    print(f"deltaseek: note: MLflow run {note['run_id']} is ended, with what it was not sent, when a deltaseek "
          f"command next reaches {note['uri']} (kept in {path})", file=sys.stderr)


def settle_unsettled(uri: str) -> None:
    """End the runs earlier commands left open at `uri` (see `settle_later`); a note is removed
    once its run is ended, or when the run is gone."""
    folder = unsettled_folder()
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.json")):
        try:
            note = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if note.get("uri") == uri and settle(note):
            path.unlink(missing_ok=True)


def settle(note: dict) -> bool:
    """Send a left-open run what it was not sent and end it with its command's status, or mark it
    FAILED with the reason when that cannot be sent. False when the server cannot be reached."""
    from mlflow import MlflowClient
    from mlflow.entities import Metric, Param, RunTag

    client = MlflowClient(note["uri"])
    run_id = note["run_id"]
    try:
        if client.get_run(run_id).info.status != "RUNNING":
            return True  # ended meanwhile (by hand, say): nothing to do
    except Exception as exc:
        return "RESOURCE_DOES_NOT_EXIST" in str(getattr(exc, "error_code", ""))  # deleted: nothing to do
    status, reason = note["status"], note["reason"]
    try:
        for child in note.get("children", []):  # a nested run the server went away from: not finished
            client.set_tag(child, LOST_TAG, reason[:5000])
            client.set_terminated(child, "FAILED")
        for kind, *what in note["unsent"]:
            if kind == "params":
                client.log_batch(run_id, params=[Param(k, v) for k, v in what[0].items()])
            elif kind == "metrics":
                now = int(time.time() * 1000)
                client.log_batch(run_id, metrics=[Metric(k, v, now, 0) for k, v in what[0].items()])
            elif kind == "tags":
                client.log_batch(run_id, tags=[RunTag(k, v) for k, v in what[0].items()])
            elif kind == "artifact":
                client.log_artifact(run_id, what[0], artifact_path=what[1])
            elif kind == "table":
                client.log_table(run_id, data=what[0], artifact_file=what[1])
    except Exception as exc:
        status, reason = "FAILED", f"{reason}; then could not send what the run missed ({type(exc).__name__}: {exc})"
    try:
        client.set_tag(run_id, LOST_TAG, reason[:5000])
        client.set_terminated(run_id, status)
    except Exception:
        return False
    print(f"deltaseek: MLflow run {run_id} at {note['uri']}, left open when the server went away, ended {status}",
          file=sys.stderr)
    return True

