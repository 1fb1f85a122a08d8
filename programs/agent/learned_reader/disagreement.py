"""Passages that disagree on the value asked for: each passage read alone gives its own answer,
and when confident answers differ, the answer must say so."""

from __future__ import annotations

from deltaseek.metrics.answers import normalize_answer
from deltaseek.programs.agent.learned_reader.model import ReaderModel
from deltaseek.programs.agent.learned_reader.questions import expected_answer_types
from deltaseek.programs.agent.learned_reader.read import extract_span

VALUE_KINDS = ("number", "date")
"""The answers that are values: two passages naming two people may both be right ("Who
founded it?"), two passages giving two lengths for one crossing are not."""


def disagreeing_values(question: str, facts: list, reader: ReaderModel) -> list[str]:
    """The different values the passages read give, each read alone with the reader's confidence
    above its threshold, in the order first read; empty when they agree or the question asks for
    no value."""
    kinds = expected_answer_types(question)
    if len(kinds) != 1 or kinds[0] not in VALUE_KINDS:
        return []
    values: dict[str, str] = {}
    for fact in facts:
        found = extract_span(question, kinds[0], [fact], reader=reader, use_adapter=False)  # the ranker: fast
        if found is not None and not found.unsure:
            values.setdefault(normalize_answer(found.span), found.span)
    return list(values.values()) if len(values) > 1 else []
