"""A labeled set's own numeric answers written as a capable model rounds them, and rounded wrong: is
the rounding kept, and is a wrong one still named, against the passages a BM25 search for the
question finds? Train and dev questions only (the scored parts are not read); no model is loaded:

    python docs/experiments/rounded_numbers.py DATASET [--passages 6]

For each answer that is a number of at least 100 in a passage found, three answers are checked:
"about N" with N the number to two significant digits (right), "about M" with M 30% more, and the
number to two significant digits 30% more without "about" (both wrong).
"""
import argparse, collections, json, re
from deltaseek.programs.agent.checks import answer_failure
from deltaseek.programs.agent.scratchpad import Scratchpad
from deltaseek.programs.text import in_digits
from labeled_sets import facts_found, train_and_dev

args, examples, index = train_and_dev(argparse.ArgumentParser())


def two_digits(number: float) -> str:
    """The number to two significant digits, with its thousands separated: 48213 is "48,000"."""
    return f"{float(f'{number:.2g}'):,.0f}"


counts = collections.Counter()
for ex in examples:
    number = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*", in_digits(ex.answer))
    if not number or float(number[1]) < 100 or 1000 <= float(number[1]) <= 2100:  # a count or an amount, not a year
        continue
    facts = facts_found(index, ex.question, args.passages)
    if not any(ex.answer in f.text for f in facts):
        continue
    pad = Scratchpad(question=ex.question, facts=facts)
    value = float(number[1])
    cases = {"rounded, right": f"about {two_digits(value)}", "rounded, 30% more": f"about {two_digits(value * 1.3)}",
             "30% more, no 'about'": two_digits(value * 1.3)}
    counts["answers"] += 1
    for kind, answer in cases.items():
        reason = answer_failure(answer, pad, {"search_corpus", "finish"})
        counts[f"{kind}: {'kept' if reason is None else 'named'}"] += 1
        if (reason is None) != (kind == "rounded, right"):
            print(json.dumps({"id": ex.id, "gold": ex.answer, "answer": answer, "reason": reason}))
print(json.dumps({"dataset": args.dataset, **dict(sorted(counts.items()))}))
