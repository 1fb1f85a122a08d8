"""Hardening: nothing lost, nothing misreported, under faults and bad input.

One test (or a few) per numbered item of the issue; the signal items (2 and 6) run real
processes in test_interrupts.py. Agent behaviour runs on scripted LMs (tests/scripted.py) or
on a real OpenAI-compatible server on 127.0.0.1 (tests/fake_openai.py).
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import dspy
import pytest

import deltaseek.cli as cli
from deltaseek import CorpusError, DatasetError, DeltaSeek, ProgramFileError
from deltaseek.optimize.labeled_data import load_labeled
from deltaseek.programs.agent.program_file import load_state_into
from deltaseek.programs.corpus_files import MAX_LINE_BYTES
from deltaseek.programs.index import CorpusIndex
from tests.fake_openai import FakeOpenAIServer
from tests.scripted import ScriptedEngine, scripted_lm
from tests.test_cli import STUCK_REPLY
from tests.test_optimize import (ROWS, dataset, offline_tracking, read_jsonl, run_cli,  # noqa: F401 (fixtures)
                                 scripted_cli)


# --- 1. results are never overwritten; --resume -------------------------------------------


def test_an_existing_results_file_is_refused_and_kept(capsys, scripted_cli, dataset, tmp_path, offline_tracking):
    out = tmp_path / "eval.jsonl"
    assert run_cli(capsys, "evaluate", "--dataset", dataset, "--out", out, "--tracking-uri", offline_tracking)[0] == 0
    before = out.read_text()
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--out", out, "--tracking-uri", offline_tracking)
    assert code == 2 and f"--out {out} already holds results; pass --resume" in err
    assert len(err.strip().splitlines()) == 1
    assert out.read_text() == before


def test_resume_runs_only_the_examples_the_file_does_not_hold(capsys, scripted_cli, dataset, tmp_path,
                                                              offline_tracking):
    out = tmp_path / "eval.jsonl"
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "train", "--limit", "1", "--out", out,
                           "--tracking-uri", offline_tracking)
    assert code == 0, err
    with out.open("a") as handle:
        handle.write('{"index": 1, "id": "t-llama", "cut short by a ki')  # a line a kill left half-written
    code, stdout, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "all", "--resume", "--out", out,
                                "--tracking-uri", offline_tracking)
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text().splitlines()]  # the fragment dropped: every line a row
    assert [r["id"] for r in rows] == ["t-rails", "t-llama", "d-ohio", "d-xyzzy"]
    asked = [text for kind, text in scripted_cli[1].prompts if kind == "synthesize"]
    assert len(asked) == 3 and not any("Ruby on Rails" in text.rsplit("[[ ## question ## ]]", 1)[1] for text in asked)
    assert "4 examples (1 kept from the earlier run)" in stdout


def test_resume_runs_an_example_again_when_its_row_is_an_error(capsys, scripted_cli, dataset, tmp_path,
                                                               offline_tracking):
    out = tmp_path / "eval.jsonl"
    out.write_text(json.dumps({"index": 0, "id": "d-ohio", "error": "LMAuthError: no key", "scores": {}}) + "\n")
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--resume", "--out", out,
                           "--tracking-uri", offline_tracking)
    assert code == 0, err
    rows = read_jsonl(out)
    assert [r["id"] for r in rows] == ["d-ohio", "d-ohio", "d-xyzzy"] or \
        [r["id"] for r in rows] == ["d-ohio", "d-xyzzy", "d-ohio"]
    assert [r["error"] for r in rows[1:]] == [None, None]


def test_optimize_never_overwrites_and_resumes_with_the_saved_program(capsys, scripted_cli, dataset, tmp_path,
                                                                     offline_tracking):
    program = tmp_path / "p.json"
    argv = ["optimize", "--dataset", dataset, "--optimizer", "labeled", "--out", program,
            "--tracking-uri", offline_tracking]
    assert run_cli(capsys, *argv)[0] == 0
    saved = program.read_bytes()
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and "already exists; pass --resume" in err
    code, stdout, err = run_cli(capsys, *argv, "--resume")
    assert code == 0, err
    assert "is reused, not compiled again" in stdout and program.read_bytes() == saved
    results = sorted((tmp_path / "results").glob("optimize-p-*.jsonl"))
    assert [p.name for p in results] == ["optimize-p-baseline-dev.jsonl", "optimize-p-compiled-dev.jsonl"]
    assert all(len(read_jsonl(p)) == 2 for p in results)  # resumed: nothing run twice


# --- 3. an LM that cannot be used ------------------------------------------------------------


def test_ask_with_a_rejected_key_exits_non_zero_with_one_line(capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(STUCK_REPLY, status=401) as server:
        code, out, err = run_cli(capsys, "ask", "Who created Ruby?", "--lm", "openai/gpt-4o-mini",
                                 "--api-base", server.url)
    assert code == 3 and out == ""
    [line] = err.strip().splitlines()
    assert line.startswith("deltaseek: error: the LM cannot be used:") and "LMAuthError" in line


def test_evaluate_stops_after_the_first_unusable_lm_error(capsys, dataset, tmp_path, offline_tracking, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    saved = {k: dspy.settings.get(k) for k in ("lm", "adapter")}
    out = tmp_path / "eval.jsonl"
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    try:
        with FakeOpenAIServer(STUCK_REPLY, status=401) as server:
            code, stdout, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "all", "--out", out,
                                        "--lm", "openai/gpt-4o-mini", "--api-base", server.url,
                                        "--tracking-uri", store, "--no-traces")
    finally:
        dspy.configure(**saved)
    assert code == 2 and "combined" not in stdout
    [line] = [line for line in err.splitlines() if line.startswith("deltaseek: error")]
    assert "the LM cannot be used" in line and "stopped after 1 of 4 examples" in line
    [row] = read_jsonl(out)
    assert row["lm_unusable"] and "LMAuthError" in row["error"] and set(row["scores"].values()) == {0.0}

    import mlflow

    client = mlflow.MlflowClient(tracking_uri=store)
    [run] = client.search_runs([client.get_experiment_by_name("deltaseek").experiment_id])
    assert run.info.status == "FAILED" and run.data.metrics["examples_finished"] == 1
    assert "eval/eval.jsonl" in {a.path for a in client.list_artifacts(run.info.run_id, "eval")}


def test_a_run_with_no_successful_lm_call_is_an_error_row_not_a_score(capsys, dataset, tmp_path, offline_tracking,
                                                                      monkeypatch):
    """An LM whose every call fails with a non-fatal error: the agent still answers from its
    searches (stop reason lm_error), but that row is an error naming the fault, not a plausible
    score; and an evaluation in which most rows could not reach the model fails."""
    monkeypatch.chdir(tmp_path)
    saved = {k: dspy.settings.get(k) for k in ("lm", "adapter")}

    def configure(args):
        lm = scripted_lm(ScriptedEngine(default=RuntimeError("the model returned nothing")))
        dspy.configure(lm=lm, adapter=dspy.JSONAdapter())
        return lm

    monkeypatch.setattr(cli, "configure_lm_from", configure)
    out = tmp_path / "eval.jsonl"
    try:
        code, stdout, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--out", out,
                                    "--tracking-uri", offline_tracking)
    finally:
        dspy.configure(**saved)
    rows = read_jsonl(out)
    assert rows and all(r["stop_reason"] == "lm_error" and r["lm_calls"] == 0 for r in rows)
    assert all(r["error"].startswith("no LM call succeeded") and "LMUnexpectedError on " in r["error"]
               and set(r["scores"].values()) == {0.0} for r in rows)
    assert code == 2 and "combined" not in stdout
    [line] = [line for line in err.splitlines() if line.startswith("deltaseek: error")]
    assert f"the model could not be reached on {len(rows)} of {len(rows)} examples (LMUnexpectedError on " in line


# --- 9. program files checked against the program's own predictors ------------------------


@pytest.mark.parametrize("corrupt,problem", [
    (lambda state: state["synthesize"].update(demos=[{"bogus": 1}, 5]), "predictor 'synthesize': demo 1 holds none"),
    (lambda state: state["classify"].update(demos=[{"question": "q", "kind": "lookup"}, 5]),
     "predictor 'classify': demo 2 must be an object"),
    (lambda state: state["judge"]["signature"].update(instructions=12345),
     "predictor 'judge': instructions must be text, got int 12345"),
])
def test_a_corrupt_program_file_is_one_line_naming_the_file(tmp_path, bundled_index, corrupt, problem):
    from deltaseek.programs.tools import LocalCorpusSearch

    program = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])
    path = tmp_path / "compiled.json"
    program.save(str(path))
    state = json.loads(path.read_text())
    corrupt(state)
    path.write_text(json.dumps(state))
    with pytest.raises(ProgramFileError) as raised:
        load_state_into(DeltaSeek(tools=[LocalCorpusSearch(bundled_index)]), path)
    message = str(raised.value)
    assert message.startswith(f"{path}: ") and problem in message and "\n" not in message


# --- 10. a read-only sqlite tracking store ---------------------------------------------------


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


# --- 11, 4, 5. corpus validation at index time ------------------------------------------------


@pytest.mark.parametrize("lines,problem", [
    (['{"text": "fine", "id": "a"}', '{"text": "Ruby.", "url": 123}'], ':2: field "url": expected text, got 123'),
    (['{"text": "fine"}', '{"title": "no text"}'], ':2: missing a non-empty "text" field'),
    (['{"text": "   "}'], ':1: missing a non-empty "text" field'),
    (['{"text": "fine", "title": ["a"]}'], ':1: field "title": expected text'),
    (['{"text": "one", "id": "x"}', '{"text": "two"}', '{"text": "three", "id": "x"}'],
     ":3: passage id 'x' repeats the id at "),
])
def test_a_bad_passage_is_rejected_at_index_time_with_file_and_line(capsys, tmp_path, lines, problem):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(capsys, "index", corpus)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{corpus}{problem}" in err
    if "repeats" in problem:
        assert err.strip().endswith(f"{corpus}:1; ids must be unique (citations point at them)")


def test_duplicate_ids_across_two_corpus_files_are_rejected(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text('{"text": "Ruby was created by Matz.", "id": "p1", "title": "Ruby"}\n')
    second.write_text('{"text": "Rails was created by DHH.", "id": "p1", "title": "Rails"}\n')
    with pytest.raises(CorpusError) as raised:
        CorpusIndex.open([first, second])
    assert f"{second}:1: passage id 'p1' repeats the id at {first}:1" in str(raised.value)


def test_an_over_long_corpus_line_is_rejected_without_reading_it_whole(capsys, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    with corpus.open("w") as handle:
        handle.write('{"text": "fine"}\n')
        handle.write('{"text": "' + "x" * (MAX_LINE_BYTES + 10) + '"}\n')
        handle.write('{"text": "after"}\n')
    code, _, err = run_cli(capsys, "index", corpus)
    assert code == 2 and f"{corpus}:2: the line is {MAX_LINE_BYTES + 23:,} bytes long; at most" in err


def test_the_bundled_corpora_pass_validation(tmp_path, monkeypatch):
    monkeypatch.setenv("DELTASEEK_CACHE", str(tmp_path))
    index = CorpusIndex.open(rebuild=True)
    assert len({p.id for p in index.passages}) == len(index.passages) > 1000


# --- 12. a labeled set without a corpus field -------------------------------------------------


def test_a_labeled_set_with_no_corpus_field_is_accepted(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"question": "Who created Ruby?", "answer": "Yukihiro Matsumoto",
                                "answerability": "direct"}) + "\n")
    [example] = load_labeled(path).examples
    assert example.corpus is None and example.id.startswith("q-")


def test_evaluate_on_a_set_with_no_corpus_searches_the_given_or_bundled_corpus(capsys, scripted_cli, tmp_path,
                                                                              offline_tracking):
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "corpus"}) + "\n" for r in ROWS))
    out = tmp_path / "eval.jsonl"
    code, _, err = run_cli(capsys, "evaluate", "--dataset", path, "--split", "all", "--out", out,
                           "--tracking-uri", offline_tracking)
    assert code == 0, err
    rows = read_jsonl(out)
    assert len(rows) == 4 and all(r["error"] is None for r in rows)
    assert rows[0]["answer"] == "David Heinemeier Hansson" and rows[0]["sources"]

    corpus = tmp_path / "own.jsonl"
    corpus.write_text('{"id": "own-1", "title": "Rails", "text": "Ruby on Rails was created by '
                      'David Heinemeier Hansson."}\n')
    code, _, err = run_cli(capsys, "evaluate", "--dataset", path, "--split", "train", "--limit", "1", "--out",
                           tmp_path / "own.jsonl.out", "--corpus", corpus, "--tracking-uri", offline_tracking)
    assert code == 0, err
    [row] = read_jsonl(tmp_path / "own.jsonl.out")
    assert [s["id"] for s in row["sources"]] == ["own-1"]


# --- 13. minor -----------------------------------------------------------------------------


def test_numeric_answers_are_read_as_text_in_jsonl_and_parquet(tmp_path):
    row = {"question": "When was Ruby first released?", "answer": 1995, "aliases": [1995.0, "'95"],
           "answerability": "direct"}
    jsonl = tmp_path / "n.jsonl"
    jsonl.write_text(json.dumps(row) + "\n")
    [example] = load_labeled(jsonl).examples
    assert example.answer == "1995" and example.aliases == ["1995", "'95"]

    import pyarrow as pa
    import pyarrow.parquet as pq

    parquet = tmp_path / "n.parquet"
    pq.write_table(pa.table({"question": [row["question"]], "answer": [2.5], "answerability": ["direct"]}), parquet)
    [example] = load_labeled(parquet).examples
    assert example.answer == "2.5"


def test_a_bad_json_line_is_described_once(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"question": "Q?", "answer": "A" "answerability": "direct"}\n')
    with pytest.raises(DatasetError) as raised:
        load_labeled(path)
    assert f"{path}:1: not valid JSON (Expecting ',' delimiter at column" in str(raised.value)
    assert "at at" not in str(raised.value)


def test_the_python_snippets_work_outside_the_repository(tmp_path):
    """datasets/README.md's loading snippet and the README's program (less the model), run from an
    empty folder: imports and bundled data resolve through the package, not the working folder."""
    readme = (Path(__file__).parents[1] / "datasets" / "README.md").read_text()
    snippet = readme.split("### Loading")[1].split("```python")[1].split("```")[0]
    runnable = "\n".join(line for line in snippet.splitlines() if "mine.csv" not in line and "hf:" not in line)
    script = runnable + ("\nassert len(labeled.examples) == 50 and parts['test']\n"
                         "from deltaseek import DeltaSeek\n"
                         "print(DeltaSeek().tools['search_corpus'].search('creator of Ruby').hits[0].title)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "DELTASEEK_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


# --- done earlier on main, kept under test here: bounds and refusals (items 8, 11, 13) ----------


@pytest.mark.parametrize("argv,problem", [
    (["a " * 1500], "the question is 2,999 characters long; at most 2,000 are accepted"),
    (["Who created Ruby?", "--tools", "local,local"], "--tools names local more than once"),
])
def test_a_long_question_and_a_repeated_tool_are_one_line_refusals(capsys, argv, problem):
    with FakeOpenAIServer(STUCK_REPLY) as server:
        code, out, err = run_cli(capsys, "ask", *argv, "--lm", "openai/stuck", "--api-base", server.url)
        assert server.requests == []  # refused before any LM call
    assert code == 2 and out == "" and err.strip() == f"deltaseek: error: {err.strip().split('error: ', 1)[1]}"
    assert problem in err and len(err.strip().splitlines()) == 1


def test_a_corpus_that_is_not_utf8_names_the_file_and_line(capsys, tmp_path):
    corpus = tmp_path / "latin1.jsonl"
    corpus.write_bytes(b'{"text": "fine"}\n{"text": "caf\xe9"}\n')
    code, _, err = run_cli(capsys, "index", corpus)
    assert code == 2 and f"{corpus}:2: not UTF-8 text (byte 0xe9 at column 14)" in err
