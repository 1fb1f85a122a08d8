"""BM25 search over JSONL corpora, with the index persisted in a cache folder.

The index is keyed by the content hash of the corpus files, so it is built once and rebuilt
whenever a corpus file changes. The key of a built index is the hash of the very bytes it parsed
(hashed as they are read), never of an earlier read: a file replaced between the cache lookup and
the parse (an editor's save, a sync job) is stored under its new content's key, so a key can
never hold another file's passages. A cached folder records its key and is read only when the
key matches the file as it is now.

Every passage is validated as its file is read (`corpus_files.read_corpus`), so a bad line is
a `CorpusError` naming its file and line, never a failure at search time.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from deltaseek.bundled import bundled_corpora
from deltaseek.errors import CorpusError, DeltaSeekError, IndexCacheError
from deltaseek.programs.corpus_files import Passage, read_corpus
from deltaseek.programs.text import fold_accents, split_unspaced

INDEX_FORMAT = 4
"""4: text written mostly without spaces indexed as pairs of characters, marks folded on Latin letters only.
3: terms with their accents folded. 2: keyed by the bytes parsed; an index of format 1 may hold a
replaced file's passages: never read."""


INDEX_BYTES_PER_CORPUS_BYTE = 8
"""Peak memory of an in-process index build per byte of JSONL, measured with
`/usr/bin/time -v deltaseek index` (README, Reliability: 7.6 to 8): the passages, their terms and
bm25s's matrices are all held at once."""
INDEX_BASE_BYTES = 300 << 20
"""The process before the corpus: Python, numpy, bm25s, DSPy (250 MB measured)."""


def available_memory() -> int | None:
    """Bytes this process may still use: the least of the system's available memory, the cgroup's
    limit (a container) and `DELTASEEK_INDEX_MEMORY` (bytes, or with a K, M or G suffix); None if unknown."""
    limits = []
    try:
        with open("/proc/meminfo") as meminfo:
            limits += [int(line.split()[1]) * 1024 for line in meminfo if line.startswith("MemAvailable:")]
    except OSError:
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = Path("/sys/fs/cgroup/memory.current").read_text().strip()
        if limit.isdigit() and used.isdigit():
            limits.append(int(limit) - int(used))
    except OSError:
        pass
    if setting := os.environ.get("DELTASEEK_INDEX_MEMORY", "").strip().upper():
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(setting[-1], 1)
        try:
            limits.append(int(float(setting.rstrip("KMG")) * scale))
        except ValueError:
            raise DeltaSeekError(f"DELTASEEK_INDEX_MEMORY={setting!r}: expected bytes, such as 8G or 512M") from None
    return min(limits) if limits else None


def check_memory_for(paths: list[Path]) -> None:
    """CorpusError, before anything is read, when building the index in process would need more
    memory than is available: the estimate, what is available, and where such a corpus goes instead."""
    size = sum(p.stat().st_size for p in paths)
    needed, available = INDEX_BASE_BYTES + INDEX_BYTES_PER_CORPUS_BYTE * size, available_memory()
    if available is not None and needed > available:
        raise CorpusError(f"{', '.join(map(str, paths))} ({size / 1e9:.2f} GB) needs about {needed / 1e9:.1f} GB of "
                          f"memory to index in process and {available / 1e9:.1f} GB is available; load it into a search "
                          "cluster instead: deltaseek index CORPUS --to sphinx:HOST:PORT/INDEX, then ask with "
                          "--tools sphinx:HOST:PORT/INDEX")


def cache_dir() -> Path:
    return Path(os.environ.get("DELTASEEK_CACHE", Path.home() / ".cache" / "deltaseek"))


@dataclass(frozen=True)
class ScoredPassage:
    passage: Passage
    score: float


class CorpusDigest:
    """The fingerprint of corpus files: a hash of the index format and, for each file, its bytes,
    then its name's stem (a passage without an id is named after it) and its length."""

    def __init__(self):
        self._sha = hashlib.sha256(f"format={INDEX_FORMAT}".encode())
        self._length = 0

    def update(self, data: bytes) -> None:
        self._sha.update(data)
        self._length += len(data)

    def end_file(self, path: Path) -> None:
        self._sha.update(f"\0{path.stem}\0{self._length}\0".encode())
        self._length = 0

    def hexdigest(self) -> str:
        return self._sha.hexdigest()[:20]



def tokenize(texts: list[str]) -> list[list[str]]:
    """BM25 terms, accents folded (a query for "Beyonce" finds the passages that say "Beyoncé"),
    and text written without spaces cut into pairs of characters (`split_unspaced`)."""
    import bm25s

    return bm25s.tokenize([split_unspaced(fold_accents(t)) for t in texts], stopwords="en", return_ids=False,
                          show_progress=False)


def corpus_fingerprint(paths: list[Path]) -> str:
    """The files' fingerprint as they are now, read in chunks (a large corpus is never held whole)."""
    digest = CorpusDigest()
    for path in paths:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        digest.end_file(path)
    return digest.hexdigest()


class CorpusIndex:
    """A BM25 index over one or more JSONL corpora."""

    def __init__(self, passages: list[Passage], retriever, fingerprint: str, build_seconds: float = 0.0):
        self.passages = passages
        self.retriever = retriever
        self.fingerprint = fingerprint
        self.build_seconds = build_seconds
        self.vocabulary = set(retriever.vocab_dict)

    @classmethod
    def build(cls, passages: list[Passage], fingerprint: str = "memory", where: str = "the corpus") -> "CorpusIndex":
        """The BM25 index of the passages; CorpusError when no passage holds a searchable word
        (`where` names the files)."""
        import bm25s

        started = time.perf_counter()
        tokens = tokenize([f"{p.title}\n{p.text}" for p in passages])
        if not any(tokens):
            raise CorpusError(f"{where}: no passage holds a searchable word (every text is stopwords, one-character "
                              "words or punctuation, such as \"the of and\"): there is nothing to search")
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        return cls(passages, retriever, fingerprint, time.perf_counter() - started)

    @classmethod
    def open(cls, paths: list[str | os.PathLike] | None = None, rebuild: bool = False,
             must_save: bool = False) -> "CorpusIndex":
        """Load the cached index for these corpus files, building it if they changed. A cache that
        cannot be written costs one warning line (IndexCacheError with `must_save`); a corpus too
        large to index in the memory available is refused before it is read (`check_memory_for`)."""
        import bm25s

        paths = [Path(p) for p in (paths or bundled_corpora())]
        for path in paths:
            if not path.is_file():
                raise CorpusError(f"corpus file not found: {path}")
        fingerprint = corpus_fingerprint(paths)
        folder = cache_dir() / "index" / fingerprint
        if folder.is_dir() and not rebuild:
            try:
                if (folder / "fingerprint").read_text() != fingerprint:
                    raise ValueError("the folder holds another corpus's index")
                passages = [Passage(**row) for row in json.loads((folder / "passages.json").read_text())]
                return cls(passages, bm25s.BM25.load(str(folder / "bm25")), fingerprint)
            except (OSError, ValueError, TypeError):
                pass  # a damaged or mislabelled cache is rebuilt, never trusted
        check_memory_for(paths)
        seen_ids: dict[str, str] = {}
        digest = CorpusDigest()
        passages = [p for path in paths for p in read_corpus(path, seen_ids, digest)]
        # keyed by what was parsed: a file replaced since the lookup above is stored under its new content
        index = cls.build(passages, digest.hexdigest(), ", ".join(map(str, paths)))
        folder = cache_dir() / "index" / index.fingerprint
        try:
            index.save(folder)
        except OSError as exc:
            if must_save:
                raise IndexCacheError(f"the index could not be saved in {folder.parent}: {exc.strerror or exc} "
                                      "(is that disk full? set DELTASEEK_CACHE to a folder with room)") from None
            # the index in memory answers this run; only the next run's start is slower
            print(f"deltaseek: warning: the index cache could not be written in {folder.parent} "
                  f"({exc.strerror or exc}); the index is used from memory and built again next time",
                  file=sys.stderr)
        return index

    def save(self, folder: Path) -> None:
        """Write into a temporary folder and rename it, so a crash never leaves half an index."""
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".building-"))
        try:
            self.retriever.save(str(staging / "bm25"))
            with (staging / "passages.json").open("w", encoding="utf-8") as handle:  # streamed, never one string
                json.dump([asdict(p) for p in self.passages], handle, ensure_ascii=False)
            (staging / "fingerprint").write_text(self.fingerprint)
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
