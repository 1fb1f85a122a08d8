"""The facts' sentences ranked against a question: what the ranker's candidates come from and
what the reader adapter's prompt shows."""

from __future__ import annotations

import re

from deltaseek.programs.agent.learned_reader.questions import sentences
from deltaseek.programs.text import fold_accents, meaningful_tokens


def rank_sentences(question_terms: set[str], facts: list, subject_terms: frozenset[str] = frozenset()
                   ) -> list[tuple[float, str, object]]:
    """(score, sentence, fact) for every sentence of the facts, best first: BM25 over the sentences
    themselves (bm25s), plus a share of the whole passage's overlap with the question, which carries
    the context a single sentence leaves to pronouns, and more for a passage naming the subject.
    The sentences' words are read without their accents, as the question's are."""
    import bm25s

    rows = [(s, fact) for fact in facts for s in sentences(fact.text)]
    if not rows or not question_terms:
        return []
    retriever = bm25s.BM25()
    retriever.index([re.findall(r"\w+", fold_accents(s.lower())) for s, _ in rows], show_progress=False)
    terms = [t for t in question_terms if t in retriever.vocab_dict]
    if not terms:
        return []
    ids, scores = retriever.retrieve([terms], k=len(rows), show_progress=False)
    ranked, passage_words = [], {}
    for i, score in zip(ids[0], scores[0]):
        sentence, fact = rows[int(i)]
        if id(fact) not in passage_words:
            passage_words[id(fact)] = meaningful_tokens(fact.title + " " + fact.text)
        words = passage_words[id(fact)]
        passage = len(question_terms & words) / len(question_terms)
        about = len(subject_terms & words) / len(subject_terms) if subject_terms else 0.0
        ranked.append((float(score) + passage + 2.0 * about, sentence, fact))
    return sorted(ranked, key=lambda r: -r[0])
