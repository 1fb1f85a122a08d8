"""Write the question sets the shipped confidence model was fitted on (run from the repository root).

    python docs/experiments/confidence_fit_sets.py

- results/confidence/squad2_fit.jsonl: every question of SQuAD's dev split (893 of articles the ranker
  never trained on, 160 of them unanswerable: the split's own share, for a confidence fitted on a set
  with more of them believes more of the questions it will be asked have no answer);
- results/confidence/hotpotqa_fit.jsonl: every question of HotpotQA's train and dev splits (324), which
  no part of the reader trains on, relabelled dev so `evaluate --split dev` runs them all. HotpotQA's
  test split is never read.

The fit before this one drew 268 of the SQuAD dev questions (48 unanswerable) and every second
HotpotQA question (162): with about ten answers above 0.8 there, its `direct` bound hung on a handful.
"""

import json
from pathlib import Path

OUT = Path("results/confidence")


def rows(path: str) -> list[dict]:
    return [json.loads(line) for line in open(path, encoding="utf-8")]


def write(name: str, chosen: list[dict]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / name).write_text("".join(json.dumps(r) + "\n" for r in chosen), encoding="utf-8")
    print(f"{OUT / name}: {len(chosen)} questions")


write("squad2_fit.jsonl", [r for r in rows("datasets/squad2_articles.jsonl") if r["split"] == "dev"])
write("hotpotqa_fit.jsonl", [dict(r, split="dev") for r in rows("datasets/hotpotqa.jsonl")
                             if r["split"] in ("train", "dev")])
