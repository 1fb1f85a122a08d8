"""Writing files so that a crash never leaves half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomically(path: str | os.PathLike, text: str, mode: int | None = None) -> Path:
    """Write `text` to a temporary file beside `path`, then rename it over `path` (`mode`: the
    file's permissions, else mkstemp's private 0600)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, path)
    return path
