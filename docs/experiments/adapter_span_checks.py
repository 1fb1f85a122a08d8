"""The reader's span on SQuAD's dev articles, reading only: the adapter's span under the checks
that replace it (`span_checks`), the adapter's span unchecked, the ranker alone.

    python docs/experiments/adapter_span_checks.py [QUESTIONS]     # default 200

Each dev question (a seeded sample; dev articles only, never the scored ones) is read as training
reads it: its question as the query, the six passages it finds. F1 is over the answerable ones, an
abstention counting 0. Run at the commit before the checks to read the span held to the ranker's
three best candidates.
"""

from __future__ import annotations

import random
import sys
from unittest import mock

from deltaseek.bundled import labeled_set
from deltaseek.metrics.answers import f1_score
from deltaseek.optimize.evaluate import corpora_for, load_dataset, select
from deltaseek.optimize.train_reader import read_facts
from deltaseek.programs.agent.learned_reader import extract_answer, read, shipped_reader
from deltaseek.programs.index import CorpusIndex


def main(questions: int = 200) -> None:
    examples = load_dataset(str(labeled_set("squad2_articles"))).examples
    index = CorpusIndex.open(corpora_for(examples) or None)
    dev = read_facts(random.Random(1).sample(select(examples, "dev"), questions), index)
    reader = shipped_reader()
    variants = {"checked (shipped)": (reader, read.span_failure), "unchecked": (reader, lambda *a, **k: None),
                "ranker alone": (reader.without_adapter(), read.span_failure)}
    answerable = [q for q in dev if q.answers]
    for name, (variant, check) in variants.items():
        with mock.patch.object(read, "span_failure", check):
            total = 0.0
            for q in answerable:
                found = extract_answer(q.question, q.facts, variant)
                span = found[0].span if found else ""  # shown, as a best guess where unsure
                total += max(f1_score(span, gold) for gold in q.answers) if span else 0.0
        print(f"{name}: F1 {total / len(answerable):.3f} on {len(answerable)} answerable of {len(dev)} dev questions")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
