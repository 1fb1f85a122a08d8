"""The checks on the reader adapter's span: each names a failure, and only a named failure sets the
span aside for the ranker's.

The adapter reads better than the ranker's candidates allow: on 200 questions of SQuAD's dev
articles (reading-only, the six passages each question finds) its span read F1 0.512 on the
answerable ones; held to the ranker's three best candidates, 0.383, for a candidate is what the
rules' patterns find (a year before 1500, "seventeen" or "the upper gallery" is none). So the
span stands unless it fails one of the rules those candidates were made by, stated for any span:
the question's own words, a post's former holder, another subject's passage, a word the question
rules out, a type the question cannot take.
"""

from __future__ import annotations

import re

from deltaseek.programs.agent.learned_reader.candidates import title_name
from deltaseek.programs.agent.learned_reader.features import PAST_RANGE, PRESENT
from deltaseek.programs.agent.learned_reader.questions import AnswerType, question_names
from deltaseek.programs.text import meaningful_tokens, stem

FORMER_HOLDER = re.compile(r"\b(?:(?:left|vacated|held|filled) by|succeeded|succeeding|replaced|replacing|preceded by|"
                           r"predecessor,?)\s+(?:[A-Z][\w'’.-]*\s+){0,3}$")
"""The words that introduce whom a post was taken over from, right before a name: "the seat
vacated by Ben Orr", "succeeding Ana Ruiz". Who holds the post now is not that name."""
DATE_WORDS = re.compile(r"\d|\b(?:January|February|March|April|May|June|July|August|September|October|November|"
                        r"December|century|centuries|decade|spring|summer|autumn|fall|winter|years?|age|era|"
                        r"dynasty|reign|war|period|time)\b", re.I)
"""What an answer to "when" holds: a figure, a month, a season, or a word for a stretch of time
("the 14th century", "in the lean years")."""
NUMBER_WORDS = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|\w+ty|"
                          r"hundred|thousand|million|billion|dozen|half|single|double|several|many|few|no)\b", re.I)
"""What an answer to "how many" holds: digits or a count in words ("seventeen", "a dozen")."""


def title_words(fact) -> set[str]:
    """The word stems of what a passage's title names ("Tern (compiler): history" -> tern)."""
    return {stem(w) for w in meaningful_tokens(title_name(fact))}


def subject_passages(names: set[str], facts: list) -> list:
    """The passages about the question's subject: those titled with its names alone ("Where was
    Ida Brann born?" is about "Ida Brann", not "Brann Hall")."""
    return [f for f in facts if names and (title := title_words(f)) and title <= names]


def span_failure(span: str, kind: AnswerType, question: str, sentence: str, source: str, facts: list,
                 other_sentences: list[str], not_answers: str = "", unlike: frozenset[str] = frozenset()) -> str | None:
    """Why the adapter's `span` (read in `sentence` of the fact `source`) is no answer, or None when
    it stands. `other_sentences`: the sentences the rules read candidates in."""
    words = meaningful_tokens(span)
    if not words or words <= meaningful_tokens(f"{question} {not_answers}"):
        return "the question's own words"
    if words & unlike:
        return "a word the question rules out"
    if kind == "person" and PRESENT.search(question):
        at = sentence.find(span)
        if at >= 0 and FORMER_HOLDER.search(sentence[:at]):
            return "a post's former holder"  # "the seat vacated by Ben Orr" is not who holds it now
        if PAST_RANGE.search(sentence) and any(not PAST_RANGE.search(s) for s in other_sentences):
            return "a holder whose term ended"  # "served until 2018", where another sentence does not say so
    if off_subject(question, facts, source, sentence):
        return "another subject's passage"
    if not could_answer(span, kind):
        return f"not a {kind}"
    return None


def off_subject(question: str, facts: list, source: str, sentence: str) -> bool:
    """Whether the span comes from another passage than the subject's own (titled with the
    question's names), in a sentence that does not name the subject: "Who designed the Tern
    compiler?" is not answered by a passage on Tern Studio."""
    names = question_names(question)
    own = {f.source for f in subject_passages(names, facts)}
    return bool(own) and source not in own and not names <= {stem(w) for w in meaningful_tokens(sentence)}


def could_answer(span: str, kind: AnswerType) -> bool:
    """Whether a span could answer a question of this type at all: a name is capitalized ("the
    governor" names no one), a date or a count holds one, an address a number. Looser than
    `candidates.fits_type`, whose patterns are what make the ranker's candidates and miss a year
    before 1500 or a count in words."""
    if kind in ("person", "entity"):
        return bool(re.search(r"[A-Z]", span))
    if kind == "date":
        return bool(DATE_WORDS.search(span))
    if kind == "number":
        return bool(NUMBER_WORDS.search(span))
    if kind == "address":
        return bool(re.search(r"\d", span))
    return True
