"""Hardening: files that do not fit are refused by name, and results belong to what they score.

A reader file edited or cut short, results kept for another state of a program, a half-written
results line, an output folder that cannot be written, and two commands opening a new MLflow
store at once (real processes). Commands run on the scripted oracle LM of test_optimize.py.
"""

import json
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deltaseek import DeltaSeek, ProgramFileError, save_program
from deltaseek.bundled import shipped_reader_path
from deltaseek.programs.agent.learned_reader import load_reader, shipped_reader
from deltaseek.programs.agent.program_file import READER_KEY, load_state_into
from deltaseek.programs.tools import LocalCorpusSearch
from tests.test_optimize import dataset, offline_tracking, read_jsonl, run_cli, scripted_cli  # noqa: F401 (fixtures)


# --- a reader file that does not fit the code ---------------------------------------------------


def shipped_data() -> dict:
    return json.loads(shipped_reader_path().read_text(encoding="utf-8"))


def drop(linear: dict, name: str) -> None:
    at = linear["features"].index(name)
    del linear["features"][at], linear["coef"][at]


def set_nan(linear: dict, field: str) -> None:
    if field == "coef":
        linear["coef"][3] = float("nan")
    else:
        linear["intercept"] = float("nan")


BROKEN_READERS = {
    "a feature the code does not compute": (
        lambda d: d["answerability"]["features"].__setitem__(0, "top_scor"), "feature 'top_scor' is not one"),
    "a feature deleted from the answerability model": (
        lambda d: drop(d["answerability"], "margin"), "field 'answerability': feature 'margin' is missing"),
    "a feature deleted from the ranker": (
        lambda d: drop(d["ranker"], "closeness"), "field 'ranker': feature 'closeness' is missing"),
    "a feature named twice": (
        lambda d: d["answerability"]["features"].__setitem__(1, "top_score"), "'top_score' is named 2 times"),
    "both lists cut to the same length": (
        lambda d: d["ranker"].update(features=d["ranker"]["features"][:10], coef=d["ranker"]["coef"][:10]),
        "field 'ranker': feature "),
    "empty lists": (lambda d: d["answerability"].update(features=[], coef=[]), "field 'answerability': feature "),
    "a NaN coefficient": (lambda d: set_nan(d["ranker"], "coef"), "field 'ranker.coef.3': Input should be a finite"),
    "a NaN intercept": (lambda d: set_nan(d["answerability"], "intercept"),
                        "field 'answerability.intercept': Input should be a finite"),
    "the format version as text": (lambda d: d.update(format_version="1"),
                                   "field 'format_version' must be a whole number such as 1, not \"1\""),
}


@pytest.mark.parametrize("name", BROKEN_READERS)
def test_a_reader_file_that_does_not_fit_the_code_is_refused_in_one_line(tmp_path, name):
    edit, problem = BROKEN_READERS[name]
    data = shipped_data()
    edit(data)
    path = tmp_path / "reader.json"
    path.write_text(json.dumps(data))  # Python's json writes a NaN as NaN, and reads it back
    with pytest.raises(ProgramFileError) as raised:
        load_reader(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: reader field ") and problem in message and "\n" not in message


def test_the_shipped_reader_loads_and_weighs_every_feature_the_code_computes():
    """The check refuses nothing the training command writes: the shipped file passes it."""
    assert load_reader(shipped_reader_path()) == shipped_reader()


@pytest.mark.parametrize("name", ["a feature deleted from the ranker", "a feature named twice", "empty lists",
                                  "the format version as text"])
def test_a_reader_inside_a_program_file_is_checked_the_same(tmp_path, bundled_index, name):
    edit, problem = BROKEN_READERS[name]
    path = save_program(DeltaSeek(tools=[LocalCorpusSearch(bundled_index)], reader=shipped_reader()),
                        tmp_path / "p.json")
    state = json.loads(path.read_text())
    edit(state[READER_KEY])
    path.write_text(json.dumps(state))
    with pytest.raises(ProgramFileError) as raised:
        load_state_into(DeltaSeek(tools=[LocalCorpusSearch(bundled_index)]), path)
    message = str(raised.value)
    assert message.startswith(f"{path}: the program's reader: reader field ") and problem in message
    assert "\n" not in message


# --- results kept for resuming belong to the program they score ---------------------------------


def test_optimize_resume_scores_an_edited_program_again(capsys, scripted_cli, dataset, tmp_path, offline_tracking):
    program = tmp_path / "p.json"
    argv = ["optimize", "--dataset", dataset, "--optimizer", "labeled", "--out", program,
            "--tracking-uri", offline_tracking]
    assert run_cli(capsys, *argv)[0] == 0
    state = json.loads(program.read_text())
    state["synthesize"]["signature"]["instructions"] = "Answer in as few words as the facts allow."
    program.write_text(json.dumps(state))  # edited after the optimize that scored it
    code, stdout, err = run_cli(capsys, *argv, "--resume")
    assert code == 0, err
    results = tmp_path / "results"
    assert len(read_jsonl(results / "optimize-p-baseline-dev.jsonl")) == 2  # the baseline did not change
    compiled = read_jsonl(results / "optimize-p-compiled-dev.jsonl")
    assert len(compiled) == 4 and compiled[2]["program_digest"] != compiled[0]["program_digest"]
    assert "2 rows were not scored for this state of the program" in err
    asked = [text for kind, text in scripted_cli[-1].prompts if kind == "synthesize"]
    assert any("as few words as the facts allow" in text for text in asked)  # the edited program ran


# --- a half-written results line ------------------------------------------------------------------


def result_row(example_id: str, combined: float) -> str:
    scores = {name: combined for name in ("exact_match", "token_f1", "answerability_accuracy", "efficiency",
                                          "combined")}
    return json.dumps({"id": example_id, "answer": "Columbus", "answerability": "direct", "scores": scores,
                       "gold": {"answer": "Columbus", "answerability": "direct"}, "error": None})


def test_paired_names_the_file_and_line_of_a_bad_row(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(result_row("q1", 1.0) + "\n" + '{"id": "q2", "answer": "Colu' + "\n" + result_row("q3", 0.0) + "\n")
    b.write_text(result_row("q1", 1.0) + "\n" + result_row("q3", 1.0) + "\n")
    done = subprocess.run([sys.executable, "-m", "deltaseek.optimize.paired", str(a), str(b)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"deltaseek: error: {a}:2: not a JSON row (Unterminated string starting at column ")
    b.write_text(result_row("q1", 1.0) + "\n" + "[1, 2]\n")
    done = subprocess.run([sys.executable, "-m", "deltaseek.optimize.paired", str(b), str(b)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and done.stderr.startswith(f"deltaseek: error: {b}:2: not a result row")


# --- an output folder that cannot be written ------------------------------------------------------


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder no one can write: a read-only tmpfs (root writes any folder its mode forbids)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    mounted = shutil.which("mount") and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)], capture_output=True).returncode == 0
    if not mounted:
        folder.chmod(0o555)
        probe = folder / "probe"
        try:
            probe.touch()
        except OSError:
            pass
        else:
            probe.unlink()
            pytest.skip("this user writes a read-only folder, and no read-only tmpfs can be mounted here")
    yield folder
    if mounted:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.mark.parametrize("command", ["evaluate", "optimize"])
def test_an_out_that_cannot_be_written_is_refused_before_the_model_loads(capsys, scripted_cli, dataset,
                                                                         offline_tracking, read_only_folder,
                                                                         command):
    out = read_only_folder / ("eval.jsonl" if command == "evaluate" else "p.json")
    extra = ["--optimizer", "labeled"] if command == "optimize" else []
    code, _, err = run_cli(capsys, command, "--dataset", dataset, *extra, "--out", out,
                           "--tracking-uri", offline_tracking)
    [line] = err.strip().splitlines()
    assert code == 2 and line.startswith(f"deltaseek: error: --out {out}: {read_only_folder} cannot be written (")
    assert "free some space" not in err and "--resume" not in err
    assert scripted_cli == []  # no model was set up, no example ran


# --- two commands opening a new MLflow store at once ----------------------------------------------

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


def test_resume_keeps_a_row_whose_text_holds_a_line_separator(capsys, scripted_cli, dataset, tmp_path,
                                                              offline_tracking):
    """Only a newline ends a row: a row whose answer holds U+2028 is kept whole on resume."""
    out = tmp_path / "eval.jsonl"
    argv = ["evaluate", "--dataset", dataset, "--split", "all", "--out", out, "--tracking-uri", offline_tracking]
    assert run_cli(capsys, *argv, "--limit", "1")[0] == 0
    [row] = read_jsonl(out)
    row["answer"] += "\u2028(as the passage says)"
    out.write_text(json.dumps(row, ensure_ascii=False) + "\n")
    code, stdout, err = run_cli(capsys, *argv, "--resume")
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line]
    assert rows[0] == row and len(rows) == 4 and "1 kept from the earlier run" in stdout
