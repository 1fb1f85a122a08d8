"""Saved KV states of prompt prefixes, in memory and on disk, and the llama.cpp calls that save and
restore them.

Every call of one signature starts with the same system message (and demos), so the engine
evaluates a prompt in two fixed parts, the messages before the last one and then the rest, and
keeps the first part's KV state in a bounded LRU in memory and on disk (so a new process starts
warm). A state is keyed by its tokens and by what else it depends on (`state_fingerprint`).
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import sqlite3
from pathlib import Path

from cachetools import LRUCache

from deltaseek.programs.index import cache_dir

logger = logging.getLogger(__name__)

DEFAULT_PREFIX_CACHE_MB = 256
"""Memory for saved prompt prefixes: a SmolLM2-135M prefix of 450 tokens is about 10 MiB."""
PREFIX_DISK_MB = 512
"""Disk for saved prompt prefixes, so a new process (each `deltaseek ask`) starts warm."""


def prefix_cache_enabled() -> bool:
    """`DELTASEEK_PREFIX_CACHE=0` turns prefix reuse off (the speed benchmark compares both)."""
    return os.environ.get("DELTASEEK_PREFIX_CACHE", "1").strip().lower() not in {"0", "false", "no", "off"}


def prefix_cache_dir() -> Path:
    return cache_dir() / "prefixes"


def state_fingerprint(model_path: str, n_ctx: int, threads: int) -> str:
    """What a saved KV state depends on besides its tokens: the model file, the llama.cpp build
    and the context's settings. A state saved under another fingerprint is never restored."""
    import llama_cpp

    stat = Path(model_path).stat()
    return f"{Path(model_path).resolve()}:{stat.st_size}:{stat.st_mtime_ns}|{llama_cpp.__version__}|{n_ctx}|{threads}"


def prefix_key(fingerprint: str, tokens: list[int]) -> str:
    return hashlib.sha256(f"{fingerprint}|{tokens}".encode()).hexdigest()


class PrefixStore:
    """Saved prefix states: an LRU of `memory_mb` in memory, and a diskcache folder (LRU within
    PREFIX_DISK_MB; `folder=""` keeps none on disk). A damaged, full or read-only disk store is
    switched off with a warning: it costs speed, never the answer."""

    def __init__(self, memory_mb: int, folder: str | os.PathLike | None = None):
        self.memory_mb = memory_mb
        self.memory: LRUCache = LRUCache(maxsize=max(memory_mb, 0) * 2**20, getsizeof=len)
        self.folder = folder
        self._disk = None

    def get(self, key: str) -> tuple[bytes | None, bool]:
        """The saved state for `key`, and whether it came from disk."""
        saved = self.memory.get(key)
        if saved is not None or (disk := self.disk()) is None:
            return saved, False
        try:
            return disk.get(key), True
        except (OSError, sqlite3.Error) as exc:
            self.disable_disk(exc)
            return None, False

    def put(self, key: str, state: bytes, on_disk: bool) -> None:
        """Keep `state` in memory, and on disk unless it came from there."""
        if len(state) <= self.memory.maxsize:
            self.memory[key] = state
        if not on_disk and (disk := self.disk()) is not None:
            try:
                disk.set(key, state)
            except (OSError, sqlite3.Error) as exc:
                self.disable_disk(exc)

    def disk(self):
        """The on-disk store, or None when prefixes are not saved on disk or the folder cannot be used."""
        if self._disk is None and self.folder != "" and self.memory_mb > 0:
            import diskcache

            folder = Path(self.folder or prefix_cache_dir())
            try:
                self._disk = diskcache.Cache(str(folder), size_limit=PREFIX_DISK_MB * 2**20,
                                             eviction_policy="least-recently-used")
            except (OSError, sqlite3.Error) as exc:
                self.disable_disk(exc)
        return self._disk

    def clear(self) -> None:
        self.memory.clear()
        if (disk := self.disk()) is not None:
            disk.clear()

    def disable_disk(self, exc: Exception) -> None:
        logger.warning("saved prompt prefixes on disk switched off: %s: %s", type(exc).__name__, exc)
        self.folder, self._disk = "", None


def clear_memory(llama) -> None:
    import llama_cpp

    memory = llama_cpp.llama_get_memory(llama.ctx)
    if memory is not None:
        llama_cpp.llama_memory_clear(memory, True)


def save_sequence(llama) -> bytes:
    """The KV state of sequence 0 (the only one used), as bytes."""
    import llama_cpp

    size = llama_cpp.llama_state_seq_get_size(llama.ctx, 0)
    buffer = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_seq_get_data(llama.ctx, buffer, size, 0)
    return bytes(buffer[:written])


def restore_sequence(llama, tokens: list[int], state: bytes) -> bool:
    """Put back a saved prefix: its KV cells and the token bookkeeping `generate` matches against.
    False when llama.cpp could not place it (the caller then evaluates the prefix, as on a miss)."""
    import llama_cpp

    buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
    if llama_cpp.llama_state_seq_set_data(llama.ctx, buffer, len(state), 0) == 0:
        clear_memory(llama)
        return False
    llama.input_ids[: len(tokens)] = tokens
    llama.n_tokens = len(tokens)
    return True
