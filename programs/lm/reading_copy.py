"""A copy of a GGUF model with its 4- and 5-bit weights re-quantized to 8 bits (Q8_0), for
reading prompts: the reader adapter evaluates a prompt of about 160 tokens and writes a few.

On this project's 2-core machine (x86 without AVX2) llama.cpp evaluated a 175-token prompt of the
shipped SmolLM2 (Q4_1) in 0.85 s, and of its Q8_0 copy in 0.44 s, with the reader adapter applied;
a token generated took 18 ms and 22 ms. A reading is mostly prompt, so the copy halves it. The
copy is the same weights to within Q8_0's rounding (each block of 32 scaled by its largest value
over 127): the adapter, trained on the dequantized Q4_1 weights, read its 160 dev questions at F1
0.645 on the copy and 0.652 on the original, its doubt's bound 0.597 and 0.603
(docs/reader-adapter.md).

The copy is built from the base file alone (gguf-py's own dequantize and quantize, deterministic),
once, into `q8_0` under the cache dir, named after the base's name, size and modification time:
a changed base gets a new copy. Where that folder cannot be written, the copy is built in a
temporary folder for this process, with a warning; where neither can, the reader reads on the base
itself: the copy saves time, it never stops a run.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import sys
import tempfile
from pathlib import Path

from deltaseek.files import replaced_atomically
from deltaseek.programs.index import cache_dir

Q8_0_BLOCK = 32
"""Values a Q8_0 block holds: a row whose length is not a multiple keeps its own type."""


def reading_copy_dir() -> Path:
    return cache_dir() / "q8_0"


@functools.lru_cache(maxsize=4)
def q8_copy(base: str | Path) -> Path:
    """The Q8_0 copy of `base`, built on first use; `base` itself when none of its weights is
    quantized below 8 bits. A copy found is used without parsing the base (parsing its vocabulary
    alone takes a second or more)."""
    base = Path(base)
    stat = base.stat()
    target = reading_copy_dir() / f"{base.stem}.{stat.st_size}-{stat.st_mtime_ns}.q8_0.gguf"
    if target.is_file():
        return target
    from gguf import GGUFReader

    reader = GGUFReader(base)
    if not requantized_tensors(reader):
        return base
    try:
        return write_q8_copy(reader, target)
    except OSError as error:
        warn(f"the reader's 8-bit copy of the model could not be kept in {target.parent} ({error.strerror or error})")
    try:  # a copy for this process alone: the same readings, built again next time
        folder = Path(tempfile.mkdtemp(prefix="deltaseek-q8_0-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        return write_q8_copy(reader, folder / target.name)
    except OSError as error:
        warn(f"nor in a temporary folder ({error.strerror or error}): the reader reads on {base.name} itself, "
             "slower, its readings a little different")
        return base


def warn(message: str) -> None:
    print(f"deltaseek: warning: {message}", file=sys.stderr)


def requantized_tensors(reader) -> list[str]:
    """The tensors (of a GGUFReader's file) the copy writes as Q8_0: those stored below 8 bits whose
    rows fill whole blocks."""
    from gguf import GGMLQuantizationType

    kept = {GGMLQuantizationType.F32, GGMLQuantizationType.F16, GGMLQuantizationType.BF16,
            GGMLQuantizationType.Q8_0}
    return [t.name for t in reader.tensors if t.tensor_type not in kept and int(t.shape[0]) % Q8_0_BLOCK == 0]


def write_q8_copy(reader, target: Path) -> Path:
    """Write the copy: every metadata field as the base has it (the file type says Q8_0), every
    tensor of `requantized_tensors` dequantized and quantized again, the others as they are."""
    from gguf import GGMLQuantizationType, GGUFValueType, GGUFWriter, LlamaFileType
    from gguf.quants import dequantize, quantize

    changed = set(requantized_tensors(reader))
    with replaced_atomically(target) as staging:
        writer = GGUFWriter(staging, arch=reader.fields["general.architecture"].contents(), endianess=reader.endianess)
        for name, field in reader.fields.items():
            if name.startswith("GGUF.") or name == "general.architecture":
                continue  # the writer writes the header and the architecture itself
            value = LlamaFileType.MOSTLY_Q8_0 if name == "general.file_type" else field.contents()
            sub_type = field.types[-1] if field.types[0] == GGUFValueType.ARRAY else None
            writer.add_key_value(name, value, field.types[0], sub_type=sub_type)
        for tensor in reader.tensors:
            shape = tuple(reversed([int(n) for n in tensor.shape]))
            if tensor.name in changed:
                values = dequantize(tensor.data, tensor.tensor_type).reshape(shape)
                blocks = quantize(values, GGMLQuantizationType.Q8_0)
                writer.add_tensor(tensor.name, blocks, raw_shape=blocks.shape, raw_dtype=GGMLQuantizationType.Q8_0)
            else:
                writer.add_tensor(tensor.name, tensor.data, raw_shape=tensor.data.shape, raw_dtype=tensor.tensor_type)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
    return target
