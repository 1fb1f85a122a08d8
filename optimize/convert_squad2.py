"""Convert the bundled SQuAD 2.0 train sample into deltaseek's labeled format and corpus.

    python -m deltaseek.optimize.convert_squad2 [--source DIR] [--datasets DIR]

Reads train-v2.0-first10.json (the first 10 articles of SQuAD 2.0 *train*; see PROVENANCE.md
next to it) and writes datasets/squad2.jsonl, a fixed sample of its questions of which about a
third cannot be answered from the passages, datasets/squad2_articles.jsonl, every question split
by article (`SCORED_ARTICLES` are only scored), and datasets/corpus/squad2_corpus.jsonl, every
paragraph of the 10 articles. Which questions are sampled is decided by a seeded hash of each
question's id, so the sample never depends on file order; running it again on the same input
rewrites both files byte for byte.

SQuAD 2.0 is CC BY-SA 4.0 (Rajpurkar, Jia and Liang, 2018); the attribution is in
datasets/README.md. The SQuAD 2.0 dev split is never used here: it is kept for independent
evaluation.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from deltaseek.optimize.convert_musique import (DEFAULT_DATASETS, PROJECT_ROOT, converter_arguments, report_written,
                                               write_jsonl)
from deltaseek.optimize.labeled_data import assign_split

DEFAULT_SOURCE = PROJECT_ROOT.parent / "shared" / "data" / "squad2_train10"
SOURCE_FILE = "train-v2.0-first10.json"
CORPUS_NAME = "squad2"
SAMPLE_SEED = "deltaseek-squad2-sample-v1"
UNANSWERABLE_SHARE = 0.40
"""Of the 348 unanswerable questions, this share is sampled (about 140)."""
ANSWERABLE_SHARE = 0.064
"""Of the 4,371 answerable ones, this share (about 280): a third of the sample is unanswerable."""


SCORED_ARTICLES = ("Spectre_(2015_film)", "IPod", "Solar_energy")
"""The articles whose questions are only scored (split `test`: 1,038 questions, 188 unanswerable),
fixed before any measurement. A reader trained on the other seven articles is scored on
questions about things it never read about: the split a user's new data makes."""
DEV_ARTICLES = ("Sino-Tibetan_relations_during_the_Ming_dynasty", "To_Kill_a_Mockingbird",
                "The_Legend_of_Zelda:_Twilight_Princess")
"""The articles whose questions are the dev split (893 questions, 160 unanswerable): the two
smallest of the seven that are not scored, and the one with unanswerable questions, so that the
abstention threshold and the answer's confidence are chosen on unanswerable questions of an
article the ranker never read. A reader's steps and thresholds are chosen on articles it never
trained on, as they will be used."""


def article_split(article_title: str) -> str:
    """test for a scored article's question, dev for a dev article's, else train: whole articles,
    so no name of a training article reaches the questions a reader is chosen or scored on."""
    if article_title in SCORED_ARTICLES:
        return "test"
    return "dev" if article_title in DEV_ARTICLES else "train"


def sampled(question_id: str, share: float) -> bool:
    bucket = int(hashlib.sha256(f"{SAMPLE_SEED}:{question_id}".encode()).hexdigest()[:8], 16)
    return bucket < share * 16 ** 8


def passage_id(article: int, paragraph: int) -> str:
    return f"squad2-{article}-{paragraph}"


def labeled_row(qa: dict, article: str, split: str | None = None) -> dict:
    """One SQuAD 2.0 question of `article` as a labeled row: the first answer is the gold, the other
    distinct answers its aliases; an unanswerable question is `unlikely` with no answer (its
    `plausible_answers` are the distractors, never gold). Its group is its article."""
    answers = list(dict.fromkeys(a["text"].strip() for a in qa.get("answers") or [] if a["text"].strip()))
    unanswerable = bool(qa.get("is_impossible")) or not answers
    return {
        "id": qa["id"],
        "question": " ".join(qa["question"].split()),
        "answer": "" if unanswerable else answers[0],
        "aliases": [] if unanswerable else answers[1:],
        "answerability": "unlikely" if unanswerable else "direct",
        "corpus": CORPUS_NAME,
        "split": split or assign_split(qa["id"]),
        "group": article,
    }


def convert(source: Path = DEFAULT_SOURCE, datasets_dir: Path = DEFAULT_DATASETS) -> tuple[Path, Path, Path]:
    """Write the sampled labeled questions, every question split by article and the whole corpus;
    return their paths."""
    data = json.loads((source / SOURCE_FILE).read_text(encoding="utf-8"))["data"]
    rows, by_article, passages = [], [], []
    for a, article in enumerate(data):
        title = article["title"].replace("_", " ")
        for p, paragraph in enumerate(article["paragraphs"]):
            passages.append({"id": passage_id(a, p), "title": title, "text": paragraph["context"].strip()})
            for qa in paragraph["qas"]:
                if not qa["question"].strip():
                    continue
                share = UNANSWERABLE_SHARE if qa.get("is_impossible") else ANSWERABLE_SHARE
                if sampled(qa["id"], share):
                    rows.append(labeled_row(qa, title))
                by_article.append(labeled_row(qa, title, article_split(article["title"])))
    labeled_path = datasets_dir / f"{CORPUS_NAME}.jsonl"
    articles_path = datasets_dir / f"{CORPUS_NAME}_articles.jsonl"
    corpus_path = datasets_dir / "corpus" / f"{CORPUS_NAME}_corpus.jsonl"
    write_jsonl(labeled_path, rows)
    write_jsonl(articles_path, by_article)
    write_jsonl(corpus_path, passages)
    return labeled_path, articles_path, corpus_path


def main(argv: list[str] | None = None) -> None:
    args = converter_arguments(__doc__, DEFAULT_SOURCE, SOURCE_FILE, argv)
    labeled_path, articles_path, corpus_path = convert(args.source, args.datasets)
    report_written(labeled_path, corpus_path)
    report_written(articles_path, corpus_path)

if __name__ == "__main__":
    main()
