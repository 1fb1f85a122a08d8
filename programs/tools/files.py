"""A folder of code or documents, searched with BM25 over overlapping windows of lines."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

from deltaseek.programs.text import stopwords
from deltaseek.programs.tools.base import Hit, SearchTool, ToolResult, ToolStatus

SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "dist", "build"})
_WORD = re.compile(r"\w+")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_DEFINITION = re.compile(r"^\s*(export\s+)?(public\s+|abstract\s+)*"
                         r"(class|def|async\s+def|interface|type|struct|trait|enum|protocol|fn|func|function)\b")


def code_tokens(text: str) -> list[str]:
    """Words, lower-cased, plus the parts of compound identifiers: VectorStore and
    vector_store both give `vector` and `store`, so either spelling finds the other."""
    skip = stopwords()
    tokens = []
    for word in _WORD.findall(text):
        parts = [p.lower() for p in _PART.findall(word)]
        tokens.append(word.lower())
        if len(parts) > 1:
            tokens.extend(parts)
    return [t for t in tokens if len(t) > 1 and t not in skip]


def is_skipped_dir(path: Path) -> bool:
    """Version control, virtualenvs (by name or by their pyvenv.cfg), caches and dependencies."""
    return path.name.startswith(".") or path.name in SKIPPED_DIRS or (path / "pyvenv.cfg").exists()


def read_text_file(path: Path, max_bytes: int) -> list[str] | None:
    """The file's lines, or None for a binary, undecodable, unreadable or oversized file."""
    try:
        if path.stat().st_size > max_bytes:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None


class LocalFilesSearch(SearchTool):
    """BM25 (bm25s) over overlapping windows of lines in every text file under a folder.

    The folder is read on the first search and indexed once per instance. A hit names
    `path:line` of the line in its window that holds the most query terms (a definition
    wins a tie), so "VectorStore interface" points at `class VectorStore`, not an import.
    """

    name = "search_files"

    def __init__(self, root: str | os.PathLike, k: int = 3, window: int = 12, context: int = 10,
                 max_file_bytes: int = 1_000_000):
        self.root = Path(root).expanduser()
        self.k = k
        self.window = window
        self.context = context
        self.max_file_bytes = max_file_bytes
        self.description = (f"Search the files (code or documents) under {self.root}; returns path:line and the "
                            "lines there. Args: query (identifiers or keywords, e.g. a class name).")
        self._lock = threading.Lock()
        self._files: dict[str, list[str]] | None = None
        self._windows: list[tuple[str, int, int]] = []  # (relative path, first line index, end index)
        self._retriever = None
        self._vocabulary: set[str] = set()

    def files(self) -> list[Path]:
        if self.root.is_file():
            return [self.root]
        found = []
        for folder, dirs, names in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if not is_skipped_dir(Path(folder) / d))
            found.extend(Path(folder) / n for n in sorted(names))
        return found

    def _build(self) -> None:
        import bm25s

        files: dict[str, list[str]] = {}
        for path in self.files():
            lines = read_text_file(path, self.max_file_bytes)
            if lines and any(line.strip() for line in lines):
                rel = path.name if self.root.is_file() else path.relative_to(self.root).as_posix()
                files[rel] = lines
        windows, corpus = [], []
        stride = max(1, self.window // 2)
        for rel, lines in files.items():
            path_tokens = code_tokens(rel)
            line_tokens = [code_tokens(line) for line in lines]  # once per line, though windows overlap
            for start in range(0, max(1, len(lines) - stride), stride):
                end = min(start + self.window, len(lines))
                windows.append((rel, start, end))
                corpus.append(path_tokens + [t for tokens in line_tokens[start:end] for t in tokens])
        if corpus:
            retriever = bm25s.BM25()
            retriever.index(corpus, show_progress=False)
            self._retriever = retriever
            self._vocabulary = set(retriever.vocab_dict)
        self._windows = windows
        self._files = files

    def _ensure_index(self) -> None:
        with self._lock:
            if self._files is None:
                self._build()

    def best_line(self, lines: list[str], start: int, end: int, terms: set[str]) -> int:
        """Index of the line in [start, end) naming the most query terms; definitions win ties."""
        def score(i: int) -> float:
            named = len(terms.intersection(code_tokens(lines[i])))
            return named + (0.5 if named and _DEFINITION.match(lines[i]) else 0.0)

        return max(range(start, end), key=lambda i: (score(i), -i))

    def knows(self, word: str) -> bool:
        """Whether the files contain the word, or all parts of it: `vector_store` is known
        from `VectorStore`'s parts, and `VectorStore` from `vector` and `store`."""
        whole, *parts = code_tokens(word)
        return whole in self._vocabulary or bool(parts) and all(p in self._vocabulary for p in parts)

    def search(self, query: str) -> ToolResult:
        def answer(status: ToolStatus, note: str = "", hits: list[Hit] | None = None) -> ToolResult:
            return ToolResult(tool=self.name, query=query, status=status, hits=hits or [], note=note)

        if not self.root.exists():
            return answer(ToolStatus.UNAVAILABLE, f"the folder {self.root} no longer exists")
        self._ensure_index()
        if not self._files:
            return answer(ToolStatus.NO_RESULTS, f"no readable text file under {self.root}")
        terms = [t for t in dict.fromkeys(code_tokens(query)) if t in self._vocabulary]
        if not terms:
            return answer(ToolStatus.NO_RESULTS, f"no file under {self.root} mentions {query!r}")

        ids, scores = self._retriever.retrieve([terms], k=min(len(self._windows), self.k * 4), show_progress=False)
        hits, seen = [], set()
        for i, score in zip(ids[0], scores[0]):
            if score <= 0 or len(hits) == self.k:
                break
            rel, start, end = self._windows[int(i)]
            lines = self._files[rel]
            line = self.best_line(lines, start, end, set(terms))
            if (rel, line) in seen:
                continue  # overlapping windows often point at the same line
            seen.add((rel, line))
            snippet = "\n".join(lines[line: line + self.context]).rstrip()
            hits.append(Hit(title=rel, text=snippet or lines[line], score=round(float(score), 3), id=f"{rel}:{line + 1}"))
        if not hits:
            return answer(ToolStatus.NO_RESULTS, f"no file under {self.root} mentions {query!r}")
        unknown = [w for w in dict.fromkeys(_WORD.findall(query)) if code_tokens(w) and not self.knows(w)]
        if unknown:
            return answer(ToolStatus.PARTIAL, f"no file contains: {', '.join(unknown)}", hits)
        return answer(ToolStatus.SUCCESS, hits=hits)
