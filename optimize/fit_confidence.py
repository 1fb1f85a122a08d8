"""Fit the answer's confidence model on the agent's own runs, and save it with the reader.

    python -m deltaseek.optimize.fit_confidence --runs results/runs-a.jsonl --runs results/runs-b.jsonl \
        --reader programs/compiled/reader.json

The runs are `deltaseek evaluate --abstain-margin 1 --out` files of held-out questions (never
the test split): each row holds the run's `confidence_signals` and its scores, and every span the
reader read was answered (none set aside, doubted ones shown), so each one's score is known. A
logistic regression (scikit-learn) learns from the signals of the runs that answered whether the
answer was right (less those `ANSWER_LEAVES_OUT` names), and another from every run whether the
passages state the answer at all (how often an abstention is right); Platt's sigmoid (or an
isotonic regression), fitted on their out-of-fold probabilities (five folds, each run's `group`
held out whole: an article's questions are never scored by a model fitted on its other
questions), makes them calibrated. The `direct`
bound is the least confidence at which the out-of-fold answers labelled direct were right at
least `--direct-precision` of the time; the abstain margin the lowest whose false abstention stays
within `--max-false-abstention`. The report gives the out-of-fold reliability table and ECE.
Runs with another reader than the one the model is saved with describe another reader: refit
after retraining it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from deltaseek.errors import DatasetError, ProgramFileError
from deltaseek.metrics.calibration import expected_calibration_error, is_right, reliability_lines
from deltaseek.optimize.abstain_margin import abstain_margin, set_aside, set_aside_in_record, trade_off
from deltaseek.optimize.confidence_folds import FOLDS, fold_groups, held_out_folds
from deltaseek.optimize.results_file import numbered_rows
from deltaseek.programs.agent.learned_reader.model import (CONFIDENCE_SIGNALS, CalibratedLinear, ConfidenceModel,
                                                           Linear, ReaderModel, load_reader)

REGULARIZATION = 0.5
"""The logistic regressions' C. Leaving one dev article (or half the two-hop runs) out at a time
(`docs/experiments/confidence_held_out_articles.py`), the pooled calibration error hardly moves
with it: 0.082 at 0.2, 0.069 at 0.5, 0.066 at 2."""
MIN_RUNS = 40
"""Fewer runs than this fit no model worth its calibration (a bin of ten holds four answers)."""
ANSWER_LEAVES_OUT: tuple[str, ...] = ("adapter_question_surprise",)
"""Signals the answer's model (whether the answer shown is right, which decides `direct`) does not
weigh; the model of whether the passages state the answer weighs every signal. The adapter's
surprise at the question tells a question its passages were not written to answer; weighed for the
answer too, it raised two-hop answers to `direct` that were wrong half the time (held out by
article: `direct` right 69% against 73% without it), while in the no-answer model alone it raised
abstention on unanswerable dev questions from 34% to 39% at the same false abstention
(`docs/experiments/question_surprise_fit.py`)."""


def read_runs(paths: list[str]) -> list[dict]:
    """The rows of evaluation files that hold signals and scores; a row of the test split is
    refused, for the confidence is then measured on what it was fitted on."""
    rows = []
    for path in paths:
        for number, row in numbered_rows(path):
            if row.get("split") == "test":
                raise DatasetError(f"{path}:{number}: a test-split run; fit on dev or train runs only")
            if set_aside_in_record(row):
                raise DatasetError(f"{path}:{number}: a run that set the reader's span aside for its confidence; "
                                   "fit on runs of deltaseek evaluate --abstain-margin 1, which answer every span")
            if row.get("error") or not isinstance(row.get("confidence_signals"), dict):
                continue  # a crashed run, or one from before runs recorded their signals
            rows.append({**row, "source": path})
    return rows


def signal_matrix(rows: list[dict]) -> np.ndarray:
    return np.array([[float(row["confidence_signals"].get(name, 0.0)) for name in CONFIDENCE_SIGNALS]
                     for row in rows])


def answer_signals(x: np.ndarray) -> np.ndarray:
    """The signal matrix as the answer's model reads it: the signals it leaves out are zeros (weighed 0)."""
    kept = x.copy()
    kept[:, [CONFIDENCE_SIGNALS.index(name) for name in ANSWER_LEAVES_OUT]] = 0.0
    return kept


def fit(rows: list[dict], direct_precision: float = 0.75, max_false_abstention: float = 0.20, method: str = "sigmoid",
        seed: int = 0) -> tuple[ConfidenceModel, list[float], list[bool]]:
    """The model fitted on `rows`, each row's held-out confidence as the program would show it (its
    fold's, from models fitted on the other folds; a span the abstain margin sets aside taken as no
    answer, with the abstention's confidence), and whether what it would show is right."""
    if len(rows) < MIN_RUNS:
        raise DatasetError(f"{len(rows)} usable runs; the confidence model needs at least {MIN_RUNS}")
    x = signal_matrix(rows)
    right = np.array([is_right(row["scores"]["token_f1"]) for row in rows], dtype=int)
    unanswerable = np.array([row.get("gold", {}).get("answerability") == "unlikely" for row in rows], dtype=int)
    abstaining = np.array([bool(row["confidence_signals"].get("abstains")) for row in rows])
    answered = right[~abstaining]
    if min(answered.sum(), len(answered) - answered.sum()) < FOLDS:
        raise DatasetError(f"{answered.sum()} of {len(answered)} answers right: too few of one kind to tell apart")
    groups = np.array([str(row.get("group") or row.get("id") or i) for i, row in enumerate(rows)])
    ids = np.array([str(row.get("id") or i) for i, row in enumerate(rows)])
    answer, answer_held = calibrated_linear(answer_signals(x)[~abstaining], answered, method, seed,
                                            fold_groups(groups[~abstaining], ids[~abstaining], answered))
    no_answer, no_answer_held = calibrated_linear(x, unanswerable, method, seed, fold_groups(groups, ids, unanswerable))
    held = no_answer_held.copy()  # an abstention's confidence; a run that answered, its answer's
    held[~abstaining] = answer_held
    answers = [i for i, row in enumerate(rows) if not abstaining[i] and row.get("answerability") != "proxy_only"]
    # The confidence is a calibrated probability, so the bound is the precision asked itself: an answer
    # below it is, by the program's own estimate, right less often than `direct` says. The least bound
    # at which these held-out answers reached the precision sits lower and fell short on articles left out.
    bound = direct_precision
    least = direct_bound([held[i] for i in answers], [bool(right[i]) for i in answers], direct_precision)
    labelled = [i for i in answers if held[i] >= bound]
    margin, abstentions = abstain_margin(rows, list(held), list(no_answer_held), max_false_abstention)
    aside = set_aside(rows, list(held), list(no_answer_held), margin)
    shown, shown_right = held.copy(), right.copy()
    shown[aside], shown_right[aside] = no_answer_held[aside], unanswerable[aside]
    metrics = {"runs": len(rows), "right": int(right.sum()), "held_out_ece": round(float(expected_calibration_error(
                   list(shown), list(map(bool, shown_right)))), 4),
               "direct_share": round(len(labelled) / len(rows), 4),
               "direct_right": round(float(np.mean([right[i] for i in labelled])), 4) if labelled else 0.0,
               "least_direct_bound": round(least, 4),
               **abstentions, "trade_off": trade_off(rows, list(held), list(no_answer_held))}
    profiles = {run_profile(row) for row in rows}
    if len(profiles) > 1:
        raise DatasetError(f"runs of the profiles {', '.join(sorted(profiles))}: fit one model per profile")
    model = ConfidenceModel(
        **answer.model_dump(), direct_bound=math.floor(bound * 1e4) / 1e4, direct_precision=direct_precision,
        abstain_margin=margin, max_false_abstention=max_false_abstention, unanswerable=no_answer,
        metrics=metrics, profile=profiles.pop())
    return model, [float(c) for c in shown], [bool(r) for r in shown_right]


def calibrated_linear(x: np.ndarray, y: np.ndarray, method: str, seed: int,
                      groups: np.ndarray | None = None) -> tuple[CalibratedLinear, np.ndarray]:
    """A logistic regression (scikit-learn) of `y` on the signals `x` with its calibration map, and
    each row's held-out probability: of its fold, from a model and a map fitted on the other folds
    (`held_out_folds`: a group held out whole), so the figures are of questions neither saw. Where
    one outcome has fewer rows than there are folds (runs with no unanswerable question), the
    probability is its share, whatever the signals."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_predict

    if min(y.sum(), len(y) - y.sum()) < FOLDS:
        share = round(float(y.mean()), 5)
        constant = Linear(features=list(CONFIDENCE_SIGNALS), coef=[0.0] * len(CONFIDENCE_SIGNALS), intercept=0.0)
        return CalibratedLinear(linear=constant, calibration=[(0.0, share), (1.0, share)]), np.full(len(y), share)
    logistic = LogisticRegression(C=REGULARIZATION, max_iter=5000)
    folds = held_out_folds(x, y, groups, seed)
    raw = cross_val_predict(logistic, x, y, cv=folds, method="predict_proba")[:, 1]
    held = np.zeros(len(y))
    for fitted, held_out in folds:
        held[held_out] = CalibrationMap(method).fit(raw[fitted], y[fitted]).predict(raw[held_out])
    logistic.fit(x, y)
    linear = Linear(features=list(CONFIDENCE_SIGNALS), coef=[round(c, 5) for c in logistic.coef_[0]],
                    intercept=round(float(logistic.intercept_[0]), 5))
    points = [(round(a, 5), round(b, 5)) for a, b in CalibrationMap(method).fit(raw, y).points()]
    return CalibratedLinear(linear=linear, calibration=points), held


def fit_into(program, rows: list[dict], where: str) -> dict[str, float]:
    """`deltaseek optimize --train-reader`: the confidence model fitted on the program's runs of
    the dev split (`rows`, described by `where`) and set on its reader, so it follows the reader
    it was fitted with; with too few usable runs the reader carries none, and this says why.
    Returns the figures to log."""
    usable = [row for row in rows if not row.get("error") and isinstance(row.get("confidence_signals"), dict)]
    # a capable model's question that a failed check turned small is a run of the small profile:
    # the model describes the runs of the profile most of them ran as
    profiles = Counter(run_profile(row) for row in usable)
    if len(profiles) > 1:
        profile = profiles.most_common(1)[0][0]
        print(f"confidence: fitted on the {profiles[profile]} runs of the {profile} profile; "
              f"{len(usable) - profiles[profile]} run as another profile are left out")
        usable = [row for row in usable if run_profile(row) == profile]
    try:
        model, _, _ = fit(usable)
    except DatasetError as exc:
        print(f"confidence: not fitted on {where} ({exc}); the answers carry none")
        return {}
    model = model.model_copy(update={"fitted_on": {"runs": where}})
    program.reader = program.learned_reader().model_copy(update={"confidence": model})
    print(f"confidence fitted on {where} ({len(usable)} runs): calibration error out of fold "
          f"{model.metrics['held_out_ece']:.3f}; {direct_said(model)}")
    return {f"confidence_{name}": value for name, value in numeric_figures(model).items()} | {
        "confidence_direct_bound": model.direct_bound}


def direct_said(model: ConfidenceModel) -> str:
    """The `direct` bound as the fit's report says it, beside the least bound the held-out answers
    would have allowed; where no held-out answer reached it, that nothing will be labelled direct."""
    if not model.metrics["direct_share"]:
        return f"no answer will be labelled direct: no held-out answer's confidence reached {model.direct_bound}"
    return (f"direct at confidence >= {model.direct_bound}, {model.metrics['direct_share']:.0%} of the questions, "
            f"{model.metrics['direct_right']:.0%} of them right (held out, the least bound reaching "
            f"{model.direct_precision:.0%} right: {model.metrics.get('least_direct_bound')})")


def numeric_figures(model: ConfidenceModel) -> dict[str, float]:
    """The model's figures as numbers (MLflow's metrics, the fit's summary line): its metrics less
    the trade-off curve, which is printed as lines."""
    return {name: value for name, value in model.metrics.items() if name != "trade_off"}


def run_profile(row: dict) -> str:
    """The profile a run ran as; runs from before records named it are the embedded model's."""
    return row.get("profile") or "small"


class CalibrationMap:
    """The map from the linear model's probability to a calibrated one: Platt's sigmoid over its
    logit (`sigmoid`: smooth, two numbers, steady on a few hundred runs) or an isotonic regression
    (`isotonic`: any rising shape, steps that move with every run added). Saved as points."""

    def __init__(self, method: str = "sigmoid"):
        if method not in ("sigmoid", "isotonic"):
            raise ValueError(f"calibration {method!r}: choose sigmoid or isotonic")
        self.method = method

    def fit(self, raw: np.ndarray, y: np.ndarray) -> "CalibrationMap":
        from sklearn.isotonic import IsotonicRegression
        from sklearn.linear_model import LogisticRegression

        if self.method == "isotonic":
            self.model = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(raw, y)
        else:
            self.model = LogisticRegression(C=1e4).fit(_logit(raw), y)
        return self

    def predict(self, raw: np.ndarray) -> np.ndarray:
        if self.method == "isotonic":
            return self.model.predict(raw)
        return self.model.predict_proba(_logit(raw))[:, 1]

    def points(self) -> list[tuple[float, float]]:
        """The map as rising points, linear between them."""
        if self.method == "isotonic":
            xs, ys = self.model.X_thresholds_, self.model.y_thresholds_
        else:
            xs = np.linspace(0.0, 1.0, 201)
            ys = self.predict(xs)
        ys = np.maximum.accumulate(np.clip(ys, 0.0, 1.0))  # a sigmoid fitted falling would say less for more
        return [(round(float(a), 5), round(float(b), 5)) for a, b in zip(xs, ys)]


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p)).reshape(-1, 1)


def direct_bound(confidences: list[float], rights: list[bool], precision: float) -> float:
    """The least confidence at which the answers at or above it are right at least `precision`
    of the time; above every confidence (nothing labelled direct) where no bound reaches it."""
    for bound in sorted(set(confidences)):
        above = [r for c, r in zip(confidences, rights) if c >= bound]
        if above and sum(above) / len(above) >= precision:
            return float(bound)
    return 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", action="append", required=True, help="an evaluation results file (repeatable)")
    parser.add_argument("--reader", default="programs/compiled/reader.json", help="the reader file to save it in")
    parser.add_argument("--out", help="where to write the reader (default: over --reader)")
    parser.add_argument("--calibration", choices=("sigmoid", "isotonic"), default="sigmoid",
                        help="Platt's sigmoid (default) or an isotonic regression")
    parser.add_argument("--max-false-abstention", type=float, default=0.20,
                        help="the false abstention the abstain margin may reach on the runs of sets holding "
                             "unanswerable questions (default 0.20)")
    parser.add_argument("--direct-precision", type=float, default=0.75,
                        help="the least confidence labelled direct: the share of direct answers that should be right "
                             "(default 0.75)")
    args = parser.parse_args(argv)
    try:
        reader = load_reader(args.reader)
        rows = read_runs(args.runs)
        model, held_out, held_right = fit(rows, args.direct_precision, args.max_false_abstention, args.calibration)
    except (DatasetError, ProgramFileError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    command = " ".join(["python -m deltaseek.optimize.fit_confidence", *(sys.argv[1:] if argv is None else argv)])
    model = model.model_copy(update={"fitted_on": {"runs": args.runs, "command": command}})
    save_with_reader(reader, model, args.out or args.reader)
    print(json.dumps(numeric_figures(model)))
    print(f"{direct_said(model)}; the reader's spans set aside where the passages' not "
          f"stating the answer leads by more than {model.abstain_margin}")
    print("abstention on unanswerable questions at each limit of false abstention (held out):")
    print("\n".join(f"  false <= {p['max_false_abstention']:.0%}: margin {p['margin']:.4f}, abstention {p['abstention']:.1%} "
                    f"at {p['false_abstention']:.1%} false" for p in model.metrics["trade_off"]))
    print("held out (five folds, a group held out whole) on these runs:")
    print("\n".join(reliability_lines(held_out, held_right)))
    return 0


def save_with_reader(reader: ReaderModel, model: ConfidenceModel, path: str) -> None:
    """Save `reader` at `path` with `model` as its confidence, its adapter named as the saved file names it."""
    reader.model_copy(update={"confidence": model, "adapter": _relative(reader.adapter, path)}).save(path)


def _relative(adapter: str | None, reader_path: str) -> str | None:
    """The adapter's path as the saved reader names it: beside it, relative to its folder."""
    if not adapter:
        return adapter
    path, folder = Path(adapter), Path(reader_path).absolute().parent
    return str(path.relative_to(folder)) if path.is_relative_to(folder) else str(path)


if __name__ == "__main__":
    sys.exit(main())
