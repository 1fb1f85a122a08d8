"""The in-process engine: a GGUF file (the packaged SmolLM2, or a user's own) run by llama.cpp
behind DSPy 3.4's engine contract.

`complete(Request) -> Response` is given to `dspy.LM(engine=...)`, so the local model gets
DSPy's cache, usage accounting and history like any hosted model. Its parts live beside it: the
model file (`gguf_file`), its chat template (`chat_template`), the JSON schema as a grammar
(`grammar`) and the saved prompt prefixes (`prefix_cache`).

Prefix reuse: a hit restores exactly the bytes a miss computes, and the rest of the prompt is
evaluated the same way in both cases, so greedy decoding gives byte-identical output whether the
prefix came from the cache or was computed now.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

from dspy import lm15

from deltaseek.errors import LMConfigError
from deltaseek.programs.lm.chat_template import chat_formatter, prompt_prefix_tokens
from deltaseek.programs.lm.gguf_file import (
    check_gguf_file,
    check_model_file,
    describe_model_file,
    find_smollm2_gguf,
    model_file_identity,
)
from deltaseek.programs.lm.grammar import grammar_response_format
from deltaseek.programs.lm.plain_buffers import keep_weights_in_plain_buffers
from deltaseek.programs.lm.prefix_cache import (
    DEFAULT_PREFIX_CACHE_MB,
    PrefixStore,
    clear_memory,
    prefix_cache_enabled,
    prefix_key,
    restore_sequence,
    save_sequence,
    state_fingerprint,
)

DEFAULT_MAX_TOKENS = 256


def default_threads() -> tuple[int, int]:
    """(threads that generate, threads that evaluate prompts): `DELTASEEK_THREADS` for both, else
    half the cores this process may use and all of them. Measured on this project's 2-core machine
    (`deltaseek bench --speed`): prompts evaluate 1.7x faster on 2 threads than on 1, while
    generation, one token at a time, ran at 57 tokens/s on 1 thread and 36 on 2, where the
    threads spend more time waking each other than computing."""
    configured = os.environ.get("DELTASEEK_THREADS", "").strip()
    if configured:
        if not configured.isdigit() or int(configured) < 1:
            raise LMConfigError(f"DELTASEEK_THREADS={configured!r}: give a whole number of threads, 1 or more")
        return int(configured), int(configured)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // 2), cores


@dataclass
class EngineStats:
    """What the engine did since it was made (or since `reset_stats`): calls, prompt tokens (of
    which restored from a saved prefix rather than evaluated), generated tokens and seconds."""
    calls: int = 0
    prefix_hits: int = 0
    prefix_disk_hits: int = 0
    prefix_misses: int = 0
    prompt_tokens: int = 0
    restored_tokens: int = 0
    generated_tokens: int = 0
    seconds: float = 0.0
    prompt_eval_tokens: int = 0
    prompt_eval_ms: float = 0.0
    generate_ms: float = 0.0
    """llama.cpp's own timings: tokens evaluated in prompt batches and the time they took, and the
    time spent decoding generated tokens one at a time."""


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
                 max_items: int | None = 2, max_chars: int | None = 100, max_item_chars: int | None = 60,
                 prefix_cache_mb: int | None = None,
                 reuse_prefixes: bool | None = None, prefix_folder: str | os.PathLike | None = None,
                 model_file: dict[str, Any] | None = None):
        self.model_path = str(model_path) if model_path else None
        self.model_file = model_file
        """The identity (`model_file_identity`) the model file must have, checked before it loads:
        set when the engine is restored from a saved program, None for a new engine."""
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.prefix_cache_mb = DEFAULT_PREFIX_CACHE_MB if prefix_cache_mb is None else prefix_cache_mb
        self.reuse_prefixes = prefix_cache_enabled() if reuse_prefixes is None else reuse_prefixes
        self.prefixes = PrefixStore(self.prefix_cache_mb, prefix_folder)
        self.stats = EngineStats()
        self._formatter = None
        self._fingerprint = ""
        # A small model fills every list and string to the token limit; bounds in the
        # grammar keep its replies short enough to finish, and every generated token costs time.
        self.max_items = max_items
        self.max_chars = max_chars
        self.max_item_chars = max_item_chars
        self._llama = None
        self._lock = threading.Lock()
        self.load_seconds: float | None = None

    def configuration(self) -> dict[str, Any]:
        """What the engine's replies depend on: the model file (None: the packaged SmolLM2), the
        context, the threads (None: this machine's default) and the output bounds."""
        return {"model_path": self.model_path, "n_ctx": self.n_ctx, "n_threads": self.n_threads,
                "max_items": self.max_items, "max_chars": self.max_chars,
                "max_item_chars": self.max_item_chars, "prefix_cache_mb": self.prefix_cache_mb}

    # Saved programs (DSPy's JSON state of an LM) record the engine by class path and this state.
    def dump_state(self) -> dict[str, Any]:
        """The configuration and the model file's identity, so a loader can tell another file."""
        return {**self.configuration(), "model_file": self.model_file or model_file_identity(self.model_path)}

    @classmethod
    def load_state(cls, state: dict[str, Any]) -> "LlamaCppEngine":
        return cls(**state)

    def __reduce__(self):
        """A pickle (MLflow's DSPy flavor saves the LM of `dspy.settings` with cloudpickle) holds
        the state above, never the loaded model or its lock: unpickling gives this process's
        engine of the same configuration (`shared_engine`), which loads the model on first use."""
        return shared_engine, (self.dump_state(),)

    def expect_model_file(self, identity: dict[str, Any] | None) -> None:
        """Hold a restored program's model file identity, checked when the model loads (now, if
        it is loaded already). Two saved programs that name different files cannot share one."""
        if not identity or identity == self.model_file:
            return
        if self._llama is not None:
            check_model_file(self._llama.model_path, identity)
        elif self.model_file is not None:
            raise LMConfigError(f"two saved programs expect different model files in one engine: "
                                f"{describe_model_file(self.model_file)} and {describe_model_file(identity)}")
        self.model_file = identity

    def _model(self):
        if self._llama is None:
            Llama = import_llama_cpp().Llama

            started = time.perf_counter()
            path = self.model_path or str(find_smollm2_gguf())
            if self.model_file:  # a restored program's file: say which file it was made with
                check_model_file(path, self.model_file)
            check_gguf_file(path, "model file")
            generate, batch = (self.n_threads, self.n_threads) if self.n_threads else default_threads()
            self._llama = Llama(model_path=path, n_ctx=self.n_ctx, n_threads=generate, n_threads_batch=batch,
                                verbose=False, seed=0)
            self._formatter = chat_formatter(self._llama)
            self._fingerprint = state_fingerprint(path, self.n_ctx, batch)
            self.load_seconds = time.perf_counter() - started
        return self._llama

    def reset_stats(self) -> EngineStats:
        """The figures so far, and a fresh count from now on."""
        stats, self.stats = self.stats, EngineStats()
        if self._llama is not None:
            import llama_cpp

            with self._lock:
                perf = llama_cpp.llama_perf_context(self._llama.ctx)
                stats.prompt_eval_tokens, stats.prompt_eval_ms, stats.generate_ms = perf.n_p_eval, perf.t_p_eval_ms, perf.t_eval_ms
                llama_cpp.llama_perf_context_reset(self._llama.ctx)
        return stats

    @property
    def reuses_prefixes(self) -> bool:
        return self.reuse_prefixes and self.prefix_cache_mb > 0

    def _place_prefix(self, llama, messages: list[dict]) -> None:
        """Leave the model holding exactly the KV state of the prompt's fixed prefix (the messages
        before the last): restored from memory or disk, or evaluated now and saved. With reuse off
        the prefix is still evaluated on its own, so the setting changes speed, never answers.
        `create_chat_completion` then evaluates only the rest."""
        llama.reset()
        clear_memory(llama)
        prefix = prompt_prefix_tokens(llama, self._formatter, messages) if self._formatter else []
        if not prefix:
            return
        key = prefix_key(self._fingerprint, prefix)
        saved, from_disk = self.prefixes.get(key) if self.reuses_prefixes else (None, False)
        if saved is not None and restore_sequence(llama, prefix, saved):
            self.stats.prefix_hits += 1
            self.stats.prefix_disk_hits += from_disk
            self.stats.restored_tokens += len(prefix)
            if from_disk:
                self.prefixes.put(key, saved, on_disk=True)
            return
        llama.eval(prefix)
        self.stats.prefix_misses += 1
        if self.reuses_prefixes:
            self.prefixes.put(key, save_sequence(llama), on_disk=False)

    def forget_prefixes(self) -> None:
        """Drop every saved prefix, in memory and on disk: the next calls start cold."""
        self.prefixes.clear()

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
        grammar = grammar_response_format(config.response_format, self.max_items, self.max_chars, self.max_item_chars)
        if grammar:
            kwargs["response_format"] = grammar

        with self._lock:
            llama = self._model()
            # Reusing whatever the previous prompt left in the KV cache would change how this
            # prompt is batched, and so its logits: only the fixed prefix is reused (see above).
            started = time.perf_counter()
            try:
                self._place_prefix(llama, messages)
                out = llama.create_chat_completion(messages=messages, **kwargs)
            except ValueError as exc:
                # llama-cpp-python says "Requested tokens (N) exceed context window of M".
                if "context window" in str(exc):
                    raise lm15.ContextLengthError(str(exc)) from exc
                raise
            usage = out.get("usage") or {}
            self.stats.calls += 1
            self.stats.prompt_tokens += usage.get("prompt_tokens") or 0
            self.stats.generated_tokens += usage.get("completion_tokens") or 0
            self.stats.seconds += time.perf_counter() - started

        choice = out["choices"][0]
        return lm15.Response(
            id=out.get("id"),
            model=request.model,
            message=lm15.Message.assistant(choice["message"].get("content") or ""),
            finish_reason=_FINISH_REASONS.get(choice.get("finish_reason"), "stop"),
            usage=lm15.Usage(input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens")),
        )


_shared_engines: dict[str, LlamaCppEngine] = {}
_shared_engines_lock = threading.Lock()


def shared_engine(state: dict[str, Any] | None = None) -> LlamaCppEngine:
    """This process's engine for a configuration (`LlamaCppEngine.dump_state`; none: the default
    embedded model), made on first use: one loaded model per configuration per process, whether
    it is asked for by `make_lm` or restored from a saved program."""
    candidate = LlamaCppEngine(**(state or {}))
    key = json.dumps(candidate.configuration(), sort_keys=True)
    with _shared_engines_lock:
        engine = _shared_engines.setdefault(key, candidate)
    engine.expect_model_file(candidate.model_file)
    return engine


def import_llama_cpp():
    """The `llama_cpp` module, loaded with OpenMP threads that wait briefly (`wait_briefly`). Its
    models load their weights into plain CPU buffers (`plain_buffers.py`: repacked for AMX, they crashed)."""
    wait_briefly(os.environ)
    import llama_cpp

    keep_weights_in_plain_buffers(llama_cpp)
    return llama_cpp


def wait_briefly(environ) -> None:
    """Make OpenMP threads spin a moment at a barrier, then sleep; a user's own settings win. libgomp
    reads these when llama.cpp's library loads, so they are set before the first import.

    llama.cpp's threads meet at a barrier after each step of a graph. Spinning there for libgomp's
    default 300,000 turns steals the cores another busy process waits for (two processes reading at
    once on 2 cores: 4.7 s a reading against 1.0 s passive; a seed question took 230 s against 27 s
    beside a second model process). Passive (`OMP_WAIT_POLICY=PASSIVE`), every barrier sleeps and is
    woken: a reading alone took 20% to 39% longer than with 1,000 turns of spinning (`GOMP_SPINCOUNT`),
    which beside a second process costs within 4% of passive. LLVM's and Intel's OpenMP take no
    count, so they wait passively (`KMP_BLOCKTIME=0`)."""
    if "OMP_WAIT_POLICY" in environ:
        return
    environ.setdefault("GOMP_SPINCOUNT", "1000")
    environ.setdefault("KMP_BLOCKTIME", "0")
