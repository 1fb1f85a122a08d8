"""Checks on the model's answer: each names one failure, and only a named failure sets the answer aside.

`answer_failure` runs them in order and returns the first reason, or None when the answer is
used as the model wrote it. What is not wrong passes: "yes", "no", one of the options the
question names, a number in words, a lowercase phrase, a date range, and an abstention ("the
passages do not say"), which is an answer too. The reader would sometimes have picked another
span; that is not a failure of the model's answer.

The small profile (AgentSettings.profile) adds three checks for a model whose answers are rarely
usable (the embedded 135M model): the answer must not be a sentence copied from a passage, it
must be of the kind asked for, and the sentence that holds it must answer the question as surely
as the reader's own spans must.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from functools import cache

from deltaseek.metrics.contract import says_no_answer
from deltaseek.programs.agent.claims import claim
from deltaseek.programs.agent.guardrails import (COPIED_WORDS, DSPY_PLACEHOLDERS, has_repeated_run, question_subjects,
                                                repeats_itself)
from deltaseek.programs.agent.learned_reader import (bridge_phrase, choice_options, expected_answer_types,
                                                     facts_rarity, fits_type, names_an_option, question_options,
                                                     question_support, sentences)
from deltaseek.programs.agent.demonyms import counterparts_read
from deltaseek.programs.agent.given_names import same_given_name
from deltaseek.programs.agent.quantities import (compared_amounts, compared_quantities, numbers_in, rounded_numbers,
                                                 same_durations, same_shares)
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad
from deltaseek.programs.text import (DIGITS_OF_NUMBER_WORDS, QUESTION_WORDS, capitalized_run, in_digits, initials,
                                     long_names, meaningful_tokens, named_entities, normalize_query, stem,
                                     stopwords, without_opening_word, written_acronyms)
from deltaseek.signatures import ANSWERABILITY

DUMPED_WORDS = 30
"""An answer this long that stands word for word in a fact is the passage handed back, not an
answer; a shorter stretch of a passage ("baking and brewing") is how answers are written."""
_YES_NO = re.compile(r"^\s*(?:yes|no)\b", re.I)
_YES_NO_LAST = re.compile(r"\b(?:yes|no)[.!]?\s*$", re.I)
"""A yes or no that closes the sentence ("Both are in Norway, so yes."): the answer to a yes/no question."""
_FULL_NAME = re.compile(capitalized_run(r"(?:[A-Z][a-z]{0,2}\.|[A-Z][\w'’-]*)", then=r"[A-Z][\w'’.-]*"))
"""Capitalized words in a row, initials after the first, a title or a short word abbreviated
first: "Ada Lind", "Ada M. Lind", "Dr. Ada Lind", "Mt. Lindor"."""
_ABBREVIATED_RUN = re.compile(capitalized_run(r"[A-Z][\w'’-]*", "of|and|for|the|de", several_small=True))
"""A name an abbreviation stands for: "United States", "National Aeronautics and Space Administration"."""


def is_abstention(answer: str) -> bool:
    """The answer declines to assert anything: "The passages do not say", "No information found"."""
    return says_no_answer(answer)


def claimed_names(text: str) -> list[str]:
    """The names a claim holds: capitalized words, but not a sentence's opening word, which grammar
    capitalizes ("It was founded by Ada Lind."), unless a name goes on after it ("Ada Lind founded it.")."""
    return [name for sentence in _SENTENCE_BREAK.split(text) for name in question_subjects(sentence)]


def _words(text: str) -> set[str]:
    """Meaningful words cut to five letters, numbers written one way (`in_digits`; "two" is "2")
    and kept whole, so that "12000000" is not "12000"; a stopword that ends a sentence ("founded
    it.") is a stopword still, but one written in capitals is an acronym ("the WHO"). Initials
    are one word with or without their dots ("U.S." is "US"), and a time of day, an era, a
    month, a half and a range of years are written one way (`one_spelling`)."""
    skip = stopwords()
    text = _CLOCK_TIME.sub(_clock_time, one_spelling(in_digits(_REGNAL_NUMBER.sub(_regnal_in_digits, text))))
    said = [DIGITS_OF_NUMBER_WORDS.get(w, w) for w in meaningful_tokens(text) if w not in skip]
    acronyms = [] if _shouted(text) else [a.lower() for a in _ACRONYM.findall(text) if a.lower() in skip]
    return {w if w.isdigit() else stem(_DOTTED_INITIALS.sub(r"\1", w)) for w in said + acronyms}


_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")
"""Capitals that spell a stopword are an acronym: "WHO", "US", "IT"."""
_DOTTED_INITIALS = re.compile(r"([a-z])\.(?=[a-z](?:\.|$))")
"""The dots between single letters: "u.s" (of "U.S.") is "us", "f.c" is "fc"."""
_CLOCK_TIME = re.compile(r"\b(\d{1,2})(?::(\d\d))?\s*([AaPp])\.?\s?[Mm]\b\.?")
"""A time of day: "9am", "9 a.m.", "9:00 AM", "9:30 p.m."."""


_REGNAL_NUMBER = re.compile(r"\b([A-Z][a-z]+) (X{0,3}(?:IX|IV|VI{0,3}|I{1,3})|X{1,3})\b")
"""A Roman numeral after a name: "Edward VII" ("Edward the Seventh"), "Act II"."""


def _regnal_in_digits(found: re.Match) -> str:
    import roman  # a well-kept parser of Roman numerals (zopefoundation)

    if found[2] == "I" and not _numeral_i(found):
        return found[0]
    return f"{found[1]} {roman.fromRoman(found[2])}"


def _numeral_i(found: re.Match) -> bool:
    """A lone "I" is a numeral after a name that goes on from a word before it ("the Lundby War I", "King
    Edmund I"), a pronoun after a sentence's opening word or a function word ("Then I", "Honestly I")."""
    before = found.string[:found.start()].rstrip()
    return bool(before) and before[-1].isalnum() and found[1].lower() not in stopwords()


_ERA_BEFORE_CHRIST = re.compile(r"\b(\d{1,4})\s?B\.?C\.?(?:E\.?)?(?!\w)")
_COMMON_ERA = re.compile(r"\b(\d{1,4})\s?(?:A\.D\.|C\.E\.|AD\b|CE\b)|\b(?:A\.D\.|AD\b)\s?(\d{1,4})\b")
"""Eras: "500 BC", "500 B.C.", "500 BCE" are one; "AD 1066", "1066 CE" are "1066", the era a year
without one is in."""
_SHORT_YEAR_RANGE = re.compile(r"\b((1\d|20)(\d\d))(\s?[\u2013-]\s?)(\d\d)\b(?![\d.,]\d|-\d)")
"""A range of years whose second is cut to its last two digits: "1914\u201318" is "1914\u20131918" (and
"1905-07-01" a date)."""
_MONTH_SHORT = {m[:3]: m for m in calendar.month_name if m} | {"Sept": "September"}
_MONTHS_SHORT = "|".join(sorted(_MONTH_SHORT, key=len, reverse=True))
_SHORT_MONTH = re.compile(rf"\b({_MONTHS_SHORT})\b\.?(?=\s?\d)|(?<=\d )({_MONTHS_SHORT})\b\.?")
"""A month cut short beside a number: "Mar. 3", "3 Sept 1921"."""
_WORLD_WAR_SHORT = re.compile(r"\bWW\s?(I{1,2}|[12])\b")
"""A world war cut to its initials: "WWII" and "WW2" are "World War 2", the number a Roman numeral
after a name is read as."""
_DOZEN = re.compile(rf"\b(?:(\d+|{'|'.join(DIGITS_OF_NUMBER_WORDS)})|an?|(half an?))\s+dozen\b", re.I)
"""A count in dozens: "a dozen" is 12, "two dozen" 24, "half a dozen" 6 ("dozens of" is no count)."""
_THOUSANDS_SHORT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[kK]\b")
"""A count in thousands written short: "1.5k" is 1500 (after a currency sign `in_digits` reads it already)."""
_NOON = re.compile(r"\b(?:12\s)?(noon|midday|midnight)\b")
"""Noon and midnight are times of day: "12pm" and "12am", as "12 p.m." and "12:00 AM" are written."""
_ERA_AFTER_CENTURY = re.compile(r"\b(centur(?:y|ies))\s+(?:(B\.?C\.?(?:E\.?)?)|A\.?D\.?|C\.?E\.?)(?!\w)")
"""An era after a century: "the 2nd century BCE" is "the 2nd century BC", "the 2nd century AD" the 2nd century."""
_HALF = re.compile(r"\b(\d+) and (?:a|one) half\b|(\d*)\u00bd")
"""A half: "six and a half" (digits by then: "6 and a half") and "6\u00bd" are "6.5"."""
_ORDINAL_SECOND = re.compile(r"(?<!\d )(?<!\b[Aa] )(?<!\b[Aa]n )(?<!\bper )(?<!\beach )(?<!\bevery )(?<!\bsplit )"
                             r"\b[Ss]econd\b|\bFirst\b(?=\s+[A-Z])")
"""An ordinal "second" ("his second wife", "the Second Lundby War"; not "per second", "a second")
and a "First" in a name ("the First Lundby War"), as their numbers: "2nd" and "II" are "2" too."""


def _dozens(found: re.Match) -> str:
    count = "1" if not found[1] else DIGITS_OF_NUMBER_WORDS.get(found[1].lower(), found[1])
    return "6" if found[2] else str(12 * int(count))


def _thousands(found: re.Match) -> str:
    value = float(found[1]) * 1000
    return str(int(value)) if value.is_integer() else str(value)  # "1500000", never "1.5e+06"


def one_spelling(text: str) -> str:
    """Spellings of one thing written one way: a world war's initials, an era, a range of years cut
    short, a month cut short, a dozen, thousands written "k", noon and midnight, a half and an
    ordinal, in a text whose numbers are digits (`in_digits`)."""
    text = _WORLD_WAR_SHORT.sub(lambda m: f"World War {len(m[1]) if 'I' in m[1] else m[1]}", text)
    text = _ERA_AFTER_CENTURY.sub(lambda m: f"{m[1]} BC" if m[2] else m[1], text)
    text = _ERA_BEFORE_CHRIST.sub(r"\1 BC", text)
    text = _COMMON_ERA.sub(lambda m: m[1] or m[2], text)
    text = _SHORT_YEAR_RANGE.sub(lambda m: f"{m[1]}{m[4]}{m[2]}{m[5]}" if int(m[5]) > int(m[3]) else m[0], text)
    text = _SHORT_MONTH.sub(lambda m: _MONTH_SHORT[m[1] or m[2]], text)
    text = _DOZEN.sub(_dozens, text)
    text = _THOUSANDS_SHORT.sub(_thousands, text)
    text = _NOON.sub(lambda m: "12am" if m[1] == "midnight" else "12pm", text)
    text = _HALF.sub(lambda m: f"{m[1] or m[2] or 0}.5", text)
    return _ORDINAL_SECOND.sub(lambda m: "2" if m[0].lower() == "second" else "1", text)


_YEARS_BEFORE_CHRIST = re.compile(r"\b(\d{1,4})(?:\s?(?:[\u2013-]|to)\s?(\d{1,4}))?\s?BC\b")
"""Years before Christ, one or a range: "500 BC", "600\u2013500 BC", "600 to 500 BC"."""


def contradicted_eras(answer: str, facts_text: str) -> list[str]:
    """The answer's years in one era that the passages give only in the other: "500 AD" where a
    passage says "500 BC" and none gives 500 without it, "44 BC" where one says "AD 44" and none "44 BC".
    A year without an era passes either way: "500" is how "AD 500" is written."""
    facts = in_digits(facts_text)
    before_christ = _ERA_BEFORE_CHRIST.sub(r"\1 BC", facts)
    read_bc = {year for found in _YEARS_BEFORE_CHRIST.findall(before_christ) for year in found if year}
    read_otherwise = set(re.findall(r"\b\d{1,4}\b", _YEARS_BEFORE_CHRIST.sub(" ", before_christ)))
    read_ad = {m[1] or m[2] for m in _COMMON_ERA.finditer(facts)}
    said = in_digits(answer)
    said_bc = {year for found in _YEARS_BEFORE_CHRIST.findall(_ERA_BEFORE_CHRIST.sub(r"\1 BC", said)) for year in found
               if year}
    return ([f"{m[0]}" for m in _COMMON_ERA.finditer(said) if (m[1] or m[2]) in read_bc - read_otherwise]
            + [f"{year} BC" for year in sorted(said_bc & read_ad - read_bc)])


def _clock_time(found: re.Match) -> str:
    minutes = f":{found[2]}" if found[2] and found[2] != "00" else ""
    return f"{found[1]}{minutes}{found[3].lower()}m"


def _shouted(text: str) -> bool:
    """All in capitals, more than two words: shouting, where capitals mark no acronym."""
    letters = re.findall(r"[A-Za-z]+", text)
    return len(letters) > 2 and all(w.isupper() for w in letters)


def _read(pad: Scratchpad) -> set[str]:
    return _words(" ".join(f"{f.title} {f.text}" for f in pad.facts))


def echo_reason(answer: str, pad: Scratchpad, reserved_names: set[str], prompt_texts: tuple[str, ...]) -> str | None:
    """Why the answer is an echo of the prompt: a field, tool, strategy or label name, DSPy's
    placeholder, the question itself, a text of the prompt's own, or a passage handed back whole."""
    said = normalize_query(answer)
    if any(p in said for p in DSPY_PLACEHOLDERS):
        return "the answer is DSPy's placeholder for a missing field"
    names = {normalize_query(n.replace("_", " ")) for n in reserved_names} | set(ANSWERABILITY) | {"unknown"}
    if said in names or said.replace(" ", "_") in {n.lower() for n in reserved_names}:
        return f"the answer is the name {answer.strip()!r} from the prompt, not an answer"
    if said == normalize_query(pad.question):
        return "the answer repeats the question"
    if any(said == normalize_query(text) for text in prompt_texts if text.strip()):
        return "the answer repeats a text of the prompt (a caveat, a query or guidance)"
    if len(said.split()) >= DUMPED_WORDS and any(said in normalize_query(f"{f.title} {f.text}") for f in pad.facts):
        return f"the answer hands back a passage word for word ({len(said.split())} words), not an answer"
    return None


def unsupported_reason(answer: str, pad: Scratchpad) -> str | None:
    """Why nothing read supports the answer, by the kind of answer: "yes" or "no" and an option
    the question names need facts about the things they compare; any other answer needs its
    names and numbers in the facts, and at least half of its other words."""
    if not pad.facts:
        return "no passage was read, so nothing supports the answer"
    read = _read(pad)
    said = one_spelling(claim(answer))  # before its names are cut out of it: "500 BCE" is "500 BC", "Sept 3" "September 3"
    options = question_options(pad.question)
    chosen = [o for o in options if normalize_query(o) in normalize_query(answer)]
    if _YES_NO.match(said) or chosen or (_YES_NO_LAST.search(said) and "yes_no" in expected_answer_types(pad.question)):
        about = chosen or options or named_entities(without_opening_word(pad.question))
        unread = [thing for thing in about if _words(thing) and not _words(thing) & read]
        return f"no passage read speaks of {', '.join(unread)}" if unread else None
    if not _words(said):
        return "the answer says nothing beyond its frame"
    asked = _words(pad.question) | _unreadable(said, pad) | _translated(said, pad)
    names = _words(" ".join(claimed_names(said))) | {w for w in _words(said) if re.search(r"\d", w)}
    names = names | _words(" ".join(_WEEKDAY.findall(said)))  # a name even as a sentence's opening word
    facts_text = " ".join(f"{f.title} {f.text}" for f in pad.facts)
    # a full name whose last word the facts hold is read: the surname stands for it ("Lind" said, "Ada Lind" answered),
    # unless a passage names another of that surname ("Olaf Lind" read, "Ada Lind" answered); not its number,
    # which tells one war or king from another ("Lundby War I" where "Lundby War II" is read)
    for run in _FULL_NAME.findall(said):
        if (last := _words(run.split()[-1])) and last <= read and not other_given_names(run, pad) - _words(run):
            read = read | {w for w in _words(run) if not w.isdigit()}
    # a name written out whose acronym a passage writes is read: "the Tarbury Rowing Club" said, "the TRC" read
    shortened = written_acronyms(facts_text)
    for run in long_names(said):
        if initials(run) in shortened:
            read = read | _words(run)
    read = read | _short_forms_of(read) | closed_compounds(facts_text)
    for compound in _HYPHENATED.findall(said):  # "sub-prefecture" said, "subprefecture" read
        if closed_compounds(compound) <= read:
            read = read | _words(compound)
    if _ASKS_A_SPAN_OF_YEARS.search(pad.question):
        derived = years_between(read)
    else:  # only the counts of years the answer gives, and the pairs of years only when it gives one
        counted = years_said(said)
        derived = years_between(read) & counted if counted else set()
    derived = derived | centuries_read(said, facts_text) | decades_read(said, facts_text)
    summed = worked_out(pad.question, said, facts_text)
    derived = derived | summed | numeric_dates_read(said, facts_text) | worked_out_words(said, read)
    has_number = bool(re.search(r"\d", in_digits(said)))
    measured, contradicted = compared_quantities(said, facts_text) if has_number else ([], [])
    contradicted = [q for q in contradicted if not _words(q) & summed]  # "65 km", the two lengths read added
    paid, paid_otherwise = compared_amounts(said, facts_text) if has_number else ([], [])
    # its number and unit, share, length of time or currency, read in another unit, spelling or rounding
    in_other_words = (measured + paid + same_shares(said, facts_text) + same_durations(said, facts_text)
                      + rounded_numbers(said, facts_text))
    derived = derived | _words(" ".join(in_other_words))
    if (names | _words(said)) - read - asked - derived:  # a country for its people, or its people for it
        derived = derived | _words(" ".join(counterparts_read(said, facts_text)))
    unread_names = sorted(n for n in names - read - asked - derived if not abbreviates(n, facts_text))
    if unread_names:
        return f"no passage read holds {', '.join(unread_names)}"
    for otherwise, how in ((contradicted, "they measure it otherwise"),
                           (contradicted_eras(claim(answer), facts_text), "they give it in the other era"),
                           (paid_otherwise, "they give it in another currency")):
        if otherwise:
            return f"no passage read gives {', '.join(otherwise)}: {how}"
    others = {w for w in _words(said) - names - asked - derived if not abbreviates(w, facts_text)}
    if not names and not others and _unreadable(said, pad):
        return None  # nothing in the passages' own script to check
    cut = {w[:4] for w in others}  # "western" is read where "West" is
    unread = cut - {w[:4] for w in read | asked}
    # a read name with a word or two the passages do not use ("western Norway") is still the name's claim
    if cut and len(unread) > len(cut) / 2 and (not names or len(unread) > NAME_QUALIFIERS):
        return f"most of the answer's words are in no passage read ({', '.join(sorted(unread)[:4])})"
    return None


TITLES = frozenset("""mr mrs ms miss mx dr doctor prof professor sir dame lady lord king queen prince princess
president senator governor general colonel captain saint judge justice father reverend rev bishop""".split())
"""Words before a surname that are no given name: "Dr. Lind", "Professor Lind"."""
_CAPITALIZED_RUN = re.compile(r"(?<![\w.])[A-Z][\w'’-]*\.?(?:\s+[A-Z][\w'’-]*\.?)*")


def _given_name(word: str) -> bool:
    """A word before a surname that may be a given name: no title, stopword or "-ly" adverb ("Later Lind")."""
    bare = word.rstrip(".").lower()
    return bare not in TITLES and bare not in stopwords() and not bare.endswith("ly")


def other_given_names(run: str, pad: Scratchpad) -> set[str]:
    """The given names of another person of `run`'s surname that a passage read writes (`_words`'
    spelling), in a passage's title or inside a sentence (a sentence's opening word, which grammar
    capitalizes, is left out): "Ada" where a passage says "the clinic was run by Ada Lind" and the
    answer is "Olaf Lind". A name that may be the answer's own given name, a nickname or an initial
    of it ("James Patrick Tressel" for "Jim Tressel"), is the same person."""
    last = run.split()[-1]
    surname = _words(last)
    said = [w for w in run.split()[:-1] if _given_name(w)]
    found = set()
    for fact in pad.facts:
        for text, opening in [(fact.title, -1), *((sentence, 0) for sentence in _SENTENCE_BREAK.split(fact.text))]:
            for match in _CAPITALIZED_RUN.finditer(text):
                names = match[0].split()
                for at, word in enumerate(names[1:], 1):
                    if word[:4] != last[:4] or _words(word) != surname:  # "Korean" is "Korea" too
                        continue
                    before = [(i, w) for i, w in enumerate(names[:at]) if _given_name(w)]
                    given = [w for i, w in before if not (i == 0 and match.start() <= opening)]
                    # the opening word is no other person's name, but may still be this one's ("William
                    # Jefferson Lind wrote Tern." for "Bill Lind")
                    if given and not any(same_given_name(g, s) for _, g in before for s in said):
                        found |= _words(" ".join(given))
    return found


_ASKS_A_SPAN_OF_YEARS = re.compile(r"\bhow (?:old|many years|long)\b|\bage\b|\byears? (?:apart|between|after|before|later|earlier)\b", re.I)
"""A question whose answer is a count of years, which a capable model works out from two years read."""


_YEARS_SAID = re.compile(r"\b(\d+)[\s-]+years?\b|\bage(?:d| of)\s+(\d+)\b|\b(?:was|is|were|at)\s+(\d+)\s+(?:when|at)\b", re.I)
"""A number an answer gives as a count of years: "eleven years on", "aged 33", "she was 33 when"."""


def years_said(answer: str) -> set[str]:
    """The numbers the answer gives as counts of years (`_YEARS_SAID`), as digits."""
    return {n for found in _YEARS_SAID.findall(in_digits(answer)) for n in found if n}


def years_between(read: set[str]) -> set[str]:
    """The numbers of years between two years the passages give, and one fewer (an age at death
    depends on the birthday): "1934" and "2001" read, "67" or "66" said."""
    years = sorted({int(w) for w in read if w.isdigit() and len(w) == 4})
    return {str(later - earlier - k) for i, earlier in enumerate(years) for later in years[i + 1:] for k in (0, 1)}


_ASKS_A_SUM_OR_DIFFERENCE = re.compile(r"\b(?:combined|in total|total|together|altogether|in all|difference|"
                                       r"how much (?:more|less|longer|shorter|taller|higher|larger|bigger|smaller)|"
                                       r"how many (?:more|fewer)|by how (?:much|many))\b", re.I)
"""A question whose answer is a sum or a difference of numbers the passages give."""
_SAYS_A_DIFFERENCE = re.compile(r"\bby (?:about |some |nearly )?(\d+(?:\.\d+)?)\b|"
                                r"\b(\d+(?:\.\d+)?)\s?\w*\s(?:more|fewer|less|longer|shorter|taller|higher|larger|"
                                r"bigger|smaller|earlier|later)\b", re.I)
"""An answer that gives a difference: "by 15 km", "15 km longer", "14 more"."""
SUMMED_NUMBERS = 40
"""The most numbers read whose sums and differences are worked out (the first in the passages)."""


def worked_out(question: str, answer: str, facts_text: str) -> set[str]:
    """The answer's numbers that are the sum or the difference of two numbers read, where the
    question asks for one ("What is their combined length?") or the answer gives a difference ("by
    15 km"), in `_words`' spelling: "65" where "40 km" and "25 km" are read."""
    said = in_digits(answer)
    if _ASKS_A_SUM_OR_DIFFERENCE.search(question):
        wanted = set(numbers_in(said))
    else:
        wanted = {n for found in _SAYS_A_DIFFERENCE.findall(said) for n in found if n}
    if not wanted:
        return set()
    read = [float(n) for n in numbers_in(in_digits(facts_text))[:SUMMED_NUMBERS]]
    results = {round(r, 6) for i, a in enumerate(read) for b in read[i + 1:] for r in (a + b, abs(a - b))}
    return {n for n in wanted if round(float(n), 6) in results}


SHORT_FORMS = {"jr": ("junior",), "sr": ("senior",), "st": ("saint", "street"), "mt": ("mount",), "ft": ("fort",),
               "dr": ("doctor", "drive"), "ave": ("avenue",), "rd": ("road",), "blvd": ("boulevard",),
               "co": ("company", "county"), "corp": ("corporation",), "inc": ("incorporated",), "ltd": ("limited",),
               "bros": ("brothers",), "univ": ("university",), "dept": ("department",), "gen": ("general",),
               "col": ("colonel",), "capt": ("captain",), "lt": ("lieutenant",), "sgt": ("sergeant",),
               "gov": ("governor",), "sen": ("senator",), "rep": ("representative",), "pres": ("president",),
               "prof": ("professor",), "intl": ("international",), "natl": ("national",), "assn": ("association",),
               "fc": ("football club",)}
"""English abbreviations of words a name holds, and what each stands for: "Karl Sund Jr." is
"Karl Sund Junior", "Tarbury FC" is "Tarbury Football Club"."""

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)" + "".join(rf"(?<!\b{short.capitalize()}\.)" for short in SHORT_FORMS)
                             + r"\s+")
"""Where a claim's sentence ends: not after an initial or an abbreviation ("Mt. Rask" is one name)."""


@cache
def _short_form_words() -> tuple[tuple[frozenset[str], tuple[frozenset[str], ...]], ...]:
    return tuple((frozenset(_words(short)), tuple(frozenset(_words(long)) for long in longs))
                 for short, longs in SHORT_FORMS.items())


_HYPHENATED = re.compile(r"\b[^\W\d_]+(?:-[^\W\d_]+)+\b")
"""A compound of words joined by hyphens: "co-founder", "sub-prefecture", "non-profit"."""


def closed_compounds(text: str) -> set[str]:
    """The text's hyphenated compounds written closed, in `_words`' spelling: "co-founder" is
    also "cofounder", and "non-profit" "nonprofit", as English writes many of them either way."""
    return _words(" ".join(compound.replace("-", "") for compound in _HYPHENATED.findall(text)))


def _short_forms_of(read: set[str]) -> set[str]:
    """The words an abbreviation read stands for, and the abbreviations of the words read."""
    both: set[str] = set()
    for short, longs in _short_form_words():
        if short and short <= read:
            both.update(*longs)
        if any(long <= read for long in longs):
            both |= short
    return both


_PART = r"(?:\b(early|mid|middle|late)[\s-]+(?:the\s+)?)?"
_PARTS = {"early": (0, 40), "mid": (30, 70), "middle": (30, 70), "late": (60, 99)}
"""Which years of a century "early", "mid" and "late" take in, overlapping: the early 1900s are up
to 1940, the late 1900s from 1960 (a decade's tenth of them: the late 1870s are 1876 to 1879)."""
_CENTURY_SAID = re.compile(_PART + r"(?:\b(\d{1,2})[\s-]+century\b|\b(1?\d)00s\b)", re.I)
_YEAR_READ = re.compile(r"\b((1?\d)\d\d)(?!\d)(s\b)?|\b(\d{1,2})[\s-]+century\b", re.I)


def _in_part(part: str, first: int, last: int, scale: int = 1) -> bool:
    """Whether years `first` to `last` of a century (of a decade, `scale` 10) meet its part ("late")."""
    low, high = _PARTS[part.lower()] if part else (0, 99)
    return first * scale <= high and last * scale >= low


def centuries_read(answer: str, facts_text: str) -> set[str]:
    """The answer's centuries that a year or a century read falls in, as `_words` writes them: "in the
    12th century" (its "12") where a passage says "1151" or "the 1100s", "the 1100s" where it says
    "the twelfth century"; a part of it ("the late 12th century") only where a year read falls in
    that part. Only a century the answer names is worked out."""
    said = _CENTURY_SAID.findall(in_digits(answer))
    if not said:
        return set()
    read: dict[int, list[tuple[int, int]]] = {}  # a century read, and the years of it read (all, for a century)
    for year, hundreds, decade, century in _YEAR_READ.findall(in_digits(facts_text)):
        if century:
            read.setdefault(int(century), []).append((0, 99))
        else:
            within = int(year) % 100
            read.setdefault(int(hundreds) + 1, []).append((within, within + 9 if decade else within))
    found = set()
    for part, century, hundreds in said:
        number = int(century) if century else int(hundreds) + 1
        if any(_in_part(part, first, last) for first, last in read.get(number, [])):
            found.add(century or f"{hundreds}00s")
    return found


_DECADE_SAID = re.compile(_PART + r"\b(1\d\d|20\d)0s\b", re.I)
_YEAR_OF_DECADE = re.compile(r"\b(1\d\d|20\d)(\d)(s\b)?(?![\d.,]\d)")


def decades_read(answer: str, facts_text: str) -> set[str]:
    """The answer's decades that a year read falls in: "the 1870s" where a passage says "1877" or
    "the 1870s"; a part of it ("the late 1870s") only where a year read falls in that part. Only a
    decade the answer names is worked out."""
    said = _DECADE_SAID.findall(answer)
    if not said:
        return set()
    read = [(decade, 0 if whole else int(year), 9 if whole else int(year))
            for decade, year, whole in _YEAR_OF_DECADE.findall(facts_text)]
    return {f"{decade}0s" for part, decade in said
            if any(d == decade and _in_part(part, first, last, scale=10) for d, first, last in read)}


_NUMERIC_DATE = re.compile(r"(?<![\d/.])(?:(\d{1,2})/)?(\d{1,2})/(\d{4})(?![\d/])")
"""A date in digits: "4/7/1921" (the 4th of July, or the 7th of April), "03/1921" (a month)."""


def numeric_dates_read(answer: str, facts_text: str) -> set[str]:
    """The numbers of the answer's dates in digits, where a passage writes that date with its month's
    name, either way round the day and month are read: "4/7/1921" and "7/4/1921" where a passage
    says "4 July 1921", "03/1921" where it says "March 1921"."""
    said = _NUMERIC_DATE.findall(answer)
    if not said:
        return set()
    facts = one_spelling(facts_text)
    found = set()
    for first, second, year in said:
        readings = [(first, second), (second, first)] if first else [("", second)]
        for day, month in readings:
            if not 1 <= int(month) <= 12 or (day and not 1 <= int(day) <= 31):
                continue
            name = calendar.month_name[int(month)]
            day = str(int(day)) if day else ""
            on_day = rf"\b{day}\s+{name}\b|\b{name}\s+{day}\b" if day else rf"\b{name}\b"
            if re.search(rf"(?:{on_day}),?\s+(?:of\s+)?{year}\b", facts):
                found |= {str(int(n)) for n in (first, second) if n} | {year, *(n for n in (first, second) if n)}
    return found


_WEEKDAY_DATE = re.compile(rf"\b({'|'.join(calendar.day_name)}),?\s+(?:the\s+)?(?:(\d{{1,2}})\s+(?:of\s+)?"
                           rf"({'|'.join(calendar.month_name[1:])})|({'|'.join(calendar.month_name[1:])})\s+(\d{{1,2}})),?"
                           r"\s+(\d{4})\b")
"""A weekday before a date: "Thursday, 3 March 1921", "Thursday, March 3, 1921"."""
_WEEKDAY = re.compile(rf"\b(?:{'|'.join(calendar.day_name)})\b")
_FAMILY = re.compile(r"\b[Tt]he ([A-Z][a-z]+)s\b")
"""A family by its surname's plural: "the Linds"."""


def worked_out_words(answer: str, read: set[str]) -> set[str]:
    """Words of the answer that follow from what is read, as `_words` writes them: a weekday that
    is its date's ("Thursday, 3 March 1921": the calendar's), and a family by its surname's plural
    ("the Linds" where "Lind" is read)."""
    found = set()
    for weekday, day, month, month_first, day_after, year in _WEEKDAY_DATE.findall(answer):
        number = list(calendar.month_name).index(month or month_first)
        try:
            if calendar.day_name[calendar.weekday(int(year), number, int(day or day_after))] == weekday:
                found |= _words(weekday)
        except ValueError:  # no such day ("31 February")
            continue
    for surname in _FAMILY.findall(answer):
        if _words(surname) <= read:
            found |= _words(surname + "s")
    return found


NAME_QUALIFIERS = 2
"""Words beside a name read that no passage uses, at most, before the answer is more than the
name's claim: "the western part of Norway" claims Norway, read; "a failed Norwegian trade
mission" claims more than any passage read says."""


def _unreadable(answer: str, pad: Scratchpad) -> set[str]:
    """The answer's words in a script no passage read is written in ("大阪" beside English passages):
    a translation cannot be checked word for word, so it is not held against the answer."""
    scripts = {_script(c) for f in pad.facts for c in f.text if c.isalpha()}
    return {w for w in _words(answer) if any(c.isalpha() and _script(c) not in scripts for c in w)}


def _translated(answer: str, pad: Scratchpad) -> set[str]:
    """The answer's lower-case words when the question is in another language than the passages:
    it holds no English question word and most of its lower-case words are in no passage read
    ("Qui a créé le langage Ruby ?" over English passages). An answer in the question's language
    ("Yukihiro Matsumoto a créé Ruby") cannot be checked word for word; its names and numbers still are."""
    if set(re.findall(r"\w+", pad.question.lower())) & QUESTION_WORDS:
        return set()
    lower = [w for w in re.findall(r"\w+", pad.question) if w.islower() and _words(w)]
    read = _read(pad) if lower else set()
    if not lower or sum(bool(_words(w) & read) for w in lower) * 2 >= len(lower):
        return set()
    return _words(" ".join(w for w in re.findall(r"\w+", answer) if w.islower()))


def _script(char: str) -> str:
    """A letter's script, as the first word of its Unicode name ("LATIN", "CJK", "CYRILLIC")."""
    return unicodedata.name(char, "UNKNOWN").split()[0]


def abbreviates(word: str, text: str) -> bool:
    """Whether `word` is the initials of a run of capitalized words in the text ("u.s" of
    "United States", "nasa" of "National Aeronautics and Space Administration")."""
    letters = re.sub(r"[^a-z]", "", word.lower())
    if not 2 <= len(letters) <= 6:
        return False
    return any(initials(run) == letters for run in _ABBREVIATED_RUN.findall(text))


def off_subject_reason(answer: str, pad: Scratchpad) -> str | None:
    """Why the answer comes from passages about something else: the passages holding its words
    neither name the question's subject nor share a name with a passage that does (the next hop
    of a multi-hop question does). "The capital of Veltria" is not answered by "Tarbury" read in a
    passage about Tarbury beside one about Veltria."""
    subject = _words(" ".join(question_subjects(pad.question)))
    about = [f for f in pad.facts if subject & _words(f"{f.title} {f.text}")]
    wanted = _words(answer) - _words(pad.question)
    holding = [f for f in pad.facts if wanted and wanted <= _words(f"{f.title} {f.text}")]
    if not subject or not about or not holding or any(f in about for f in holding):
        return None
    linked = _words(" ".join(named_entities(" ".join(f"{f.title} {f.text}" for f in about)))) - subject
    if any(linked & _words(" ".join(named_entities(f"{f.title} {f.text}"))) for f in holding):
        return None
    titled = f" ({holding[0].title})" if holding[0].title else ""  # a passage of one sentence has no title
    return f"the answer comes from a passage about something else{titled}, not about {', '.join(question_subjects(pad.question))}"


_DESCRIBED_BY_A_CLAUSE = re.compile(
    r"\b(?:a|an|the)\s+(?:[\w'’-]+\s+){0,3}?[\w'’-]+,?\s+(?:(?:in|at|from|of|to|on|by|for|with)\s+)?"
    r"(?:who|whom|which|that|whose|where)\b|\b(?:a|an|the)\s+(?:[\w'’-]+\s+){1,4}?[a-z]+(?:ed|en|wn)\s+by\b", re.I)
"""A thing the question names only by what a clause says of it, the mark of a second hop: "a
ferry that sails from Vey", "the island for which Ada Lind is known", "the play written by"."""


def asks_two_hops(pad: Scratchpad) -> bool:
    """Whether the question is two-hop: by its kind, by a bridge in its words, or by a thing it
    names only through a clause, whatever else set its kind ("How many times was the man who
    founded Vey married?" is counted, and two-hop)."""
    return (pad.task_kind == "multi_hop" or bridge_phrase(pad.question) is not None
            or _DESCRIBED_BY_A_CLAUSE.search(pad.question) is not None)


def gives_a_figure_asked(answer: str, pad: Scratchpad) -> bool:
    """Whether a passage read that holds the answer gives a number the question gives: "Which hall
    seats 4,120 and stands by the Vey?" and "Lundby Hall seats 4,120." The passage is about what
    the question describes, though it does not name the question's subject. A capable model's
    answer from it is kept; a small model's still needs the subject (a search finds passages
    sharing a year with the question by that year alone)."""
    asked = _words(pad.question)
    figures = {w for w in asked if w.isdigit()}
    wanted = _words(answer) - asked
    return bool(figures and wanted) and any(wanted <= (held := _words(f"{f.title} {f.text}")) and bool(figures & held)
                                            for f in pad.facts)


def answer_support(answer: str, question: str, facts: list[Fact]) -> float:
    """How surely the sentence holding the answer answers the question (the reader's
    `question_support` of the best sentence that holds most of the answer's words)."""
    wanted = _words(answer)
    best, rare = 0.0, facts_rarity(facts)
    for fact in facts:
        for sentence in sentences(fact.text):
            held = wanted & _words(sentence)
            if wanted and len(held) * 2 >= len(wanted):
                best = max(best, question_support(question, sentence, fact, rare))
    return best


def kind_reason(answer: str, question: str) -> str | None:
    """Why the answer is not of the kind asked for ("who" answered by a date), for the small
    profile. A number in words is a number; the question's own words do not make the fit."""
    asked = {w.lower() for w in re.findall(r"\w+", question)}
    new_part = " ".join(w for w in re.findall(r"[\w'’.,-]+", answer) if w.lower().strip(".,") not in asked)
    new_part = " ".join(DIGITS_OF_NUMBER_WORDS.get(w.lower(), w) for w in new_part.split())
    kinds = [k for k in expected_answer_types(question) if k != "yes_no"]
    unfit = [k for k in kinds if not fits_type(new_part, k)]
    return f"the answer holds no {unfit[0]} of its own, the kind the question asks for" if unfit else None



def abstains_around(answer: str, said: str) -> bool:
    """Whether the answer, its claim `said` taken out, still says that the passages do not give the
    answer: "Answer: unknown (the passages do not give it)" abstains in its own words, and the word
    its claim is reduced to ("unknown", a label's name too) is part of that abstention, not an
    echo. A bare "unknown" has nothing else to say it: the label's name echoed."""
    rest = re.sub(re.escape(said.strip()), " ", answer, count=1, flags=re.I) if said.strip() else answer
    return rest != answer and bool(rest.strip(" .:;,()")) and is_abstention(rest)


def answer_failure(answer: str, pad: Scratchpad, reserved_names: set[str], prompt_texts: tuple[str, ...] = (),
                   small: bool = False, min_support: float = 0.0) -> str | None:
    """The first named failure of the model's answer, or None: the answer is used as written."""
    if not answer.strip():
        return "the model gave no answer"
    said = claim(answer)
    for text in dict.fromkeys((answer, said)):  # an echo inside a frame is an echo: "The answer is query."
        if text.strip() and (reason := echo_reason(text, pad, reserved_names, prompt_texts)):
            if text != answer and abstains_around(answer, said):
                continue
            return reason
    if has_repeated_run(answer) or repeats_itself(answer):
        return "the answer repeats itself (a run of repeated characters or words)"
    if is_abstention(answer):
        return None  # "the passages do not say" is an answer
    if (options := choice_options(pad.question)) and not names_an_option(answer, options):
        return f"the answer names neither option the question offers ({options[0]} or {options[1]})"
    if reason := unsupported_reason(answer, pad):
        return reason
    # a two-hop answer often stands in a passage about the bridge that the passages read do not
    # link by name: for a capable model's, a passage read that holds it is support enough (the small
    # model's path reads no question for hops)
    if (small or not (asks_two_hops(pad) or gives_a_figure_asked(said, pad))) and \
            (reason := off_subject_reason(said, pad)):
        return reason
    if small and not _YES_NO.match(said) and not question_options(pad.question):
        written = normalize_query(answer)
        if len(written.split()) >= COPIED_WORDS and any(written in normalize_query(f"{f.title} {f.text}")
                                                        for f in pad.facts):
            return "the answer copies a sentence of a passage instead of answering"
        if reason := kind_reason(said, pad.question):
            return reason
        if (sure := answer_support(said, pad.question, pad.facts)) < min_support:
            return (f"no sentence holding the answer answers the question surely enough "
                    f"(support {sure:.2f} < {min_support:.2f})")
    return None
