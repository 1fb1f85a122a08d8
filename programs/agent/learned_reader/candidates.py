"""Candidate answers: every span of a sentence that could answer a question, from general
patterns of English (names, dates, figures, street addresses, quoted titles, and phrases bounded
by punctuation and function words). The learned model (`model.py`) chooses among them; a
candidate only says what pattern it is, never whether it answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deltaseek.programs.text import capitalized_run, stopwords

_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
MONTHS = frozenset(_MONTHS.split("|"))
_YEAR = r"(?:1[5-9]|20)\d{2}"
DATE = re.compile(rf"\b(?:\d{{1,2}} (?:{_MONTHS}) \d{{4}}|(?:{_MONTHS}) \d{{1,2}}, \d{{4}}|(?:{_MONTHS}) \d{{4}}|"
                  rf"{_YEAR}\s?[–-]\s?(?:{_YEAR}|\d{{2}})|(?:{_MONTHS}) \d{{1,2}}|{_YEAR}s?)\b")
"""A date: day, month and year; month and year; month and day; a span of years ("1790–1796",
"1914-18"); a year or a decade ("1880s")."""
YEAR = re.compile(r"\b(?:1[0-9]{3}|20[0-9]{2})\b")
NUMBER = re.compile(r"(?<![\w.])(?:US\$|\$|€|£)?\d[\d,]*(?:\.\d+)?(?:\s?(?:%|percent|million|billion|thousand))?"
                    r"|\b(?:tens|hundreds|thousands|millions|billions) of \w+"
                    r"|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|"
                    r"fifty|hundred)\b(?=\s+[a-z]+s\b)")
"""A figure: digits with a currency or a scale, "thousands of ...", or a count in words before the
plural noun it counts ("six weeks"; not "three arrived": a verb follows)."""
_STREET = r"(?:Avenue|Street|Road|Boulevard|Lane|Drive|Way|Place|Square|Plaza|Parkway|Court|Ave\.|St\.|Blvd\.|Rd\.)"
ADDRESS = re.compile(rf"\b\d{{1,5}}(?:[-–]\d{{1,5}})? (?:[A-Z0-9][\w'.-]* ){{0,4}}{_STREET}")
NAME = re.compile(r"\b" + capitalized_run(r"[A-Z][\w'’.-]*", "van|von|de|der|da|del|di|le|bin|of|the|and|for", fewest=1))
"""Capitalized words, with the small words names carry inside them ("Anna van Dijk", "Bank of Tarbury")."""
QUOTED = re.compile(r"[\"“]([^\"“”]{1,60})[\"”]")
NICKNAMED = re.compile(r"\b[A-Z][\w'’.-]*\s+[\"“][A-Z][^\"“”]{0,24}[\"”]\s+[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*)*")
"""A name with a nickname quoted inside it: 'Margaret "Peggy" Alder' is one person."""
_NAME_BEFORE_NUMBER = re.compile(r"(?:^|\s)([A-Z][\w.+-]*|\w+&\w+)\s$")
_QUANTITY_WORDS = frozenset("nearly around almost roughly approximately less exactly circa since top".split())
_WORD = re.compile(r"[\w$€£][\w'’.,%-]*[\w%]|[\w$€£]")
_CLAUSE_BREAK = re.compile(r"[,;:()\[\]\"“”—–]|\s-\s")
MAX_PHRASE_WORDS = 6
"""Longest phrase proposed: longer answers are rare and every word more multiplies the candidates."""

KINDS = ("name", "date", "number", "address", "quoted", "phrase", "title")
FITTING_KINDS: dict[str, frozenset[str]] = {
    "person": frozenset({"name", "title"}), "place": frozenset({"name", "title"}), "date": frozenset({"date"}),
    "number": frozenset({"number"}), "address": frozenset({"address"}),
}
"""The candidates a question that names its answer's type can take: "who" a name, "when" a date,
"how many" a figure. A named thing ("Which river ...") and an untyped question take any."""


@dataclass(frozen=True)
class Candidate:
    """A span of a sentence (`start`, `end`: character offsets) and the patterns it fits."""

    text: str
    start: int
    end: int
    kinds: frozenset[str]


def in_a_name(before: str) -> bool:
    """Whether a number standing after `before` belongs to a name, not a figure: a capitalized
    word ("Tern 2.0", "the Kestrel 400") or one joined by "&" ("R&D 100") stands right before
    it; a sentence's opening word that only qualifies an amount ("About 500 people") does not."""
    match = _NAME_BEFORE_NUMBER.search(before)
    if not match:
        return False
    word = match.group(1).lower()
    return "&" in word or word not in stopwords() and word not in _QUANTITY_WORDS


def _names(sentence: str):
    """(name, offset) for each capitalized run, without the function words that open a sentence
    ("The", "In") or a possessive's ending ("Veltria's" -> "Veltria")."""
    skip = stopwords()
    for match in NAME.finditer(sentence):
        text, offset = re.split(r"['’]s\b", match.group(0))[0], match.start()
        words = text.split()
        while words and words[0].lower() in skip:
            offset += len(words[0]) + 1
            words.pop(0)
        while words and words[-1].lower() in skip:
            words.pop()
        name = " ".join(words).rstrip(".,")
        if len(re.findall(r"[^\W\d_]", name)) >= 2 and name.split()[0] not in MONTHS:
            yield name, offset


def candidate_spans(sentence: str, kind: str) -> list[tuple[str, int]]:
    """(span, character offset) of every span of one pattern: `name` (also `person`, `place`,
    `entity`), `date`, `number` (a figure with the noun it counts: "140,000 stars") or `address`."""
    if kind == "address":
        return [(m.group(0), m.start()) for m in ADDRESS.finditer(sentence)]
    if kind == "date":
        return [(m.group(0), m.start()) for m in DATE.finditer(sentence)]
    if kind == "number":
        spans = []
        for m in NUMBER.finditer(sentence):
            if DATE.fullmatch(m.group(0)) or in_a_name(sentence[:m.start()]):
                continue
            unit = re.match(r"\s+(?:of\s+)?([a-z][\w-]*)", sentence[m.end():])
            noun = unit.group(0) if unit and unit.group(1) not in stopwords() else ""
            spans.append((m.group(0) + noun, m.start()))
        return spans
    if kind in ("name", "person", "place", "entity"):
        return list(_names(sentence)) + [(m.group(0), m.start()) for m in NICKNAMED.finditer(sentence)]
    return []


def phrases(sentence: str, longest: int = MAX_PHRASE_WORDS) -> list[tuple[str, int, int]]:
    """(phrase, start, end) for every run of 1 to `longest` words inside one clause (no comma,
    bracket or quote within) that neither opens nor closes with a function word: "weaving and
    dyeing" and "the late spring" -> "late spring", never "and the"."""
    skip = stopwords()
    words = [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(sentence)]
    found = []
    for i, (start, _, first) in enumerate(words):
        if first.lower() in skip:
            continue
        for j in range(i, min(i + longest, len(words))):
            if j > i and _CLAUSE_BREAK.search(sentence[words[j - 1][1]:words[j][0]]):
                break
            end, last = words[j][1], words[j][2]
            if last.lower() not in skip:
                found.append((sentence[start:end].rstrip(".,"), start, end))
    return found


def sentence_candidates(sentence: str, phrases_too: bool = True) -> list[Candidate]:
    """Every candidate of the sentence, one per span, with all the patterns that span fits (no
    phrases unless `phrases_too`: a question asking for a date or a name takes none)."""
    by_span: dict[tuple[int, int], set[str]] = {}
    texts: dict[tuple[int, int], str] = {}

    def add(text: str, start: int, kind: str) -> None:
        text = text.strip(" ,;:")
        if not text:
            return
        key = (start, start + len(text))
        by_span.setdefault(key, set()).add(kind)
        texts[key] = text

    for kind in ("name", "date", "number", "address"):
        for text, start in candidate_spans(sentence, kind):
            add(text, start, kind)
    for match in QUOTED.finditer(sentence):
        add(match.group(1), match.start(1), "quoted")
    for text, start, _ in phrases(sentence) if phrases_too else ():
        add(text, start, "phrase")
    return [Candidate(texts[key], key[0], key[1], frozenset(kinds)) for key, kinds in by_span.items()]


def title_name(fact) -> str:
    """A passage's title without its qualifier or section: "Tern (compiler): history" -> "Tern"."""
    return re.sub(r"\s*\(.*\)$", "", fact.title.split(":")[0]).strip()


def fits_type(answer: str, kind: str) -> bool:
    """Whether a text could answer a question of this type at all (a date is no answer to "who")."""
    if kind in ("other", "yes_no"):
        return bool(answer.strip())
    if kind in ("person", "place", "entity"):
        return bool(NAME.search(QUOTED.sub(" ", answer)))
    if kind == "date":
        return bool(DATE.search(answer))
    if kind == "number":
        return bool(NUMBER.search(answer))
    return bool(ADDRESS.search(answer))
