"""`deltaseek index`: a corpus's BM25 index built and saved now, or its passages loaded into
Sphinx/Manticore real-time shards."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from deltaseek.errors import CorpusError, UsageError
from deltaseek.programs.corpus_files import read_corpus
from deltaseek.programs.index import CorpusIndex
from deltaseek.programs.tools import load_passages, parse_target


def index_corpora(corpora: list[str], to: list[str] | None = None) -> None:
    """Build and save the index of `corpora`, or, with `to` (sphinx:HOST:PORT/INDEX targets, each
    maybe comma-separated), load their passages into those shards; one line says what was done."""
    for path in corpora:
        if not Path(path).is_file():
            raise CorpusError(f"corpus file not found: {path}")
    if to:
        load_into_sphinx(corpora, to)
        return
    index = CorpusIndex.open(corpora, rebuild=True, must_save=True)
    print(f"indexed {len(index.passages)} passages in {index.build_seconds:.2f} s ({index.fingerprint})")


def load_into_sphinx(corpora: list[str], to: list[str]) -> None:
    """The corpora into real-time shard indexes, spread by a hash of each passage's id, in
    batches, with a progress bar; passages already there are skipped."""
    from tqdm import tqdm

    targets = [parse_target(part) for value in to for part in value.split(",") if part.strip()]
    if repeated := sorted({str(t) for t in targets if targets.count(t) > 1}):
        raise UsageError(f"--to names {', '.join(repeated)} more than once")
    passages = [p for path in corpora for p in read_corpus(path)]
    started = time.perf_counter()
    with tqdm(total=len(passages), desc="loading", unit="passage", file=sys.stderr) as bar:
        report = load_passages(passages, targets, progress=bar.update)
    print(f"loaded {len(passages)} passages into {len(targets)} shard(s) in {time.perf_counter() - started:.2f} s: "
          f"{report.added} added, {report.skipped} already there")
