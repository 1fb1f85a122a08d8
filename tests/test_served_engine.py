"""A model on an OpenAI-compatible server, asked through `ServedModelEngine` (DSPy's own lm15
client, no litellm): what goes on the wire, what DSPy still owns (retries), what a saved program
keeps. The servers are real HTTP servers on 127.0.0.1 (`tests/fake_openai.py`)."""

from __future__ import annotations

import json
import pickle

import dspy
import pytest

from deltaseek.errors import LMConfigError
from deltaseek.programs.lm import adapter_for, make_lm
from deltaseek.programs.lm.model_memory import recall_dialect, remember_dialect
from deltaseek.programs.lm.served import ServedModelEngine, served_at
from tests.fake_openai import FakeOpenAIServer, probe_dialect
from tests.test_startup import modules_after


def test_a_served_model_is_asked_by_name_with_the_limit_every_server_reads():
    with FakeOpenAIServer("Tressel.") as server:
        lm = make_lm("openai/smollm2", server.url, max_tokens=77, cache=False)
        assert isinstance(lm.engine, ServedModelEngine)
        assert lm("Who is it?") == ["Tressel."]
    [request] = server.requests
    assert request["model"] == "smollm2"  # the name the server knows, without litellm's provider
    assert request["max_tokens"] == 77 and "max_completion_tokens" not in request
    assert request["messages"][-1] == {"role": "user", "content": "Who is it?"}


def test_asking_a_served_model_imports_no_litellm():
    """litellm's import is two seconds of every process that asks a served model."""
    with FakeOpenAIServer("Tressel.") as server:
        loaded = modules_after("from deltaseek.programs.lm import make_lm\n"
                               f"assert make_lm('openai/smollm2', {server.url!r}, cache=False)('Who?') == ['Tressel.']")
        assert len(server.requests) == 1
    assert "litellm" not in loaded and "openai" not in loaded


def test_a_rate_limited_call_is_retried_by_dspy():
    """The engine makes one attempt and raises lm15's canonical error; DSPy's retries do the rest."""
    statuses = iter([429, 200])
    with FakeOpenAIServer("Tressel.", status=lambda request: next(statuses)) as server:
        lm = make_lm("openai/smollm2", server.url, cache=False)
        assert lm("Who is it?") == ["Tressel."]
    assert len(server.requests) == 2


def test_a_rejected_key_is_not_retried():
    with FakeOpenAIServer("Tressel.", status=401) as server:
        lm = make_lm("openai/smollm2", server.url, cache=False)
        with pytest.raises(Exception, match="(?i)api key"):
            lm("Who is it?")
    assert len(server.requests) == 1


def test_the_engines_state_names_the_server_and_never_the_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    engine = ServedModelEngine("http://127.0.0.1:8000/v1/", api_key="sk-given")
    lm = dspy.LM("openai/smollm2", engine=engine, cache=False)
    state = lm.dump_state()
    assert state["engine"] == {"class": "deltaseek.programs.lm.served:ServedModelEngine",
                               "state": {"api_base": "http://127.0.0.1:8000/v1"}}
    assert "sk-" not in json.dumps(state) and b"sk-" not in pickle.dumps(engine)
    restored = pickle.loads(pickle.dumps(engine))
    assert restored.api_base == engine.api_base and restored.key == "sk-secret"  # read where it is loaded
    assert served_at(lm) == ("http://127.0.0.1:8000/v1", "sk-given")


def test_other_providers_behind_a_server_keep_litellm(monkeypatch):
    """Only OpenAI's chat completions protocol has this engine; another provider's server is litellm's."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer("Tressel.") as server:
        lm = make_lm("ollama_chat/qwen", server.url, cache=False)
    assert lm.engine == "auto" and served_at(lm) == (server.url, None)
    with pytest.raises(LMConfigError, match="unknown provider 'nosuch'"):
        make_lm("nosuch/model", server.url, cache=False)


def test_a_remembered_schema_form_the_server_now_refuses_is_probed_again():
    """A server restarted within the day with another build: the form remembered from an earlier
    process is refused (HTTP 500); the engine probes again and the question goes out in the form
    found now, which is remembered in its place."""
    with FakeOpenAIServer(json.dumps({"answer": "Tressel"}), enforces="json_object_schema") as server:
        remember_dialect(server.url, "smollm2", "json_schema", ("json_schema: enforced",))
        lm = make_lm("openai/smollm2", server.url, cache=False)
        with dspy.context(lm=lm, adapter=adapter_for(lm)):
            out = dspy.Predict("question -> answer")(question="Who is it?")
    assert out.answer == "Tressel"
    refused, answered = server.requests
    assert refused["response_format"]["type"] == "json_schema"
    assert answered["response_format"]["type"] == "json_object" and "schema" in answered["response_format"]
    assert [probe_dialect(probe) for probe in server.probes] == ["json_schema", "json_object_schema"]
    assert recall_dialect(server.url, "smollm2")[0] == "json_object_schema"


def test_a_refusal_for_another_reason_is_probed_again_once_and_then_raised():
    with FakeOpenAIServer("{}", enforces="json_schema",
                          status=lambda request: 200 if probe_dialect(request) else 400) as server:
        lm = make_lm("openai/smollm2", server.url, cache=False)
        with dspy.context(lm=lm, adapter=adapter_for(lm)), pytest.raises(Exception):
            dspy.Predict("question -> answer")(question="Who is it?")
    assert len(server.requests) == 2 and len(server.probes) == 2  # the first probe, and one again
