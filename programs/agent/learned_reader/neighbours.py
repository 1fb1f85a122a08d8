"""Features of a candidate's neighbourhood that look past single words: the question's word pairs
in its sentence and window, the question's words right beside it, and how it compares with the
question's other candidates (the one nearest the question's words in its sentence, the one whose
window holds most of the question). "When did the old bridge close?" is read in "the old bridge
closed in 1990" by the pair "old bridge" and by "closed" just before the year.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict

from deltaseek.programs.text import fold_accents, stem, stopwords

NEIGHBOUR_FEATURES = ("question_bigrams_in_sentence", "question_bigrams_in_window", "left_three_in_question",
                      "right_three_in_question", "nearest_in_sentence", "best_window", "window_gap")
WINDOW_WORDS = 6
BESIDE_WORDS = 3


def question_pairs(question: str) -> tuple[set[tuple[str, str]], set[str]]:
    """The question's pairs of adjacent word stems (not both function words) and its content stems."""
    words = [(stem(w), w.lower() in stopwords()) for w in re.findall(r"\w[\w'’]*", fold_accents(question))]
    pairs = {(a, b) for (a, function_a), (b, function_b) in zip(words, words[1:]) if not (function_a and function_b)}
    return pairs or {("", "")}, {s for s, function in words if not function}


def add_neighbour_features(question: str, rows: list) -> list:
    """Write `NEIGHBOUR_FEATURES` into each row's features (rows: `read.Scored`); the rows, for chaining."""
    pairs, content = question_pairs(question)
    best_window = max((r.features.get("window_share", 0.0) for r in rows), default=0.0)
    by_sentence = defaultdict(list)
    for r in rows:
        by_sentence[id(r.sentence)].append(r)
    for same_sentence in by_sentence.values():
        # a sentence's words are read once for all its candidates: where the question's pairs
        # stand (pair i joins words i and i + 1) and which words are the question's
        stems = [s for _, s in same_sentence[0].sentence.words]
        offsets = [o for o, _ in same_sentence[0].sentence.words]
        hits = [(i, pair) for i, pair in enumerate(zip(stems, stems[1:])) if pair in pairs]
        in_sentence = len({pair for _, pair in hits}) / len(pairs)
        asked = [s in content for s in stems]
        nearest = max(r.features.get("closeness", 0.0) for r in same_sentence)
        for r in same_sentence:
            first = bisect.bisect_left(offsets, r.candidate.start)
            last = max(first, bisect.bisect_left(offsets, r.candidate.end) - 1)
            left, right = max(0, first - WINDOW_WORDS), last + 1 + WINDOW_WORDS
            in_window = {pair for i, pair in hits if left <= i < first - 1 or last < i < right - 1}
            window_share = r.features.get("window_share", 0.0)
            r.features.update({
                "question_bigrams_in_sentence": in_sentence,
                "question_bigrams_in_window": len(in_window) / len(pairs),
                "left_three_in_question": sum(asked[max(0, first - BESIDE_WORDS):first]) / BESIDE_WORDS,
                "right_three_in_question": sum(asked[last + 1:last + 1 + BESIDE_WORDS]) / BESIDE_WORDS,
                "nearest_in_sentence": float(r.features.get("closeness", 0.0) == nearest),
                "best_window": float(best_window > 0 and window_share == best_window),
                "window_gap": best_window - window_share})
    return rows
