"""The deltaseek command: outputs and every bad input (one-line error, non-zero exit, no traceback)."""

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from deltaseek import DeltaSeek, UsageError
from deltaseek.cli import escape_controls, main
from deltaseek.programs.index import CorpusIndex, cache_dir
from deltaseek.programs.tools import LocalCorpusSearch
from tests.fake_openai import FakeOpenAIServer
from tests.test_checks import GUILD

STUCK_REPLY = 'Thought: I need adoption numbers.\nAction: search_corpus("current adoption rates Ollama vs Llama.cpp")'


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("question", ["", "   \n\t"])
def test_empty_question(capsys, question):
    code, out, err = run_cli(capsys, "ask", question)
    assert code == 2 and err.strip() == "deltaseek: error: the question is empty"
    assert "Traceback" not in err


def test_missing_corpus(capsys, tmp_path):
    missing = tmp_path / "nope.jsonl"
    code, _, err = run_cli(capsys, "ask", "Who?", "--corpus", str(missing))
    assert code == 2 and err.strip() == f"deltaseek: error: corpus file not found: {missing}"


@pytest.mark.parametrize("lines,problem", [
    (['{"title": "a", "text": "fine"}', "{not json"], ":2: not valid JSON"),
    (['{"title": "a", "text": "fine"}', '{"title": "b"}'], ':2: missing a non-empty "text" field'),
    (['["a list"]'], ":1: expected a JSON object"),
])
def test_bad_corpus_lines_name_file_and_line(capsys, tmp_path, lines, problem):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(capsys, "index", str(corpus))
    assert code == 2
    assert f"{corpus}{problem}" in err and len(err.strip().splitlines()) == 1


def test_index_reports_and_caches(capsys, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"title": "A", "text": "alpha beta"}\n{"text": "gamma delta"}\n')
    code, out, _ = run_cli(capsys, "index", str(corpus))
    assert code == 0 and out.startswith("indexed 2 passages")
    fingerprint = out.rsplit("(", 1)[1].rstrip(")\n")
    assert (cache_dir() / "index" / fingerprint / "passages.json").is_file()
    cached = CorpusIndex.open([corpus])
    assert cached.fingerprint == fingerprint and cached.build_seconds == 0.0  # loaded, not rebuilt
    corpus.write_text('{"title": "A", "text": "alpha beta"}\n{"text": "gamma epsilon"}\n')
    changed = CorpusIndex.open([corpus])
    assert changed.fingerprint != fingerprint and changed.build_seconds > 0  # a changed file is rebuilt


def test_unknown_lm_provider(capsys):
    code, _, err = run_cli(capsys, "ask", "Who is it?", "--lm", "nosuchprovider/model-x")
    assert code == 2 and "unknown provider 'nosuchprovider'" in err


def test_lm_without_provider(capsys):
    code, _, err = run_cli(capsys, "ask", "Who is it?", "--lm", "gpt4")
    assert code == 2 and "PROVIDER/MODEL" in err


def test_unreachable_api_base(capsys):
    url = f"http://127.0.0.1:{free_port()}/v1"
    code, _, err = run_cli(capsys, "ask", "Who is it?", "--lm", "openai/local", "--api-base", url)
    assert code == 2 and f"--api-base {url} is unreachable" in err and "Traceback" not in err


def test_an_unreachable_url_from_the_environment_is_named_as_the_variable(capsys, monkeypatch):
    url = f"http://127.0.0.1:{free_port()}/v1"
    monkeypatch.setenv("DELTASEEK_API_BASE", url)
    code, _, err = run_cli(capsys, "ask", "Who is it?", "--lm", "openai/local")
    assert code == 2 and f"$DELTASEEK_API_BASE {url} is unreachable" in err and "--api-base" not in err


def test_debug_shows_the_traceback():
    """A real process: without --debug one line; with it, Python's traceback of the very error."""
    deltaseek = Path(sys.executable).parent / "deltaseek"
    plain = subprocess.run([deltaseek, "ask", "  "], capture_output=True, text=True, timeout=120)
    debug = subprocess.run([deltaseek, "--debug", "ask", "  "], capture_output=True, text=True, timeout=120)
    assert plain.returncode == 2 and plain.stderr == "deltaseek: error: the question is empty\n"
    assert debug.returncode == 1 and debug.stderr.startswith("Traceback (most recent call last):")
    assert debug.stderr.rstrip().endswith("deltaseek.errors.UsageError: the question is empty")
    assert "in check_question" in debug.stderr


@pytest.mark.parametrize("argv, named", [
    (["--corpus", "mine.jsonl"], "--corpus"),
    (["--tools", "web", "--scenario", "echo"], "--tools, --scenario"),
])
def test_bench_speed_refuses_options_it_would_ignore(capsys, argv, named):
    """Each set is timed on its own corpus with the local tool: a corpus or tool given is refused
    in one line before anything runs, not silently dropped."""
    code, out, err = run_cli(capsys, "bench", "--speed", *argv)
    assert code == 2 and out == ""
    assert err.strip().startswith(f"deltaseek: error: bench --speed does not take {named}:")


def test_bad_budget(capsys):
    with FakeOpenAIServer(STUCK_REPLY) as server:
        code, _, err = run_cli(capsys, "ask", "Who?", "--lm", "openai/stuck", "--api-base", server.url,
                               "--hard-budget", "0")
    assert code == 2 and "bad option --hard-budget: Input should be greater than or equal to 1" in err


def test_a_stuck_model_behind_an_openai_endpoint_runs_its_call_once_and_answers(capsys, monkeypatch):
    """Every prompt gets the same text-format tool call: it runs once, then the run ends with an answer."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(STUCK_REPLY) as server:
        code, out, err = run_cli(capsys, "ask", "What is the current rate of adoption for Ollama vs llama.cpp "
                                 "in the magnificent 7?", "--lm", "openai/stuck", "--api-base", server.url, "--json")
    assert code == 0, err
    record = json.loads(out)
    stuck = [c for c in record["tool_calls"] if c["args"]["query"] == "current adoption rates Ollama vs Llama.cpp"]
    assert sum(c["executed"] for c in stuck) == 1
    assert record["answer"].strip()
    # the stuck query finds star counts and no rate: the evidence reads proxy_only, so the search stops there
    assert (record["stop_reason"], record["answerability"]) == ("answerability", "proxy_only")
    assert "stars" in record["answer"]
    assert len(server.requests) == record["lm_calls"] > 0
    for key in ("question", "answer", "answerability", "caveats", "assumptions", "stop_reason", "steps",
                "tool_calls", "sources", "lm_calls", "tokens", "seconds"):
        assert key in record
    assert {"tool", "args", "status", "result_count", "executed"} <= set(record["tool_calls"][0])


def test_ask_file_answers_each_line_with_one_model(capsys, tmp_path, monkeypatch):
    """`ask -f`: a JSON line per question, in order, from one process (the start paid once)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    questions = tmp_path / "questions.txt"
    questions.write_text("Who created Ruby?\n\n   \nWhere is the New York Times building?\n")
    with FakeOpenAIServer(STUCK_REPLY) as server:
        code, out, err = run_cli(capsys, "ask", "-f", str(questions), "--lm", "openai/stuck", "--api-base",
                                 server.url, "--json")
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["question"] for r in records] == ["Who created Ruby?", "Where is the New York Times building?"]
    assert all(r["answer"].strip() for r in records)
    assert len(server.requests) == sum(r["lm_calls"] for r in records)


@pytest.mark.parametrize("argv, problem", [
    (["ask"], "ask takes a question or --file FILE (one of them)"),
    (["ask", "Who?", "-f", "QUESTIONS"], "ask takes a question or --file FILE (one of them)"),
    (["ask", "-f", "QUESTIONS"], "QUESTIONS:3: the question is 2,001 characters long"),
    (["ask", "-f", "EMPTY"], "EMPTY: no question in it (one question a line)"),
])
def test_ask_file_refuses_bad_input_before_the_model_loads(capsys, tmp_path, argv, problem):
    questions, empty = tmp_path / "q.txt", tmp_path / "empty.txt"
    questions.write_text("Who?\n\n" + "x" * 2001 + "\n")
    empty.write_text("\n \n")
    argv = [str(questions) if a == "QUESTIONS" else str(empty) if a == "EMPTY" else a for a in argv]
    problem = problem.replace("QUESTIONS", str(questions)).replace("EMPTY", str(empty))
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and problem in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv,problem", [
    (["a " * 1500], "the question is 2,999 characters long; at most 2,000 are accepted"),
    (["Who created Ruby?", "--tools", "local,local"], "--tools names local more than once"),
])
def test_a_long_question_and_a_repeated_tool_are_one_line_refusals(capsys, argv, problem):
    with FakeOpenAIServer(STUCK_REPLY) as server:
        code, out, err = run_cli(capsys, "ask", *argv, "--lm", "openai/stuck", "--api-base", server.url)
        assert server.requests == []  # refused before any LM call
    assert code == 2 and out == "" and err.strip() == f"deltaseek: error: {err.strip().split('error: ', 1)[1]}"
    assert problem in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("question", ["\u200b\u200b", "\x00", " \ufeff\u2060\u200d ", "\x1b\x07"])
def test_a_question_of_invisible_characters_is_empty(capsys, question):
    with FakeOpenAIServer(STUCK_REPLY) as server:
        code, out, err = run_cli(capsys, "ask", question, "--lm", "openai/stuck", "--api-base", server.url)
        assert server.requests == []
    assert code == 2 and out == "" and err.strip() == "deltaseek: error: the question is empty"


def test_a_question_of_invisible_characters_is_refused_from_python_too(bundled_index):
    with pytest.raises(UsageError, match="the question is empty"):
        DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])(question="\u200b\x00")


def test_control_characters_of_a_question_are_printed_escaped(capsys, restored_dspy):
    question = "Where is Xyzzyville\x1b[2J\x07\u202e?"
    with FakeOpenAIServer(STUCK_REPLY, status=429) as server:
        code, out, err = run_cli(capsys, "ask", question, "--lm", "openai/x", "--api-base", server.url, "--trace")
    assert code == 0, err
    assert "Xyzzyville\\x1b[2J\\x07\\u202e?" in out  # the tool-first search of the question, as the trace shows it
    assert not any(c in out for c in "\x1b\x07\u202e")


def test_escaping_keeps_text_that_prints():
    assert escape_controls("Zoë\u00a0N°\tfin\nnext \u200d \u200c") == "Zoë\u00a0N°\tfin\nnext \u200d \u200c"
    assert escape_controls("a\rb\x7f\u200b") == "a\\rb\\x7f\\u200b"


@pytest.mark.parametrize("question", ["?" * 2000, "?! ... ¿¡", "— * —"])
def test_a_question_of_punctuation_alone_is_refused_as_empty(capsys, question):
    code = run_cli(capsys, "ask", question)
    assert code[0] == 2 and code[2] == "deltaseek: error: the question is empty: it holds no word, only punctuation " \
                                       "or symbols\n", code[2]
    with pytest.raises(UsageError, match="the question is empty"):
        DeltaSeek(tools=[LocalCorpusSearch(CorpusIndex.build(GUILD))])(question=question)
