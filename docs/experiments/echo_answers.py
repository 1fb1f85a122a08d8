"""The default program's answers under the echo scenario (the program's own moves, the reader's
answers), one row a question, to compare two commits on the same questions:

    python echo_answers.py TAG DATASET SPLIT [LIMIT]    # writes /tmp/measure-TAG-DATASET.json

Copy it out of the checkout before checking out an older commit; it imports only what both have.
"""
import json, sys, time
import dspy
from deltaseek import DeltaSeek, combined_metric
from deltaseek.optimize.agent_options import AgentOptions, build_tools_for
from deltaseek.optimize.evaluate import corpora_for
from deltaseek.optimize.run_tracking import split_examples
from deltaseek.optimize.scenario_lms import scenario_lm

tag, dataset, split = sys.argv[1], sys.argv[2], sys.argv[3]
limit = int(sys.argv[4]) if len(sys.argv) > 4 else None
_, examples = split_examples(dataset, split, "test", limit)
tools = build_tools_for(AgentOptions(corpus=corpora_for(examples), no_cache=True))
lm = scenario_lm("echo", tools[0].name, examples)
program = DeltaSeek(tools=tools)
rows, started = [], time.time()
with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
    for ex in examples:
        pred = program(question=ex.question)
        rows.append({"q": ex.question, "answer": pred.answer, "label": pred.answerability,
                     "score": combined_metric(ex, pred), "queries": [c["args"].get("query") for c in pred.tool_calls]})
print(tag, dataset, len(rows), "combined", round(sum(r["score"] for r in rows) / len(rows), 4), f"{time.time()-started:.0f}s")
json.dump(rows, open(f"/tmp/measure-{tag}-{dataset.split('/')[-1]}.json", "w"))
