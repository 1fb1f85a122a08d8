"""`--lm path/to/model.gguf`: a local GGUF file runs in-process on the embedded model's engine.

A second model, made by tests/tiny_model.py: a tiny llama with random weights (the packaged
SmolLM2's tokenizer, a chat template of its own), written with the `gguf` package. It answers
nonsense; what is tested is that it loads and runs through the engine: its own chat template,
grammar decoding, prefix reuse. The packaged SmolLM2 named by its path answers a seed question (marked `embedded`).
"""

import json
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Literal

import dspy
import pytest
from dspy import lm15

from deltaseek import SEED_QUESTIONS
from deltaseek.cli import main
from deltaseek.errors import LMConfigError
from deltaseek.programs.lm import (
    EMBEDDED_MODEL,
    LlamaCppEngine,
    adapter_for,
    embedded_engine,
    find_smollm2_gguf,
    is_embedded,
    make_lm,
)
from deltaseek.programs.lm.gguf_file import looks_like_gguf_path
from tests.tiny_model import TINY_TEMPLATE, write_tiny_llama_gguf

@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory) -> Path:
    return write_tiny_llama_gguf(tmp_path_factory.mktemp("tiny-gguf") / "tiny-llama.gguf")


@pytest.mark.parametrize("model", ["models/tiny.gguf", "TINY.GGUF", "file:models/tiny.bin", "/opt/models/tiny",
                                   "./tiny", "../tiny", "~/models/tiny"])
def test_a_path_is_a_gguf_file(model):
    assert looks_like_gguf_path(model)


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "ollama_chat/llama3", "ollama_chat/qwen2.5:7b",
                                   "anthropic/claude-3-5-haiku-latest", "hosted_vllm/org/model"])
def test_a_litellm_model_string_still_goes_to_litellm(model):
    assert not looks_like_gguf_path(model)
    lm = make_lm(model)
    assert not is_embedded(lm) and lm.model == model


def test_a_bare_name_that_is_no_file_is_told_both_forms():
    assert "write PROVIDER/MODEL, e.g. openai/gpt-4o-mini, or a path ending in .gguf" in one_line_error("gpt4")


def one_line_error(model: str) -> str:
    with pytest.raises(LMConfigError) as raised:
        make_lm(model)
    message = str(raised.value)
    assert "\n" not in message
    return message


def test_a_missing_file_is_refused_naming_it(tmp_path):
    missing = tmp_path / "nothing.gguf"
    assert one_line_error(str(missing)) == f"--lm {missing}: no such file"


def test_a_file_that_is_not_gguf_is_refused_naming_it(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_text("<html>a download page, not a model</html>")
    assert one_line_error(str(fake)) == f"--lm {fake}: not a GGUF model file (it does not start with the bytes 'GGUF')"
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"\x00" * 64)
    assert one_line_error(f"file:{weights}").startswith(f"--lm {weights}: not a GGUF model file")
    assert one_line_error(str(tmp_path)) == f"--lm {tmp_path}: a folder, not a GGUF model file"


def test_the_engine_refuses_a_file_that_is_not_gguf(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"GGML" + b"\x00" * 64)
    engine = LlamaCppEngine(model_path=fake)
    with pytest.raises(LMConfigError, match=f"^model file {fake}: not a GGUF model file"):
        engine.complete(lm15.Request(model="embedded/x", messages=(lm15.Message.user("Hi"),)))


def test_a_gguf_file_with_an_api_base_is_refused(tiny_gguf):
    with pytest.raises(LMConfigError, match=f"--api-base needs a litellm model string: {tiny_gguf} runs in-process"):
        make_lm(str(tiny_gguf), api_base="http://127.0.0.1:9/v1")


def test_the_command_refuses_a_missing_or_non_gguf_file_in_one_line(capsys, tmp_path):
    missing = tmp_path / "nothing.gguf"
    assert main(["ask", "Who?", "--lm", str(missing)]) == 2
    assert capsys.readouterr().err == f"deltaseek: error: --lm {missing}: no such file\n"
    fake = tmp_path / "fake.gguf"
    fake.write_text("not a model")
    assert main(["ask", "Who?", "--lm", str(fake)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"deltaseek: error: --lm {fake}: not a GGUF model file") and err.count("\n") == 1


def test_the_installed_command_exits_non_zero_naming_the_missing_file(tmp_path):
    missing = tmp_path / "nothing.gguf"
    done = subprocess.run([str(Path(sys.executable).with_name("deltaseek")), "ask", "q", "--lm", str(missing)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.strip() == f"deltaseek: error: --lm {missing}: no such file"
    assert "Traceback" not in done.stderr


def test_a_gguf_file_runs_in_process_on_one_engine_per_file(tiny_gguf):
    lm = make_lm(str(tiny_gguf), cache=False)
    assert is_embedded(lm) and lm.model == "embedded/tiny-llama.gguf"
    assert lm.engine is not embedded_engine() and lm.engine.model_path == str(tiny_gguf)
    assert make_lm(f"file:{tiny_gguf}", cache=False).engine is lm.engine  # loaded once per process
    assert isinstance(adapter_for(lm), type(adapter_for(make_lm(cache=False))))  # the grammar adapter
    reply = lm("Say something.")[0]
    assert isinstance(reply, str) and reply
    # a saved program (DSPy's JSON state) or a pickle (MLflow) names the file, and restores this engine
    assert pickle.loads(pickle.dumps(lm.engine)) is lm.engine
    assert lm.engine.dump_state()["model_file"] == {"name": "tiny-llama.gguf", "bytes": tiny_gguf.stat().st_size}


def test_a_gguf_file_is_prompted_with_its_own_chat_template(tiny_gguf):
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    engine = make_lm(str(tiny_gguf), cache=False).engine
    messages = [{"role": "system", "content": "You answer questions. " * 8}, {"role": "user", "content": "Why?"}]
    prompt = Jinja2ChatFormatter(template=TINY_TEMPLATE, eos_token="", bos_token="")(messages=messages).prompt
    assert prompt.startswith("<|system|>\nYou answer") and prompt.endswith("<|assistant|>\n")
    request = lm15.Request(model="embedded/tiny", system=messages[0]["content"],
                           messages=(lm15.Message.user("Why?"),), config=lm15.Config(max_tokens=4))
    engine.reset_stats()
    first = engine.complete(request)
    assert first.usage.input_tokens == len(engine._model().tokenize(prompt.encode(), add_bos=True, special=True))
    assert engine.complete(request).message.text == first.message.text
    stats = engine.reset_stats()
    assert stats.prefix_misses == 1 and stats.prefix_hits == 1  # the system message's state was reused


def test_grammar_decoding_holds_a_random_model_to_the_signature(tiny_gguf):
    class Pick(dspy.Signature):
        """Pick the tool for the question."""
        question: str = dspy.InputField()
        tool: Literal["search_corpus", "wikipedia"] = dspy.OutputField()
        keywords: list[str] = dspy.OutputField()

    lm = make_lm(str(tiny_gguf), cache=False)
    with dspy.context(lm=lm, adapter=adapter_for(lm)):
        out = dspy.Predict(Pick)(question="Who created Ruby?")
    assert out.tool in {"search_corpus", "wikipedia"}
    assert isinstance(out.keywords, list) and len(out.keywords) <= 2  # the engine's bounds hold
    json.loads(lm.history[-1]["outputs"][0])  # the raw reply is JSON, as the grammar demands


@pytest.mark.embedded
def test_the_packaged_model_named_by_its_path_is_the_embedded_model_and_answers(capsys, replies_not_cached):
    lm = make_lm(str(find_smollm2_gguf()), cache=False)
    assert lm.engine is embedded_engine() and lm.model == EMBEDDED_MODEL  # one model in memory, not two
    assert main(["ask", SEED_QUESTIONS[0], "--json", "--lm", str(find_smollm2_gguf())]) == 0
    record = json.loads(capsys.readouterr().out)
    assert "Tressel" in record["answer"] and 1 <= record["lm_calls"] <= record["steps"] + 1
