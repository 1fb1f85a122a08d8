"""Issue 10: `deltaseek bench` on the scripted scenarios. Whatever the model does, deltaseek runs no
call twice, answers every question and stays within its budget; for dspy.ReAct and ReActV2 the
test only records what happened (the table). The echo scenario leaves every query and answer
to the program itself: its floor holds the same properties."""

import json

import mlflow
import pytest

from deltaseek.cli import main


@pytest.mark.parametrize("scenario", ["stubborn", "garbage", "echo"])
def test_deltaseek_holds_its_properties_whatever_the_model(scenario, tmp_path, capsys):
    out = tmp_path / "bench.json"
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    code = main(["bench", "--scenario", scenario, "--split", "test", "--limit", "4", "--budget", "5",
                 "--json-out", str(out), "--tracking-uri", uri])
    printed = capsys.readouterr().out
    assert code == 0
    table = json.loads(out.read_text())["programs"]
    assert set(table) == {"deltaseek", "dspy.ReAct", "dspy.ReActV2"}
    ours = table["deltaseek"]
    assert ours["duplicate_executions"] == 0
    assert ours["answered"] == 1.0 and ours["raised"] == 0
    assert ours["tool_calls_max"] <= 5 and ours["hit_budget"] <= 4
    assert ours["echo_rate"] == 0.0
    assert "| dspy.ReAct |" in printed and "| deltaseek |" in printed
    mlflow.set_tracking_uri(uri)
    runs = mlflow.search_runs(experiment_names=["deltaseek"])
    assert set(runs["params.program"]) == set(table)  # one MLflow run per program, side by side


def test_the_stubborn_loop_is_what_deltaseek_prevents(tmp_path, capsys):
    """The seed 000 loop on plain dspy.ReAct: the same call again and again until the budget."""
    out = tmp_path / "bench.json"
    main(["bench", "--scenario", "stubborn", "--limit", "2", "--budget", "4", "--json-out", str(out),
          "--tracking-uri", f"sqlite:///{tmp_path}/mlflow.db"])
    capsys.readouterr()
    table = json.loads(out.read_text())["programs"]
    assert table["dspy.ReAct"]["duplicate_executions"] > 0  # recorded, and the reason deltaseek exists
    assert table["deltaseek"]["duplicate_executions"] == 0
