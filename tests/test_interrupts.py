"""A real `deltaseek evaluate` process, interrupted with SIGINT and SIGTERM.

The process runs on a slow OpenAI-compatible server on 127.0.0.1 (each completion takes a
while), with two threads and an MLflow sqlite store in tmp_path. After the first row is
written it gets a signal; then the results file and the MLflow run are inspected.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAIServer
from tests.test_cli import STUCK_REPLY
from tests.test_optimize import ROWS

DELTASEEK = Path(sys.executable).with_name("deltaseek")


def start_evaluate(tmp_path: Path, server: FakeOpenAIServer, *extra: str) -> subprocess.Popen:
    dataset = tmp_path / "labeled.jsonl"
    rows = [{**row, "split": "dev", "id": f"{row['id']}-{n}", "question": f"{row['question'][:-1]} (take {n})?"}
            for n in range(3) for row in ROWS]
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {**os.environ, "DELTASEEK_CACHE": str(tmp_path / "cache"), "DSPY_CACHEDIR": str(tmp_path / "dspy-cache"),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PYTHONUNBUFFERED": "1"}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.Popen(
        [str(DELTASEEK), "evaluate", "--dataset", str(dataset), "--split", "dev", "--threads", "2",
         "--lm", "openai/stuck", "--api-base", server.url, "--out", str(tmp_path / "r.jsonl"),
         "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}", "--no-traces", *extra],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def rows_of(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for_rows(path: Path, count: int, process: subprocess.Popen, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while len(rows_of(path)) < count:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no row was written in time"
        time.sleep(0.2)


def evaluate_until_first_row(tmp_path: Path, server: FakeOpenAIServer) -> subprocess.Popen:
    """An evaluate process that has appended its first row to r.jsonl, still running."""
    process = start_evaluate(tmp_path, server)
    wait_for_rows(tmp_path / "r.jsonl", 1, process)
    return process


def the_run(tmp_path: Path):
    import mlflow

    client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    [run] = client.search_runs([client.get_experiment_by_name("deltaseek").experiment_id])
    return client, run


@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_scheduling_keeps_every_finished_row_and_kills_the_run(tmp_path, signum, code):
    out = tmp_path / "r.jsonl"
    with FakeOpenAIServer(STUCK_REPLY, delay=0.4) as server:
        process = evaluate_until_first_row(tmp_path, server)
        signalled = time.monotonic()
        process.send_signal(signum)
        _, err = process.communicate(timeout=120)
        stopped_after = time.monotonic() - signalled
        requests_at_exit = len(server.requests)
        time.sleep(1.0)
        assert len(server.requests) == requests_at_exit  # nothing keeps running after the exit

    assert process.returncode == code, err
    assert "Traceback" not in err
    [line] = [line for line in err.splitlines() if line.startswith("deltaseek:")]
    assert line.startswith(f"deltaseek: stopped by {signal.Signals(signum).name}")
    rows = rows_of(out)
    assert 1 <= len(rows) < 12  # the queued examples never started
    assert f"{len(rows)} finished examples kept in {out}" in line
    assert all(r["error"] is None and r["answer"] for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)
    assert stopped_after < 60

    client, run = the_run(tmp_path)
    assert run.info.status == "KILLED" and run.info.run_id in line
    assert run.data.metrics["examples_finished"] == len(rows)
    logged = {a.path for a in client.list_artifacts(run.info.run_id, "eval")}
    assert "eval/r.jsonl" in logged and "eval/partial_table.json" in logged


def test_resume_after_a_signal_runs_only_the_missing_examples(tmp_path):
    out = tmp_path / "r.jsonl"
    with FakeOpenAIServer(STUCK_REPLY, delay=0.2) as server:
        process = evaluate_until_first_row(tmp_path, server)
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=120)
        kept = {r["id"] for r in rows_of(out)}
        questions_before = len(server.requests)

        again = start_evaluate(tmp_path, server)
        _, err = again.communicate(timeout=300)
        assert again.returncode == 2 and "--resume" in err  # never overwritten
        assert {r["id"] for r in rows_of(out)} == kept

        resumed = start_evaluate(tmp_path, server, "--resume")
        stdout, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    rows = rows_of(out)
    assert len(rows) == 12 and len({r["id"] for r in rows}) == 12
    assert "12 examples" in stdout
    assert len(server.requests) > questions_before


def test_a_second_signal_stops_waiting_for_the_running_examples(tmp_path):
    out = tmp_path / "r.jsonl"
    with FakeOpenAIServer(STUCK_REPLY, delay=1.5) as server:
        process = evaluate_until_first_row(tmp_path, server)
        process.send_signal(signal.SIGINT)
        # Waiting for the running examples: one of them makes its next LM call after the first signal.
        asked = len(server.requests)
        deadline = time.monotonic() + 60
        while len(server.requests) == asked and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(server.requests) > asked and process.poll() is None
        process.send_signal(signal.SIGINT)
        signalled = time.monotonic()
        _, err = process.communicate(timeout=60)
        stopped_after = time.monotonic() - signalled
    assert process.returncode == 130 and "Traceback" not in err
    assert stopped_after < 5  # an example takes several 1.5 s LM calls: this did not wait for them
    [line] = [line for line in err.splitlines() if line.startswith("deltaseek:")]
    rows = rows_of(out)
    assert f"{len(rows)} finished examples kept in {out}" in line
    _, run = the_run(tmp_path)
    assert run.info.status == "KILLED"
