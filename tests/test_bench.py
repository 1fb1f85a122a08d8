"""`deltaseek bench` on the scripted scenarios. Whatever the model does, deltaseek runs no
call twice, answers every question and stays within its budget; for dspy.ReAct and ReActV2 the
test only records what happened (the table). The echo scenario leaves every query and answer
to the program itself: its floor holds the same properties."""

import json

import dspy
import mlflow
import pytest

from deltaseek.cli import main
from deltaseek.errors import UsageError


@pytest.mark.parametrize("scenario", ["stubborn", "garbage", "echo", "oracle"])
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
    assert ours["calls_over_steps_plus_one"] == 0 and table["dspy.ReAct"]["calls_over_steps_plus_one"] is None
    assert "| dspy.ReAct |" in printed and "| deltaseek |" in printed
    mlflow.set_tracking_uri(uri)
    runs = mlflow.search_runs(experiment_names=["deltaseek"])
    assert set(runs["params.program"]) == set(table)  # one MLflow run per program, side by side
    # each on the same dataset input: the bundled seed set's test split, the 4 questions run
    client = mlflow.MlflowClient(tracking_uri=uri)
    inputs = [client.get_run(run_id).inputs.dataset_inputs for run_id in runs["run_id"]]
    assert all(len(each) == 1 and each[0].dataset.name == "seed_set.jsonl (test)" for each in inputs)
    assert len({each[0].dataset.digest for each in inputs}) == 1
    assert json.loads(inputs[0][0].dataset.profile)["num_rows"] == 4


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


def test_the_speed_table_reports_median_p90_calls_over_budget_and_where_the_time_goes():
    from deltaseek.optimize.speed_table import format_table, summarize

    def row(seconds, calls, steps, answerable=True, abstained=False, em=1.0):
        return {"seconds": seconds, "lm_calls": calls, "steps": steps, "answerable": answerable,
                "abstained": abstained, "prompt_tokens": 600, "restored_tokens": 200, "generated_tokens": 40,
                "time": {"prompt": seconds / 2, "generation": seconds / 4, "sampling": 0.0, "search": 0.0,
                         "reader": seconds / 4, "program": 0.0},
                "scores": {"exact_match": em, "token_f1": em, "combined": em}}

    rows = [row(s, 2, 2) for s in range(1, 10)] + [row(20.0, 5, 3, answerable=False, abstained=True, em=0.0)]
    summary = summarize(rows)
    assert summary["seconds_median"] == 5.5
    assert 9 < summary["seconds_p90"] < 20  # between the ninth and the slowest question
    assert summary["over_steps_plus_one"] == 1  # the 5-call question of 3 steps
    assert summary["abstained_unanswerable"] == 1.0 and summary["false_abstention"] == 0.0
    assert summary["time_share"]["prompt"] == 0.5 and summary["time_share"]["reader"] == 0.25
    table = format_table({"mine": summary}, {"total": 2.0, "imports": 1.0, "model_load": 0.5, "index_load": 0.3})
    assert "| mine | 10 | 5.5 |" in table and "| mine | 50% | 25% | 0% | 0% | 25% | 0% |" in table
    assert "process start" in table and "model load 0.5 s" in table


def test_what_the_programs_reader_adds_is_paired_by_question_and_said_under_the_table():
    """`bench --speed --reader-beside features`: each question's two runs are paired, whatever order
    they ran in; a question without its pair is left out."""
    from deltaseek.optimize.speed_table import format_table, reader_added, set_summaries

    def row(question, run, reader, seconds, answer="Ada Lind"):
        return {"set": "squad2_articles", "id": question, "question": question, "run": run,
                "reader": "features" if run == "beside" else None, "answer": answer, "seconds": seconds,
                "lm_calls": 2, "steps": 2, "answerable": True, "abstained": False, "prompt_tokens": 600,
                "restored_tokens": 0, "generated_tokens": 40,
                "time": {"prompt": 0.0, "generation": 0.0, "sampling": 0.0, "search": 0.0, "reader": reader,
                         "program": 0.0}, "scores": {"exact_match": 1.0, "token_f1": 1.0, "combined": 1.0}}

    rows = [row("q1", "program", 0.6, 3.0), row("q1", "beside", 0.1, 2.5),
            row("q2", "beside", 0.2, 4.0, answer="1850"), row("q2", "program", 0.6, 4.2),
            row("q3", "program", 0.9, 5.0), row("q4", "program", 0.7, 3.0), row("q4", "beside", 0.1, 3.1)]
    added = reader_added(rows)
    assert added == {"questions": 3, "reader": pytest.approx(0.5), "seconds": pytest.approx(0.2), "same_answer": 2}
    assert reader_added([r for r in rows if r["run"] == "program"]) is None
    summaries = set_summaries(rows)
    assert list(summaries) == ["squad2_articles", "squad2_articles, --reader features"]
    assert summaries["squad2_articles"]["questions"] == 4 and summaries["squad2_articles, --reader features"]["questions"] == 3
    table = format_table(summaries)
    assert ("squad2_articles: the program's reader against --reader features, the same 3 questions in turns: "
            "reader seconds +0.500 (paired median), question seconds +0.200; the same answer on 2") in table


def test_the_timed_tool_and_reader_count_their_seconds_and_change_nothing(tmp_path):
    from deltaseek.optimize.speed_table import Clock, timed_program
    from deltaseek.programs.index import CorpusIndex, Passage
    from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth

    index = CorpusIndex.build([Passage(id="p1", title="Tarbury", text="Tarbury was founded in 1820 by Ada Lind.")])
    clock = Clock()
    program = timed_program(index, clock)
    lm = scripted_lm(ScriptedEngine(classify=classify("lookup"), step=lambda _: step("Tarbury founded"),
                                    synthesize=lambda _: synth("1820")))
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        pred = program(question="When was Tarbury founded?")
    assert pred.tool_calls and clock.search > 0 and clock.reader > 0
    assert "1820" in pred.answer


def test_the_timed_program_is_the_one_the_agent_options_describe():
    """`bench --speed --max-searches 1` times the program with one search, not the default one it used to run;
    `--reader rules` names a reader deltaseek no longer has, and says so."""
    from deltaseek.optimize.agent_options import AgentOptions
    from deltaseek.optimize.speed_table import Clock, TimedDeltaSeek, timed_program
    from deltaseek.programs.index import CorpusIndex, Passage

    index = CorpusIndex.build([Passage(id="p1", title="Tarbury", text="Tarbury was founded in 1820 by Ada Lind.")])
    default = timed_program(index, Clock())
    chosen = timed_program(index, Clock(), AgentOptions(max_searches=1, soft_budget=2, hard_budget=3))
    assert isinstance(chosen, TimedDeltaSeek) and chosen.clock is not None
    assert default.settings.max_searches is None
    assert (chosen.settings.max_searches, chosen.settings.soft_budget, chosen.settings.hard_budget) == (1, 2, 3)
    with pytest.raises(UsageError, match="no longer has the rule reader"):
        timed_program(index, Clock(), AgentOptions(reader="rules"))


def test_the_ask_process_summary_counts_starts_and_calls_over_the_budget(tmp_path):
    from deltaseek.optimize.ask_processes import main as ask_processes, summarize

    rows = [{"wall_seconds": w, "seconds": s, "lm_calls": c, "steps": n, "scores": {"token_f1": f}}
            for w, s, c, n, f in [(4.0, 3.0, 2, 2, 1.0), (6.0, 4.5, 4, 2, 0.0), (5.0, 4.0, 1, 1, 0.5)]]
    line = summarize(rows)
    assert "wall median 5.00 s" in line and "start (imports, model and index load) median 1.00 s" in line
    assert "more than steps + 1 on 1" in line and "token_f1 0.500" in line
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert ask_processes(["--summarize", str(tmp_path / "rows.jsonl")]) == 0
