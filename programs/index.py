"""BM25 search over JSONL corpora, with the index persisted in a cache folder.

The index is keyed by the content hash of the corpus files, so it is built
once and rebuilt whenever a corpus file changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from deltaseek.bundled import bundled_corpora
from deltaseek.errors import CorpusError

INDEX_FORMAT = 1


def cache_dir() -> Path:
    return Path(os.environ.get("DELTASEEK_CACHE", Path.home() / ".cache" / "deltaseek"))


@dataclass(frozen=True)
class Passage:
    id: str
    title: str
    text: str
    url: str | None = None


@dataclass(frozen=True)
class ScoredPassage:
    passage: Passage
    score: float


def jsonl_objects(path: Path) -> Iterator[tuple[int, dict | None, str | None]]:
    """(line number, object, problem) for each non-blank line of a JSONL file; the problem
    says why a line is not a JSON object. Shared by the corpus and the labeled-set readers."""
    with path.open("rb") as lines:
        for lineno, raw in enumerate(lines, start=1):
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
                yield lineno, None, f"not valid JSON ({exc.msg} at column {exc.colno})"
                continue
            if not isinstance(row, dict):
                yield lineno, None, f"expected a JSON object, got {type(row).__name__}"
                continue
            yield lineno, row, None


def read_corpus(path: str | os.PathLike) -> list[Passage]:
    """Read one JSONL corpus: each line {"text", optional "title", "id", "url"}."""
    path = Path(path)
    if not path.is_file():
        raise CorpusError(f"corpus file not found: {path}")
    passages = []
    for lineno, row, problem in jsonl_objects(path):
        if problem:
            raise CorpusError(f"{path}:{lineno}: {problem}")
        text = row.get("text")
        if not isinstance(text, str) or not text.strip():
            raise CorpusError(f"{path}:{lineno}: missing a non-empty \"text\" field")
        passages.append(Passage(
            id=str(row.get("id") or f"{path.stem}:{lineno}"),
            title=str(row.get("title") or ""),
            text=text,
            url=row.get("url") or None,
        ))
    if not passages:
        raise CorpusError(f"{path}: the corpus holds no passages")
    return passages


def tokenize(texts: list[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)


def corpus_fingerprint(paths: list[Path]) -> str:
    digest = hashlib.sha256(f"format={INDEX_FORMAT}".encode())
    for path in paths:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


class CorpusIndex:
    """A BM25 index over one or more JSONL corpora."""

    def __init__(self, passages: list[Passage], retriever, fingerprint: str, build_seconds: float = 0.0):
        self.passages = passages
        self.retriever = retriever
        self.fingerprint = fingerprint
        self.build_seconds = build_seconds
        self.vocabulary = set(retriever.vocab_dict)

    @classmethod
    def build(cls, passages: list[Passage], fingerprint: str = "memory") -> "CorpusIndex":
        import bm25s

        started = time.perf_counter()
        retriever = bm25s.BM25()
        retriever.index(tokenize([f"{p.title}\n{p.text}" for p in passages]), show_progress=False)
        return cls(passages, retriever, fingerprint, time.perf_counter() - started)

    @classmethod
    def open(cls, paths: list[str | os.PathLike] | None = None, rebuild: bool = False) -> "CorpusIndex":
        """Load the cached index for these corpus files, building it if they changed."""
        import bm25s

        paths = [Path(p) for p in (paths or bundled_corpora())]
        for path in paths:
            if not path.is_file():
                raise CorpusError(f"corpus file not found: {path}")
        fingerprint = corpus_fingerprint(paths)
        folder = cache_dir() / "index" / fingerprint
        if folder.is_dir() and not rebuild:
            try:
                passages = [Passage(**row) for row in json.loads((folder / "passages.json").read_text())]
                return cls(passages, bm25s.BM25.load(str(folder / "bm25")), fingerprint)
            except (OSError, ValueError, TypeError):
                pass  # a damaged cache is rebuilt, never trusted
        passages = [p for path in paths for p in read_corpus(path)]
        index = cls.build(passages, fingerprint)
        index.save(folder)
        return index

    def save(self, folder: Path) -> None:
        """Write into a temporary folder and rename it, so a crash never leaves half an index."""
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".building-"))
        try:
            self.retriever.save(str(staging / "bm25"))
            (staging / "passages.json").write_text(json.dumps([p.__dict__ for p in self.passages], ensure_ascii=False))
            if folder.exists():
                shutil.rmtree(folder)
            staging.rename(folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def unknown_terms(self, query: str) -> list[str]:
        """Query terms that appear nowhere in the corpus."""
        return [t for t in tokenize([query])[0] if t not in self.vocabulary]

    def mentions(self, phrase: str) -> bool:
        """Whether any term of the phrase occurs in the corpus. A phrase with no searchable
        terms ("At", "U.S.") says nothing about the corpus, so it counts as mentioned."""
        terms = tokenize([phrase])[0]
        return not terms or any(t in self.vocabulary for t in terms)

    def search(self, query: str, k: int = 3) -> list[ScoredPassage]:
        terms = [t for t in tokenize([query])[0] if t in self.vocabulary]
        if not terms:
            return []
        k = min(k, len(self.passages))
        ids, scores = self.retriever.retrieve([terms], k=k, show_progress=False)
        return [ScoredPassage(self.passages[int(i)], float(s)) for i, s in zip(ids[0], scores[0]) if s > 0]
