"""Language models: the embedded SmolLM2 through llama.cpp (an engine a file), or any litellm model."""

from deltaseek.programs.lm.adapter import SMALL_MODEL_BOUNDS, GrammarJSONAdapter, ServerJSONAdapter
from deltaseek.programs.lm.factory import (
    EMBEDDED_MODEL,
    OUTPUT_FORMATS,
    adapter_for,
    check_api_base,
    configure_lm,
    embedded_engine,
    is_embedded,
    is_fatal_lm_error,
    make_lm,
)
from deltaseek.programs.lm.gguf_file import find_smollm2_gguf
from deltaseek.programs.lm.grammar import bound_schema
from deltaseek.programs.lm.llamacpp import LlamaCppEngine
from deltaseek.programs.lm.server import schema_dialect

__all__ = [
    "EMBEDDED_MODEL",
    "OUTPUT_FORMATS",
    "SMALL_MODEL_BOUNDS",
    "GrammarJSONAdapter",
    "LlamaCppEngine",
    "ServerJSONAdapter",
    "adapter_for",
    "bound_schema",
    "check_api_base",
    "configure_lm",
    "embedded_engine",
    "find_smollm2_gguf",
    "is_embedded",
    "is_fatal_lm_error",
    "make_lm",
    "schema_dialect",
]
