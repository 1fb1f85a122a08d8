"""Bridges: what a multi-hop question names only through another passage ("the architect of the
Vey Bridge"), resolved to the entity the facts name for it, so the rest of the question can be
read like a question of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deltaseek.programs.agent.learned_reader.candidates import title_name
from deltaseek.programs.agent.learned_reader.model import ReaderModel
from deltaseek.programs.agent.learned_reader.questions import AnswerType
from deltaseek.programs.agent.learned_reader.read import Extracted, extract_span
from deltaseek.programs.text import meaningful_tokens, named_entities

PLACE_HEADS = frozenset("""country state city county town village region area location place birthplace province
nation island district capital hometown""".split())
"""Head nouns of a bridge that names a place."""
PERSON_HEADS = frozenset("""person man woman composer author performer performers director producer designer
architect founder creator writer actor actress singer artist president governor mayor king queen coach captain
spouse wife husband father mother son daughter player leader owner developer""".split())
"""Head nouns of a bridge that names a person."""
GROUP_HEADS = frozenset("team band company association organization party group school university label".split())
HEADS = "|".join(sorted(PLACE_HEADS | PERSON_HEADS | GROUP_HEADS, key=len, reverse=True))
NAMED_BY_ROLE = "|".join(sorted(PERSON_HEADS | GROUP_HEADS | {"birthplace", "place of birth"}, key=len, reverse=True))
ENTITY_RUN = r"[A-Z0-9][\w'’.-]*(?:,? (?:(?:of|the|and|for|with|de|la|van|von|a|an) )*[A-Z0-9][\w'’.-]*)*"
# A relative clause ends at the participle that closes it ("where the mill is located", "that she
# was born in"), else at a comma or the question mark: what follows is the outer question again.
CLAUSE = (r"(?:[^,?]|, (?=[A-Z]))*?\b(?:is|was|are|were) (?:[a-z]+ )??(?:[a-z]+ed|born|found|from|held|made|known|part of|"
           r"a [a-z]+)\b(?: (?:in|of|from|by))?(?= [a-z]|[,?]|$)|(?:[^,?]|, (?=[A-Z]))*")
BRIDGES = [
    # "the guild which printed the Almanac", "the valley where the mill stands"
    re.compile(rf"\bthe (?:[a-z]+ ){{0,2}}?(?P<head>[a-z]+),? (?:(?:in|at|from|of|to|on|by|under|with) )?"
               rf"(?:which|that|who|whom|where|whose)\b(?P<clue>{CLAUSE})"),
    # "the town Ida Brann is from": a relative clause without its pronoun
    re.compile(rf"\bthe (?:[a-z]+ ){{0,2}}?(?P<head>{HEADS}) (?P<clue>{ENTITY_RUN} (?:{CLAUSE}))"),
    # "the architect of the Vey Bridge" (not "the village of Tarn": that is its name)
    re.compile(rf"\bthe (?:[a-z]+ ){{0,2}}?(?P<head>{NAMED_BY_ROLE}) of (?P<clue>{ENTITY_RUN})"),
    # "the airport in birth place of X": a birthplace needs no article
    re.compile(rf"\b(?:the )?(?P<head>birth ?place|hometown) of (?P<clue>{ENTITY_RUN})"),
    # "Tern Harbour's designer", "the Quill Press's founder", "Ada Lind's city of birth"
    re.compile(rf"(?P<clue>{ENTITY_RUN})['’]s (?:[a-z]+ ){{0,2}}?(?P<head>{HEADS})(?: of birth)?\b"),
]
NAMED_KINDS = frozenset({"name", "title", "quoted"})
"""A bridge stands for a named thing: only these candidates resolve it."""


@dataclass(frozen=True)
class Bridge:
    """A phrase of the question naming something only another passage identifies: its head noun
    ("guild"), the clue that identifies it ("which printed the Almanac"), where it stands."""

    head: str
    clue: str
    start: int
    end: int

    @property
    def kind(self) -> AnswerType:
        noun = self.head.replace("birth place", "birthplace").split()[0]  # a head of several words: its first names it
        return "place" if noun in PLACE_HEADS else "person" if noun in PERSON_HEADS else "entity"


def bridge_phrase(question: str) -> Bridge | None:
    """The innermost bridge of the question (the last to start: bridges nest to the right), if
    the question asks something beyond it: "Who is the mayor of Tarn?" asks for the mayor itself,
    "Where was the architect of the Vey Bridge born?" for something about the architect."""
    found = []
    for pattern in BRIDGES:
        for m in pattern.finditer(question):
            found.append(Bridge(m.group("head"), m.group("clue").strip(), m.start(), m.end()))
            # where a clause's end is not marked, it may end with the name it holds, and the rest
            # is the outer question again
            named = re.search(ENTITY_RUN, m.group("clue"))
            if named and named.end() < len(m.group("clue").rstrip()):
                end = m.start("clue") + named.end()
                found.append(Bridge(m.group("head"), question[m.start("clue"):end].strip(), m.start(), end))
    for bridge in sorted(found, key=lambda b: (-b.start, -b.end)):  # the longest reading of a clause first
        outside = question[:bridge.start] + " " + question[bridge.end:]
        if meaningful_tokens(bridge.clue) and meaningful_tokens(outside):
            return bridge
    return None


def clue_passages(bridge: Bridge, facts: list) -> tuple[set[str], list, list]:
    """The words of what the bridge's clue names, the passages titled with it, and the passages
    that name it (a passage that does not is about something else). The titled passage says what
    the bridge is: read first, so passages found by later hops do not change an entity resolved."""
    named = meaningful_tokens(" ".join(named_entities(bridge.clue)))
    about = [f for f in facts if (title := meaningful_tokens(title_name(f))) and title <= named]
    naming = [f for f in facts if named <= meaningful_tokens(f.title + " " + f.text)]
    return named, about, naming


def resolve_bridge(question: str, facts: list, asked: str = "", reader: ReaderModel | None = None
                   ) -> tuple[str, Extracted] | None:
    """The question with its innermost bridge replaced by the named thing the facts give for it,
    read like a question of its own: the head's type, near the clue's words, not the clue itself
    nor anything else the question (or its `asked` original wording) names; scored by `reader`'s
    weights (the program's own, else the shipped ones)."""
    bridge = bridge_phrase(question)
    if bridge is None or not facts:
        return None
    clue = f"{bridge.head} {bridge.clue}"
    named, about, naming = clue_passages(bridge, facts)
    for candidates in (about, naming):
        if candidates:
            found = extract_span(clue, bridge.kind, candidates, head=bridge.head, not_answers=f"{question} {asked}", use_adapter=False,
                                 unlike=frozenset(named), kinds=NAMED_KINDS, reader=reader)
            if found is not None:
                return question[:bridge.start] + found.span + question[bridge.end:], found
    return None


def resolve_bridges(question: str, facts: list, reader: ReaderModel | None = None, hops: int = 3) -> str:
    """The question with as many bridges resolved, innermost first, as the facts allow, each by
    `resolve_bridge` with `reader`'s weights."""
    original = question
    for _ in range(hops):
        resolved = resolve_bridge(question, facts, asked=original, reader=reader)
        if resolved is None:
            break
        question = resolved[0]
    return question
