"""`evaluate` and `optimize` against a real `mlflow server` on loopback, read back with MlflowClient.

The server's stores live in tmp; the commands run on the scripted oracle LM of test_optimize.
"""

import json
import os
import sys
from pathlib import Path

import pytest

from tests.server_process import server_process
from tests.test_optimize import ROWS, free_port, read_jsonl, run_cli, scripted_cli  # noqa: F401 (fixture)

pytestmark = pytest.mark.mlflow_server
EXPERIMENT = "deltaseek-server-test"


def mlflow_server_process(root: Path, port: int, log_name: str = "server.log"):
    """`mlflow server` on loopback with its stores in `root` (the same store each time it is started)."""
    env = {**os.environ,
           # Offline, litellm's background fetch of its price list can deadlock the server's
           # imports; the bundled list is all a test server needs.
           "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    command = [str(Path(sys.executable).parent / "mlflow"), "server", "--host", "127.0.0.1", "--port", str(port),
               "--workers", "1", "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
               "--artifacts-destination", str(root / "artifacts")]
    return server_process(command, f"http://127.0.0.1:{port}", "/health", root / log_name, env, root)


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory):
    import mlflow

    previous_uri = mlflow.get_tracking_uri()
    try:
        with mlflow_server_process(tmp_path_factory.mktemp("mlflow-server"), free_port()) as url:
            yield url
    finally:
        mlflow.set_tracking_uri(previous_uri)


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "labeled.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def only_run(client, experiment_id, command):
    runs = [r for r in client.search_runs([experiment_id]) if r.data.params.get("command") == command]
    assert len(runs) == 1
    return runs[0]


def test_evaluate_and_optimize_are_tracked_on_the_server(capsys, scripted_cli, dataset, tmp_path, mlflow_server):
    import mlflow

    from deltaseek import DeltaSeek

    out = tmp_path / "eval.jsonl"
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "all", "--out", out,
                           "--tracking-uri", mlflow_server, "--experiment", EXPERIMENT)
    assert code == 0, err
    assert "warning" not in err

    program_file = tmp_path / "program.json"
    code, _, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "labeled", "--budget", "1",
                           "--out", program_file, "--tracking-uri", mlflow_server, "--experiment", EXPERIMENT)
    assert code == 0, err

    client = mlflow.MlflowClient(tracking_uri=mlflow_server)
    experiment = client.get_experiment_by_name(EXPERIMENT)

    # evaluate: params, metrics equal to the local per-example file, the table and traces
    run = only_run(client, experiment.experiment_id, "evaluate")
    rows = read_jsonl(out)
    assert run.info.status == "FINISHED"
    assert run.data.params["lm"] == "scripted/test"
    assert run.data.params["dataset"] == str(dataset) and run.data.params["split"] == "all"
    assert run.data.params["examples"] == "4" and run.data.params["program"] == "uncompiled"
    assert run.data.params["settings.hard_budget"] == "8"
    for metric in ("exact_match", "token_f1", "answerability_accuracy", "efficiency", "combined"):
        assert run.data.metrics[metric] == pytest.approx(sum(r["scores"][metric] for r in rows) / len(rows))
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id, "eval")}
    assert artifacts == {"eval/eval.jsonl", "eval/all_table.json"}
    logged = Path(client.download_artifacts(run.info.run_id, "eval/eval.jsonl", str(tmp_path / "download")))
    assert read_jsonl(logged) == rows
    table = json.loads(Path(client.download_artifacts(run.info.run_id, "eval/all_table.json",
                                                      str(tmp_path / "download"))).read_text())
    assert len(table["data"]) == 4
    traces = mlflow.search_traces(locations=[experiment.experiment_id], run_id=run.info.run_id, return_type="list")
    assert len(traces) == 4  # one DSPy trace per question
    assert any(s.name.startswith("Predict") for s in traces[0].data.spans)

    # optimize: params, baseline / compiled / lift metrics, the compiled program as an artifact
    run = only_run(client, experiment.experiment_id, "optimize")
    assert run.info.status == "FINISHED"
    assert run.data.params["optimizer"] == "labeled" and run.data.params["budget"] == "1"
    assert run.data.params["train_examples"] == "2" and run.data.params["eval_splits"] == "dev"
    metrics = run.data.metrics
    for metric in ("combined", "token_f1"):
        assert metrics[f"dev_lift_{metric}"] == pytest.approx(
            metrics[f"dev_compiled_{metric}"] - metrics[f"dev_baseline_{metric}"])
    assert "compile_seconds" in metrics
    assert {a.path for a in client.list_artifacts(run.info.run_id, "program")} == {"program/program.json"}
    saved = Path(client.download_artifacts(run.info.run_id, "program/program.json", str(tmp_path / "program")))
    assert json.loads(saved.read_text()) == json.loads(program_file.read_text())
    assert DeltaSeek.from_compiled(saved).synthesize.demos
    eval_files = {a.path for a in client.list_artifacts(run.info.run_id, "eval")}
    assert {"eval/dev_baseline_table.json", "eval/dev_compiled_table.json"} <= eval_files
    assert len([p for p in eval_files if p.endswith(".jsonl")]) == 2


def test_a_server_that_goes_away_costs_a_warning_not_the_results(capsys, scripted_cli, dataset, tmp_path,
                                                                 mlflow_server, monkeypatch):
    """The probe passes, then every MLflow call fails: one warning, results written, exit 0."""
    import mlflow

    def refused(*args, **kwargs):
        raise mlflow.exceptions.MlflowException("connection refused")

    monkeypatch.setattr(mlflow, "log_params", refused)
    out = tmp_path / "eval.jsonl"
    code, stdout, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--out", out,
                                "--tracking-uri", mlflow_server, "--experiment", EXPERIMENT + "-gone")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("deltaseek: warning:")]
    assert len(warnings) == 1 and "could not log params" in warnings[0]
    assert len(read_jsonl(out)) == 2 and "combined" in stdout
    assert mlflow.active_run() is None


# --- MLflow 3's evaluation views: scored traces and dataset inputs ------------------------------

SCORES = ("exact_match", "token_f1", "answerability_accuracy", "efficiency", "combined")


def scored_traces(experiment_id, run_id):
    """The run's traces as {example id: (feedback by name, expectations by name, tags)}."""
    import mlflow

    traces = mlflow.search_traces(locations=[experiment_id], run_id=run_id, return_type="list")
    scored = {}
    for trace in traces:
        feedback = {a.name: a.value for a in trace.info.assessments if a.feedback is not None}
        expected = {a.name: a.value for a in trace.info.assessments if a.expectation is not None}
        scored[trace.info.tags["example_id"]] = (feedback, expected, trace.info.tags)
    assert len(scored) == len(traces)
    return scored


def assert_traces_hold_the_rows(experiment_id, run_id, rows):
    scored = scored_traces(experiment_id, run_id)
    assert set(scored) == {r["id"] for r in rows}
    for row in rows:
        feedback, expected, tags = scored[row["id"]]
        assert feedback == {name: pytest.approx(row["scores"][name]) for name in SCORES}
        assert expected == {"expected_response": row["gold"]["answer"],
                            "expected_answerability": row["gold"]["answerability"]}
        assert tags["stop_reason"] == row["stop_reason"] and tags["answer_origin"] == row["answer_origin"]


def dataset_inputs(run):
    return {(d.dataset.name, d.tags[0].value if d.tags else None): d.dataset for d in run.inputs.dataset_inputs}


def test_every_evaluated_question_is_a_trace_scored_like_its_row(capsys, scripted_cli, dataset, tmp_path,
                                                                 mlflow_server):
    import mlflow

    experiment_name = EXPERIMENT + "-scored"
    out = tmp_path / "eval.jsonl"
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "all", "--out", out,
                           "--tracking-uri", mlflow_server, "--experiment", experiment_name)
    assert code == 0, err
    client = mlflow.MlflowClient(tracking_uri=mlflow_server)
    experiment = client.get_experiment_by_name(experiment_name)
    assert experiment.tags["mlflow.experimentKind"] == "genai_development"
    run = only_run(client, experiment.experiment_id, "evaluate")
    assert f"MLflow run {run.info.run_id} in {mlflow_server} (experiment {experiment_name!r})" in err.splitlines()
    rows = read_jsonl(out)
    assert_traces_hold_the_rows(experiment.experiment_id, run.info.run_id, rows)

    [((name, context), labeled)] = dataset_inputs(run).items()
    assert name == "labeled.jsonl (all)" and context == "evaluation"
    assert json.loads(labeled.source)["uri"] == str(dataset.absolute())
    assert json.loads(labeled.profile)["num_rows"] == 4 and labeled.digest


def test_both_sides_of_a_comparison_are_scored_on_the_same_dataset(capsys, scripted_cli, dataset, tmp_path,
                                                                   mlflow_server):
    import mlflow

    experiment_name = EXPERIMENT + "-compare"
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "all", "--compare", "default",
                           "default", "--out", tmp_path / "cmp.jsonl", "--tracking-uri", mlflow_server,
                           "--experiment", experiment_name)
    assert code == 0, err
    client = mlflow.MlflowClient(tracking_uri=mlflow_server)
    experiment = client.get_experiment_by_name(experiment_name)
    runs = {r.data.params["side"]: r for r in client.search_runs([experiment.experiment_id])}
    assert set(runs) == {"A", "B"}
    for side, run in runs.items():
        assert_traces_hold_the_rows(experiment.experiment_id, run.info.run_id, read_jsonl(tmp_path / f"cmp-{side}.jsonl"))
    digests = {side: {(key, d.digest) for key, d in dataset_inputs(run).items()} for side, run in runs.items()}
    assert digests["A"] == digests["B"] and {key for key, _ in digests["A"]} == {("labeled.jsonl (all)", "evaluation")}


def test_an_optimize_evaluates_in_child_runs_with_their_dataset(capsys, scripted_cli, dataset, tmp_path,
                                                                mlflow_server):
    import mlflow

    experiment_name = EXPERIMENT + "-optimize"
    code, _, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "labeled", "--budget", "1",
                           "--tune-settings", "2", "--tune-only", "max_searches", "--out", tmp_path / "program.json",
                           "--results-dir", tmp_path / "results", "--tracking-uri", mlflow_server,
                           "--experiment", experiment_name)
    assert code == 0, err
    client = mlflow.MlflowClient(tracking_uri=mlflow_server)
    experiment = client.get_experiment_by_name(experiment_name)
    parent = only_run(client, experiment.experiment_id, "optimize")
    assert set(dataset_inputs(parent)) == {("labeled.jsonl (train)", "training"), ("labeled.jsonl (dev)", "evaluation")}
    assert [o.model_id for o in parent.outputs.model_outputs]  # the compiled program, logged in the compile run
    children = {r.info.run_name: r for r in client.search_runs(
        [experiment.experiment_id], f"tags.mlflow.parentRunId = '{parent.info.run_id}'")}
    assert set(children) == {"baseline dev", "compiled dev", "trial 0", "trial 1"}
    for side in ("baseline", "compiled"):
        child = children[f"{side} dev"]
        rows = read_jsonl(tmp_path / "results" / f"optimize-program-{side}-dev.jsonl")
        assert_traces_hold_the_rows(experiment.experiment_id, child.info.run_id, rows)
        assert set(dataset_inputs(child)) == {("labeled.jsonl (dev)", "evaluation")}
        assert child.data.metrics["combined"] == pytest.approx(sum(r["scores"]["combined"] for r in rows) / len(rows))
        assert parent.data.metrics[f"dev_{side}_combined"] == child.data.metrics["combined"]
    for trial in ("trial 0", "trial 1"):
        rows = read_jsonl(Path(children[trial].data.params["results"]))
        assert_traces_hold_the_rows(experiment.experiment_id, children[trial].info.run_id, rows)


def test_a_run_whose_server_died_is_ended_with_its_rows_when_the_server_answers_again(tmp_path, monkeypatch):
    """`mlflow server` stopped during a real `deltaseek evaluate` process and started again after it:
    the command ends 0 with one warning, and the next command that reaches the server ends the
    run with the metrics of the rows kept and their file."""
    import mlflow

    from deltaseek.optimize.tracking import Tracker
    from tests.fake_openai import FakeOpenAIServer
    from tests.test_cli import STUCK_REPLY
    from tests.test_interrupts import rows_of, start_evaluate, wait_for_rows

    root, port = tmp_path / "server", free_port()
    root.mkdir()
    out = tmp_path / "r.jsonl"
    with FakeOpenAIServer(STUCK_REPLY, delay=0.3) as lm_server:
        with mlflow_server_process(root, port, "before.log") as url:
            process = start_evaluate(tmp_path, lm_server, "--tracking-uri", url)
            wait_for_rows(out, 1, process)
        assert len(rows_of(out)) < 12  # the server went away mid-run
        _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    rows = rows_of(out)
    assert len(rows) == 12
    [started] = [line for line in err.splitlines() if line.startswith("MLflow run ")]
    run_id = started.split()[2]
    assert started == f"MLflow run {run_id} in {url} (experiment 'deltaseek')"
    [warning] = [line for line in err.splitlines() if line.startswith("deltaseek: warning:")]
    assert url in warning

    monkeypatch.setenv("DELTASEEK_CACHE", str(tmp_path / "cache"))  # where the evaluate left its note
    with mlflow_server_process(root, port, "after.log"):
        client = mlflow.MlflowClient(tracking_uri=url)
        assert client.get_run(run_id).info.status == "RUNNING"
        with Tracker(url, run_name="the next command", traces=False):
            pass
        run = client.get_run(run_id)
        assert run.info.status == "FINISHED" and url in run.data.tags["deltaseek.tracking_lost"]
        assert run.data.metrics["combined"] == pytest.approx(sum(r["scores"]["combined"] for r in rows) / 12)
        assert run.data.metrics["crashed"] == 0
        logged = Path(client.download_artifacts(run_id, "eval/r.jsonl", str(tmp_path / "download")))
        assert rows_of(logged) == rows
        assert not list((tmp_path / "cache" / "unsettled-runs").iterdir())
