"""Two programs compared on the same questions (`deltaseek evaluate --compare A B`): each
metric for both, B - A and its paired bootstrap 95% interval; both runs in one MLflow experiment."""

import json
import subprocess
import sys

import mlflow
import pytest

from deltaseek import AgentSettings, DeltaSeek, save_program
from deltaseek.optimize.paired import excludes_zero, format_paired, paired_table
from deltaseek.programs.tools import LocalCorpusSearch
from tests.test_optimize import dataset, read_jsonl, run_cli, scripted_cli  # noqa: F401 (fixtures)


def row(number, combined, answer="Ada Lind", gold="direct", lm_calls=3, seconds=1.0):
    return {"id": f"q{number}", "gold": {"answer": "Ada Lind", "answerability": gold}, "answer": answer,
            "answerability": "unlikely" if answer.startswith("No information") else "direct",
            "scores": {"combined": combined, "exact_match": float(combined == 1.0), "token_f1": combined},
            "lm_calls": lm_calls, "seconds": seconds}


def by_metric(table):
    return {entry["metric"]: entry for entry in table}


def test_a_lift_on_most_questions_has_an_interval_above_zero():
    a = [row(i, 0.0, lm_calls=4, seconds=2.0) for i in range(12)]
    b = [row(i, 1.0 if i < 10 else 0.0, lm_calls=2, seconds=1.0 + i) for i in range(12)]
    table = by_metric(paired_table(a, list(reversed(b))))  # paired by id, not by position
    combined = table["combined"]
    assert combined["n"] == 12 and combined["a"] == 0.0 and combined["b"] == pytest.approx(10 / 12)
    assert combined["difference"] == pytest.approx(10 / 12)
    assert 0 < combined["low"] <= combined["difference"] <= combined["high"] <= 1 and excludes_zero(combined)
    assert table["lm_calls"]["difference"] == -2.0 and excludes_zero(table["lm_calls"])
    assert table["seconds_median"]["a"] == 2.0 and table["seconds_median"]["b"] == 6.5  # medians, not means


def test_a_difference_that_goes_both_ways_has_an_interval_across_zero():
    a = [row(i, 1.0 if i % 2 else 0.0) for i in range(12)]
    b = [row(i, 0.0 if i % 2 else 1.0) if i < 8 else row(i, 1.0 if i % 2 else 0.0) for i in range(12)]
    combined = by_metric(paired_table(a, b))["combined"]
    assert combined["difference"] == 0.0
    assert combined["low"] < 0 < combined["high"] and not excludes_zero(combined)
    again = by_metric(paired_table(a, b))["combined"]  # seeded: the same interval every time ...
    assert (again["low"], again["high"]) == (combined["low"], combined["high"])
    other = by_metric(paired_table(a, b, seed=1))["combined"]  # ... because of the seed, not by chance
    assert (other["low"], other["high"]) != (combined["low"], combined["high"])


def test_abstentions_are_counted_on_their_own_questions():
    no_info = "No information found about the tunnel: no passage found mentions it."
    a = [row(1, 1.0), row(2, 0.0, answer=no_info), row(3, 0.0, gold="unlikely"), row(4, 0.0, gold="unlikely")]
    b = [row(1, 1.0), row(2, 1.0), row(3, 1.0, answer=no_info, gold="unlikely"),
         row(4, 1.0, answer=no_info, gold="unlikely")]
    table = by_metric(paired_table(a, b + [row(9, 1.0)]))  # a question only B holds is not paired
    unanswerable, false = table["abstention_on_unanswerable"], table["false_abstention"]
    assert (unanswerable["n"], unanswerable["a"], unanswerable["b"]) == (2, 0.0, 1.0)
    assert (false["n"], false["a"], false["b"], false["difference"]) == (2, 0.5, 0.0, -0.5)
    assert table["combined"]["n"] == 4
    f1 = table["f1_on_answerable"]  # the answer's F1 on the answerable questions alone
    assert (f1["n"], f1["a"], f1["b"]) == (2, 0.5, 1.0)
    one = by_metric(paired_table(a[:1], b[:1]))
    assert one["combined"]["low"] is None and one["abstention_on_unanswerable"]["a"] is None
    text = format_paired(paired_table(a, b), "default", "tuned.json")
    assert "A = default" in text and "| abstention_on_unanswerable | 2 | 0.000 | 1.000 | +1.000 |" in text


def test_bench_speed_rows_pair_as_evaluate_rows_do():
    """`bench --speed` writes the gold as text and says whether it is answerable."""
    def speed_row(number, combined, answer="Ada Lind", answerable=True):
        return {**row(number, combined, answer), "gold": "Ada Lind" if answerable else "", "answerable": answerable}

    no_info = "No information found about the tunnel: no passage found mentions it."
    a = [speed_row(1, 1.0), speed_row(2, 0.0, answerable=False), speed_row(3, 0.0, no_info)]
    b = [speed_row(1, 1.0), speed_row(2, 1.0, no_info, answerable=False), speed_row(3, 1.0)]
    table = by_metric(paired_table(a, b))
    assert (table["abstention_on_unanswerable"]["n"], table["abstention_on_unanswerable"]["b"]) == (1, 1.0)
    assert (table["false_abstention"]["n"], table["false_abstention"]["a"], table["false_abstention"]["b"]) == (2, 0.5, 0.0)


def test_results_that_share_no_question_are_refused():
    with pytest.raises(ValueError, match="share no question"):
        paired_table([row(1, 1.0)], [row(2, 1.0)])


# --- deltaseek evaluate --compare ---------------------------------------------


def test_evaluate_compare_runs_both_programs_and_logs_two_tagged_runs(capsys, scripted_cli, dataset, tmp_path,
                                                                      bundled_index):
    tuned = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)], settings=AgentSettings())
    tuned.keep_settings({"hard_budget": 3, "budgets_from_task_kind": False, "soft_budget": 2})
    program = save_program(tuned, tmp_path / "tuned.json")
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    argv = ["evaluate", "--dataset", dataset, "--compare", "default", program, "--out", tmp_path / "cmp.jsonl",
            "--tracking-uri", uri, "--experiment", "compare-test", "--no-traces"]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert "A = default" in out and f"B = {program}" in out
    assert "| combined | 2 | 1.000 | 1.000 | +0.000 | [+0.000, +0.000] |" in out
    rows = {side: read_jsonl(tmp_path / f"cmp-{side}.jsonl") for side in "AB"}
    assert [r["id"] for r in rows["A"]] == [r["id"] for r in rows["B"]] == ["d-ohio", "d-xyzzy"]  # the dev split
    saved = json.loads((tmp_path / "cmp-comparison.json").read_text())
    assert saved["a"] == "default" and [m["metric"] for m in saved["metrics"]][:3] == ["combined", "exact_match",
                                                                                        "token_f1"]
    mlflow.set_tracking_uri(uri)
    runs = mlflow.search_runs(experiment_names=["compare-test"])
    assert sorted(runs["tags.comparison_side"]) == ["A", "B"] and set(runs["tags.comparison"]) == {"cmp"}
    assert set(runs["params.program"]) == {"uncompiled", str(program)}
    side_b = runs[runs["tags.comparison_side"] == "B"].run_id.iloc[0]
    assert {a.path for a in mlflow.MlflowClient().list_artifacts(side_b, "comparison")} == \
        {"comparison/cmp-comparison.md", "comparison/cmp-comparison.json"}

    code, _, err = run_cli(capsys, *argv)  # results are never overwritten
    assert code == 2 and f"{tmp_path / 'cmp-A.jsonl'} already holds results" in err
    code, out, err = run_cli(capsys, *argv, "--resume")  # nothing left to run: the kept rows are compared
    assert code == 0 and "(2 kept from the earlier run)" in out and "| combined | 2 |" in out


@pytest.mark.parametrize("extra,problem", [
    (["--compare", "default", "missing.json"], "missing.json: compiled program file not found"),
    (["--compare", "default", "default", "--program", "none"], "--compare names both programs; leave out --program"),
    (["--compare", "default", "default", "--resume"], "--resume continues the comparison that wrote --out"),
])
def test_evaluate_compare_bad_input_is_one_line(capsys, scripted_cli, dataset, extra, problem):
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, *extra)
    assert code == 2 and problem in err and len(err.strip().splitlines()) == 1


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
