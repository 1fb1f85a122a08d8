"""Convert the bundled HotpotQA train sample into deltaseek's labeled format and corpus.

    python -m deltaseek.optimize.convert_hotpotqa [--source DIR] [--datasets DIR]

Reads train500.jsonl (500 two-hop questions of HotpotQA *train* with their supporting sentences;
see PROVENANCE.md next to it) and writes datasets/hotpotqa.jsonl, every question split by a
seeded hash of the question (`TEST_SHARE` only scored), and datasets/corpus/hotpotqa_corpus.jsonl,
every distinct supporting sentence as a passage without a title: each question's sentences sit
among the other questions' as distractors. Running it again on the same input rewrites both
files byte for byte.

The set stands for a user's new dataset: the shipped reader is not trained on it.
HotpotQA is CC BY-SA 4.0 (Yang et al., 2018); the attribution is in datasets/README.md. The
HotpotQA dev split is never used here: it is kept for independent evaluation.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from deltaseek.optimize.convert_musique import (DEFAULT_DATASETS, PROJECT_ROOT, converter_arguments, report_written,
                                               write_jsonl)

DEFAULT_SOURCE = PROJECT_ROOT.parent / "shared" / "data" / "hotpotqa_train500"
SOURCE_FILE = "train500.jsonl"
CORPUS_NAME = "hotpotqa"
SPLIT_SEED = "deltaseek-hotpotqa-split-v1"
TEST_SHARE, DEV_SHARE = 0.35, 0.15
"""About 175 questions only scored, 75 to choose on, 250 to train on."""


def question_hash(text: str, seed: str = SPLIT_SEED) -> int:
    """A seeded hash of a text, 0-99: the same text always lands in the same bucket."""
    return int(hashlib.sha256(f"{seed}:{text}".encode()).hexdigest()[:8], 16) % 100


def question_split(question: str) -> str:
    bucket = question_hash(" ".join(question.split()))
    return "test" if bucket < TEST_SHARE * 100 else "dev" if bucket < (TEST_SHARE + DEV_SHARE) * 100 else "train"


def sentence_id(sentence: str) -> str:
    return f"{CORPUS_NAME}-{hashlib.sha256(sentence.encode()).hexdigest()[:12]}"


def convert(source: Path = DEFAULT_SOURCE, datasets_dir: Path = DEFAULT_DATASETS) -> tuple[Path, Path]:
    """Write the labeled questions and the corpus of their sentences; return their paths."""
    rows, passages = [], {}
    with (source / SOURCE_FILE).open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            question = " ".join(record["question"].split())
            rows.append({"id": f"{CORPUS_NAME}-{hashlib.sha256(question.encode()).hexdigest()[:12]}",
                         "question": question, "answer": str(record["answer"]).strip(), "aliases": [],
                         "answerability": "direct", "corpus": CORPUS_NAME, "split": question_split(question)})
            for sentence in record["evidence"]:
                text = " ".join(sentence.split())
                passages.setdefault(text, {"id": sentence_id(text), "title": "", "text": text})
    labeled_path = datasets_dir / f"{CORPUS_NAME}.jsonl"
    corpus_path = datasets_dir / "corpus" / f"{CORPUS_NAME}_corpus.jsonl"
    write_jsonl(labeled_path, rows)
    write_jsonl(corpus_path, list(passages.values()))
    return labeled_path, corpus_path


def main(argv: list[str] | None = None) -> None:
    args = converter_arguments(__doc__, DEFAULT_SOURCE, SOURCE_FILE, argv)
    report_written(*convert(args.source, args.datasets))


if __name__ == "__main__":
    main()
