"""Does the reader adapter learn to doubt a question its passage nearly answers, when it trains on
unanswerable variants of its own training questions? (Run from the repository root; needs the
`train` extra.)

    python docs/experiments/unanswerable_variants.py --out /tmp/variants.gguf [--share 0.25]

The shipped adapter's training articles hold no unanswerable question: its "not stated" targets
are passages that miss the answer. A crowd-written unanswerable question is another kind: its
passage holds a plausible answer, and one word of the question makes it wrong. This writes such
variants of the train questions whose sentences hold their answer, by three rules of English, each
used only where the word it brings is nowhere in the sentences shown:

- an opposite: "Which was the first bridge over the river?" -> "Which was the last bridge ...";
- another number: "What opened in 1921?" -> "What opened in 1925?";
- another name of the training questions: "When did Marlow join the band?" -> "When did Hensley
  join the band?".

The variants (target "not stated") join a `--share` of the train questions, the adapter trains as
the shipped one did (same steps, seed, rank and dev choice), and both adapters then read, as
llama.cpp reads at run time, every dev question of the dev article that holds unanswerable
questions: how well the adapter's doubt separates them (ROC AUC), abstention at 10% and 20% false
abstention, and F1 on the answerable ones at each file's own bound.
"""

import argparse
import json
import random
import re
from dataclasses import replace
from pathlib import Path

from sklearn.metrics import roc_auc_score

from deltaseek.bundled import labeled_set
from deltaseek.metrics.answers import f1_score
from deltaseek.optimize import train_adapter
from deltaseek.programs.agent.learned_reader.adapter import ReaderAdapter
from deltaseek.programs.agent.learned_reader.prompt import (NOT_STATED, TRAIN_SENTENCES, best_sentences,
                                                             reader_prompt)

OPPOSITES = [("first", "last"), ("largest", "smallest"), ("biggest", "smallest"), ("most", "least"),
             ("highest", "lowest"), ("earliest", "latest"), ("oldest", "newest"), ("longest", "shortest"),
             ("best", "worst"), ("before", "after"), ("increase", "decrease"), ("increased", "decreased"),
             ("north", "south"), ("east", "west"), ("maximum", "minimum"), ("more", "fewer"),
             ("higher", "lower"), ("older", "younger"), ("early", "late"), ("won", "lost"), ("win", "lose"),
             ("began", "ended"), ("opened", "closed"), ("above", "below"), ("male", "female"),
             ("inside", "outside"), ("major", "minor"), ("rise", "fall"), ("gained", "lost")]
OPPOSITE = {a: b for a, b in OPPOSITES} | {b: a for a, b in OPPOSITES}
NUMBER = re.compile(r"\b\d{1,4}\b")
NAME = re.compile(r"(?<!^)(?<![.?!] )\b[A-Z][a-z]{2,}\b")
NOT_NAMES = {"The", "What", "Which", "Who", "When", "Where", "How", "Why", "Whose", "Whom", "In", "On", "Of"}


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def opposite(question: str, shown: set[str], rng: random.Random) -> str | None:
    for word in re.findall(r"[A-Za-z]+", question):
        other = OPPOSITE.get(word.lower())
        if other and other not in shown:
            return re.sub(rf"\b{word}\b", other, question, count=1)
    return None


def another_number(question: str, shown: set[str], rng: random.Random) -> str | None:
    found = NUMBER.search(question)
    if not found:
        return None
    value = int(found.group())
    for _ in range(10):
        new = value + rng.choice([-1, 1]) * rng.randint(1, 9 if value > 31 else 3)
        if new > 0 and str(new) not in shown:
            return question[:found.start()] + str(new) + question[found.end():]
    return None


def another_name(question: str, shown: set[str], rng: random.Random, names: list[str]) -> str | None:
    own = [n for n in NAME.findall(question) if n not in NOT_NAMES and n.lower() in shown]
    if not own:
        return None
    for _ in range(10):
        new = rng.choice(names)
        if new.lower() not in shown and new.lower() not in words(question):
            return re.sub(rf"\b{own[0]}\b", new, question, count=1)
    return None


def variants(train: list, share: float, seed: int = 0) -> list:
    """"Not stated" variants of a `share` of the train questions whose sentences hold their answer."""
    rng = random.Random(seed)
    names = sorted({n for ex in train for n in NAME.findall(ex.question) if n not in NOT_NAMES})
    made = []
    for ex in train:
        if not ex.held or rng.random() >= share:
            continue
        shown = words(best_sentences(ex.question, ex.facts, TRAIN_SENTENCES).text)
        rules = [lambda q, s, r: opposite(q, s, r), another_number, lambda q, s, r: another_name(q, s, r, names)]
        rng.shuffle(rules)
        question = next((q for rule in rules if (q := rule(ex.question, shown, rng))), None)
        if question is None:
            continue
        passage = best_sentences(question, ex.facts, TRAIN_SENTENCES)
        made.append(replace(ex, id=f"{ex.id}-variant", question=question, prompt=reader_prompt(question, passage),
                            target=NOT_STATED, answers=(), held=False))
    return made


def read_figures(path: Path, dev: list) -> dict:
    bound = ReaderAdapter(path).info.bound
    rows = train_adapter.runtime_readings(path, dev)
    unanswerable = [not ex.answers for ex, _, _ in rows]
    doubts = [d for _, _, d in rows]
    figures = {"questions": len(rows), "unanswerable": sum(unanswerable), "bound": bound,
               "auc": round(roc_auc_score(unanswerable, doubts), 4)}
    answerable = sorted(d for (ex, _, d) in rows if ex.answers)
    for limit in (0.10, 0.20):
        at = answerable[int(len(answerable) * (1 - limit))]  # the doubt that many answerable reach
        figures[f"abstention_at_{int(limit * 100)}"] = round(
            sum(d >= at for d, u in zip(doubts, unanswerable) if u) / sum(unanswerable), 4)
    f1 = [max(f1_score(span, g) for g in ex.answers) if d < bound else 0.0 for ex, span, d in rows if ex.answers]
    figures["f1_answerable_at_bound"] = round(sum(f1) / len(f1), 4)
    figures["abstention_at_bound"] = round(sum(d >= bound for d, u in zip(doubts, unanswerable) if u)
                                           / sum(unanswerable), 4)
    figures["false_abstention_at_bound"] = round(sum(d >= bound for d in answerable) / len(answerable), 4)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="where to write the adapter trained with the variants")
    parser.add_argument("--share", type=float, default=0.25)
    parser.add_argument("--article", default="The Legend of Zelda: Twilight Princess",
                        help="the dev article (group) whose questions are read")
    parser.add_argument("--score-only", action="store_true", help="read with --out as it is; train nothing")
    args = parser.parse_args()
    dataset = str(labeled_set("squad2_articles"))
    parts = train_adapter.dataset_examples([dataset])
    made = variants(parts["train"], args.share)
    print(f"{len(made)} variants of {len(parts['train'])} train questions, e.g.:")
    for ex in made[:8]:
        print("  ", ex.question)
    if not args.score_only:
        trained = {**parts, "train": parts["train"] + made}
        train_adapter.fit_adapter(trained, args.out, {"command": "docs/experiments/unanswerable_variants.py",
                                                      "variants": len(made)})
    groups = {row["id"]: row.get("group") for row in map(json.loads, open(dataset, encoding="utf-8"))}
    dev = [ex for ex in parts["dev"] if groups.get(ex.id) == args.article]
    shipped = Path("programs/compiled/reader-adapter.gguf")
    for name, path in (("shipped", shipped), ("with variants", Path(args.out))):
        print(name, json.dumps(read_figures(path, dev)))


if __name__ == "__main__":
    main()
