"""Hardening 2: a cache that cannot hold another file's content, LM faults named as
what they are, questions of invisible characters, JSON errors said once, small labeled sets.

One test (or a few) per numbered item of the issue; the weak tests of item 5 were made strong
where they stand. The model is a real OpenAI-compatible server on 127.0.0.1
(tests/fake_openai.py), rate-limiting the calls a test chooses; processes are real where a
test says so.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dspy
import pytest
from dspy.utils.exceptions import LMRateLimitError

import deltaseek.cli as cli
import deltaseek.programs.index as index_module
from deltaseek import DatasetError, DeltaSeek, UsageError
from deltaseek.cli import escape_controls
from deltaseek.optimize.labeled_data import assign_split, load_labeled
from deltaseek.programs.agent import Scratchpad, StepRecord
from deltaseek.programs.agent.lm_faults import lm_fault_caveats, record_lm_fault
from deltaseek.programs.index import CorpusIndex, cache_dir, corpus_fingerprint
from deltaseek.programs.tools import LocalCorpusSearch
from tests.fake_openai import FakeOpenAIServer
from tests.scripted import scripted_lm
from tests.test_cli import STUCK_REPLY
from tests.test_optimize import ROWS, dataset, oracle_engine, read_jsonl, run_cli  # noqa: F401 (fixtures)


@pytest.fixture
def restored_dspy():
    """The CLI configures DSPy's global LM; put back what was there."""
    saved = {k: dspy.settings.get(k) for k in ("lm", "adapter")}
    yield
    dspy.configure(**saved)


# --- 1. the index cache holds what was indexed -------------------------------------------------

OLD = '{"id": "veltria", "title": "Veltria", "text": "Veltria is a small country. Its capital is Arlenton."}\n'
NEW = '{"id": "veltria", "title": "Veltria", "text": "Veltria is a small country. Its capital is Brisford."}\n'


def capital(index: CorpusIndex) -> str:
    [hit] = index.search("capital of Veltria", k=1)
    return hit.passage.text.rsplit(" ", 1)[1].rstrip(".")


def test_a_corpus_replaced_between_the_lookup_and_the_parse_is_keyed_by_what_was_parsed(tmp_path, monkeypatch):
    corpus = tmp_path / "veltria.jsonl"
    corpus.write_text(OLD)
    read_corpus = index_module.read_corpus

    def replaced_before_the_parse(*args, **kwargs):  # an editor's save lands between the two reads
        corpus.write_text(NEW)
        return read_corpus(*args, **kwargs)

    monkeypatch.setattr(index_module, "read_corpus", replaced_before_the_parse)
    built = CorpusIndex.open([corpus])
    monkeypatch.setattr(index_module, "read_corpus", read_corpus)
    assert capital(built) == "Brisford"
    assert built.fingerprint == corpus_fingerprint([corpus])  # keyed by the content it holds

    corpus.write_text(OLD)
    assert capital(CorpusIndex.open([corpus])) == "Arlenton"  # never the replaced file's passages
    corpus.write_text(NEW)
    reopened = CorpusIndex.open([corpus])
    assert capital(reopened) == "Brisford" and reopened.build_seconds == 0.0  # its own cache, loaded


def test_a_cache_folder_that_holds_another_corpus_is_rebuilt_not_trusted(tmp_path):
    """What the old code could leave behind: the new passages under the old content's key."""
    corpus = tmp_path / "veltria-poisoned.jsonl"
    corpus.write_text(NEW)
    new = CorpusIndex.open([corpus])
    corpus.write_text(OLD)
    old_key = corpus_fingerprint([corpus])
    shutil.copytree(cache_dir() / "index" / new.fingerprint, cache_dir() / "index" / old_key)
    index = CorpusIndex.open([corpus])
    assert capital(index) == "Arlenton" and index.build_seconds > 0


def test_ask_in_a_new_process_answers_from_the_corpus_as_it_is_now(tmp_path):
    """`deltaseek index`, then the file rewritten in place with the same size, modification time
    and inode: only its content tells it apart. `ask` answers from the new content, from an index
    built for it; the old content's index is still there, and answers for it again."""
    corpus = tmp_path / "veltria-process.jsonl"
    corpus.write_text(OLD)
    deltaseek = Path(sys.executable).parent / "deltaseek"
    subprocess.run([deltaseek, "index", corpus], check=True, capture_output=True, timeout=300)
    old_key = corpus_fingerprint([corpus])
    before = os.stat(corpus)
    with corpus.open("r+") as handle:  # in place: the inode stays
        handle.write(NEW)
    os.utime(corpus, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(corpus)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)

    def ask() -> dict:
        with FakeOpenAIServer(STUCK_REPLY) as server:
            done = subprocess.run([deltaseek, "ask", "What is the capital of Veltria?", "--corpus", corpus, "--json",
                                   "--lm", "openai/stuck", "--api-base", server.url],
                                  capture_output=True, text=True, timeout=300,
                                  env={**os.environ, "OPENAI_API_KEY": "not-needed"})
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    record = ask()
    facts = " ".join(f["text"] for f in record["trajectory"]["facts"])
    assert "Brisford" in record["answer"] and "Arlenton" not in facts
    rebuilt = cache_dir() / "index" / corpus_fingerprint([corpus])
    assert "Brisford" in (rebuilt / "passages.json").read_text()
    assert "Arlenton" in (cache_dir() / "index" / old_key / "passages.json").read_text()

    with corpus.open("r+") as handle:
        handle.write(OLD)
    os.utime(corpus, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert "Arlenton" in ask()["answer"]


# --- 2. LM faults named as what they are -------------------------------------------------------

def is_synthesis(request: dict) -> bool:
    """Only the synthesis prompt has a `missing` input field."""
    return "`missing`" in request["messages"][0]["content"]


def test_a_rate_limited_synthesis_is_named_and_no_model_answer_is_blamed(capsys, monkeypatch, restored_dspy):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    reply = 'Action: search_corpus("Ruby programming language creator")'
    with FakeOpenAIServer(reply, status=lambda request: 429 if is_synthesis(request) else 200) as server:
        code, out, err = run_cli(capsys, "ask", "Who created the Ruby programming language?", "--lm", "openai/x",
                                 "--api-base", server.url, "--json")
        rate_limited = sum(1 for r in server.requests if is_synthesis(r))
    assert code == 0, err
    record = json.loads(out)
    assert "Matsumoto" in record["answer"] and record["answer_origin"] == "extracted"
    assert "The model was rate-limited (429) on the synthesis; no answer came from the model." in record["caveats"]
    # There was no model answer to judge: none is proposed, and no caveat says one was set aside.
    assert not record["proposed_answer"] and record["replaced_because"] == "the model gave no answer"
    assert not any(c.startswith("The model's answer was set aside") for c in record["caveats"])
    [fault] = [f for f in record["lm_faults"] if f["call"] == "synthesis"]
    assert fault["status"] == 429 and fault["error"] == "LMRateLimitError" and "\n" not in fault["message"]
    assert rate_limited > 1  # retried (Retry-After honoured) before the call was dropped


def test_lm_faults_record_the_call_the_error_and_its_status():
    pad = Scratchpad(question="q", steps=[StepRecord(step=1)])
    record_lm_fault(pad, "step", LMRateLimitError("slow down\nsecond line", status=429))
    pad.steps.append(StepRecord(step=2))
    record_lm_fault(pad, "step", LMRateLimitError("slow down", status=429))
    record_lm_fault(pad, "judge", RuntimeError("the model returned nothing"))
    assert [(f.call, f.step, f.error, f.status, f.message) for f in pad.lm_faults] == [
        ("step", 1, "LMRateLimitError", 429, "slow down"), ("step", 2, "LMRateLimitError", 429, "slow down"),
        ("judge", 2, "RuntimeError", None, "the model returned nothing")]
    assert lm_fault_caveats(pad) == [
        "The model was rate-limited (429) on steps 1, 2; no move came from the model there.",
        "The model call failed (RuntimeError) on the answerability judgment; the search went on without its judgment."]


def test_evaluate_where_every_call_is_rate_limited_exits_non_zero_and_fails_the_run(capsys, dataset, tmp_path,
                                                                                    monkeypatch, restored_dspy):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "eval.jsonl"
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    with FakeOpenAIServer(STUCK_REPLY, status=429) as server:
        code, stdout, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "all", "--out", out,
                                    "--lm", "openai/x", "--api-base", server.url, "--tracking-uri", store,
                                    "--no-traces")
    assert code == 2 and "combined" not in stdout
    [line] = [line for line in err.splitlines() if line.startswith("deltaseek: error")]
    assert line.startswith("deltaseek: error: the model could not be reached on 4 of 4 examples (LMRateLimitError "
                           "(429) on ") and line.endswith(f"results kept in {out}")
    rows = read_jsonl(out)
    assert len(rows) == 4
    for row in rows:
        assert row["lm_faults"] and {f["status"] for f in row["lm_faults"]} == {429}
        assert "LMRateLimitError (429)" in row["error"] and set(row["scores"].values()) == {0.0}

    import mlflow

    client = mlflow.MlflowClient(tracking_uri=store)
    [run] = client.search_runs([client.get_experiment_by_name("deltaseek").experiment_id])
    assert run.info.status == "FAILED" and run.data.metrics["examples_finished"] == 4


# --- 3. a question of invisible characters; control characters printed escaped ----------------

@pytest.mark.parametrize("question", ["\u200b\u200b", "\x00", " \ufeff\u2060\u200d ", "\x1b\x07"])
def test_a_question_of_invisible_characters_is_empty(capsys, question):
    with FakeOpenAIServer(STUCK_REPLY) as server:
        code, out, err = run_cli(capsys, "ask", question, "--lm", "openai/stuck", "--api-base", server.url)
        assert server.requests == []
    assert code == 2 and out == "" and err.strip() == "deltaseek: error: the question is empty"


def test_a_question_of_invisible_characters_is_refused_from_python_too(bundled_index):
    with pytest.raises(UsageError, match="the question is empty"):
        DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])(question="\u200b\x00")


def test_control_characters_of_a_question_are_printed_escaped(capsys, restored_dspy):
    question = "Where is Xyzzyville\x1b[2J\x07\u202e?"
    with FakeOpenAIServer(STUCK_REPLY, status=429) as server:
        code, out, err = run_cli(capsys, "ask", question, "--lm", "openai/x", "--api-base", server.url, "--trace")
    assert code == 0, err
    assert "Xyzzyville\\x1b[2J\\x07\\u202e?" in out  # the tool-first search of the question, as the trace shows it
    assert not any(c in out for c in "\x1b\x07\u202e")


def test_escaping_keeps_text_that_prints():
    assert escape_controls("Zoë\u00a0N°\tfin\nnext \u200d \u200c") == "Zoë\u00a0N°\tfin\nnext \u200d \u200c"
    assert escape_controls("a\rb\x7f\u200b") == "a\\rb\\x7f\\u200b"


# --- 4. a JSON error says "at" once -------------------------------------------------------------

@pytest.mark.parametrize("value,problem", [
    ('"tab\there"', "Invalid control character at column {}"),  # json's message ends in "at"
    ('"never closed}', "Unterminated string starting at column {}"),
])
def test_a_json_error_says_at_once(capsys, tmp_path, value, problem):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(f'{{"text": {value}}}')  # no line end: an open string would run into it
    code, _, err = run_cli(capsys, "index", corpus)
    column = 10 + value.find("\t") if "\t" in value else 10
    assert code == 2 and err.strip().endswith(f"{corpus}:1: not valid JSON ({problem.format(column)})")
    labeled = tmp_path / "labeled.jsonl"
    labeled.write_text(f'{{"question": {value}}}')
    with pytest.raises(DatasetError) as raised:
        load_labeled(labeled)
    assert str(raised.value).endswith(f"\n{labeled}:1: not valid JSON ({problem.format(column + 4)})")


# --- 6. a labeled set too small to split --------------------------------------------------------

def small_set(tmp_path) -> Path:
    """Three rows without a split field whose ids all hash outside the dev split."""
    ids = [i for i in (f"mine-{n}" for n in range(40)) if assign_split(i) != "dev"][:3]
    rows = [{k: v for k, v in r.items() if k != "split"} | {"id": i} for r, i in zip(ROWS, ids)]
    path = tmp_path / "my3rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_set_too_small_to_split_is_evaluated_whole_with_a_note(capsys, tmp_path, monkeypatch, restored_dspy):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "configure_lm_from",
                        lambda args: dspy.configure(lm=scripted_lm(oracle_engine()), adapter=dspy.JSONAdapter()))
    path, out = small_set(tmp_path), tmp_path / "eval.jsonl"
    code, stdout, err = run_cli(capsys, "evaluate", "--dataset", path, "--out", out, "--tracking-uri",
                                f"sqlite:///{tmp_path / 'mlflow.db'}", "--no-traces")
    assert code == 0, err
    assert f"deltaseek: note: {path}: the dev split holds none of its 3 examples (too few to split); all of them " \
           "are run, as with --split all" in err
    assert len(read_jsonl(out)) == 3 and "3 examples" in stdout

    code, _, err = run_cli(capsys, "evaluate", "--dataset", path, "--split", "dev", "--out", tmp_path / "dev.jsonl")
    assert code == 2 and err.strip() == (f"deltaseek: error: {path}: the dev split holds none of its 3 examples; "
                                         "pass --split all to run every example")
