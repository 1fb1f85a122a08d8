"""What the scripts that read a labeled set's own answers share: the set's train and dev questions
that have an answer (the scored parts are never read), the collection they search, and the facts
a BM25 search finds, as the agent holds them."""
import argparse

from deltaseek.optimize.evaluate import corpora_for, load_dataset
from deltaseek.programs.agent.scratchpad import Fact
from deltaseek.programs.index import CorpusIndex


def train_and_dev(parser: argparse.ArgumentParser):
    """The parsed arguments (DATASET, --passages), the answered train and dev examples, the index."""
    parser.add_argument("dataset")
    parser.add_argument("--passages", type=int, default=6)
    args = parser.parse_args()
    examples = [ex for ex in load_dataset(args.dataset).examples
                if ex.get("split") in ("train", "dev") and ex.get("answer") and ex.get("answerability") != "unlikely"]
    return args, examples, CorpusIndex.open(corpora_for(examples) or None)


def facts_found(index: CorpusIndex, query: str, k: int) -> list[Fact]:
    """The passages a search for `query` finds, as facts of the first step."""
    return [Fact(source=h.passage.id, title=h.passage.title, text=h.passage.text, step=1) for h in index.search(query, k=k)]
