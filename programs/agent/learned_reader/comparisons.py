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

_JOINER = r"(?:of|the|and|de|van|von|v\.|vs\.|du|la|le|del|der)"
"""The small words a name holds between its capitalized ones: "Vey v. Lund", "Anna de la Vey". Not
"to", "in" nor "with", which join a name to what follows it in a sentence ("sent Ida Brann to
Veltria")."""
_OPTION = rf"(?:the |a |an )?[A-Z0-9][\w'’.&-]*(?:\s+(?:{_JOINER}\s+)+[A-Z][\w'’.&-]*|\s+[A-Z0-9][\w'’.&-]*)*"
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


def named(pair: re.Match) -> list[str]:
    """The two names an "A or B" or "A and B" match holds, without their articles."""
    return [strip_article(pair.group(g)) for g in ("a", "b")]


def question_options(question: str) -> list[str]:
    """The two things a choice question names for its answer: "Who was born first, Ida Brann or
    Olaf Sund?" -> ["Ida Brann", "Olaf Sund"] (the last "A or B" of the question)."""
    found = list(_OPTIONS.finditer(without_opening_word(question)))
    return named(found[-1]) if found else []


_CHOOSING = re.compile(r"\s*(?:which|who|whom|what)\b", re.I)


def choice_options(question: str) -> list[str]:
    """The two options a question asks to choose between, or none: a "which" question naming
    "A or B" ("Which breed, the Vey Hound or the Lund Setter, is older?", "Which team Vey United or
    Lund Rovers won more?"), and a "who", "whom" or "what" question whose "A or B" follows a comma
    or ends it ("Who is older, Ida Brann or Olaf Sund?", "Whom did Tern Hall hire Ida Brann or Olaf
    Sund?"). "What is the capital of Veltria or Lundby?" asks of the options, not for one of them:
    none."""
    match = _CHOOSING.match(question)
    if not match:
        return []
    rest = without_opening_word(question)
    found = list(_OPTIONS.finditer(rest))
    if not found:
        return []
    pair = found[-1]
    asking = match.group(0).strip().lower()
    before = rest[:pair.start()].rstrip()
    ends = not rest[pair.end():].strip(" ?.!")
    after_comma = before.endswith((",", ":"))
    if after_comma and (re.search(r",\s*[A-Z][^,]*,$", before)
                        or (asking == "what" and re.search(r"[A-Z][\w'’.-]*\s*,$", before))):
        return []  # "..., Tarn, Vey or Lund", "What lies west of Tarn, Vey or Lund?": a list of three
    # "Which team Vey United or Lund Rovers ...": the pair right after the question's noun, no verb
    # between ("Which film did Vey Studios or Lund Pictures release?" asks for a film)
    names_the_kind = asking == "which" and len(before.split()) <= 3 and not _AUXILIARY.search(before)
    if after_comma or names_the_kind or (ends and asking != "what"):
        return named(pair)
    return []


_AUXILIARY = re.compile(r"\b(?:is|are|was|were|do|does|did|has|have|had|can|could|will|would)\b", re.I)
_NO_OPTION = re.compile(r"\b(?:both|neither|either|none|former|latter|same|equal)\b", re.I)


def names_an_option(answer: str, options: list[str]) -> bool:
    """Whether an answer to a choice question names one of its `options` (by any word of its own:
    "Brann" or "Ida Maria Brann" for "Ida Brann") or answers with both, neither, the former or the
    latter."""
    if not all(meaningful_tokens(option) for option in options):
        return True  # an option of stopwords alone ("The Who") cannot be told from another word
    said = meaningful_tokens(answer)
    return bool(_NO_OPTION.search(answer)) or any(said & meaningful_tokens(option) for option in options)


def option_by_support(question: str, facts: list, options: list[str]) -> Extracted | None:
    """The option whose own passages say more of what the question says of it: "Which painter was
    from Lundby, Ida Brann or Olaf Sund?" is Olaf Sund where his passage says "Lundby" and hers
    does not. None on a tie, or where a side has no passage."""
    said = stems(without_opening_word(question)) - set().union(*(stems(option) for option in options))
    held, about = [], []
    for option in options:
        passages = facts_about(option, facts)[:2]
        if not passages:
            return None
        about.append(passages[0])
        held.append(len(said & set().union(*(stems(f"{f.title} {f.text}") for f in passages))))
    if held[0] == held[1]:
        return None
    chosen = held.index(max(held))
    fact = about[chosen]
    return Extracted(options[chosen], sentences(fact.text)[0], fact.source, "entity", 1.0, 1.0)


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
    names = named(pair)
    tail = rest[pair.end():]
    if re.search(r"\bsame (?:nationality|country)\b", tail, re.I):
        sides = [_demonym(name, facts) for name in names]
        if None in sides:
            return None
        fact = facts_about(names[0], facts)[0]
        return Extracted("yes" if sides[0] == sides[1] else "no", sentences(fact.text)[0], fact.source, "yes_no",
                         1.0, 1.0)
    if re.search(r"\bsame\b", tail, re.I):
        return None  # "both in the same choir": what each side is in, compared, is not read here
    both = re.search(r"\bboth\s+(.+?)\??\s*$", tail, re.I)
    if not both and re.match(r"both\s", rest, re.I):  # "Are both A and B painters?"
        both = re.match(r"\s*(.+?)\??\s*$", tail)
    if both and (wanted := _singular(stems(_PLACED.sub("", both.group(1))))):
        # "Are A and B both composers?" asks what each is: its passage's opening sentence may say it
        # with other modifiers ("a Veltrian composer" for "music composers"), so its last word is enough
        copular = re.match(r"\s*(?:are|were|is|was)\b", question, re.I) and not _PREPOSITION.search(both.group(1))
        head = _singular(stems(both.group(1).split()[-1])) if copular else None
        holds = []
        for name in names:
            about = facts_about(name, facts)
            if not about:
                return None
            said = _singular(set().union(*(stems(f"{f.title} {f.text}") for f in about)))
            defined = _singular(stems((sentences(about[0].text) or [""])[0]))
            holds.append(wanted <= said or bool(head and head <= defined))
        fact = facts_about(names[0], facts)[0]
        return Extracted("yes" if all(holds) else "no", sentences(fact.text)[0], fact.source, "yes_no", 1.0, 1.0)
    return None


_PLACED = re.compile(r"\b(?:located|situated|based|found)\b", re.I)
"""Words a place's passage need not say: "both located in Veltria" asks whether both are in it."""
_PREPOSITION = re.compile(r"\b(?:in|on|at|of|from|to|for|by|with|near)\b", re.I)


def _singular(words: set[str]) -> set[str]:
    """Stems without a plural's "s", so "poets" meets "poet" (a stem keeps five letters)."""
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words}
