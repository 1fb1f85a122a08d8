"""The adapters for a model whose replies a JSON schema holds to the signature.

DSPy's JSONAdapter spells out the reply's structure twice: a template of every field in the
system message and a reminder of the fields' order and types in every user message. When the
schema itself holds the model's decoding (the embedded engine's llama.cpp grammar, or a server's
structured output), the model cannot leave that structure, so both become one line
(`signatures.guidance.COMPACT_STRUCTURE`): fewer prompt tokens on every call. Parsing is
JSONAdapter's own.

`GrammarJSONAdapter` leaves the schema to the engine (the embedded one bounds it itself);
`ServerJSONAdapter` puts the schema into the request, in the form the server takes, bounded for a
small model as the embedded engine bounds it.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import dspy
import pydantic

from deltaseek.programs.lm.grammar import bound_schema
from deltaseek.programs.lm.profile import recorded_profile
from deltaseek.signatures.guidance import COMPACT_STRUCTURE

SchemaDialect = Literal["json_schema", "json_object_schema"]
"""How a server takes a JSON schema: OpenAI's `{"type": "json_schema", "json_schema": {"schema": ...}}`
(llama.cpp's llama-server, Ollama, vLLM, LM Studio, OpenAI), or `{"type": "json_object", "schema": ...}`
(llama-cpp-python's `llama_cpp.server`, which refuses the first)."""
DIALECTS: tuple[SchemaDialect, ...] = ("json_schema", "json_object_schema")


class SchemaBounds(NamedTuple):
    """Size limits written into a schema: items per list, characters per free string, characters
    per list item (see `bound_schema`)."""
    max_items: int
    max_chars: int
    max_item_chars: int


SMALL_MODEL_BOUNDS = SchemaBounds(max_items=2, max_chars=100, max_item_chars=60)
"""The limits the embedded engine writes into its grammar (`LlamaCppEngine`'s defaults): a small
model fills every list and string to the token limit, and every generated token costs time. A
small model behind a server gets the same schema, so the same grammar."""


class GrammarJSONAdapter(dspy.JSONAdapter):
    def format_field_structure(self, signature: type[dspy.Signature]) -> str:
        return COMPACT_STRUCTURE.format(fields=", ".join(f"`{name}`" for name in signature.output_fields))

    def user_message_output_requirements(self, signature: type[dspy.Signature]) -> str | None:
        return None  # the grammar is the requirement


class ServerJSONAdapter(GrammarJSONAdapter):
    """For a model behind a server that holds its output to a JSON schema (`response_format`).

    DSPy asks for a schema only where its capability data says the model takes one, and knows
    nothing of a model on a local server; this adapter always sends it, written in the server's
    `dialect` (found by `programs.lm.server.schema_dialect`), with `bounds` for a small model:
    given, or the small model's own when the LM was configured with the small profile
    (`configure_lm(profile="small")`).
    The prompt is the embedded model's, so the same model answers the same way on either path.
    """

    def __init__(self, dialect: SchemaDialect = "json_schema", bounds: SchemaBounds | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.dialect = dialect
        self.bounds = bounds

    def _prepare_response_format(self, lm, lm_kwargs, signature):  # JSONAdapter's hook, called before each call
        try:
            schema = signature_schema(signature)
        except (ValueError, pydantic.PydanticInvalidForJsonSchema, pydantic.PydanticSchemaGenerationError):
            lm_kwargs["response_format"] = {"type": "json_object"}  # DSPy's own fallback: JSON, no schema
            return
        bounds = self.bounds or (SMALL_MODEL_BOUNDS if runs_small(lm) else None)
        if bounds:
            schema = bound_schema(schema, *bounds)
        # An engine that writes the server's form itself (`ServedModelEngine`) takes OpenAI's from DSPy.
        writes_form = getattr(getattr(lm, "engine", None), "writes_schema_form", False)
        dialect = "json_schema" if writes_form else self.dialect
        lm_kwargs["response_format"] = wire_format(schema, dialect)


def runs_small(lm) -> bool:
    recorded = recorded_profile(lm)
    return recorded is not None and recorded.name == "small"


def signature_schema(signature: type[dspy.Signature]) -> dict:
    """The JSON schema of a signature's outputs exactly as DSPy builds it for structured output
    (the one the embedded engine receives): every field required, objects closed."""
    # DSPy's own builders (private; dspy is pinned below 3.5): the same schema on every path.
    from dspy.adapters.json_adapter import _get_structured_outputs_response_format
    from dspy.clients.legacy_requests import _strict_json_schema

    return _strict_json_schema(_get_structured_outputs_response_format(signature).model_json_schema())


def wire_format(schema: dict, dialect: SchemaDialect) -> dict:
    """`response_format` holding `schema`, as a server of this dialect takes it."""
    if dialect == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": "outputs", "strict": True, "schema": schema}}
