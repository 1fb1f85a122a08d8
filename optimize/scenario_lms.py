"""Scripted language models for the benchmark's failure scenarios, usable by any DSPy program.

- `StubbornEngine`: answers every prompt with the same tool call (seed 000's loop: the same
  query again and again), in whatever format the program's adapter asked for.
- `GarbageEngine`: answers every prompt with text that never parses.
- `EchoEngine`: answers every field with junk that parses (the field's own name, a number, the
  first allowed value), as the 135M model does at its worst: every query and answer the program
  then uses is its own, so the run measures the code floor.
- `OracleEngine`: a capable model that knows each labeled question's answer: it searches with
  the question, then answers with the labeled answer, or says that the passages do not say and
  marks the question `unlikely` where the label is unanswerable. It measures the other side of
  the guards: how often a right answer and an honest abstention reach the user untouched.

All implement DSPy 3.4's engine contract (`complete(Request) -> Response`), so they run behind
`dspy.LM(engine=...)` with DSPy's usage accounting, like the embedded model.
"""

from __future__ import annotations

import json
import re
from typing import Any

import dspy
from dspy import lm15

STUCK_QUERY = "current adoption rates Ollama vs llama.cpp"
_CHAT_FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]")


def prompt_text(request: lm15.Request) -> str:
    system = request.system if isinstance(request.system, str) else "".join(p.text for p in request.system or ())
    return system + "\n" + "\n".join(m.text or "" for m in request.messages)


def _response(request: lm15.Request, content: str) -> lm15.Response:
    text = prompt_text(request)
    return lm15.Response(id=None, model=request.model, message=lm15.Message.assistant(content), finish_reason="stop",
                         usage=lm15.Usage(input_tokens=len(text) // 4, output_tokens=len(content) // 4))


class StubbornEngine:
    """The same tool call for every prompt: a query field gets the stuck query, a tool field the
    first tool, a move field "search"; nothing else changes from call to call."""

    supports_response_schema = True
    supports_function_calling = False
    supports_reasoning = False
    supported_params = frozenset({"temperature", "max_tokens", "response_format", "stop", "top_p"})

    def __init__(self, tool_name: str, query: str = STUCK_QUERY):
        self.tool_name = tool_name
        self.query = query

    def value_for(self, field: str, schema: dict | None = None) -> Any:
        kind = (schema or {}).get("type")
        if "enum" in (schema or {}):
            return self.tool_name if self.tool_name in schema["enum"] else schema["enum"][0]
        if field in ("query", "next_tool_args"):
            return self.query if field == "query" else {"query": self.query}
        if field in ("tool", "next_tool_name"):
            return self.tool_name
        if field == "tool_calls":
            return {"tool_calls": [{"name": self.tool_name, "args": {"query": self.query}}]}
        if field == "next_move":
            return "search"
        if kind == "array":
            return []
        return f"I will search for {self.query}."

    def complete(self, request: lm15.Request) -> lm15.Response:
        response_format = request.config.response_format or {}
        schema = response_format.get("schema") if response_format.get("type") == "json_schema" else None
        if schema and schema.get("properties"):
            fields = {name: self.value_for(name, spec) for name, spec in schema["properties"].items()}
            return _response(request, json.dumps(fields))
        text = prompt_text(request)
        # DSPy's chat format: the fields to answer are the markers of the reply template, in order.
        wanted = [f for f in dict.fromkeys(_CHAT_FIELD.findall(text.split("Respond with")[-1])) if f != "completed"]
        if not wanted:
            wanted = ["next_thought", "next_tool_name", "next_tool_args"]
        parts = [f"[[ ## {f} ## ]]\n{json.dumps(v) if isinstance(v := self.value_for(f), (dict, list)) else v}"
                 for f in wanted]
        return _response(request, "\n\n".join(parts + ["[[ ## completed ## ]]"]))


class GarbageEngine(StubbornEngine):
    """Replies that never parse: no fields, no JSON, no tool call."""

    def __init__(self):
        super().__init__(tool_name="")

    def complete(self, request: lm15.Request) -> lm15.Response:
        return _response(request, "%% ## ?? 3.0.0.0.0 Not supplied for this particular example. ]]")


class EchoEngine(StubbornEngine):
    """Replies that parse and say nothing: a text field echoes its own name ("query", "answer"), a
    list holds the name and a number, a number field 1, a closed choice its first value (so the
    step always asks to search, and a tool call names the first tool)."""

    def __init__(self, tool_name: str):
        super().__init__(tool_name=tool_name, query="query")

    def value_for(self, field: str, schema: dict | None = None) -> Any:
        schema = schema or {}
        if "enum" in schema:
            return schema["enum"][0]
        if field in ("next_tool_name", "tool"):  # the chat format carries no enum: the tool is named
            return self.tool_name
        if field in ("next_tool_args", "tool_calls"):
            return super().value_for(field, schema)
        kind = schema.get("type")
        if kind in ("integer", "number"):
            return 1
        if kind == "array":
            return [field, "1"]
        return field


ABSTENTION = "The passages do not say."
"""What the oracle answers where the label says the question cannot be answered."""

PHRASINGS: dict[str, tuple[str, str]] = {
    "bare": ("{answer}", ABSTENTION),
    "sentence": ("According to the passages, the answer is {answer}.",
                 "According to the passages, this is not stated."),
    "after_clause": ("Having read what the searches found, I can say that it is {answer}.",
                     "Having read what the searches found, I could not find the answer."),
    "named_first": ("{answer} is the answer, as the passages show.",
                    "The passages found do not say, so I cannot answer."),
    "remarked": ("The sources cover this directly. The answer is {answer}, based on what was found.",
                 "None of the sources address this."),
    "bracketed": ("{answer} (as stated in the retrieved passages)",
                  "The retrieved passages do not contain the answer."),
    "explained": ("{answer}. The first passage states this, and no other passage contradicts it.",
                  "Unfortunately, the search results don't mention this."),
    "hedged": ("It is most likely {answer}, although the passages mention it only in passing.",
               "Answer: Not enough information to answer."),
    "labelled": ("Answer: {answer}", "Answer: unknown (the passages do not give it)"),
    "own_line": ("{answer}\n\nThe second passage says so directly.",
                 "There is no information about this in the passages."),
    "semicolon": ("I found that the answer is {answer}; the passages agree on it.",
                  "The sources are silent on this; I cannot say."),
}
"""How the oracle writes its answer (and its abstention): bare, or inside a sentence, as capable
models write them. Hand-written frames; the answer itself is the label's. A "yes" or "no" label
is written into the same frames ("According to the passages, the answer is no.")."""


def phrase(answer: str, phrasing: str) -> str:
    """The labeled `answer` written in the oracle's `phrasing` (an empty answer: its abstention)."""
    with_answer, abstention = PHRASINGS[phrasing]
    return with_answer.format(answer=answer) if answer else abstention
_QUESTION_FIELD = re.compile(r"\[\[ ## question ## \]\]\s*\n(.*?)(?:\n\s*\n|\n\[\[ ## |$)", re.S)


class OracleEngine(StubbornEngine):
    """A capable model that knows the labels: step one searches with the question, the next
    step asks to synthesize, and the synthesis answers with the labeled answer (or `ABSTENTION`
    and `unlikely`). Its replies are in whatever format the adapter asked for (DSPy's chat
    format by default), as a capable model's are. `labels` maps a question to (answer, answerability);
    `phrasing` names how it writes the answer (`PHRASINGS`)."""

    def __init__(self, tool_name: str, labels: dict[str, tuple[str, str]], phrasing: str = "bare"):
        super().__init__(tool_name=tool_name)
        if phrasing not in PHRASINGS:
            raise ValueError(f"phrasing {phrasing!r}: expected one of {', '.join(PHRASINGS)}")
        self.labels = labels
        self.phrasing = phrasing
        self.question = ""
        self.searched = False

    def value_for(self, field: str, schema: dict | None = None) -> Any:
        answer, label = self.labels.get(self.question, ("", "direct"))
        unanswerable = label == "unlikely" or not answer
        values = {
            "query": self.question, "tool": self.tool_name, "next_tool_name": "finish" if self.searched else self.tool_name,
            "next_tool_args": {} if self.searched else {"query": self.question},
            "next_move": "synthesize" if self.searched else "search",
            "answer": phrase("" if unanswerable else answer, self.phrasing),
            "answerability": "unlikely" if unanswerable else label,
            "kind": "lookup", "reason": "The facts were read.", "next_thought": "Search, then answer.",
            "reasoning": "The facts were read.",
        }
        if field in values:
            return values[field]
        return [] if (schema or {}).get("type") == "array" or field in ("caveats", "assumptions", "sources",
                                                                         "new_evidence", "uncertain") else ""

    def complete(self, request: lm15.Request) -> lm15.Response:
        text = prompt_text(request)
        asked = _QUESTION_FIELD.findall(text)
        self.question = asked[-1].strip() if asked else ""
        # a search already run (or ReAct's first observation) is in the prompt: answer now
        self.searched = "Searches already run" in text or "[[ ## observation_0 ## ]]" in text
        return super().complete(request)


SCENARIOS = {"stubborn": StubbornEngine, "garbage": lambda _tool: GarbageEngine(), "echo": EchoEngine,
             "oracle": OracleEngine}
"""The scripted engines by scenario name, each built from the first tool's name (the oracle also
from the labeled examples)."""


def scenario_lm(name: str, tool_name: str, examples: list | None = None, phrasing: str = "bare") -> dspy.LM:
    """The LM of a scripted scenario: "stubborn", "garbage", "echo" or "oracle" (which needs the
    labeled `examples` whose answers it gives, written in `phrasing`)."""
    if name == "oracle":
        labels = {ex.question: (ex.get("answer") or "", ex.get("answerability") or "direct") for ex in examples or []}
        engine = OracleEngine(tool_name, labels, phrasing)
    else:
        engine = SCENARIOS[name](tool_name)
    return dspy.LM(f"scenario/{name}", engine=engine, cache=False, num_retries=0)
