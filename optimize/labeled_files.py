"""Reading the rows of a labeled set from where it is kept: a JSONL, JSON-list, CSV or Parquet
file, a folder written by `save_to_disk`, or `hf:owner/name` on the Hugging Face Hub. Each row
comes back as it was read (`RawRow`), or with why it could not be read; `labeled_data` validates them.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any, Iterator, NamedTuple

from deltaseek.errors import DatasetError
from deltaseek.programs.corpus_files import json_problem, jsonl_objects

SPLIT_NAMES = {"train": "train", "dev": "dev", "validation": "dev", "valid": "dev", "val": "dev", "test": "test"}
"""The names a split goes by, each to train, dev or test (a Hub dataset's `validation` is dev)."""
HUB_PREFIX = "hf:"


class RawRow(NamedTuple):
    """One row as read from a file: its data, or why it could not be read at all."""

    source: str
    line: int
    data: dict | None
    problem: str | None = None


def read_jsonl(path: Path, source: str) -> Iterator[RawRow]:
    for lineno, data, problem in jsonl_objects(path):
        yield RawRow(source, lineno, data, problem)


def read_json_array(path: Path, source: str) -> Iterator[RawRow]:
    try:
        rows = json.loads(path.read_text(encoding="utf-8-sig") or "[]")
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{source}:{exc.lineno}: not valid JSON ({json_problem(exc)})") from None
    if not isinstance(rows, list):
        raise DatasetError(f"{source}: expected a JSON list of objects, got {type(rows).__name__}")
    for number, data in enumerate(rows, start=1):
        if isinstance(data, dict):
            yield RawRow(source, number, data)
        else:
            yield RawRow(source, number, None, f"expected a JSON object, got {type(data).__name__}")


def read_csv(path: Path, source: str) -> Iterator[RawRow]:
    """Empty cells count as missing. Line numbers are file lines (the header is line 1)."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        for data in reader:
            if None in data:
                yield RawRow(source, reader.line_num, None, "more cells than the header has columns")
                continue
            yield RawRow(source, reader.line_num, {k: (v if v != "" else None) for k, v in data.items()})


def read_parquet(path: Path, source: str) -> Iterator[RawRow]:
    """Rows are numbered from 1."""
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises several types for a file that is not Parquet
        raise DatasetError(f"{source}: not a readable Parquet file ({exc})") from None
    for number, data in enumerate(rows, start=1):
        yield RawRow(source, number, data)


def read_hf(dataset: Any, source: str) -> Iterator[RawRow]:
    """A `datasets.Dataset` or `DatasetDict`; rows are numbered from 1 within each split.

    The split of a DatasetDict (train / validation / test) fills in a missing `split` field.
    """
    import datasets

    parts = dataset.items() if isinstance(dataset, datasets.DatasetDict) else [(None, dataset)]
    for part_name, part in parts:
        part_source = f"{source}[{part_name}]" if part_name else source
        default_split = SPLIT_NAMES.get(str(part_name).lower()) if part_name else None
        for number, data in enumerate(part, start=1):
            if default_split and not data.get("split"):
                data = {**data, "split": default_split}
            yield RawRow(part_source, number, data)


def open_hf(path: str) -> Any:
    """A folder written by `save_to_disk`, or `hf:owner/name` (optionally `hf:owner/name:config`) from the Hub."""
    import datasets

    try:
        if path.startswith(HUB_PREFIX):
            name, _, config = path[len(HUB_PREFIX):].partition(":")
            return datasets.load_dataset(name, config or None)
        return datasets.load_from_disk(path)
    except Exception as exc:  # the datasets library raises many types (missing files, network, format)
        raise DatasetError(f"{path}: cannot open as a Hugging Face dataset ({type(exc).__name__}: {exc})") from None


READERS = {".jsonl": read_jsonl, ".json": read_json_array, ".csv": read_csv, ".parquet": read_parquet}


def read_rows(path: str | os.PathLike) -> tuple[str, Iterator[RawRow]]:
    """Pick the reader from the path: a file extension, a saved dataset folder, or `hf:`."""
    source = os.fspath(path)
    if source.startswith(HUB_PREFIX):
        return source, read_hf(open_hf(source), source)
    file = Path(source)
    if file.is_dir():
        return source, read_hf(open_hf(source), source)
    if not file.is_file():
        raise DatasetError(f"{source}: file not found")
    reader = READERS.get(file.suffix.lower())
    if reader is None:
        raise DatasetError(f"{source}: unknown format {file.suffix or '(no extension)'!r}; expected one of "
                           f"{', '.join(READERS)}, a save_to_disk folder, or {HUB_PREFIX}owner/name")
    return source, reader(file, source)
