"""The adapter for a model whose replies a grammar holds to the signature's JSON schema.

DSPy's JSONAdapter spells out the reply's structure twice: a template of every field in the
system message and a reminder of the fields' order and types in every user message. When the
engine turns the schema into a llama.cpp grammar, the model cannot leave that structure, so both
become one line (`signatures.guidance.COMPACT_STRUCTURE`): fewer prompt tokens on every call.
Parsing is JSONAdapter's own.
"""

from __future__ import annotations

import dspy

from deltaseek.signatures.guidance import COMPACT_STRUCTURE


class GrammarJSONAdapter(dspy.JSONAdapter):
    def format_field_structure(self, signature: type[dspy.Signature]) -> str:
        return COMPACT_STRUCTURE.format(fields=", ".join(f"`{name}`" for name in signature.output_fields))

    def user_message_output_requirements(self, signature: type[dspy.Signature]) -> str | None:
        return None  # the grammar is the requirement
