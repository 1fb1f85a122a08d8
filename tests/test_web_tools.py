"""Web, Wikipedia and files tools, offline.

ddgs is replaced at its public API. The Wikipedia tool talks to a real HTTP server on
127.0.0.1 that answers like MediaWiki, or fails on purpose for some queries.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from deltaseek.errors import ToolConfigError
from deltaseek.programs.text import normalize_query
from deltaseek.programs.tools import (LocalCorpusSearch, LocalFilesSearch, SearchCache, ToolResult, ToolStatus, WebSearch,
                                     WebSettings, WikipediaSearch, build_tools, parse_tool_spec)
from deltaseek.programs.tools.files import code_tokens

FAST = WebSettings(timeout=0.5, retries=2, retry_wait=0.0)

ARTICLES = {
    "Yukihiro Matsumoto": "Yukihiro Matsumoto is a Japanese computer scientist and the creator of the Ruby "
                          "programming language. He was born on 14 April 1965 in Osaka.",
    "Ruby (programming language)": "Ruby is an interpreted, high-level, general-purpose programming language "
                                   "designed by Yukihiro Matsumoto in the mid-1990s.",
    "The New York Times": "The New York Times is an American daily newspaper based in New York City.",
}
SEARCHES = {
    "ruby creator": ["Yukihiro Matsumoto", "Ruby (programming language)"],
    "new york times address": ["The New York Times"],
}


class FakeMediaWiki(BaseHTTPRequestHandler):
    """Answers `list=search` and `prop=extracts` like MediaWiki; some queries fail on purpose."""

    def do_GET(self):
        params = {k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()}
        self.server.requests.append(params)
        query = params.get("srsearch", params.get("titles", "")).lower()
        if "rate limit" in query:
            return self.reply(429, {"error": "too many requests"}, headers={"Retry-After": "30"})
        if "outage" in query:
            return self.reply(503, {"error": "service unavailable"})
        if "hang" in query:
            self.server.release.wait(10)
            return self.reply(200, {"query": {"search": []}})
        if "garbage" in query:
            return self.reply(200, b"<html>not json{")
        if "api error" in query:
            return self.reply(200, {"error": {"code": "ratelimited", "info": "You've exceeded your rate limit."}})
        if params.get("list") == "search":
            titles = SEARCHES.get(params["srsearch"].lower(), [])
            found = [{"ns": 0, "title": t, "snippet": f"<span class=\"searchmatch\">{t}</span>"} for t in titles]
            return self.reply(200, {"query": {"searchinfo": {"totalhits": len(found), "suggestion": "xyzzy ville"},
                                              "search": found}})
        pages = [{"pageid": i, "title": t, "extract": ARTICLES[t],
                  "fullurl": "https://en.wikipedia.org/wiki/" + t.replace(" ", "_")}
                 for i, t in enumerate(params["titles"].split("|")) if t in ARTICLES]
        return self.reply(200, {"query": {"pages": pages}})

    def reply(self, code, body, headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and left

    def log_message(self, *args):
        pass


@pytest.fixture
def wiki_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeMediaWiki)
    server.daemon_threads = True
    server.requests = []
    server.release = threading.Event()
    server.url = f"http://127.0.0.1:{server.server_address[1]}/w/api.php"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()


@pytest.fixture
def cache(tmp_path):
    cache = SearchCache(tmp_path / "search", ttl=3600)
    yield cache
    cache.close()


def wikipedia(server, cache=None, settings=FAST):
    return WikipediaSearch(endpoint=server.url, settings=settings, cache=cache)


def searches(server):
    return [r for r in server.requests if r.get("list") == "search"]


# --- Wikipedia ---------------------------------------------------------------------------

def test_wikipedia_returns_intro_extracts_with_urls(wiki_server):
    result = wikipedia(wiki_server).search("Ruby creator")
    assert result.status == ToolStatus.SUCCESS
    assert [h.title for h in result.hits] == ["Yukihiro Matsumoto", "Ruby (programming language)"]
    assert "born on 14 April 1965" in result.hits[0].text
    assert result.hits[0].url == "https://en.wikipedia.org/wiki/Yukihiro_Matsumoto"
    search, extracts = wiki_server.requests
    assert search["srsearch"] == "Ruby creator" and search["format"] == "json"
    assert extracts["prop"] == "extracts|info" and "exintro" in extracts and "explaintext" in extracts
    assert extracts["titles"] == "Yukihiro Matsumoto|Ruby (programming language)"


def test_wikipedia_partial_when_no_extract_has_the_key_terms(wiki_server):
    result = wikipedia(wiki_server).search("New York Times address")
    assert result.status == ToolStatus.PARTIAL
    assert result.hits[0].title == "The New York Times"
    assert result.note == "no article intro mentions: address"


def test_wikipedia_no_results_passes_on_the_suggestion(wiki_server):
    result = wikipedia(wiki_server).search("Xyzzyville population")
    assert result.status == ToolStatus.NO_RESULTS and not result.hits
    assert "no Wikipedia article matches 'Xyzzyville population'" in result.note
    assert "xyzzy ville" in result.note
    assert len(wiki_server.requests) == 1  # no extracts request for nothing


def test_wikipedia_429_is_rate_limited_at_once(wiki_server):
    result = wikipedia(wiki_server).search("rate limit me")
    assert result.status == ToolStatus.RATE_LIMITED
    assert result.note == "HTTP 429 from the Wikipedia API (Retry-After: 30)"
    assert len(wiki_server.requests) == 1


def test_wikipedia_503_is_retried_then_unavailable(wiki_server):
    result = wikipedia(wiki_server).search("outage")
    assert result.status == ToolStatus.UNAVAILABLE
    assert result.note == "HTTP 503 from the Wikipedia API after 3 attempts"
    assert len(wiki_server.requests) == 3


def test_retry_waits_grow_exponentially(wiki_server):
    tool = wikipedia(wiki_server, settings=WebSettings(timeout=0.5, retries=2, retry_wait=0.05))
    waits = []
    tool.retrying.sleep = waits.append  # tenacity's own sleep hook: record the waits instead of sleeping
    result = tool.search("outage")
    assert result.status == ToolStatus.UNAVAILABLE
    assert waits == pytest.approx([0.05, 0.10])
    assert len(searches(wiki_server)) == 3


def test_wikipedia_timeout_is_unavailable_and_not_retried(wiki_server):
    started = time.perf_counter()
    result = wikipedia(wiki_server).search("hang")
    assert result.status == ToolStatus.UNAVAILABLE
    assert result.note == "the Wikipedia API timed out after 0.5s"
    assert len(wiki_server.requests) == 1
    # The behaviour is the timeout: it ends the call after 0.5 s, where the server holds its reply
    # for 10 s. 3 s is far from both: a slow machine does not fail it, a missing timeout does not pass.
    assert time.perf_counter() - started < 3


def test_wikipedia_invalid_json_is_unavailable(wiki_server):
    result = wikipedia(wiki_server).search("garbage")
    assert result.status == ToolStatus.UNAVAILABLE
    assert result.note.startswith("invalid JSON from the Wikipedia API")


def test_wikipedia_api_error_object_is_named(wiki_server):
    result = wikipedia(wiki_server).search("api error")
    assert result.status == ToolStatus.RATE_LIMITED
    assert "ratelimited" in result.note


def test_wikipedia_refused_connection_is_retried_then_unavailable():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    tool = WikipediaSearch(endpoint=f"http://127.0.0.1:{port}/w/api.php", settings=FAST)
    result = tool.search("Ruby creator")
    assert result.status == ToolStatus.UNAVAILABLE
    assert result.note.startswith(f"cannot reach the Wikipedia API at http://127.0.0.1:{port}/w/api.php after 3 attempts")
    assert "ConnectError" in result.note


def test_wikipedia_endpoint_from_the_environment(monkeypatch, wiki_server):
    monkeypatch.setenv("DELTASEEK_WIKIPEDIA_URL", wiki_server.url)
    monkeypatch.setenv("DELTASEEK_SEARCH_TIMEOUT", "0.5")
    tool = WikipediaSearch()
    assert tool.endpoint == wiki_server.url and tool.settings.timeout == 0.5
    assert tool.search("Ruby creator").status == ToolStatus.SUCCESS


def test_settings_reject_bad_values():
    with pytest.raises(ValueError, match="DELTASEEK_SEARCH_TIMEOUT='soon' is not a valid float"):
        WebSettings.from_env({"DELTASEEK_SEARCH_TIMEOUT": "soon"})
    with pytest.raises(ValueError, match="DELTASEEK_SEARCH_RETRIES='-1' must not be negative"):
        WebSettings.from_env({"DELTASEEK_SEARCH_RETRIES": "-1"})
    with pytest.raises(ValueError, match="not an http"):
        WikipediaSearch(endpoint="ftp://example.org/api.php", settings=FAST)


# --- the cache ---------------------------------------------------------------------------

def test_second_identical_call_is_served_from_cache(wiki_server, cache):
    tool = wikipedia(wiki_server, cache)
    first = tool.search("Ruby creator")
    again = tool.search("  ruby   CREATOR ")
    assert len(searches(wiki_server)) == 1
    assert again.hits == first.hits and again.status == ToolStatus.SUCCESS
    assert again.query == "  ruby   CREATOR "  # reported under the query as asked
    assert normalize_query("  ruby   CREATOR ") == "ruby creator"


def test_no_results_and_partial_are_cached(wiki_server, cache):
    tool = wikipedia(wiki_server, cache)
    for _ in range(2):
        tool.search("Xyzzyville population")
        tool.search("New York Times address")
    assert len(searches(wiki_server)) == 2


def test_failures_are_not_cached(wiki_server, cache):
    tool = wikipedia(wiki_server, cache)
    tool.search("rate limit me")
    tool.search("rate limit me")
    tool.search("garbage")
    tool.search("garbage")
    assert len(searches(wiki_server)) == 4


def test_cache_entries_expire(wiki_server, tmp_path):
    cache = SearchCache(tmp_path / "search", ttl=0.2)
    tool = wikipedia(wiki_server, cache)
    tool.search("Ruby creator")
    tool.search("Ruby creator")
    assert len(searches(wiki_server)) == 1
    time.sleep(0.3)
    tool.search("Ruby creator")
    assert len(searches(wiki_server)) == 2
    cache.close()


def test_no_cache_bypasses(wiki_server):
    tool = wikipedia(wiki_server, cache=None)
    tool.search("Ruby creator")
    tool.search("Ruby creator")
    assert len(searches(wiki_server)) == 2


def test_cache_lives_under_deltaseek_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("DELTASEEK_CACHE", str(tmp_path))
    cache = SearchCache()
    assert cache.folder == tmp_path / "search"
    result = ToolResult(tool="wikipedia", query="Q", status=ToolStatus.NO_RESULTS)
    assert cache.store("scope", result)
    assert cache.lookup("wikipedia", "scope", "q") == result.model_copy(update={"query": "q"})
    assert cache.lookup("wikipedia", "other endpoint", "q") is None
    assert (tmp_path / "search").is_dir()
    cache.close()


def test_unwritable_cache_is_switched_off(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = SearchCache(blocker / "search")  # cannot create a folder under a file
    result = ToolResult(tool="web_search", query="q", status=ToolStatus.SUCCESS)
    assert cache.store("", result) is False
    assert cache.lookup("web_search", "", "q") is None


# --- web search (ddgs) -------------------------------------------------------------------

@pytest.fixture
def fake_ddgs(monkeypatch):
    """Replace DDGS.text; `ddgs.DDGS` is a lazy proxy, so patch the class it builds."""
    from ddgs.ddgs import DDGS

    calls = []

    def install(behaviour):
        def text(self, query, **kwargs):
            calls.append((query, kwargs, self._timeout))
            if isinstance(behaviour, Exception):
                raise behaviour
            return behaviour

        monkeypatch.setattr(DDGS, "text", text)
        return calls

    return install


def test_web_search_success(fake_ddgs):
    calls = fake_ddgs([{"title": "Ruby", "href": "https://ruby-lang.org", "body": "A dynamic language."},
                       {"title": "Matz", "href": "https://example.org/matz", "body": ""}])
    result = WebSearch(k=5, settings=FAST).search("ruby creator")
    assert result.status == ToolStatus.SUCCESS
    assert result.hits[0].model_dump(include={"title", "url", "text"}) == {
        "title": "Ruby", "url": "https://ruby-lang.org", "text": "A dynamic language."}
    assert result.hits[1].text == "Matz"  # no snippet: the title stands in
    assert calls == [("ruby creator", {"max_results": 5, "backend": "auto"}, 0.5)]


def test_web_search_empty_is_no_results(fake_ddgs):
    fake_ddgs([])
    assert WebSearch(settings=FAST).search("xyzzy").status == ToolStatus.NO_RESULTS


def test_web_search_ddgs_no_results_exception_is_no_results(fake_ddgs):
    from ddgs.exceptions import DDGSException

    fake_ddgs(DDGSException("No results found."))
    result = WebSearch(settings=FAST).search("xyzzy")
    assert result.status == ToolStatus.NO_RESULTS
    assert "no web page found for 'xyzzy'" in result.note


def test_web_search_rate_limit(fake_ddgs):
    from ddgs.exceptions import RatelimitException

    fake_ddgs(RatelimitException("202 Ratelimit"))
    result = WebSearch(settings=FAST).search("ruby")
    assert result.status == ToolStatus.RATE_LIMITED
    assert "rate-limited" in result.note and "202 Ratelimit" in result.note


def test_web_search_timeout(fake_ddgs):
    from ddgs.exceptions import TimeoutException

    fake_ddgs(TimeoutException("timed out"))
    result = WebSearch(settings=FAST).search("ruby")
    assert result.status == ToolStatus.UNAVAILABLE
    assert result.note == "web search timed out after 0.5s"


def test_web_search_other_ddgs_error_is_unavailable(fake_ddgs):
    from ddgs.exceptions import DDGSException

    fake_ddgs(DDGSException("ConnectError: dns failure"))
    result = WebSearch(settings=FAST).search("ruby")
    assert result.status == ToolStatus.UNAVAILABLE
    assert "ConnectError: dns failure" in result.note


def test_web_search_is_cached_but_not_its_failures(fake_ddgs, cache):
    from ddgs.exceptions import RatelimitException

    calls = fake_ddgs([{"title": "Ruby", "href": "https://ruby-lang.org", "body": "A language."}])
    tool = WebSearch(settings=FAST, cache=cache)
    tool.search("ruby")
    tool.search("Ruby")
    assert len(calls) == 1
    calls = fake_ddgs(RatelimitException("429"))
    tool.search("python")
    tool.search("python")
    assert len(calls) == 3


def test_empty_query_never_reaches_the_network(fake_ddgs):
    calls = fake_ddgs([])
    result = WebSearch(settings=FAST).search("   ")
    assert result.status == ToolStatus.NO_RESULTS and result.note == "the query is empty"
    assert calls == []


# --- files -------------------------------------------------------------------------------

VECTOR_STORE = '''"""Storage of embeddings."""

from typing import Protocol


class VectorStore(Protocol):
    """The interface every vector store implements."""

    def add(self, ids: list[str], vectors: list[list[float]]) -> None: ...

    def query(self, vector: list[float], k: int) -> list[str]: ...
'''

APP = '''from store.vector_store import VectorStore


def answer(store: VectorStore, question: str) -> str:
    hits = store.query(embed(question), k=3)
    return " ".join(hits)
'''


@pytest.fixture
def code_tree(tmp_path):
    root = tmp_path / "repo"
    (root / "store").mkdir(parents=True)
    (root / "store" / "vector_store.py").write_text(VECTOR_STORE)
    (root / "app.py").write_text(APP)
    (root / "README.md").write_text("# Demo\n\nAn app that answers questions from stored embeddings.\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0VectorStore")
    for skipped in (".git", "node_modules", ".venv", "myenv"):
        (root / skipped).mkdir()
        (root / skipped / "copy.py").write_text(VECTOR_STORE)
    (root / "myenv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return root


def test_files_finds_the_class_definition_with_path_and_line(code_tree):
    result = LocalFilesSearch(code_tree).search("What is the VectorStore interface?")
    assert result.status == ToolStatus.SUCCESS
    top = result.hits[0]
    assert top.id == "store/vector_store.py:6" and top.title == "store/vector_store.py"
    assert top.text.startswith("class VectorStore(Protocol):")
    assert top.source == "store/vector_store.py:6"
    assert {h.title for h in result.hits} <= {"store/vector_store.py", "app.py"}


def test_files_skips_binary_vcs_venv_and_node_modules(code_tree):
    tool = LocalFilesSearch(code_tree)
    tool.search("VectorStore")
    assert sorted(tool._files) == ["README.md", "app.py", "store/vector_store.py"]


def test_files_indexes_once_and_lazily(code_tree, monkeypatch):
    tool = LocalFilesSearch(code_tree)
    assert tool._files is None  # nothing read before the first search
    built = []
    original = tool._build
    monkeypatch.setattr(tool, "_build", lambda: (built.append(1), original()))
    tool.search("VectorStore")
    tool.search("embeddings")
    assert built == [1]


def test_files_compound_words_match_their_parts(code_tree):
    result = LocalFilesSearch(code_tree).search("vector store")
    assert result.status == ToolStatus.SUCCESS
    assert "store/vector_store.py:6" in [h.id for h in result.hits]


def test_files_partial_and_no_results(code_tree):
    partial = LocalFilesSearch(code_tree).search("VectorStore serialization")
    assert partial.status == ToolStatus.PARTIAL and partial.note == "no file contains: serialization"
    assert LocalFilesSearch(code_tree).search("kubernetes").status == ToolStatus.NO_RESULTS


def test_files_folder_removed_is_unavailable(tmp_path):
    folder = tmp_path / "gone"
    folder.mkdir()
    tool = LocalFilesSearch(folder)
    folder.rmdir()
    assert tool.search("anything").status == ToolStatus.UNAVAILABLE


def test_code_tokens_split_identifiers():
    assert code_tokens("class VectorStore(vector_store)") == [
        "class", "vectorstore", "vector", "store", "vector_store", "vector", "store"]


# --- build_tools ---------------------------------------------------------------------------

class FakeIndex:
    pass


def test_parse_tool_spec():
    assert parse_tool_spec(None) == ["local"]
    assert parse_tool_spec([]) == ["local"]
    assert parse_tool_spec(["web,wikipedia", " files:src "]) == ["web", "wikipedia", "files:src"]
    assert parse_tool_spec("local") == ["local"]
    with pytest.raises(ToolConfigError, match="--tools names local, web more than once"):
        parse_tool_spec(["web,local", "local,web"])  # a repeated tool is a mistake, not a no-op


def test_build_tools(tmp_path, monkeypatch):
    monkeypatch.setenv("DELTASEEK_CACHE", str(tmp_path / "cache"))
    made = []
    tools = build_tools(["local,web,wikipedia", f"files:{tmp_path}"], lambda: made.append(1) or FakeIndex())
    assert [t.name for t in tools] == ["search_corpus", "web_search", "wikipedia", "search_files"]
    assert isinstance(tools[0], LocalCorpusSearch) and made == [1]
    assert tools[1].cache is tools[2].cache and tools[1].cache.folder == tmp_path / "cache" / "search"
    assert tools[3].root == tmp_path


def test_build_tools_defaults_to_local_and_no_cache_when_asked(tmp_path):
    assert [t.name for t in build_tools([], FakeIndex)] == ["search_corpus"]
    tools = build_tools(["web", "wikipedia"], FakeIndex, use_cache=False)
    assert all(t.cache is None for t in tools)


def test_build_tools_errors(tmp_path):
    with pytest.raises(ValueError, match=r"unknown --tools value 'bing': choose local, web, wikipedia or files:PATH"):
        build_tools(["web,bing"], FakeIndex)
    with pytest.raises(ValueError, match=r"unknown --tools value 'files:'"):
        build_tools(["files:"], FakeIndex)
    missing = tmp_path / "nowhere"
    with pytest.raises(ValueError, match=rf"--tools files:{missing}: no such file or folder"):
        build_tools([f"files:{missing}"], FakeIndex)
    with pytest.raises(ValueError, match="give files:PATH once"):
        build_tools([f"files:{tmp_path},files:{tmp_path}/."], FakeIndex)
