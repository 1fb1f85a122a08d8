"""A scripted LM engine for DSPy 3.4: it reproduces real failure modes (the same query again
and again, text instead of fields, garbage, exceptions) without a model.

Each call is routed to a handler by which signature is asking (recognised from the output
fields the adapter lists), and the handler sees the whole prompt text, so a script can react
to what the agent has found, as a real model would.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Callable

import dspy
from dspy import lm15

from deltaseek.programs.tools import SearchTool, ToolResult

# The output-field marker that identifies each signature in DSPy's prompt.
SIGNATURE_MARKERS = {
    "step": "`next_move`",
    "diversify": "`strategy`",
    "judge": "`reason`",
    "classify": "`kind`",
    "synthesize": "`missing`",
}

Handler = Callable[[str], "dict | str"]


def prompt_text(request: lm15.Request) -> str:
    system = request.system if isinstance(request.system, str) else "".join(p.text for p in request.system or ())
    return system + "\n" + "\n".join(m.text or "" for m in request.messages)


def signature_of(text: str) -> str:
    for name, marker in SIGNATURE_MARKERS.items():
        if marker in text:
            return name
    return "unknown"


class ScriptedEngine:
    """handlers: signature name -> a function of the prompt text returning output fields (a dict,
    sent as JSON) or raw text (sent as is); or an Exception instance to raise."""

    def __init__(self, **handlers: Handler | Exception):
        self.handlers = handlers
        self.calls: dict[str, int] = defaultdict(int)
        self.prompts: list[tuple[str, str]] = []

    def complete(self, request: lm15.Request) -> lm15.Response:
        text = prompt_text(request)
        kind = signature_of(text)
        self.calls[kind] += 1
        self.prompts.append((kind, text))
        handler = self.handlers.get(kind, self.handlers.get("default"))
        if isinstance(handler, Exception):
            raise handler
        if handler is None:
            raise AssertionError(f"the script has no answer for a {kind} call")
        out = handler(text)
        content = json.dumps(out) if isinstance(out, dict) else str(out)
        return lm15.Response(id=None, model=request.model, message=lm15.Message.assistant(content),
                             finish_reason="stop", usage=lm15.Usage(input_tokens=len(text) // 4, output_tokens=len(content) // 4))


def scripted_lm(engine: ScriptedEngine) -> dspy.LM:
    return dspy.LM("scripted/test", engine=engine, cache=False, num_retries=0)


def step(query: str = "", tool: str = "search_corpus", move: str = "search", answerability: str = "direct",
         evidence: list[str] | None = None) -> dict:
    return {"new_evidence": evidence or [], "uncertain": [], "answerability": answerability,
            "next_move": move, "tool": tool, "query": query}


def synth(answer: str, sources: list[str] | None = None, caveats: list[str] | None = None,
          assumptions: list[str] | None = None, answerability: str = "direct") -> dict:
    return {"answer": answer, "caveats": caveats or [], "assumptions": assumptions or [],
            "sources": sources or [], "answerability": answerability}


def classify(kind: str) -> Handler:
    return lambda _text: {"kind": kind}


class ScriptedWeb(SearchTool):
    """A `web_search` tool whose result for the n-th call (1-based) comes from `respond(query, n)`;
    it counts its calls so a test can check what really ran."""

    name = "web_search"
    description = "Search the web."

    def __init__(self, respond: Callable[[str, int], ToolResult]):
        self.respond = respond
        self.calls = 0

    def search(self, query: str) -> ToolResult:
        self.calls += 1
        return self.respond(query, self.calls)


def followed_label(pred, label: str = "direct") -> str:
    """The label a run gives an answer its reading calls `label`: a `direct` one stays direct at or
    above the confidence model's bound and is a best guess (`unknown`) below it (a run with no
    confidence, a capable profile's, keeps it)."""
    from deltaseek.programs.agent.learned_reader import shipped_reader

    confidence = pred["confidence"] if isinstance(pred, dict) else pred.confidence
    if label != "direct" or confidence is None:
        return label
    return "direct" if confidence >= shipped_reader().confidence.direct_bound else "unknown"
