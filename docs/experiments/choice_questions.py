"""Questions that name two options for their answer ("Which opened first, Vey Bridge or Tern
Hall?"): is the gold one of the options the question is read to name, and which option does the
reader adapter find likelier as its answer, after the best sentences of the passages a search for
the question and one for each option find? Train and dev splits only (the scored parts are not
read):

    python docs/experiments/choice_questions.py DATASET [--passages 6] > rows.jsonl
"""
import argparse, collections, json, re, sys

from deltaseek.metrics.answers import f1_score as token_f1
from deltaseek.programs.agent.learned_reader import choice_options, shipped_reader
from labeled_sets import facts_found, train_and_dev

args, examples, index = train_and_dev(argparse.ArgumentParser())
adapter = shipped_reader().adapter_reader()
llama = adapter._model()
tally = collections.Counter()
for ex in examples:
    options = choice_options(ex.question)
    if not options:
        continue
    found = [facts_found(index, query, k) for query, k in [(ex.question, args.passages)] + [(o, 3) for o in options]]
    facts = list({fact.source: fact for facts in found for fact in facts}.values())
    scored = adapter.option_log_probabilities(ex.question, facts, options)
    if scored is None:
        continue
    sums, _ = scored
    lengths = [len(llama.tokenize(f" {o}".encode(), add_bos=False, special=False)) + 1 for o in options]
    means = [s / n for s, n in zip(sums, lengths)]
    gold = [token_f1(o, ex.answer) for o in options]
    right = max(range(2), key=lambda i: gold[i]) if max(gold) > 0 and gold[0] != gold[1] else None
    by_sum, by_mean = max(range(2), key=lambda i: sums[i]), max(range(2), key=lambda i: means[i])
    tally["questions"] += 1
    tally["gold is an option"] += right is not None
    tally["sum right"] += by_sum == right
    tally["mean right"] += by_mean == right
    tally["first right"] += right == 0
    print(json.dumps({"id": ex.id, "question": ex.question, "gold": ex.answer, "options": options, "sums": sums,
                      "means": means, "right": right}))
print(json.dumps({"dataset": args.dataset, **tally}), file=sys.stderr)
