"""Results files: an `--out` that holds results is never overwritten, `--resume` runs only what the
file lacks (for the program as it is now), and a full disk or a folder that cannot be written
loses no finished row."""

import json
import shutil
import subprocess

import pytest

from tests.test_corpus_index import small_disk  # noqa: F401 (fixtures)
from tests.test_optimize import dataset, offline_tracking, read_jsonl, run_cli, scripted_cli  # noqa: F401 (fixtures)


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


def test_evaluate_on_a_full_disk_names_the_file_and_the_rows_kept_and_resumes(capsys, scripted_cli, dataset,
                                                                               offline_tracking, small_disk):
    folder, file_limit = small_disk
    if file_limit:
        pytest.skip("evaluate runs in this process, which RLIMIT_FSIZE would hold too: it needs a tmpfs mount")
    out = folder / "eval.jsonl"
    assert run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "all", "--out", out,
                   "--tracking-uri", offline_tracking)[0] == 0
    first = out.read_text().splitlines()[0]
    out.write_text(first + "\n")  # one row kept from an earlier run; then the disk fills up
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as handle:
        try:
            while handle.write(b"x" * 512):
                pass
        except OSError:
            pass
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "all", "--resume", "--out", out,
                           "--tracking-uri", offline_tracking)
    assert code == 2 and f"deltaseek: error: {out}: the result of example " in err, err
    kept = [json.loads(line) for line in out.read_text().splitlines() if line.endswith("}")]
    assert 1 <= len(kept) < 4 and kept[0] == json.loads(first)
    assert f"the {len(kept)} rows written before it are kept: free some space, then run again with --resume" in err
    filler.unlink()
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "all", "--resume", "--out", out,
                           "--tracking-uri", offline_tracking)
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.endswith("}")]  # a cut line is skipped
    assert sorted(r["id"] for r in rows) == sorted(["t-rails", "t-llama", "d-ohio", "d-xyzzy"])


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
