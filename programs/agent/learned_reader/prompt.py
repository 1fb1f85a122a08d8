"""What the reader adapter reads: the question and the best sentences of the facts found.

One function builds the prompt for training (`optimize/train_adapter.py`) and for reading
(`adapter.py`), so the adapter is trained on passages as the agent gives them: the sentences the
reader's own ranking puts first, distractors and all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deltaseek.programs.agent.learned_reader.ranking import rank_sentences
from deltaseek.programs.text import meaningful_tokens, named_entities

PROMPT_SENTENCES = 4
"""Sentences the adapter reads: on 150 questions of SQuAD's dev articles, with six passages read,
the best 3, 4 and 5 hold the gold for 73%, 75% and 79%, and the shipped adapter read F1 0.31,
0.34 and 0.31 on the answerable ones in 0.86, 1.00 and 1.15 s (2 cores; measured before figures
could be read, docs/reader-adapter.md): each sentence more costs prompt time and brings
distractors."""
TRAIN_SENTENCES = 5
"""Sentences a training prompt holds: one more than a reading shows, so the adapter learns to
pass over distractors."""
SENTENCE_WORDS = 60
"""A sentence is cut after this many words: a run-on table row would fill the prompt alone."""
NOT_STATED = "not stated"
"""What the adapter answers when the sentences do not hold the answer."""


@dataclass(frozen=True)
class Passage:
    """The sentences shown, best first, with the source of each, and the text they make."""

    sentences: tuple[str, ...]
    sources: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    def source_of(self, span: str) -> tuple[str, str]:
        """(sentence, source) of the first sentence holding `span`; the first sentence otherwise."""
        for sentence, source in zip(self.sentences, self.sources):
            if span.lower() in sentence.lower():
                return sentence, source
        return (self.sentences[0], self.sources[0]) if self.sentences else ("", "")


def best_sentences(question: str, facts: list, limit: int = PROMPT_SENTENCES) -> Passage:
    """The `limit` sentences of the facts the reader's ranking puts first for the question, each
    once (two passages often quote the same sentence)."""
    subject = frozenset(meaningful_tokens(" ".join(named_entities(question))))
    shown: dict[str, str] = {}
    for _, sentence, fact in rank_sentences(meaningful_tokens(question), facts, subject):
        shown.setdefault(" ".join(sentence.split()[:SENTENCE_WORDS]), str(getattr(fact, "source", "")))
        if len(shown) == limit:
            break
    return Passage(tuple(shown), tuple(shown.values()))


def reader_prompt(question: str, passage: Passage) -> str:
    """The adapter's prompt; its answer follows after a space and ends with a newline."""
    return f"Passage: {passage.text}\nQuestion: {' '.join(question.split())}\nAnswer:"


def held_answer(passage: Passage, answers: tuple[str, ...]) -> str | None:
    """The first gold answer the passage writes as words of its own, as the passage writes it (its
    own casing), or None: the target the adapter learns, "not stated" when None. A gold inside a
    longer word or number is not written there ("no" in "north", "7" in "1978")."""
    for answer in (a.strip() for a in answers):
        found = re.search(word_pattern(answer), passage.text, re.IGNORECASE) if answer else None
        if found:
            return found.group(0)
    return None


def word_pattern(text: str) -> str:
    """A pattern finding `text` where no letter or digit runs on from either end of it."""
    return ((r"(?<!\w)" if text[:1].isalnum() else "") + re.escape(text)
            + (r"(?!\w)" if text[-1:].isalnum() else ""))