"""What one process learns about a served model's wire format (the server's schema dialect) is
what the next process starts with, and nothing about how its replies fared: a process is simulated by clearing the
in-process probe cache and making a fresh LM, the disk memory kept in the test's cache folder."""

import json
import logging
import time

import dspy
import pytest

from deltaseek import AgentSettings, DeltaSeek
from deltaseek.programs.agent.profile import choose_profile
from deltaseek.programs.lm import adapter_for, configure_lm, make_lm, schema_dialect
from deltaseek.programs.lm import model_memory
from deltaseek.programs.lm.profile import recorded_profile
from deltaseek.programs.tools import LocalCorpusSearch
from tests.fake_openai import FakeOpenAIServer

OHIO = "Who is the lieutenant governor of Ohio?"
ECHO = json.dumps({"next_move": "search", "tool": "search_corpus", "query": "query"})
"""A junk model's step: the query only repeats a field name."""


def next_process():
    schema_dialect.cache_clear()


def run_junk_question(server, bundled_index, settings=None):
    lm = make_lm("openai/smollm2", server.url, cache=False)
    with dspy.context(lm=lm, adapter=adapter_for(lm, "auto", None)):
        return DeltaSeek(tools=[LocalCorpusSearch(bundled_index)], settings=settings or AgentSettings())(question=OHIO)


def test_a_later_process_makes_no_probe_call():
    with FakeOpenAIServer("{}", enforces="json_object_schema") as server:
        first = schema_dialect(server.url, "smollm2")
        next_process()
        again = schema_dialect(server.url + "/", "smollm2")  # the same address, with a trailing slash
        assert len(server.probes) == 2 and again == first and again.dialect == "json_object_schema"

        next_process()
        schema_dialect(server.url, "another-model")  # another model on the server is probed
        assert len(server.probes) == 4


def test_a_server_that_enforces_no_schema_is_remembered_too():
    with FakeOpenAIServer('{"answer": "anything"}') as server:
        schema_dialect(server.url, "stuck")
        next_process()
        found = schema_dialect(server.url, "stuck")
    assert found.dialect is None and len(server.probes) == 2 and "accepted, not enforced" in found.findings[0]


def test_a_finding_expires(monkeypatch):
    monkeypatch.setattr(model_memory, "MEMORY_TTL", 0.05)
    with FakeOpenAIServer("{}", enforces="json_schema") as server:
        schema_dialect(server.url, "smollm2")
        time.sleep(0.2)
        next_process()
        schema_dialect(server.url, "smollm2")
    assert len(server.probes) == 2  # probed once in each process


def test_no_process_remembers_how_a_models_replies_fared(bundled_index):
    """Runs whose replies failed the checks change nothing a later run starts with, in this process
    or the next: only the wire format is remembered."""
    with FakeOpenAIServer(ECHO, enforces="json_schema") as server:
        lm = make_lm("openai/smollm2", server.url, cache=False)
        for _ in range(3):
            with dspy.context(lm=lm, adapter=adapter_for(lm, "auto", None)):
                run = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])(question=OHIO)
            assert run.profile == "small" and run.scratchpad.profile_because.startswith("switched at step 1")
            choice = choose_profile(AgentSettings(), lm)
            assert choice.name == "capable" and choice.follows_replies and recorded_profile(lm) is None
        next_process()
        again = run_junk_question(server, bundled_index)
        assert again.scratchpad.profile_because.startswith("switched at step 1")  # started capable again
        assert len(server.probes) == 1  # the wire format is what is remembered
        assert sorted(key.split("\x1f")[0] for key in stored_keys()) == ["dialect"]


def stored_keys() -> list[str]:
    import diskcache

    with diskcache.Cache(str(model_memory.model_memory_dir())) as cache:
        return list(cache.iterkeys())


def test_a_profile_that_was_set_wins(bundled_index):
    saved = dspy.settings.lm, dspy.settings.adapter
    with FakeOpenAIServer(ECHO, enforces="json_schema") as server:
        try:
            run = run_junk_question(server, bundled_index, AgentSettings(profile="capable"))
            assert run.profile == "capable"  # set in the settings: never switched
            lm = configure_lm("openai/smollm2", server.url, profile="small")
            assert recorded_profile(lm).name == "small"
            assert choose_profile(AgentSettings(), lm).name == "small"
            assert choose_profile(AgentSettings(profile="capable"), lm).name == "capable"
        finally:
            dspy.configure(lm=saved[0], adapter=saved[1])


def test_an_unusable_cache_folder_switches_the_memory_off_with_one_warning(tmp_path, monkeypatch, caplog,
                                                                           bundled_index):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("DELTASEEK_CACHE", str(blocked))
    with caplog.at_level(logging.WARNING, logger=model_memory.__name__), \
            FakeOpenAIServer(ECHO, enforces="json_schema") as server:
        first = run_junk_question(server, bundled_index)
        next_process()
        second = run_junk_question(server, bundled_index)
    assert first.profile == second.profile == "small" and len(server.probes) == 2  # probed in each process
    assert second.scratchpad.profile_because.startswith("switched at step 1")  # nothing remembered
    warnings = [r for r in caplog.records if r.name == model_memory.__name__]
    assert len(warnings) == 1 and "switched off" in warnings[0].getMessage()
