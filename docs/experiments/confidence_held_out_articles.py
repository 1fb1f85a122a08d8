"""How the confidence fit carries over to articles it never saw (run from the repository root).

    python docs/experiments/confidence_held_out_articles.py RUNS.jsonl [RUNS.jsonl ...]

Leaves one group of the fit runs out at a time, fits `optimize.fit_confidence.fit` on the rest and
shows the held-out group's answers as the program would: a span the abstain margin sets aside taken as
no answer, with the abstention's confidence. A group is a SQuAD article (the one article holding
unanswerable questions is cut into five pieces by a hash of the id, as the fit's own folds cut it,
or no fit would see one, and with halves each held-out half is scored by a model that saw the
outcome half as often as the rest were; `--whole` keeps it whole) or a hash half of the other runs.
Prints each group's calibration error and labels, then the pooled
ones, for each regularization asked (`--c`).

With `--bound`, it also chooses the `direct` bound on the pooled held-out answers (the least
confidence at which those at or above it were right `--direct-precision` of the time), and with
`--reader` saves it into that reader's confidence model: the bound a question of an article the
fit never saw earns, where `fit_confidence`'s five folds shared articles with the fit while runs
carried no group. A run's own `group`, where it has one, is its article.
"""

import argparse
import json
import math

from deltaseek.metrics.calibration import expected_calibration_error, is_right
from deltaseek.optimize import abstain_margin, fit_confidence
from deltaseek.optimize.confidence_folds import FOLDS, id_piece
from deltaseek.programs.agent.learned_reader.model import load_reader

SQUAD_SOURCE = "../shared/data/squad2_train10/train-v2.0-first10.json"


def grouped_runs(paths: list[str], whole: bool = False) -> list[dict]:
    squad = json.load(open(SQUAD_SOURCE, encoding="utf-8"))["data"]
    article = {qa["id"]: a["title"] for a in squad for p in a["paragraphs"] for qa in p["qas"]}
    rows = fit_confidence.read_runs(paths)
    titles = [row.get("group") or article.get(row["id"]) for row in rows]  # a run's own group, else its article
    with_unanswerable = {t for t, r in zip(titles, rows) if r["gold"]["answerability"] == "unlikely"}
    for title, row in zip(titles, rows):
        cut = title in with_unanswerable and len(with_unanswerable) == 1 and not whole
        row["group"] = (f"{title} {id_piece(row['id'], FOLDS)}" if cut
                        else title or f"{row['source']} {id_piece(row['id'], 2)}")
    return rows


def shown(model, row: dict) -> tuple[float, bool, bool, bool]:
    """The confidence shown, whether it is right, whether the run abstained, whether it is `direct`."""
    signals = row["confidence_signals"]
    unanswerable = row["gold"]["answerability"] == "unlikely"
    if signals.get("abstains"):
        return model.abstention_probability(signals), unanswerable, True, False
    confidence = model.probability(signals)
    if abstain_margin.set_aside([row], [confidence], [model.abstention_probability(signals)], model.abstain_margin):
        return model.abstention_probability(signals), unanswerable, True, False
    direct = confidence >= model.direct_bound and row.get("answerability") != "proxy_only"
    return confidence, is_right(row["scores"]["token_f1"]), False, direct


def figures(results: list[tuple[float, bool, bool, bool]], rows: list[dict]) -> str:
    confidences, rights, abstained, direct = (list(c) for c in zip(*results))
    line = (f"n={len(rows):3d} ECE {expected_calibration_error(confidences, rights):.3f} "
            f"direct {sum(direct) / len(rows):.0%}, right {sum(r for r, d in zip(rights, direct) if d) / max(sum(direct), 1):.0%}")
    unanswerable = [r["gold"]["answerability"] == "unlikely" for r in rows]
    if any(unanswerable):
        answerable = len(rows) - sum(unanswerable)
        line += (f"; abstention {sum(a for a, u in zip(abstained, unanswerable) if u) / sum(unanswerable):.0%}"
                 f" at {sum(a for a, u in zip(abstained, unanswerable) if not u) / answerable:.0%} false")
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--c", type=float, action="append", help="the logistic regressions' C (repeatable)")
    parser.add_argument("--bound", action="store_true", help="choose the direct bound on the held-out answers")
    parser.add_argument("--direct-precision", type=float, default=0.75)
    parser.add_argument("--reader", help="save the bound into this reader file's confidence model")
    parser.add_argument("--whole", action="store_true",
                        help="hold the one article with unanswerable questions out whole, not in halves")
    args = parser.parse_args()
    rows = grouped_runs(args.runs, args.whole)
    for c in args.c or [fit_confidence.REGULARIZATION]:
        fit_confidence.REGULARIZATION = c
        print(f"C = {c}")
        pooled, pooled_rows = held_out(rows, log=print)
        print(f"  {'pooled':40s} {figures(pooled, pooled_rows)}")
        if args.bound:
            save_bound(pooled, pooled_rows, args)


def held_out(rows: list[dict], log=None) -> tuple[list[tuple[float, bool, bool, bool]], list[dict]]:
    """Each group's runs as a fit on the other groups shows them (`shown`), pooled, with the runs in
    the same order; `log` gets each group's figures."""
    pooled, pooled_rows = [], []
    for group in sorted({r["group"] for r in rows}):
        held = [r for r in rows if r["group"] == group]
        model, _, _ = fit_confidence.fit([r for r in rows if r["group"] != group])
        results = [shown(model, r) for r in held]
        if log:
            log(f"  {group[:40]:40s} {figures(results, held)}")
        pooled += results
        pooled_rows += held
    return pooled, pooled_rows


def held_out_bound(pooled: list[tuple[float, bool, bool, bool]], rows: list[dict],
                   precision: float) -> tuple[float, list[bool]]:
    """The `direct` bound chosen on the pooled held-out answers, and whether each answer at or above it was right."""
    answers = [(confidence, right) for (confidence, right, abstained, _), row in zip(pooled, rows)
               if not abstained and row.get("answerability") != "proxy_only"]
    bound = fit_confidence.direct_bound([c for c, _ in answers], [r for _, r in answers], precision)
    return bound, [r for c, r in answers if c >= bound]


def save_bound(pooled: list[tuple[float, bool, bool, bool]], rows: list[dict], args) -> None:
    bound, above = held_out_bound(pooled, rows, args.direct_precision)
    held_out = {"direct_bound": round(bound, 4), "direct_share": round(len(above) / len(rows), 4),
                "direct_right": round(sum(above) / max(1, len(above)), 4), "groups": len({r["group"] for r in rows})}
    print(f"  direct bound, one group held out at a time: {held_out}")
    if args.reader:
        reader = load_reader(args.reader)
        model = reader.confidence.model_copy(update={
            "direct_bound": math.floor(bound * 1e4) / 1e4,
            "metrics": {**reader.confidence.metrics, "direct_bound_by_group": held_out},
            "fitted_on": {**reader.confidence.fitted_on, "direct_bound": "python docs/experiments/"
                          "confidence_held_out_articles.py RUNS --bound --reader READER (one group held out at a time)"}})
        fit_confidence.save_with_reader(reader, model, args.reader)


if __name__ == "__main__":
    main()
