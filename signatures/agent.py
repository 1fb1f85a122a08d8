"""Signatures of the guarded agent: step delta, query diversification, answerability,
task classification and synthesis. Docstrings and field descriptions are the prompt."""

from __future__ import annotations

from typing import Literal

import dspy

from deltaseek.signatures.values import Answerability, TaskKind


class StepDelta(dspy.Signature):
    """You are one reasoning step of a search agent. Say only what is NEW since the last step.

    Read the scratchpad (facts found, searches already run, open questions) and the guidance.
    1. new_evidence: at most 3 short bullets of evidence that is new since the last step.
    2. uncertain: at most 2 things that remain unknown.
    3. answerability: can the exact question be answered from obtainable evidence?
       direct = yes; proxy_only = only approximately, through proxies; unlikely = the data
       probably does not exist or is not public.
    4. next_move: "search" with ONE new query, materially different from every query already
       tried (new terms, another angle, another tool), or "synthesize" when the facts answer
       the question well enough, or when answerability is proxy_only or unlikely.
    Never repeat a query from the scratchpad."""

    question: str = dspy.InputField()
    step: int = dspy.InputField(desc="the number of this step")
    scratchpad: str = dspy.InputField(desc="facts found and searches already run")
    guidance: str = dspy.InputField(desc="tools available, budget left, feedback from the last tool call")
    new_evidence: list[str] = dspy.OutputField(desc="at most 3 short bullets, only what is new")
    uncertain: list[str] = dspy.OutputField(desc="at most 2 short bullets")
    answerability: Answerability = dspy.OutputField()
    next_move: Literal["search", "synthesize"] = dspy.OutputField()
    tool: str = dspy.OutputField(desc="the tool to call when next_move is search")
    query: str = dspy.OutputField(desc="a few keywords for the tool, new compared with the queries tried")


def step_delta_for_tools(tool_names: list[str]) -> type[dspy.Signature]:
    """StepDelta whose `tool` field only admits the tools that exist, so constrained decoding cannot invent one."""
    return StepDelta.with_updated_fields("tool", type_=Literal[tuple(tool_names)])


class DiversifyQuery(dspy.Signature):
    """Write a search query that is materially different from every query already tried.

    Follow the strategy: direct (the question's own key terms), broader (the general topic),
    narrower (one specific aspect), synonyms (other words for the same thing), entity-focused
    (one named entity alone), temporal (add the period or a recent year), proxies (indirect
    signals such as statistics, stars, downloads, case studies), bridge (the entity the facts
    found for what the question only describes, such as the association that published a
    journal, with the question's other terms). Use at least three words that no tried query
    used. Build on the facts found: look for what they do not say yet."""

    question: str = dspy.InputField()
    tried_queries: list[str] = dspy.InputField(desc="every query already run")
    facts: list[str] = dspy.InputField(desc="what has been found so far")
    strategy: str = dspy.InputField()
    query: str = dspy.OutputField(desc="a few keywords")


class JudgeAnswerability(dspy.Signature):
    """Judge whether the EXACT question can be answered with the evidence that is obtainable.

    direct: the evidence answers it, or clearly could with one more search.
    proxy_only: the exact figure or fact is not published; only proxies support an approximate answer.
    unlikely: nothing relevant exists (an unknown place or person, private data)."""

    question: str = dspy.InputField()
    facts: list[str] = dspy.InputField(desc="what has been found so far")
    tried_queries: list[str] = dspy.InputField()
    answerability: Answerability = dspy.OutputField()
    reason: str = dspy.OutputField(desc="one short sentence")


class ClassifyTask(dspy.Signature):
    """Classify the question so the agent can pick its search budget and first strategy.

    lookup: one fact about one thing. multi_hop: needs a fact to find another fact (the creator
    of X, then where they were born). comparison: two or more things side by side.
    aggregate_or_ill_posed: a statistic or rate that may not be published, or vague terms.
    codebase: about code, interfaces or files of a software project."""

    question: str = dspy.InputField()
    kind: TaskKind = dspy.OutputField()


class Synthesize(dspy.Signature):
    """Write the final answer from the facts found; never from memory alone.

    Give the answer itself, as the facts state it: a name, a date, a number, yes or no, one of
    the options the question names, or a short phrase; a sentence or two only when the question
    asks for an explanation or only proxies answer it. If the facts do not state the answer, say
    that the passages do not say, mark answerability unlikely, and put what they do show in
    caveats. State every assumption made about ambiguous terms. Cite the sources (the ids in
    brackets) that the answer rests on."""

    question: str = dspy.InputField()
    facts: list[str] = dspy.InputField(desc="[source] passage, one per fact")
    missing: list[str] = dspy.InputField(desc="what the search could not establish")
    answer: str = dspy.OutputField(desc="the answer itself, or that the passages do not say")
    caveats: list[str] = dspy.OutputField(desc="what is missing or uncertain, short")
    assumptions: list[str] = dspy.OutputField(desc="how ambiguous terms were read, short")
    sources: list[str] = dspy.OutputField(desc="ids of the facts used")
    answerability: Answerability = dspy.OutputField()


class StepMove(dspy.Signature):
    """You are one step of a search agent. Read the facts found, the searches already run and the guidance.

    next_move: "search" with ONE new query, a few keywords that no search has used yet (a name or
    term the facts raise, another angle, another tool), or "synthesize" when the facts answer
    the question."""

    question: str = dspy.InputField()
    step: int = dspy.InputField(desc="the number of this step")
    scratchpad: str = dspy.InputField(desc="facts found and searches already run")
    guidance: str = dspy.InputField(desc="tools available, budget left, feedback from the last tool call")
    next_move: Literal["search", "synthesize"] = dspy.OutputField()
    tool: str = dspy.OutputField(desc="the tool to call when next_move is search")
    query: str = dspy.OutputField(desc="a few new keywords")


class SynthesizeAnswer(dspy.Signature):
    """Answer the question in one short sentence from the facts only, never from memory. If the
    facts do not hold the exact answer, say what they do show."""

    question: str = dspy.InputField()
    facts: list[str] = dspy.InputField(desc="[source] passage, one per fact")
    missing: list[str] = dspy.InputField(desc="what the search could not establish")
    answer: str = dspy.OutputField(desc="one short sentence")
    answerability: Answerability = dspy.OutputField()


COMPACT_OF = {"StepDelta": StepMove, "Synthesize": SynthesizeAnswer}
"""The compact version of each signature that has one: the same inputs, only the outputs the loop
still uses from a model whose other outputs the guardrails replace (the embedded 135M model).
Each output field costs generated tokens, the slowest part of a small model's call."""


def compact_signature(signature: type[dspy.Signature], full: type[dspy.Signature]) -> type[dspy.Signature]:
    """The compact version of `full` for a predictor whose signature is `signature` (derived from
    `full`): its tool choices, and its instructions when an optimizer rewrote them."""
    compact = COMPACT_OF[full.__name__]
    if "tool" in compact.output_fields:
        compact = compact.with_updated_fields("tool", type_=signature.output_fields["tool"].annotation)
    if signature.instructions != full.instructions:
        compact = compact.with_instructions(signature.instructions)
    return compact
