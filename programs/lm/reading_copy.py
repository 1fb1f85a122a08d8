"""The copies of a GGUF model the reader adapter reads on, for speed: a reading evaluates a prompt
of about 160 tokens and writes a few.

`q8_copy`: its 4- and 5-bit weights re-quantized to 8 bits (Q8_0). On this project's first 2-core
machine (x86 without AVX2) llama.cpp evaluated a 175-token prompt of the shipped SmolLM2 (Q4_1) in
0.85 s, and of its Q8_0 copy in 0.44 s, with the reader adapter applied; a token generated took 18
ms and 22 ms. The copy is the same weights to within Q8_0's rounding (each block of 32 scaled by its
largest value over 127): the adapter, trained on the dequantized Q4_1 weights, read its 160 dev
questions at F1 0.645 on the copy and 0.652 on the original, its doubt's bound 0.597 and 0.603
(docs/reader-adapter.md).

`adapted_copy`: the adapter folded into the base's matrices, so llama.cpp evaluates no LoRA as it
reads. On 160 SQuAD dev questions (2 cores with AVX-512) a reading took 0.50 s, median, against
0.61 s with llama.cpp applying the adapter to the 8-bit copy, and 148 of their spans were the same
(docs/experiments/2026-11-29-the-adapter-folded-into-the-reading-copy.md).

A copy is built from the files alone (gguf-py's own dequantize and quantize, deterministic), once,
into `q8_0` under the cache dir, named after each file's name, size and modification time: a
changed file gets a new copy. Where that folder cannot be written, the copy is built in a temporary
folder for this process, with a warning; where neither can, the reader reads on the base itself, or
applies the adapter as it reads: a copy saves time, it never stops a run.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from deltaseek.files import replaced_atomically
from deltaseek.programs.index import cache_dir

Q8_0_BLOCK = 32
"""Values a Q8_0 block holds: a row whose length is not a multiple keeps its own type."""
ADAPTED_COPIES_KEPT = 3
"""Copies with an adapter folded in kept for one base: the shipped adapter's and a few fine-tunes'."""


def reading_copy_dir() -> Path:
    return cache_dir() / "q8_0"


@functools.lru_cache(maxsize=4)
def q8_copy(base: str | Path) -> Path:
    """The Q8_0 copy of `base`, built on first use; `base` itself when none of its weights is
    quantized below 8 bits. A copy found is used without parsing the base (parsing its vocabulary
    alone takes a second or more)."""
    base = Path(base)
    target = reading_copy_dir() / f"{file_stamp(base)}.q8_0.gguf"
    if target.is_file():
        return target
    from gguf import GGUFReader

    reader = GGUFReader(base)
    if not requantized_tensors(reader):
        return base
    return kept_copy(target, lambda path: write_reading_copy(reader, path), "the reader's 8-bit copy of the model",
                     f"the reader reads on {base.name} itself, slower, its readings a little different") or base


@functools.lru_cache(maxsize=4)
def adapted_copy(base: str | Path, adapter: str | Path) -> Path | None:
    """The copy of `base` the reader adapter reads on: the LoRA `adapter` folded into the matrices it
    changes (W + alpha/rank B A, stored in 8 bits: `changed_type`), the others as `q8_copy` has
    them; built on first use, None where it cannot be written, and the reader applies the adapter
    to the base as it reads (llama.cpp's `lora_path`, slower). The copies of other adapters of the
    same base beyond the `ADAPTED_COPIES_KEPT` last used are removed: each fine-tune writes a new
    adapter."""
    base, adapter = Path(base), Path(adapter)
    target = reading_copy_dir() / f"{file_stamp(base)}+{file_stamp(adapter)}.adapted-q8_0.gguf"
    if target.is_file():
        with contextlib.suppress(OSError):  # a cache folder shared read-only: the copy is still read
            target.touch()  # last used: kept before the others
        return target
    from gguf import GGUFReader

    reader, deltas = GGUFReader(base), lora_deltas(adapter)
    found = kept_copy(target, lambda path: write_reading_copy(reader, path, deltas),
                      "the reader's copy of the model with its adapter folded in",
                      f"the reader applies its adapter to {base.name} as it reads, slower, "
                      "its readings a little different")
    for stale in sorted(reading_copy_dir().glob(f"{file_stamp(base)}+*.adapted*.gguf"),
                        key=lambda path: -path.stat().st_mtime)[ADAPTED_COPIES_KEPT:]:
        stale.unlink(missing_ok=True)
    return found


def file_stamp(path: Path) -> str:
    """A file's name, size and modification time: a changed file gets a new copy."""
    stat = path.stat()
    return f"{path.stem}.{stat.st_size}-{stat.st_mtime_ns}"


def kept_copy(target: Path, write, what: str, otherwise: str) -> Path | None:
    """`write(path)` at `target`, in the cache; where that folder cannot be written, in a temporary
    folder for this process, with a warning naming `what` is written; where neither can, None,
    warning what happens `otherwise`."""
    try:
        return write(target)
    except OSError as error:
        warn(f"{what} could not be kept in {target.parent} ({error.strerror or error})")
    try:  # a copy for this process alone: the same readings, built again next time
        folder = Path(tempfile.mkdtemp(prefix="deltaseek-q8_0-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        return write(folder / target.name)
    except OSError as error:
        warn(f"nor in a temporary folder ({error.strerror or error}): {otherwise}")
        return None


def lora_deltas(adapter: Path) -> dict[str, np.ndarray]:
    """What a GGUF LoRA adapter adds to each matrix it changes, by the matrix's name, in the
    base's (rows, columns): alpha/rank B A, as llama.cpp applies it at scale 1."""
    from gguf import GGUFReader

    reader = GGUFReader(adapter)
    alpha = float(reader.fields["adapter.lora.alpha"].contents())
    parts = {t.name: np.array(t.data, dtype=np.float32) for t in reader.tensors}
    deltas = {}
    for name, down in parts.items():
        if name.endswith(".lora_a"):
            matrix = name[:-len(".lora_a")]
            deltas[matrix] = (alpha / down.shape[0]) * (parts[f"{matrix}.lora_b"] @ down)
    return deltas


def warn(message: str) -> None:
    print(f"deltaseek: warning: {message}", file=sys.stderr)


def requantized_tensors(reader) -> list[str]:
    """The tensors (of a GGUFReader's file) the copy writes as Q8_0: those stored below 8 bits whose
    rows fill whole blocks."""
    from gguf import GGMLQuantizationType

    kept = {GGMLQuantizationType.F32, GGMLQuantizationType.F16, GGMLQuantizationType.BF16,
            GGMLQuantizationType.Q8_0}
    return [t.name for t in reader.tensors if t.tensor_type not in kept and int(t.shape[0]) % Q8_0_BLOCK == 0]


def changed_type(tensor):
    """How the copy stores a tensor it changes: as the base does where that is F32 or F16, in 8 bits
    (Q8_0) otherwise, and F32 where its rows do not fill Q8_0's blocks. With an adapter folded in,
    8 bits read 0.06 s faster than 16 (paired on 50 of SQuAD's scored questions, 0.51 against
    0.56 s a reading, 2 cores), the adapter's doubt as close to torch's as llama.cpp applying the
    adapter to the 8-bit copy (median distance 0.008 and 0.006 on SQuAD's dev questions; 16 bits:
    0.003)."""
    from gguf import GGMLQuantizationType

    if tensor.tensor_type in (GGMLQuantizationType.F32, GGMLQuantizationType.F16):
        return tensor.tensor_type
    if int(tensor.shape[0]) % Q8_0_BLOCK:
        return GGMLQuantizationType.F32
    return GGMLQuantizationType.Q8_0


def write_reading_copy(reader, target: Path, deltas: dict[str, np.ndarray] | None = None) -> Path:
    """Write the copy: every metadata field as the base has it but the file type, every tensor of
    `requantized_tensors` and of `deltas` dequantized, its delta added, and stored again
    (`changed_type`), the others as they are."""
    from gguf import GGUFValueType, GGUFWriter, LlamaFileType
    from gguf.quants import dequantize, quantize

    deltas, requantized = deltas or {}, set(requantized_tensors(reader))
    changed = requantized | set(deltas)
    with replaced_atomically(target) as staging:
        writer = GGUFWriter(staging, arch=reader.fields["general.architecture"].contents(), endianess=reader.endianess)
        for name, field in reader.fields.items():
            if name.startswith("GGUF.") or name == "general.architecture":
                continue  # the writer writes the header and the architecture itself
            value = LlamaFileType.MOSTLY_Q8_0 if name == "general.file_type" and requantized else field.contents()
            sub_type = field.types[-1] if field.types[0] == GGUFValueType.ARRAY else None
            writer.add_key_value(name, value, field.types[0], sub_type=sub_type)
        for tensor in reader.tensors:
            shape = tuple(reversed([int(n) for n in tensor.shape]))
            if tensor.name in changed:
                values = dequantize(tensor.data, tensor.tensor_type).reshape(shape) + deltas.get(tensor.name, 0.0)
                kind = changed_type(tensor)
                blocks = quantize(values.astype(np.float32), kind)
                writer.add_tensor(tensor.name, blocks, raw_shape=blocks.shape, raw_dtype=kind)
            else:
                writer.add_tensor(tensor.name, tensor.data, raw_shape=tensor.data.shape, raw_dtype=tensor.tensor_type)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
    return target
