"""The question a run is asked: checked before anything runs."""

from __future__ import annotations

from deltaseek.errors import UsageError

MAX_QUESTION_CHARS = 2000
"""Longer input is not a question but a document: every step's prompt would overflow the context."""


def check_question(question: str) -> str:
    """The question, stripped; UsageError when it is empty or longer than MAX_QUESTION_CHARS. Empty
    means nothing printable is left: control and zero-width characters alone ("\\x00", "\\u200b")
    would run the whole search on nothing and quote an unrelated passage; punctuation alone ("???")
    holds no word to search for either."""
    question = (question or "").strip()
    if not any(char.isprintable() and not char.isspace() for char in question):
        raise UsageError("the question is empty")
    if not any(char.isalnum() for char in question):  # "???": every query built from it would be invented
        raise UsageError("the question is empty: it holds no word, only punctuation or symbols")
    if len(question) > MAX_QUESTION_CHARS:
        raise UsageError(f"the question is {len(question):,} characters long; at most {MAX_QUESTION_CHARS:,} are "
                         "accepted (put documents in a corpus and ask about them)")
    return question
