"""Spans of a sentence that could answer a question of one type: names of people, places and
things, dates, figures, street addresses; and whether a text could answer a type at all.

The rule reader's own patterns for names and dates; figures and addresses are read as the learned
reader reads them (`learned_reader.candidates`).
"""

from __future__ import annotations

import re

from deltaseek.programs.agent.learned_reader.candidates import candidate_spans as learned_candidate_spans
from deltaseek.programs.agent.learned_reader.candidates import fits_type as learned_fits_type
from deltaseek.programs.agent.learned_reader.candidates import in_a_name, title_name
from deltaseek.programs.agent.learned_reader.features import lowercase_words
from deltaseek.programs.agent.learned_reader.questions import AnswerType
from deltaseek.programs.text import capitalized_run, meaningful_tokens, stopwords

_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_YEAR = r"(?:1[5-9]|20)\d{2}"
_DATE = re.compile(rf"\b(?:\d{{1,2}} (?:{_MONTHS}) \d{{4}}|(?:{_MONTHS}) \d{{1,2}}, \d{{4}}|(?:{_MONTHS}) \d{{4}}|"
                   rf"{_YEAR}\s?[–-]\s?(?:{_YEAR}|\d{{2}})|{_YEAR})\b")
"""A date: day, month and year; month and year; a span of years ("1790–1796", "1914-18"); a year."""
# Capitalized words, with the small words names carry inside them ("Anna van Dijk").
_NAME = re.compile(r"\b" + capitalized_run(r"[A-Z][\w'’.-]*", "van|von|de|der|da|del|di|le|bin", fewest=1))
_QUOTED = re.compile(r"\s*[\"“”][^\"“”]{1,30}[\"“”]\s*")
_PLACE_CUE = re.compile(r"\b(?:in|at|from|near|to)(?:\s+(?:the\s+)?(?:north|south|east|west|central)[a-z]*)?\s*$")
"""What stands before a place: "in Tarbury", "in southern Veltria", "in the central Moss region"."""
# Words that make a capitalized run an institution, a place or a work rather than a person.
_NOT_A_PERSON = frozenset("""assembly university college school state states senate house court company corporation
inc ltd party building street avenue river city county republic kingdom department ministry council committee
association foundation institute museum prize award series film festival league club team church hospital
airport station bank index president vice governor lieutenant senator minister king queen prince mayor
chairman director general judge society journal federation union organization day license act law treaty
agreement studio studios productions pictures entertainment records awards games magazine press news network
channel radio television version edition console village castle island mountain lake sea ocean forest valley
region province district""".split()) | {m.lower() for m in _MONTHS.split("|")}
_CONNECTIVE = re.compile(r"However|Moreover|Meanwhile|Nevertheless|Nonetheless|Furthermore|Instead|Thus|Therefore|"
                         r"Hence|Today|Later|Still|Also|Afterwards|Otherwise|Overall|Likewise|Indeed|Initially|"
                         r"Eventually|Finally|Originally|Additionally|Currently|Recently|Subsequently|Previously|"
                         r"Traditionally|Historically|Similarly|Consequently|Accordingly|Unfortunately")
"""Words that open a sentence to link it to the one before ("However, ...", "Eventually, ..."): never a name."""

__all__ = ["candidate_spans", "defined_title", "fits_type", "full_name", "in_a_name", "lowercase_words", "title_name"]


def candidate_spans(sentence: str, kind: AnswerType) -> list[tuple[str, int]]:
    """(span, character offset) of every span of the type in the sentence."""
    if kind in ("address", "number"):
        return learned_candidate_spans(sentence, kind)  # a figure with the noun it counts: "140,000 stars"
    if kind == "date":
        return [(m.group(0), m.start()) for m in _DATE.finditer(sentence)]
    if kind in ("person", "place", "entity"):
        text = _QUOTED.sub(" ", sentence) if kind == "person" else sentence
        spans = []
        for match in _NAME.finditer(text):
            name = re.split(r"['’]s\b", match.group(0))[0]  # "Veltria's currency": Veltria; "It’s": a stopword
            name = re.split(r"(?<=[a-z]{2})\.\s+", name)[0]  # "Moss. Once Ada ...": a name ends with its sentence
            words = [w for w in name.split() if w.lower() not in stopwords() or w[0].isupper()]
            while words and words[0].lower() in stopwords():
                words.pop(0)  # "The", "In" open a sentence, they do not start a name
            if words and match.start() == 0 and len(words) > 1 and re.fullmatch(r"[A-Z][a-z]+(?:ing|ed)", words[0]):
                words.pop(0)  # "Using Tern, ...", "Founded in ...": a verb opens the sentence, not a name
            if not words:
                continue
            span = " ".join(words).rstrip(".,")
            if len(re.findall(r"[^\W\d_]", span)) < 2:
                continue  # "C" of "-89 °C", "A" opening a sentence: a letter is no name
            if kind != "person" and (_DATE.match(span) or span.split()[0] in _MONTHS.split("|")):
                continue  # "in February", "December 2010": a date, not a place or a named thing
            offset = sentence.find(words[0]) if kind == "person" else match.start()
            if kind == "place" and not _PLACE_CUE.search(sentence[:max(0, match.start())]):
                continue  # a place is where something is: "in Tarbury", "at 12 ...", "from Veltria"
            if kind == "person" and len(words) == 1 and match.start() == 0 and not text.startswith(", who", match.end()):
                continue  # one capitalized word opening a sentence is too often not a name ("Lind, who ..." is)
            if kind == "person" and ({w.lower().strip(".,") for w in words} & _NOT_A_PERSON
                                     or not re.search(r"[a-z]{2}", span)):
                continue  # an institution, or an abbreviation such as "U.S."
            spans.append((span, max(offset, 0)))
        return spans
    return []


def defined_title(fact, sentence: str, noun: str | None) -> tuple[str, int] | None:
    """An encyclopedic passage's title, when its sentence defines it as the kind of thing asked for
    ("The crown was the currency of Veltria"): the thing is named by the title, not in the sentence."""
    if not noun:
        return None
    title = title_name(fact)
    definition = re.search(rf"\b(?:is|was|are|were) (?:a|an|the|one of the)\b(?:\s+[\w'’-]+){{0,6}}?\s+{noun}s?\b",
                           sentence, re.I)
    opening = meaningful_tokens(sentence[:definition.start()]) if definition else set()
    if definition and opening & meaningful_tokens(title):
        return title, definition.end() - len(noun)
    return None


def full_name(word: str, facts: list) -> str | None:
    """The longest name in the facts (titles first) that ends with this one word: how a surname
    alone points back at the person it stands for."""
    for texts in ([title_name(f) for f in facts], [f.text for f in facts]):
        names = [span for text in texts for span, _ in candidate_spans(text, "person")
                 if len(span.split()) > 1 and span.split()[-1] == word]
        if names:
            return max(names, key=len)
    return None


def fits_type(answer: str, kind: AnswerType) -> bool:
    """Whether a text could answer a question of this type at all (a date is no answer to "who")."""
    if kind in ("person", "place", "entity"):
        return bool(_NAME.search(_QUOTED.sub(" ", answer)))
    if kind == "date":
        return bool(_DATE.search(answer))
    return learned_fits_type(answer, kind)  # a figure, an address, any text for "other" and yes/no
