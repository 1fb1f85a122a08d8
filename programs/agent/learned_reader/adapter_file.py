"""The reader adapter's file: a GGUF LoRA adapter of the embedded model, weights as data.

The file is what llama.cpp's own LoRA converter writes (`general.type` "adapter", `adapter.type`
"lora", `adapter.lora.alpha`, tensors `blk.N.attn_q.weight.lora_a` and `.lora_b`), plus what
deltaseek needs to trust it: the format version, the base model it was trained on, its rank, the
bound on its doubt ("not stated" against the span) at which the reader abstains, what it was trained on (the
sets and their digests, the command), its dev figures and its loss at every step. Loading reads
numbers and strings only: no pickle, no code. A file of another format version, base model or
rank is refused with one line naming it.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from deltaseek.errors import ProgramFileError
from deltaseek.files import replaced_atomically

FORMAT_VERSION = 1
DEFAULT_RANK = 16
DEFAULT_ALPHA = 32
KEY = "deltaseek.reader."
GGUF_NAMES = {"q_proj": "attn_q", "k_proj": "attn_k", "v_proj": "attn_v", "o_proj": "attn_output",
              "gate_proj": "ffn_gate", "up_proj": "ffn_up", "down_proj": "ffn_down"}
"""Hugging Face's projection names and llama.cpp's for the same weights."""
PEFT_KEY = re.compile(r"layers\.(\d+)\.(?:self_attn|mlp)\.(\w+_proj)\.lora_([AB])(?:\.default)?\.weight$")


@dataclass
class AdapterInfo:
    """What a reader adapter file says of itself besides its tensors."""

    rank: int
    bound: float
    """Abstain when the adapter's doubt (`adapter.AdapterReading.doubt`) reaches this (chosen on dev)."""
    trained_on: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)
    losses: list[float] = field(default_factory=list)
    base_model: str = ""
    format_version: int = FORMAT_VERSION


def base_identity(base: Path) -> str:
    """The base model as an adapter names it: its file's name and size (read without parsing it)."""
    return f"{base.name} ({base.stat().st_size} bytes)"


@dataclass(frozen=True)
class BaseShape:
    """What writing an adapter needs of its base: the architecture and the head counts that order
    its attention rows (from the trained model's configuration)."""

    arch: str
    heads: int
    kv_heads: int

    @classmethod
    def of(cls, config) -> "BaseShape":
        return cls(config.model_type, config.num_attention_heads, config.num_key_value_heads)


def rope_order(rows: np.ndarray, heads: int, inverse: bool = False) -> np.ndarray:
    """llama.cpp stores a llama model's query and key rows in another order than Hugging Face
    (its converter's `permute`): the lora_b of those projections is reordered the same way."""
    half = rows.shape[0] // heads // 2
    if inverse:
        return rows.reshape(heads, half, 2, *rows.shape[1:]).swapaxes(1, 2).reshape(rows.shape)
    return rows.reshape(heads, 2, half, *rows.shape[1:]).swapaxes(1, 2).reshape(rows.shape)


def write_adapter(tensors: dict[str, np.ndarray], info: AdapterInfo, path: str | Path, base: Path,
                  shape: BaseShape) -> Path:
    """Write peft's LoRA tensors (`name -> array`, Hugging Face order) as a GGUF LoRA adapter."""
    from gguf import GGUFWriter

    info.base_model = base_identity(base)
    with replaced_atomically(path) as staging:
        write_tensors(GGUFWriter(str(staging), shape.arch), tensors, info, shape)
        os.chmod(staging, 0o644)
    return Path(path)


def write_tensors(writer, tensors: dict[str, np.ndarray], info: AdapterInfo, shape: BaseShape) -> None:
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", float(DEFAULT_ALPHA * info.rank // DEFAULT_RANK))
    writer.add_uint32(KEY + "format_version", FORMAT_VERSION)
    writer.add_string(KEY + "base_model", info.base_model)
    writer.add_uint32(KEY + "rank", info.rank)
    writer.add_float32(KEY + "bound", float(info.bound))
    for name in ("trained_on", "metrics", "losses"):
        writer.add_string(KEY + name, json.dumps(getattr(info, name)))
    for key, array in sorted(tensors.items(), key=lambda kv: tensor_order(kv[0])):
        match = PEFT_KEY.search(key)
        if not match:
            continue
        layer, projection, part = match.groups()
        array = np.ascontiguousarray(array, dtype=np.float32)
        if part == "B" and projection in ("q_proj", "k_proj"):
            array = rope_order(array, shape.heads if projection == "q_proj" else shape.kv_heads)
        writer.add_tensor(f"blk.{layer}.{GGUF_NAMES[projection]}.weight.lora_{part.lower()}", array.astype(np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def tensor_order(key: str) -> tuple:
    match = PEFT_KEY.search(key)
    return (int(match.group(1)), match.group(2), match.group(3)) if match else (-1, key, "")


@functools.lru_cache(maxsize=8)
def read_adapter_info(path: str, base: str) -> AdapterInfo:
    """The adapter's own description, checked against the base model it will be applied to."""
    from gguf import GGUFReader

    try:
        reader = GGUFReader(path)
    except (OSError, ValueError) as error:
        raise ProgramFileError(f"{path}: not a readable GGUF LoRA adapter ({error})") from None
    fields = reader.fields
    value = lambda name: fields[name].contents() if name in fields else None  # noqa: E731
    if value("general.type") != "adapter" or value("adapter.type") != "lora":
        raise ProgramFileError(f"{path}: not a LoRA adapter (general.type {value('general.type')!r})")
    version = value(KEY + "format_version")
    if version != FORMAT_VERSION:
        raise ProgramFileError(f"{path}: reader adapter format version {version}, this deltaseek reads {FORMAT_VERSION}")
    expected = base_identity(Path(base))
    if value(KEY + "base_model") != expected:
        raise ProgramFileError(f"{path}: an adapter of {value(KEY + 'base_model')!r}, not of the model it would "
                               f"be applied to, {expected!r}")
    rank = int(value(KEY + "rank"))
    shapes = {t.name: tuple(int(n) for n in t.shape) for t in reader.tensors}
    wrong = [name for name, dims in shapes.items() if name.endswith("lora_a") and dims[-1] != rank]
    if not shapes or wrong:
        raise ProgramFileError(f"{path}: rank {rank} in its description but tensors of another rank ({wrong[:1]})")
    return AdapterInfo(rank=rank, bound=round(float(value(KEY + "bound")), 6), trained_on=json.loads(value(KEY + "trained_on")),
                       metrics=json.loads(value(KEY + "metrics")), losses=json.loads(value(KEY + "losses")),
                       base_model=expected, format_version=version)


def read_lora_tensors(path: str | Path, like: dict, base: Path, shape: BaseShape) -> dict:
    """The adapter's tensors (numpy) under peft's names (those of `like`, a model's state dict), in
    Hugging Face order: a fine-tune starts from a shipped adapter this way."""
    from gguf import GGUFReader

    read_adapter_info(str(path), str(base))
    stored = {t.name: np.array(t.data, dtype=np.float32) for t in GGUFReader(str(path)).tensors}
    found = {}
    for key in like:
        match = PEFT_KEY.search(key)
        if match:
            layer, projection, part = match.groups()
            array = stored[f"blk.{layer}.{GGUF_NAMES[projection]}.weight.lora_{part.lower()}"]
            if part == "B" and projection in ("q_proj", "k_proj"):
                array = rope_order(array, shape.heads if projection == "q_proj" else shape.kv_heads, inverse=True)
            found[key] = np.ascontiguousarray(array)
    return found


def choose_bound(rows: list[tuple[float, bool]], max_false_abstention: float) -> float:
    """The lowest bound on the adapter's doubt at which the questions that have an answer are
    abstained on at most `max_false_abstention` of the time; rows are (doubt, has an answer). The
    lowest such bound abstains most on the others."""
    answerable = sorted(p for p, has_answer in rows if has_answer)
    if not answerable:
        return 1.0
    for bound in sorted({round(p, 4) for p in answerable} | {1.0}):
        if sum(p >= bound for p in answerable) / len(answerable) <= max_false_abstention:
            return bound
    return 1.0
