"""The reader's F1 where the gold was among what it read (run from the repository root):

    python docs/experiments/gold_read.py squad2 results/full/new-squad2-*.jsonl

An evaluation's results file keeps each run's searches, not the passages they returned. BM25 over
a bundled corpus is deterministic, so each run's executed `search_corpus` calls are replayed in
order, skipping the passages already returned as the tool does, and a count that differs from the
run's own is reported. On the answerable questions: the share whose gold answer (or an alias)
stands in the passages read, and F1 there and elsewhere.
"""

import json
import statistics
import sys

import dspy

from deltaseek.bundled import corpus_path
from deltaseek.optimize.compare import gold_in
from deltaseek.programs.index import CorpusIndex
from deltaseek.programs.tools.corpus import LocalCorpusSearch

corpus, paths = sys.argv[1], sys.argv[2:]
rows = [json.loads(line) for path in paths for line in open(path)]
search = LocalCorpusSearch(CorpusIndex.open([str(corpus_path(corpus))]))
counts_differ, read, unread = 0, [], []
for row in rows:
    if row["gold"]["answerability"] != "direct":
        continue
    seen, passages = set(), []
    for call in row["tool_calls"]:
        if call["tool"] != search.name or not call.get("executed"):
            continue
        result = search(call["args"]["query"], frozenset(seen))
        counts_differ += len(result.hits) != call.get("result_count")
        seen |= {hit.id for hit in result.hits}
        passages += [f"{hit.title} {hit.text}" for hit in result.hits]
    gold = dspy.Example(answer=row["gold"]["answer"], aliases=row["gold"].get("aliases") or [])
    (read if gold_in(gold, " ".join(passages)) else unread).append(row["scores"]["token_f1"])
answerable = len(read) + len(unread)
print(f"{answerable} answerable; the gold among the passages read for {len(read)} ({len(read) / answerable:.1%}): "
      f"F1 {statistics.fmean(read):.3f} there, {statistics.fmean(unread) if unread else 0:.3f} elsewhere; "
      f"replayed searches whose count differs from the run's: {counts_differ}")
