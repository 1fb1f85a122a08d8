"""A corpus on a Sphinx or Manticore search cluster, spoken to through SphinxQL (the MySQL
protocol, client `pymysql`): the same hits and statuses as the in-process corpus tool.

    --tools sphinx:HOST:PORT/INDEX     (or --tools sphinx with DELTASEEK_SPHINX=HOST:PORT/INDEX)

INDEX is usually a `type = distributed` index over shard agents. Matching is any-term (a quorum
of one over the query's words, every query-syntax character escaped) ranked by the server's BM25
with words in the title counted above words in the text (`ranker`); nothing else is used, so
Sphinx 2.2 and current Manticore both serve it. A shard that is down, a refused connection or a
timeout is UNAVAILABLE with the fault in the note (hits the live shards found are still
returned), so the agent reroutes as for the web tools. `sphinx_load.load_passages` fills the
real-time shard indexes.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pymysql
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from deltaseek.errors import ToolConfigError
from deltaseek.programs.index import tokenize
from deltaseek.programs.text import fold_accents, meaningful_tokens, misspelt_in_a_name, name_runs, named_entities
from deltaseek.programs.tools.base import Hit, SearchTool, ToolResult, ToolStatus, ranked_result

TARGET_FORMAT = "sphinx:HOST:PORT/INDEX"
ENV_TARGET = "DELTASEEK_SPHINX"
_TARGET = re.compile(r"^(?:sphinx:)?(?P<host>[^:/\s]+):(?P<port>\d{1,5})/(?P<index>[A-Za-z_][A-Za-z0-9_]*)$")
_QUERY_SPECIALS = re.compile(r"([\\()|\-!@~\"&/^$=<*?%])")
_WORD = re.compile(r"\w", re.UNICODE)
# Client errors of the MySQL protocol: 2003 can't connect (retried), 2006 gone away, 2013 lost
# during the query (a timeout; not retried, the agent would wait the timeout again).
_CANT_CONNECT = 2003


class SphinxSettings(BaseModel):
    """How the sphinx tool and loader behave. `from_env` reads the DELTASEEK_SPHINX_* variables named below."""

    model_config = ConfigDict(use_attribute_docstrings=True, frozen=True, extra="forbid")

    connect_timeout: float = Field(2.0, gt=0)
    """Seconds to open a connection before the node counts as down (DELTASEEK_SPHINX_CONNECT_TIMEOUT)."""
    read_timeout: float = Field(10.0, gt=0)
    """Seconds a query or a batch insert may take before it is reported UNAVAILABLE (DELTASEEK_SPHINX_READ_TIMEOUT)."""
    retries: int = Field(2, ge=0)
    """Extra attempts after a connection that could not be opened; never after a query that timed
    out (DELTASEEK_SPHINX_RETRIES)."""
    retry_wait: float = Field(0.2, ge=0)
    """Seconds before the first retry; each later wait doubles (DELTASEEK_SPHINX_RETRY_WAIT)."""
    title_weight: int = Field(2, ge=1)
    """How much a query word found in the title adds to the score (DELTASEEK_SPHINX_TITLE_WEIGHT)."""
    text_weight: int = Field(1, ge=1)
    """How much a query word found in the text adds to the score (DELTASEEK_SPHINX_TEXT_WEIGHT)."""
    max_matches: int = Field(1000, ge=10)
    """The server's match window per query: `k` plus the passages already read must fit (DELTASEEK_SPHINX_MAX_MATCHES)."""
    batch_size: int = Field(500, ge=1)
    """Passages per INSERT when loading (DELTASEEK_SPHINX_BATCH_SIZE)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "SphinxSettings":
        environ = os.environ if environ is None else environ
        values = {field: environ[f"DELTASEEK_SPHINX_{field.upper()}"].strip() for field in cls.model_fields
                  if environ.get(f"DELTASEEK_SPHINX_{field.upper()}", "").strip()}
        try:
            return cls(**values)
        except ValidationError as exc:
            error = exc.errors()[0]
            variable = f"DELTASEEK_SPHINX_{str(error['loc'][0]).upper()}"
            raise ToolConfigError(f"{variable}={values.get(error['loc'][0])!r}: {error['msg']}") from None


@dataclass(frozen=True)
class SphinxTarget:
    host: str
    port: int
    index: str

    def __str__(self) -> str:
        return f"sphinx:{self.host}:{self.port}/{self.index}"

    @property
    def node(self) -> str:
        return f"{self.host}:{self.port}"


def parse_target(spec: str, environ: Mapping[str, str] | None = None) -> SphinxTarget:
    """`sphinx:HOST:PORT/INDEX` (the `sphinx:` prefix optional); bare `sphinx` reads $DELTASEEK_SPHINX.
    Raises ToolConfigError naming the value."""
    environ = os.environ if environ is None else environ
    spec = spec.strip()
    source = spec
    if spec in ("sphinx", "sphinx:"):
        spec = environ.get(ENV_TARGET, "").strip()
        source = f"{ENV_TARGET}={spec!r}"
        if not spec:
            raise ToolConfigError(f"--tools sphinx needs a target: write {TARGET_FORMAT} or set {ENV_TARGET}")
    match = _TARGET.match(spec)
    if not match or not 0 < int(match["port"]) < 65536:
        raise ToolConfigError(f"{source}: expected {TARGET_FORMAT}, e.g. sphinx:127.0.0.1:9306/corpus")
    return SphinxTarget(match["host"], int(match["port"]), match["index"])


def escape_query(text: str) -> str:
    """Every character of Sphinx's extended query syntax backslash-escaped (as the official
    clients' EscapeString does), so a question is always read as words."""
    return _QUERY_SPECIALS.sub(r"\\\1", text)


def any_term_query(query: str) -> str | None:
    """A quorum of one over the query's words: a passage matches if it holds any of them.
    Lowercased, so NEAR/MAYBE/SENTENCE are words, not operators; accents folded, as the passages
    were when loaded. None if there is no word."""
    if not _WORD.search(query):
        return None
    words = " ".join(fold_accents(query.lower()).split())
    return f'"{escape_query(words)}"/1'


def is_refused(exc: BaseException) -> bool:
    """Worth retrying: the server could not be reached at all. Not a timeout or a server error."""
    return isinstance(exc, pymysql.err.OperationalError) and exc.args[:1] == (_CANT_CONNECT,)


def describe_fault(exc: BaseException, target: SphinxTarget) -> str:
    """One line naming what failed and where."""
    if isinstance(exc, pymysql.err.MySQLError) and len(exc.args) >= 2:
        code, message = exc.args[0], str(exc.args[1]).replace("\x00", "").replace("\n", " ")
        if code == _CANT_CONNECT:
            return f"{target.node} refused the connection or is down ({message})"
        if code in (2006, 2013):
            return f"{target.node} did not answer in time or dropped the connection ({message})"
        return f"{target} failed: {message}"
    return f"{target} failed: {type(exc).__name__}: {exc}"


class SphinxClient:
    """One SphinxQL endpoint: a connection per thread, reopened after a failure, retries with tenacity."""

    def __init__(self, target: SphinxTarget, settings: SphinxSettings):
        self.target = target
        self.settings = settings
        self._local = threading.local()

    def _connection(self) -> pymysql.connections.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = pymysql.connect(host=self.target.host, port=self.target.port, autocommit=True,
                                         connect_timeout=self.settings.connect_timeout,
                                         read_timeout=self.settings.read_timeout,
                                         write_timeout=self.settings.read_timeout, charset="utf8")
            self._local.connection = connection
        return connection

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            try:
                connection.close()
            except pymysql.err.Error:
                pass

    def _once(self, statements: list[tuple[str, tuple | list | None]], many: bool) -> list[tuple]:
        try:
            results = []
            with self._connection().cursor() as cursor:
                for sql, params in statements:
                    if many:
                        cursor.executemany(sql, params)
                    else:
                        cursor.execute(sql, params)
                    results.append(cursor.fetchall())
            return results
        except (pymysql.err.MySQLError, OSError):
            self.close()  # the next attempt starts from a fresh connection
            raise

    def run(self, statements: list[tuple[str, tuple | list | None]], many: bool = False) -> list[tuple]:
        """The rows of each statement, run in order on one connection. Raises pymysql errors
        after the retries; a refused connection is retried with exponential backoff."""
        retrying = Retrying(stop=stop_after_attempt(self.settings.retries + 1),
                            wait=wait_exponential(multiplier=self.settings.retry_wait,
                                                  max=max(self.settings.retry_wait * 8, 1.0)),
                            retry=retry_if_exception(is_refused), reraise=True)
        return retrying(self._once, statements, many)


def ranker(settings: SphinxSettings) -> str:
    """The server's BM25 (its `bm25` factor: BM25 with k1=1.2 over the whole passage, 0..999) times
    10, plus each matched query word once per field weight: of passages BM25 ranks alike, the one
    with the words in its title comes first, and a title match counts above a text match. Both
    Sphinx 2.2 and Manticore know these factors; Sphinx 2.2.11's `bm25f()` returns a constant 0.5
    on real-time indexes, so field-weighted BM25F is not used."""
    return (f"expr('bm25*10+sum(word_count*user_weight)'), "
            f"field_weights=(title={settings.title_weight}, text={settings.text_weight})")


def meta_of(rows: Iterable[tuple]) -> tuple[dict[str, int], list[str]]:
    """From SHOW META: documents per keyword, and the warnings (a shard that failed)."""
    meta = [(str(name), str(value)) for name, value in rows]
    keywords = {int(re.sub(r"\D", "", n)): v for n, v in meta if n.startswith("keyword[")}
    docs = {int(re.sub(r"\D", "", n)): v for n, v in meta if n.startswith("docs[")}
    counts = {word: int(docs.get(i, 0)) for i, word in keywords.items()}
    warnings = [v.replace("\x00", "").strip() for n, v in meta if n == "warning" and v.strip()]
    return counts, warnings


class SphinxSearch(SearchTool):
    """BM25 over a corpus on a Sphinx/Manticore cluster (usually a distributed index over shards)."""

    name = "search_sphinx"
    description = ("Search the document collection on the search cluster (encyclopedia-style passages). "
                   "Args: query (keywords).")

    skips_seen = True

    def __init__(self, target: SphinxTarget | str, settings: SphinxSettings | None = None, k: int = 3):
        self.target = parse_target(target) if isinstance(target, str) else target
        self.settings = settings or SphinxSettings.from_env()
        self.client = SphinxClient(self.target, self.settings)
        self.k = k

    def search(self, query: str, seen: frozenset[str] = frozenset()) -> ToolResult:
        match = any_term_query(query)
        if match is None:
            return ToolResult(tool=self.name, query=query, status=ToolStatus.NO_RESULTS,
                              note="the query holds no searchable word")
        limit = min(self.k + len(seen), self.settings.max_matches)
        sql = (f"SELECT id, passage_id, doc_title, doc_text, url, WEIGHT() AS score FROM {self.target.index} "
               f"WHERE MATCH(%s) ORDER BY score DESC, id ASC LIMIT %s "
               f"OPTION ranker={ranker(self.settings)}, max_matches={self.settings.max_matches}")
        try:
            rows, meta = self.client.run([(sql, (match, limit)), ("SHOW META", None)])
        except (pymysql.err.MySQLError, OSError) as exc:
            return ToolResult(tool=self.name, query=query, status=ToolStatus.UNAVAILABLE,
                              note=describe_fault(exc, self.target))
        counts, warnings = meta_of(meta)
        hits = [Hit(id=pid, title=title, text=text, url=url or None, score=float(score))
                for _id, pid, title, text, url, score in rows if pid not in seen][: self.k]
        if warnings:
            # A shard is down: what the others found is real but incomplete, so the tool counts as
            # failed (the agent says so and tries another tool), and the fault is named.
            return ToolResult(tool=self.name, query=query, status=ToolStatus.UNAVAILABLE, hits=hits,
                              note="; ".join(warnings) + "; results come from the other shards only")
        searchable = set(tokenize([query])[0])  # stopwords never count as missing, as in the corpus tool
        unknown = sorted(word for word, docs in counts.items() if docs == 0 and word in searchable)
        found, runs = meaningful_tokens(" ".join(f"{h.title} {h.text}" for h in hits)), name_runs(query)
        missing_entities = [e for e in named_entities(query) if not mentioned(e, counts)
                            and not misspelt_in_a_name(e, runs, lambda w: mentioned(w, counts), found)]
        return ranked_result(self.name, query, hits, unknown, missing_entities, "index")


def mentioned(phrase: str, counts: dict[str, int]) -> bool:
    """Whether any searchable term of the phrase occurs in the index, by the server's keyword
    statistics. A phrase with no searchable terms says nothing about the index: it counts as mentioned."""
    terms = [t for t in tokenize([phrase])[0] if t in counts]
    return not terms or any(counts[t] > 0 for t in terms)
