"""What the tools that ask a remote service share: their settings, retries, cache and failures.

A network tool never raises for an outside-world failure. A 429 comes back at once as
RATE_LIMITED so the agent switches tools; a 5xx or a refused connection is retried a couple of
times with exponential backoff (tenacity), then comes back as UNAVAILABLE with the fault in the
note. Answers are cached on disk (`cache.SearchCache`); failures never are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import httpx
from pydantic import BaseModel, ConfigDict
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from deltaseek.errors import ToolConfigError
from deltaseek.programs.tools.base import SearchTool, ToolResult, ToolStatus
from deltaseek.programs.tools.cache import DEFAULT_TTL, SearchCache

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
                raise ToolConfigError(f"{variable}={raw!r} is not a valid {kind.__name__}") from None
            if kind is not str and value < 0:
                raise ToolConfigError(f"{variable}={raw!r} must not be negative")
            values[field] = value
        return cls(**values)


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


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: a 5xx or a connection that failed. Not a 429 (switch tools instead)
    and not a timeout (the agent would wait the timeout again for each retry)."""
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code >= 500
    return isinstance(exc, httpx.TransportError) and not isinstance(exc, httpx.TimeoutException)


def retrying(settings: WebSettings) -> Retrying:
    """Retries for transient faults only, waits growing exponentially from `retry_wait`."""
    return Retrying(
        stop=stop_after_attempt(settings.retries + 1),
        wait=wait_exponential(multiplier=settings.retry_wait, max=max(settings.retry_wait * 8, 1.0)),
        retry=retry_if_exception(is_transient),
        reraise=True,
    )


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
