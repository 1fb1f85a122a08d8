"""Labeled question sets: JSONL, CSV, Parquet or Hugging Face datasets, loaded into dspy.Examples.

Every row goes through one pydantic model (`LabeledRow`). A row that fails is reported
with its file, line and field and counted in the summary; nothing is dropped silently.
The format is documented in datasets/README.md.

    labeled = load_labeled("datasets/seed_set.jsonl")
    print(labeled.summary())
    parts = split(labeled.examples)        # {"train": [...], "dev": [...], "test": [...]}
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

import dspy
from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator

from deltaseek.errors import DatasetError
from deltaseek.optimize.labeled_files import SPLIT_NAMES, read_rows
from deltaseek.programs.corpus_files import json_problem
from deltaseek.signatures import ANSWERABILITY

SPLITS = ("train", "dev", "test")
FIELDS = ("question", "answer", "aliases", "answerability", "id", "corpus", "split")
SPLIT_SEED = "deltaseek-split-v1"
"""Changing the seed reshuffles every row without a `split` field; keep it fixed."""


def number_as_text(value: Any) -> Any:
    """A numeric answer (JSON 1889, a Parquet int or float column) as the text it reads as."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


class LabeledRow(BaseModel):
    """One labeled question. Unknown columns are ignored (and listed in the summary)."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    question: str
    answerability: str
    """direct: the corpus states the answer; proxy_only: only proxies exist; unlikely: no answer exists."""
    answer: str = ""
    """The gold answer; may be empty only when answerability is "unlikely"."""
    aliases: list[str] = []
    """Other accepted spellings of the answer."""
    corpus: str | None = None
    """Which bundled corpus the question is asked against ("seed" or "musique"); absent: the
    corpus given with --corpus / --tools (the bundled corpus when none is given)."""
    id: str | None = None
    """Stable row id; derived from the corpus and question when absent."""
    split: str | None = None
    """train, dev or test (validation and val mean dev); absent: a fixed hash of the id decides."""
    group: str | None = None
    """The article or question group the question was written from: the confidence fit holds a
    group out whole, so its figures are of text it never saw; absent: the question is its own."""

    @field_validator("question")
    @classmethod
    def question_not_empty(cls, value: str) -> str:
        if not value:
            raise ValueError("must not be empty")
        return value

    @field_validator("answerability", mode="before")
    @classmethod
    def known_answerability(cls, value: Any) -> Any:
        if value not in ANSWERABILITY:
            raise ValueError(f"{value!r} is not one of {', '.join(ANSWERABILITY)}")
        return value

    @field_validator("answer", mode="before")
    @classmethod
    def no_answer_is_empty(cls, value: Any) -> Any:
        return "" if value is None else number_as_text(value)

    @field_validator("answer")
    @classmethod
    def answer_unless_unlikely(cls, value: str, info: ValidationInfo) -> str:
        label = info.data.get("answerability")
        if not value and label is not None and label != "unlikely":
            raise ValueError(f"empty, but only 'unlikely' questions may have no answer (this one is {label!r})")
        return value

    @field_validator("aliases", mode="before")
    @classmethod
    def parse_aliases(cls, value: Any) -> Any:
        """A list, a JSON list in a string (CSV), or `a|b|c` (CSV); empty means none."""
        if value is None:
            return []
        if isinstance(value, str):
            text = value.strip()
            if not text:
                return []
            if text.startswith("["):
                try:
                    value = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"looks like a JSON list but is not valid JSON ({json_problem(exc)})") from None
            else:
                return [part.strip() for part in text.split("|") if part.strip()]
        if hasattr(value, "tolist"):  # numpy arrays from Parquet readers
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"expected a list of strings, got {type(value).__name__}")
        return [number_as_text(a) for a in value if not (isinstance(a, str) and not a.strip())]

    @field_validator("id", "group", mode="before")
    @classmethod
    def id_as_text(cls, value: Any) -> Any:
        if value is None or value == "":
            return None
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("split", mode="before")
    @classmethod
    def known_split(cls, value: Any) -> Any:
        if value is None or value == "":
            return None
        name = SPLIT_NAMES.get(value.strip().lower()) if isinstance(value, str) else None
        if name is None:
            raise ValueError(f"{value!r} is not one of {', '.join(SPLITS)}")
        return name


@dataclass(frozen=True)
class Rejection:
    """Why one row was not loaded."""

    source: str
    line: int
    field: str | None
    message: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}"
        return f"{where}: field '{self.field}': {self.message}" if self.field else f"{where}: {self.message}"


@dataclass
class LabeledSet:
    """The loaded examples plus everything that was not loaded, and why."""

    source: str
    examples: list[dspy.Example]
    rejected: list[Rejection] = field(default_factory=list)
    rows_read: int = 0
    ignored_columns: list[str] = field(default_factory=list)

    @property
    def rows_rejected(self) -> int:
        return len({(r.source, r.line) for r in self.rejected})

    def summary(self) -> str:
        lines = [f"{self.source}: {self.rows_read} rows read, {len(self.examples)} loaded, "
                 f"{self.rows_rejected} rejected"]
        labels = Counter(ex.answerability for ex in self.examples)
        splits = Counter(ex.split or "none (hash of id)" for ex in self.examples)
        if self.examples:
            lines.append("  answerability: " + ", ".join(f"{k} {labels[k]}" for k in ANSWERABILITY if labels[k]))
            lines.append("  split field: " + ", ".join(f"{k} {v}" for k, v in sorted(splits.items())))
        if self.ignored_columns:
            lines.append("  ignored columns: " + ", ".join(self.ignored_columns))
        lines.extend(f"  rejected {r}" for r in self.rejected)
        return "\n".join(lines)



def describe_error(error: dict) -> tuple[str, str]:
    """A pydantic error as (field, message in plain words)."""
    loc = error.get("loc") or ()
    name = str(loc[0]) if loc else "row"
    if len(loc) > 1:
        name += "".join(f"[{part}]" for part in loc[1:])
    kind = error.get("type")
    if kind == "missing":
        return name, "missing"
    if kind == "value_error" and "error" in error.get("ctx", {}):
        return name, str(error["ctx"]["error"])
    if kind == "string_type":
        got = error.get("input")
        return name, "missing" if got is None else f"expected a string, got {type(got).__name__} {got!r}"
    return name, error.get("msg", "invalid")


def default_id(corpus: str | None, question: str) -> str:
    return f"{corpus or 'q'}-{hashlib.sha256(question.encode()).hexdigest()[:12]}"


def to_example(row: LabeledRow) -> dspy.Example:
    return dspy.Example(question=row.question, answer=row.answer, aliases=list(row.aliases),
                        answerability=row.answerability, id=row.id, corpus=row.corpus,
                        split=row.split, group=row.group).with_inputs("question")


def load_labeled(path: str | os.PathLike, strict: bool = True, defaults: dict | None = None) -> LabeledSet:
    """Load a labeled dataset into `dspy.Example`s with `question` as the input.

    `path` is a .jsonl / .json / .csv / .parquet file, a folder written by `Dataset.save_to_disk`,
    or `hf:owner/name` on the Hugging Face Hub. `defaults` fills fields a row lacks, e.g.
    `{"corpus": "musique", "answerability": "direct"}` for a Hub dataset without them.

    strict: any rejected row raises `DatasetError` listing every problem. Not strict: rejected
    rows are left out and reported in `.rejected` and `.summary()`. Either way a dataset with
    no rows, or with no usable row, is an error.
    """
    source, rows = read_rows(path)
    examples: list[dspy.Example] = []
    rejected: list[Rejection] = []
    ignored: set[str] = set()
    seen_ids: dict[str, int] = {}
    rows_read = 0
    for raw in rows:
        rows_read += 1
        if raw.problem is not None:
            rejected.append(Rejection(raw.source, raw.line, None, raw.problem))
            continue
        data = {**(defaults or {}), **{k: v for k, v in raw.data.items() if v is not None}}
        ignored.update(k for k in data if k not in FIELDS)
        try:
            row = LabeledRow.model_validate(data)
        except ValidationError as exc:
            rejected.extend(Rejection(raw.source, raw.line, *describe_error(e)) for e in exc.errors())
            continue
        if row.id is None:
            row.id = default_id(row.corpus, row.question)
        if row.id in seen_ids:
            repeated = f"{row.id!r} repeats the id on line {seen_ids[row.id]}"
            rejected.append(Rejection(raw.source, raw.line, "id", repeated))
            continue
        seen_ids[row.id] = raw.line
        examples.append(to_example(row))

    if rows_read == 0:
        raise DatasetError(f"{source}: the dataset is empty (no rows)")
    labeled = LabeledSet(source, examples, rejected, rows_read, sorted(str(c) for c in ignored))
    if strict and rejected:
        raise DatasetError([f"{source}: {labeled.rows_rejected} of {rows_read} rows rejected"]
                           + [str(r) for r in rejected])
    if not examples:
        raise DatasetError([f"{source}: no usable rows ({rows_read} read, all rejected)"] + [str(r) for r in rejected])
    return labeled


def assign_split(example_id: str) -> str:
    """The fixed split of a row without a `split` field: a seeded hash of its id, about 50/25/25."""
    bucket = int(hashlib.sha256(f"{SPLIT_SEED}:{example_id}".encode()).hexdigest()[:8], 16) % 100
    return "train" if bucket < 50 else "dev" if bucket < 75 else "test"


def split(examples: Iterable[dspy.Example]) -> dict[str, list[dspy.Example]]:
    """Group examples into train / dev / test: the `split` field when present, else `assign_split(id)`."""
    parts: dict[str, list[dspy.Example]] = {name: [] for name in SPLITS}
    for example in examples:
        name = example.get("split") or assign_split(str(example.get("id") or example.get("question")))
        if name not in parts:
            raise DatasetError(f"example {example.get('id')!r}: split {name!r} is not one of {', '.join(SPLITS)}")
        parts[name].append(example)
    return parts
