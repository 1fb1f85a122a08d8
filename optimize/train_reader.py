"""Train the reader on a labeled set: the command that reproduces the shipped reader.

    python -m deltaseek.optimize.train_reader --dataset datasets/squad2_articles.jsonl \
        --out programs/compiled/reader.json

For each question of the train and dev splits it reads what the agent's first searches read (the
question as the query, the `READ_PASSAGES` best passages of its corpus), proposes candidates,
trains the ranker and the answerability model on train, and chooses the threshold on dev within
`--max-false-abstention`. The test split is never read. `deltaseek optimize` calls
`reader_for_dataset` to train a reader on a user's set, and to choose on its dev split whether a
subject its collection never names means the question has no answer there, and whether the reader
reads questions that name no answer type.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path

import dspy

from deltaseek.bundled import labeled_set
from deltaseek.optimize.evaluate import corpora_for, load_dataset, select
from deltaseek.optimize.paired import beyond_chance
from deltaseek.programs.agent.learned_reader import ReaderModel, shipped_reader
from deltaseek.programs.agent.learned_reader.train import (Question, answered_at, candidate_recall, fit_reader,
                                                           outcomes, prepare, question_scores, rethreshold, scores_at)
from deltaseek.programs.agent.guardrails import question_subjects
from deltaseek.programs.agent.scratchpad import Fact
from deltaseek.programs.index import CorpusIndex

READ_PASSAGES = 6
"""Passages read per question in training: the agent's first search reads 3 and a second as many."""
MAX_FALSE_ABSTENTION = 0.15
"""The threshold's bound on dev, below the 20% a run may show: the agent also abstains for reasons
of its own (a subject no passage names), which the reader's dev figures do not see."""
SHIPPED_DATASETS = ("squad2_articles", "musique", "seed_set")
"""The bundled labeled sets the shipped reader is trained on (their train splits) and chosen on
(their dev splits): SQuAD's articles for the most questions, MuSiQue's and the seed set's for
passages titled with the one thing they are about. Never HotpotQA: it stands for a user's new set."""

RETRAINED = ("trained on this set", "trained on the shipped data and this set")
"""The candidates of `reader_for_dataset` with new weights: one replaces the shipped weights only
beyond chance (`chosen_reader`)."""


def read_questions(examples: list[dspy.Example], index: CorpusIndex, passages: int = READ_PASSAGES) -> list[Question]:
    """Each example as a `Question` with the passages its question finds, candidates prepared."""
    return prepare(read_facts(examples, index, passages))


def read_facts(examples: list[dspy.Example], index: CorpusIndex, passages: int = READ_PASSAGES) -> list[Question]:
    """Each example as a `Question` with the passages its question finds (the agent's first search)."""
    questions = []
    for ex in examples:
        facts = [Fact(source=hit.passage.id, title=hit.passage.title, text=hit.passage.text, step=1)
                 for hit in index.search(ex.question, k=passages)]
        answers = () if ex.answerability == "unlikely" else tuple(a for a in (ex.answer, *(ex.get("aliases") or [])) if a)
        absent = any(not index.mentions(subject) for subject in question_subjects(ex.question))
        questions.append(Question(str(ex.get("id") or ex.question), ex.question, facts, answers, subject_absent=absent))
    return questions


def dataset_questions(datasets: str | list[str], corpus: list[str] | None = None) -> dict[str, list[Question]]:
    """The train and dev questions of one or more labeled sets, each read against its corpus."""
    parts: dict[str, list[Question]] = {"train": [], "dev": []}
    for dataset in [datasets] if isinstance(datasets, str) else datasets:
        examples = load_dataset(dataset).examples
        index = CorpusIndex.open(corpus or corpora_for(examples) or None)
        for name in parts:
            parts[name] += read_questions(select(examples, name), index)
    return parts


def training_command(datasets: list[str]) -> str:
    """The command that trains on these sets: with the shipped reader's own sets, its defaults."""
    names = [Path(d).name for d in datasets]
    if names == [f"{name}.jsonl" for name in SHIPPED_DATASETS]:
        return "python -m deltaseek.optimize.train_reader " + " ".join(f"--dataset datasets/{n}" for n in names)
    return "python -m deltaseek.optimize.train_reader " + " ".join(f"--dataset {d}" for d in datasets)


def file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def train_on(datasets: str | list[str], corpus: list[str] | None = None,
             max_false_abstention: float = MAX_FALSE_ABSTENTION,
             parts: dict[str, list[Question]] | None = None) -> ReaderModel:
    """A reader trained on the datasets' train splits, its threshold chosen on their dev splits."""
    datasets = [datasets] if isinstance(datasets, str) else list(datasets)
    parts = parts or dataset_questions(datasets, corpus)
    trained_on = {"datasets": {Path(d).name: file_digest(d) for d in datasets}, "train_questions": len(parts["train"]),
                  "dev_questions": len(parts["dev"]), "passages_read": READ_PASSAGES,
                  "command": training_command(datasets)}
    reader = fit_reader(parts["train"], parts["dev"], max_false_abstention, trained_on)
    reader.metrics.update({k: round(v, 4) for k, v in candidate_recall(parts["dev"]).items()})
    return reader


def reader_for_dataset(dataset: str, corpus: list[str] | None = None,
                       max_false_abstention: float = MAX_FALSE_ABSTENTION) -> tuple[ReaderModel, dict[str, dict]]:
    """For a user's labeled set: the shipped reader as it is, the shipped reader with its threshold
    chosen on the set's dev split, a reader trained on the set's train split, and one trained on
    the shipped reader's data and the set's together; the one chosen on the dev split
    (`chosen_reader`), and every candidate's dev figures."""
    parts = dataset_questions(dataset, corpus)
    shipped = shipped_reader()
    shipped_parts = dataset_questions([str(labeled_set(name)) for name in SHIPPED_DATASETS])
    both = {"train": shipped_parts["train"] + parts["train"], "dev": parts["dev"]}
    choices = {
        "shipped": shipped,
        "shipped, threshold on this dev split": rethreshold(shipped, parts["dev"], max_false_abstention),
        "trained on this set": train_on(dataset, corpus, max_false_abstention, parts),
        "trained on the shipped data and this set": train_on(dataset, corpus, max_false_abstention, both),
    }
    found = {name: outcomes(r, parts["dev"]) for name, r in choices.items()}
    figures = {name: scores_at(found[name], r.threshold) for name, r in choices.items()}
    best = chosen_reader({name: question_scores(found[name], answered_at(found[name], r.threshold))
                          for name, r in choices.items()}, retrained=RETRAINED)
    abstains, kept, answered = choose_absent_subject_rule(choices[best], parts["dev"])
    figures[f"{best}, a subject the collection lacks: abstain"] = kept
    figures[f"{best}, a subject the collection lacks: read on"] = answered
    reads, read, left = choose_untyped_rule(choices[best], parts["dev"], abstains)
    figures[f"{best}, a question naming no type: read"] = read
    figures[f"{best}, a question naming no type: left to the model"] = left
    chosen = choices[best].model_copy(update={"abstain_on_absent_subject": abstains, "reads_untyped": reads,
                                              "trained_on": {**choices[best].trained_on, "chosen_as": best}})
    return chosen, figures


def chosen_reader(scores: dict[str, list[float]], retrained: tuple[str, ...]) -> str:
    """The reader the program keeps, from each candidate's per-question dev scores: the best of the
    shipped weights (as they are, or re-thresholded), unless the best retrained one scores better
    beyond chance (`paired.beyond_chance`); the same test a fine-tuned adapter passes. A ranker
    trained on a few hundred questions changes many answers, and a gain of a question or two on
    the dev split that chose it says nothing of the next questions."""
    def best_of(names):
        return max(names, key=lambda name: sum(scores[name]))

    kept = best_of([name for name in scores if name not in retrained])
    challenger = best_of([name for name in scores if name in retrained])
    return challenger if beyond_chance(scores[kept], scores[challenger]) else kept


def choose_absent_subject_rule(reader: ReaderModel, dev: list[Question]) -> tuple[bool, dict, dict]:
    """Whether a subject the collection never names should end the question with "No information
    found" (`ReaderModel.abstain_on_absent_subject`): kept unless reading on scores better on the
    dev split (a tie keeps it); and the dev figures both ways."""
    found = outcomes(reader, dev)
    kept = scores_at(found, reader.threshold, absent_subject_abstains=True)
    answered = scores_at(found, reader.threshold, absent_subject_abstains=False)
    return answered["answer_score"] <= kept["answer_score"], kept, answered


def choose_untyped_rule(reader: ReaderModel, dev: list[Question], absent_subject_abstains: bool = True
                        ) -> tuple[bool, dict, dict]:
    """Whether the reader reads a question that names no answer type (`ReaderModel.reads_untyped`):
    kept unless leaving such questions to the model scores better on the dev split (a tie keeps
    it; the small model's answers to them rarely pass the checks, so leaving one is counted as an
    abstention); and the dev figures both ways."""
    found = outcomes(reader, dev)
    read = scores_at(found, reader.threshold, absent_subject_abstains)
    left = scores_at(found, reader.threshold, absent_subject_abstains, untyped_left=True)
    return left["answer_score"] <= read["answer_score"], read, left


def train_reader_into(program, dataset: str, corpus: list[str] | None = None) -> dict[str, float]:
    """`deltaseek optimize --train-reader`: the best reader for the dataset (`reader_for_dataset`)
    becomes the program's, saved with it; its dev figures, printed and returned as metrics."""
    adapter = program.learned_reader().adapter  # the span reader, fine-tuned apart (fine_tune.fine_tune_into)
    reader, figures = reader_for_dataset(dataset, corpus)
    program.reader = reader = reader.model_copy(update={"adapter": adapter})
    best = reader.trained_on["chosen_as"]
    rule = "abstain" if reader.abstain_on_absent_subject else "read on"
    untyped = "read" if reader.reads_untyped else "left to the model"
    for name, row in figures.items():
        chosen = " (chosen)" if name in (best, f"{best}, a subject the collection lacks: {rule}",
                                         f"{best}, a question naming no type: {untyped}") else ""
        print(f"reader {name}{chosen}: dev " + ", ".join(f"{k} {v:.3f}" for k, v in row.items()))
    return {f"reader_dev_{k}": v for k, v in figures[best].items()} | {
        "reader_threshold": reader.threshold, "reader_abstains_on_absent_subject": float(reader.abstain_on_absent_subject),
        "reader_reads_untyped": float(reader.reads_untyped)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", action="append", help="labeled questions with splits (repeatable; default: "
                        + ", ".join(f"datasets/{name}.jsonl" for name in SHIPPED_DATASETS) + ")")
    parser.add_argument("--corpus", action="append", help="the corpus the questions are asked against "
                        "(default: the bundled corpus each row names)")
    parser.add_argument("--out", default="programs/compiled/reader.json", help="where to write the reader (JSON)")
    parser.add_argument("--max-false-abstention", type=float, default=MAX_FALSE_ABSTENTION)
    parser.add_argument("--adapter", help="the reader adapter the reader names (a GGUF LoRA file, relative to --out's "
                        "folder; the shipped reader: reader-adapter.gguf)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    datasets = args.dataset or [str(labeled_set(name)) for name in SHIPPED_DATASETS]
    reader = train_on(datasets, args.corpus, args.max_false_abstention)
    if args.adapter:
        reader = reader.model_copy(update={"adapter": args.adapter, "trained_on": {
            **reader.trained_on, "command": f"{reader.trained_on['command']} --adapter {args.adapter}"}})
    path = reader.save(args.out)
    print(f"wrote {path} in {time.perf_counter() - started:.0f} s: threshold {reader.threshold:.3f}; dev "
          + ", ".join(f"{k} {v}" for k, v in reader.metrics.items()))


if __name__ == "__main__":
    main()
