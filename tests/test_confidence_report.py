"""The report of a run file's honesty: where the trade-off of abstention lies on its own runs."""

import json

from deltaseek.optimize import confidence_report
from deltaseek.programs.agent.answer import FinalAnswer
from deltaseek.programs.agent.learned_reader import Extracted, shipped_reader
from tests.test_confidence import MILL, confidence_model, settled, unanswerable_at


def recorded_runs(margin: float) -> tuple[list[dict], object]:
    """Ten runs settled at `margin` and recorded as `evaluate` writes them: five spans the reader
    agrees with (one of an unanswerable question), five it does not (four unanswerable)."""
    model = confidence_model(bound=0.99).model_copy(update={"abstain_margin": margin,
                                                            "unanswerable": unanswerable_at(0.5)})
    span = Extracted("Tave", MILL[0].text, "p0", "place", 1.0, 0.2, 0.1, {"ranker_share": 0.3})
    rows = []
    for i in range(10):
        agrees, unanswerable = i < 5, i in (0, 5, 6, 7, 8)
        answer = FinalAnswer("Tave" if agrees else "Orla", "extracted", ["p0"], "direct")
        final, confidence, signals, caveat = settled(answer, span, model)
        rows.append({"answerability": final.answerability, "confidence": confidence, "confidence_signals": signals,
                     "caveats": [caveat] if caveat else [], "answer": final.text,
                     "gold": {"answerability": "unlikely" if unanswerable else "direct"},
                     "scores": {"token_f1": float(agrees and not unanswerable)}})
    return rows, model


def test_the_trade_off_on_a_run_file_takes_the_margins_decision_again_from_its_records():
    rows, model = recorded_runs(margin=0.0)
    assert sum(r["answerability"] == "unlikely" for r in rows) == 5  # the five the reader doubts were set aside
    shipped, curve = confidence_report.trade_off_here(rows, model)
    # at the margin the runs were made with, the records give back what the runs did
    assert (shipped["abstention"], shipped["false_abstention"]) == (0.8, 0.2)
    assert shipped["abstention"] == confidence_report.figures(rows)["abstention"]
    # a file run with the spans kept (a high margin) shows the same curve: the decision is the records'
    kept, _ = recorded_runs(margin=0.9)
    assert all(r["answerability"] != "unlikely" for r in kept)
    assert confidence_report.trade_off_here(kept, model)[1] == curve
    assert [(p["max_false_abstention"], p["abstention"], p["false_abstention"]) for p in curve] == [
        (0.05, 0.0, 0.0), (0.10, 0.0, 0.0), (0.15, 0.0, 0.0), (0.20, 0.8, 0.2), (0.30, 0.8, 0.2), (0.40, 0.8, 0.2)]


def test_the_report_prints_the_trade_off_with_the_reader_it_was_run_with(tmp_path, capsys):
    rows, model = recorded_runs(margin=0.0)
    runs, reader = tmp_path / "runs.jsonl", tmp_path / "reader.json"
    runs.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    reader.write_text(shipped_reader().model_copy(update={"confidence": model}).model_dump_json(), encoding="utf-8")
    assert confidence_report.main([str(runs), "--reader", str(reader)]) == 0
    out = capsys.readouterr().out
    assert "at the reader's margin 0.0: abstention 80.0% at false abstention 20.0%" in out
    assert "false abstention at most 20%: margin " in out and out.count("false abstention at most") == 6
    assert confidence_report.main([str(runs), "--reader", str(tmp_path / "none.json")]) == 2
    assert "none.json" in capsys.readouterr().err
