"""Loading passages into the real-time shard indexes of a Sphinx or Manticore cluster (`deltaseek
index CORPUS --to sphinx:HOST:PORT/INDEX`): in batches, each passage into the shard its id hashes
to, skipping those already there, so an interrupted load resumes. Inserting through a distributed
index is not supported by Sphinx 2.2, so each shard is written to directly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import pymysql

from deltaseek.errors import ToolConfigError
from deltaseek.programs.corpus_files import Passage
from deltaseek.programs.text import fold_accents
from deltaseek.programs.tools.sphinx import SphinxClient, SphinxSettings, SphinxTarget, describe_fault

COLUMNS = ("id", "title", "text", "passage_id", "doc_title", "doc_text", "url")


def document_id(passage_id: str) -> int:
    """A stable positive 63-bit document id for a passage id (Sphinx and Manticore need integers)."""
    return (int.from_bytes(hashlib.sha1(passage_id.encode("utf-8")).digest()[:8], "big") >> 1) or 1


def shard_of(passage_id: str, shards: int) -> int:
    return document_id(passage_id) % shards


@dataclass
class LoadReport:
    added: int = 0
    skipped: int = 0


def load_passages(passages: list[Passage], targets: list[SphinxTarget], settings: SphinxSettings | None = None,
                  progress: Callable[[int], None] | None = None) -> LoadReport:
    """Insert passages into real-time indexes, in batches, each passage into the shard its id
    hashes to (the same shard on every run). Passages already there are skipped, so an
    interrupted load resumes. Raises ToolConfigError naming the shard and the fault."""
    settings = settings or SphinxSettings.from_env()
    clients = [SphinxClient(t, settings) for t in targets]
    report = LoadReport()
    try:
        for start in range(0, len(passages), settings.batch_size):
            batch = passages[start:start + settings.batch_size]
            for shard, client in enumerate(clients):
                mine = {document_id(p.id): p for p in batch if shard_of(p.id, len(clients)) == shard}
                if not mine:
                    continue
                try:
                    report.skipped += len(present := existing_ids(client, list(mine)))
                    # the full-text fields with their accents folded, as the in-process index reads them
                    rows = [(doc, fold_accents(p.title), fold_accents(p.text), p.id, p.title, p.text, p.url or "")
                            for doc, p in mine.items() if doc not in present]
                    if rows:
                        insert_rows(client, rows)
                        report.added += len(rows)
                except (pymysql.err.MySQLError, OSError) as exc:
                    raise ToolConfigError(f"loading into {client.target}: {describe_fault(exc, client.target)} "
                                          f"({report.added} passages added before; re-run to resume)") from exc
            if progress:
                progress(len(batch))
    finally:
        for client in clients:
            client.close()
    return report


def insert_rows(client: SphinxClient, rows: list[tuple]) -> None:
    columns, values = ", ".join(COLUMNS), ", ".join(["%s"] * len(COLUMNS))
    client.run([(f"INSERT INTO {client.target.index} ({columns}) VALUES ({values})", rows)], many=True)


def existing_ids(client: SphinxClient, ids: list[int]) -> set[int]:
    listed = ", ".join(str(i) for i in ids)
    [rows] = client.run([(f"SELECT id FROM {client.target.index} WHERE id IN ({listed}) "
                          f"LIMIT {len(ids)} OPTION max_matches={max(len(ids), 10)}", None)])
    return {int(row[0]) for row in rows}
