"""JSON schemas as llama.cpp grammars: a reply decoded under one is parseable and of the right types."""

from __future__ import annotations

from typing import Any


def bound_schema(schema: Any, max_items: int | None, max_chars: int | None, max_item_chars: int | None = None) -> Any:
    """A copy of a JSON schema whose arrays and free strings carry size limits (existing limits
    win); strings inside an array (bullets) get `max_item_chars` when it is given."""
    if isinstance(schema, list):
        return [bound_schema(s, max_items, max_chars, max_item_chars) for s in schema]
    if not isinstance(schema, dict):
        return schema
    item_chars = max_item_chars or max_chars
    bounded = {k: bound_schema(v, max_items, item_chars if k == "items" and schema.get("type") == "array" else max_chars,
                               max_item_chars)
               for k, v in schema.items()}
    if bounded.get("type") == "array" and max_items:
        bounded.setdefault("maxItems", max_items)
    if bounded.get("type") == "string" and "enum" not in bounded and max_chars:
        bounded.setdefault("maxLength", max_chars)
    return bounded


def grammar_response_format(response_format: dict | None, max_items: int | None, max_chars: int | None,
                            max_item_chars: int | None) -> dict | None:
    """DSPy's `response_format` as llama-cpp-python takes it (`json_object` with a `schema`, which
    it compiles to a grammar), the schema bounded; None when the request asks for free text."""
    if not response_format:
        return None
    if response_format.get("type") == "json_schema":
        return {"type": "json_object",
                "schema": bound_schema(response_format["schema"], max_items, max_chars, max_item_chars)}
    if response_format.get("type") == "json_object":
        return {"type": "json_object"}
    return None
