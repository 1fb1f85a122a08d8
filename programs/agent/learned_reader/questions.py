"""What a question asks for: its parts, the type of answer each part expects, its names.

Rules over the question's own wording (its question words, where they stand), each a general
pattern of English with a hand-written example. The learned reader reads the type as a feature
of every candidate; it does not decide alone.
"""

from __future__ import annotations

import re
from typing import Literal

from deltaseek.programs.text import (capitalized_run, meaningful_tokens, named_entities, stem, stopwords,
                                     without_opening_word)

AnswerType = Literal["person", "place", "date", "number", "address", "yes_no", "entity", "other"]
ANSWER_TYPES: tuple[AnswerType, ...] = ("person", "place", "date", "number", "address", "yes_no", "entity", "other")

_RANKS = ("first|last|only|second|third|next|main|largest|biggest|smallest|oldest|newest|highest|lowest|longest|"
          "tallest|earliest|latest|best|worst|most|least|leading|top")
"""Words that single out one of a kind: "What was the first ship to cross the strait?" asks for its name."""
_MEASURES = "weight|mass|height|length|width|depth|area|volume|speed|temperature|distance|duration|capacity|altitude|elevation"
"""Quantities that are measured: "What is the weight of the bell?" asks for a number, not a name."""

QUESTION_TYPES: list[tuple[re.Pattern, AnswerType]] = [
    (re.compile(r"\b(?:street )?address\b", re.I), "address"),
    (re.compile(r"\b(?:who|whom|whose)\b", re.I), "person"),
    (re.compile(r"\bwhere\b|\bin (?:what|which) (?:city|country|place|state|town)\b", re.I), "place"),
    (re.compile(r"\bwhen\b|\b(?:what|which) (?:years?|dates?|day|month)\b|\bin what year\b", re.I), "date"),
    (re.compile(r"\bhow (?:many|much|long|old|tall|far|big|high|deep|heavy|large|wide)\b|\b(?:what|which) (?:is|was|are|were) "
                r"the (?:\w+ )?(?:population|number|rate|percentage|share|count|size|price|cost|amount|"
                rf"{_MEASURES})\b", re.I),
     "number"),
    (re.compile(r"^\s*(?:is|are|was|were|does|do|did|can|could|has|have|will|should)\b", re.I), "yes_no"),
    # "Which company ...", "What is the name of ...", "What was the first ship to ...": a named thing
    (re.compile(r"^\s*(?:(?:in|into|of|from|for|by|at|on|under|during)\s+)?(?:what|which)\s+(?!(?:is|was|are|were|does|did|do|has|have|had|kind|type)\b)[a-z]+"
                r"|^\s*what (?:is|was|are|were) the (?:\w+ )?\w+ of\b"
                rf"|^\s*what (?:is|was|are|were) the (?:{_RANKS})\b", re.I), "entity"),
]

LEAD_CHARS = 24
"""A question word further in than this is a relative pronoun ("the town where the band formed"),
not the question's own."""
_PARTS = re.compile(r",?\s+and\s+(?=(?:who|whom|whose|where|when|what|which|how|in what)\b)", re.I)
_TRAILING_ASK = re.compile(r"(?i:\b(?:(?:to|of|for|by|at|in|on|from|with|per)\s+)?(?:what|which|who|whom|whose|when|where|"
                           r"how (?:many|much|long|old))\b(?:\s+[\w'’-]+){0,2})"
                           rf"(?:\s+(?:in|of|on|at|from)\s+(?:the\s+)?{capitalized_run(fewest=1)})?\s*\?*\s*$")
"""A question word at the end asks as one at the start does: "She gave the prize to which school?",
"Filming began when?", "The song was written by whom?"."""
_LEADING_PHRASE = re.compile(r"^[^,?]{3,60},\s+(?=(?:who|whom|whose|what|which|when|where|how|why)\b)", re.I)
"""A phrase that sets the scene before the question word ("In 1990, who ...", "According to the
survey, what ..."): the question starts after its comma."""
_CALLED_WHAT = re.compile(r"\b(?:called|named|titled|renamed|nicknamed|known as)\s+what\s*\?*\s*$", re.I)
"""A name asked for at the end: "The ship was renamed what?"."""
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)\s+(?=[A-Z\"“(])")  # not after an initial: "J. Edgar Moss"
NEGATION = re.compile(r"\b(?:not|never|no longer|n['’]t|neither|nor)\b", re.I)
PRESENT = re.compile(r"\b(?:is|are|current|currently|now|today)\b", re.I)
_COUNT_WORDS = re.compile(r"\b(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-?)?(?:one|two|three|four|five|"
                          r"six|seven|eight|nine|ten|eleven|twelve|first|second|third|fourth|fifth|sixth|seventh|"
                          r"eighth|ninth|tenth|eleventh|twelfth|hundred|thousand|million|billion)(?:th)?\b", re.I)
"""Numbers and ordinals in words: as much a name of one thing as a figure ("the thirty-fourth film")."""
_WHEN_WORD = re.compile(r"\s+(?:(?!hundred)\w{2,}ed|began|came|became|went|ran|won|met|saw|made|took|built|wrote|sold|held)\b")
"""A verb after an ordinal makes it say when, not which: "first introduced", "last seen"."""
_METRIC = re.compile(r"(?:\b([a-z]\w*) )?\b(rate|percentage|share|number|population|count|size|price|cost|amount)\b"
                     r"(?: of ([a-z]\w*))?|\bhow many ([a-z]\w*)")
"""The figure a number question asks for, with the lower-case word naming what is counted."""
_ASKED_NOUN = re.compile(r"^\s*(?:in\s+|of\s+)?(?:what|which)\s+(?:(?:is|was) the\s+)?(?:\w+ )?name of the (\w+)"
                         r"|^\s*(?:in\s+|of\s+)?(?:what|which)\s+(\w+)", re.I)


def part_type(part: str) -> AnswerType:
    """The type one clause asks for, from its leading question words ("address" anywhere), else
    from a question word that ends it."""
    if QUESTION_TYPES[0][0].search(part):
        return "address"
    part = _LEADING_PHRASE.sub("", part)
    for pattern, kind in QUESTION_TYPES[1:]:
        match = pattern.search(part)
        if match and match.start() <= LEAD_CHARS:
            return kind
    trailing = _TRAILING_ASK.search(part)
    if trailing:
        if _CALLED_WHAT.search(part):
            return "entity"
        asked = re.sub(r"^(?:(?:to|of|for|by|at|in|on|from|with|per)\s+)", "", trailing.group(0), flags=re.I)
        kind = next((k for pattern, k in QUESTION_TYPES[1:] if pattern.match(asked)), "other")
        return "other" if kind == "yes_no" else kind
    return "other"


def question_parts(question: str) -> list[str]:
    """The question split into its own questions ("Who founded the guild, and where was she born?")."""
    return _PARTS.split(question)


def expected_answer_types(question: str) -> list[AnswerType]:
    """One expected type per part of the question ("Who founded the guild, and where was she
    born?" -> person, place), in the order asked; "other" when the wording names none."""
    return [part_type(part) for part in question_parts(question)]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def question_names(question: str) -> set[str]:
    """The question's names and numbers, as word stems: capitalized words after its opening
    word, figures, and numbers or ordinals in words."""
    rest = without_opening_word(question)
    names = (meaningful_tokens(" ".join(named_entities(rest))) | set(re.findall(r"\d[\d,.]*\d|\d", rest))
             | {m.group(0).lower() for m in _COUNT_WORDS.finditer(rest) if not _WHEN_WORD.match(rest, m.end())})
    return {stem(w) for w in names}


def asked_noun(question: str) -> str | None:
    """The noun naming the kind of thing asked for: "river" in "Which river ...", "bridge" in
    "What is the name of the bridge ..."."""
    match = _ASKED_NOUN.search(question)
    noun = match and (match.group(1) or match.group(2)).lower()
    return noun if noun and noun not in stopwords() and noun not in ("kind", "type", "name") else None


def metric_terms(question: str) -> set[str]:
    """The words naming the figure a number question asks for ("share", "votes")."""
    terms = set()
    for match in _METRIC.finditer(question):
        terms |= {w.lower() for w in match.groups() if w}
    return terms - stopwords()


def metric_phrase(question: str) -> str | None:
    """The words of a number question that name the figure ("share of the vote")."""
    match = _METRIC.search(question)
    return match.group(0) if match else None
