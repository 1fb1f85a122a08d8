"""A real server process for tests: started on loopback in a process group of its own, waited
for until its health path answers 200, and stopped with its workers however the test ends.

    with server_process([mlflow, "server", "--port", str(port), ...], f"http://127.0.0.1:{port}",
                        health="/health", log=folder / "server.log", env=env, cwd=folder) as url:
        ...
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

STARTUP_SECONDS = 180


@contextlib.contextmanager
def server_process(command: list[str], url: str, health: str, log: Path, env: dict[str, str], cwd: Path,
                   startup_seconds: float = STARTUP_SECONDS):
    """The server's URL once `url + health` answers 200; the test fails, showing the end of the
    server's log, when the process exits or the time runs out first."""
    with log.open("w") as output:
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                  start_new_session=True)
        try:
            deadline = time.monotonic() + startup_seconds
            while True:
                try:
                    if httpx.get(url + health, timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"{Path(command[0]).name} {command[1]} did not start: {log.read_text()[-3000:]}")
                time.sleep(1)
            yield url
        finally:
            os.killpg(server.pid, signal.SIGTERM)  # the command and its uvicorn workers, in their own group
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
