"""Guardrails: small pure functions over the scratchpad. The agent loop calls them by name;
none of them needs an LM, so each is unit-tested on its own."""

from __future__ import annotations

import re

from deltaseek.programs.agent.learned_reader import metric_terms
from deltaseek.programs.agent.scratchpad import Scratchpad
from deltaseek.programs.agent.settings import STRATEGIES
from deltaseek.programs.text import (NUMBER_WORDS, acronyms, meaningful_tokens, misspelt_in_a_name, name_runs,
                                     normalize_query, sentence_names)
from deltaseek.signatures import ANSWERABILITY


def block_duplicate_call(pad: Scratchpad, tool: str, query: str, min_new_tokens: int = 3) -> str | None:
    """Why this call must not run, or None. Exact duplicates and near-duplicates (same tool,
    fewer than `min_new_tokens` meaningful tokens different) are blocked, failed calls included."""
    if not meaningful_tokens(query):
        return "the query has no meaningful terms"
    normalized = normalize_query(query)
    tokens = meaningful_tokens(query)
    for call in pad.executed_calls:
        if call.tool != tool:
            continue
        if normalize_query(call.query) == normalized:
            return f"exact duplicate of the step {call.step} call {tool}(\"{call.query}\")"
        differing = len(tokens ^ meaningful_tokens(call.query))
        if differing < min_new_tokens:
            return (f"near-duplicate of {tool}(\"{call.query}\"): only {differing} meaningful "
                    f"token(s) differ, at least {min_new_tokens} are needed")
    return None


def block_echo_query(query: str, reserved_names: set[str]) -> str | None:
    """A 'query' made only of tool or field names is an echo of the prompt, not a search
    (small models copy `search_corpus` or `query` into the query field)."""
    tokens = meaningful_tokens(query.replace("_", " ")) | meaningful_tokens(query)
    reserved = {part for name in reserved_names for part in [name, *name.split("_")]}
    if tokens and tokens <= reserved:
        return "the query only repeats tool or field names; write search terms"
    return None


def failed_tools(pad: Scratchpad) -> set[str]:
    """Tools that were rate-limited or unavailable in this run."""
    return {c.tool for c in pad.executed_calls if c.status.failed}


def untried_tools(pad: Scratchpad, query: str, tool_names: list[str], exclude: str) -> list[str]:
    """Tools other than `exclude` that have not yet run this query and have not failed."""
    tried = {(c.tool, normalize_query(c.query)) for c in pad.executed_calls}
    broken = failed_tools(pad)
    return [t for t in tool_names
            if t != exclude and t not in broken and (t, normalize_query(query)) not in tried]


def reroute_from_failed_tool(pad: Scratchpad, tool: str, query: str, tool_names: list[str]) -> str | None:
    """A healthy tool to use instead of a failed one, not yet tried with this query; None to keep `tool`."""
    if tool not in failed_tools(pad):
        return None
    return next(iter(untried_tools(pad, query, tool_names, exclude=tool)), None)


def hard_budget_reached(pad: Scratchpad, hard_budget: int) -> bool:
    return pad.step >= hard_budget


def search_limit_reached(pad: Scratchpad, max_searches: int | None) -> bool:
    return max_searches is not None and len(pad.executed_calls) >= max_searches


def refinement_reason(pad: Scratchpad, relevance_drop: float = 0.5) -> str | None:
    """Why the last executed search calls for a refined query: quality, not only zero results."""
    executed = pad.executed_calls
    if not executed:
        return None
    last = executed[-1]
    if last.status.failed:
        return None  # a tool failure calls for another tool, not another query
    if last.result_count == 0:
        return "found no results"
    if last.new_facts == 0:
        return "added no new facts"
    earlier = [c.top_score for c in executed[:-1] if c.top_score]
    if last.top_score is not None and earlier and last.top_score < relevance_drop * max(earlier):
        return f"was much less relevant than earlier searches (top score {last.top_score:.1f} vs {max(earlier):.1f})"
    return None


def weak_search_streak(pad: Scratchpad) -> int:
    """How many executed searches in a row, counting back from the last, added no new facts."""
    streak = 0
    for call in reversed(pad.executed_calls):
        if call.new_facts > 0:
            break
        streak += 1
    return streak


def search_exhausted(pad: Scratchpad, window: int = 3) -> bool:
    return weak_search_streak(pad) >= window


def answerability_stops_search(pad: Scratchpad, answerability: str) -> bool:
    """proxy_only or unlikely (the answerability steering the search): stop searching for the
    exact figure (seed 000), once a search has run."""
    return bool(pad.executed_calls) and answerability in ("proxy_only", "unlikely")


def next_unused_strategy(pad: Scratchpad) -> str | None:
    return next((s for s in pad.strategy_order or STRATEGIES if s not in pad.strategies_used), None)


COPIED_WORDS = 8
"""A query (or a small model's answer) this long that stands word for word in a fact is a copied sentence."""


def question_subjects(question: str) -> list[str]:
    """The names a question is about (`sentence_names`): its capitalized words, but not its opening
    word, which grammar capitalizes ("Were", "List", "Describe", "Qui"), unless it is a name on its
    own evidence ("Ada Lind was born where?")."""
    return sentence_names(question)


def subjects_missing_from_facts(pad: Scratchpad) -> list[str]:
    """Subjects of the question that no fact mentions and that the sources lack: a tool that knows
    its collection said no passage names them (`pad.subject_presence`), or, where no tool can
    tell, a search that named them found nothing about them (the Xyzzyville case). A subject the
    collection holds is not missing because the passages read so far are about something else."""
    said = facts_text(pad)
    evidence = meaningful_tokens(said) | acronyms(said)
    searched = [(c.tool, meaningful_tokens(c.query)) for c in pad.executed_calls if not c.status.failed]
    missing = []
    runs = name_runs(pad.question, question_subjects(pad.question))
    for subject in question_subjects(pad.question):
        terms = meaningful_tokens(subject)
        if not terms or terms & evidence or misspelt_in_a_name(subject, runs, lambda w: bool(meaningful_tokens(w) & evidence),
                                                                evidence):
            continue
        known = pad.subject_presence.get(subject)
        # where tools cannot tell, a search naming it must have run on each of them (a folder of
        # code is still to search when the corpus lacks the name)
        named_by = {tool for tool, query in searched if terms <= query}
        if known is False or known is None and named_by and set(pad.subject_unknown_to.get(subject, ())) <= named_by:
            missing.append(subject)
    return missing


def unsearched_subjects(pad: Scratchpad) -> list[str]:
    """Missing subjects that no search which ran has named: their absence is the tools' word,
    not yet a search's (tool first: a search runs before an answer says so)."""
    searched = [meaningful_tokens(c.query) for c in pad.executed_calls if not c.status.failed]
    return [s for s in subjects_missing_from_facts(pad) if not any(meaningful_tokens(s) <= q for q in searched)]


# --- content guards: every LM output is checked before it is used ---------------------------

DSPY_PLACEHOLDERS = ("not supplied for this particular example",)
"""What DSPy writes into a demo field the demo lacks; a small model copies it into its replies."""
REPEATED_RUN = re.compile(r"(.{1,4})\1{3,}")
"""A unit of one to four characters four times running: "3.0.0.0.0", "1.000.000.000.000"."""
_PLAIN_NUMBER = re.compile(r"(?<![\d.])\d+(?:,\d{3})*(?:\.\d+)?(?![\d.])")
"""A number as numbers are written ("10000", "1,000,000", "2.5"), whose zeros are no repeated run."""


def has_repeated_run(text: str) -> bool:
    """Whether the text, its spaces left out, holds a `REPEATED_RUN` that is not inside a plain
    number: "10000 people" and "**1851**" do not, "3.0.0.0.0" does."""
    joined = text.replace(" ", "")
    numbers = [m.span() for m in _PLAIN_NUMBER.finditer(joined)]
    return any(not any(start <= m.start() and m.end() <= end for start, end in numbers)
               for m in REPEATED_RUN.finditer(joined))


MIN_ITEM_WORDS = 4
"""A caveat or assumption shorter than this is a fragment ("1. Ada Lind"), not a statement."""


def repeats_itself(text: str, times: int = 3, given: str = "") -> bool:
    """Degenerate output: a run of two to four words that comes back `times` times or more
    ("The Tarbury Herald (The Tarbury Herald) (The Tarbury Herald ..."), and more often than in
    the `given` text it may quote (a question that names one thing three times is quoted whole)."""
    words, given_words = normalize_query(text).split(), normalize_query(given).split()
    for n in (2, 3, 4):
        grams = [" ".join(words[i:i + n]) for i in range(len(words) - n + 1)]
        given_grams = [" ".join(given_words[i:i + n]) for i in range(len(given_words) - n + 1)]
        if any(grams.count(g) >= times and grams.count(g) > given_grams.count(g) for g in set(grams)):
            return True
    return False


def facts_text(pad: Scratchpad) -> str:
    """Every fact read, titles included, as one text."""
    return " ".join(f.title + " " + f.text for f in pad.facts)


def evidence_tokens(pad: Scratchpad) -> set[str]:
    return meaningful_tokens(facts_text(pad))


def reject_junk_query(query: str, pad: Scratchpad, reserved_names: set[str]) -> str | None:
    """Why a proposed query carries no search terms, or None. A query must hold a meaningful
    term of the question or of the facts found; it must not be a run of repeated characters
    ("3.0.0.0.0"), a field, tool, strategy or answerability name, or a sentence copied out of
    an observation."""
    if not query.strip():
        return "the query is empty"
    if echo := block_echo_query(query, reserved_names):
        return echo
    if has_repeated_run(query) or repeats_itself(query, given=pad.question):
        return "the query repeats itself (a run of repeated characters or words)"
    terms = meaningful_tokens(query)
    if not terms & (meaningful_tokens(pad.question) | evidence_tokens(pad)):
        return "the query holds no term of the question or of the facts found"
    words = normalize_query(query).split()
    if len(words) >= COPIED_WORDS:
        copied = " ".join(words)
        if any(copied in normalize_query(f.title + " " + f.text) for f in pad.facts):
            return "the query is a sentence copied from the results, not search terms"
    known = set(normalize_query(pad.question).split()).union(*(normalize_query(f.text).split() for f in pad.facts))
    if len([w for w in words if w not in known]) > MAX_INVENTED_WORDS:
        return "the query is a sentence of the model's own, not search terms"
    return None


MAX_INVENTED_WORDS = 8
"""A query adding more words than this that neither the question nor a fact holds is a sentence the
model wrote ("The designer of Tern born in 2010 in the city of Lundby, a renowned ..."): its
made-up words outweigh the subject in the ranking. Eight new names still pass (the members of a
group the question names only by its nickname, spelled out)."""


def uncovered_terms(pad: Scratchpad) -> list[str]:
    """The question's meaningful words that no fact found contains, in the question's order:
    what the search has not looked at yet (seed 000: each side of a comparison, then proxies)."""
    read = evidence_tokens(pad)
    evidence = read | {NUMBER_WORDS.get(t, t) for t in read}
    evidence |= {digit for digit, word in NUMBER_WORDS.items() if word in evidence}
    asked = metric_terms(pad.question)  # a figure no source states is the proxy case, not a lead
    words = [w for w in normalize_query(pad.question).split() if w.strip(".") in meaningful_tokens(w)]
    return list(dict.fromkeys(w for w in words if w.strip(".") not in evidence and w not in asked))


def is_echo(item: str, pad: Scratchpad, reserved_names: set[str], given: tuple[str, ...] = ()) -> bool:
    """A caveat or assumption that says nothing: a field, tool or answerability name, DSPy's
    placeholder, a text the LM was given as input (`given`) handed back, or words sharing no
    term with the question or the facts."""
    text = item.strip().strip(".:;-* ").lower()
    if not text or any(p in text for p in DSPY_PLACEHOLDERS):
        return True
    said = normalize_query(text)
    if any(said == normalize_query(g) or len(said) >= 20 and said[:60] in normalize_query(g) for g in given):
        return True  # handed back, whole or as a copied stretch of a fact
    if len(said.split()) < MIN_ITEM_WORDS or repeats_itself(item):
        return True
    names = {n.lower() for n in reserved_names} | set(ANSWERABILITY) | {"unknown", "not found", "none", "n/a"}
    if text in names or text.replace(" ", "_") in names:
        return True
    if block_echo_query(item, reserved_names):
        return True
    words = {t for t in meaningful_tokens(item) if re.search(r"[^\W\d_]", t)}  # "2018-2022" says nothing
    return not words & (meaningful_tokens(pad.question) | evidence_tokens(pad))


def keep_meaningful(items: list[str], pad: Scratchpad, reserved_names: set[str], given: tuple[str, ...] = ()
                    ) -> list[str]:
    return [item for item in items if not is_echo(item, pad, reserved_names, given)]


def program_tool(pad: Scratchpad, tool_names: list[str]) -> str:
    """The tool for a move the program makes itself: each healthy tool in the user's order
    before any is used again (the one used least, earliest in the order)."""
    broken = failed_tools(pad)
    healthy = [t for t in tool_names if t not in broken] or tool_names
    uses = {t: sum(1 for c in pad.executed_calls if c.tool == t) for t in healthy}
    return min(healthy, key=lambda t: (uses[t], healthy.index(t)))
