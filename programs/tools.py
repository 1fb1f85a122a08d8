"""Search tools. Each returns a ToolResult that says what happened and what was found;
`programs.feedback` turns it into the observation the LM reads (with NEXT STEPS).

A tool never raises for an outside-world failure: rate limits, outages and empty
results are statuses, so the agent can switch tools instead of crashing.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, Field

from programs.corpus import CorpusIndex


class ToolStatus(StrEnum):
    SUCCESS = "success"
    PARTIAL = "partial"
    NO_RESULTS = "no_results"
    RATE_LIMITED = "rate_limited"
    UNAVAILABLE = "unavailable"
    BLOCKED = "blocked"

    @property
    def failed(self) -> bool:
        """The tool itself failed; the query may still be fine with another tool."""
        return self in (ToolStatus.RATE_LIMITED, ToolStatus.UNAVAILABLE)


class Hit(BaseModel):
    title: str = ""
    text: str
    score: float | None = None
    id: str | None = None
    url: str | None = None

    @property
    def source(self) -> str:
        """The key a citation uses: the passage id if there is one, else the url, else the title."""
        return self.id or self.url or self.title


class ToolResult(BaseModel):
    tool: str
    query: str
    status: ToolStatus
    hits: list[Hit] = Field(default_factory=list)
    note: str = ""


class SearchTool:
    """A tool the agent can call with one `query` argument."""

    name: str = "search"
    description: str = "Search for passages."

    def search(self, query: str) -> ToolResult:
        raise NotImplementedError

    def __call__(self, query: str) -> ToolResult:
        return self.search(query)


_WORD = re.compile(r"[\w.]+")
_QUESTION_WORDS = {"who", "what", "when", "where", "which", "why", "how", "is", "are", "was", "the", "a", "an", "in",
                   "of", "does", "did", "do", "current", "currently"}


def named_entities(query: str) -> list[str]:
    """Capitalized words of the query that are not question words: what the query is about."""
    return [w for w in _WORD.findall(query) if w[:1].isupper() and w.lower() not in _QUESTION_WORDS]


class LocalCorpusSearch(SearchTool):
    """BM25 over the bundled (or a given) JSONL corpus. Works offline."""

    name = "search_corpus"
    description = "Search the local document collection (encyclopedia-style passages). Args: query (keywords)."

    def __init__(self, index: CorpusIndex, k: int = 3):
        self.index = index
        self.k = k

    def search(self, query: str) -> ToolResult:
        scored = self.index.search(query, k=self.k)
        hits = [Hit(title=s.passage.title, text=s.passage.text, score=round(s.score, 3), id=s.passage.id,
                    url=s.passage.url) for s in scored]
        unknown = set(self.index.unknown_terms(query))
        missing_entities = [e for e in named_entities(query) if not self.index.mentions(e)]
        if not hits or missing_entities:
            # BM25 still ranks passages on the common words ("population"), but none
            # is about the thing asked for: that is no result, not a weak one.
            about = ", ".join(missing_entities) or query
            return ToolResult(tool=self.name, query=query, status=ToolStatus.NO_RESULTS,
                              note=f"no passage in the corpus mentions {about!r}")
        if unknown:
            return ToolResult(tool=self.name, query=query, status=ToolStatus.PARTIAL, hits=hits,
                              note=f"no passage contains: {', '.join(sorted(unknown))}")
        return ToolResult(tool=self.name, query=query, status=ToolStatus.SUCCESS, hits=hits)
