"""Which rule for the `direct` bound keeps `direct` right on articles it never saw (run from the repository root).

    python docs/experiments/direct_bound_rules.py RUNS.jsonl [RUNS.jsonl ...] [--reader READER]

Shows the fit runs' answers as models fitted without their group show them (one group held out at a
time, as `confidence_held_out_articles.py` does, the question's surprise weighed for abstention alone
as the shipped model weighs it), then, for each rule, leaves one group out again: the bound chosen on
the other groups' answers, applied to the left-out group's, pooled. The rules: the least bound at
which the answers at or above it were right 75% of the time (`least`), the same with a Wilson lower
bound of 90% or 95% reaching 75% (`wilson90`, `wilson95`), and the calibrated confidence's own 0.75
(`own`, no choice). With `--reader`, refits that reader's confidence model on every run (its bound the precision,
`own`) and records the pooled figures beside the fit's own.
"""

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from confidence_held_out_articles import grouped_runs, held_out  # noqa: E402
from question_surprise_fit import SIGNAL  # noqa: E402

from deltaseek.optimize import fit_confidence  # noqa: E402
from deltaseek.programs.agent.learned_reader.model import load_reader  # noqa: E402

PRECISION = 0.75


def wilson_low(right: int, n: int, z: float) -> float:
    p = right / n
    return (p + z * z / (2 * n) - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)


def least_bound(answers: list[tuple[float, bool]], reaches) -> float:
    """`fit_confidence.direct_bound` with another test of the answers at or above a bound."""
    for bound in sorted({c for c, _ in answers}):
        above = [r for c, r in answers if c >= bound]
        if above and reaches(sum(above), len(above)):
            return bound
    return 1.0


RULES = {"least": lambda a: fit_confidence.direct_bound([c for c, _ in a], [r for _, r in a], PRECISION),
         "wilson90": lambda a: least_bound(a, lambda k, n: wilson_low(k, n, 1.2816) >= PRECISION),
         "wilson95": lambda a: least_bound(a, lambda k, n: wilson_low(k, n, 1.6449) >= PRECISION),
         "own": lambda a: PRECISION}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--reader", help="set this reader file's bound to the precision and record the figures")
    args = parser.parse_args()
    fit_confidence.ANSWER_LEAVES_OUT = (SIGNAL,)
    rows = grouped_runs(args.runs)
    pooled, pooled_rows = held_out(rows)
    answers = [(c, r, row["group"]) for (c, r, abstained, _), row in zip(pooled, pooled_rows)
               if not abstained and row.get("answerability") != "proxy_only"]
    groups = sorted({g for _, _, g in answers})
    print(f"{len(pooled_rows)} runs, {len(answers)} answers, {len(groups)} groups")
    for name, rule in RULES.items():
        direct = []
        for group in groups:
            bound = rule([(c, r) for c, r, g in answers if g != group])
            direct += [r for c, r, g in answers if g == group and c >= bound]
        print(f"{name:9s} bound on every group {rule([(c, r) for c, r, _ in answers]):.4f}; groups left out: "
              f"direct {len(direct)} ({len(direct) / len(pooled_rows):.1%}), right {sum(direct)} "
              f"({sum(direct) / max(1, len(direct)):.1%})")
    if args.reader:
        save_refit(rows, [r for c, r, _ in answers if c >= PRECISION], len(pooled_rows), len(groups), args.reader)


def save_refit(rows: list[dict], above: list[bool], runs: int, groups: int, path: str) -> None:
    """Refit on every run (the model the reader holds, but for its bound and figures) and save it there."""
    reader = load_reader(path)
    model, _, _ = fit_confidence.fit(rows, direct_precision=PRECISION)
    model = model.model_copy(update={
        "metrics": {**model.metrics, "direct_bound_by_group": {
            "direct_bound": PRECISION, "direct_share": round(len(above) / runs, 4),
            "direct_right": round(sum(above) / max(1, len(above)), 4), "groups": groups}},
        "fitted_on": {**reader.confidence.fitted_on, "direct_bound": "the precision itself "
                      "(python docs/experiments/direct_bound_rules.py RUNS --reader READER)"}})
    fit_confidence.save_with_reader(reader, model, path)
    print(f"wrote {path}: {fit_confidence.direct_said(model)}")


if __name__ == "__main__":
    main()
