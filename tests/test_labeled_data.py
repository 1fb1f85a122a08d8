"""The labeled-data loader on every format and every bad input, the split, and the bundled sets."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from deltaseek.metrics.answers import normalize_answer
from deltaseek.optimize.convert_musique import convert
from deltaseek.optimize.labeled_data import (
    ANSWERABILITY,
    SPLITS,
    DatasetError,
    assign_split,
    load_labeled,
    split,
)

ROOT = Path(__file__).resolve().parent.parent
SEED_SET = ROOT / "datasets" / "seed_set.jsonl"
SEED_CORPUS = ROOT / "datasets" / "corpus" / "seed_corpus.jsonl"
MUSIQUE_SET = ROOT / "datasets" / "musique.jsonl"
MUSIQUE_CORPUS = ROOT / "datasets" / "corpus" / "musique_corpus.jsonl"
CONVERTER_SOURCES = Path(__file__).resolve().parent / "data"
"""Hand-made files in the shape of each converter's source (MuSiQue, SQuAD 2.0, HotpotQA)."""
SQUAD2_SET = ROOT / "datasets" / "squad2.jsonl"

ROWS = [
    {"id": "q1", "question": "Who is the lieutenant governor of Ohio?", "answer": "Jim Tressel",
     "aliases": ["James Tressel"], "answerability": "direct", "corpus": "seed", "split": "train", "group": "Ohio"},
    {"id": "q2", "question": "What is the population of Xyzzyville?", "answer": "", "aliases": [],
     "answerability": "unlikely", "corpus": "seed", "split": "test", "group": "Xyzzyville"},
    {"id": "q3", "question": "How many people use Ollama every day?", "answer": "Not published; GitHub stars.",
     "aliases": [], "answerability": "proxy_only", "corpus": "seed", "split": "dev", "group": "Ollama"},
]


def as_dicts(labeled) -> list[dict]:
    return [dict(ex.items()) for ex in labeled.examples]


def write_jsonl(path: Path, rows: list[dict | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict], aliases_as: str = "json") -> Path:
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            aliases = row.get("aliases", [])
            cell = json.dumps(aliases) if aliases_as == "json" else "|".join(aliases)
            writer.writerow({**row, "aliases": cell})
    return path


# -- good files, every format -------------------------------------------------------------

def test_jsonl_loads_into_examples_with_question_as_input(tmp_path):
    labeled = load_labeled(write_jsonl(tmp_path / "x.jsonl", ROWS))
    assert as_dicts(labeled) == ROWS
    assert labeled.rejected == [] and labeled.rows_read == 3
    first = labeled.examples[0]
    assert set(first.inputs().keys()) == {"question"}
    assert first.labels().answer == "Jim Tressel"


@pytest.mark.parametrize("aliases_as", ["json", "pipe"])
def test_csv_loads_the_same_examples(tmp_path, aliases_as):
    labeled = load_labeled(write_csv(tmp_path / "x.csv", ROWS, aliases_as))
    assert as_dicts(labeled) == ROWS


def test_csv_with_several_pipe_aliases(tmp_path):
    row = {**ROWS[0], "aliases": ["Osaka", "Osaka, Japan"]}
    labeled = load_labeled(write_csv(tmp_path / "x.csv", [row], "pipe"))
    assert labeled.examples[0].aliases == ["Osaka", "Osaka, Japan"]


def test_parquet_loads_the_same_examples(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "x.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), path)
    assert as_dicts(load_labeled(path)) == ROWS


def test_json_list_loads_the_same_examples(tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps(ROWS))
    assert as_dicts(load_labeled(path)) == ROWS


def test_hugging_face_dataset_saved_to_disk(tmp_path):
    import datasets

    datasets.Dataset.from_list(ROWS).save_to_disk(str(tmp_path / "hf"))
    assert as_dicts(load_labeled(tmp_path / "hf")) == ROWS


def test_hugging_face_dataset_dict_fills_split_from_its_parts(tmp_path):
    import datasets

    rows = [{k: v for k, v in r.items() if k != "split"} for r in ROWS]
    parts = datasets.DatasetDict({"train": datasets.Dataset.from_list(rows[:2]),
                                  "validation": datasets.Dataset.from_list(rows[2:])})
    parts.save_to_disk(str(tmp_path / "hf"))
    labeled = load_labeled(tmp_path / "hf")
    assert {ex.id: ex.split for ex in labeled.examples} == {"q1": "train", "q2": "train", "q3": "dev"}


def test_missing_id_is_derived_from_corpus_and_question(tmp_path):
    row = {k: v for k, v in ROWS[0].items() if k != "id"}
    first = load_labeled(write_jsonl(tmp_path / "a.jsonl", [row])).examples[0].id
    again = load_labeled(write_jsonl(tmp_path / "b.jsonl", [row])).examples[0].id
    assert first == again and first.startswith("seed-")


def test_a_group_is_text_and_a_question_without_one_is_its_own(tmp_path):
    rows = [{**ROWS[0], "group": 1851}, {k: v for k, v in ROWS[1].items() if k != "group"}]
    first, second = load_labeled(write_jsonl(tmp_path / "x.jsonl", rows)).examples
    assert (first.group, second.group) == ("1851", None)


def test_defaults_fill_missing_fields_and_unknown_columns_are_reported(tmp_path):
    rows = [{"question": "Who created Python?", "answer": "Guido van Rossum", "source": "quiz"}]
    labeled = load_labeled(write_jsonl(tmp_path / "x.jsonl", rows),
                           defaults={"corpus": "seed", "answerability": "direct"})
    assert labeled.examples[0].corpus == "seed" and labeled.examples[0].answerability == "direct"
    assert labeled.ignored_columns == ["source"]
    assert "ignored columns: source" in labeled.summary()


def test_validation_is_read_as_dev(tmp_path):
    labeled = load_labeled(write_jsonl(tmp_path / "x.jsonl", [{**ROWS[0], "split": "validation"}]))
    assert labeled.examples[0].split == "dev"


# -- bad inputs: each message names the file, the line and the field ----------------------

def bad_file(tmp_path, bad_row) -> Path:
    """Good rows at lines 1 and 2, the bad one at line 3."""
    return write_jsonl(tmp_path / "x.jsonl", [ROWS[0], ROWS[1], bad_row])


def problem_lines(path: Path) -> list[str]:
    with pytest.raises(DatasetError) as caught:
        load_labeled(path)
    assert isinstance(caught.value, ValueError)
    return caught.value.problems


def test_unknown_answerability_names_file_line_and_field(tmp_path):
    path = bad_file(tmp_path, {**ROWS[2], "answerability": "maybe"})
    assert f"{path}:3: field 'answerability': 'maybe' is not one of direct, proxy_only, unlikely" in problem_lines(path)


def test_missing_question_names_file_line_and_field(tmp_path):
    path = bad_file(tmp_path, {k: v for k, v in ROWS[2].items() if k != "question"})
    assert f"{path}:3: field 'question': missing" in problem_lines(path)


def test_blank_question_is_rejected(tmp_path):
    path = bad_file(tmp_path, {**ROWS[2], "question": "   "})
    assert f"{path}:3: field 'question': must not be empty" in problem_lines(path)


def test_question_that_is_not_a_string(tmp_path):
    path = bad_file(tmp_path, {**ROWS[2], "question": 42})
    assert f"{path}:3: field 'question': expected a string, got int 42" in problem_lines(path)


def test_bad_json_line_names_file_and_line(tmp_path):
    path = bad_file(tmp_path, '{"question": "unterminated')
    problems = problem_lines(path)
    assert any(p.startswith(f"{path}:3: not valid JSON") for p in problems), problems


def test_json_line_that_is_not_an_object(tmp_path):
    path = bad_file(tmp_path, "[1, 2]")
    assert f"{path}:3: expected a JSON object, got list" in problem_lines(path)


def test_empty_answer_only_allowed_for_unlikely(tmp_path):
    path = bad_file(tmp_path, {**ROWS[2], "answer": ""})
    problems = problem_lines(path)
    assert any(p.startswith(f"{path}:3: field 'answer': empty, but only 'unlikely'") for p in problems), problems


def test_unknown_split_and_bad_aliases(tmp_path):
    path = bad_file(tmp_path, {**ROWS[2], "split": "holdout", "aliases": 5})
    problems = problem_lines(path)
    assert f"{path}:3: field 'split': 'holdout' is not one of train, dev, test" in problems
    assert f"{path}:3: field 'aliases': expected a list of strings, got int" in problems


def test_alias_that_is_not_a_string(tmp_path):
    path = bad_file(tmp_path, {**ROWS[2], "aliases": ["ok", {"x": 7}]})
    assert any(p.startswith(f"{path}:3: field 'aliases[1]':") for p in problem_lines(path))


def test_duplicate_id_is_rejected(tmp_path):
    path = bad_file(tmp_path, {**ROWS[2], "id": "q1"})
    assert f"{path}:3: field 'id': 'q1' repeats the id on line 1" in problem_lines(path)


def test_strict_error_lists_every_problem(tmp_path):
    path = write_jsonl(tmp_path / "x.jsonl", [ROWS[0], {**ROWS[1], "answerability": "no"}, "not json"])
    problems = problem_lines(path)
    assert problems[0] == f"{path}: 2 of 3 rows rejected"
    assert any(p.startswith(f"{path}:2: field 'answerability'") for p in problems)
    assert any(p.startswith(f"{path}:3: not valid JSON") for p in problems)


def test_lenient_mode_keeps_good_rows_and_reports_the_rest(tmp_path):
    path = write_jsonl(tmp_path / "x.jsonl", [ROWS[0], {**ROWS[1], "answerability": "maybe"}, ROWS[2]])
    labeled = load_labeled(path, strict=False)
    assert [ex.id for ex in labeled.examples] == ["q1", "q3"]
    assert labeled.rows_read == 3 and labeled.rows_rejected == 1
    assert [(r.line, r.field) for r in labeled.rejected] == [(2, "answerability")]
    summary = labeled.summary()
    assert f"{path}: 3 rows read, 2 loaded, 1 rejected" in summary
    assert f"{path}:2: field 'answerability': 'maybe' is not one of" in summary


def test_lenient_mode_with_no_usable_row_is_an_error(tmp_path):
    path = write_jsonl(tmp_path / "x.jsonl", [{**ROWS[0], "question": ""}])
    with pytest.raises(DatasetError, match="no usable rows"):
        load_labeled(path, strict=False)


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_file_is_an_error(tmp_path, content):
    path = tmp_path / "x.jsonl"
    path.write_text(content)
    with pytest.raises(DatasetError, match=f"{path}: the dataset is empty"):
        load_labeled(path, strict=False)


@pytest.mark.parametrize("name, content, error", [
    ("x.csv", "question,answer,answerability,corpus\n", "empty"),  # a header and no row
    ("x.parquet", "not parquet", "not a readable Parquet file"),
])
def test_a_file_with_no_readable_row_is_an_error(tmp_path, name, content, error):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DatasetError, match=error):
        load_labeled(path)


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(DatasetError, match="file not found"):
        load_labeled(tmp_path / "nope.jsonl")
    other = tmp_path / "x.txt"
    other.write_text("hello")
    with pytest.raises(DatasetError, match="unknown format '.txt'"):
        load_labeled(other)


def test_csv_problem_names_the_file_line(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("question,answer,answerability,corpus\n"
                    "Who is the governor of Ohio?,Mike DeWine,direct,seed\n"
                    ",Jim Tressel,direct,seed\n"
                    "What is the capital of Ohio?,Columbus,sure,seed\n")
    problems = problem_lines(path)
    assert f"{path}:3: field 'question': missing" in problems
    assert f"{path}:4: field 'answerability': 'sure' is not one of direct, proxy_only, unlikely" in problems


def test_csv_row_with_too_many_cells(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("question,answer,answerability,corpus\nQ?,A,direct,seed,extra\n")
    assert f"{path}:2: more cells than the header has columns" in problem_lines(path)


def test_parquet_problem_names_the_row(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "x.parquet"
    pq.write_table(pa.Table.from_pylist([ROWS[0], {**ROWS[1], "answerability": "maybe"}]), path)
    assert f"{path}:2: field 'answerability': 'maybe' is not one of direct, proxy_only, unlikely" in problem_lines(path)


def test_hugging_face_problem_names_the_split_and_row(tmp_path):
    import datasets

    rows = [ROWS[0], {**ROWS[2], "answerability": "maybe"}]
    datasets.DatasetDict({"train": datasets.Dataset.from_list(rows)}).save_to_disk(str(tmp_path / "hf"))
    problems = problem_lines(tmp_path / "hf")
    assert f"{tmp_path / 'hf'}[train]:2: field 'answerability': 'maybe' is not one of direct, proxy_only, unlikely" \
        in problems


def test_folder_that_is_not_a_saved_dataset(tmp_path):
    with pytest.raises(DatasetError, match="cannot open as a Hugging Face dataset"):
        load_labeled(tmp_path)


# -- split ---------------------------------------------------------------------------------

def test_split_uses_the_split_field(tmp_path):
    parts = split(load_labeled(write_jsonl(tmp_path / "x.jsonl", ROWS)).examples)
    assert {name: [ex.id for ex in exs] for name, exs in parts.items()} == {"train": ["q1"], "dev": ["q3"],
                                                                             "test": ["q2"]}


def test_split_without_field_is_a_fixed_hash_of_the_id(tmp_path):
    rows = [{"id": f"q{i}", "question": f"Question {i}?", "answer": "A", "answerability": "direct",
             "corpus": "seed"} for i in range(400)]
    examples = load_labeled(write_jsonl(tmp_path / "x.jsonl", rows)).examples
    parts = split(examples)
    reordered = split(list(reversed(examples)))
    assert {k: sorted(ex.id for ex in v) for k, v in parts.items()} == \
           {k: sorted(ex.id for ex in v) for k, v in reordered.items()}
    assert all(assign_split(ex.id) == name for name, exs in parts.items() for ex in exs)
    assert 160 <= len(parts["train"]) <= 240
    assert 60 <= len(parts["dev"]) <= 140 and 60 <= len(parts["test"]) <= 140
    # fixed: the same id lands in the same split in every release (a changed seed or hash moves them)
    assert {i: assign_split(i) for i in ("2hop__150763_14904", "q0", "q3", "q5")} == \
        {"2hop__150763_14904": "train", "q0": "test", "q3": "dev", "q5": "test"}


def test_split_always_returns_all_three_parts():
    assert split([]) == {"train": [], "dev": [], "test": []}


# -- the bundled sets ----------------------------------------------------------------------

def corpus_text(path: Path) -> str:
    return normalize_answer(" ".join(json.loads(line)["text"] for line in path.open(encoding="utf-8")))


def test_seed_set_loads_cleanly_with_every_label_in_every_split():
    labeled = load_labeled(SEED_SET)
    assert labeled.rejected == []
    assert len(labeled.examples) >= 40
    assert {ex.corpus for ex in labeled.examples} == {"seed"}
    parts = split(labeled.examples)
    for name in SPLITS:
        assert {ex.answerability for ex in parts[name]} == set(ANSWERABILITY), name
    sizes = {name: len(parts[name]) for name in SPLITS}
    assert sizes["train"] >= sizes["dev"] + sizes["test"] - 2
    assert min(sizes["dev"], sizes["test"]) >= len(labeled.examples) // 5


def test_seed_set_holds_the_cases_from_the_design_notes():
    by_question = {ex.question: ex for ex in load_labeled(SEED_SET).examples}
    expected = {
        "Who is the lieutenant governor of Ohio?": ("direct", "Jim Tressel"),
        "Where was the creator of Ruby born?": ("direct", "Osaka Prefecture, Japan"),
        "What is the street address of The New York Times headquarters?": ("direct", "620 Eighth Avenue"),
        "What is the population of Xyzzyville?": ("unlikely", ""),
        "What is the VectorStore interface?": ("unlikely", ""),
    }
    for question, (label, answer) in expected.items():
        assert (by_question[question].answerability, by_question[question].answer) == (label, answer), question
    assert "Osaka" in by_question["Where was the creator of Ruby born?"].aliases
    ollama = by_question["What is the current rate of adoption for Ollama vs llama.cpp in the magnificent 7?"]
    assert ollama.answerability == "proxy_only" and "stars" in ollama.answer


def test_seed_set_direct_answers_are_in_the_seed_corpus():
    text = f" {corpus_text(SEED_CORPUS)} "
    for ex in load_labeled(SEED_SET).examples:
        if ex.answerability == "direct":
            golds = [ex.answer, *ex.aliases]
            assert any(f" {normalize_answer(g)} " in text for g in golds), ex.question


def test_seed_set_unlikely_subjects_are_not_in_the_seed_corpus():
    text = corpus_text(SEED_CORPUS)
    for subject in ["xyzzyville", "vectorstore", "glimmerford", "zanthor", "elbonia", "quillmarsh", "wifi"]:
        assert subject not in text


def test_musique_set_loads_100_rows():
    labeled = load_labeled(MUSIQUE_SET)
    assert len(labeled.examples) == 100 and labeled.rejected == []
    assert {ex.corpus for ex in labeled.examples} == {"musique"}
    assert all(ex.split == assign_split(ex.id) for ex in labeled.examples)
    assert all(split(labeled.examples)[name] for name in SPLITS)


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_musique_converter_writes_labeled_rows_and_the_corpus(tmp_path):
    """On hand-made files in MuSiQue's shape (tests/data/musique): an unanswerable question is
    `unlikely` with no answer; paragraphs are numbered in file order."""
    labeled_path, corpus_path = convert(CONVERTER_SOURCES / "musique", tmp_path)
    assert read_rows(labeled_path) == [
        {"id": "2hop__1_2", "question": "Who founded the mill on the river that runs through Orla?",
         "answer": "Ada Lind", "aliases": ["A. Lind"], "answerability": "direct", "corpus": "musique", "split": assign_split("2hop__1_2")},
        {"id": "2hop__3_4", "question": "When did the Vey bridge at Orla open?", "answer": "", "aliases": [],
         "answerability": "unlikely", "corpus": "musique", "split": assign_split("2hop__3_4")}]
    assert read_rows(corpus_path) == [
        {"id": "musique-0", "title": "Orla", "text": "Orla is a town on the river Vey."},
        {"id": "musique-1", "title": "Vey mill", "text": "The mill on the Vey was founded by Ada Lind in 1850."}]
    assert len(load_labeled(labeled_path).examples) == 2  # what it writes loads cleanly
    again = tmp_path / "again"
    convert(CONVERTER_SOURCES / "musique", again)
    assert (again / "musique.jsonl").read_bytes() == labeled_path.read_bytes()  # byte for byte, every time


def test_squad2_set_is_a_third_unanswerable_with_a_scored_part_of_over_100():
    examples = load_labeled(SQUAD2_SET).examples
    labels = Counter(ex.answerability for ex in examples)
    assert set(labels) == {"direct", "unlikely"} and 0.3 <= labels["unlikely"] / len(examples) <= 0.4
    assert all(ex.split == assign_split(ex.id) and ex.corpus == "squad2" for ex in examples)
    parts = split(examples)
    assert len(parts["train"]) >= 200 and len(parts["test"]) >= 100  # read while writing rules / only scored
    assert all(ex.answer for ex in examples if ex.answerability == "direct")
    assert not any(ex.answer for ex in examples if ex.answerability == "unlikely")


def test_squad2_converter_splits_by_article_and_keeps_only_distinct_answers(tmp_path):
    """On a hand-made file in SQuAD 2.0's shape (tests/data/squad2): a scored article's questions
    are `test`, the others train or dev; the first answer is the gold and the other distinct ones
    its aliases; an impossible question is `unlikely` (its plausible answers never gold); a blank
    question is left out; the passage keeps its article's title with spaces, the question's group
    names its article."""
    from deltaseek.optimize.convert_squad2 import SCORED_ARTICLES, article_split
    from deltaseek.optimize.convert_squad2 import convert as convert_squad2

    labeled_path, articles_path, corpus_path = convert_squad2(CONVERTER_SOURCES / "squad2", tmp_path)
    by_article = {row["id"]: row for row in read_rows(articles_path)}
    assert list(by_article) == ["s1", "s2", "s4"]
    assert "IPod" in SCORED_ARTICLES and by_article["s4"]["split"] == "test"
    assert by_article["s1"]["split"] == article_split("Orla_mill") == "train"
    assert article_split("To_Kill_a_Mockingbird") == "dev"  # a whole article is dev, never some of its questions
    assert (by_article["s1"]["question"], by_article["s1"]["answer"], by_article["s1"]["aliases"]) == \
        ("Who built the Orla mill?", "Ada Lind", ["Lind"])
    assert (by_article["s2"]["answer"], by_article["s2"]["answerability"]) == ("", "unlikely")
    assert (by_article["s1"]["group"], by_article["s4"]["group"]) == ("Orla mill", "IPod")  # held out whole
    assert read_rows(corpus_path) == [
        {"id": "squad2-0-0", "title": "Orla mill",
         "text": "The Orla mill was built in 1850 by Ada Lind. It ground oats until 1932."},
        {"id": "squad2-1-0", "title": "IPod", "text": "The pocket player sold well in its first winter."}]
    assert {row["id"] for row in read_rows(labeled_path)} <= set(by_article)  # the sample is of these questions


def test_squad2_articles_set_holds_a_scored_part_with_unanswerable_questions():
    """The bundled squad2_articles.jsonl: over 1,000 questions only scored, 150 of them unanswerable;
    dev and train hold different articles, dev the one with unanswerable questions (the threshold
    and the confidence are chosen on unanswerable questions of an article the ranker never read)."""
    parts = split(load_labeled(SQUAD2_SET.parent / "squad2_articles.jsonl").examples)
    assert len(parts["test"]) >= 1000 and sum(ex.answerability == "unlikely" for ex in parts["test"]) >= 150
    assert parts["train"] and parts["dev"] and sum(ex.answerability == "unlikely" for ex in parts["dev"]) >= 150


def test_hotpotqa_converter_writes_each_question_and_each_distinct_sentence_once(tmp_path):
    """On hand-made lines in the sample's shape (tests/data/hotpotqa): whitespace is folded, ids
    are hashes of the text, and a sentence two questions share is one passage."""
    from deltaseek.optimize.convert_hotpotqa import convert as convert_hotpotqa
    from deltaseek.optimize.convert_hotpotqa import question_split, sentence_id

    labeled_path, corpus_path = convert_hotpotqa(CONVERTER_SOURCES / "hotpotqa", tmp_path)
    rows = read_rows(labeled_path)
    assert [(r["question"], r["answer"], r["answerability"]) for r in rows] == [
        ("Which river runs past the town where Ada Lind built a mill?", "Vey", "direct"),
        ("Is Orla older than its mill?", "yes", "direct")]
    assert all(r["split"] == question_split(r["question"]) and r["id"].startswith("hotpotqa-") for r in rows)
    texts = ["Ada Lind built a mill in Orla.", "Orla is a town on the river Vey.", "Orla was first named in 1204."]
    assert read_rows(corpus_path) == [{"id": sentence_id(t), "title": "", "text": t} for t in texts]


def test_hotpotqa_set_scores_at_least_150_questions():
    parts = split(load_labeled(SQUAD2_SET.parent / "hotpotqa.jsonl").examples)
    assert len(parts["test"]) >= 150 and parts["train"] and parts["dev"]


def test_a_labeled_set_with_no_corpus_field_is_accepted(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"question": "Who created Ruby?", "answer": "Yukihiro Matsumoto",
                                "answerability": "direct"}) + "\n")
    [example] = load_labeled(path).examples
    assert example.corpus is None and example.id.startswith("q-")


def test_numeric_answers_are_read_as_text_in_jsonl_and_parquet(tmp_path):
    row = {"question": "When was Ruby first released?", "answer": 1995, "aliases": [1995.0, "'95"],
           "answerability": "direct"}
    jsonl = tmp_path / "n.jsonl"
    jsonl.write_text(json.dumps(row) + "\n")
    [example] = load_labeled(jsonl).examples
    assert example.answer == "1995" and example.aliases == ["1995", "'95"]

    import pyarrow as pa
    import pyarrow.parquet as pq

    parquet = tmp_path / "n.parquet"
    pq.write_table(pa.table({"question": [row["question"]], "answer": [2.5], "answerability": ["direct"]}), parquet)
    [example] = load_labeled(parquet).examples
    assert example.answer == "2.5"


def test_a_bad_json_line_is_described_once(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"question": "Q?", "answer": "A" "answerability": "direct"}\n')
    with pytest.raises(DatasetError) as raised:
        load_labeled(path)
    assert f"{path}:1: not valid JSON (Expecting ',' delimiter at column" in str(raised.value)
    assert "at at" not in str(raised.value)
