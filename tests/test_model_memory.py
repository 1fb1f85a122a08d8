"""What one process learns about a served model (the server's schema dialect, the profile its
replies need) is what the next process starts with: a process is simulated by clearing the
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
from deltaseek.programs.lm.model_memory import recall_seen_profile
from deltaseek.programs.lm.profile import record_profile, recorded_profile, reply_tally
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


def test_a_model_seen_small_in_earlier_processes_starts_small_behind_the_same_server(bundled_index):
    """One process per question adds up as the questions of one process do (`remember_run`): one
    switched run is not yet the model's habit, two are."""
    with FakeOpenAIServer(ECHO, enforces="json_schema") as server, \
            FakeOpenAIServer(ECHO, enforces="json_schema") as other_server:
        for _ in range(2):
            next_process()
            run = run_junk_question(server, bundled_index)
            assert run.profile == "small" and run.scratchpad.profile_because.startswith("switched at step 1")

        next_process()
        lm = make_lm("openai/smollm2", server.url, cache=False)
        choice = choose_profile(AgentSettings(), lm)
        assert choice.name == "small" and not choice.follows_replies
        assert choice.because.startswith("the model's replies failed a check before: 2 of 2 questions switched")
        third = run_junk_question(server, bundled_index)
        assert third.profile == "small" and "failed a check before" in third.scratchpad.profile_because
        assert len(server.probes) == 1  # json_schema, enforced: asked in the first process only

        # the same model name at another address, or another model at the same address, is new
        for elsewhere in (make_lm("openai/smollm2", other_server.url), make_lm("openai/other", server.url)):
            assert recorded_profile(elsewhere) is None
            assert choose_profile(AgentSettings(), elsewhere).name == "capable"


def test_one_switched_process_is_not_yet_the_models_habit(bundled_index):
    with FakeOpenAIServer(ECHO, enforces="json_schema") as server:
        run_junk_question(server, bundled_index)
        next_process()
        lm = make_lm("openai/smollm2", server.url, cache=False)
    assert recorded_profile(lm) is None and reply_tally(lm) == (1, 1)
    assert choose_profile(AgentSettings(), lm).name == "capable"


def test_a_profile_that_was_set_wins_and_is_never_written(bundled_index):
    saved = dspy.settings.lm, dspy.settings.adapter
    with FakeOpenAIServer(ECHO, enforces="json_schema") as server:
        try:
            run_junk_question(server, bundled_index, AgentSettings(profile="capable"))
            assert recall_seen_profile("openai/smollm2", server.url) is None

            lm = configure_lm("openai/smollm2", server.url, profile="small")
            assert recall_seen_profile("openai/smollm2", server.url) is None and not recorded_profile(lm).seen

            for _ in range(2):
                next_process()
                run_junk_question(server, bundled_index)  # seen small now
            assert recall_seen_profile("openai/smollm2", server.url) is not None
            lm = configure_lm("openai/smollm2", server.url, profile="capable")
            assert recorded_profile(lm).name == "capable" and not recorded_profile(lm).seen
            assert choose_profile(AgentSettings(), lm).name == "capable"
            assert choose_profile(AgentSettings(profile="capable"), make_lm("openai/smollm2", server.url)).name \
                == "capable"
        finally:
            dspy.configure(lm=saved[0], adapter=saved[1])


def test_a_model_without_a_server_is_not_remembered():
    lm = make_lm("openai/gpt-4o-mini")
    record_profile(lm, "small", seen=True, because="an echoed field name")
    assert not model_memory.model_memory_dir().exists()  # nothing written (nor read)


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
