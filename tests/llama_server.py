"""llama-cpp-python's own OpenAI-compatible server (`llama_cpp.server`, the
`llama-cpp-python[server]` extra, started by `deltaseek.programs.lm.serve`) serving the bundled
SmolLM2 GGUF on a free loopback port: the real server a user puts a small model behind, for the
`--lm openai/smollm2 --api-base URL` tests.

Run by hand the same way:

    python -m deltaseek.programs.lm.serve --model "$(python -c 'from deltaseek.programs.lm import find_smollm2_gguf as f; print(f())')" \\
        --host 127.0.0.1 --port 8765 --n_ctx 8192 --model_alias smollm2
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from deltaseek.programs.lm import find_smollm2_gguf
from deltaseek.programs.lm.llamacpp import default_threads

MODEL = "smollm2"
STARTUP_SECONDS = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """Started on `__enter__` (returns itself once `/v1/models` answers), stopped on `__exit__`.
    Threads and context as the embedded engine's, so both paths run the same model the same way."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def log_path(self) -> Path:
        return self.folder / "llama-server.log"

    def __enter__(self) -> "LlamaServer":
        generate, batch = default_threads()
        env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "deltaseek.programs.lm.serve", "--model", str(find_smollm2_gguf()),
                 "--model_alias", MODEL, "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", "8192",
                 "--n_threads", str(generate), "--n_threads_batch", str(batch)],
                stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            try:
                if httpx.get(f"{self.url}/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.__exit__()
                raise RuntimeError(f"llama_cpp.server did not start: {self.log_path.read_text()[-2000:]}")
            time.sleep(0.5)

    def __exit__(self, *exc) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
