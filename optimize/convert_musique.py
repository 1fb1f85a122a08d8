"""Convert the bundled MuSiQue-Ans sample into deltaseek's labeled format and corpus.

    python -m optimize.convert_musique [--source DIR] [--datasets DIR]

Reads musique_train.json and musique_train_corpus.json (see PROVENANCE.md next to them) and
writes datasets/musique.jsonl (one labeled row per question, split fixed by a hash of the id)
and datasets/corpus/musique_corpus.jsonl (one line per paragraph, in file order). Running it
again on the same input rewrites both files byte for byte.

MuSiQue is CC BY 4.0 (Trivedi et al., TACL 2022); the attribution is in datasets/README.md.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from deltaseek.optimize.labeled_data import assign_split, load_labeled

PROJECT_ROOT = Path(__file__).resolve().parent.parent
# The shared folder sits beside the repository (../shared/data/musique_100).
DEFAULT_SOURCE = PROJECT_ROOT.parent / "shared" / "data" / "musique_100"
DEFAULT_DATASETS = PROJECT_ROOT / "datasets"
CORPUS_NAME = "musique"


def labeled_row(item: dict) -> dict:
    """One MuSiQue question as a labeled row.

    An unanswerable question (the paragraphs do not support its answer) becomes "unlikely"
    with no answer: against this corpus the right output is an abstention.
    """
    answerable = bool(item.get("answerable", True))
    return {
        "id": item["id"],
        "question": item["question"],
        "answer": item["answer"] if answerable else "",
        "aliases": list(item.get("answer_aliases") or []) if answerable else [],
        "answerability": "direct" if answerable else "unlikely",
        "corpus": CORPUS_NAME,
        "split": assign_split(item["id"]),
    }


def corpus_row(index: int, paragraph: dict) -> dict:
    return {"id": f"musique-{index}", "title": paragraph["title"], "text": paragraph["text"]}


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def convert(source: Path = DEFAULT_SOURCE, datasets_dir: Path = DEFAULT_DATASETS) -> tuple[Path, Path]:
    """Write the labeled questions and the corpus; return their paths."""
    questions = json.loads((source / "musique_train.json").read_text(encoding="utf-8"))
    paragraphs = json.loads((source / "musique_train_corpus.json").read_text(encoding="utf-8"))
    labeled_path = datasets_dir / "musique.jsonl"
    corpus_path = datasets_dir / "corpus" / "musique_corpus.jsonl"
    write_jsonl(labeled_path, [labeled_row(item) for item in questions])
    write_jsonl(corpus_path, [corpus_row(i, p) for i, p in enumerate(paragraphs)])
    return labeled_path, corpus_path


def converter_arguments(doc: str, default_source: Path, source_files: str, argv: list[str] | None
                        ) -> argparse.Namespace:
    """A converter's command line: `--source`, the folder holding `source_files`, and `--datasets`,
    the folder to write into; its description is the first paragraph of its module's `doc`."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=default_source, help=f"folder holding {source_files}")
    parser.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS,
                        help="the project's datasets/ folder to write into")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = converter_arguments(__doc__, DEFAULT_SOURCE, "musique_train.json and musique_train_corpus.json", argv)
    report_written(*convert(args.source, args.datasets))


def report_written(labeled_path: Path, corpus_path: Path) -> None:
    """Load what was written, strictly (it must load cleanly), and say what it holds."""
    examples = load_labeled(labeled_path).examples
    splits = Counter(ex.split for ex in examples)
    unanswerable = sum(ex.answerability == "unlikely" for ex in examples)
    passages = sum(1 for _ in corpus_path.open(encoding="utf-8"))
    print(f"wrote {labeled_path} ({len(examples)} questions, {unanswerable} unanswerable; "
          + ", ".join(f"{name} {splits[name]}" for name in ("train", "dev", "test")) + ")")
    print(f"wrote {corpus_path} ({passages} paragraphs)")


if __name__ == "__main__":
    main()
