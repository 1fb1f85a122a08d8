"""`make_lm`: the LM for a litellm model string, a local GGUF file, or the embedded model when none is given."""

from __future__ import annotations

import os
from typing import Any, Literal

import dspy

from deltaseek.errors import LMConfigError
from deltaseek.programs.lm.adapter import SMALL_MODEL_BOUNDS, GrammarJSONAdapter, ServerJSONAdapter
from deltaseek.programs.lm.gguf_file import gguf_path, is_packaged_model, looks_like_gguf_path
from deltaseek.programs.lm.llamacpp import DEFAULT_MAX_TOKENS, LlamaCppEngine, shared_engine
from deltaseek.programs.lm.profile import record_profile
from deltaseek.programs.lm.served import ServedModelEngine, served_at
from deltaseek.programs.lm.server import schema_dialect

EMBEDDED_MODEL = "embedded/smollm2-135m-instruct"
EMBEDDED_MAX_TOKENS = 400

OutputFormat = Literal["auto", "json", "chat"]
"""How replies are asked for (`--format`): `json`, DSPy's JSON adapter with the signature's JSON
schema as `response_format`; `chat`, DSPy's chat format (`[[ ## field ## ]]` sections); `auto`,
json where the model or server takes a schema (the embedded model; litellm's capability data; for
an `--api-base` server, one probe call), chat elsewhere."""
OUTPUT_FORMATS: tuple[str, ...] = ("auto", "json", "chat")
OPENAI_COMPATIBLE = frozenset({"openai", "hosted_vllm", "lm_studio", "llamafile"})
"""litellm providers that reach an `--api-base` server through OpenAI's chat completions: the
structured-output probe speaks that protocol, and `ServedModelEngine` asks them without litellm."""


def embedded_engine() -> LlamaCppEngine:
    """One embedded model per process: loading it twice would double memory for nothing (a
    program restored from a pickle, as MLflow's DSPy flavor saves it, gets this same engine)."""
    return shared_engine()


def is_embedded(lm: dspy.BaseLM) -> bool:
    """Whether `lm` runs in-process on the llama.cpp engine: the packaged SmolLM2 or any GGUF file."""
    return isinstance(getattr(lm, "engine", None), LlamaCppEngine)


def gguf_lm(model: str, api_base: str | None, max_tokens: int, cache: bool, source: str = "--api-base") -> dspy.LM:
    """The LM for a local GGUF file (`--lm path/to/model.gguf`, see `looks_like_gguf_path`), run
    in-process on the embedded model's engine: its own chat template, grammar decoding, prefix
    reuse. The packaged SmolLM2 named by its path is the embedded model itself (one load)."""
    path = gguf_path(model)
    if api_base:
        raise LMConfigError(f"{source} needs a litellm model string: {path} runs in-process")
    if is_packaged_model(path):
        engine, name = embedded_engine(), EMBEDDED_MODEL
    else:
        engine, name = shared_engine({"model_path": str(path)}), f"embedded/{path.name}"
    return dspy.LM(name, engine=engine, temperature=0.0, cache=cache, max_tokens=max(max_tokens, EMBEDDED_MAX_TOKENS))


def make_lm(model: str | None = None, api_base: str | None = None, max_tokens: int = DEFAULT_MAX_TOKENS,
            check_reachable: bool = True, cache: bool = True) -> dspy.LM:
    """Build the LM from a litellm model string, a local GGUF file (see `gguf_lm`), or the
    embedded model when none is given.

    `DELTASEEK_LM` and `DELTASEEK_API_BASE` stand in for the arguments.
    """
    model = (model or os.environ.get("DELTASEEK_LM") or "").strip()
    # The messages name where the URL came from: a user who never typed --api-base has it in the environment.
    source = "--api-base" if (api_base or "").strip() else "$DELTASEEK_API_BASE"
    api_base = (api_base or os.environ.get("DELTASEEK_API_BASE") or "").strip() or None
    if not model or model in {"embedded", EMBEDDED_MODEL}:
        if api_base:
            raise LMConfigError(f"{source} needs --lm: the embedded model runs in-process")
        return dspy.LM(EMBEDDED_MODEL, engine=embedded_engine(), temperature=0.0, cache=cache,
                       max_tokens=max(max_tokens, EMBEDDED_MAX_TOKENS))
    if looks_like_gguf_path(model):
        return gguf_lm(model, api_base, max_tokens, cache, source)

    provider, slash, name = model.partition("/")
    if not slash or not name:
        raise LMConfigError(f"--lm {model!r} is not a litellm model string or a GGUF file: write PROVIDER/MODEL, "
                             "e.g. openai/gpt-4o-mini, or a path ending in .gguf")
    if api_base and provider in OPENAI_COMPATIBLE:
        if check_reachable:
            check_api_base(api_base, source=source)
        return dspy.LM(model, engine=ServedModelEngine(api_base), temperature=0.0, max_tokens=max_tokens, cache=cache)

    import litellm

    known = {str(p.value if hasattr(p, "value") else p) for p in litellm.provider_list}
    if provider not in known:
        raise LMConfigError(f"--lm {model!r}: unknown provider {provider!r} (e.g. openai, anthropic, ollama_chat)")

    kwargs: dict[str, Any] = {"temperature": 0.0, "max_tokens": max_tokens, "cache": cache}
    if api_base:
        if check_reachable:
            check_api_base(api_base, source=source)
        kwargs["api_base"] = api_base
    return dspy.LM(model, **kwargs)


def check_api_base(api_base: str, timeout: float = 5.0, source: str = "--api-base") -> None:
    """Fail at start-up, with the URL and where it came from (`source`: the option or the
    variable) in the message, rather than deep inside the first LM call."""
    import httpx

    try:
        httpx.get(api_base.rstrip("/") + "/models", timeout=timeout)
    except httpx.HTTPError as exc:
        raise LMConfigError(f"{source} {api_base} is unreachable: {type(exc).__name__}: {exc}") from exc


def adapter_for(lm: dspy.BaseLM, output_format: OutputFormat = "auto", profile: str | None = None) -> dspy.Adapter:
    """The adapter for `lm` in `output_format` (see `OutputFormat`).

    The embedded model's grammar holds it to the schema (`GrammarJSONAdapter`). A model behind an
    OpenAI-compatible `--api-base` server gets the schema in the form the server enforces
    (`ServerJSONAdapter`; bounded as the embedded model's when `profile` is "small"); any other
    litellm model DSPy's JSON adapter where litellm says it takes a schema. Elsewhere, and always
    with "chat", DSPy's chat format."""
    if output_format not in OUTPUT_FORMATS:
        raise LMConfigError(f"--format {output_format!r}: expected one of {', '.join(OUTPUT_FORMATS)}")
    if output_format == "chat":
        return dspy.ChatAdapter()
    if is_embedded(lm):
        return GrammarJSONAdapter()
    provider, _, name = lm.model.partition("/")
    server = served_at(lm)
    if server and provider in OPENAI_COMPATIBLE:
        api_base, api_key = server
        found = schema_dialect(api_base, name, api_key)
        if found.dialect:
            return ServerJSONAdapter(found.dialect, SMALL_MODEL_BOUNDS if profile == "small" else None)
        if output_format == "json":
            raise LMConfigError(f"--format json: the server at {api_base} does not hold replies to a JSON schema "
                                f"({'; '.join(found.findings)}); use --format chat")
        return dspy.ChatAdapter()
    if not isinstance(getattr(lm, "engine", None), str):  # a custom engine declares what it takes
        return dspy.JSONAdapter() if output_format == "json" or lm.supports_response_schema else dspy.ChatAdapter()
    if output_format == "json" or takes_response_schema(lm.model):
        return dspy.JSONAdapter()
    return dspy.ChatAdapter()


def takes_response_schema(model: str) -> bool:
    """litellm's capability data: whether the provider and model take a JSON schema as `response_format`."""
    import litellm

    return bool(litellm.supports_response_schema(model=model))


def configure_lm(model: str | None = None, api_base: str | None = None, output_format: OutputFormat = "auto",
                 profile: str | None = None, **kwargs: Any) -> dspy.LM:
    """Make the LM (see `make_lm`) and configure DSPy to use it with its adapter (see `adapter_for`).
    `profile` ("small" or "capable") is recorded on the LM, so every DeltaSeek program run with it
    takes that profile unless its own `AgentSettings.profile` says otherwise; None: the program
    chooses for each run from the model alone (small for the embedded model and GGUF files, else
    capable until one of that run's replies fails a check)."""
    lm = make_lm(model, api_base, **kwargs)
    if profile is not None:
        record_profile(lm, profile)
    dspy.configure(lm=lm, adapter=adapter_for(lm, output_format, profile))
    return lm


FATAL_LM_ERRORS = frozenset({
    # DSPy 3.4's own (dspy.utils.exceptions), which wrap the provider's
    "LMConfigurationError", "LMNotConfiguredError", "LMAuthError", "LMBillingError", "LMTransportError",
    # litellm's, found as the cause of DSPy's wrapper
    "AuthenticationError", "PermissionDeniedError", "NotFoundError", "APIConnectionError", "BudgetExceededError",
})
"""Errors (by class name, so the embedded path never imports litellm) that no retry and no other
prompt can fix: no LM or key, no credit, an unknown model, a server that cannot be reached."""


def is_fatal_lm_error(exc: BaseException) -> bool:
    """Whether an LM failure means the LM cannot be used at all (stop and say so), rather than
    one bad reply (count it as no progress and go on)."""
    if isinstance(exc, LMConfigError):
        return True
    if isinstance(exc, ValueError) and str(exc).startswith("No LM is loaded"):
        return True  # DSPy's own error when nothing is configured
    chain: list[BaseException] = []
    while exc is not None and exc not in chain and len(chain) < 5:  # DSPy wraps the provider's error
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return any({cls.__name__ for cls in type(e).__mro__} & FATAL_LM_ERRORS for e in chain)
