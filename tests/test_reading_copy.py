"""The reader's 8-bit copy of its base model (`reading_copy.py`), on a tiny llama whose matrices are
stored in 4 bits as the packaged model's are: the same file but for the matrices' storage, values
within Q8_0's rounding, llama.cpp reading it as it reads the base, built once and found after."""

import os
from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType, GGUFReader, LlamaFileType
from gguf.quants import dequantize

from deltaseek.programs.lm import reading_copy
from deltaseek.programs.lm.reading_copy import q8_copy
from tests.tiny_model import write_tiny_llama_gguf


@pytest.fixture(scope="module")
def four_bit_base(tmp_path_factory) -> Path:
    return write_tiny_llama_gguf(tmp_path_factory.mktemp("q4_1") / "tiny-q4_1.gguf",
                                 quantized=GGMLQuantizationType.Q4_1)


@pytest.fixture(autouse=True)
def copies_not_remembered():
    q8_copy.cache_clear()
    yield
    q8_copy.cache_clear()


def test_the_copy_is_the_base_with_its_4_bit_matrices_in_8_bits(four_bit_base):
    copy = q8_copy(four_bit_base)
    assert copy.parent == reading_copy.reading_copy_dir() and copy != four_bit_base
    base, copied = GGUFReader(four_bit_base), GGUFReader(copy)
    assert [(t.name, list(t.shape)) for t in copied.tensors] == [(t.name, list(t.shape)) for t in base.tensors]
    for before, after in zip(base.tensors, copied.tensors):
        if before.tensor_type == GGMLQuantizationType.F32:
            assert after.tensor_type == GGMLQuantizationType.F32 and np.array_equal(after.data, before.data)
            continue
        assert (before.tensor_type, after.tensor_type) == (GGMLQuantizationType.Q4_1, GGMLQuantizationType.Q8_0)
        values = dequantize(before.data, before.tensor_type).reshape(-1, 32)
        error = np.abs(dequantize(after.data, after.tensor_type).reshape(-1, 32) - values)
        assert (error <= np.abs(values).max(axis=1, keepdims=True) / 200).all()  # half a step, its scale an f16
    fields = {name: field.contents() for name, field in base.fields.items() if not name.startswith("GGUF.")}
    copied_fields = {name: field.contents() for name, field in copied.fields.items() if not name.startswith("GGUF.")}
    assert copied_fields == {**fields, "general.file_type": LlamaFileType.MOSTLY_Q8_0}


def test_llama_cpp_reads_the_copy_as_it_reads_the_base(four_bit_base):
    from deltaseek.programs.lm.llamacpp import import_llama_cpp

    llama_cpp = import_llama_cpp()

    def logits(path):
        llama = llama_cpp.Llama(model_path=str(path), n_ctx=64, n_threads=1, verbose=False, seed=0)
        llama.eval(llama.tokenize(b"The mill stands on the river", add_bos=False))
        return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama.ctx, -1), shape=(llama.n_vocab(),)).copy()

    base, copy = logits(four_bit_base), logits(q8_copy(four_bit_base))
    assert np.corrcoef(base, copy)[0, 1] > 0.999
    assert np.argmax(copy) == np.argmax(base)


def test_a_copy_is_built_once_and_a_changed_base_gets_its_own(four_bit_base, monkeypatch):
    first = q8_copy(four_bit_base)
    q8_copy.cache_clear()
    built = []
    monkeypatch.setattr(reading_copy, "write_reading_copy", lambda reader, target: built.append(target) or target)
    assert q8_copy(four_bit_base) == first and not built
    q8_copy.cache_clear()
    stat = four_bit_base.stat()
    os.utime(four_bit_base, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert q8_copy(four_bit_base) == built[0] and built[0] not in (first, four_bit_base)


def test_a_cache_that_cannot_be_written_builds_the_copy_for_this_process(four_bit_base, tmp_path, monkeypatch, capsys):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("DELTASEEK_CACHE", str(blocked))
    copy = q8_copy(four_bit_base)
    assert copy.is_file() and blocked not in copy.parents
    assert GGMLQuantizationType.Q8_0 in {t.tensor_type for t in GGUFReader(copy).tensors}
    assert capsys.readouterr().err.startswith("deltaseek: warning: the reader's 8-bit copy of the model could not be kept in ")


def test_where_no_copy_can_be_written_the_reader_reads_on_the_base(four_bit_base, tmp_path, monkeypatch, capsys):
    def disk_full(reader, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(reading_copy, "write_reading_copy", disk_full)
    monkeypatch.setenv("DELTASEEK_CACHE", str(tmp_path / "full"))
    assert q8_copy(four_bit_base) == four_bit_base
    warnings = capsys.readouterr().err.splitlines()
    assert len(warnings) == 2 and "(No space left on device)" in warnings[0]
    assert "the reader reads on tiny-q4_1.gguf itself" in warnings[1]


def test_a_base_without_4_bit_weights_is_read_as_it_is(tmp_path):
    base = write_tiny_llama_gguf(tmp_path / "tiny-f32.gguf")
    assert q8_copy(base) == base
