"""Wikipedia: full-text search on a MediaWiki API, then the plain-text intros of the best pages."""

from __future__ import annotations

import html
import re
from urllib.parse import quote, urljoin

import httpx

from deltaseek.errors import ToolConfigError
from deltaseek.programs.text import missing_terms
from deltaseek.programs.tools.base import Hit, ToolResult, ToolStatus
from deltaseek.programs.tools.cache import SearchCache
from deltaseek.programs.tools.network import NetworkTool, WebSettings, clip, retrying


class WikipediaApiError(Exception):
    """The MediaWiki API answered 200 with an {"error": {...}} object."""

    def __init__(self, code: str, info: str):
        super().__init__(f"{code}: {info}")
        self.code = code
        self.info = info


_TAG = re.compile(r"<[^>]+>")


def strip_html(text: str) -> str:
    """Search snippets come with <span class="searchmatch"> highlighting."""
    return html.unescape(_TAG.sub("", text))


class WikipediaSearch(NetworkTool):
    """Full-text search on a MediaWiki API, then the plain-text intros of the best pages."""

    name = "wikipedia"
    description = ("Search Wikipedia and read the introductions of the best-matching articles. "
                   "Good for people, places, organisations and established facts. Args: query (a topic or name).")

    def __init__(self, k: int = 3, endpoint: str | None = None, max_chars: int = 1200,
                 settings: WebSettings | None = None, cache: SearchCache | None = None):
        super().__init__(settings, cache)
        self.k = k
        self.max_chars = max_chars
        self.endpoint = endpoint or self.settings.wikipedia_url
        if httpx.URL(self.endpoint).scheme not in ("http", "https"):
            raise ToolConfigError(f"Wikipedia endpoint {self.endpoint!r} is not an http(s) URL")
        self.client = httpx.Client(timeout=self.settings.timeout, follow_redirects=True,
                                   headers={"User-Agent": self.settings.user_agent})
        self.retrying = retrying(self.settings)

    @property
    def cache_scope(self) -> str:
        return f"{self.endpoint};k={self.k};chars={self.max_chars}"

    def close(self) -> None:
        self.client.close()

    def _get_once(self, params: dict[str, str | int]) -> dict:
        response = self.client.get(self.endpoint, params={**params, "format": "json", "formatversion": 2})
        response.raise_for_status()
        data = response.json()
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, got {type(data).__name__}")
        if isinstance(data.get("error"), dict):
            raise WikipediaApiError(str(data["error"].get("code", "?")), str(data["error"].get("info", "")))
        return data

    def _get(self, params: dict[str, str | int]) -> dict:
        return self.retrying(self._get_once, params)

    def _failure(self, query: str, exc: Exception) -> ToolResult:
        """Name the fault in the note: which status, which service, how many attempts."""
        attempts = self.retrying.statistics.get("attempt_number", 1)
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        status = ToolStatus.UNAVAILABLE
        if isinstance(exc, httpx.HTTPStatusError):
            code = exc.response.status_code
            note = f"HTTP {code} from the Wikipedia API{tries}"
            if code == 429:
                status = ToolStatus.RATE_LIMITED
                if retry_after := exc.response.headers.get("Retry-After"):
                    note += f" (Retry-After: {retry_after})"
        elif isinstance(exc, httpx.TimeoutException):
            note = f"the Wikipedia API timed out after {self.settings.timeout:g}s"
        elif isinstance(exc, httpx.TransportError):
            note = f"cannot reach the Wikipedia API at {self.endpoint}{tries} ({type(exc).__name__}: {exc})"
        elif isinstance(exc, WikipediaApiError):
            if exc.code in ("ratelimited", "maxlag"):
                status = ToolStatus.RATE_LIMITED
            note = f"the Wikipedia API refused the request ({exc.code}: {exc.info})"
        elif isinstance(exc, ValueError):
            note = f"invalid JSON from the Wikipedia API ({exc})"
        else:
            note = f"unexpected JSON from the Wikipedia API ({type(exc).__name__}: {exc})"
        return ToolResult(tool=self.name, query=query, status=status, note=note)

    def fetch(self, query: str) -> ToolResult:
        try:
            found = self._get({"action": "query", "list": "search", "srsearch": query, "srlimit": self.k,
                               "srprop": "snippet", "srinfo": "suggestion"})
            results = found.get("query", {}).get("search", [])
            if not results:
                suggestion = found.get("query", {}).get("searchinfo", {}).get("suggestion")
                hint = f"; Wikipedia suggests {suggestion!r}" if suggestion else ""
                return ToolResult(tool=self.name, query=query, status=ToolStatus.NO_RESULTS,
                                  note=f"no Wikipedia article matches {query!r}{hint}")
            titles = [r["title"] for r in results[: self.k]]
            pages = self._pages(self._get({"action": "query", "prop": "extracts|info", "exintro": 1,
                                           "explaintext": 1, "exlimit": len(titles), "inprop": "url",
                                           "titles": "|".join(titles)}))
        except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError, WikipediaApiError) as exc:
            # KeyError and friends: a 200 whose JSON is not shaped like a MediaWiki answer.
            return self._failure(query, exc)

        by_title = {p.get("title"): p for p in pages}
        hits = []
        for result in results[: self.k]:
            page = by_title.get(result["title"], {})
            text = page.get("extract") or strip_html(result.get("snippet", ""))
            if not text.strip():
                continue
            hits.append(Hit(title=result["title"], text=clip(text, self.max_chars),
                            url=page.get("fullurl") or self.page_url(result["title"])))
        if not hits:
            return ToolResult(tool=self.name, query=query, status=ToolStatus.NO_RESULTS,
                              note=f"the Wikipedia articles matching {query!r} have no text")
        if missing := missing_terms(query, [f"{h.title} {h.text}" for h in hits]):
            return ToolResult(tool=self.name, query=query, status=ToolStatus.PARTIAL, hits=hits,
                              note=f"no article intro mentions: {', '.join(missing)}")
        return ToolResult(tool=self.name, query=query, status=ToolStatus.SUCCESS, hits=hits)

    @staticmethod
    def _pages(data: dict) -> list[dict]:
        """formatversion=2 gives a list of pages; older servers give a dict keyed by page id."""
        pages = data.get("query", {}).get("pages", [])
        pages = pages.values() if isinstance(pages, dict) else pages
        return [p for p in pages if isinstance(p, dict)]

    def page_url(self, title: str) -> str:
        return urljoin(self.endpoint, "/wiki/" + quote(title.replace(" ", "_")))
