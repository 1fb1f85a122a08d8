"""Tool calls written as text (seed 004's fallback): when structured output fails, the raw reply is
searched for `Action: tool("query")`, `**Action:** tool **Action Input:** ...` or a JSON blob."""

from __future__ import annotations

import difflib
import json
import re

_FUNCTION_STYLE = re.compile(r"""(?:action\W*:\W*)?([A-Za-z_][\w\- ]{1,40}?)\s*\(\s*(?:query\s*[:=]\s*)?["'](.+?)["']\s*\)""", re.I)
_ACTION = re.compile(r"\**\s*action\s*\**\s*:\s*\**\s*`?([^\n*`(]+?)`?\s*\**\s*$", re.I | re.M)
_ACTION_INPUT = re.compile(r"\**\s*action[ _]input\s*\**\s*:\s*\**\s*(.+)", re.I)
_JSON_BLOB = re.compile(r"\{.*\}", re.S)


def normalize_tool_name(name: str, tool_names: list[str]) -> str | None:
    """Map a written tool name onto an existing tool: strip markdown, case and spacing,
    then the closest name; a generic 'search' goes to the first tool."""
    cleaned = re.sub(r"[`*\"']", "", name).strip().lower().replace("-", "_").replace(" ", "_")
    if cleaned in tool_names:
        return cleaned
    close = difflib.get_close_matches(cleaned, tool_names, n=1, cutoff=0.6)
    if close:
        return close[0]
    if "search" in cleaned or cleaned in {"lookup", "query", "find"}:
        return tool_names[0]
    return None


def _query_from_input(raw: str) -> str:
    raw = raw.strip().strip("`").strip()
    try:
        value = json.loads(raw)
    except ValueError:
        return raw.strip("\"'")
    if isinstance(value, dict):
        return str(value.get("query") or next((v for v in value.values() if isinstance(v, str)), ""))
    return str(value)


def _from_json(text: str) -> tuple[str, str] | None:
    match = _JSON_BLOB.search(text)
    if not match:
        return None
    try:
        blob = json.loads(match.group(0))
    except ValueError:
        import json_repair  # ships with dspy; repairs the trailing commas and quotes weak models write

        blob = json_repair.loads(match.group(0))
    if not isinstance(blob, dict):
        return None
    name = blob.get("tool") or blob.get("name") or blob.get("action") or blob.get("tool_name")
    args = blob.get("args") or blob.get("arguments") or blob.get("action_input") or blob.get("input") or {}
    query = blob.get("query") or (args.get("query") if isinstance(args, dict) else args)
    if isinstance(args, dict) and not query:
        query = next((v for v in args.values() if isinstance(v, str)), None)
    if isinstance(name, str) and isinstance(query, str) and query.strip():
        return name, query.strip()
    return None


def parse_text_tool_call(text: str, tool_names: list[str]) -> tuple[str, str] | None:
    """(tool, query) from a reply that wrote its tool call as text, or None."""
    if not text:
        return None
    candidates = []
    action, action_input = _ACTION.search(text), _ACTION_INPUT.search(text)
    if action and action_input:
        candidates.append((action.group(1), _query_from_input(action_input.group(1))))
    candidates += [(m.group(1), m.group(2)) for m in _FUNCTION_STYLE.finditer(text)]
    found = _from_json(text)
    if found:
        candidates.append(found)
    for name, query in candidates:
        tool = normalize_tool_name(name, tool_names)
        if tool and query.strip():
            return tool, query.strip()
    return None
