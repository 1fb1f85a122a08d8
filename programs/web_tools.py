"""Search tools beyond the bundled corpus: the web (ddgs), Wikipedia (MediaWiki API) and a
folder of code or documents. `build_tools` turns `--tools` values into tool instances.

Like every tool, these never raise for an outside-world failure. A 429 comes back at
once as RATE_LIMITED so the agent switches tools; a 5xx or a refused connection is
retried a couple of times with exponential backoff, then comes back as UNAVAILABLE
with the fault in the note. Network answers are cached on disk (`programs.search_cache`).
"""

from __future__ import annotations

import functools
import html
import os
import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import quote, urljoin

import httpx
from pydantic import BaseModel, ConfigDict
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from programs.corpus import CorpusIndex
from programs.search_cache import DEFAULT_TTL, SearchCache
from programs.tools import Hit, LocalCorpusSearch, SearchTool, ToolResult, ToolStatus

DEFAULT_WIKIPEDIA_URL = "https://en.wikipedia.org/w/api.php"


class WebSettings(BaseModel):
    """How network tools behave. `from_env` reads the DELTASEEK_* variables named below."""

    model_config = ConfigDict(use_attribute_docstrings=True, frozen=True)

    timeout: float = 10.0
    """Seconds a network call may take before it is reported UNAVAILABLE (DELTASEEK_SEARCH_TIMEOUT)."""
    retries: int = 2
    """Extra attempts after a 5xx or a refused connection; never after a 429 or a timeout
    (DELTASEEK_SEARCH_RETRIES)."""
    retry_wait: float = 0.5
    """Seconds before the first retry; each later wait doubles (DELTASEEK_SEARCH_RETRY_WAIT)."""
    cache_ttl: float = DEFAULT_TTL
    """Seconds a cached search result stays valid (DELTASEEK_SEARCH_CACHE_TTL)."""
    wikipedia_url: str = DEFAULT_WIKIPEDIA_URL
    """The MediaWiki API endpoint the wikipedia tool queries (DELTASEEK_WIKIPEDIA_URL)."""
    user_agent: str = "deltaseek/0.1 (DSPy search agent; python-httpx)"
    """Sent to Wikipedia, whose API policy asks clients to identify themselves (DELTASEEK_USER_AGENT)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "WebSettings":
        environ = os.environ if environ is None else environ
        names = {"timeout": "DELTASEEK_SEARCH_TIMEOUT", "retries": "DELTASEEK_SEARCH_RETRIES",
                 "retry_wait": "DELTASEEK_SEARCH_RETRY_WAIT", "cache_ttl": "DELTASEEK_SEARCH_CACHE_TTL",
                 "wikipedia_url": "DELTASEEK_WIKIPEDIA_URL", "user_agent": "DELTASEEK_USER_AGENT"}
        values = {}
        for field, variable in names.items():
            raw = environ.get(variable, "").strip()
            if not raw:
                continue
            kind = type(cls.model_fields[field].default)
            try:
                value = kind(raw)
            except ValueError:
                raise ValueError(f"{variable}={raw!r} is not a valid {kind.__name__}") from None
            if kind is not str and value < 0:
                raise ValueError(f"{variable}={raw!r} must not be negative")
            values[field] = value
        return cls(**values)


@functools.cache
def stopwords() -> frozenset[str]:
    """English stopwords plus question words ("what", "who", "how"), from bm25s."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    return frozenset(STOPWORDS_EN_PLUS)


def key_terms(query: str) -> list[str]:
    """The words a relevant text must contain: the query without stopwords and question words."""
    import bm25s

    return bm25s.tokenize(query, stopwords=list(stopwords()), return_ids=False, show_progress=False)[0]


def missing_terms(query: str, texts: list[str]) -> list[str]:
    """Key terms of the query that none of the texts contains."""
    seen = " ".join(texts).lower()
    return list(dict.fromkeys(t for t in key_terms(query) if t not in seen))


def clip(text: str, max_chars: int) -> str:
    """Cut long text at a sentence end (or a space) so the LM reads whole sentences."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    cut = head.rfind(". ")
    if cut < max_chars // 2:
        cut = head.rfind(" ")
    return head[: cut + 1 if cut > 0 else max_chars].rstrip() + " …"


class NetworkTool(SearchTool):
    """A tool that asks a remote service: results are cached, failures are statuses."""

    def __init__(self, settings: WebSettings | None = None, cache: SearchCache | None = None):
        self.settings = settings or WebSettings.from_env()
        self.cache = cache

    @property
    def cache_scope(self) -> str:
        """What besides the query decides the answer (endpoint, result count): part of the cache key."""
        return ""

    def search(self, query: str) -> ToolResult:
        if not query.strip():
            return ToolResult(tool=self.name, query=query, status=ToolStatus.NO_RESULTS, note="the query is empty")
        if self.cache is not None and (cached := self.cache.lookup(self.name, self.cache_scope, query)):
            return cached
        result = self.fetch(query)
        if self.cache is not None:
            self.cache.store(self.cache_scope, result)
        return result

    def fetch(self, query: str) -> ToolResult:
        raise NotImplementedError


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


class WikipediaApiError(Exception):
    """The MediaWiki API answered 200 with an {"error": {...}} object."""

    def __init__(self, code: str, info: str):
        super().__init__(f"{code}: {info}")
        self.code = code
        self.info = info


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: a 5xx or a connection that failed. Not a 429 (switch tools instead)
    and not a timeout (the agent would wait the timeout again for each retry)."""
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code >= 500
    return isinstance(exc, httpx.TransportError) and not isinstance(exc, httpx.TimeoutException)


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
            raise ValueError(f"Wikipedia endpoint {self.endpoint!r} is not an http(s) URL")
        self.client = httpx.Client(timeout=self.settings.timeout, follow_redirects=True,
                                   headers={"User-Agent": self.settings.user_agent})
        self.retrying = Retrying(
            stop=stop_after_attempt(self.settings.retries + 1),
            wait=wait_exponential(multiplier=self.settings.retry_wait, max=max(self.settings.retry_wait * 8, 1.0)),
            retry=retry_if_exception(is_transient),
            reraise=True,
        )

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


# --- a folder of code or documents -------------------------------------------------------

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


# --- --tools --------------------------------------------------------------------------------

TOOL_CHOICES = "local, web, wikipedia or files:PATH"


def parse_tool_spec(spec: list[str] | str | None) -> list[str]:
    """`["web,wikipedia", "files:src"]` → `["web", "wikipedia", "files:src"]`; nothing → `["local"]`."""
    values = [spec] if isinstance(spec, str) else list(spec or [])
    items = [part.strip() for value in values for part in value.split(",") if part.strip()]
    return list(dict.fromkeys(items)) or ["local"]


def build_tools(spec: list[str] | str | None, corpus_index_factory: Callable[[], CorpusIndex], use_cache: bool = True,
                settings: WebSettings | None = None) -> list[SearchTool]:
    """The tools named by `--tools`. Raises ValueError, naming the value, for an unknown
    tool or a files: path that does not exist."""
    items = parse_tool_spec(spec)
    for item in items:
        kind, _, arg = item.partition(":")
        if item not in ("local", "web", "wikipedia") and not (kind == "files" and arg.strip()):
            raise ValueError(f"unknown --tools value {item!r}: choose {TOOL_CHOICES}")
        if kind == "files" and not Path(arg.strip()).expanduser().exists():
            raise ValueError(f"--tools {item}: no such file or folder")

    settings = settings or WebSettings.from_env()
    cache = SearchCache(ttl=settings.cache_ttl) if use_cache and {"web", "wikipedia"} & set(items) else None
    tools: list[SearchTool] = []
    for item in items:
        if item == "local":
            tools.append(LocalCorpusSearch(corpus_index_factory()))
        elif item == "web":
            tools.append(WebSearch(settings=settings, cache=cache))
        elif item == "wikipedia":
            tools.append(WikipediaSearch(settings=settings, cache=cache))
        else:
            tools.append(LocalFilesSearch(item.partition(":")[2].strip()))
    names = [t.name for t in tools]
    if len(set(names)) < len(names):
        raise ValueError(f"--tools {','.join(items)}: give files:PATH once (two tools would share the name search_files)")
    return tools
