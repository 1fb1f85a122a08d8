"""What a process learned about a served model's wire format (`--lm PROVIDER/MODEL --api-base URL`),
kept on disk for the next processes: the JSON-schema dialect its server enforces
(`server.schema_dialect`'s probe). It says how replies are asked for, never which moves the
program makes: nothing about the model's answers is remembered.

A user runs one process per question; without this memory each one pays the probe. An entry expires after a
day: the server behind an address can be restarted with another build, or with another model under
the same name, and forgetting costs one probe and one slow first question.

The entries are JSON in a diskcache folder, `models` under the cache dir; deleting the folder
forgets everything. A folder that cannot be opened or written switches the memory off with one
warning: it saves time, it must never stop a run.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import diskcache

from deltaseek.programs.index import cache_dir

logger = logging.getLogger(__name__)

MEMORY_TTL = 24 * 3600.0
DISK_ERRORS = (OSError, sqlite3.Error, diskcache.Timeout)
_switched_off: set[str] = set()
"""Folders that failed once in this process: not tried again, warned about once."""


def model_memory_dir() -> Path:
    return cache_dir() / "models"


def memory_key(kind: str, model: str, api_base: str) -> str:
    """The model string and the api_base as given (without a trailing slash)."""
    return "\x1f".join((kind, model, api_base.rstrip("/")))


def _read(key: str) -> dict | None:
    folder = str(model_memory_dir())
    if folder in _switched_off:
        return None
    try:
        with diskcache.Cache(folder) as cache:
            stored = cache.get(key, retry=True)
    except DISK_ERRORS as exc:
        _switch_off(folder, exc)
        return None
    try:
        return json.loads(stored) if isinstance(stored, str) else None
    except ValueError:
        return None


def _write(key: str, value: dict) -> None:
    folder = str(model_memory_dir())
    if folder in _switched_off:
        return
    try:
        with diskcache.Cache(folder) as cache:
            cache.set(key, json.dumps(value), expire=MEMORY_TTL, retry=True)
    except DISK_ERRORS as exc:
        _switch_off(folder, exc)


def _switch_off(folder: str, exc: Exception) -> None:
    logger.warning("model memory at %s switched off: %s: %s", folder, type(exc).__name__, exc)
    _switched_off.add(folder)


def recall_dialect(api_base: str, model: str) -> tuple[str | None, tuple[str, ...]] | None:
    """The dialect an earlier probe found for this server and model (None: none enforced) with its
    findings; None when nothing is remembered."""
    found = _read(memory_key("dialect", model, api_base))
    if found is None or not isinstance(found.get("findings"), list):
        return None
    return found.get("dialect"), tuple(str(finding) for finding in found["findings"])


def remember_dialect(api_base: str, model: str, dialect: str | None, findings: tuple[str, ...]) -> None:
    _write(memory_key("dialect", model, api_base), {"dialect": dialect, "findings": list(findings)})
