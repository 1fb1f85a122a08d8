"""What every search tool is: a `SearchTool` taking one query and returning a `ToolResult` that
says what happened and what was found; `feedback` turns it into the observation the LM reads.

A tool never raises for an outside-world failure: rate limits, outages and empty
results are statuses, so the agent can switch tools instead of crashing.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field


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


def ranked_result(tool: str, query: str, hits: list[Hit], unknown_terms: list[str], missing_entities: list[str],
                  collection: str) -> ToolResult:
    """The status of a ranked search over a collection the tool knows the vocabulary of (the
    in-process corpus, a search cluster): no results when nothing matched or when a name the
    query holds occurs nowhere (BM25 still ranks passages on the common words, "population", but
    none is about the thing asked for), partial when some query words occur nowhere."""
    if not hits or missing_entities:
        about = ", ".join(missing_entities) or query
        return ToolResult(tool=tool, query=query, status=ToolStatus.NO_RESULTS,
                          note=f"no passage in the {collection} mentions {about!r}")
    if unknown_terms:
        return ToolResult(tool=tool, query=query, status=ToolStatus.PARTIAL, hits=hits,
                          note=f"no passage contains: {', '.join(sorted(unknown_terms))}")
    return ToolResult(tool=tool, query=query, status=ToolStatus.SUCCESS, hits=hits)


class SearchTool:
    """A tool the agent can call with one `query` argument.

    A tool that sets `skips_seen` also takes `seen`, the ids of passages the agent has already
    read, and returns the next-best passages in their place: each search then adds something
    new, which is the point of refining a query.
    """

    name: str = "search"
    description: str = "Search for passages."
    skips_seen: bool = False

    def search(self, query: str) -> ToolResult:
        raise NotImplementedError

    def names(self, term: str) -> bool | None:
        """Whether any passage this tool can reach names `term`: True, False, or None when the
        tool cannot tell (the web, an encyclopedia's search box). Only a False makes a
        subject "missing from the sources"; a search that found other passages does not."""
        return None

    def __call__(self, query: str, seen: frozenset[str] = frozenset()) -> ToolResult:
        return self.search(query, seen=seen) if self.skips_seen else self.search(query)


class WrappedTool(SearchTool):
    """Another tool as the agent sees it (name, description, `seen`, `names`), for a wrapper that
    records something about each search: a subclass overrides `search` and calls this one."""

    def __init__(self, tool: SearchTool):
        self.tool = tool
        self.name, self.description, self.skips_seen = tool.name, tool.description, tool.skips_seen

    def search(self, query: str, **kwargs) -> ToolResult:
        return self.tool.search(query, **kwargs)

    def names(self, term: str) -> bool | None:
        return self.tool.names(term)


def tools_naming(tools: dict[str, SearchTool], subject: str) -> dict[str, bool | None]:
    """Whether each tool's collection names the subject: True, False, or None when the tool
    cannot tell (see `SearchTool.names`)."""
    said = {}
    for name, tool in tools.items():
        try:
            said[name] = tool.names(subject)
        except Exception:  # a tool that cannot answer this cannot tell
            said[name] = None
    return said
