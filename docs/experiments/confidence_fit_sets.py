"""Write the question sets the shipped confidence model was fitted on (run from the repository root).

    python docs/experiments/confidence_fit_sets.py

- results/confidence/squad2_fit.jsonl: SQuAD's dev split (articles the ranker never trained on),
  48 unanswerable and 220 answerable questions drawn with a seeded shuffle, interleaved: the dev
  split's own share of unanswerable questions (160 of 893), for a confidence fitted on a set with
  more of them believes more of the questions it will be asked have no answer (the first fit drew
  100 of them, a third, and its abstentions claimed twice the 22% they were right on the scored
  articles);
- results/confidence/hotpotqa_fit.jsonl: every second question of HotpotQA's train and dev splits
  (162), relabelled dev so `evaluate --split dev` runs them all. HotpotQA's test split is never read.
"""

import json
import random
from pathlib import Path

OUT = Path("results/confidence")


def rows(path: str) -> list[dict]:
    return [json.loads(line) for line in open(path, encoding="utf-8")]


def write(name: str, chosen: list[dict]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / name).write_text("".join(json.dumps(r) + "\n" for r in chosen), encoding="utf-8")
    print(f"{OUT / name}: {len(chosen)} questions")


dev = [r for r in rows("datasets/squad2_articles.jsonl") if r["split"] == "dev"]
unanswerable = [r for r in dev if r["answerability"] == "unlikely"]
answerable = [r for r in dev if r["answerability"] == "direct"]
random.Random(0).shuffle(unanswerable)
random.Random(0).shuffle(answerable)
unanswerable, answerable = unanswerable[:round(220 * len(unanswerable) / len(answerable))], answerable[:220]
interleaved = []
while unanswerable or answerable:
    if unanswerable:
        interleaved.append(unanswerable.pop())
    for _ in range(2):
        if answerable:
            interleaved.append(answerable.pop())
write("squad2_fit.jsonl", interleaved)
write("hotpotqa_fit.jsonl", [dict(r, split="dev") for r in rows("datasets/hotpotqa.jsonl")
                             if r["split"] in ("train", "dev")][::2])
