"""An LM that cannot be used, or whose calls fail, is named as what it is: one line, a non-zero exit,
an error row rather than a plausible score. The model is a real OpenAI-compatible server on
127.0.0.1 (tests/fake_openai.py) or a scripted LM (tests/scripted.py)."""

import json

import dspy
from dspy.utils.exceptions import LMRateLimitError

import deltaseek.cli as cli
from deltaseek.programs.agent import Scratchpad, StepRecord
from deltaseek.programs.agent.lm_faults import lm_fault_caveats, record_lm_fault
from tests.fake_openai import FakeOpenAIServer
from tests.scripted import ScriptedEngine, scripted_lm
from tests.test_cli import STUCK_REPLY
from tests.test_optimize import dataset, offline_tracking, read_jsonl, run_cli  # noqa: F401 (fixtures)


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
