"""What the facts found say about the question, decided in code: the typed answer spans, the
related figures (proxies), answerability, and the ambiguous terms an answer must state how it read.

The LM's own labels may tighten this reading; they never turn "no typed answer found" into
"direct" (see `DeltaSeek.finish`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from deltaseek.programs.agent import guardrails as guard
from deltaseek.programs.agent.learned_reader import (Extracted, ReaderModel, bridge_phrase, candidate_spans,
                                                     choice_options, compare_options, compare_pair,
                                                     expected_answer_types, extract_answer, facts_about, fits_type,
                                                     metric_phrase, names_an_option, option_by_adapter,
                                                     option_by_support, question_parts, resolve_bridges, sentences,
                                                     shipped_reader, states_the_metric)
from deltaseek.programs.agent.learned_reader.descriptions import description
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad
from deltaseek.programs.text import NUMBER_WORDS, QUESTION_WORDS, meaningful_tokens, named_entities, stems, stopwords



@dataclass
class Reading:
    """The program's own reading of the evidence."""

    spans: list[Extracted] = field(default_factory=list)
    """A typed span for each part of the question, from facts about its subject."""
    proxies: list[Extracted] = field(default_factory=list)
    """Figures about the subject that are not the figure asked for (stars for an adoption rate)."""
    unsure: list[Extracted] = field(default_factory=list)
    """Spans the reader found but is not sure of (confidence below the threshold): never the
    answer, only what the answer says was found."""
    answerability: str = "unknown"
    """direct, proxy_only, unlikely, unknown (about the subject, but no typed answer yet), or
    untyped (the question names no answer type to look for: the LM's label decides)."""

    @property
    def answered(self) -> bool:
        return bool(self.spans)


def reads_untyped(question: str, kinds: list[str], reader: ReaderModel) -> bool:
    """Whether the reader reads a question that names no answer type ("What did the treaty end?"):
    it does where its weights say so (`ReaderModel.reads_untyped`), for it was trained on such
    questions and its answerability model and threshold decide whether a phrase it finds answers
    them. Left to the LM's label: a yes/no question, a question in another language, and one
    asking what a named thing is ("What is Tern?" asks for a description, not a phrase of a
    passage)."""
    return (reader.reads_untyped and "yes_no" not in kinds and asks_in_english(question)
            and not asks_what_a_name_is(question))


def asks_what_a_name_is(question: str) -> bool:
    """Whether the question asks what or who a named thing is and nothing more: "What is Tern?",
    "Who was Ida Brann?" (not "What is the capital of Tarn?", which asks for a span)."""
    match = _COPULAR_QUESTION.match(question)
    words = re.findall(r"[\w'’.-]+", match.group(2)) if match else []
    return bool(words) and all(w[:1].isupper() or w[:1].isdigit() or w.lower() in stopwords() for w in words)


def asks_in_english(question: str) -> bool:
    """Whether the question holds an English question word ("what", "who", "is", ...): the words
    the reader types a question by."""
    return bool(set(re.findall(r"[a-z]+", question.lower())) & QUESTION_WORDS)


def read_evidence(pad: Scratchpad, reader: ReaderModel | None = None) -> Reading:
    """The program's reading of the facts: a typed span per part of the question whose confidence
    reaches the `reader`'s threshold (below it the reader abstains), related figures, and the
    answerability they show. `reader`: the program's weights (`DeltaSeek.learned_reader()`), else
    the shipped ones."""
    reader = reader or shipped_reader()
    calls = pad.executed_calls
    if not pad.facts and calls and all(c.status.failed for c in calls):
        return Reading(answerability="unknown")  # the tools failed: nothing is known about the question yet
    missing = reader.abstain_on_absent_subject and guard.subjects_missing_from_facts(pad)
    if missing:  # "no source mentions it" holds only once a search has asked for it
        return Reading(answerability="unknown" if guard.unsearched_subjects(pad) else "unlikely")
    if not pad.facts:
        # Searches that found nothing for words the question does not hold (a model's misspelt or
        # invented name: "Whitnash" asked as "Whitnesh") say nothing of the question: search on.
        return Reading(answerability="unknown")
    compared = compare_options(pad.question, pad.facts) or compare_pair(pad.question, pad.facts)
    if compared:  # two named things and an attribute: each side read, the answer from the comparison
        return Reading(spans=[compared], answerability="direct")
    if options := choice_options(pad.question):
        return choose_an_option(pad, options, reader)
    kinds = expected_answer_types(pad.question)
    if kinds == ["other"] and (described := description(pad.question, pad.facts)):
        return Reading(spans=[described], answerability="direct")  # "What is X?": the sentence saying what X is
    if set(kinds) <= {"other", "yes_no"} and not reads_untyped(pad.question, kinds, reader):
        if unfollowed_bridge(pad, reader):
            return Reading(answerability="unknown")  # whatever the LM claims, a hop is still to search
        return Reading(answerability="untyped")  # no span type to look for: the evidence cannot decide
    found = extract_answer(pad.question, pad.facts, reader)
    unsure = [e for e in found if e.unsure]
    restated = restated_answer(pad.question, pad.facts) if not found and len(kinds) == 1 else None
    if restated and fits_type(restated.span, kinds[0]) and not unfollowed_bridge(pad, reader):
        return Reading(spans=[restated], answerability="direct")  # a span the reader has no pattern for
    direct = [e for e in found if e not in unsure and (e.kind != "number" or states_the_metric(pad.question, e))]
    if direct and (unfollowed_bridge(pad, reader) or unfollowed_pronoun(pad, found)):
        return Reading(spans=direct, unsure=unsure, answerability="unknown")  # read before the hop that answers it
    if direct and len(direct) == len(found) and (len(found) == len(kinds) or kinds == ["other"]):
        return Reading(spans=direct, answerability="direct")
    if "number" in kinds:
        proxies = figures_about_subject(pad)
        if proxies:
            return Reading(proxies=proxies, unsure=unsure, answerability="proxy_only")
    return Reading(spans=direct, unsure=unsure, answerability="unknown")


def choose_an_option(pad: Scratchpad, options: list[str], reader: ReaderModel) -> Reading:
    """The reading of a question that asks to choose between two options: the reader's span where
    it names one option and not the other (as the passage writes it: "Ida Maria Brann" for "Ida
    Brann"), else the option whose own passages say more of what the question says of it, else the
    one the reader adapter finds likelier (a best guess); nothing while no passage read speaks of
    either (search on). A span naming neither option never answers a choice."""
    if not any(facts_about(option, pad.facts) for option in options):
        return Reading(answerability="unknown")
    read = next(iter(extract_answer(pad.question, pad.facts, reader)), None)
    if read is not None and sum(names_an_option(read.span, [option]) for option in options) == 1:
        return Reading(spans=[read], answerability="unknown" if read.unsure else "direct")
    if supported := option_by_support(pad.question, pad.facts, options):
        return Reading(spans=[supported], answerability="direct")
    guessed = option_by_adapter(pad.question, pad.facts, options, reader)
    return Reading(spans=[guessed] if guessed else [], answerability="unknown")


_COPULAR_QUESTION = re.compile(r"^\s*(?:what|who|which|where|when)\s+(is|are|was|were)\s+(?:(?:the|a|an)\s+)?(.+?)[\s?.!]*$",
                               re.I)
_ARTICLE = r"(?:(?:the|a|an)\s+)?"


def restated_answer(question: str, facts: list[Fact]) -> Extracted | None:
    """The answer of a sentence that restates a "What is the A of X?" question as a statement, "The A of X is Y":
    "What is the motto of Wendle Abbey?" is answered by "The motto of Wendle Abbey is Ora et
    labora." (Y, to the first comma or semicolon). The sentence says the question's own words, so
    it answers the question as asked, when Y is a name, a code or a figure: a Y in lower case
    describes the A ("The mayor of Tarbury is the head of its council", "... is elected every
    four years") rather than naming it."""
    match = _COPULAR_QUESTION.match(question)
    if not match or not match.group(2)[:1].islower():
        return None  # "What is Wendle Abbey?" asks for a description, not a span
    phrase = r"\W+".join(re.escape(w) for w in re.findall(r"\w+", match.group(2)))
    # the phrase is the sentence's subject: at its start or after an opening clause ("In 1990, ...")
    pattern = re.compile(rf"(?:^|,\s+){_ARTICLE}{phrase}\W*\s+(?:is|are|was|were)\s+([^,;]+?)\s*(?:[,;]|\.?$)", re.I)
    for fact in facts:
        for sentence in sentences(fact.text):
            found = pattern.search(sentence)
            if found and (found.group(1)[:1].isupper() or found.group(1)[:1].isdigit()):
                return Extracted(found.group(1), sentence, fact.source, "other", 1.0)
    return None


def unfollowed_bridge(pad: Scratchpad, reader: ReaderModel) -> bool:
    """Whether a multi-hop question still has a hop to search: a bridge the facts do not resolve
    (with the `reader`'s weights), or one they resolve to an entity no search has named yet (the
    answer is about that entity, and a passage found for the clue rarely says it)."""
    resolved = resolve_bridges(pad.question, pad.facts, reader)
    if bridge_phrase(resolved):
        return True
    entity = meaningful_tokens(resolved) - meaningful_tokens(pad.question)
    return bool(entity) and not any(entity <= q for q in searched_terms(pad))


def searched_terms(pad: Scratchpad) -> list[set[str]]:
    """The meaningful words of each search that ran: what the program has asked the tools for."""
    return [meaningful_tokens(c.query) for c in pad.executed_calls if not c.status.failed]


_LATER_PRONOUN = re.compile(r"\b(?:he|she|it|they|him|them|his|her|its|their)\b", re.I)


def unfollowed_pronoun(pad: Scratchpad, found: list[Extracted]) -> bool:
    """Whether a later part of the question speaks of the earlier part's answer by a pronoun ("Who
    built the mill, and where did she train?") while no search has named that answer yet: what
    is asked of her is in a passage about her, which the first part's passages rarely are."""
    parts = question_parts(pad.question)
    if len(found) < 2 or len(parts) < 2 or not any(_LATER_PRONOUN.search(p) for p in parts[1:]):
        return False
    entity = meaningful_tokens(found[0].span) - meaningful_tokens(pad.question)
    return bool(entity) and not any(entity & q for q in searched_terms(pad))


def figures_about_subject(pad: Scratchpad, limit: int = 3) -> list[Extracted]:
    """Numbers in sentences that name the question's subject: what a proxy answer can offer."""
    asked = meaningful_tokens(metric_phrase(pad.question) or "")
    subjects = (meaningful_tokens(" ".join(named_entities(pad.question))) | meaningful_tokens(pad.question)) - asked
    figures: list[Extracted] = []
    for fact in pad.facts:
        for sentence in sentences(fact.text):
            words = meaningful_tokens(fact.title + " " + sentence)
            if not subjects & words:
                continue
            for span, _ in candidate_spans(sentence, "number"):
                figures.append(Extracted(span, sentence, fact.source, "number", len(subjects & words)))
    figures.sort(key=lambda e: -e.score)
    seen: set[str] = set()
    return [f for f in figures if not (f.source in seen or seen.add(f.source))][:limit]


def extracted_answer(reading: Reading) -> str:
    return "; ".join(e.span for e in reading.spans)


def proxy_answer(question: str, reading: Reading, titles: dict[str, str]) -> str:
    """The answer when only proxies exist: say the figure was not found, then what was."""
    found = "; ".join(f"{e.span} ({titles.get(e.source, e.source)}: {e.sentence})" if titles.get(e.source)
                      else f"{e.span} ({e.sentence})" for e in reading.proxies)
    return f"No {figure_asked(question)} was found in the sources. Related figures found: {found}"


def figure_asked(question: str) -> str:
    """The figure a number question asks for, as a noun phrase: "population figure" of "has a
    population of how many inhabitants?", "share of the vote figure", "count of bridges" of "how many
    bridges"; the question's own article and question words are left out."""
    words = (metric_phrase(question) or "exact").split()
    if words[0].lower() == "how":  # "how many ..." asks a count
        return f"count of {' '.join(words[2:])}"
    if len(words) > 1 and words[0].lower() in ("a", "an", "the"):
        words = words[1:]
    if len(words) > 2 and words[-2].lower() == "of" and words[-1].lower() in stopwords() | QUESTION_WORDS:
        words = words[:-2]  # "population of how [many]"
    return " ".join(words) + " figure"


def _normalized(text: str) -> str:
    words = re.findall(r"\w+", text.lower())
    return " ".join(NUMBER_WORDS.get(w, w) for w in words)


def _title_head(title: str) -> str:
    """"The Tern Harbour (1890 survey): charts" -> "tern harbour"."""
    head = re.sub(r"\s*\(.*?\)", "", title.split(":")[0])
    return _normalized(re.sub(r"^the\s+", "", head, flags=re.I))


def _spelled_in_question(question: str, head: str) -> str:
    words = [w.strip("?!,;:\"'") for w in question.split()]
    ngrams = (" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, min(i + 5, len(words) + 1)))
    return next((g for g in ngrams if _normalized(g) == head), head)


def unexplored_meaning(pad: Scratchpad) -> str | None:
    """A question term that a fact's title marks as one of several meanings ("Ruby (gemstone)")
    and that has not been searched on its own: searching it shows which meanings the sources hold."""
    question = _normalized(pad.question)
    searched = {_normalized(q) for q in pad.tried_queries}
    for fact in pad.facts:
        if "(" not in fact.title:
            continue
        head = _title_head(fact.title)
        if head and head not in searched and re.search(rf"\b{re.escape(head)}\b", question):
            return head  # as the titles spell it ("magnificent seven" for "magnificent 7")
    return None


def ambiguous_terms(pad: Scratchpad) -> list[str]:
    """Assumptions for question terms the sources use for several things ("magnificent 7": the
    stocks or the film): each names the reading taken, the one whose passage shares most words
    with the rest of the evidence, and the readings set aside."""
    question = _normalized(pad.question)
    meanings: dict[str, dict[str, Fact]] = {}
    for fact in pad.facts:
        head = _title_head(fact.title)
        if head and re.search(rf"\b{re.escape(head)}\b", question) and meaningful_tokens(head):
            meanings.setdefault(head, {}).setdefault(fact.title.split(":")[0].strip(), fact)
    notes = []
    for head, by_title in meanings.items():
        if len(by_title) < 2:
            continue
        # The context is what the evidence says apart from the term: a passage that mentions the
        # term itself ("remade as The Magnificent Seven") would vote for its own meaning.
        context = " ".join(f.text for f in pad.facts if head not in _normalized(f.title + " " + f.text))

        def fit(title: str) -> int:
            words = stems(by_title[title].text)
            return 2 * len(words & stems(pad.question)) + len(words & stems(context))
        chosen, *others = sorted(by_title, key=lambda t: -fit(t))
        spelled = _spelled_in_question(pad.question, head)
        notes.append(f"Read \"{spelled}\" as {chosen}; the sources also use it for {', '.join(others)}.")
    return notes

