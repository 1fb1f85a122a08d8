"""MLflow traces of an evaluation: what scoring one example's trace takes (`Score`), and the
failures MLflow's own export threads report, turned into the tracker's one warning
(`TraceExportFailures`, installed on MLflow's trace-export logger when this module is imported).
"""

from __future__ import annotations

import logging
import os
from typing import Callable, Protocol

Score = Callable[..., None]
"""score(outputs, feedback={name: (value, source_id)}, expectations={name: value}, tags={...}, rationale=None)"""


class WarnsOnce(Protocol):
    """What a trace-export failure is reported to (`tracking.Tracker`)."""

    uri: str

    def warn_once(self, message: str) -> None: ...


class TraceExportFailures(logging.Filter):
    """MLflow sends traces from threads of its own, and logs a warning for each one it could not
    send after retrying it: the first becomes the tracker's one warning and turns MLflow's HTTP
    retries off for the rest of the process (the server is gone: the queue drains in seconds,
    not minutes, at exit); the others are dropped."""

    def __init__(self):
        super().__init__()
        self.tracker: WarnsOnce | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith("Failed to send trace"):
            return True
        os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] = "0"
        if self.tracker is not None:
            self.tracker.warn_once(f"MLflow could not send a trace to {self.tracker.uri} "
                                   f"({record.getMessage().split(': ', 1)[-1][:300]}); results are saved locally")
        return False


TRACE_EXPORT_FAILURES = TraceExportFailures()
logging.getLogger("mlflow.tracing.export.mlflow_v3").addFilter(TRACE_EXPORT_FAILURES)
