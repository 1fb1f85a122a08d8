"""How the confidence fit carries over to articles it never saw (run from the repository root).

    python docs/experiments/confidence_held_out_articles.py RUNS.jsonl [RUNS.jsonl ...]

Leaves one group of the fit runs out at a time, fits `optimize.fit_confidence.fit` on the rest and
shows the held-out group's answers as the program would: a span the abstain margin sets aside taken as
no answer, with the abstention's confidence. A group is a SQuAD article (the one article holding
unanswerable questions is cut in two halves by a hash of the id, or no fit would see one) or a
hash half of the other runs. Prints each group's calibration error and labels, then the pooled
ones, for each regularization asked (`--c`).
"""

import argparse
import hashlib
import json

from deltaseek.metrics.calibration import expected_calibration_error, is_right
from deltaseek.optimize import abstain_margin, fit_confidence

SQUAD_SOURCE = "../shared/data/squad2_train10/train-v2.0-first10.json"


def half(question_id: str) -> int:
    return int(hashlib.md5(question_id.encode()).hexdigest(), 16) % 2


def grouped_runs(paths: list[str]) -> list[dict]:
    squad = json.load(open(SQUAD_SOURCE, encoding="utf-8"))["data"]
    article = {qa["id"]: a["title"] for a in squad for p in a["paragraphs"] for qa in p["qas"]}
    rows = fit_confidence.read_runs(paths)
    with_unanswerable = {article.get(r["id"]) for r in rows if r["gold"]["answerability"] == "unlikely"}
    for row in rows:
        title = article.get(row["id"])
        row["group"] = (f"{title} {half(row['id'])}" if title in with_unanswerable and len(with_unanswerable) == 1
                        else title or f"{row['source']} {half(row['id'])}")
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
    args = parser.parse_args()
    rows = grouped_runs(args.runs)
    for c in args.c or [fit_confidence.REGULARIZATION]:
        fit_confidence.REGULARIZATION = c
        pooled, pooled_rows = [], []
        print(f"C = {c}")
        for group in sorted({r["group"] for r in rows}):
            held = [r for r in rows if r["group"] == group]
            model, _, _ = fit_confidence.fit([r for r in rows if r["group"] != group])
            results = [shown(model, r) for r in held]
            print(f"  {group[:40]:40s} {figures(results, held)}")
            pooled += results
            pooled_rows += held
        print(f"  {'pooled':40s} {figures(pooled, pooled_rows)}")


if __name__ == "__main__":
    main()
