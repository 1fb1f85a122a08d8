"""A local sqlite MLflow store: read-only, created by two processes at once, or left by a cut
migration, it costs at most one warning and never a wait (real processes)."""

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root to run the store check as an unprivileged user (root can write anything)")
@pytest.mark.parametrize("make_read_only", ["file", "folder"])
def test_a_read_only_sqlite_store_costs_one_warning_and_no_wait(tmp_path, make_read_only):
    folder = tmp_path / "store"
    folder.mkdir()
    script = ("import sys; from deltaseek.optimize.tracking import Tracker\n"
              "with Tracker(sys.argv[1], run_name='r', traces=False) as t:\n"
              "    t.log_params({'a': 1}); t.log_metrics({'m': 1.0})\n"
              "print('tracked' if t.ended_run_id else 'untracked')\n")
    store = folder / "mlflow.db"
    uri = f"sqlite:///{store}"
    if make_read_only == "file":
        subprocess.run([sys.executable, "-c", script, uri], check=True, capture_output=True, cwd=folder)
        store.chmod(0o444)
    os.chmod(tmp_path, 0o755)
    for parent in tmp_path.parents:
        if str(parent).startswith("/tmp/") or str(parent) == "/tmp":
            os.chmod(parent, os.stat(parent).st_mode | 0o005)
    folder.chmod(0o755)
    started = time.monotonic()
    done = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                           sys.executable, "-c", script, uri], capture_output=True, text=True, cwd=folder,
                          env={**os.environ, "HOME": str(folder)}, timeout=120)
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "untracked"
    assert done.stderr.strip().splitlines() == [line for line in done.stderr.strip().splitlines()
                                                if line.startswith("deltaseek: warning:")]
    [warning] = done.stderr.strip().splitlines()
    assert "cannot be written" in warning and "read-only" in warning
    # The behaviour is not waiting: the process takes a few seconds (Python and MLflow's import), and
    # MLflow alone retries a store it cannot write for about 100 s. 30 s is far from both.
    assert seconds < 30


TRACK_ONCE = """\
import sys, time
from pathlib import Path
import mlflow  # imported before the start, so that both processes reach the store together
from deltaseek.optimize.tracking import Tracker
Path(sys.argv[2] + ".ready").touch()
while not Path(sys.argv[2]).exists():
    time.sleep(0.005)
with Tracker(sys.argv[1], run_name=Path(sys.argv[2]).name, traces=False) as tracker:
    tracker.log_metrics({"m": 1.0})
print("tracked" if tracker.ended_run_id else "untracked")
"""


def track_once(uri: str, folder: Path, name: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", TRACK_ONCE, uri, str(folder / name)], cwd=folder, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def alembic_leftovers(store: Path) -> list[str]:
    with sqlite3.connect(store) as db:
        return [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE name LIKE '%alembic_tmp%'")]


def test_two_processes_creating_one_sqlite_store_both_track(tmp_path):
    store = tmp_path / "mlflow.db"
    uri = f"sqlite:///{store}"
    processes = [track_once(uri, tmp_path, name) for name in ("first", "second")]
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"{name}.ready").exists() for name in ("first", "second")):
        assert time.monotonic() < deadline and all(p.poll() is None for p in processes)
        time.sleep(0.02)
    for name in ("first", "second"):
        (tmp_path / name).touch()  # both go at once: each finds no tables and would create them
    done = [p.communicate(timeout=300) for p in processes]
    assert [out.strip() for out, _ in done] == ["tracked", "tracked"], [err for _, err in done]
    assert not any("deltaseek: warning" in err for _, err in done)
    assert alembic_leftovers(store) == []
    import mlflow

    client = mlflow.MlflowClient(tracking_uri=uri)
    runs = client.search_runs([client.get_experiment_by_name("deltaseek").experiment_id])
    assert sorted(run.info.run_name for run in runs) == ["first", "second"]


def test_a_store_a_cut_migration_left_is_named_with_its_mend_in_one_warning(tmp_path):
    store = tmp_path / "mlflow.db"
    uri = f"sqlite:///{store}"
    script = ("import sys; from deltaseek.optimize.tracking import Tracker\n"
              "with Tracker(sys.argv[1], run_name='r', traces=False) as t:\n"
              "    t.log_metrics({'m': 1.0})\n"
              "print('tracked' if t.ended_run_id else 'untracked')\n")

    def run():
        return subprocess.run([sys.executable, "-c", script, uri], capture_output=True, text=True, cwd=tmp_path,
                              timeout=300)

    assert run().stdout.strip() == "tracked"
    with sqlite3.connect(store) as db:  # what a migration cut short leaves: its copy of a table being rebuilt
        db.execute("CREATE TABLE _alembic_tmp_metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL)")
    broken = run()
    assert broken.returncode == 0 and broken.stdout.strip() == "untracked"
    [warning] = [line for line in broken.stderr.splitlines() if line.startswith("deltaseek:")]
    assert warning.startswith(f"deltaseek: warning: MLflow tracking store {uri} is broken (")
    mend = f"sqlite3 {store} 'DROP TABLE _alembic_tmp_metrics' then mlflow db upgrade {uri}"
    assert mend in warning

    with sqlite3.connect(store) as db:  # the mend it names, done
        db.execute("DROP TABLE _alembic_tmp_metrics")
    subprocess.run([str(Path(sys.executable).with_name("mlflow")), "db", "upgrade", uri], check=True,
                   capture_output=True, timeout=300)
    assert run().stdout.strip() == "tracked"
