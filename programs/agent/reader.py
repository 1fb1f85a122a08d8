"""The extractive answer floor: read the facts found and pull out the span that answers the question.

No LM: the question's wording decides the expected answer type (person, place, date, number,
address, yes/no, other); the facts' sentences are ranked against the question with BM25; in the
best sentences, spans of the expected type are scored by how close they stand to the question's
own words. A span the question already contains is never an answer. At 135M parameters code
reads a passage better than the model does; a capable model's answer passes `answer_fits_question`
and is kept.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Literal

from deltaseek.programs.text import acronyms, fold_accents, meaningful_tokens, named_entities, normalize_query, stopwords

from deltaseek.programs.agent.learned_reader.comparisons import (  # noqa: F401  both readers compare alike
    compare_options, compare_pair, question_options)
from deltaseek.programs.agent.learned_reader.questions import (  # the question types both readers read
    NEGATION as _NEGATION, PRESENT as _PRESENT, AnswerType, asked_noun, expected_answer_types, metric_phrase, metric_terms,
    question_names, question_parts, sentences, stem as _stem, without_opening_word as _rest)

_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_YEAR = r"(?:1[5-9]|20)\d{2}"
_DATE = re.compile(rf"\b(?:\d{{1,2}} (?:{_MONTHS}) \d{{4}}|(?:{_MONTHS}) \d{{1,2}}, \d{{4}}|(?:{_MONTHS}) \d{{4}}|"
                   rf"{_YEAR}\s?[–-]\s?(?:{_YEAR}|\d{{2}})|{_YEAR})\b")
"""A date: day, month and year; month and year; a span of years ("1790–1796", "1914-18"); a year."""
_NUMBER = re.compile(r"(?<![\w.])(?:US\$|\$|€|£)?\d[\d,]*(?:\.\d+)?(?:\s?(?:%|percent|million|billion|thousand))?"
                     r"|\b(?:tens|hundreds|thousands|millions|billions) of \w+"
                     r"|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|"
                     r"fifty|hundred)\b(?=\s+[a-z]+s\b)")
"""A figure: digits with a currency or a scale, "thousands of ...", or a count in words before the
plural noun it counts ("six weeks", "four bridges"; not "three arrived": a verb follows; not "one",
which names more often than it counts)."""
_STREET = r"(?:Avenue|Street|Road|Boulevard|Lane|Drive|Way|Place|Square|Plaza|Parkway|Court|Ave\.|St\.|Blvd\.|Rd\.)"
_ADDRESS = re.compile(rf"\b\d{{1,5}}(?:[-–]\d{{1,5}})? (?:[A-Z0-9][\w'.-]* ){{0,4}}{_STREET}")
# Capitalized words, with the small words names carry inside them ("Anna van Dijk").
_NAME = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:(?:van|von|de|der|da|del|di|le|bin)\s+)?[A-Z][\w'’.-]*)*")
_QUOTED = re.compile(r"\s*[\"“”][^\"“”]{1,30}[\"“”]\s*")
_NAME_BEFORE_NUMBER = re.compile(r"(?:^|\s)([A-Z][\w.+-]*|\w+&\w+)\s$")
_QUANTITY_WORDS = frozenset("nearly around almost roughly approximately less exactly circa since top".split())
"""Words that open a sentence before an amount ("Roughly 500 ...") without naming anything."""
_PLACE_CUE = re.compile(r"\b(?:in|at|from|near|to)(?:\s+(?:the\s+)?(?:north|south|east|west|central)[a-z]*)?\s*$")
"""What stands before a place: "in Tarbury", "in southern Veltria", "in the central Moss region"."""
_PRONOUN = re.compile(r"\b(?:he|she|they|it|his|her|its)\b", re.I)
_OPENING_PRONOUN = re.compile(r"(?:It|He|She|They)\b")
_PAST_RANGE = re.compile(r"\b(?:served|former(?:ly)?|was previously|until)\b|\bfrom \d{4} to \d{4}\b", re.I)
# Words that make a capitalized run an institution, a place or a work rather than a person.
_NOT_A_PERSON = frozenset("""assembly university college school state states senate house court company corporation
inc ltd party building street avenue river city county republic kingdom department ministry council committee
association foundation institute museum prize award series film festival league club team church hospital
airport station bank index president vice governor lieutenant senator minister king queen prince mayor
chairman director general judge society journal federation union organization day license act law treaty
agreement studio studios productions pictures entertainment records awards games magazine press news network
channel radio television version edition console village castle island mountain lake sea ocean forest valley
region province district""".split()) | {m.lower() for m in _MONTHS.split("|")}
@dataclass(frozen=True)
class Extracted:
    """An answer span, the sentence it came from and the fact (source id) holding that sentence."""

    span: str
    sentence: str
    source: str
    kind: AnswerType
    score: float
    confidence: float = 1.0
    """How sure the reader is that the sentence answers this question (`support`, 0-1): below the
    calibrated threshold (`AgentSettings.reader_min_confidence`) the reader abstains."""


def in_a_name(before: str) -> bool:
    """Whether a number standing after `before` belongs to a name, not a figure: a capitalized
    word ("Tern 2.0", "the Kestrel 400") or one joined by "&" ("R&D 100") stands right before
    it; a sentence's opening word that only qualifies an amount ("About 500 people") does not."""
    match = _NAME_BEFORE_NUMBER.search(before)
    if not match:
        return False
    word = match.group(1).lower()
    return "&" in word or word not in stopwords() and word not in _QUANTITY_WORDS


def candidate_spans(sentence: str, kind: AnswerType) -> list[tuple[str, int]]:
    """(span, character offset) of every span of the type in the sentence."""
    if kind == "address":
        return [(m.group(0), m.start()) for m in _ADDRESS.finditer(sentence)]
    if kind == "date":
        return [(m.group(0), m.start()) for m in _DATE.finditer(sentence)]
    if kind == "number":
        spans = []
        for m in _NUMBER.finditer(sentence):
            if _DATE.fullmatch(m.group(0)) or in_a_name(sentence[:m.start()]):
                continue
            # "140,000 stars": the noun after a figure says what it counts
            unit = re.match(r"\s+(?:of\s+)?([a-z][\w-]*)", sentence[m.end():])
            noun = unit.group(0) if unit and unit.group(1) not in stopwords() else ""
            spans.append((m.group(0) + noun, m.start()))
        return spans
    if kind in ("person", "place", "entity"):
        text = _QUOTED.sub(" ", sentence) if kind == "person" else sentence
        spans = []
        for match in _NAME.finditer(text):
            name = re.split(r"['’]s\b", match.group(0))[0]  # "Veltria's currency": Veltria; "It’s": a stopword
            name = re.split(r"(?<=[a-z]{2})\.\s+", name)[0]  # "Moss. Once Ada ...": a name ends with its sentence
            words = [w for w in name.split() if w.lower() not in stopwords() or w[0].isupper()]
            while words and words[0].lower() in stopwords():
                words.pop(0)  # "The", "In" open a sentence, they do not start a name
            if words and match.start() == 0 and len(words) > 1 and re.fullmatch(r"[A-Z][a-z]+(?:ing|ed)", words[0]):
                words.pop(0)  # "Using Tern, ...", "Founded in ...": a verb opens the sentence, not a name
            if not words:
                continue
            span = " ".join(words).rstrip(".,")
            if len(re.findall(r"[^\W\d_]", span)) < 2:
                continue  # "C" of "-89 °C", "A" opening a sentence: a letter is no name
            if kind != "person" and (_DATE.match(span) or span.split()[0] in _MONTHS.split("|")):
                continue  # "in February", "December 2010": a date, not a place or a named thing
            offset = sentence.find(words[0]) if kind == "person" else match.start()
            if kind == "place" and not _PLACE_CUE.search(sentence[:max(0, match.start())]):
                continue  # a place is where something is: "in Tarbury", "at 12 ...", "from Veltria"
            if kind == "person" and len(words) == 1 and match.start() == 0 and not text.startswith(", who", match.end()):
                continue  # one capitalized word opening a sentence is too often not a name ("Lind, who ..." is)
            if kind == "person" and ({w.lower().strip(".,") for w in words} & _NOT_A_PERSON
                                     or not re.search(r"[a-z]{2}", span)):
                continue  # an institution, or an abbreviation such as "U.S."
            spans.append((span, max(offset, 0)))
        return spans
    return []


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
    """(score, sentence, fact) for every sentence of the facts, best first. BM25 over the
    sentences themselves (bm25s), plus a share of the whole passage's overlap with the question,
    which carries the context a single sentence leaves to pronouns."""
    import bm25s

    rows = [(s, fact) for fact in facts for s in sentences(fact.text)]
    if not rows or not question_terms:
        return []
    retriever = bm25s.BM25()
    corpus = [[t for t in re.findall(r"\w+", s.lower())] for s, _ in rows]
    retriever.index(corpus, show_progress=False)
    terms = [t for t in question_terms if t in retriever.vocab_dict]
    if not terms:
        return []
    ids, scores = retriever.retrieve([terms], k=len(rows), show_progress=False)
    ranked = []
    for i, score in zip(ids[0], scores[0]):
        sentence, fact = rows[int(i)]
        words = meaningful_tokens(fact.title + " " + fact.text)
        passage = len(question_terms & words) / len(question_terms)
        # A passage that names all of the question's subject ("The Tarbury Herald") beats one that
        # shares its common words ("Tarbury"): the subject is what the answer must be about.
        about = len(subject_terms & words) / len(subject_terms) if subject_terms else 0.0
        ranked.append((float(score) + passage + 2.0 * about, sentence, fact))
    return sorted(ranked, key=lambda r: -r[0])


def facts_by_relevance(question: str, facts: list) -> list:
    """The facts ordered by their best sentence's rank against the question (those with no
    sentence that shares a word with it last, in the order found)."""
    subject = frozenset(meaningful_tokens(" ".join(named_entities(question))))
    ranked = list(dict.fromkeys(id(f) for _, _, f in rank_sentences(meaningful_tokens(question), facts, subject)))
    order = {fact_id: i for i, fact_id in enumerate(ranked)}
    return sorted(facts, key=lambda f: order.get(id(f), len(order)))


_CONNECTIVE = re.compile(r"However|Moreover|Meanwhile|Nevertheless|Nonetheless|Furthermore|Instead|Thus|Therefore|"
                         r"Hence|Today|Later|Still|Also|Afterwards|Otherwise|Overall|Likewise|Indeed|Initially|"
                         r"Eventually|Finally|Originally|Additionally|Currently|Recently|Subsequently|Previously|"
                         r"Traditionally|Historically|Similarly|Consequently|Accordingly|Unfortunately")
"""Words that open a sentence to link it to the one before ("However, ...", "Eventually, ..."): never a name."""


def lowercase_words(facts: list) -> set[str]:
    """Words the facts write in lowercase somewhere: ordinary words, whatever case a sentence's
    opening gives them ("However, the bridge ..." beside "it was, however, ...")."""
    return {w for f in facts for w in re.findall(r"\b[a-z][\w'’-]*", f.text)}


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
    present = bool(_PRESENT.search(question))
    asked_head = asked_noun(question)
    head = head or asked_head  # "What county ...": a span that says "County" names what is asked
    best: Extracted | None = None
    supports: dict[str, float] = {}
    rare = rarity(facts)
    ordinary = lowercase_words(facts)
    subject = frozenset(meaningful_tokens(" ".join(named_entities(question))))
    for relevance, sentence, fact in rank_sentences(question_terms, facts, subject)[:top_sentences]:
        anchor = _anchor(sentence, own_terms)  # near what this part asks, not near the context words
        if anchor is None and _OPENING_PRONOUN.match(sentence) and meaningful_tokens(_title_name(fact)) & own_terms:
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
        if kind == "person" and candidate_spans(fact.title, "person") and _PRONOUN.search(sentence):
            # Encyclopedic passages speak of their subject as "he"/"she": the title stands in for it.
            pronoun = _PRONOUN.search(sentence)
            candidates.append((_title_name(fact), pronoun.start()))
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
            if present and _PAST_RANGE.search(sentence):
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


_NAME_RUN = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:(?:of|the|de|van|von)\s+)?[A-Z][\w'’-]*)+")


def unmatched_name_runs(question: str, passage: str) -> list[str]:
    """Names of several words in the question that the passage never writes as one phrase:
    "the Vey Bridge" asked of a passage that names "the Vey" and "Tern Bridge" apart."""
    said = f" {normalize_query(passage)} "
    runs = [re.sub(r"^(?:The|A|An)\s+", "", run) for run in _NAME_RUN.findall(_rest(question))]
    return [run for run in runs if len(run.split()) > 1 and f" {normalize_query(run)} " not in said]


def _stems(text: str) -> set[str]:
    return ({_stem(w) for w in meaningful_tokens(text)} | {_stem(n) for n in re.findall(r"\d[\d,.]*\d|\d", text)}
            | {_stem(a) for a in acronyms(text)})


def rarity(facts: list) -> dict[str, float]:
    """How rare each word stem is among the facts' sentences (inverse document frequency,
    log(1 + N / df)): a question word few sentences use says more about which one answers it."""
    rows = [_stems(s) for f in facts for s in sentences(f.text)]
    counts: dict[str, int] = {}
    for row in rows:
        for stem in row:
            counts[stem] = counts.get(stem, 0) + 1
    return {stem: math.log(1 + len(rows) / n) for stem, n in counts.items()}


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
    terms = {_stem(w) for w in meaningful_tokens(question)} | names
    if not terms:
        return 1.0
    title = _title_name(fact)
    # The title speaks for the sentence ("It was built in 1911") only when it names nothing the
    # question does not: the question's "Tern" is not the passage titled "Tern Harbour" about.
    credited = not {w.lower() for w in re.findall(r"\b[A-Z][\w'’-]*", title)} - {w.lower() for w in re.findall(r"\w+", question)}
    near = _stems(f"{title if credited else ''} {sentence}")
    passage = _stems(f"{fact.title} {fact.text}")
    # a word no fact uses weighs as much as the rarest one that is used
    top = max(rare.values(), default=1.0) if rare else 1.0
    weight = {t: (NAME_WEIGHT if t in names else 1.0) * (rare.get(t, top) if rare else 1.0) for t in terms}
    share = sum(w if t in near else CONTEXT_NAME_CREDIT * w if t in names and t in passage else 0.0
                for t, w in weight.items()) / sum(weight.values())
    missing = sum(1 for t in names if t not in passage)
    missing += len(unmatched_name_runs(question, f"{fact.title} {fact.text}"))
    if _NEGATION.search(question) and not _NEGATION.search(sentence):
        missing += 1  # "Who was not invited?" is not answered by a sentence saying who was
    return round(max(0.0, share - MISSING_NAME_COST * missing), 3)



def defined_title(fact, sentence: str, noun: str | None) -> tuple[str, int] | None:
    """An encyclopedic passage's title, when its sentence defines it as the kind of thing asked for
    ("The crown was the currency of Veltria"): the thing is named by the title, not in the sentence."""
    if not noun:
        return None
    title = _title_name(fact)
    definition = re.search(rf"\b(?:is|was|are|were) (?:a|an|the|one of the)\b(?:\s+[\w'’-]+){{0,6}}?\s+{noun}s?\b",
                           sentence, re.I)
    opening = meaningful_tokens(sentence[:definition.start()]) if definition else set()
    if definition and opening & meaningful_tokens(title):
        return title, definition.end() - len(noun)
    return None


def _title_name(fact) -> str:
    """A passage's title without its qualifier or section: "Tern (compiler): history" -> "Tern"."""
    return re.sub(r"\s*\(.*\)$", "", fact.title.split(":")[0]).strip()


def full_name(word: str, facts: list) -> str | None:
    """The longest name in the facts (titles first) that ends with this one word: how a surname
    alone points back at the person it stands for."""
    for texts in ([_title_name(f) for f in facts], [f.text for f in facts]):
        names = [span for text in texts for span, _ in candidate_spans(text, "person")
                 if len(span.split()) > 1 and span.split()[-1] == word]
        if names:
            return max(names, key=len)
    return None


def states_the_metric(question: str, extracted: Extracted) -> bool:
    """Whether a number comes from a sentence about the asked figure itself, not a related one
    (stars and downloads are proxies for an adoption rate, not the rate)."""
    wanted = metric_terms(question)
    return not wanted or bool(wanted & {w.lower() for w in re.findall(r"\w+", extracted.sentence)})


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


# --- bridges: what a multi-hop question names only through another passage ---------------------

PLACE_HEADS = frozenset("""country state city county town village region area location place birthplace province
nation island district capital hometown""".split())
"""Head nouns of a bridge that names a place: its entity is a place in the facts ("in Veltria")."""
LARGE_PLACE_HEADS = frozenset("country state nation province".split())
"""Places that contain others: named after a comma ("Moss District, Veltria") or as what a
region is part of ("the Moss region of Veltria")."""
_CONTAINED_IN = re.compile(r"(?:(?<=[a-z]), |\b(?:region|province|state|district|county|part) of )"
                           r"([A-Z][\w.-]*(?: [A-Z][\w.-]*)*)")
PERSON_HEADS = frozenset("""person man woman composer author performer performers director producer designer
architect founder creator writer actor actress singer artist president governor mayor king queen coach captain
spouse wife husband father mother son daughter player leader owner developer""".split())
"""Head nouns of a bridge that names a person."""
GROUP_HEADS = frozenset("team band company association organization party group school university label".split())
_HEADS = "|".join(sorted(PLACE_HEADS | PERSON_HEADS | GROUP_HEADS, key=len, reverse=True))
_NAMED_BY_ROLE = "|".join(sorted(PERSON_HEADS | GROUP_HEADS | {"birthplace", "place of birth"}, key=len, reverse=True))
_ENTITY_RUN = r"[A-Z0-9][\w'’.-]*(?:,? (?:(?:of|the|and|for|with|de|la|van|von|a|an) )*[A-Z0-9][\w'’.-]*)*"
# A relative clause ends at the participle that closes it ("where X is located", "that X was born
# in"), else at a comma or the question mark: what follows is the outer question again.
_CLAUSE = (r"(?:[^,?]|, (?=[A-Z]))*?\b(?:is|was|are|were) (?:[a-z]+ )??(?:[a-z]+ed|born|found|from|held|made|known|part of|"
           r"a [a-z]+)\b(?: (?:in|of|from|by))?(?= [a-z]|[,?]|$)|(?:[^,?]|, (?=[A-Z]))*")
_BRIDGES = [
    # "the association which published X", "the country where X is found", "the county in which X ..."
    re.compile(rf"\bthe (?:[a-z]+ ){{0,2}}?(?P<head>[a-z]+),? (?:(?:in|at|from|of|to|on|by|under|with) )?"
               rf"(?:which|that|who|whom|where|whose)\b(?P<clue>{_CLAUSE})"),
    # "the country Ada Lind is from", "the company X is part of": a relative clause without its pronoun
    re.compile(rf"\bthe (?:[a-z]+ ){{0,2}}?(?P<head>{_HEADS}) (?P<clue>{_ENTITY_RUN} (?:{_CLAUSE}))"),
    # "the composer of Winter Lanterns", "the birthplace of X" (not "the village of X": that is its name)
    re.compile(rf"\bthe (?:[a-z]+ ){{0,2}}?(?P<head>{_NAMED_BY_ROLE}) of (?P<clue>{_ENTITY_RUN})"),
    # "the airport in birth place of X": a birthplace needs no article
    re.compile(rf"\b(?:the )?(?P<head>birth ?place|hometown) of (?P<clue>{_ENTITY_RUN})"),
    # "Blue Harbor's performer", "Glass Tide's main director", "Ada Lind's city of birth"
    re.compile(rf"(?P<clue>{_ENTITY_RUN})['’]s (?:[a-z]+ ){{0,2}}?(?P<head>{_HEADS})(?: of birth)?\b"),
]


@dataclass(frozen=True)
class Bridge:
    """A phrase of the question naming something only another passage identifies: its head noun
    ("association"), the clue that identifies it ("published Tarbury Review"), where it stands."""

    head: str
    clue: str
    start: int
    end: int

    @property
    def kind(self) -> AnswerType:
        noun = self.head.replace("birth place", "birthplace").split()[0]  # "place of birth"
        return "place" if noun in PLACE_HEADS else "person" if noun in PERSON_HEADS else "entity"


def bridge_phrase(question: str) -> Bridge | None:
    """The innermost bridge of the question (the last to start: bridges nest to the right), if
    the question asks something beyond it: "Who is the mayor of Tarbury?" asks for the mayor
    itself, "Where was the designer of Tern born?" for something about the designer."""
    found = []
    for pattern in _BRIDGES:
        for m in pattern.finditer(question):
            found.append(Bridge(m.group("head"), m.group("clue").strip(), m.start(), m.end()))
            # "the country that produced Glass Tide taken by the navy": where the clause's end is not
            # marked, it may end with the name it holds, and the rest is the outer question again
            named = re.search(_ENTITY_RUN, m.group("clue"))
            if named and named.end() < len(m.group("clue").rstrip()):
                end = m.start("clue") + named.end()
                found.append(Bridge(m.group("head"), question[m.start("clue"):end].strip(), m.start(), end))
    for bridge in sorted(found, key=lambda b: (-b.start, -b.end)):  # the longest reading of a clause first
        outside = question[:bridge.start] + " " + question[bridge.end:]
        if meaningful_tokens(bridge.clue) and meaningful_tokens(outside):
            return bridge
    return None


def resolve_bridge(question: str, facts: list, asked: str = "") -> tuple[str, Extracted] | None:
    """The question with its innermost bridge replaced by the entity the facts name for it, read
    like a question of its own: the head's type, near the clue's words, not the clue itself nor
    anything else the question (or its `asked` original wording) names."""
    bridge = bridge_phrase(question)
    if bridge is None or not facts:
        return None
    clue = f"{bridge.head} {bridge.clue}"
    named = meaningful_tokens(" ".join(named_entities(bridge.clue)))
    # The passage titled with what the clue names is the one that says what the bridge is: read it
    # first, so passages found by later hops do not change an entity already resolved.
    about = [f for f in facts if (title := meaningful_tokens(_title_name(f))) and title <= named]
    # Else the passages that name it; a passage that does not is about something else.
    naming = [f for f in facts if named <= meaningful_tokens(f.title + " " + f.text)]
    found = None
    for candidates, kind in ((about, bridge.kind), (naming, bridge.kind), (about, "entity"), (naming, "entity")):
        if candidates and (kind == bridge.kind or bridge.kind == "place"):  # "a river in Moss": no cue word
            # what the clue names is not the bridge: "Ada Lind's team" is not "Ada M. Lind"
            found = extract_span(clue, kind, candidates, head=bridge.head, not_answers=f"{question} {asked}",
                                 unlike=frozenset(named))
        if found is not None:
            break
    if found is None:
        return None
    return question[:bridge.start] + found.span + question[bridge.end:], found


def resolve_bridges(question: str, facts: list, hops: int = 3) -> str:
    """The question with as many bridges resolved, innermost first, as the facts allow."""
    original = question
    for _ in range(hops):
        resolved = resolve_bridge(question, facts, asked=original)
        if resolved is None:
            break
        question = resolved[0]
    return question


def fits_type(answer: str, kind: AnswerType) -> bool:
    """Whether a text could answer a question of this type at all (a date is no answer to "who")."""
    if kind in ("other", "yes_no"):
        return bool(answer.strip())
    if kind in ("person", "place", "entity"):
        return bool(_NAME.search(_QUOTED.sub(" ", answer)))
    if kind == "date":
        return bool(_DATE.search(answer))
    if kind == "number":
        return bool(_NUMBER.search(answer))
    return bool(_ADDRESS.search(answer))


