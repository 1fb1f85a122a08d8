"""Do the checks keep a labeled set's own answers, read against the passages a search for the
question finds? The count of answers set aside, by reason, for the train and dev splits only
(the scored parts are not read), and each answer set aside by one program and kept by the other
when two are compared (run it at two commits). No model is loaded:

    python docs/experiments/labeled_answers_read.py DATASET [--passages 6] > rows.jsonl
"""
import argparse, collections, json, sys
from deltaseek.programs.agent.checks import answer_failure
from deltaseek.programs.agent.scratchpad import Scratchpad
from labeled_sets import facts_found, train_and_dev

args, examples, index = train_and_dev(argparse.ArgumentParser())
reasons = collections.Counter()
for ex in examples:
    facts = facts_found(index, ex.question, args.passages)
    if not any(ex.answer.lower() in f.text.lower() for f in facts):
        continue  # the answer is in none of the passages found: no check could keep it
    reason = answer_failure(ex.answer, Scratchpad(question=ex.question, facts=facts), {"search_corpus", "finish"})
    reasons[(reason or "kept").split(" (")[0].split(":")[0][:40]] += 1
    print(json.dumps({"id": ex.id, "answer": ex.answer, "reason": reason}))
print(json.dumps({"dataset": args.dataset, "read": sum(reasons.values()), "by_reason": reasons.most_common(8)}), file=sys.stderr)
