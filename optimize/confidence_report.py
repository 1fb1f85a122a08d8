"""How honest a run's answers were: the reliability of their confidences and what their labels claimed.

    python -m deltaseek.optimize.confidence_report results/runs.jsonl

For an evaluation results file: the reliability table and expected calibration error of the
answers' confidences, the share of questions labelled `direct` and how many of those were right,
the share of unanswerable questions labelled `direct`, and abstention on unanswerable and
answerable questions: the runs' own labels and confidences, as the run gave them (relabelling
old runs offline would miss the spans a low confidence sets aside, which change the answer).

With `--reader` (a reader file holding the confidence model the runs were made with), it also
says where the trade-off between abstention and false abstention lies on these runs: at each
limit of false abstention, the lowest abstain margin that keeps to it here and the abstention it
reaches. Every run of a span the reader read records that span's signals, set aside or not, so
the margin's decision can be taken again at any margin. A curve chosen on the runs it is shown
on: it says what a margin could buy on questions like these, not which to ship.
"""

from __future__ import annotations

import argparse
import json
import sys

from deltaseek.errors import DatasetError, ProgramFileError
from deltaseek.metrics.calibration import direct_figures, expected_calibration_error, is_right, reliability_lines
from deltaseek.metrics.contract import abstains
from deltaseek.optimize.abstain_margin import abstention_at, set_aside_in_record, trade_off
from deltaseek.optimize.results_file import numbered_rows
from deltaseek.programs.agent.learned_reader.model import ConfidenceModel, load_reader


def figures(rows: list[dict]) -> dict[str, float]:
    runs = [r for r in rows if not r.get("error")]
    rights = [is_right(r["scores"]["token_f1"]) for r in runs]
    unanswerable = [r for r in runs if r["gold"]["answerability"] == "unlikely"]
    answerable = [r for r in runs if r["gold"]["answerability"] == "direct"]
    result = {**direct_figures([r["answerability"] for r in runs], rights),
              "unanswerable": len(unanswerable),
              "unanswerable_direct": _share(r["answerability"] == "direct" and not abstains(r) for r in unanswerable),
              "abstention": _share(abstains(r) for r in unanswerable),
              "false_abstention": _share(abstains(r) for r in answerable),
              "f1_answerable": _share(r["scores"]["token_f1"] for r in answerable)}
    confident = [r for r in runs if r.get("confidence") is not None]
    if confident:
        result["ece"] = expected_calibration_error([r["confidence"] for r in confident],
                                                   [is_right(r["scores"]["token_f1"]) for r in confident])
    return result


def trade_off_here(rows: list[dict], model: ConfidenceModel) -> tuple[dict, list[dict]]:
    """The abstention and false abstention at the model's own margin (what the runs did, taken
    again from their records), and at each limit of `abstain_margin.TRADE_OFF_LIMITS` with the
    margins chosen on `rows` themselves: a span the run set aside is the reader's span it was (its
    record holds the span's signals), taken again at each margin. ({}, []) where no run's question
    is unanswerable."""
    runs = [dict(r, source="these runs", answerability="unknown" if set_aside_in_record(r) else r["answerability"])
            for r in rows if not r.get("error") and isinstance(r.get("confidence_signals"), dict)]
    signals = [r["confidence_signals"] for r in runs]
    confidences = [round(model.probability(s), 4) for s in signals]  # as `settle` rounds them
    absent = [round(model.abstention_probability(s), 4) for s in signals]
    figures = abstention_at(runs, confidences, absent)
    if figures is None:
        return {}, []
    return {"margin": model.abstain_margin, **figures(model.abstain_margin)}, trade_off(runs, confidences, absent)


def _share(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", help="an evaluation results file")
    parser.add_argument("--reader", help="the reader file the runs were made with: also print the trade-off "
                                         "between abstention and false abstention on these runs")
    args = parser.parse_args(argv)
    try:
        rows = [row for _, row in numbered_rows(args.runs)]
        model = load_reader(args.reader).confidence if args.reader else None
    except (DatasetError, ProgramFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {args.runs}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({name: round(value, 4) for name, value in figures(rows).items()}))
    confident = [r for r in rows if r.get("confidence") is not None and not r.get("error")]
    if confident:
        print("\n".join(reliability_lines([r["confidence"] for r in confident],
                                          [is_right(r["scores"]["token_f1"]) for r in confident])))
    if args.reader and model is None:
        print(f"{args.reader}: no confidence model in this reader: no trade-off to show")
    elif model is not None:
        shipped, curve = trade_off_here(rows, model)
        if shipped:
            print(f"at the reader's margin {shipped['margin']}: abstention {shipped['abstention']:.1%} "
                  f"at false abstention {shipped['false_abstention']:.1%}")
        for point in curve:
            print(f"false abstention at most {point['max_false_abstention']:.0%}: margin {point['margin']:.3f}, "
                  f"abstention {point['abstention']:.1%} at false abstention {point['false_abstention']:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
