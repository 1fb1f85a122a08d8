"""The extractive answer floor: read the facts found and pull out the span that answers the question.

No LM: the question's wording decides the expected answer type (person, place, date, number,
address, yes/no, other); the facts' sentences are ranked against the question with BM25; in the
best sentences, spans of the expected type are scored by how close they stand to the question's
own words. A span the question already contains is never an answer. At 135M parameters code
reads a passage better than the model does; a capable model's answer passes `answer_fits_question`
and is kept.

The reader's parts: `spans` (what could answer a type), `read` (the best span of one question
part and how surely its sentence answers), `bridges` (multi-hop questions). Question types and
comparisons are read as the learned reader reads them.
"""

from __future__ import annotations

from deltaseek.programs.agent.learned_reader.comparisons import compare_options, compare_pair, question_options
from deltaseek.programs.agent.learned_reader.questions import (AnswerType, asked_noun, expected_answer_types,
                                                           metric_phrase, metric_terms, question_names,
                                                           question_parts, sentences)
from deltaseek.programs.agent.learned_reader.read import Extracted
from deltaseek.programs.agent.reader.bridges import Bridge, bridge_phrase, resolve_bridge, resolve_bridges
from deltaseek.programs.agent.reader.read import (LARGE_PLACE_HEADS, extract_span, facts_by_relevance, rank_sentences,
                                                  rarity, states_the_metric, support, unmatched_name_runs)
from deltaseek.programs.agent.reader.spans import (candidate_spans, defined_title, fits_type, full_name, in_a_name,
                                                   lowercase_words, title_name)
from deltaseek.programs.text import meaningful_tokens


def extract_answer(question: str, facts: list) -> list[Extracted]:
    """One extracted span per part of the question, read with its bridges resolved from the facts
    ("the first president of the guild which published X" as "... of the Tarbury Writers'
    Guild"); later parts read with the earlier answers ("where was she born" after "Ada Lind")."""
    original, question = question, resolve_bridges(question, facts)
    kinds = expected_answer_types(question)
    found: list[Extracted] = []
    for part, kind in zip(question_parts(question), kinds):
        context = set().union(*(meaningful_tokens(e.span) for e in found)) if found else set()
        span = extract_span(part, kind, facts, extra_terms=context, not_answers=original)
        if span is not None:
            found.append(span)
    return found


__all__ = ["AnswerType", "Bridge", "Extracted", "LARGE_PLACE_HEADS", "asked_noun", "bridge_phrase", "candidate_spans",
           "compare_options", "compare_pair", "defined_title", "expected_answer_types", "extract_answer",
           "extract_span", "facts_by_relevance", "fits_type", "full_name", "in_a_name", "lowercase_words",
           "metric_phrase", "metric_terms", "question_names", "question_options", "question_parts", "rank_sentences",
           "rarity", "resolve_bridge", "resolve_bridges", "sentences", "states_the_metric", "support", "title_name",
           "unmatched_name_runs"]
