"""Language models: the embedded SmolLM2 through llama.cpp (an engine a file), or any litellm model."""

from deltaseek.programs.lm.adapter import GrammarJSONAdapter
from deltaseek.programs.lm.factory import (
    EMBEDDED_MODEL,
    adapter_for,
    check_api_base,
    configure_lm,
    embedded_engine,
    is_embedded,
    is_fatal_lm_error,
    make_lm,
)
from deltaseek.programs.lm.llamacpp import LlamaCppEngine, bound_schema, find_smollm2_gguf

__all__ = [
    "EMBEDDED_MODEL",
    "GrammarJSONAdapter",
    "LlamaCppEngine",
    "adapter_for",
    "bound_schema",
    "check_api_base",
    "configure_lm",
    "embedded_engine",
    "find_smollm2_gguf",
    "is_embedded",
    "is_fatal_lm_error",
    "make_lm",
]
