"""Structured output for any model: which format each LM gets (`--format`), the probe of an
`--api-base` server, and what the JSON-schema adapter puts on the wire.

Scripted servers on 127.0.0.1 here; the real llama-cpp-python server in the tests marked `llama_server`.
"""

import json

import dspy
import pytest
from dspy import lm15

from deltaseek.errors import LMConfigError
from deltaseek.programs.lm import (SMALL_MODEL_BOUNDS, GrammarJSONAdapter, LlamaCppEngine, ServerJSONAdapter,
                                   adapter_for, bound_schema, make_lm, schema_dialect)
from deltaseek.programs.lm.adapter import signature_schema, wire_format
from deltaseek.programs.lm.profile import record_profile
from deltaseek.signatures import StepDelta, compact_signature
from tests.fake_openai import FakeOpenAIServer

STEP = compact_signature(StepDelta, StepDelta)


def test_the_small_model_bounds_are_the_embedded_engines():
    engine = LlamaCppEngine()
    assert SMALL_MODEL_BOUNDS == (engine.max_items, engine.max_chars, engine.max_item_chars)


@pytest.mark.parametrize("dialect,expected", [
    ("json_schema", {"type": "json_schema", "json_schema": {"name": "outputs", "strict": True, "schema": {"x": 1}}}),
    ("json_object_schema", {"type": "json_object", "schema": {"x": 1}}),
])
def test_wire_format_writes_the_schema_as_each_kind_of_server_takes_it(dialect, expected):
    assert wire_format({"x": 1}, dialect) == expected


def test_the_probe_keeps_the_first_form_the_server_enforces():
    with FakeOpenAIServer("{}", enforces="json_object_schema") as server:
        found = schema_dialect(server.url, "smollm2")
        assert found.dialect == "json_object_schema"
        assert found.findings == ("json_schema: refused (HTTP 400)", "json_object_schema: enforced")
        assert [p["model"] for p in server.probes] == ["smollm2", "smollm2"] and server.requests == []
        schema_dialect(server.url, "smollm2")
        assert len(server.probes) == 2  # once per process


def test_a_server_that_ignores_the_schema_is_not_taken_at_its_word():
    with FakeOpenAIServer('{"answer": "anything"}') as server:
        found = schema_dialect(server.url, "stuck")
    assert found.dialect is None
    assert found.findings == ("json_schema: accepted, not enforced", "json_object_schema: accepted, not enforced")


def test_auto_and_json_pick_the_servers_form_and_chat_never_probes():
    with FakeOpenAIServer("{}", enforces="json_schema") as server:
        lm = make_lm("openai/smollm2", server.url)
        small, capable = adapter_for(lm, "auto", "small"), adapter_for(lm, "json", "capable")
        chat = adapter_for(lm, "chat", "small")
    assert isinstance(small, ServerJSONAdapter) and small.dialect == "json_schema" and small.bounds == SMALL_MODEL_BOUNDS
    assert isinstance(capable, ServerJSONAdapter) and capable.bounds is None
    assert type(chat) is dspy.ChatAdapter
    assert len(server.probes) == 1


def test_a_server_without_schemas_gets_the_chat_format_or_a_one_line_error_for_json():
    with FakeOpenAIServer("not json") as server:
        lm = make_lm("openai/stuck", server.url)
        assert type(adapter_for(lm, "auto")) is dspy.ChatAdapter
        with pytest.raises(LMConfigError) as error:
            adapter_for(lm, "json")
    assert str(error.value) == (f"--format json: the server at {server.url} does not hold replies to a JSON schema "
                                "(json_schema: accepted, not enforced; json_object_schema: accepted, not enforced); "
                                "use --format chat")


def test_a_hosted_model_follows_litellms_capability_data():
    assert type(adapter_for(make_lm("openai/gpt-4o-mini"), "auto")) is dspy.JSONAdapter
    assert type(adapter_for(make_lm("anthropic/claude-3-5-haiku-latest"), "auto")) is dspy.ChatAdapter
    assert type(adapter_for(make_lm("anthropic/claude-3-5-haiku-latest"), "json")) is dspy.JSONAdapter


def test_the_embedded_model_keeps_its_grammar_unless_chat_is_asked_for():
    lm = make_lm(cache=False)
    assert type(adapter_for(lm, "auto")) is GrammarJSONAdapter and type(adapter_for(lm, "json")) is GrammarJSONAdapter
    assert type(adapter_for(lm, "chat")) is dspy.ChatAdapter


def test_a_bad_format_is_a_config_error():
    with pytest.raises(LMConfigError, match="--format 'xml'"):
        adapter_for(make_lm(cache=False), "xml")


class SchemaEngine:
    """Records the schema DSPy hands an engine that declares schema support (as the embedded one does)."""
    supports_response_schema = True
    supported_params = frozenset({"temperature", "max_tokens", "response_format"})

    def __init__(self):
        self.formats = []

    def complete(self, request: lm15.Request) -> lm15.Response:
        self.formats.append(request.config.response_format)
        reply = {"next_move": "search", "tool": "search_corpus", "query": "Ohio lieutenant governor"}
        return lm15.Response(id="1", model=request.model, message=lm15.Message.assistant(json.dumps(reply)),
                             finish_reason="stop", usage=lm15.Usage(input_tokens=1, output_tokens=1))


def test_the_server_gets_the_schema_and_prompt_the_embedded_engine_gets():
    """Bounded for a small model as the embedded engine bounds it, so llama.cpp builds the same
    grammar on either path; the prompt is the same too, so the server's prefix cache applies."""
    engine = SchemaEngine()
    embedded_like = dspy.LM("embedded/test", engine=engine, cache=False)
    inputs = {"question": "Who is the lieutenant governor of Ohio?", "step": 1, "scratchpad": "", "guidance": ""}
    with dspy.context(lm=embedded_like, adapter=GrammarJSONAdapter()):
        dspy.Predict(STEP)(**inputs)
    [embedded_format] = engine.formats
    assert signature_schema(STEP) == embedded_format["schema"]

    with FakeOpenAIServer(json.dumps({"next_move": "search", "tool": "search_corpus", "query": "Ohio"}),
                          enforces="json_object_schema") as server:
        lm = make_lm("openai/smollm2", server.url, cache=False)
        with dspy.context(lm=lm, adapter=adapter_for(lm, "auto", "small")):
            out = dspy.Predict(STEP)(**inputs)
    [request] = server.requests
    assert out.query == "Ohio"
    assert request["response_format"] == {"type": "json_object", "schema": bound_schema(embedded_format["schema"],
                                                                                         *SMALL_MODEL_BOUNDS)}
    assert request["max_tokens"] > 0 and "max_completion_tokens" not in request  # the field every server reads
    assert [m["content"] for m in request["messages"]] == [m["content"] for m in lm_messages(embedded_like)]


def test_a_served_model_configured_small_gets_the_bounded_schema():
    """No bounds given to the adapter: the schema is unbounded for an LM configured with no profile,
    and bounded as the embedded engine bounds it for one configured small."""
    inputs = {"question": "Who is the lieutenant governor of Ohio?", "step": 1, "scratchpad": "", "guidance": ""}
    with FakeOpenAIServer(json.dumps({"next_move": "search", "tool": "search_corpus", "query": "Ohio"}),
                          enforces="json_schema") as server:
        lm = make_lm("openai/smollm2", server.url, cache=False)
        adapter = adapter_for(lm, "auto", None)
        with dspy.context(lm=lm, adapter=adapter):
            dspy.Predict(STEP)(**inputs)
            record_profile(lm, "small")
            dspy.Predict(STEP)(**inputs)
    unbounded, bounded = [r["response_format"]["json_schema"]["schema"] for r in server.requests]
    assert unbounded == signature_schema(STEP)
    assert bounded == bound_schema(unbounded, *SMALL_MODEL_BOUNDS) != unbounded


def lm_messages(lm: dspy.LM) -> list[dict]:
    return lm.history[-1]["messages"]


def test_an_unreachable_server_is_one_line_from_the_command(capsys):
    from deltaseek.cli import main
    from tests.test_cli import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    code = main(["ask", "Who is it?", "--lm", "openai/local", "--api-base", url, "--format", "json"])
    _, err = capsys.readouterr()
    assert code == 2 and err.startswith(f"deltaseek: error: --api-base {url} is unreachable") and "Traceback" not in err


@pytest.mark.embedded
@pytest.mark.llama_server
def test_llama_cpp_python_server_enforces_a_schema_as_json_object_only(llama_server):
    found = schema_dialect(llama_server, "smollm2")
    assert found.dialect == "json_object_schema"
    assert found.findings[0] == "json_schema: refused (HTTP 500)"
