"""The reader: what the facts found say in answer to the question, and how surely.

One set of language rules (the question's parts and answer types, candidate spans, bridges,
comparisons), learned weights that score the candidates and decide when to abstain, and, where the
reader names one, a reader adapter of the embedded model that reads the answer's span.
`extract_answer(question, facts, reader)` is its entry: one `Extracted` per part of the question
(the span, its sentence and source, the answer type, the ranker's score and the answerability
model's confidence). `reader` is the program's own weights (`DeltaSeek.learned_reader()`: trained
by a compile, `--reader PATH`), else the shipped ones.

- `questions`: the parts of a question and the type of answer each asks for;
- `candidates`: every span that could answer (names, dates, figures, addresses, phrases);
- `features`: what a reader looks at in a candidate, as named numbers;
- `support`: how surely a sentence answers a question as written (the small profile's check);
- `model`: the learned ranker and answerability model, weights as JSON;
- `ranking`: the facts' sentences ranked against the question;
- `read`: candidates scored in the best sentences of the facts, or the adapter's span;
- `prompt`, `adapter`, `adapter_file`: the reader adapter (a LoRA adapter of the embedded model that
  llama.cpp applies), its prompt and its GGUF file;
- `bridges`, `comparisons`: multi-hop questions and questions that compare two things;
- `train`: fitting the models on labeled questions.
"""

from __future__ import annotations

from deltaseek.programs.agent.learned_reader.bridges import Bridge, bridge_phrase, resolve_bridge, resolve_bridges
from deltaseek.programs.agent.learned_reader.candidates import candidate_spans, fits_type
from deltaseek.programs.agent.learned_reader.comparisons import (choice_options, compare_options, compare_pair,
                                                                 facts_about, names_an_option, option_by_support,
                                                                 question_options)
from deltaseek.programs.agent.learned_reader.model import ReaderModel, load_reader, shipped_reader
from deltaseek.programs.agent.learned_reader.questions import (AnswerType, expected_answer_types, metric_phrase,
                                                               metric_terms, question_parts, sentences)
from deltaseek.programs.agent.learned_reader.read import (Extracted, candidate_rows, extract_span,
                                                          facts_by_relevance, option_by_adapter, score_rows,
                                                          summary_features)
from deltaseek.programs.agent.learned_reader.support import facts_rarity, question_support, unmatched_name_runs
from deltaseek.programs.text import meaningful_tokens


def extract_answer(question: str, facts: list, reader: ReaderModel | None = None) -> list[Extracted]:
    """One extracted span per part of the question, read with its bridges resolved from the facts
    ("the guild which printed the Almanac" as the guild's name); later parts read with the earlier
    answers ("where was she born" after the name the first part found)."""
    original, question = question, resolve_bridges(question, facts, reader)
    found: list[Extracted] = []
    for part, kind in zip(question_parts(question), expected_answer_types(question)):
        context = set().union(*(meaningful_tokens(e.span) for e in found)) if found else set()
        span = extract_span(part, kind, facts, extra_terms=context, not_answers=original, reader=reader)
        if span is not None:
            found.append(span)
    return found


def states_the_metric(question: str, extracted: Extracted) -> bool:
    """Whether a number comes from a sentence about the asked figure itself, not a related one
    (members and branches are proxies for a share of the vote, not the share)."""
    wanted = metric_terms(question)
    return not wanted or bool(wanted & meaningful_tokens(extracted.sentence))


__all__ = ["AnswerType", "Bridge", "Extracted", "ReaderModel", "bridge_phrase", "candidate_rows", "candidate_spans",
           "choice_options", "compare_options", "compare_pair", "expected_answer_types", "extract_answer",
           "extract_span", "facts_about", "facts_by_relevance", "facts_rarity", "fits_type", "load_reader",
           "metric_phrase", "metric_terms", "names_an_option", "option_by_adapter", "option_by_support",
           "question_options", "question_parts", "question_support", "resolve_bridge", "resolve_bridges",
           "score_rows", "sentences", "shipped_reader", "states_the_metric", "summary_features",
           "unmatched_name_runs"]
