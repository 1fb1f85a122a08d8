"""A clean stop on SIGINT (Ctrl-C) and SIGTERM: no new example starts, nothing finished is lost.

`deltaseek evaluate` and `optimize` run inside `stop_on_signals()`. A signal then sets a flag
instead of killing the process: the evaluation loop (`evaluate.evaluate_program`) stops
scheduling examples at once, lets the running ones finish (each is bounded by the agent's hard
budget) and raises `Interrupted`. A second signal while they finish stops waiting. Outside an
evaluation loop (a compile, say) a signal raises `Interrupted` at once. The command line turns
`Interrupted` into one line and exit 128 + the signal number (130 for SIGINT, 143 for SIGTERM);
the tracker marks the MLflow run KILLED.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The user (or a supervisor) asked the run to stop; `signum` says with which signal."""

    def __init__(self, signum: int = signal.SIGINT, message: str = ""):
        self.signum = signum
        super().__init__(message or f"stopped by {signal.Signals(signum).name}")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class StopRequest:
    """What the signal handler saw. While `deferred`, a first signal only sets the flag (the
    loop polls `requested`); otherwise, or on a second signal, it raises `Interrupted`."""

    def __init__(self):
        self.signum: int | None = None
        self.deferred = 0
        self._lock = threading.Lock()

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def handle(self, signum: int, frame) -> None:
        with self._lock:
            first = self.signum is None
            self.signum = self.signum or signum
        if not (first and self.deferred):
            raise Interrupted(self.signum)

    @contextlib.contextmanager
    def defer(self) -> Iterator["StopRequest"]:
        """Inside: a first signal is a request the caller polls, not an exception."""
        self.deferred += 1
        try:
            yield self
        finally:
            self.deferred -= 1


_current = StopRequest()
"""The process's stop request; with no handlers installed nobody ever sets it."""


def current() -> StopRequest:
    return _current


@contextlib.contextmanager
def stop_on_signals() -> Iterator[StopRequest]:
    """Route SIGINT and SIGTERM to a fresh StopRequest (main thread only; elsewhere a no-op)."""
    global _current
    if threading.current_thread() is not threading.main_thread():
        yield _current
        return
    request, previous_request = StopRequest(), _current
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    _current = request
    for signum in STOP_SIGNALS:
        signal.signal(signum, request.handle)
    try:
        yield request
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _current = previous_request
