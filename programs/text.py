"""Words of questions, queries and passages, read the same way by the guardrails and the tools.

One stopword list serves every check: bm25s's extended English list (`STOPWORDS_EN_PLUS`), plus
question words and the filler words people put in queries ("tell me", "current"). The BM25 index
(`programs/index.py`) drops only bm25s's short English list (`"en"`, 33 words, all in the longer
one): "before" or "between" is a stopword to the checks and still a term the index ranks by.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from difflib import get_close_matches

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
    """Letters without their accents: "Beyoncé" and "Beyonce", "Aschenbrödel" and "Aschenbrodel"
    are the same word to a reader, so they are to every check and to the index."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def normalize_query(query: str) -> str:
    """Lower-case words without accents, punctuation and extra spaces: the identity of a query."""
    return " ".join(words(fold_accents(query.lower())))


def meaningful_tokens(text: str) -> set[str]:
    """The words of `text` that carry meaning: no stopwords, no trailing dots."""
    skip = stopwords()
    return {t.strip(".") for t in normalize_query(text).split() if t.strip(".") and t not in skip}


def named_entities(text: str) -> list[str]:
    """Capitalized words that are not stopwords: what a question or query is about."""
    skip = stopwords()
    names = _NAME.findall(_SCRIPT_CHANGE.sub(" ", text))  # "Wi-Fi" is one name, not "Wi" and "Fi"
    return [w for w in names if w[:1].isupper() and w.lower() not in skip]


_CAPITALIZED_WORD = r"(?!(?:The|A|An|In|On|At|By|Of)\b)[A-Z][a-z]+"
_CAPITALIZED_RUN = re.compile(rf"\b{_CAPITALIZED_WORD}(?:\s+(?:(?:of|the|and|for|de)\s+)?{_CAPITALIZED_WORD})+")


def acronyms(text: str) -> set[str]:
    """What the text's names of several capitalized words are shortened to, lowercased: a
    question's "UN" is said by a passage that writes "the United Nations", "CBC" by "Canadian
    Broadcasting Corporation" (the small words inside a name have no letter in it)."""
    return {"".join(w[0] for w in run.split() if w[0].isupper()).lower() for run in _CAPITALIZED_RUN.findall(text)}


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

