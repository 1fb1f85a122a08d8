"""The reader's copy of its base with the adapter folded in (`reading_copy.adapted_copy`), on a tiny
llama whose matrices are stored in 4 bits as the packaged model's are: llama.cpp reads the copy as
it reads the base with the adapter applied, the reader reads the same span either way, the copies of
old fine-tunes are removed, and the question's surprise is read from its own positions alone."""

from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType

from deltaseek.programs.agent.learned_reader import adapter as adapter_module
from deltaseek.programs.agent.learned_reader.adapter import (ReaderAdapter, evaluate_prompt, question_positions,
                                                             question_surprise)
from deltaseek.programs.agent.learned_reader.adapter_file import AdapterInfo, BaseShape, write_adapter
from deltaseek.programs.agent.learned_reader.prompt import best_sentences, reader_prompt
from deltaseek.programs.agent.scratchpad import Fact
from deltaseek.programs.lm import reading_copy
from deltaseek.programs.lm.llamacpp import default_threads, import_llama_cpp
from deltaseek.programs.lm.reading_copy import adapted_copy, q8_copy
from tests.tiny_model import lora_tensors, write_tiny_llama_gguf

QUESTION = "Who keeps the bell of the Harlow chapel?"
CHAPEL = [Fact(source="harlow", title="Harlow chapel", step=1,
               text="The Harlow chapel was raised in 1702 on a hill above the ford. Its bell is kept by the "
                    "Penn family, who ring it at noon. A fire took its roof in 1811.")]


@pytest.fixture(scope="module")
def four_bit_base(tmp_path_factory) -> Path:
    return write_tiny_llama_gguf(tmp_path_factory.mktemp("adapted") / "tiny-q4_1.gguf",
                                 quantized=GGMLQuantizationType.Q4_1)


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DELTASEEK_CACHE", str(tmp_path / "cache"))
    adapted_copy.cache_clear(), q8_copy.cache_clear()
    yield
    adapted_copy.cache_clear(), q8_copy.cache_clear()


def adapter_of(base: Path, folder: Path, seed: int = 0) -> Path:
    info = AdapterInfo(rank=4, bound=0.6, trained_on={"command": "by hand"})
    return write_adapter(lora_tensors(4, seed), info, folder / f"adapter-{seed}.gguf", base, BaseShape("llama", 4, 2))


def last_logits(**weights) -> np.ndarray:
    llama_cpp = import_llama_cpp()
    llama = llama_cpp.Llama(**weights, n_ctx=64, n_threads=1, verbose=False, seed=0)
    llama.eval(llama.tokenize(b"The bell is rung at noon by", add_bos=False))
    return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama.ctx, -1), shape=(llama.n_vocab(),)).copy()


def test_llama_cpp_reads_the_folded_copy_as_the_base_with_the_adapter_applied(four_bit_base, tmp_path):
    adapter = adapter_of(four_bit_base, tmp_path)
    copy = adapted_copy(four_bit_base, adapter)
    assert copy.parent == reading_copy.reading_copy_dir() and copy != q8_copy(four_bit_base)
    folded = last_logits(model_path=str(copy))
    applied = last_logits(model_path=str(q8_copy(four_bit_base)), lora_path=str(adapter))
    without = last_logits(model_path=str(q8_copy(four_bit_base)))
    assert np.corrcoef(folded, applied)[0, 1] > 0.999 and np.argmax(folded) == np.argmax(applied)
    assert np.abs(folded - applied).max() < np.abs(applied - without).max() / 10  # the adapter is in the copy


def test_the_reader_reads_the_same_on_the_folded_copy_and_where_none_can_be_written(four_bit_base, tmp_path,
                                                                                     monkeypatch):
    adapter = adapter_of(four_bit_base, tmp_path)
    reader = ReaderAdapter(adapter, four_bit_base)
    folded = reader.read(QUESTION, CHAPEL, bound=1.01)
    assert reader.weights() == {"model_path": str(adapted_copy(four_bit_base, adapter))}
    generate, batch = default_threads()  # the folded copy writes on every thread; the LoRA applied, on the agent's
    assert reader.llama_settings()["n_threads"] == batch
    monkeypatch.setattr(adapter_module, "adapted_copy", lambda base, path: None)
    applier = ReaderAdapter(adapter, four_bit_base)
    applied = applier.read(QUESTION, CHAPEL, bound=1.01)
    assert (applier.weights()["model_path"], applier.weights()["lora_path"]) == (str(four_bit_base), str(adapter))
    assert applier.llama_settings()["n_threads"] == generate
    assert folded.span == applied.span and folded.span in best_sentences(QUESTION, CHAPEL).text
    assert abs(folded.doubt - applied.doubt) < 0.02
    assert abs(folded.question_surprise - applied.question_surprise) < 0.02


def test_only_the_last_used_folded_copies_of_a_base_are_kept(four_bit_base, tmp_path, monkeypatch):
    monkeypatch.setattr(reading_copy, "ADAPTED_COPIES_KEPT", 2)  # three copies show it: each takes seconds
    first, second = (adapted_copy(four_bit_base, adapter_of(four_bit_base, tmp_path, seed)) for seed in range(2))
    adapted_copy.cache_clear()
    adapted_copy(four_bit_base, tmp_path / "adapter-0.gguf")  # found and used again: now the last used
    third = adapted_copy(four_bit_base, adapter_of(four_bit_base, tmp_path, 2))
    assert set(reading_copy.reading_copy_dir().glob("*+*.adapted*.gguf")) == {first, third} and not second.exists()


def test_a_folded_copy_in_a_cache_it_cannot_touch_is_read_all_the_same(four_bit_base, tmp_path, monkeypatch):
    adapter = adapter_of(four_bit_base, tmp_path)
    built = adapted_copy(four_bit_base, adapter)
    adapted_copy.cache_clear()

    def read_only(path, *args, **kwargs):
        raise PermissionError(13, "Read-only file system")

    monkeypatch.setattr(Path, "touch", read_only)
    assert adapted_copy(four_bit_base, adapter) == built


def test_where_no_folded_copy_can_be_written_the_reader_is_told_so(four_bit_base, tmp_path, monkeypatch, capsys):
    def disk_full(reader, target, deltas=None):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(reading_copy, "write_reading_copy", disk_full)
    assert adapted_copy(four_bit_base, adapter_of(four_bit_base, tmp_path)) is None
    warnings = capsys.readouterr().err.splitlines()
    assert len(warnings) == 2 and "the reader's copy of the model with its adapter folded in could not" in warnings[0]
    assert warnings[1].endswith("the reader applies its adapter to tiny-q4_1.gguf as it reads, slower, its readings "
                                "a little different")


def test_the_question_surprise_is_read_from_the_questions_own_positions_alone(four_bit_base):
    llama_cpp = import_llama_cpp()
    prompt = reader_prompt(QUESTION, best_sentences(QUESTION, CHAPEL))
    every = llama_cpp.Llama(model_path=str(four_bit_base), n_ctx=256, n_threads=1, verbose=False, seed=0,
                            logits_all=True)
    tokens = every.tokenize(prompt.encode(), add_bos=False)
    asked = question_positions(every, tokens, prompt)
    assert asked is not None and every.detokenize(tokens[asked.start:asked.stop]).decode().strip() == QUESTION
    every.eval(tokens)
    kept = range(asked.start - 1, asked.stop - 1)
    some = llama_cpp.Llama(model_path=str(four_bit_base), n_ctx=256, n_batch=256, n_threads=1, verbose=False, seed=0)
    rows = evaluate_prompt(some, tokens, kept)
    assert np.allclose(rows, every.scores[kept.start:kept.stop], atol=1e-3)
    assert question_surprise(rows, tokens[asked.start:asked.stop]) == pytest.approx(
        question_surprise(every.scores[kept.start:kept.stop], tokens[asked.start:asked.stop]), abs=1e-3)
    last = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(some.ctx, -1), shape=(some.n_vocab(),))
    assert np.allclose(last, every.scores[len(tokens) - 1], atol=1e-3) and some.n_tokens == len(tokens)
