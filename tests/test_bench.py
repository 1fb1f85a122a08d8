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


def test_the_paths_table_has_a_row_per_path_and_compares_them_with_in_process():
    from deltaseek.optimize.benchmark import format_paths_table

    def row(path, question, answer, seconds, calls=2):
        return {"path": path, "adapter": "A", "question": question, "answer": answer, "answerability": "direct",
                "stop_reason": "answered", "steps": 2, "lm_calls": calls, "seconds": seconds}

    table = format_paths_table([row("in-process", "q1", "Jim", 2.0), row("server", "q1", "Jim", 3.0),
                                row("in-process", "q2", "Osaka", 4.0), row("server", "q2", "Tokyo", 5.0, calls=4)])
    lines = table.splitlines()
    assert lines[2].startswith("| in-process | A | Jim / Osaka |") and lines[2].endswith("| 2.0, 4.0 | 3.0 |")
    assert lines[3].startswith("| server | A | Jim / Tokyo |") and lines[3].endswith("| 3.0, 5.0 | 4.0 |")
    assert lines[-1] == ("server: median 1.33x in-process; answers the same as in-process on 1 of 2; "
                         "LM calls at most steps + 1: NO")
