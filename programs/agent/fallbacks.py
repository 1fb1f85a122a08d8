"""The program's own moves, used where the LM's proposal is missing or unusable: a task kind from
the question's words, a query built for a strategy, the best evidence quoted as the answer."""

from __future__ import annotations

import re
from collections import Counter

from deltaseek.programs.agent.learned_reader import ReaderModel, bridge_phrase, resolve_bridges
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad
from deltaseek.programs.text import meaningful_tokens, named_entities


PROXY_TERMS = ("statistics", "usage", "downloads", "stars", "users")
"""What stands in for an unpublished figure (seed 000: GitHub stars, downloads, case studies)."""


def best_effort_fact(pad: Scratchpad) -> Fact | None:
    """The fact that best matches the question: its named subjects count double."""
    if not pad.facts:
        return None
    terms = meaningful_tokens(pad.question)
    subjects = meaningful_tokens(" ".join(named_entities(pad.question)))

    def relevance(fact: Fact) -> int:
        words = meaningful_tokens(fact.title + " " + fact.text)
        return len(terms & words) + len(subjects & words)

    return max(pad.facts, key=relevance)


def heuristic_task_kind(question: str) -> str:
    q = question.lower()
    if re.search(r"\b(interface|class|function|method|module|codebase|repository|repo)\b", q):
        return "codebase"
    if re.search(r"\b(rate|adoption|percentage|share|how many|statistics?|market)\b", q):
        return "aggregate_or_ill_posed"
    if re.search(r"\b(vs\.?|versus|compare|compared|difference between)\b", q):
        return "comparison"
    if re.search(r"\b(of the|creator|founder|author|whose|born)\b", q) and len(named_entities(question)) >= 1:
        return "multi_hop"
    if bridge_phrase(question):  # "the county where X is located": found through another passage first
        return "multi_hop"
    return "lookup"


def heuristic_query(pad: Scratchpad, strategy: str, reader: ReaderModel | None = None) -> str | None:
    """A deterministic query when the LM gives none usable, for the strategies that need no
    world knowledge. `narrower` is pseudo-relevance feedback: the question's terms plus the
    terms the facts found repeat most that no query has used yet. `bridge` is a multi-hop
    question's next hop: its terms with the bridge the facts resolved ("the guild which
    published X" -> "Tarbury Writers' Guild") in place of the clue already searched.
    Once a bridge is resolved, the other strategies build on the resolved question too. Bridges
    are resolved with the `reader` the program reads with (None: the shipped one)."""
    question = resolve_bridges(pad.question, pad.facts, reader)
    keywords = sorted(meaningful_tokens(question))
    if strategy == "bridge":
        return " ".join(keywords) if question != pad.question else None
    if strategy == "direct":
        return " ".join(keywords) or None
    if strategy == "entity-focused":  # of a multi-hop question, what its innermost clue names: the first hop
        bridge = bridge_phrase(question)
        return " ".join(named_entities(bridge.clue if bridge else "") or named_entities(question)) or None
    if strategy == "broader":  # the topic without the particular thing named
        named = meaningful_tokens(" ".join(named_entities(question)))
        return " ".join(k for k in keywords if k not in named) or None
    if strategy == "proxies":  # indirect signals when a figure is not published
        subjects = named_entities(question) or keywords[:2]
        return " ".join(subjects + list(PROXY_TERMS)) or None
    if strategy == "temporal":
        years = sorted(set(re.findall(r"\b(?:19|20)\d{2}\b", " ".join(f.text for f in pad.facts))))
        return " ".join(keywords + [years[-1] if years else "latest"]) or None
    if strategy == "narrower" and pad.facts:
        used = set(keywords).union(*(meaningful_tokens(q) for q in pad.tried_queries))
        counts = Counter(t for f in pad.facts for t in re.findall(r"[a-z0-9]{3,}", f.text.lower())
                         if t not in used and t in meaningful_tokens(t))
        return " ".join(keywords + [t for t, _ in counts.most_common(3)]) or None
    return None


def clean_items(items) -> list[str]:
    """Drop the empty and punctuation-only entries a small model pads its lists with."""
    return [text for text in (str(i).strip() for i in items or [] if i is not None) if re.search(r"[A-Za-z0-9]{2,}", text)]
