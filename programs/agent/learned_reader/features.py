"""Features of a candidate answer: named, pure functions of the question, the candidate, its
sentence and its passage. The learned model weighs them; each says one thing a reader looks at
(does the sentence say what the question says, how near the candidate stands to those words, is
it of the kind asked for, does the question already contain it).
"""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from deltaseek.programs.agent.learned_reader.candidates import Candidate, KINDS, title_name
from deltaseek.programs.agent.learned_reader.questions import (ANSWER_TYPES, NEGATION, PRESENT, asked_noun,
                                                           question_names)
from deltaseek.programs.text import acronyms, fold_accents, meaningful_tokens, stem, stopwords

NAME_WEIGHT = 2.0
"""A name or a number of the question counts this many ordinary words: it is what makes the
question about one thing and not another."""
CONTEXT_NAME_CREDIT = 0.2
"""What a question's name counts, of its weight, when the passage holds it outside the sentence:
a passage names what it is about once and leaves it to context after."""
WINDOW_WORDS = 6
"""How many words either side of a candidate count as its neighbourhood."""
PAST_RANGE = re.compile(r"\b(?:served|former(?:ly)?|was previously|until)\b|\bfrom \d{4} to \d{4}\b", re.I)
PRONOUN = re.compile(r"\b(?:he|she|they|it|his|her|its)\b", re.I)
PREVIOUS_WORDS = ("by", "in", "on", "at", "from", "of", "as", "is", "was", "are", "were", "called", "named", "to",
                  "the", "a", "and", "for", "with", "than")
"""Function words whose presence just before a candidate says what role it plays ("by" an agent,
"in" a place or time, "called" a name)."""
COMMON_HEADS = frozenset("""assembly university college school state states senate house court company corporation
inc ltd party building street avenue river city county republic kingdom department ministry council committee
association foundation institute museum prize award series film festival league club team church hospital
airport station bank index day week month year season century era war act law treaty agreement studio records
magazine press news network channel radio television edition island mountain lake sea ocean valley region
province district village castle bridge tower park square hall center centre license licence standard
protocol language framework system software album song novel book game""".split())
"""Common nouns that end the names of institutions, places, events and times ("... General Assembly",
"Christmas Day", "... River"): a name that ends with one is rarely a person's."""
_TOKEN = re.compile(r"\w[\w'’]*")
_WH = re.compile(r"\b(what|which|who|whom|whose|when|where|why|how)\b\s*(\w*)", re.I)
_BE_DO = {"is": "be", "was": "be", "are": "be", "were": "be", "does": "do", "did": "do", "do": "do", "has": "do",
          "had": "do", "have": "do", "can": "do", "could": "do", "would": "do", "will": "do"}


@lru_cache(maxsize=1 << 12)
def stems_of(text: str) -> frozenset[str]:
    """The meaningful words of a text as five-letter stems, with its figures and initials.
    Remembered (the last 4,096 texts, about 10 MB): the same passages and sentences are read
    for every question asked of them."""
    return frozenset({stem(w) for w in meaningful_tokens(text)} | {stem(n) for n in re.findall(r"\d[\d,.]*\d|\d", text)}
                     | {stem(a) for a in acronyms(text)})


def rarity(texts: list[str]) -> dict[str, float]:
    """How rare each word stem is among the texts (inverse document frequency, log(1 + N / df)):
    a question word few sentences use says more about which one answers it."""
    counts: dict[str, int] = {}
    for text in texts:
        for s in stems_of(text):
            counts[s] = counts.get(s, 0) + 1
    return {s: math.log(1 + len(texts) / n) for s, n in counts.items()}


def wh_key(question: str) -> str:
    """The question's asking phrase, generalized: "how many", "what+noun" ("What river ..."),
    "what+be" ("What is ..."), "who"; "none" when it has no question word."""
    match = _WH.search(question)
    if not match:
        return "none"
    wh, after = match.group(1).lower(), match.group(2).lower()
    if wh == "how":
        return f"how {after}"
    if wh in ("what", "which"):
        return f"{wh}+{_BE_DO.get(after, 'noun')}"
    return wh


def shape(text: str) -> str:
    """The candidate's shape, word by word (at most three): "Xx" capitalized, "d" digits, "x" lowercase."""
    kinds = ["d" if w[:1].isdigit() else "Xx" if w[:1].isupper() else "x" for w in text.split()]
    return " ".join(kinds[:3]) + ("+" if len(kinds) > 3 else "")


@dataclass
class QuestionView:
    """What every candidate is compared with, computed once per question."""

    question: str
    kind: str
    weights: dict[str, float]
    names: set[str]
    asked_words: set[str]
    head: str | None
    present: bool
    negated: bool
    numbers: set[str]
    wh: str = "none"

    @property
    def total(self) -> float:
        return sum(self.weights.values()) or 1.0

    def share(self, stems: set[str]) -> float:
        """The weighted share of the question's words among these stems."""
        return sum(w for s, w in self.weights.items() if s in stems) / self.total


def question_view(question: str, kind: str, rare: dict[str, float], not_answers: str = "") -> QuestionView:
    names = question_names(question)
    terms = {stem(w) for w in meaningful_tokens(question)} | names
    top = max(rare.values(), default=1.0)
    weights = {t: (NAME_WEIGHT if t in names else 1.0) * rare.get(t, top) for t in terms}
    asked = {w.lower() for w in re.findall(r"\w+", fold_accents(f"{question} {not_answers}"))}
    return QuestionView(question, kind, weights, names, asked, asked_noun(question), bool(PRESENT.search(question)),
                        bool(NEGATION.search(question)), set(re.findall(r"\d+", question)), wh_key(question))


@dataclass
class SentenceView:
    """A sentence of a passage with its words' positions and what it shares with the question."""

    text: str
    fact: object
    rank: int
    relevance: float
    passage_rank: int
    words: list[tuple[int, str]] = field(default_factory=list)
    """(character offset, stem) of every word."""
    passage_stems: frozenset[str] = frozenset()
    title_stems: frozenset[str] = frozenset()
    """The words of the passage's title: a passage is about what its title names."""
    facts_text: str = ""
    """Every fact read, lowercased: how often a candidate is written there is a feature."""

    @cached_property
    def clause_marks(self) -> list[tuple[int, int]]:
        """(start, end) of each mark that opens a clause (`clause_subject`), found once for all the sentence's candidates."""
        return [(m.start(), m.end()) for m in _CLAUSE_START.finditer(self.text)]


def sentence_view(text: str, fact, rank: int, relevance: float, passage_rank: int,
                  passage_stems: frozenset[str] | None = None) -> SentenceView:
    words = [(m.start(), stem(fold_accents(m.group(0)))) for m in _TOKEN.finditer(text)]
    passage = stems_of(f"{fact.title} {fact.text}") if passage_stems is None else passage_stems
    return SentenceView(text, fact, rank, relevance, passage_rank, words, passage, stems_of(title_name(fact)))


def support(question: QuestionView, sentence: str, fact, passage: frozenset[str] | None = None) -> float:
    """How much of what the question says the answer's sentence says too, from 0 to 1: the
    rarity-weighted share of the question's words that the sentence or its passage's title
    holds (a name elsewhere in the passage counts `CONTEXT_NAME_CREDIT` of its weight), less
    half for each name of the question the whole passage lacks, and for a negation the sentence
    lacks. "When did the bridge over the Vey open?" is well supported by "The bridge across the
    Vey opened in 1911." and poorly by "The tunnel under the Vey opened in 1911."."""
    near = stems_of(f"{title_name(fact)} {sentence}")
    passage = stems_of(f"{fact.title} {fact.text}") if passage is None else passage
    share = sum(w if s in near else CONTEXT_NAME_CREDIT * w if s in question.names and s in passage else 0.0
                for s, w in question.weights.items()) / question.total
    missing = sum(1 for s in question.names if s not in passage)
    if question.negated and not NEGATION.search(sentence):
        missing += 1  # "Who was not invited?" is not answered by a sentence saying who was
    return round(max(0.0, share - 0.5 * missing), 3)


def feature_names() -> list[str]:
    """Every feature, in the order the model's weights are stored."""
    names = ["sentence_rank", "sentence_relevance", "passage_rank", "sentence_share", "window_share",
             "name_share", "passage_name_share", "support", "closeness", "log_distance", "no_anchor",
             "in_question_share", "all_in_question", "length_1", "length_2", "length_3", "length_4_plus",
             "capitalized", "has_digit", "opens_sentence", "lowercase_elsewhere", "head_in_candidate",
             "past_for_present", "question_number_in_sentence", "pronoun_sentence", "after_anchor", "before_anchor",
             "left_share", "right_share", "previous_in_question", "next_in_question", "inner_function_word",
             "top_sentence", "repeats_in_facts", "sentence_length_log", "in_passage_title", "clause_subject"]
    names += [f"ask_{t}_common_head" for t in ANSWER_TYPES]
    names += [f"kind_{k}" for k in KINDS]
    names += [f"ask_{t}_{k}" for t in ANSWER_TYPES for k in KINDS]
    names += [f"previous_{w}" for w in PREVIOUS_WORDS]
    return names


FEATURES = feature_names()
LEXICAL_PREFIX = "lex:"
"""What every name `lexical_features` makes starts with: those features are learned from the
training words, so a reader's ranker holds the ones it kept beside every name of FEATURES."""


def candidate_features(question: QuestionView, view: SentenceView, candidate: Candidate, ordinary: set[str],
                       support_score: float) -> dict[str, float]:
    """The features of one candidate in its sentence (see `FEATURES`)."""
    offsets = [offset for offset, _ in view.words]
    first = bisect.bisect_left(offsets, candidate.start)
    last = max(first, bisect.bisect_left(offsets, candidate.end) - 1)
    inside = {s for _, s in view.words[first:last + 1]}
    left = {s for _, s in view.words[max(0, first - WINDOW_WORDS):first]}
    right = {s for _, s in view.words[last + 1:last + 1 + WINDOW_WORDS]}
    around = left | right
    before = {s for _, s in view.words[max(0, first - 2):first]} if candidate.end > candidate.start else set()
    after = {s for _, s in view.words[last + 1:last + 3]} if candidate.end > candidate.start else set()
    anchors = [i for i, (_, s) in enumerate(view.words) if s in question.weights and not first <= i <= last]
    distance = min((abs(i - first) if i < first else abs(i - last) for i in anchors), default=30)
    words = [w.lower() for w in re.findall(r"\w+", fold_accents(candidate.text))] or [""]
    in_question = sum(w in question.asked_words for w in words) / len(words)
    sentence_stems = {s for _, s in view.words}
    passage_stems = view.passage_stems
    names = question.names or {""}
    previous = view.text[:candidate.start].split()[-1:] or [""]
    length = len(words)
    values = {
        "sentence_rank": 1.0 / (1 + view.rank),
        "sentence_relevance": view.relevance,
        "passage_rank": 1.0 / (1 + view.passage_rank),
        "sentence_share": question.share(sentence_stems),
        "window_share": question.share(around),
        "name_share": len(question.names & sentence_stems) / len(names),
        "passage_name_share": len(question.names & passage_stems) / len(names),
        "support": support_score,
        "closeness": 1.0 / (1 + distance / 4),
        "log_distance": math.log1p(distance),
        "no_anchor": float(not anchors),
        "in_question_share": in_question,
        "all_in_question": float(in_question == 1.0),
        "length_1": float(length == 1), "length_2": float(length == 2), "length_3": float(length == 3),
        "length_4_plus": float(length >= 4),
        "capitalized": float(candidate.text[:1].isupper()),
        "has_digit": float(any(c.isdigit() for c in candidate.text)),
        "opens_sentence": float(candidate.start == 0),
        "lowercase_elsewhere": float(length == 1 and words[0] in ordinary and candidate.text[:1].isupper()),
        "head_in_candidate": float(bool(question.head) and question.head in words),
        "past_for_present": float(question.present and bool(PAST_RANGE.search(view.text))),
        "question_number_in_sentence": float(bool(question.numbers)
                                             and bool(question.numbers & set(re.findall(r"\d+", view.text)))),
        "pronoun_sentence": float(bool(PRONOUN.search(view.text[:candidate.start]))),
        "after_anchor": float(any(i < first for i in anchors)),
        "before_anchor": float(any(i > last for i in anchors)),
        "left_share": question.share(left),
        "right_share": question.share(right),
        "previous_in_question": float(bool(before & question.weights.keys())),
        "next_in_question": float(bool(after & question.weights.keys())),
        "inner_function_word": float(any(w in stopwords() for w in words[1:-1])),
        "top_sentence": float(view.rank == 0),
        "repeats_in_facts": math.log1p(view.facts_text.count(candidate.text.lower())),
        "sentence_length_log": math.log1p(len(view.words)),
        "in_passage_title": float(bool(inside) and inside <= view.title_stems),
        "clause_subject": float(clause_subject(view, candidate, question)),
    }
    if words[-1] in COMMON_HEADS:
        values[f"ask_{question.kind}_common_head"] = 1.0
    for kind in candidate.kinds:
        values[f"kind_{kind}"] = 1.0
        values[f"ask_{question.kind}_{kind}"] = 1.0
    word = previous[0].lower().strip(",.;:")
    if word in PREVIOUS_WORDS:
        values[f"previous_{word}"] = 1.0
    following = view.text[candidate.end:].split()[:1] or [""]
    # the last word of a name of several words is its head ("... Assembly", "... Day"): kept as a
    # word where it is a common head, else its class ("Ada Lind" ends in a name, not in "lind")
    last = word_class(candidate.text.split()[-1])
    values.update(lexical_features(question, word_class(previous[0]), word_class(following[0]), candidate.text, last))
    return values


_CLAUSE_START = re.compile(r"(?:^|[;:]|,\s+(?:and|but|while|whereas|who|which)\b|\band\b(?=\s+(?:he|she|they|it)\b))\s*", re.I)


def clause_subject(view: SentenceView, candidate: Candidate, question: QuestionView) -> bool:
    """Whether the candidate opens its clause (after "and", "but", a semicolon: at most two words
    in) and the question's words follow it in that clause: "Ida Brann won the prize" names who won
    it; "the prize went to a painter taught by Ida Brann" does not."""
    start = max((e for _, e in view.clause_marks if e <= candidate.start), default=0)
    end = min((s for s, _ in view.clause_marks if s > candidate.end), default=len(view.text))
    if len(view.text[start:candidate.start].split()) > 2:
        return False
    after = {stem(fold_accents(w)) for w in _TOKEN.findall(view.text[candidate.end:end])}
    return bool(after & question.weights.keys())


def word_class(word: str) -> str:
    """A word as the lexical features see it: a function word or a common head of names ("by",
    "of", "university") as it is, a name as "<Name>", a figure as "<num>", any other word as
    "<word>": what is learned is how English marks an answer, not which names and words the
    training articles hold ("lee" of one novel's author, "mockingbird" of its title)."""
    word = word.strip(",.;:()\"“”'’")
    if not word:
        return ""
    if word[:1].isdigit():
        return "<num>"
    if word[:1].isupper() and word.lower() not in COMMON_HEADS:
        return "<Name>"
    lowered = word.lower()
    return lowered if lowered in stopwords() or lowered in COMMON_HEADS or lowered in PREVIOUS_WORDS else "<word>"


def lexical_features(question: QuestionView, previous: str, following: str, text: str, last: str) -> dict:
    """Words crossed with the question's asking phrase: the word before and after the candidate,
    its shape and its last word ("how many" with "bridges" last; "who" with "by" before), and the
    last word crossed with the noun asked for. `last`: a one-word candidate's `word_class`, else its
    last word lowercased ("lind" of "Ada Lind"). Which matter is learned; an unseen word weighs nothing."""
    wh = question.wh
    found = {f"lex:{wh}|prev={previous}": 1.0, f"lex:{wh}|next={following}": 1.0, f"lex:{wh}|shape={shape(text)}": 1.0,
             f"lex:{wh}|last={last}": 1.0}
    if question.head:
        found[f"lex:head={question.head}|last={last}"] = 1.0
    return found
