"""Three rules for setting the reader's span aside, on the confidence fit's runs (run from the
repository root):

    python docs/experiments/abstain_rules.py results/rule/runs-squad2-fit.jsonl results/rule/runs-hotpotqa-fit.jsonl

Each run's probabilities are held out as `fit_confidence.fit` holds them out (five folds): that
the span is right (p) and that the passages do not state the answer (q). For each rule, at each
limit of false abstention, the most abstention on the unanswerable questions any setting of it
reaches, on the runs of the sets holding unanswerable questions (the first file):
- bound: set aside where p < b (the abstain bound until 0f87e6c);
- likelier: where p < b and q > p;
- margin: where q - p > m (the abstain margin since 0f87e6c).
"""

import sys

import numpy as np

from deltaseek.metrics.calibration import is_right
from deltaseek.optimize import abstain_margin, fit_confidence

rows = fit_confidence.read_runs(sys.argv[1:])
x = fit_confidence.signal_matrix(rows)
right = np.array([is_right(r["scores"]["token_f1"]) for r in rows], dtype=int)
no_answer = np.array([r["gold"]["answerability"] == "unlikely" for r in rows], dtype=int)
abstained = np.array([bool(r["confidence_signals"].get("abstains")) for r in rows])
p = np.zeros(len(rows))
p[~abstained] = fit_confidence.calibrated_linear(x[~abstained], right[~abstained], "sigmoid", 0)[1]
q = fit_confidence.calibrated_linear(x, no_answer, "sigmoid", 0)[1]
spans = np.zeros(len(rows), bool)
spans[abstain_margin.readers_spans(rows)] = True
mixed = np.array([r["source"] == rows[0]["source"] for r in rows])
unanswerable, answerable = mixed & (no_answer == 1), mixed & (no_answer == 0)
rules = {"bound": lambda b: p < b, "likelier": lambda b: (p < b) & (q > p), "margin": lambda m: q - p > m}
settings = sorted(set(np.round(np.concatenate([p, q - p]), 4)))
print(f"{unanswerable.sum()} unanswerable, {answerable.sum()} answerable; {spans.sum()} spans the reader read")
for limit in (0.05, 0.10, 0.15, 0.20):
    line = [f"false <= {limit:.0%}:"]
    for name, sets_aside in rules.items():
        best = max(((out[unanswerable].mean(), out[answerable].mean(), s) for s in settings
                    for out in [abstained | (spans & sets_aside(s))] if out[answerable].mean() <= limit), default=None)
        line.append(f"{name} {best[0]:.1%} at {best[1]:.1%} ({best[2]:+.4f})" if best else f"{name} -")
    print("  ".join(line))
