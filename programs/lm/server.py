"""What an OpenAI-compatible server (`--api-base`) does with a JSON schema: one probe call per
server and model, its finding remembered for a day (`model_memory`).

Servers differ: llama.cpp's llama-server, Ollama, vLLM and LM Studio take OpenAI's
`{"type": "json_schema", ...}`; llama-cpp-python's `llama_cpp.server` refuses it (HTTP 500) and
takes `{"type": "json_object", "schema": ...}`; some accept a schema and ignore it. The probe asks
for a reply that only a schema-held decoder gives (a string from a one-word enum the prompt never
names), in each dialect in turn, and keeps the first the server enforces.
"""

from __future__ import annotations

import functools
import json
import os
from typing import NamedTuple

from deltaseek.errors import LMConfigError
from deltaseek.programs.lm.adapter import DIALECTS, SchemaDialect, wire_format
from deltaseek.programs.lm.model_memory import recall_dialect, remember_dialect

PROBE_WORD = "deltaseek-schema-probe"
PROBE_SCHEMA = {"type": "object", "properties": {"probe": {"type": "string", "enum": [PROBE_WORD]}},
                "required": ["probe"], "additionalProperties": False}
DEFAULT_PROBE_TIMEOUT = 60.0
"""Seconds the probe waits for each reply: Ollama loads the model on its first call."""


class ProbeResult(NamedTuple):
    dialect: SchemaDialect | None
    """The first dialect whose schema the server enforced, or None."""
    findings: tuple[str, ...]
    """What each dialect tried got, in a few words (for the record and for an error)."""


def probe_timeout() -> float:
    value = os.environ.get("DELTASEEK_PROBE_TIMEOUT", "").strip()
    try:
        return float(value) if value else DEFAULT_PROBE_TIMEOUT
    except ValueError:
        raise LMConfigError(f"DELTASEEK_PROBE_TIMEOUT={value!r}: give seconds, e.g. 60") from None


@functools.lru_cache(maxsize=32)
def schema_dialect(api_base: str, model: str, api_key: str | None = None) -> ProbeResult:
    """Which JSON-schema dialect the server at `api_base` enforces for `model` (the name the server
    knows, without litellm's provider prefix). Cached for the process and remembered on disk for a
    day: an earlier process's finding costs no call."""
    if (remembered := recall_dialect(api_base, model)) is not None:
        dialect, findings = remembered
        if dialect is None or dialect in DIALECTS:
            return ProbeResult(dialect, findings)
    found = probe_schema_dialect(api_base, model, api_key)
    remember_dialect(api_base, model, found.dialect, found.findings)
    return found


def probe_again(api_base: str, model: str, api_key: str | None = None) -> ProbeResult:
    """A fresh probe, remembered in place of the finding before (which the server now refuses: it
    was restarted with another build, or another model took the name)."""
    found = probe_schema_dialect(api_base, model, api_key)
    remember_dialect(api_base, model, found.dialect, found.findings)
    schema_dialect.cache_clear()
    return found


def probe_schema_dialect(api_base: str, model: str, api_key: str | None = None) -> ProbeResult:
    """Ask the server, in each dialect in turn, for a reply only a schema-held decoder gives."""
    import httpx

    url = api_base.rstrip("/") + "/chat/completions"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    findings = []
    for dialect in DIALECTS:
        body = {"model": model, "temperature": 0.0, "max_tokens": 24,
                "messages": [{"role": "user", "content": "Reply with a JSON object."}],
                "response_format": wire_format(PROBE_SCHEMA, dialect)}
        try:
            response = httpx.post(url, json=body, headers=headers, timeout=probe_timeout())
        except httpx.HTTPError as exc:
            raise LMConfigError(f"--api-base {api_base}: the structured-output probe failed: "
                                f"{type(exc).__name__}: {exc}") from exc
        if response.status_code >= 400:
            findings.append(f"{dialect}: refused (HTTP {response.status_code})")
            continue
        try:
            reply = json.loads(response.json()["choices"][0]["message"]["content"] or "")
        except (ValueError, KeyError, IndexError, TypeError):
            reply = None
        if reply == {"probe": PROBE_WORD}:
            findings.append(f"{dialect}: enforced")
            return ProbeResult(dialect, tuple(findings))
        findings.append(f"{dialect}: accepted, not enforced")
    return ProbeResult(None, tuple(findings))
