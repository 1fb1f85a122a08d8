"""What the command prints: text made safe for a terminal, and an answer with its trace."""

from __future__ import annotations

import unicodedata

KEPT_AS_IS = frozenset("\n\t\u200c\u200d")
"""Printed as they are: line breaks, tabs, and the zero-width joiners some scripts and emoji need."""


def escape_controls(text: str) -> str:
    """Text for the terminal with control and other unprintable characters escaped ("\\x1b",
    "\\u202e"): a question or a passage echoed back must not move the cursor, recolour the
    terminal or reorder what follows. Spaces of any kind stay spaces."""
    return "".join(c if c.isprintable() or c in KEPT_AS_IS or unicodedata.category(c) == "Zs"
                   else c.encode("unicode_escape").decode("ascii") for c in str(text))


def say(text: str) -> None:
    print(escape_controls(text))


def print_trace(record: dict) -> None:
    for step in record["trajectory"]["steps"]:
        thought = "; ".join(step["new_evidence"]) or "(nothing new)"
        say(f"[step {step['step']}] thought: {thought}")
        say(f"  move: {step['move'] or '-'}" + (f"  ({step['note']})" if step["note"] else ""))
        if step["observation"]:
            say("  observation: " + step["observation"].splitlines()[0])
    for call in record["tool_calls"]:
        if call.get("proposed"):
            say(f"  replaced: the model proposed {call['proposed']!r} ({call['replaced_because']}); "
                f"the program ran {call['tool']}(\"{call['args'].get('query', '')}\")")
        if not call["executed"]:
            say(f"  blocked: {call['tool']}(\"{call['args'].get('query', '')}\"): {call['blocked_reason']}")
    print()


def print_answer(record: dict) -> None:
    say(record["answer"])
    origin = {"lm": "the model's answer", "extracted": "read from the passages",
              "evidence": "the best evidence quoted"}.get(record.get("answer_origin"), "")
    confidence = record.get("confidence")
    sure = f"; confidence {confidence:.0%}" if confidence is not None else ""
    say(f"\nanswer: {origin}; answerability: {record['answerability']}{sure}  (stopped: {record['stop_reason']}; "
        f"{record['steps']} steps, {sum(c['executed'] for c in record['tool_calls'])} searches, "
        f"{record['lm_calls']} LM calls, {record['seconds']} s)")
    cited = [" ".join(filter(None, (s["title"], s["url"] or f"[{s['id']}]"))) for s in record["sources"]]
    for label, items in (("caveats", record["caveats"]), ("assumptions", record["assumptions"]), ("sources", cited)):
        if items:
            say(f"{label}:")
            for item in items:
                say(f"  - {item}")


def one_line(text: str, limit: int = 400) -> str:
    text = escape_controls(" ".join(str(text).split()))
    return text if len(text) <= limit else text[:limit - 3] + "..."
