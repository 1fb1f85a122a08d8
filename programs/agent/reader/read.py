"""Reading the facts for one question part: rank their sentences against it, score the typed
spans of the best ones by how close they stand to the question's own words, and say how surely
the sentence answers it (`support`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from deltaseek.programs.agent.learned_reader.features import PAST_RANGE, PRONOUN, lowercase_words
from deltaseek.programs.agent.learned_reader.features import rarity as sentence_rarity
from deltaseek.programs.agent.learned_reader.features import stems_of
from deltaseek.programs.agent.learned_reader.questions import (NEGATION, PRESENT, AnswerType, asked_noun, metric_terms,
                                                           question_names, sentences)
from deltaseek.programs.agent.learned_reader.read import Extracted
from deltaseek.programs.agent.learned_reader.read import facts_by_relevance as _facts_by_relevance
from deltaseek.programs.agent.learned_reader.read import rank_sentences as _rank_sentences
from deltaseek.programs.agent.reader.spans import _CONNECTIVE, candidate_spans, defined_title, full_name, title_name
from deltaseek.programs.text import (capitalized_run, fold_accents, meaningful_tokens, named_entities, normalize_query,
                                     stem, without_opening_word)

_OPENING_PRONOUN = re.compile(r"(?:It|He|She|They)\b")
LARGE_PLACE_HEADS = frozenset("country state nation province".split())
"""Places that contain others: named after a comma ("Moss District, Veltria") or as what a
region is part of ("the Moss region of Veltria")."""
_CONTAINED_IN = re.compile(r"(?:(?<=[a-z]), |\b(?:region|province|state|district|county|part) of )"
                           r"([A-Z][\w.-]*(?: [A-Z][\w.-]*)*)")


def _word_positions(sentence: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group(0).lower()) for m in re.finditer(r"\w+", sentence)]


def _anchor(sentence: str, terms: set[str]) -> int | None:
    """Where the question's words stand in the sentence: the longest run of them, its end."""
    words = _word_positions(sentence)
    best, best_len, run = None, 0, 0
    for i, (offset, word) in enumerate(words):
        run = run + 1 if word in terms else 0
        if run and run >= best_len:
            best, best_len = offset, run
    return best


def _distance(a: int, b: int, sentence: str) -> int:
    lo, hi = sorted((a, b))
    return len(re.findall(r"\w+", sentence[lo:hi]))



def rank_sentences(question_terms: set[str], facts: list, subject_terms: frozenset[str] = frozenset()
                   ) -> list[tuple[float, str, object]]:
    """(score, sentence, fact) for every sentence of the facts, best first, as the learned reader
    ranks them but with the sentences' accents kept (the rule reader's weights were set so)."""
    return _rank_sentences(question_terms, facts, subject_terms, fold=False)


def facts_by_relevance(question: str, facts: list) -> list:
    """The facts ordered by their best sentence's rank against the question (`rank_sentences`)."""
    return _facts_by_relevance(question, facts, fold=False)


def extract_span(question: str, kind: AnswerType, facts: list, extra_terms: set[str] | None = None,
                 top_sentences: int = 40, head: str | None = None, not_answers: str = "",
                 unlike: frozenset[str] = frozenset()) -> Extracted | None:
    """The best span of type `kind` in the facts that the question does not already contain (nor
    `not_answers`: the original wording of a question read with its bridges resolved), sharing no
    word with `unlike`. A span holding `head`, the noun that names what is asked ("the association
    which ..."), ranks first."""
    if kind in ("yes_no", "other") or not facts:
        return None
    own_terms = meaningful_tokens(question)
    question_terms = own_terms | (extra_terms or set())
    asked_words = {w.lower() for w in re.findall(r"\w+", fold_accents(question + " " + not_answers))}
    present = bool(PRESENT.search(question))
    asked_head = asked_noun(question)
    head = head or asked_head  # "What county ...": a span that says "County" names what is asked
    best: Extracted | None = None
    supports: dict[str, float] = {}
    rare = rarity(facts)
    ordinary = lowercase_words(facts)
    subject = frozenset(meaningful_tokens(" ".join(named_entities(question))))
    for relevance, sentence, fact in rank_sentences(question_terms, facts, subject)[:top_sentences]:
        anchor = _anchor(sentence, own_terms)  # near what this part asks, not near the context words
        if anchor is None and _OPENING_PRONOUN.match(sentence) and meaningful_tokens(title_name(fact)) & own_terms:
            anchor = 0  # "It was designed by ..." in the passage titled with what the question names
        if anchor is None:
            continue  # a sentence with none of the question's words answers it only by chance
        candidates = candidate_spans(sentence, kind)
        defined = defined_title(fact, sentence, asked_head) if kind == "entity" else None
        if defined:
            candidates.append(defined)
        containing = [(m.group(1).rstrip("."), m.start(1)) for m in _CONTAINED_IN.finditer(sentence)]
        if head in LARGE_PLACE_HEADS:
            # "in Moss District, Veltria": the name after the comma is the larger unit asked for
            candidates += containing
        if kind == "person" and candidate_spans(fact.title, "person") and PRONOUN.search(sentence):
            # Encyclopedic passages speak of their subject as "he"/"she": the title stands in for it.
            pronoun = PRONOUN.search(sentence)
            candidates.append((title_name(fact), pronoun.start()))
        for span, offset in candidates:
            if kind == "person" and len(span.split()) == 1:
                span = full_name(span, facts)  # "Lind" -> "Ada Lind"; "American" -> no name: dropped
                if span is None:
                    continue
            if " " not in span and sentence.startswith(span) and (span.lower() in ordinary or _CONNECTIVE.fullmatch(span)):
                continue  # "However", "Rising": capitalized because it opens the sentence, not a name
            span_words = {w.lower() for w in re.findall(r"\w+", fold_accents(span))}
            if not span_words or span_words <= asked_words or span_words & unlike:
                continue  # the question's own words are not its answer
            if span_words & asked_words and kind == "person":
                continue  # "Veltria General Assembly" for a question about Veltria: a name from the question
            closeness = 1.0 / (1 + _distance(offset, anchor, sentence) / 4)
            named_as_asked = (head and (head in span_words or head in LARGE_PLACE_HEADS
                                        and (span, offset) in containing)
                              or defined and span == defined[0])
            sure = supports.setdefault(sentence, support(question, sentence, fact, rare))
            score = relevance + 2.0 * closeness + (3.0 if named_as_asked else 0.0) + SUPPORT_WEIGHT * sure
            if present and PAST_RANGE.search(sentence):
                score -= 1.0  # "who is" asks for the holder now, not one who served until a year
            if best is None or score > best.score:
                best = Extracted(span.strip(" ,;:"), sentence, fact.source, kind, score)
    if best is not None:
        best = replace(best, confidence=supports[best.sentence])
    return best


SUPPORT_WEIGHT = 2.0
"""How much a sentence's support for the question (`support`) counts in a span's rank, beside its
BM25 relevance and the span's closeness to the question's words."""
NAME_WEIGHT = 2.0
"""A name or a number of the question counts this many ordinary words: it is what makes the
question about one thing and not another."""
CONTEXT_NAME_CREDIT = 0.2
"""What a question's name or number counts, of its weight, when the answer's passage holds it outside
the answer's sentence: a passage names what it is about once and leaves it to context after ("Ada
Lind grew up in Tarbury. ... In 2020 she was elected mayor." answers "Who is the mayor of Tarbury?"
less surely than a sentence naming Tarbury, more surely than a passage that never does)."""
MISSING_NAME_COST = 0.5
"""What a question's name or number absent from the whole passage costs: "in 1998" asked of a
passage that says 1996 is another event."""



_NAME_RUN = re.compile(r"\b" + capitalized_run(r"[A-Z][\w'’-]*", "of|the|de|van|von"))


def unmatched_name_runs(question: str, passage: str) -> list[str]:
    """Names of several words in the question that the passage never writes as one phrase:
    "the Vey Bridge" asked of a passage that names "the Vey" and "Tern Bridge" apart."""
    said = f" {normalize_query(passage)} "
    runs = [re.sub(r"^(?:The|A|An)\s+", "", run) for run in _NAME_RUN.findall(without_opening_word(question))]
    return [run for run in runs if len(run.split()) > 1 and f" {normalize_query(run)} " not in said]


def rarity(facts: list) -> dict[str, float]:
    """How rare each word stem is among the facts' sentences (`features.rarity`): a question word
    few sentences use says more about which one answers it."""
    return sentence_rarity([s for f in facts for s in sentences(f.text)])


def support(question: str, sentence: str, fact, rare: dict[str, float] | None = None) -> float:
    """How much of what the question says the answer's sentence says too, from 0 to 1: the share
    of the question's meaningful words (stems, each weighed by its `rarity` among the facts read;
    names and numbers `NAME_WEIGHT` times more) that the sentence or its passage's title holds (a
    name elsewhere in the passage counts `CONTEXT_NAME_CREDIT` of its weight), less
    `MISSING_NAME_COST` for each name or number of the question the whole passage lacks. "When did
    the bridge over the Vey river open?" is well supported by "The bridge across the Vey opened in
    1911." and poorly by "The tunnel under the Vey opened in 1911." (no bridge), or by a passage
    about another river. A name of several words the passage never writes as one phrase, and a
    negation the sentence lacks, cost as much as a missing name."""
    names = question_names(question)
    terms = {stem(w) for w in meaningful_tokens(question)} | names
    if not terms:
        return 1.0
    title = title_name(fact)
    # The title speaks for the sentence ("It was built in 1911") only when it names nothing the
    # question does not: the question's "Tern" is not the passage titled "Tern Harbour" about.
    credited = not {w.lower() for w in re.findall(r"\b[A-Z][\w'’-]*", title)} - {w.lower() for w in re.findall(r"\w+", question)}
    near = stems_of(f"{title if credited else ''} {sentence}")
    passage = stems_of(f"{fact.title} {fact.text}")
    # a word no fact uses weighs as much as the rarest one that is used
    top = max(rare.values(), default=1.0) if rare else 1.0
    weight = {t: (NAME_WEIGHT if t in names else 1.0) * (rare.get(t, top) if rare else 1.0) for t in terms}
    share = sum(w if t in near else CONTEXT_NAME_CREDIT * w if t in names and t in passage else 0.0
                for t, w in weight.items()) / sum(weight.values())
    missing = sum(1 for t in names if t not in passage)
    missing += len(unmatched_name_runs(question, f"{fact.title} {fact.text}"))
    if NEGATION.search(question) and not NEGATION.search(sentence):
        missing += 1  # "Who was not invited?" is not answered by a sentence saying who was
    return round(max(0.0, share - MISSING_NAME_COST * missing), 3)



def states_the_metric(question: str, extracted: Extracted) -> bool:
    """Whether a number comes from a sentence about the asked figure itself, not a related one
    (stars and downloads are proxies for an adoption rate, not the rate)."""
    wanted = metric_terms(question)
    return not wanted or bool(wanted & {w.lower() for w in re.findall(r"\w+", extracted.sentence)})
