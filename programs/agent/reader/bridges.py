"""Bridges: what a multi-hop question names only through another passage ("the designer of
Tern"), resolved to the entity the facts name for it, so the rest of the question can be read
like a question of its own. The learned reader's patterns (`learned_reader.bridges`), and two
more: a birthplace or hometown needs no article, and "Ada Lind's city of birth".
"""

from __future__ import annotations

import re

from deltaseek.programs.agent.learned_reader import bridges as learned
from deltaseek.programs.agent.learned_reader.bridges import ENTITY_RUN, HEADS, PERSON_HEADS, PLACE_HEADS
from deltaseek.programs.agent.learned_reader.questions import AnswerType
from deltaseek.programs.agent.learned_reader.read import Extracted
from deltaseek.programs.agent.reader.read import extract_span

BRIDGES = [
    *learned.BRIDGES[:3],
    # "the airport in birth place of X": a birthplace needs no article
    re.compile(rf"\b(?:the )?(?P<head>birth ?place|hometown) of (?P<clue>{ENTITY_RUN})"),
    # "Blue Harbor's performer", "Glass Tide's main director", "Ada Lind's city of birth"
    re.compile(rf"(?P<clue>{ENTITY_RUN})['’]s (?:[a-z]+ ){{0,2}}?(?P<head>{HEADS})(?: of birth)?\b"),
]


class Bridge(learned.Bridge):
    """A bridge whose head may be written "birth place"."""

    @property
    def kind(self) -> AnswerType:
        noun = self.head.replace("birth place", "birthplace").split()[0]  # "place of birth"
        return "place" if noun in PLACE_HEADS else "person" if noun in PERSON_HEADS else "entity"


def bridge_phrase(question: str) -> Bridge | None:
    """The innermost bridge of the question (`learned_reader.bridges.bridge_phrase`, with these
    patterns): "Who is the mayor of Tarbury?" asks for the mayor itself, "Where was the designer of
    Tern born?" for something about the designer."""
    return learned.bridge_phrase(question, BRIDGES, Bridge)


def resolve_bridge(question: str, facts: list, asked: str = "") -> tuple[str, Extracted] | None:
    """The question with its innermost bridge replaced by the entity the facts name for it, read
    like a question of its own: the head's type, near the clue's words, not the clue itself nor
    anything else the question (or its `asked` original wording) names."""
    bridge = bridge_phrase(question)
    if bridge is None or not facts:
        return None
    clue = f"{bridge.head} {bridge.clue}"
    named, about, naming = learned.clue_passages(bridge, facts)
    found = None
    for candidates, kind in ((about, bridge.kind), (naming, bridge.kind), (about, "entity"), (naming, "entity")):
        if candidates and (kind == bridge.kind or bridge.kind == "place"):  # "a river in Moss": no cue word
            # what the clue names is not the bridge: "Ada Lind's team" is not "Ada M. Lind"
            found = extract_span(clue, kind, candidates, head=bridge.head, not_answers=f"{question} {asked}",
                                 unlike=frozenset(named))
        if found is not None:
            break
    if found is None:
        return None
    return question[:bridge.start] + found.span + question[bridge.end:], found


def resolve_bridges(question: str, facts: list, hops: int = 3) -> str:
    """The question with as many bridges resolved, innermost first, as the facts allow."""
    return learned.resolve_bridges(question, facts, hops, resolve=resolve_bridge)
