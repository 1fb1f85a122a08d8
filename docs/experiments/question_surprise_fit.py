"""Does the adapter's surprise at the question make the answer's confidence more honest? (Run from
the repository root.)

    python docs/experiments/question_surprise_fit.py --fit FIT_RUNS... [--scored SCORED_RUNS...] [--reader OUT]

FIT_RUNS are `deltaseek evaluate --abstain-margin 1` runs of the confidence fit's questions (every
SQuAD dev question, every HotpotQA train and dev question: `confidence_fit_sets.py`), made by a
program that records `adapter_question_surprise`. The confidence model is fitted three times on
them: with the signal taken out of every run (the fit it would have been), with it, and with it
weighed by the model of whether the passages state the answer alone. For each, one
group (article) held out at a time, as `confidence_held_out_articles.py` does: the held-out
answers as the program would show them, pooled.

SCORED_RUNS are runs of the scored questions made the same way (every span answered, its signals
recorded), so any confidence model's answers can be taken again from them: a span its margin sets
aside is an abstention. They are shown under the shipped model, and under each refit (fitted on
every fit run, its `direct` bound chosen with one group held out at a time), with paired 95%
intervals against the shipped one. With `--reader OUT`, the refit with the signal weighed by the
no-answer model alone (`fit_confidence.ANSWER_LEAVES_OUT`) is written into a copy of the shipped
reader there.
"""

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

from deltaseek.metrics.calibration import expected_calibration_error
from deltaseek.optimize import fit_confidence
from deltaseek.optimize.paired import CONFIDENCE, RESAMPLES, difference_interval
from deltaseek.optimize.results_file import numbered_rows
from deltaseek.programs.agent.learned_reader.model import load_reader

sys.path.insert(0, str(Path(__file__).parent))
from confidence_held_out_articles import figures, grouped_runs, held_out, held_out_bound, shown  # noqa: E402

SIGNAL = "adapter_question_surprise"
SHIPPED = "with the signal in the no-answer model only"
"""The variant `--reader` writes: the one the rule fixed before its fit shipped."""


def without_signal(rows: list[dict]) -> list[dict]:
    return [{**r, "confidence_signals": {k: v for k, v in r["confidence_signals"].items() if k != SIGNAL}}
            for r in rows]


def scored_runs(path: str) -> list[dict]:
    """A scored file's runs that hold signals (`fit_confidence.read_runs` refuses the test split)."""
    return [{**row, "source": path} for _, row in numbered_rows(path)
            if not row.get("error") and isinstance(row.get("confidence_signals"), dict)]


def bound_by_group(pooled: list, rows: list[dict]) -> float:
    return math.floor(held_out_bound(pooled, rows, 0.75)[0] * 1e4) / 1e4


def outcomes(model, rows: list[dict]) -> dict[str, np.ndarray]:
    """Per question as `model` shows it: F1 (0 where it abstains), abstained, right, direct, confidence."""
    shown_rows = [shown(model, r) for r in rows]
    abstained = np.array([a for _, _, a, _ in shown_rows])
    return {"f1": np.array([0.0 if a else r["scores"]["token_f1"] for r, (_, _, a, _) in zip(rows, shown_rows)]),
            "abstained": abstained, "right": np.array([right for _, right, _, _ in shown_rows]),
            "direct": np.array([d for _, _, _, d in shown_rows]),
            "confidence": np.array([c for c, _, _, _ in shown_rows])}


def scored_figures(found: dict, rows: list[dict]) -> dict[str, float]:
    unanswerable = np.array([r["gold"]["answerability"] == "unlikely" for r in rows])
    direct = found["direct"]
    out = {"ece": expected_calibration_error(list(found["confidence"]), list(found["right"])),
           "direct_share": direct.mean(), "direct_right": found["right"][direct].mean() if direct.any() else 0.0,
           "f1_answerable": found["f1"][~unanswerable].mean(),
           "false_abstention": found["abstained"][~unanswerable].mean()}
    if unanswerable.any():
        out.update(abstention=found["abstained"][unanswerable].mean(),
                   unanswerable_direct=direct[unanswerable].mean())
    return {k: round(float(v), 4) for k, v in out.items()}


def compare(before: dict, after: dict, rows: list[dict]) -> str:
    answerable = np.array([r["gold"]["answerability"] != "unlikely" for r in rows])
    parts = []
    for name, key, mask in (("F1 answerable", "f1", answerable), ("abstention", "abstained", ~answerable),
                            ("false abstention", "abstained", answerable)):
        if mask.any():
            a, b = before[key][mask].astype(float), after[key][mask].astype(float)
            low, high = difference_interval(a, b, np.mean, CONFIDENCE, RESAMPLES, seed=0)
            parts.append(f"{name} {b.mean() - a.mean():+.3f} [{low:+.3f}, {high:+.3f}]")
    return "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fit", nargs="+", required=True)
    parser.add_argument("--scored", nargs="*", default=[])
    parser.add_argument("--reader", help="write the refit with the signal into a copy of the shipped reader here")
    args = parser.parse_args()
    rows = grouped_runs(args.fit)
    shipped = load_reader("programs/compiled/reader.json")
    models = {}
    variants = (("without the signal", without_signal(rows), ()), ("with the signal", rows, ()),
                (SHIPPED, rows, (SIGNAL,)))
    for name, fit_rows, answer_leaves_out in variants:
        fit_confidence.ANSWER_LEAVES_OUT = answer_leaves_out
        pooled, pooled_rows = held_out(fit_rows)
        print(f"{name}, one group held out at a time: {figures(pooled, pooled_rows)}")
        squad = [i for i, r in enumerate(pooled_rows) if "squad" in Path(r["source"]).name]
        print(f"  SQuAD's runs: {figures([pooled[i] for i in squad], [pooled_rows[i] for i in squad])}")
        model, _, _ = fit_confidence.fit(fit_rows)
        models[name] = model.model_copy(update={"direct_bound": bound_by_group(pooled, pooled_rows)})
        print(f"  fitted on every run: margin {model.abstain_margin}, direct bound by group "
              f"{models[name].direct_bound}; {json.dumps(model.metrics)[:300]}")
    for path in args.scored:
        scored = scored_runs(path)
        before = outcomes(shipped.confidence, scored)
        print(f"{path} ({len(scored)}): shipped {scored_figures(before, scored)}")
        for name, model in models.items():
            after = outcomes(model, scored)
            print(f"  refit {name}: {scored_figures(after, scored)}")
            print(f"    against the shipped model: {compare(before, after, scored)}")
    if args.reader:
        model = models[SHIPPED]
        fit_confidence.save_with_reader(shipped, model.model_copy(update={"fitted_on": {
            "runs": args.fit, "command": "python docs/experiments/question_surprise_fit.py --fit " + " ".join(args.fit),
            "direct_bound": "one group held out at a time"}}), args.reader)
        print(f"wrote {args.reader}")


if __name__ == "__main__":
    main()
