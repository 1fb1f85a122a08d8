"""Where MLflow's runs and models are, and whether that store can be used now.

Shared by tracking (`optimize/tracking.py`, which writes runs and models) and by loading a
logged program (`programs/agent/logged_model.py`, which reads them). The store is
`--tracking-uri`, else `$MLFLOW_TRACKING_URI`, else `sqlite:///mlflow.db` in the working folder
(artifacts in `./mlruns/`): MLflow 3's own default, pinned so an old `./mlruns` file store in
the folder does not silently switch the backend.

A server is probed (`GET /health`, a few seconds) before any MLflow call, because MLflow's own
calls retry a dead server for minutes; MLflow's HTTP retries are turned down (unless set in the
environment) so a server that dies mid-run costs seconds.

A sqlite store is first opened under a file lock beside it (`first_opening`): MLflow creates and
migrates its tables on first contact, and two commands started together on a new store would
both migrate it, leaving one untracked or the store broken (`broken_store_problem`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

LOCAL_TRACKING_URI = "sqlite:///mlflow.db"
PROBE_SECONDS = 3.0
QUICK_FAILURE_ENV = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "20",
}
"""MLflow defaults to 7 retries with backoff factor 2 and a 120 s timeout: minutes per dead call."""


def resolve_tracking_uri(explicit: str | None = None) -> str:
    return (explicit or os.environ.get("MLFLOW_TRACKING_URI") or "").strip() or LOCAL_TRACKING_URI


def fail_quickly() -> None:
    """Turn MLflow's HTTP retries down for this process, unless the environment sets them."""
    for name, value in QUICK_FAILURE_ENV.items():
        os.environ.setdefault(name, value)


def sqlite_path(uri: str) -> Path | None:
    """The file of a `sqlite:///` store, or None (another store, in memory, or a `file:` URI)."""
    path = uri[len("sqlite:///"):].split("?")[0] if uri.startswith("sqlite:///") else ""
    if not path or path == ":memory:" or path.startswith("file:"):
        return None
    return Path(path).absolute()


def sqlite_store_problem(uri: str) -> str | None:
    """Why a sqlite store file cannot be written (it, or the folder for its journal or for a new
    file, is read-only), or None. In-memory and `file:` URI stores are not checked."""
    target = sqlite_path(uri)
    if target is None:
        return None
    if target.exists() and not os.access(target, os.W_OK):
        return f"{target} is read-only"
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} is read-only"
    return None


LOCK_SECONDS = 300.0
"""How long a command waits for another to finish creating a store (MLflow's migrations of a new
sqlite store take seconds; this only bounds a lock whose holder hangs)."""


@contextlib.contextmanager
def first_opening(uri: str, timeout: float = LOCK_SECONDS) -> Iterator[None]:
    """Hold a file lock beside a sqlite store (`mlflow.db.lock`) while this process first opens it,
    so that one process at a time creates or migrates its tables. Other stores, or a lock that
    cannot be had (the folder's own problem is reported elsewhere), go on without it."""
    from filelock import FileLock, Timeout

    target = sqlite_path(uri)
    if target is None:
        yield
        return
    lock = FileLock(f"{target}.lock", timeout=timeout)
    try:
        lock.acquire()
    except (OSError, Timeout):
        yield
        return
    try:
        yield
    finally:
        lock.release()


def broken_store_problem(uri: str) -> str | None:
    """What is broken in a sqlite store, with how to mend it, or None: tables `_alembic_tmp_*` are
    what a migration cut short leaves behind (two processes migrating at once, a kill), and every
    later MLflow call on the store fails on them. Read before MLflow opens the store, under
    `first_opening` (a migration running now holds them for a moment)."""
    target = sqlite_path(uri)
    if target is None or not target.is_file():
        return None
    try:
        with contextlib.closing(sqlite3.connect(f"file:{target}?mode=ro", uri=True, timeout=10)) as db:
            left = [row[0] for row in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '\\_alembic\\_tmp\\_%' ESCAPE '\\' "
                "ORDER BY name")]
    except sqlite3.Error:
        return None  # not a database MLflow can read either: its own error says so
    if not left:
        return None
    drops = "; ".join(f"DROP TABLE {name}" for name in left)
    return (f"a migration of its tables was cut short and left {', '.join(left)}; mend it with "
            f"sqlite3 {target} '{drops}' then mlflow db upgrade sqlite:///{target}")


def server_problem(uri: str, timeout: float = PROBE_SECONDS) -> str | None:
    """Why an http(s) tracking server cannot be used: it does not answer `/health`, or answers
    with a server error; None when it answers."""
    import httpx

    try:
        response = httpx.get(uri.rstrip("/") + "/health", timeout=timeout)
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}"
    if response.status_code >= 500:
        return f"/health answered HTTP {response.status_code}"
    return None


def unreachable_reason(uri: str, timeout: float = PROBE_SECONDS) -> str | None:
    """Why a tracking store cannot be written to: an http(s) server that does not answer, or a
    sqlite store that cannot be written; None when it looks usable (others are not probed)."""
    scheme = urlparse(uri).scheme
    if scheme == "sqlite":
        return sqlite_store_problem(uri)
    if scheme in ("http", "https"):
        return server_problem(uri, timeout)
    return None


def unreadable_reason(uri: str, timeout: float = PROBE_SECONDS) -> str | None:
    """Why models cannot be read from a store: an http(s) server that does not answer, or a
    sqlite store whose file does not exist (MLflow would create an empty one); None when it
    looks usable (others are not probed)."""
    scheme = urlparse(uri).scheme
    if scheme == "sqlite":
        target = sqlite_path(uri)
        return f"{target} does not exist" if target is not None and not target.exists() else None
    if scheme in ("http", "https"):
        return server_problem(uri, timeout)
    return None
