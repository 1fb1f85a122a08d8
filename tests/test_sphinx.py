"""The sphinx tool against real Sphinx daemons on loopback: two real-time shards and a distributed
front, loaded with the MuSiQue corpus through `deltaseek index --to`, searched through the front
by the tool and by `deltaseek ask` on a scripted LM, compared with the in-process BM25 corpus
tool, and with a shard stopped mid-run. Tests that need `searchd` are marked `sphinx`."""

from __future__ import annotations

import json
import re
import socket
import time

import dspy
import pytest

from deltaseek import cli
from deltaseek.bundled import bundled_corpora
from deltaseek.cli import main
from deltaseek.errors import ToolConfigError
from deltaseek.programs.corpus_files import read_corpus
from deltaseek.programs.index import CorpusIndex
from deltaseek.programs.tools import (LocalCorpusSearch, SphinxSearch, SphinxSettings, SphinxTarget, ToolStatus,
                                      build_tools, parse_target)
from deltaseek.programs.tools.sphinx import any_term_query, escape_query
from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth
from tests.sphinx_cluster import SEARCHD, SphinxCluster, free_port

MUSIQUE = next(p for p in bundled_corpora() if p.name == "musique_corpus.jsonl")
QUESTIONS = [json.loads(line)["question"] for line in (MUSIQUE.parent.parent / "musique.jsonl").read_text().splitlines()]
FAST = SphinxSettings(retries=1, retry_wait=0.01, connect_timeout=1.0, read_timeout=5.0)
SPECIALS = '"/@!-(|~^$=)<*?%\\&'



def needs_searchd(test):
    """Marked `sphinx`, and skipped only when there is no searchd to start."""
    skip = pytest.mark.skipif(SEARCHD is None, reason="searchd is not installed (Debian package sphinxsearch)")
    return pytest.mark.sphinx(skip(test))


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    """Two shard daemons and a distributed front on free loopback ports, MuSiQue loaded through
    `deltaseek index --to` (one --to per shard); stopped at the end of the session."""
    running = SphinxCluster(tmp_path_factory.mktemp("sphinx"), shards=2).start()
    try:
        shard0, shard1 = (str(t) for t in running.shards)
        code = main(["index", str(MUSIQUE), "--to", shard0, "--to", shard1])
        assert code == 0
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="session")
def musique_index(tmp_path_factory):
    return CorpusIndex.build(read_corpus(MUSIQUE))


# --- without a daemon: targets, settings, escaping -----------------------------------------------

@pytest.mark.parametrize("spec,target", [
    ("sphinx:127.0.0.1:9306/front", SphinxTarget("127.0.0.1", 9306, "front")),
    ("sphinx:search.example.org:9306/corpus_v2", SphinxTarget("search.example.org", 9306, "corpus_v2")),
])
def test_targets_parse(spec, target):
    assert parse_target(spec) == target and str(target) == spec


@pytest.mark.parametrize("spec", ["sphinx:127.0.0.1/front", "sphinx:127.0.0.1:99999/front", "sphinx:host:9306/",
                                  "sphinx:host:9306/bad-name", "sphinx:host:port/front"])
def test_bad_targets_are_named(spec):
    with pytest.raises(ToolConfigError, match=re.escape(spec)):
        build_tools(spec)


def test_bare_sphinx_reads_the_environment(monkeypatch):
    monkeypatch.delenv("DELTASEEK_SPHINX", raising=False)
    with pytest.raises(ToolConfigError, match="DELTASEEK_SPHINX"):
        build_tools("sphinx")
    monkeypatch.setenv("DELTASEEK_SPHINX", "127.0.0.1:9306/front")
    [tool] = build_tools("sphinx")
    assert isinstance(tool, SphinxSearch) and tool.target == SphinxTarget("127.0.0.1", 9306, "front")


def test_two_sphinx_tools_would_share_a_name():
    with pytest.raises(ToolConfigError, match="give sphinx:HOST:PORT/INDEX once"):
        build_tools("sphinx:a:9306/front,sphinx:b:9306/front")


def test_settings_come_validated_from_the_environment():
    settings = SphinxSettings.from_env({"DELTASEEK_SPHINX_TITLE_WEIGHT": "3", "DELTASEEK_SPHINX_READ_TIMEOUT": "2.5"})
    assert settings.title_weight == 3 and settings.read_timeout == 2.5
    with pytest.raises(ToolConfigError, match="DELTASEEK_SPHINX_RETRIES='-1'"):
        SphinxSettings.from_env({"DELTASEEK_SPHINX_RETRIES": "-1"})
    with pytest.raises(ToolConfigError, match="DELTASEEK_SPHINX_CONNECT_TIMEOUT='soon'"):
        SphinxSettings.from_env({"DELTASEEK_SPHINX_CONNECT_TIMEOUT": "soon"})


def test_cli_names_a_bad_target_in_one_line(capsys):
    code = main(["ask", "Who?", "--tools", "local,sphinx:nowhere/front"])
    err = capsys.readouterr().err
    assert code == 2 and "sphinx:nowhere/front" in err and len(err.strip().splitlines()) == 1


def test_every_query_syntax_character_is_escaped():
    escaped = escape_query(SPECIALS)
    assert escaped[1::2] == SPECIALS and set(escaped[::2]) == {"\\"}  # each one preceded by a backslash
    assert any_term_query('Who wrote "Dune" NEAR/3 MAYBE?') == '"who wrote \\"dune\\" near\\/3 maybe\\?"/1'
    assert any_term_query(" -- !! ") is None  # no word: nothing to send


def test_a_node_that_refuses_is_unavailable_and_named():
    port = free_port()
    result = SphinxSearch(SphinxTarget("127.0.0.1", port, "front"), settings=FAST)("Ohio River")
    assert result.status is ToolStatus.UNAVAILABLE and not result.hits
    assert f"127.0.0.1:{port} refused the connection" in result.note


def test_a_node_that_never_answers_is_unavailable_after_the_timeout():
    """A real socket that accepts and stays silent: the handshake times out, the fault is named."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        settings = SphinxSettings(retries=0, connect_timeout=0.3, read_timeout=0.3)
        started = time.monotonic()
        result = SphinxSearch(SphinxTarget("127.0.0.1", port, "front"), settings=settings)("Ohio River")
    assert result.status is ToolStatus.UNAVAILABLE and f"127.0.0.1:{port}" in result.note
    # The 0.3 s timeouts end the call; without them the handshake waits on the silent socket for as long
    # as it stays open. 3 s is far from 0.3 s: a slow machine does not fail it, a missing timeout does not pass.
    assert "timed out" in result.note and time.monotonic() - started < 3


# --- against real daemons --------------------------------------------------------------------------

@needs_searchd
def test_index_to_loaded_every_passage_and_resumes(cluster, capsys):
    counts = [SphinxSearch(t, settings=FAST).client.run([(f"SELECT COUNT(*) FROM {t.index}", None)])[0][0][0]
              for t in cluster.shards]
    assert sum(int(c) for c in counts) == 1890 and all(int(c) > 700 for c in counts)  # spread by id hash
    code = main(["index", str(MUSIQUE), "--to", ",".join(str(t) for t in cluster.shards)])
    out = capsys.readouterr().out
    assert code == 0 and "0 added, 1890 already there" in out


@needs_searchd
def test_loading_through_the_distributed_front_is_an_error_naming_it(cluster, capsys, tmp_path):
    corpus = tmp_path / "new.jsonl"
    corpus.write_text('{"id": "new-1", "title": "Zorblat", "text": "Zorblat is a new passage."}\n')
    code = main(["index", str(corpus), "--to", str(cluster.front)])  # Sphinx 2.2 cannot insert there
    err = capsys.readouterr().err
    assert code == 2 and str(cluster.front) in err and "re-run to resume" in err


@needs_searchd
def test_first_query_ranks_like_the_in_process_index(cluster, musique_index):
    """Both rank by BM25 with the same stopwords, but not the same BM25: the server's is k1=1.2
    without length normalization, per shard statistics, title words counted extra; bm25s's is
    Lucene's k1=1.5, b=0.75. So the top passage agrees on most questions, not all."""
    sphinx, local = SphinxSearch(cluster.front, settings=FAST), LocalCorpusSearch(musique_index)
    questions = QUESTIONS[:40]
    top1 = overlap = same_status = 0
    for question in questions:
        remote, here = sphinx(question), local(question)
        same_status += remote.status == here.status
        ids, expected = [h.id for h in remote.hits], [h.id for h in here.hits]
        top1 += ids[:1] == expected[:1]
        overlap += len(set(ids) & set(expected))
    print(f"\nsphinx vs in-process BM25 on {len(questions)} MuSiQue questions: same status {same_status}, "
          f"top-1 same {top1}, top-3 overlap {overlap}/{3 * len(questions)}")
    assert same_status >= 0.9 * len(questions)
    assert top1 >= 0.6 * len(questions) and overlap >= 0.5 * 3 * len(questions)


@needs_searchd
def test_seen_passages_are_skipped(cluster):
    tool = SphinxSearch(cluster.front, settings=FAST)
    first = tool("Kim Jong-chul wife")
    again = tool("Kim Jong-chul wife", seen=frozenset(h.id for h in first.hits[:2]))
    assert first.hits and again.hits
    assert not {h.id for h in first.hits[:2]} & {h.id for h in again.hits}
    assert again.hits[0].id == first.hits[2].id


@needs_searchd
def test_statuses_match_the_corpus_tool(cluster, musique_index):
    tool, local = SphinxSearch(cluster.front, settings=FAST), LocalCorpusSearch(musique_index)
    for query in ("Zxqvbnm Flurbington", "Kim Jong-chul wife zxqvbnm"):
        remote, here = tool(query), local(query)
        assert remote.status == here.status, (query, remote.note, here.note)
    assert tool("Zxqvbnm Flurbington").status is ToolStatus.NO_RESULTS
    partial = tool("Kim Jong-chul wife zxqvbnm")
    assert partial.status is ToolStatus.PARTIAL and "zxqvbnm" in partial.note


@needs_searchd
@pytest.mark.parametrize("char", list(SPECIALS))
def test_questions_with_query_syntax_never_error(cluster, char):
    tool = SphinxSearch(cluster.front, settings=FAST)
    for question in (f"Who is{char}the wife of Kim Jong-chul{char}", f"{char}{char} Kim{char}", f"{char} {char}"):
        result = tool(question)
        assert result.status in (ToolStatus.SUCCESS, ToolStatus.PARTIAL, ToolStatus.NO_RESULTS), result.note


# --- `deltaseek ask` on a scripted LM --------------------------------------------------------------

def script_for(tool: str, queries: list[str], between=None) -> ScriptedEngine:
    """A scripted model: one search per query in order, then synthesize, answering with the title
    of the first passage it was shown. `between(n)` runs before the n-th step (1-based)."""
    steps = []

    def next_step(_prompt):
        steps.append(1)
        if between:
            between(len(steps))
        n = len(steps)
        return step(queries[n - 1], tool=tool) if n <= len(queries) else step(move="synthesize", tool=tool)

    def answer(prompt):
        found = re.search(r"## \[([^\]]+)\] ([^\n]+)", prompt)
        return synth(found.group(2), sources=[found.group(1)]) if found else synth("Not found.")

    return ScriptedEngine(classify=classify("lookup"), step=next_step, synthesize=answer)


@pytest.fixture
def ask(monkeypatch, capsys):
    """`deltaseek ask --json` with the given scripted engine; DSPy's settings restored after."""
    saved = {k: dspy.settings.get(k) for k in ("lm", "adapter")}

    def run(engine: ScriptedEngine, *argv: str) -> dict:
        def configure(_args):
            lm = scripted_lm(engine)
            dspy.configure(lm=lm, adapter=dspy.JSONAdapter())
            return lm
        monkeypatch.setattr(cli, "configure_lm_from", configure)
        code = main(["ask", *argv, "--json", "--no-cache"])
        out, err = capsys.readouterr()
        assert code == 0, err
        return json.loads(out)

    yield run
    dspy.configure(**saved)


def calls_of(record: dict) -> list[tuple]:
    return [(c["args"]["query"], c["status"], c["executed"], c["result_count"], c["origin"])
            for c in record["tool_calls"]]


def scripted_calls(record: dict) -> list[tuple]:
    return [call for call in calls_of(record) if call[-1] != "program"]


@needs_searchd
@pytest.mark.parametrize("question", QUESTIONS[:5])
def test_ask_on_the_front_makes_the_same_calls_as_on_the_in_process_corpus(cluster, ask, question):
    """The same scripted model (the question as the first query, then a narrower one) on both:
    the same model calls, every call with the same status, count and origin; the first query's
    top passage is among the in-process top 3, and at least 2 of the 3 passages are the same
    (see the ranking test)."""
    queries = [question, " ".join(question.rstrip("?").split()[-4:])]
    remote = ask(script_for("search_sphinx", queries), question, "--tools", str(cluster.front))
    local = ask(script_for("search_corpus", queries), question, "--tools", "local", "--corpus", str(MUSIQUE))

    assert {c["tool"] for c in remote["tool_calls"]} == {"search_sphinx"}
    # The model's calls are the same; the program's own later queries are built from the facts found,
    # which the two rankings may hold differently (a multi-hop question searches on for its bridge).
    assert scripted_calls(remote) == scripted_calls(local) and len(scripted_calls(remote)) >= 2
    assert [call[1:] for call in calls_of(remote)] == [call[1:] for call in calls_of(local)]
    first = [f["source"] for f in remote["trajectory"]["facts"] if f["step"] == 1]
    first_local = [f["source"] for f in local["trajectory"]["facts"] if f["step"] == 1]
    assert first[0] in first_local and len(set(first) & set(first_local)) >= 2
    assert remote["answer"].strip() and remote["stop_reason"] == local["stop_reason"], \
        (remote["stop_reason"], [s["note"] for s in remote["trajectory"]["steps"]])
    assert not [c for c in remote["caveats"] if "failed" in c]


@needs_searchd
def test_a_shard_stopped_mid_run_ends_with_an_answer_and_a_caveat_naming_it(cluster, ask):
    stopped = cluster.shard_daemons[1]

    def stop_shard_before_second_search(n):
        if n == 2:
            cluster.stop_shard(1)

    engine = script_for("search_sphinx", ["Kim Jong-chul wife", "North Korean leader family brother spouse", "Ko Yong-hui sons marriage"],
                        between=stop_shard_before_second_search)
    try:
        record = ask(engine, "Who is the wife of Kim Jong-chul?", "--tools", str(cluster.front))
    finally:
        if not stopped.running:
            cluster.start_shard(1)

    statuses = [c["status"] for c in record["tool_calls"] if c["executed"]]
    assert statuses[0] in ("success", "partial") and statuses[1] == "unavailable"
    assert record["answer"].strip()
    fault = f"agent 127.0.0.1:{stopped.api_port}"
    assert any(fault in c and "search_sphinx failed (unavailable)" in c for c in record["caveats"]), record["caveats"]
    # the restarted shard kept its passages (saved at shutdown)
    result = SphinxSearch(cluster.front, settings=FAST)("Kim Jong-chul wife")
    assert result.status is ToolStatus.SUCCESS



@pytest.mark.sphinx
@pytest.mark.skipif(SEARCHD is None, reason="searchd is not installed (Debian package sphinxsearch)")
def test_bench_speed_prints_both_latencies_side_by_side(tmp_path, capsys):
    """On a cluster of its own: the benchmark empties the shards it is given."""
    own = SphinxCluster(tmp_path / "bench", shards=2).start()
    try:
        shards = [a for t in own.shards for a in ("--sphinx-shard", str(t))]
        code = main(["bench", "--speed", "--sphinx", str(own.front), *shards, "--sphinx-sizes", "200", "400"])
        out = capsys.readouterr().out
        total = SphinxSearch(own.shards[0], settings=FAST).client.run([("SELECT COUNT(*) FROM shard", None)])[0][0][0]
    finally:
        own.stop()
    assert code == 0
    rows = [line.split() for line in out.splitlines() if re.match(r"\s*[\d,]+\s+[\d.]+ /", line)]
    assert [r[0] for r in rows] == ["200", "400"] and all(len(r) == 9 for r in rows)
    assert 100 < int(total) < 300  # about half of the 400 on each shard


def test_bench_sphinx_needs_its_shards(capsys):
    code = main(["bench", "--speed", "--sphinx", "sphinx:127.0.0.1:9306/front"])
    assert code == 2 and "--sphinx-shard" in capsys.readouterr().err
