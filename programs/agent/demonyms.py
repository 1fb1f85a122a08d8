"""Countries and the words for their people, read as each other when an answer is checked.

A capable model answers "France" where a passage says "a French painter", and "American" where
it says "a painter from the United States": the same claim, in words no passage read holds. The
table is countryinfo's (a maintained set of country records, MIT): each country's name, its
other spellings ("USA", "Holland") and its demonym ("American", "Dutch").
"""

from __future__ import annotations

import re
from functools import cache

_CODE = re.compile(r"^[A-Z]{2,3}$")
"""An ISO code among a country's other spellings ("FR", "FRA"): no word a passage writes for it,
except the few that are ("US", "UK"), which `_KNOWN_CODES` keeps."""
_KNOWN_CODES = frozenset({"US", "USA", "UK"})


@cache
def _countries() -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """Each country's names and its demonyms, as written."""
    from countryinfo import CountryInfo  # a table of 250 countries, loaded once, only when an answer needs it

    table = []
    for info in CountryInfo.all().values():
        demonym = (info.get("demonym") or "").strip()
        if not demonym:
            continue
        names = {info["name"], *(s for s in info.get("altSpellings", []) if not _CODE.match(s) or s in _KNOWN_CODES)}
        table.append((frozenset(n for n in names if n), frozenset({demonym})))
    return tuple(table)


@cache
def _phrase(phrase: str) -> re.Pattern:
    """The phrase as a word or words of its own, compiled once: the table's 1,200 phrases are more
    than `re`'s own cache holds, and each call would compile them all again."""
    return re.compile(rf"(?<![\w-]){re.escape(phrase)}s?(?![\w-])")


def _mentions(text: str, phrase: str) -> bool:
    return phrase in text and _phrase(phrase).search(text) is not None


def counterparts_read(answer: str, facts_text: str) -> list[str]:
    """The answer's country names and demonyms whose counterpart a passage writes: "France" where a
    passage says "French", "Dutch" where it says "the Netherlands" or "Holland". A demonym shared by
    two countries ("Dominican") is read for either."""
    if not re.search(r"[A-Z]", answer):
        return []
    found = []
    for names, demonyms in _countries():
        for said, other in ((names, demonyms), (demonyms, names)):
            written = [phrase for phrase in said if _mentions(answer, phrase)]
            if written and any(_mentions(facts_text, phrase) for phrase in other):
                found.extend(written)
    return found
