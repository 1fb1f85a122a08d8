"""A model on an OpenAI-compatible server (`--lm openai/NAME --api-base URL`: llama.cpp's
llama-server, llama-cpp-python's `llama_cpp.server`, Ollama, vLLM, LM Studio), behind DSPy 3.4's
engine contract.

The calls go through the Chat Completions client DSPy itself ships (lm15's `OpenAIChatLM`), so
a process that asks a served model never imports litellm: two of every such process's seconds.
DSPy's own route to that client writes OpenAI's `max_completion_tokens`, which local servers
ignore (llama-cpp-python's then generates to the end of its context); this engine's policy writes
`max_tokens`, which every OpenAI-compatible server reads. A JSON schema goes out in the form the
server enforces (`programs.lm.server.schema_dialect`, probed once and remembered): OpenAI's
`json_schema`, or `json_object` with a `schema` for llama-cpp-python's server, which the canonical
request has no slot for and so travels through lm15's documented `extensions` door.

DSPy keeps what an engine must not own: its cache, its retries (the client raises lm15's
canonical errors, which DSPy retries when they are transient), history and callbacks.
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from typing import Any

from dspy import lm15
from dspy.lm15 import OpenAIChatCompat

SERVER_POLICY = OpenAIChatCompat(
    instruction_role="system",
    max_tokens_field="max_tokens",
    thinking_format="none",
    tool_result_name="omit",
    strict_tools="omit",
    cache_control="none",
    tool_result_media="reject",
)
"""What a local OpenAI-compatible server reads: `max_tokens`, a `system` message, no reasoning dial,
no prompt-cache marks (the lm15 presets for Ollama and LM Studio say the same)."""

NO_KEY = "not-needed"
"""Local servers take no key, but the client sends one; `OPENAI_API_KEY` is used when set."""


class ServedModelEngine:
    """DSPy 3.4 engine for every model of one OpenAI-compatible server at `api_base`.

    `dspy.LM("openai/NAME", engine=ServedModelEngine(URL))` asks the server for NAME (the model
    string's part after the provider)."""

    supports_response_schema = True
    supports_function_calling = False
    supports_reasoning = False
    supported_params = frozenset({"temperature", "max_tokens", "response_format", "stop", "top_p"})
    writes_schema_form = True
    """It takes OpenAI's `json_schema` form from DSPy and writes the form the server enforces."""

    def __init__(self, api_base: str, api_key: str | None = None):
        self.api_base = api_base.rstrip("/")
        self.api_key = api_key
        self._client = None
        self._lock = threading.Lock()
        self._probed_again: set[str] = set()

    @property
    def key(self) -> str:
        return self.api_key or os.environ.get("OPENAI_API_KEY") or NO_KEY

    # Saved programs (DSPy's JSON state of an LM) record the engine by class path and this state.
    # The key is never saved: a loaded program reads it from the environment.
    def dump_state(self) -> dict[str, Any]:
        return {"api_base": self.api_base}

    @classmethod
    def load_state(cls, state: dict[str, Any]) -> "ServedModelEngine":
        return cls(**state)

    def __reduce__(self):
        """A pickle (MLflow's DSPy flavor) holds the state above, never the open connections."""
        return self.load_state, (self.dump_state(),)

    def client(self):
        with self._lock:
            if self._client is None:
                # lm15's transport waits 600 s for a reply's next byte: a small model on a busy
                # CPU writes nothing until it ends.
                self._client = lm15.OpenAIChatLM(api_key=self.key, base_url=self.api_base, compat=SERVER_POLICY)
            return self._client

    def complete(self, request: lm15.Request) -> lm15.Response:
        from deltaseek.programs.lm.server import probe_again

        provider, slash, name = request.model.partition("/")
        model = name if slash else provider
        try:
            response = self.client().complete(self.wire_request(request, model))
        except (lm15.InvalidRequestError, lm15.ServerError):
            # A schema form found earlier (remembered for a day) that the server now refuses:
            # probe again, once per model, and send the question in the form found now.
            if not carries_schema(request) or model in self._probed_again:
                raise
            self._probed_again.add(model)
            probe_again(self.api_base, model, self.key)
            response = self.client().complete(self.wire_request(request, model))
        return replace(response, model=request.model)

    def wire_request(self, request: lm15.Request, model: str) -> lm15.Request:
        """`request` for the server: its own model name, the schema in the form it enforces (none
        when it enforces no form)."""
        from deltaseek.programs.lm.server import schema_dialect

        config = request.config
        if carries_schema(request):
            dialect = schema_dialect(self.api_base, model, self.key).dialect
            if dialect is None:
                config = replace(config, response_format=None)
            elif dialect == "json_object_schema":
                form = {"type": "json_object", "schema": config.response_format["schema"]}
                config = replace(config, response_format=None, extensions={**(config.extensions or {}),
                                                                             "response_format": form})
        return replace(request, model=model, config=config)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                close = getattr(self._client.transport, "close", None)
                if close is not None:
                    close()
                self._client = None


def carries_schema(request: lm15.Request) -> bool:
    return (request.config.response_format or {}).get("type") == "json_schema"


def served_at(lm) -> tuple[str, str | None] | None:
    """The server (`api_base`) and key of an LM that asks a model on a server, or None: this
    engine's, or the `api_base` a `dspy.LM` was given directly."""
    engine = getattr(lm, "engine", None)
    if isinstance(engine, ServedModelEngine):
        return engine.api_base, engine.key
    kwargs = getattr(lm, "kwargs", None) or {}
    if kwargs.get("api_base"):
        return kwargs["api_base"], kwargs.get("api_key") or os.environ.get("OPENAI_API_KEY")
    return None
