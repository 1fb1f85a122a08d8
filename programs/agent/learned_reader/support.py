"""How surely a sentence answers a question as written: the ranker's `support` feature, read
from the question's text, with what a name of several words adds. The small profile's check asks
this of the sentence holding a model's answer (`checks.answer_support`).
"""

from __future__ import annotations

import re

from deltaseek.programs.agent.learned_reader.features import question_view, rarity, support
from deltaseek.programs.agent.learned_reader.questions import sentences
from deltaseek.programs.text import capitalized_run, normalize_query, without_opening_word

MISSING_NAME_COST = 0.5
"""What a name of the question the passage never writes costs, as in `features.support`."""
_NAME_RUN = re.compile(r"\b" + capitalized_run(r"[A-Z][\w'’-]*", "of|the|de|van|von"))


def unmatched_name_runs(question: str, passage: str) -> list[str]:
    """Names of several words in the question that the passage never writes as one phrase:
    "the Vey Bridge" asked of a passage that names "the Vey" and "Tern Bridge" apart."""
    said = f" {normalize_query(passage)} "
    runs = [re.sub(r"^(?:The|A|An)\s+", "", run) for run in _NAME_RUN.findall(without_opening_word(question))]
    return [run for run in runs if len(run.split()) > 1 and f" {normalize_query(run)} " not in said]


def facts_rarity(facts: list) -> dict[str, float]:
    """How rare each word stem is among the facts' sentences (`features.rarity`)."""
    return rarity([s for f in facts for s in sentences(f.text)])


def question_support(question: str, sentence: str, fact, rare: dict[str, float] | None = None) -> float:
    """`features.support` of the sentence for the question (its words weighed by `rare`, their
    rarity among the facts read), less `MISSING_NAME_COST` for each name of several words the
    passage never writes as one phrase: "When was the Iron Vey Bridge built?" is not answered by
    a passage about the iron bridge over the Vey."""
    view = question_view(question, "other", rare or {})
    runs = unmatched_name_runs(question, f"{fact.title} {fact.text}")
    return round(max(0.0, support(view, sentence, fact) - MISSING_NAME_COST * len(runs)), 3)
