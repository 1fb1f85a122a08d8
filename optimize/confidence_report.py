"""How honest a run's answers were: the reliability of their confidences and what their labels claimed.

    python -m deltaseek.optimize.confidence_report results/runs.jsonl

For an evaluation results file: the reliability table and expected calibration error of the
answers' confidences, the share of questions labelled `direct` and how many of those were right,
the share of unanswerable questions labelled `direct`, and abstention on unanswerable and
answerable questions: the runs' own labels and confidences, as the run gave them (relabelling
old runs offline would miss the spans a low confidence sets aside, which change the answer).
"""

from __future__ import annotations

import argparse
import json
import sys

from deltaseek.errors import DatasetError
from deltaseek.metrics.calibration import direct_figures, expected_calibration_error, is_right, reliability_lines
from deltaseek.metrics.contract import abstains
from deltaseek.optimize.results_file import numbered_rows


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


def _share(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", help="an evaluation results file")
    args = parser.parse_args(argv)
    try:
        rows = [row for _, row in numbered_rows(args.runs)]
    except DatasetError as exc:
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
