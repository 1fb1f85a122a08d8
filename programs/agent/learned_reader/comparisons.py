"""Comparisons: two named things and an attribute, each side read from its own passages.

"Which opened first, the Vey Bridge or Tern Tower?" compares the first year each one's passage
gives; "Are Ida Brann and Olaf Sund both painters?" asks whether each one's passages say it.
None whenever a side cannot be read: the reader does not guess.
"""

from __future__ import annotations

import re

from deltaseek.programs.agent.learned_reader.candidates import YEAR, candidate_spans, in_a_name, title_name
from deltaseek.programs.agent.learned_reader.questions import sentences
from deltaseek.programs.agent.learned_reader.read import Extracted
from deltaseek.programs.text import meaningful_tokens, stems, without_opening_word

_OPTION = r"(?:the |a |an )?[A-Z0-9][\w'’.&-]*(?:\s+(?:of |the |and |de |van |von )*[A-Z0-9][\w'’.&-]*)*"
_OPTIONS = re.compile(rf"(?P<a>{_OPTION}),?\s+or\s+(?P<b>{_OPTION})")
_PAIR = re.compile(rf"(?P<a>{_OPTION})\s+and\s+(?P<b>{_OPTION})")
_EARLIER = re.compile(r"\b(?:older|oldest|earlier|earliest|first|sooner)\b", re.I)
_LATER = re.compile(r"\b(?:younger|youngest|later|latest|last|newer|newest|more recent|most recent)\b", re.I)
_MORE = re.compile(r"\b(?:larger|largest|bigger|biggest|more|most|higher|highest|taller|tallest|longer|longest|"
                   r"greater|heavier|wider|deeper)\b", re.I)
_LESS = re.compile(r"\b(?:smaller|smallest|fewer|fewest|less|least|lower|lowest|shorter|shortest|lighter|narrower)\b",
                   re.I)
_DEMONYM = re.compile(r"\b[A-Z][a-z]+(?:ian|an|ese|ish|i|ic|ch)\b")
"""A nationality or origin adjective: "Veltrian", "Japanese", "Danish", "Icelandic", "French"."""


def strip_article(name: str) -> str:
    return re.sub(r"^(?:the|a|an) ", "", name, flags=re.I).strip()


def question_options(question: str) -> list[str]:
    """The two things a choice question names for its answer: "Who was born first, Ida Brann or
    Olaf Sund?" -> ["Ida Brann", "Olaf Sund"] (the last "A or B" of the question)."""
    found = list(_OPTIONS.finditer(without_opening_word(question)))
    return [strip_article(found[-1].group(g)) for g in ("a", "b")] if found else []


def facts_about(name: str, facts: list) -> list:
    """The facts about one named thing: titled with it first, then those that name it."""
    words = meaningful_tokens(name)
    if not words:
        return []
    titled = [f for f in facts if words <= meaningful_tokens(title_name(f))]
    naming = [f for f in facts if f not in titled and words <= meaningful_tokens(f"{f.title} {f.text}")]
    return titled + naming


def _first_value(name: str, facts: list, kind: str) -> tuple[float, str, object] | None:
    """The first year (kind "date") or figure (kind "number") the facts about `name` state."""
    for fact in facts_about(name, facts):
        for sentence in sentences(fact.text):
            if kind == "date" and (year := YEAR.search(sentence)):
                return float(year.group(0)), sentence, fact
            if kind == "number":
                for span, offset in candidate_spans(sentence, "number"):
                    digits = re.sub(r"[^\d.]", "", span.split()[0])
                    if digits and not in_a_name(sentence[:offset]):
                        return float(digits.rstrip(".") or 0), sentence, fact
    return None


def compare_options(question: str, facts: list) -> Extracted | None:
    """The option a comparison question asks for: older, first, earlier pick the smaller first
    year; younger, later, newer the larger; more, larger, fewer compare the first figure."""
    options = question_options(question)
    if len(options) != 2:
        return None
    asked = question[:question.rfind(options[0])]
    if _EARLIER.search(asked) or _LATER.search(asked):
        kind, smallest = "date", bool(_EARLIER.search(asked))
    elif _MORE.search(asked) or _LESS.search(asked):
        kind, smallest = "number", bool(_LESS.search(asked))
    else:
        return None
    values = [_first_value(option, facts, kind) for option in options]
    if None in values or values[0][0] == values[1][0]:
        return None
    pick = min if smallest else max
    value, sentence, fact = pick(values, key=lambda v: v[0])
    chosen = options[values.index((value, sentence, fact))]
    return Extracted(chosen, sentence, fact.source, "entity", 1.0, 1.0)


def _demonym(name: str, facts: list) -> str | None:
    for fact in facts_about(name, facts)[:1]:
        for sentence in sentences(fact.text)[:2]:
            if match := _DEMONYM.search(sentence):
                return match.group(0)
    return None


def compare_pair(question: str, facts: list) -> Extracted | None:
    """Yes or no for "Were A and B of the same nationality?" (the nationality each one's passage
    opens with) and "Are A and B both painters?" or "Are both A and B painters?" (whether each
    one's passages say it)."""
    if not re.match(r"\s*(?:are|were|is|was|do|did)\b", question, re.I):
        return None
    rest = without_opening_word(question)
    pair = _PAIR.search(rest)
    if not pair:
        return None
    names = [strip_article(pair.group(g)) for g in ("a", "b")]
    tail = rest[pair.end():]
    if re.search(r"\bsame (?:nationality|country)\b", tail, re.I):
        sides = [_demonym(name, facts) for name in names]
        if None in sides:
            return None
        fact = facts_about(names[0], facts)[0]
        return Extracted("yes" if sides[0] == sides[1] else "no", sentences(fact.text)[0], fact.source, "yes_no",
                         1.0, 1.0)
    both = re.search(r"\bboth\s+(.+?)\??\s*$", tail, re.I)
    if not both and re.match(r"both\s", rest, re.I):  # "Are both A and B painters?"
        both = re.match(r"\s*(.+?)\??\s*$", tail)
    if both and (wanted := stems(both.group(1))):
        holds = []
        for name in names:
            about = facts_about(name, facts)
            if not about:
                return None
            holds.append(wanted <= set().union(*(stems(f"{f.title} {f.text}") for f in about)))
        fact = facts_about(names[0], facts)[0]
        return Extracted("yes" if all(holds) else "no", sentences(fact.text)[0], fact.source, "yes_no", 1.0, 1.0)
    return None
