"""Words of questions, queries and passages, read the same way by the guardrails and the tools.

One stopword list serves every check: bm25s's extended English list (`STOPWORDS_EN_PLUS`), plus
question words and the filler words people put in queries ("tell me", "current"). The BM25 index
(`programs/index.py`) drops only bm25s's short English list (`"en"`, 33 words, all in the longer
one): "before" or "between" is a stopword to the checks and still a term the index ranks by.
"""

from __future__ import annotations

import calendar
import functools
import re
import unicodedata
from collections.abc import Callable
from decimal import Decimal
from difflib import get_close_matches

from text_to_num import alpha2digit

_WORD = re.compile(r"[\w.]+")
QUESTION_WORDS = frozenset("who whom whose what when where which why how is are was were do does did".split())
QUERY_FILLERS = frozenset("about current currently please tell me find search information info vs versus".split())


@functools.cache
def stopwords() -> frozenset[str]:
    """Words that never make two queries different or a query meaningful."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    return frozenset(STOPWORDS_EN_PLUS) | QUESTION_WORDS | QUERY_FILLERS


_LATIN = "A-Za-z0-9\u00c0-\u024f"  # ASCII and the Latin-1 and Latin Extended letters: "Hernández" is one word
_SCRIPT_CHANGE = re.compile(rf"(?<=[{_LATIN}])(?=[^\x00-\u024f\W])|(?<=[^\x00-\u024f\W])(?=[{_LATIN}])")
_NAME = re.compile(r"[\w.]+(?:-[\w.]+)*")


def words(text: str) -> list[str]:
    """Words, split where the script changes too: "Rubyの作者" is "Ruby" and "の作者", as a
    space would separate them in a language that writes spaces."""
    return _WORD.findall(_SCRIPT_CHANGE.sub(" ", text))


def fold_accents(text: str) -> str:
    """Latin letters without their accents: "Beyoncé" and "Beyonce", "Aschenbrödel" and
    "Aschenbrodel" are the same word to a reader, so they are to every check and to the index.
    Only a mark on a Latin letter is folded: in other scripts a mark makes another letter (the
    Japanese "ビ" is not "ヒ", a Cyrillic "й" is not "и")."""
    if text.isascii():
        return text
    kept, base = [], ""
    for char in unicodedata.normalize("NFKD", text):
        if unicodedata.combining(char):
            if base.isascii():  # a Latin letter decomposes to an ASCII one and its marks
                continue
        else:
            base = char
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u0e00-\u0e7f]+")
"""Runs of scripts written without spaces between words: kana, CJK ideographs, Hangul, Thai."""


def split_unspaced(text: str) -> str:
    """Text written mostly in scripts without spaces cut into overlapping pairs of characters, so
    that a word-based index can find it: "東京にあります" is indexed as "東京 京に にあ あり りま
    ます", and a question holding "東京" meets it. Text mostly in other scripts is left as it is (an
    English passage that writes a name in Chinese in brackets keeps the name whole)."""
    unspaced = sum(len(run) for run in _UNSPACED.findall(text))
    if not unspaced or 2 * unspaced <= sum(c.isalpha() for c in text):
        return text

    def pairs(match: re.Match) -> str:
        run = match.group(0)
        return " " + (" ".join(run[i:i + 2] for i in range(len(run) - 1)) if len(run) > 1 else run) + " "
    return _UNSPACED.sub(pairs, text)


def normalize_query(query: str) -> str:
    """Lower-case words without accents, punctuation and extra spaces: the identity of a query."""
    return " ".join(words(fold_accents(query.lower())))


def stem(word: str) -> str:
    """A word cut to five letters, so "compiler" and "compiled" meet."""
    return word.lower().strip(".,")[:5]


def stems(text: str) -> set[str]:
    """The meaningful words of a text as `stem`s."""
    return {stem(w) for w in meaningful_tokens(text)}


NUMBER_WORDS = {str(i): w for i, w in enumerate("zero one two three four five six seven eight nine ten".split())}
"""Digits and the words that spell them, from zero to ten: "2" and "two" say the same."""
DIGITS_OF_NUMBER_WORDS = {word: digit for digit, word in NUMBER_WORDS.items()}


_THOUSANDS_SEPARATOR = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_SCALED_NUMBER = re.compile(r"\b(\d+(?:\.\d+)?)\s*(thousand|million|billion|trillion|mn|bn|tn)\b"
                            r"|(?<=[$\u20ac\u00a3])(\d+(?:\.\d+)?)([kmbt])\b", re.I)
"""A number and its scale: "1.2 million", "3.5bn", and after a currency sign "$1.2M" or "\u00a3500k"
(a bare "5m" may be metres)."""
_SCALES = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12, "mn": 6, "bn": 9, "tn": 12,
           "k": 3, "m": 6, "b": 9, "t": 12}


def _multiplied_out(match: re.Match) -> str:
    number, scale = (match[1], match[2]) if match[1] else (match[3], match[4])
    return format((Decimal(number) * 10 ** _SCALES[scale.lower()]).normalize(), "f")
_ORDINAL_SUFFIX = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.I)


_ISO_DATE = re.compile(r"\b(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b")


def in_digits(text: str) -> str:
    """The text with its numbers written one way, so that a number said in another format than a
    passage's is the same number: "1,200" is "1200", "1.2 million" (or "$1.2M") is "1200000", "twenty-five"
    is "25" and "third" is "3" (words read by text2num's `alpha2digit`, which leaves "one" or
    "two" alone, as `DIGITS_OF_NUMBER_WORDS` reads them), "3rd" is "3", and a date written
    "1905-07-01" is "1 July 1905"."""
    text = _ISO_DATE.sub(lambda m: f"{int(m[3])} {calendar.month_name[int(m[2])]} {m[1]}", text)
    text = _THOUSANDS_SEPARATOR.sub("", text)
    text = _SCALED_NUMBER.sub(_multiplied_out, text)
    return _ORDINAL_SUFFIX.sub(r"\1", alpha2digit(text, "en"))


def without_opening_word(sentence: str) -> str:
    """The sentence after its opening word, which grammar capitalizes ("Describe", "Were", "Qui")."""
    return sentence.split(maxsplit=1)[1] if len(sentence.split()) > 1 else ""


def meaningful_tokens(text: str) -> set[str]:
    """The words of `text` that carry meaning: no stopwords, no trailing dots."""
    skip = stopwords()
    return {t.strip(".") for t in normalize_query(text).split() if t.strip(".") and t not in skip}


def named_entities(text: str) -> list[str]:
    """Capitalized words that are not stopwords: what a question or query is about."""
    skip = stopwords()
    names = _NAME.findall(_SCRIPT_CHANGE.sub(" ", text))  # "Wi-Fi" is one name, not "Wi" and "Fi"
    return [w for w in names if w[:1].isupper() and w.lower() not in skip]


REQUEST_VERBS = frozenset("""list name describe compare give tell find explain summarize summarise show identify
define provide outline discuss mention enumerate calculate estimate""".split())
"""Verbs that open a request rather than name a thing: "List Ada Lind's films.", "Describe Tern."
(not "state" or "count", which open names too: "State Street", "Count Basie")."""


def _without_final_period(name: str) -> str:
    """"Tern." that ends a sentence is "Tern"; an abbreviation keeps its dots ("U.S.")."""
    return name[:-1] if name.endswith(".") and name.count(".") == 1 and len(name) > 2 else name


def sentence_names(sentence: str) -> list[str]:
    """The names a sentence holds (`named_entities`, without a sentence's final period). Its
    opening word is capitalized by position, so it counts as a name only on its own evidence: a
    capitalized word goes on after it ("Ada Lind was born where?") or it is written again later
    ("Tern? Tern."), and it is no question word and no verb that opens a request ("List Ada
    Lind's films." names Ada Lind; "Describe Tern." names Tern)."""
    tokens = sentence.split()
    if not tokens:
        return []
    rest = [_without_final_period(n) for n in named_entities(without_opening_word(sentence))]
    opening = [_without_final_period(n) for n in named_entities(tokens[0])]
    evidence = len(tokens) > 1 and tokens[1][:1].isupper() or any(n in rest for n in opening)
    request = tokens[0].strip(".,;:!?").lower() in REQUEST_VERBS
    return list(dict.fromkeys((opening if evidence and not request else []) + rest))


def capitalized_run(word: str = r"[A-Z][\w'’-]*", small: str = "", *, then: str | None = None,
                    fewest: int = 2, several_small: bool = False) -> str:
    """A pattern for a run of capitalized words, such as a name: `word` first, then `then` (default
    `word`) after white space, each of those maybe after the small words a name carries inside it
    (`small`, an alternation: "of|the" for "Bank of Tarbury"; one of them, or several in a row
    with `several_small`: "Bank of the West"); `fewest` words (1 or 2) make a run. Every reader of
    names builds its pattern here, with its own words and small words."""
    then = word if then is None else then
    joint = rf"(?:(?:{small})\s+){'*' if several_small else '?'}" if small else ""
    return rf"{word}(?:\s+{joint}{then}){'+' if fewest > 1 else '*'}"


_CAPITALIZED_RUN = re.compile(r"\b" + capitalized_run(r"(?!(?:The|A|An|In|On|At|By|Of)\b)[A-Z][a-z]+",
                                                      "of|the|and|for|de"))


def initials(run: str) -> str:
    """The capitals that open the words of a run, lowercased: "Canadian Broadcasting Corporation"
    -> "cbc", "Bank of Tarbury" -> "bt" (the small words inside a name have no letter in it)."""
    return "".join(w[0] for w in run.split() if w[0].isupper()).lower()


def acronyms(text: str) -> set[str]:
    """What the text's names of several capitalized words are shortened to (their `initials`): a
    question's "UN" is said by a passage that writes "the United Nations", "CBC" by "Canadian
    Broadcasting Corporation"."""
    return {initials(run) for run in long_names(text)}


def long_names(text: str) -> list[str]:
    """The text's names of several capitalized words, which an acronym may stand for ("United
    Nations", "Bank of Tarbury"; not a sentence's "The")."""
    return _CAPITALIZED_RUN.findall(text)


_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b|\b(?:[A-Z]\.){2,6}")


def written_acronyms(text: str) -> set[str]:
    """The acronyms the text writes, lowercased without dots: "UN", "U.S." (as "un", "us")."""
    return {a.replace(".", "").lower() for a in _ACRONYM.findall(text)}


def key_terms(query: str) -> list[str]:
    """The words a relevant text must contain, as the BM25 tokenizer splits them."""
    import bm25s

    return bm25s.tokenize(query, stopwords=list(stopwords()), return_ids=False, show_progress=False)[0]


def missing_terms(query: str, texts: list[str]) -> list[str]:
    """Key terms of the query that none of the texts contains."""
    seen = " ".join(texts).lower()
    return list(dict.fromkeys(t for t in key_terms(query) if t not in seen))


MISSPELT_SIMILARITY = 0.75
"""How like a word of the passages (difflib's ratio) a word of a longer name must be to count as
that word misspelt: "hal" is 0.86 like "hall"."""


def name_runs(text: str, names: list[str] | None = None) -> list[list[str]]:
    """The names of `text` as written, word runs of its capitalized words (or of `names`):
    "Who built the Tarbury Hal Bridge?" holds ["Tarbury", "Hal", "Bridge"]."""
    named = set(named_entities(text) if names is None else names)
    runs: list[list[str]] = [[]]
    for token in _NAME.findall(_SCRIPT_CHANGE.sub(" ", text)):
        if token in named:
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    return [run for run in runs if run]


def misspelt_in_a_name(word: str, runs: list[list[str]], held: Callable[[str], bool], found: set[str]) -> bool:
    """Whether `word`, which no passage holds, is one word of a longer name whose other words are
    held, spelt like a word of the passages `found`: the sources name the thing, spelt another way
    ("Hal" of "the Tarbury Hal Bridge", where a passage says "Tarbury Hall Bridge"). One absent
    word of a name is not a thing the sources lack."""
    name = next((run for run in runs if word in run), [])
    others = [w for w in name if w != word and meaningful_tokens(w)]
    return bool(others) and all(held(w) for w in others) and any(
        get_close_matches(t, found, n=1, cutoff=MISSPELT_SIMILARITY) for t in meaningful_tokens(word))


def span_overlap(a: str, b: str) -> float:
    """Token F1 between two spans, lowercased."""
    left, right = a.lower().split(), b.lower().split()
    common = sum(min(left.count(w), right.count(w)) for w in set(left))
    return 0.0 if not common else 2 * common / (len(left) + len(right))
