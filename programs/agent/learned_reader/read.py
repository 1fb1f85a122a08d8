"""Reading the facts found: rank their sentences against the question, propose candidates in the
best ones, score them with the learned ranker and say how likely the best one answers.

No LM: at 135M parameters the reader reads a passage better than the model does. The span it
picks and its confidence (the answerability model's probability) come from weights trained on
labeled data (`model.py`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

from deltaseek.programs.agent.learned_reader.candidates import FITTING_KINDS, Candidate, sentence_candidates, title_name
from deltaseek.programs.agent.learned_reader.features import (COMMON_HEADS, PAST_RANGE, PRONOUN, QuestionView, SentenceView,
                                                          candidate_features, question_view, rarity, sentence_view,
                                                          stems_of, support)
from deltaseek.programs.agent.learned_reader.model import BEST_FEATURES, ReaderModel, shipped_reader
from deltaseek.programs.agent.learned_reader.names import full_name, lowercase_words, used_as_adjective
from deltaseek.programs.agent.learned_reader.questions import AnswerType, sentences
from deltaseek.programs.agent.learned_reader.ranking import rank_sentences
from deltaseek.programs.agent.learned_reader.span_checks import FORMER_HOLDER, span_failure, subject_passages
from deltaseek.programs.text import fold_accents, meaningful_tokens, named_entities, span_overlap, stopwords

TOP_SENTENCES = 8
"""Candidates come from this many of the best-ranked sentences: the answer's sentence is among
them for nearly every question whose passage was read, and each one more costs candidates."""
TYPED_TOP_SENTENCES = 20
"""A question that names its answer's type takes few candidates a sentence (its names, dates or
figures only), so it reads further down: the one sentence naming a person may rank low among
sentences that repeat the question's words."""
_DEFINES = r"\b(?:is|was|are|were) (?:a|an|the|one of the)\b(?:\s+[\w'’-]+){{0,6}}?\s+{noun}s?\b"


@dataclass(frozen=True)
class Extracted:
    """An answer span, the sentence it came from and the fact (source id) holding that sentence."""

    span: str
    sentence: str
    source: str
    kind: AnswerType
    score: float
    confidence: float = 1.0
    """The reader's probability that the facts answer the question with this span (the answerability
    model's, or one minus the adapter's doubt)."""
    abstain_below: float = 0.0
    """The reader abstains on a span whose confidence is below this: its threshold, chosen on dev;
    above 1 when the adapter said the facts do not hold the answer."""
    signals: dict[str, float] = field(default_factory=dict)
    """What the reading says of its own span, read by the answer's confidence model: the
    ranker's probability, lead and share, and whether the adapter read, doubted and agreed."""

    @property
    def unsure(self) -> bool:
        return self.confidence < self.abstain_below


@dataclass
class Scored:
    """A candidate with its sentence, its features and the ranker's score."""

    candidate: Candidate
    sentence: SentenceView
    features: dict[str, float]
    score: float = 0.0


def facts_by_relevance(question: str, facts: list) -> list:
    """The facts ordered by their best sentence's rank against the question (those with no
    sentence that shares a word with it last, in the order found): what a short prompt shows."""
    subject = frozenset(meaningful_tokens(" ".join(named_entities(question))))
    ranked = list(dict.fromkeys(id(f) for _, _, f in rank_sentences(meaningful_tokens(question), facts, subject)))
    order = {fact_id: i for i, fact_id in enumerate(ranked)}
    return sorted(facts, key=lambda f: order.get(id(f), len(order)))


def title_candidate(fact, sentence: str, head: str | None) -> Candidate | None:
    """A passage's title as a candidate where the sentence speaks of it without naming it: by a
    pronoun ("She was elected in 2020.") or by defining it as the kind of thing asked for ("It is
    the longest river of the region")."""
    title = title_name(fact)
    if not title:
        return None
    pronoun = PRONOUN.search(sentence)
    if head and re.search(_DEFINES.format(noun=re.escape(head)), sentence, re.I):
        return Candidate(title, 0, 0, frozenset({"title"}))
    if pronoun:
        return Candidate(title, pronoun.start(), pronoun.start(), frozenset({"title"}))
    return None


def candidate_rows(question: str, kind: str, facts: list, extra_terms: set[str] | None = None,
                   not_answers: str = "", unlike: frozenset[str] = frozenset(), head: str | None = None,
                   kinds: frozenset[str] | None = None, top_sentences: int | None = None) -> list[Scored]:
    """Every candidate of the best sentences with its features, unscored: those fitting one of
    `kinds` (default: the kinds the answer type takes, `FITTING_KINDS`). A span whose every word
    the question (or `not_answers`) already says is never an answer, nor one sharing a word with
    `unlike`."""
    if not facts:
        return []
    kinds = FITTING_KINDS.get(kind) if kinds is None else kinds
    top_sentences = top_sentences or (TOP_SENTENCES if kinds is None or "phrase" in kinds else TYPED_TOP_SENTENCES)
    subject = frozenset(meaningful_tokens(" ".join(named_entities(question))))
    ranked = rank_sentences(meaningful_tokens(question) | (extra_terms or set()), facts, subject)[:top_sentences]
    if not ranked:
        return []
    rare = rarity([s for f in facts for s in sentences(f.text)])
    view = question_view(question, kind, rare, not_answers)
    if head:
        view.head = head
    ordinary = lowercase_words(facts)
    order = {id(f): i for i, f in enumerate(facts)}
    best = ranked[0][0] or 1.0
    rows: list[Scored] = []
    passages: dict[int, frozenset[str]] = {}
    facts_text = " ".join(f.text for f in facts).lower()
    for rank, (relevance, text, fact) in enumerate(ranked):
        if id(fact) not in passages:
            passages[id(fact)] = stems_of(f"{fact.title} {fact.text}")
        sentence = sentence_view(text, fact, rank, relevance / best, order.get(id(fact), len(facts)), passages[id(fact)])
        sentence.facts_text = facts_text
        sure = support(view, text, fact, passages[id(fact)])
        candidates = sentence_candidates(text, phrases_too=kinds is None or "phrase" in kinds)
        if (title := title_candidate(fact, text, view.head)) is not None:
            candidates.append(title)
        for candidate in candidates:
            if kinds is not None and not candidate.kinds & kinds:
                continue
            if kind == "person" and not looks_like_a_person(candidate, facts):
                continue
            words = {w.lower() for w in re.findall(r"\w+", fold_accents(candidate.text))}
            if not words or words <= view.asked_words or words & unlike:
                continue
            if kind == "person" and words & view.asked_words:
                continue  # "Who leads the Tarn Council?" is not answered by a name holding "Tarn"
            rows.append(Scored(candidate, sentence, candidate_features(view, sentence, candidate, ordinary, sure)))
    return about_the_subject(rows, view, facts)


def about_the_subject(rows: list[Scored], view: QuestionView, facts: list) -> list[Scored]:
    """The candidates from passages naming every name of the question, when any passage does: an
    answer comes from a passage about what the question asks of ("Who designed the Tern
    compiler?" is not answered by a passage about another compiler's designer). A question asking
    who holds something now ("Who is the mayor of Tarn?") takes, when it can, a sentence that
    does not say the holding ended ("served until 2019")."""
    named = [r for r in rows if view.names <= r.sentence.passage_stems]
    rows = named or rows
    # the passage titled with the question's names alone is the one about its subject: "Where was
    # Ida Brann born?" is read first in "Ida Brann", not in "Brann Hall" nor in a passage naming her
    own = {id(f) for f in subject_passages(view.names, facts)}
    titled = [r for r in rows if id(r.sentence.fact) in own]
    if titled:
        rows = titled
    elif own:
        # the subject's own passage was read and holds no candidate: another passage's sentence
        # answers only if it names the subject, for "It was designed by Ida Brann" in a passage on
        # "Tern Studio" speaks of the studio, not of the Tern compiler
        rows = [r for r in rows if view.names <= {stem for _, stem in r.sentence.words}]
    if view.kind == "person" and view.present:
        rows = [r for r in rows if not PAST_RANGE.search(r.sentence.text)] or rows
        rows = [r for r in rows if not FORMER_HOLDER.search(r.sentence.text[:r.candidate.start])] or rows
    return rows


def looks_like_a_person(candidate: Candidate, facts: list) -> bool:
    """Whether a name can be a person's: written in words, not initials ("U.S."); not ending with
    a common noun that heads the names of institutions, places and times ("the Tarn Assembly",
    "Founders Day"); and one word alone only as the surname of a fuller name the facts write
    ("Brann" where a passage says "Ida Brann"), since one capitalized word is as often a place
    ("in Tarn") as a person."""
    words = candidate.text.split()
    if "title" in candidate.kinds:
        return True
    if not re.search(r"[a-z]{2}", candidate.text) or words[-1].lower().strip(".,") in COMMON_HEADS:
        return False
    if len(words) > 1:
        return True
    # words of a name: no sentence's end between them ("... in Tarn. Brann rose"), an initial apart
    word = r"(?:[A-Z][\w'’-]*|[A-Z]\.)"
    fuller = re.compile(rf"\b({word})[ \t]+(?:{word}[ \t]+)*{re.escape(words[0])}\b")
    # a capitalized article or preposition opening a sentence ("The Vell rises") is no first name
    return any(m.group(1).lower() not in stopwords() for f in facts for m in fuller.finditer(f"{f.title}\n{f.text}"))


def summary_features(rows: list[Scored], kind: str) -> dict[str, float]:
    """What the answerability model reads: the ranker's scores (best, lead over the next distinct
    span, share of the probability mass), the best candidate's own features, the type asked."""
    if not rows:
        return {f"ask_{kind}": 1.0, "top_score": -10.0, "margin": 0.0}
    ordered = sorted(rows, key=lambda r: -r.score)
    top = ordered[0]
    said = top.candidate.text.lower()
    runner = next((r.score for r in ordered[1:] if r.candidate.text.lower() != said), top.score - 5.0)
    peak = top.score
    mass = sum(math.exp(r.score - peak) for r in ordered)
    values = {"top_score": top.score, "margin": top.score - runner, "top_share": 1.0 / mass,
              "candidates_log": math.log1p(len(rows)), f"ask_{kind}": 1.0}
    values.update({f"best_{name}": top.features.get(name, 0.0) for name in BEST_FEATURES})
    return values


def score_rows(rows: list[Scored], reader: ReaderModel) -> list[Scored]:
    for row in rows:
        row.score = reader.ranker.score(row.features)
    return rows


def extract_span(question: str, kind: AnswerType, facts: list, extra_terms: set[str] | None = None,
                 head: str | None = None, not_answers: str = "", unlike: frozenset[str] = frozenset(),
                 kinds: frozenset[str] | None = None, reader: ReaderModel | None = None,
                 use_adapter: bool = True) -> Extracted | None:
    """The reader's span: the adapter's where the reader has one (`use_adapter`) and no check names
    a failure of it (`span_checks`), else the candidate the ranker scores best, with the
    answerability model's probability as its confidence; None when neither reads a span.
    Where the adapter abstains, the ranker's span stands if the ranker is sure of it, and is an
    unsure guess otherwise: the reader abstains where both doubt. Yes/no questions are left to
    comparisons and the model."""
    if kind == "yes_no" or not facts:
        return None
    reader = reader or shipped_reader()
    rows = ranked_rows(question, kind, facts, extra_terms, head, not_answers, unlike, kinds, reader)
    ranked = best_of(rows, kind, facts, reader)
    adapter = reader.adapter_reader() if use_adapter else None
    reading = adapter.read(question, facts) if adapter is not None else None
    if reading is None or (ranked is None and reading.span is None):
        return ranked
    adapter_signals = {**(ranked.signals if ranked else {}), "adapter_read": 1.0, "adapter_doubt": reading.doubt,
                       "adapter_question_surprise": reading.question_surprise or 0.0}
    if reading.span is None:  # the adapter doubts: unsure unless the ranker is sure (distractors fill its four sentences)
        return replace(ranked, abstain_below=1.01 if ranked.unsure else ranked.abstain_below, signals=adapter_signals)
    if span_failure(reading.span, kind, question, reading.sentence, reading.source, facts,
                    [r.sentence.text for r in rows], not_answers, unlike):
        return replace(ranked, signals=adapter_signals) if ranked else None
    span = reading.span
    if kind == "address":  # an address is the whole of its candidate: "12" of "12 Quay Row" is not one
        overlap, whole = max(((span_overlap(span, r.candidate.text), r) for r in rows), key=lambda p: p[0],
                             default=(0.0, None))
        span = whole.candidate.text.strip(" ,;:") if overlap >= 0.5 else span
    elif kind == "person":
        span = full_name(span, facts) or span
    ranker_agrees = ranked is not None and span_overlap(span, ranked.span) >= 0.5
    return Extracted(span, reading.sentence, reading.source, kind, reading.answer_probability,
                     round(1.0 - reading.doubt, 4), 1.0 - adapter.info.bound,
                     {**adapter_signals, "adapter_agrees": 1.0, "ranker_agrees": float(ranker_agrees)})


def ranked_rows(question: str, kind: AnswerType, facts: list, extra_terms: set[str] | None, head: str | None,
                not_answers: str, unlike: frozenset[str], kinds: frozenset[str] | None,
                reader: ReaderModel) -> list[Scored]:
    """The candidates the rules allow, scored by the ranker."""
    rows = score_rows(candidate_rows(question, kind, facts, extra_terms, not_answers, unlike, head, kinds), reader)
    if kind == "place":  # "a Veltrian painter" says what kind of painter, not where
        rows = [r for r in rows if not used_as_adjective(r.candidate.text, r.sentence.text, r.candidate.start,
                                                         r.candidate.end)] or rows
    return rows


def best_of(rows: list[Scored], kind: AnswerType, facts: list, reader: ReaderModel) -> Extracted | None:
    """The candidate the ranker scores best, with the answerability model's probability."""
    if not rows:
        return None
    top = max(rows, key=lambda r: r.score)
    summary = summary_features(rows, kind)
    confidence = reader.answerability.probability(summary)
    span = top.candidate.text.strip(" ,;:")
    if kind == "person":  # a surname alone is the person the facts name in full
        span = full_name(span, facts, own=top.sentence.fact) or span
    signals = {"ranker_probability": confidence, "ranker_margin": min(summary["margin"], 10.0),
               "ranker_share": summary["top_share"]}
    return Extracted(span, top.sentence.text, top.sentence.fact.source, kind, top.score, round(confidence, 4),
                     reader.threshold, signals)


def option_by_adapter(question: str, facts: list, options: list[str], reader: ReaderModel) -> Extracted | None:
    """The option the reader adapter finds likelier as its whole answer after the best sentences of
    the facts, its confidence the option's share of the two options' probability; None without an
    adapter or sentences."""
    adapter = reader.adapter_reader()
    scored = adapter.option_log_probabilities(question, facts, options) if adapter is not None else None
    if scored is None:
        return None
    log_probabilities, passage = scored
    chosen = max(range(len(options)), key=lambda i: log_probabilities[i])
    top = max(log_probabilities)
    share = 1.0 / sum(math.exp(p - top) for p in log_probabilities)
    sentence, source = passage.source_of(options[chosen])
    return Extracted(options[chosen], sentence, source, "entity", log_probabilities[chosen], round(share, 4))
