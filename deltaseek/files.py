"""Writing files so that a crash never leaves half of one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def replaced_atomically(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside `path` to write the file at; renamed over `path` once the block ends
    without an error, removed if it raises (a writer that takes a path, such as `Module.save`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=path.suffix)
    os.close(handle)
    try:
        yield Path(staging)
        os.replace(staging, path)
    finally:
        if os.path.exists(staging):
            os.unlink(staging)


def write_text_atomically(path: str | os.PathLike, text: str, mode: int | None = None) -> Path:
    """Write `text` to a temporary file beside `path`, then rename it over `path` (`mode`: the
    file's permissions, else mkstemp's private 0600)."""
    with replaced_atomically(path) as staging:
        staging.write_text(text, encoding="utf-8")
        if mode is not None:
            os.chmod(staging, mode)
    return Path(path)


def unwritable_reason(path: str | os.PathLike) -> str | None:
    """Why a file cannot be created at `path` (its folder read-only, on a read-only file system,
    or not a folder), or None: tried by creating, then removing, a file beside it, so a command
    finds out before it loads a model and runs examples rather than at its first result."""
    folder = Path(path).parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".deltaseek-probe-")
    except OSError as exc:
        return f"{folder} cannot be written ({exc.strerror or exc})"
    os.close(handle)
    os.unlink(probe)
    if Path(path).exists() and not os.access(path, os.W_OK):
        return f"{path} is read-only"
    return None
