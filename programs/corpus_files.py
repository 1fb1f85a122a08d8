"""Reading JSONL corpus files: each line a passage, validated as it is read.

Every passage is validated (`PassageRow`), so a bad line is a `CorpusError` naming its file and
line, never a failure at search time. Limits: a line holds at most `MAX_LINE_BYTES` (1 MB);
passage ids are unique across the corpora of one index (a repeated id is rejected, naming both
lines, since a citation by id would point at the wrong passage). `jsonl_objects` is shared with
the labeled-set reader.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, ValidationError, field_validator

from deltaseek.errors import CorpusError

MAX_LINE_BYTES = 1_000_000
"""A corpus or dataset line longer than this is rejected (with its file and line), not read."""


class ByteDigest(Protocol):
    """What the bytes read are fed to (the index's `CorpusDigest`): each chunk, then each file's end."""

    def update(self, data: bytes) -> None: ...

    def end_file(self, path: Path) -> None: ...


@dataclass(frozen=True, slots=True)
class Passage:
    id: str
    title: str
    text: str
    url: str | None = None


def bounded_lines(handle, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[bytes, int]]:
    """(the line's first `limit` + 1 bytes, its full length) for each line; memory stays bounded."""
    while raw := handle.readline(limit + 1):
        length = len(raw)
        if length > limit and not raw.endswith(b"\n"):
            while (rest := handle.readline(1 << 20)) and not rest.endswith(b"\n"):
                length += len(rest)
            length += len(rest)
        yield raw, length


def json_problem(exc: json.JSONDecodeError) -> str:
    """Where and why JSON did not parse: `Expecting ',' delimiter at column 34`. Some of json's
    messages already end in "at" ("Unterminated string starting at"): it is said once."""
    return f"{exc.msg.removesuffix(' at')} at column {exc.colno}"


class HashingReader:
    """A binary file whose every line read is also fed to a digest: what is hashed is what is parsed."""

    def __init__(self, handle, digest: ByteDigest):
        self.handle = handle
        self.digest = digest

    def readline(self, size: int = -1) -> bytes:
        data = self.handle.readline(size)
        self.digest.update(data)
        return data


def jsonl_objects(path: Path, digest: ByteDigest | None = None) -> Iterator[tuple[int, dict | None, str | None]]:
    """(line number, object, problem) for each non-blank line of a JSONL file; the problem
    says why a line is not a JSON object. Shared by the corpus and the labeled-set readers.
    With `digest`, every byte read is hashed into it as well."""
    with path.open("rb") as opened:
        handle = opened if digest is None else HashingReader(opened, digest)
        for lineno, (raw, length) in enumerate(bounded_lines(handle), start=1):
            if length > MAX_LINE_BYTES:
                yield lineno, None, f"the line is {length:,} bytes long; at most {MAX_LINE_BYTES:,} are read"
                continue
            try:  # decoded line by line, so a bad byte is reported with its line
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                yield lineno, None, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
                continue
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                yield lineno, None, f"not valid JSON ({json_problem(exc)})"
                continue
            if not isinstance(row, dict):
                yield lineno, None, f"expected a JSON object, got {type(row).__name__}"
                continue
            yield lineno, row, None


class PassageRow(BaseModel):
    """One corpus line. Other keys are ignored."""

    model_config = ConfigDict(extra="ignore")

    text: StrictStr
    title: StrictStr | None = None
    id: StrictStr | StrictInt | None = None
    url: StrictStr | None = None

    @field_validator("text")
    @classmethod
    def text_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value


def passage_problem(error: dict) -> str:
    """A pydantic error on a corpus line in plain words: the field, then what is wrong."""
    name = str(error["loc"][0]) if error.get("loc") else "line"
    if name == "text" and error.get("type") in ("missing", "value_error"):
        return 'missing a non-empty "text" field'
    got = error.get("input")
    if error.get("type", "").endswith("_type"):
        return f'field "{name}": expected {"text or a whole number" if name == "id" else "text"}, got {got!r}'
    return f'field "{name}": {error.get("msg", "invalid").removeprefix("Value error, ")}'


def read_corpus(path: str | os.PathLike, seen_ids: dict[str, str] | None = None,
                digest: ByteDigest | None = None) -> list[Passage]:
    """Read one JSONL corpus: each line {"text", optional "title", "id", "url"}, validated.

    `seen_ids` (id -> "file:line") carries ids across the files of one index; a repeated id
    is a CorpusError naming both lines. `digest` hashes the bytes read (see `CorpusDigest`)."""
    path = Path(path)
    if not path.is_file():
        raise CorpusError(f"corpus file not found: {path}")
    seen_ids = {} if seen_ids is None else seen_ids
    passages = []
    for lineno, row, problem in jsonl_objects(path, digest):
        if problem:
            raise CorpusError(f"{path}:{lineno}: {problem}")
        try:
            valid = PassageRow.model_validate(row)
        except ValidationError as exc:
            raise CorpusError(f"{path}:{lineno}: {passage_problem(exc.errors()[0])}") from None
        passage_id = str(valid.id if valid.id not in (None, "") else f"{path.stem}:{lineno}")
        if passage_id in seen_ids:
            raise CorpusError(f"{path}:{lineno}: passage id {passage_id!r} repeats the id at {seen_ids[passage_id]}; "
                              "ids must be unique (citations point at them)")
        seen_ids[passage_id] = f"{path}:{lineno}"
        passages.append(Passage(id=passage_id, title=valid.title or "", text=valid.text, url=valid.url or None))
    if not passages:
        raise CorpusError(f"{path}: the corpus holds no passages")
    if digest is not None:
        digest.end_file(path)
    return passages
