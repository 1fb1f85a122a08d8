"""Web search through ddgs, which queries several engines (DuckDuckGo among them) and merges results."""

from __future__ import annotations

from deltaseek.programs.tools.base import Hit, ToolResult, ToolStatus
from deltaseek.programs.tools.cache import SearchCache
from deltaseek.programs.tools.network import NetworkTool, WebSettings


class WebSearch(NetworkTool):
    """Web search through `ddgs`, which queries several engines (DuckDuckGo among them) and merges results."""

    name = "web_search"
    description = ("Search the web for pages about a topic; returns titles, urls and snippets. "
                   "Good for recent or niche facts. Args: query (keywords).")

    def __init__(self, k: int = 5, backend: str = "auto", settings: WebSettings | None = None,
                 cache: SearchCache | None = None):
        super().__init__(settings, cache)
        self.k = k
        self.backend = backend

    @property
    def cache_scope(self) -> str:
        return f"backend={self.backend};k={self.k}"

    def fetch(self, query: str) -> ToolResult:
        from ddgs import DDGS
        from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

        def failed(status: ToolStatus, note: str) -> ToolResult:
            return ToolResult(tool=self.name, query=query, status=status, note=note)

        try:
            rows = DDGS(timeout=self.settings.timeout).text(query, max_results=self.k, backend=self.backend)
        except RatelimitException as exc:
            return failed(ToolStatus.RATE_LIMITED, f"the web search engines rate-limited us ({exc})")
        except TimeoutException:
            return failed(ToolStatus.UNAVAILABLE, f"web search timed out after {self.settings.timeout:g}s")
        except DDGSException as exc:
            # ddgs 9 raises "No results found." when no engine returned anything; an engine
            # that refuses us (HTTP 202/429) also returns nothing, so the note says both.
            if "no results found" in str(exc).lower():
                rows = []
            else:
                return failed(ToolStatus.UNAVAILABLE, f"web search failed: {exc}")
        hits = [Hit(title=row.get("title") or "", text=row.get("body") or row.get("title") or "",
                    url=row.get("href") or None)
                for row in rows if row.get("body") or row.get("title")]
        if not hits:
            return failed(ToolStatus.NO_RESULTS,
                          f"no web page found for {query!r} (engines that refuse requests also answer this way)")
        return ToolResult(tool=self.name, query=query, status=ToolStatus.SUCCESS, hits=hits[: self.k])
