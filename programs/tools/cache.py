"""A disk cache of search results, so a repeated query costs no request and no rate limit.

Results are keyed by tool name, the tool's scope (its endpoint and settings) and the
normalized query. Only answers are cached: a rate limit or an outage says nothing
about the query, and caching it would keep the tool failing after it recovered.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import diskcache
from pydantic import ValidationError

from deltaseek.programs.index import cache_dir
from deltaseek.programs.text import normalize_query
from deltaseek.programs.tools.base import ToolResult, ToolStatus

logger = logging.getLogger(__name__)

DEFAULT_TTL = 24 * 3600.0
CACHEABLE = frozenset({ToolStatus.SUCCESS, ToolStatus.PARTIAL, ToolStatus.NO_RESULTS})


def search_cache_dir() -> Path:
    return cache_dir() / "search"


class SearchCache:
    """ToolResults stored as JSON in a diskcache folder, each expiring after `ttl` seconds.

    A cache that cannot be opened or written (read-only home, locked database) is
    switched off with one warning: it saves time, it must never stop a search.
    """

    def __init__(self, folder: str | Path | None = None, ttl: float = DEFAULT_TTL):
        self.folder = Path(folder) if folder else search_cache_dir()
        self.ttl = ttl
        self._cache: diskcache.Cache | None = None
        self._broken = False

    def _open(self) -> diskcache.Cache | None:
        if self._cache is None and not self._broken:
            try:
                self._cache = diskcache.Cache(str(self.folder))
            except (OSError, sqlite3.Error) as exc:
                self._disable(exc)
        return self._cache

    def _disable(self, exc: Exception) -> None:
        logger.warning("search cache at %s switched off: %s: %s", self.folder, type(exc).__name__, exc)
        self._broken = True
        self._cache = None

    @staticmethod
    def key(tool: str, scope: str, query: str) -> str:
        return "\x1f".join((tool, scope, normalize_query(query)))

    def lookup(self, tool: str, scope: str, query: str) -> ToolResult | None:
        """The cached result for this query, reported under the query as asked now."""
        cache = self._open()
        if cache is None:
            return None
        try:
            stored = cache.get(self.key(tool, scope, query), retry=True)
        except (OSError, sqlite3.Error, diskcache.Timeout) as exc:
            self._disable(exc)
            return None
        if stored is None:
            return None
        try:
            result = ToolResult.model_validate_json(stored)
        except ValidationError:
            return None  # written by an older format: fetch again
        return result.model_copy(update={"query": query})

    def store(self, scope: str, result: ToolResult) -> bool:
        """Keep an answer (success, partial, no results); never a failure. Returns whether it was kept."""
        if result.status not in CACHEABLE:
            return False
        cache = self._open()
        if cache is None:
            return False
        try:
            return cache.set(self.key(result.tool, scope, result.query), result.model_dump_json(), expire=self.ttl,
                             retry=True)
        except (OSError, sqlite3.Error, diskcache.Timeout) as exc:
            self._disable(exc)
            return False

    def clear(self) -> None:
        cache = self._open()
        if cache is not None:
            cache.clear(retry=True)

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None
