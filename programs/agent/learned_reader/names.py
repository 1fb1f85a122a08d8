"""What a name span stands for in its sentence: a surname alone points back at the full name the
facts write, and a word of nationality before a noun is an adjective, not a place."""

from __future__ import annotations

import re

from deltaseek.programs.agent.learned_reader.candidates import NAME, title_name
from deltaseek.programs.text import stopwords

_NATIONALITY_SHAPE = re.compile(r"^[A-Z][a-z]+(?:ese|ian|ish|ic|ean)$")
"""The endings of words of nationality and region: "Veltrian", "Norvanese", "Tarbish", "Baltic"."""


def used_as_adjective(span: str, sentence: str, start: int, end: int) -> bool:
    """Whether a one-word name of a nationality's shape stands before a noun in its sentence ("a
    Veltrian painter"): it says what kind the noun is, and answers no "where" question. The same
    word alone ("born in Veltria", "the Veltrian, Ada Lind") is left as it is."""
    if " " in span.strip() or not _NATIONALITY_SHAPE.match(span.strip()):
        return False
    following = re.match(r"\s+([a-z][\w-]*)", sentence[end:])
    return following is not None and following.group(1) not in stopwords()


def full_name(word: str, facts: list, own=None) -> str | None:
    """The name of several words that the facts write for a surname alone: its own passage's
    (`own`: the title, then the text), else the other passages' titles, else their texts, the
    longest of each ("Brann" read in a passage titled "Ida Brann" is "Ida Brann"); None when no
    fact writes one."""
    word = word.strip()
    if " " in word or not word[:1].isupper():
        return None
    others = [f for f in facts if f is not own]
    places = [[title_name(own)], [own.text]] if own is not None else []
    places += [[title_name(f) for f in others], [f.text for f in others]]
    return next((found for texts in places if (found := _longest_ending_with(word, texts))), None)


def _longest_ending_with(word: str, texts: list[str]) -> str | None:
    names = [m.group(0).strip() for text in texts for m in NAME.finditer(text)]
    fuller = [n for n in names
              if len(n.split()) > 1 and n.split()[-1] == word and n.split()[0].lower() not in stopwords()]
    return max(fuller, key=len) if fuller else None


def lowercase_words(facts: list) -> set[str]:
    """Words the facts write in lowercase somewhere: ordinary words, whatever case a sentence's
    opening gives them ("However, the bridge ..." beside "it was, however, ...")."""
    return {w for f in facts for w in re.findall(r"\b[a-z][\w'’-]*", f.text)}
