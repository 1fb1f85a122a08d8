"""What kind of thing a noun names: the class WordNet files it under (person, location, time,
artifact, group, ...), for the noun a question asks for and a candidate's last word. "In what
decade did the bridge open?" asks for a time; "the 1920s" fits and "the river" does not. The
classes are data (`programs/compiled/noun_classes.json`, written by `python -m
deltaseek.optimize.convert_wordnet`); which pairs of classes make an answer is learned.
"""

from __future__ import annotations

import functools
import json
import re

from deltaseek.bundled import noun_classes_path
from deltaseek.programs.agent.learned_reader.questions import asked_noun

SENSE_FEATURES = ("class_shared", "class_same", "class_unknown")
"""The candidate's last word shares a class with the asked noun; their most frequent senses are
of one class; the asked noun has a class and the candidate's last word, not a name, has none (a
figure, or no noun WordNet knows: a verb, an adjective)."""
_KIND_OF = re.compile(r"^\s*(?:(?:in|of|on|at|for|to|from|by)\s+)?(?:what|which)\s+(?:(?:kinds?|types?|sorts?|forms?|"
                      r"styles?|genres?)\s+of\s+(\w+)|(?:is|was|are|were)\s+(?:the|a|an)\s+(\w+)\s+(?:of|for|in|that|"
                      r"which|who|to|on|at|used|called|known)\b)", re.I)
"""The noun asked for after a word for a kind ("What kind of tree grows there?": tree) or as the
thing a question asks of something ("What was the capital of the duchy?": capital)."""


@functools.cache
def _classes() -> tuple[list[str], dict[str, str]]:
    data = json.loads(noun_classes_path().read_text(encoding="utf-8"))
    return data["classes"], data["nouns"]


def noun_classes(word: str) -> list[str]:
    """The classes of a noun's senses, most frequent first ([] for a word WordNet has no noun for);
    a plural is read as its singular ("bridges", "cities")."""
    names, nouns = _classes()
    word = word.lower().strip(".,;:'\"()“”’")
    forms = [word]
    if word.endswith("s"):
        forms += [word[:-1]] + ([word[:-2]] if word.endswith("es") else []) + (
            [word[:-3] + "y"] if word.endswith("ies") else [])
    letters = next((nouns[f] for f in forms if f in nouns), "")
    return [names[ord(c) - ord("a")] for c in letters]


def asked_thing(question: str) -> str | None:
    """The noun naming what the question asks for: "kind of tree" -> tree, "What was the capital of
    ..." -> capital, else `questions.asked_noun` ("Which river ..." -> river)."""
    match = _KIND_OF.search(question)
    return (match.group(1) or match.group(2)).lower() if match else asked_noun(question)


def class_features(asked: list[str], asking: str, candidate: str) -> dict[str, float]:
    """The candidate's last word against the asked noun's classes (`SENSE_FEATURES`), and a pair
    the model weighs: the asked class (or the question's asking phrase, `asking`, when it names no
    noun) with the last word's first class, or its shape ("<num>", "<Name>", "<none>")."""
    words = candidate.split()
    last = words[-1] if words else ""
    own = [] if last[:1].isdigit() else noun_classes(last)
    shape = "<num>" if last[:1].isdigit() else own[0] if own else "<Name>" if last[:1].isupper() else "<none>"
    found = {f"lex:class:{asked[0] if asked else asking}|{shape}": 1.0}
    if asked and own:
        found["class_shared"] = float(bool(set(asked) & set(own)))
        found["class_same"] = float(asked[0] == own[0])
    elif asked and not last[:1].isupper():
        found["class_unknown"] = 1.0
    return found
