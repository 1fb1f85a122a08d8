"""A question that asks what a named thing is ("What is Ollama?", "What is the Tern compiler?")
asks for a description, not a span: its answer is the sentence that says what the thing is."""

from __future__ import annotations

import re

from deltaseek.programs.agent.learned_reader.questions import sentences
from deltaseek.programs.agent.learned_reader.read import Extracted, facts_by_relevance
from deltaseek.programs.text import stopwords

_ASKS_WHAT_IT_IS = re.compile(r"^\s*[Ww]hat\s+(?:is|are|was|were)\s+(?:(?:[Tt]he|[Aa]n?)\s+)?"
                              r"((?:[A-Z][\w.+#-]*\s*)+?)\s*([a-z][\w-]*)?\s*\??\s*$")
""""What is" + a name + at most one word of its kind: "What is the Tern compiler?"; not "What is
the capital of Veltria?" (no name follows "the") nor "What is Tern known for?" (more is asked)."""
MAX_DESCRIPTION_CHARS = 300


def described_thing(question: str) -> str | None:
    """The name a "what is X" question asks about, or None for any other question."""
    match = _ASKS_WHAT_IT_IS.match(question)
    if not match or (match.group(2) or "").lower() in stopwords():
        return None
    return match.group(1).strip()


def description(question: str, facts: list) -> Extracted | None:
    """The sentence (or line, in code) of the most relevant fact that names the thing asked about:
    one that says what it is first ("X is a ...", "X: ..."), then one saying what it was; None when
    no fact says it (a sentence that only names the thing leaves the question to the model)."""
    name = described_thing(question)
    if not name or not facts:
        return None
    said = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    head = rf"(?<!\w){re.escape(name)}(?:\s+[a-z][\w-]*)?\s*"
    ways = [re.compile(head + r"(?:is|are)\s+(?:an?|the|one)\b"), re.compile(head + r":(?:\s+\S+){3}"),
            re.compile(head + r"(?:was|were)\s+(?:an?|the|one)\b")]
    # the passages titled with the name first: the one about the thing says what it is
    ordered = sorted(facts_by_relevance(question, facts), key=lambda f: not said.search(f.title or ""))
    naming = [(fact, part.strip()) for fact in ordered
              for line in fact.text.splitlines() for part in sentences(line) if said.search(part)]
    for way in ways:
        if found := next(((f, s) for f, s in naming if way.search(s)), None):
            fact, sentence = found
            return Extracted(" ".join(sentence.split())[:MAX_DESCRIPTION_CHARS], sentence, fact.source, "other", 1.0)
    return None
