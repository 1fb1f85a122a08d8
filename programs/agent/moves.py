"""The checks on the model's moves and the program's own moves in their place.

`dispose` and `admit_call` decide what runs after a step proposed a move, as functions of the
program (what they read of it is `MoveChecksHost`) and the run's scratchpad: the move itself, the
program's own query when a check names what is wrong with it, another angle on a duplicate, or
the answer when no query is left.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import dspy

from deltaseek.programs.agent import guardrails as guard
from deltaseek.programs.agent.evidence import unexplored_meaning
from deltaseek.programs.agent.fallbacks import heuristic_query
from deltaseek.programs.agent.learned_reader import ReaderModel
from deltaseek.programs.agent.lm_faults import raise_if_fatal, record_lm_fault
from deltaseek.programs.agent.policy import steering, steps_left
from deltaseek.programs.agent.profile import Profile
from deltaseek.programs.agent.prompting import observation
from deltaseek.programs.agent.scratchpad import Scratchpad, StepRecord, ToolCall
from deltaseek.programs.agent.settings import AgentSettings
from deltaseek.programs.agent.text_calls import parse_text_tool_call
from deltaseek.programs.text import meaningful_tokens, named_entities
from deltaseek.programs.tools.base import SearchTool, ToolResult, ToolStatus
from deltaseek.signatures import ANSWERABILITY
from deltaseek.signatures import guidance as text


@dataclass
class Move:
    """What a step decided: synthesize, or run `tool` with `query`. A move the program made in
    place of the LM's carries what the LM proposed and why it was replaced."""
    synthesize: bool
    tool: str = ""
    query: str = ""
    origin: str = "structured"
    proposed: str | None = None
    replaced_because: str | None = None
    prediction: dspy.Prediction | None = None
    """The step's output this move answers (DSPy's trace holds it; see `trace_what_was_done`)."""


class MoveChecksHost(Protocol):
    """What the checks on a move read of the program: its tools and settings, the names the
    prompt holds, its profile and reader for the run, and the predictors that diversify a query
    and judge the answerability."""

    tools: dict[str, SearchTool]
    tool_names: list[str]
    settings: AgentSettings
    reserved_names: set[str]
    diversify: dspy.Predict
    judge: dspy.Predict

    def profile(self, pad: Scratchpad | None = None) -> Profile: ...
    def learned_reader(self) -> ReaderModel: ...
    def saw_junk(self, pad: Scratchpad, why: str) -> None: ...
    def call_lm(self, pad: Scratchpad, predictor: dspy.Predict, **inputs) -> dspy.Prediction: ...

def dispose(agent: MoveChecksHost, pad: Scratchpad, move: Move) -> Move:
    """The checks on the model's move: a query that a check names as junk (an echo, a repeated
    run, no search term, a copied or invented sentence) becomes the program's move, and the run
    goes on as the small profile when the capable one was only a default. An answer before any
    fact holds a typed answer, while strategies remain, is replaced by a search for as many
    searches as the profile's `refinements_before_answer`, or while a term of the question that
    the sources use in several senses is unsearched (the answer must say how it was read)."""
    if move.synthesize:
        refinements = agent.profile(pad).refinements_before_answer
        premature = (pad.executed_calls and steering(pad) == "unknown" and steps_left(pad)
                     and guard.next_unused_strategy(pad) is not None
                     and (refinements is None or len(pad.executed_calls) <= refinements
                          or unexplored_meaning(pad) is not None))
        reason = "no fact found so far holds an answer of the kind asked for" if premature else None
    else:
        reason = guard.reject_junk_query(move.query, pad, agent.reserved_names)
        if reason:
            agent.saw_junk(pad, reason)
    if reason is None:
        return move
    proposed = "synthesize" if move.synthesize else move.query
    answer_now = Move(True, origin="program", proposed=proposed, replaced_because=reason)
    if not move.synthesize and steering(pad) == "direct":
        # the facts already hold a typed answer: the program's best move is to answer
        pad.steps[-1].note = f"replaced {move.query!r}: {reason}; the facts already answer the question"
        return answer_now
    if program := program_move(agent, pad, proposed=proposed, reason=reason):
        return program
    if pad.executed_calls:  # no query of the program's own is left: answer, never the rejected move
        pad.steps[-1].note = f"replaced {proposed!r}: {reason}; no query of the program's own is left"
        return answer_now
    return Move(False, agent.tool_names[0], pad.question, "tool_first", proposed, reason)

def program_move(agent: MoveChecksHost, pad: Scratchpad, proposed: str, reason: str) -> Move | None:
    """The first of the program's own queries that is not a duplicate, on the next tool in the user's order."""
    tool = guard.program_tool(pad, agent.tool_names)
    for query, why in program_queries(pad, agent.learned_reader()):
        if query and not why_blocked(agent, pad, Move(False, tool, query)):
            pad.steps[-1].note = f"replaced {proposed!r}: {reason}; {why}"
            return Move(False, tool, query, "program", proposed, reason)
    return None

def recover_text_call(agent: MoveChecksHost, pad: Scratchpad, record: StepRecord, exc: Exception) -> Move | None:
    """A tool call read from the text of a reply that did not parse, else no move (no progress)."""
    raw = getattr(exc, "lm_response", None) or ""
    parsed = parse_text_tool_call(raw, agent.tool_names)
    if parsed:
        pad.consecutive_lm_failures = 0
        record.note = "structured output failed; tool call parsed from text"
        record.move = f"{parsed[0]}(\"{parsed[1]}\")"
        return dispose(agent, pad, Move(False, parsed[0], parsed[1], "text"))
    if pad.lm_faults and pad.lm_faults[-1].kind == "unreadable":  # a reply, not a failed call
        agent.saw_junk(pad, f"a step's reply could not be read ({type(exc).__name__})")
    pad.consecutive_lm_failures += 1
    record.note = f"no usable move ({type(exc).__name__}); counted as no progress"
    if pad.consecutive_lm_failures >= agent.settings.max_lm_failures:
        pad.model_unusable = True
        record.note += "; the model's replies could not be used, the program goes on with its own moves"
    return None

def admit_call(agent: MoveChecksHost, pad: Scratchpad, move: Move) -> Move | None:
    """The duplicate guard: reroute from failed tools, block repeats, take another angle."""
    if move.tool not in agent.tools:
        move.tool = agent.tool_names[0]
    rerouted = guard.reroute_from_failed_tool(pad, move.tool, move.query, agent.tool_names)
    if rerouted:
        move = Move(False, rerouted, move.query, "rerouted")
    reason = why_blocked(agent, pad, move)
    if reason is None:
        return move
    record_blocked(agent, pad, move, reason)
    while (strategy := guard.next_unused_strategy(pad)) is not None:
        pad.strategies_used.append(strategy)
        query = diversified_query(agent, pad, strategy)
        if query is None or guard.reject_junk_query(query, pad, agent.reserved_names):
            continue
        retry = Move(False, move.tool, query, "diversified")
        if (retry_blocked := why_blocked(agent, pad, retry)) is None:
            return retry
        record_blocked(agent, pad, retry, retry_blocked)
        break
    # still a duplicate after diversifying: the program's own next query, else synthesis
    return program_move(agent, pad, proposed=move.query, reason=reason)

def why_blocked(agent: MoveChecksHost, pad: Scratchpad, move: Move) -> str | None:
    return (guard.block_duplicate_call(pad, move.tool, move.query, agent.settings.min_new_tokens)
            or guard.block_echo_query(move.query, agent.reserved_names))

def diversified_query(agent: MoveChecksHost, pad: Scratchpad, strategy: str) -> str | None:
    """The strategy's query: the program's own, or the LM's where `diversify_with_lm` asks for it."""
    if not agent.settings.diversify_with_lm:
        return heuristic_query(pad, strategy, agent.learned_reader())
    try:
        out = agent.call_lm(pad, agent.diversify, question=pad.question, tried_queries=pad.tried_queries,
                           facts=[f.text[:160] for f in pad.facts[-6:]], strategy=strategy)
        query = (out.query or "").strip()
    except Exception as exc:
        raise_if_fatal(exc)
        record_lm_fault(pad, "diversify", exc)
        query = ""
    usable = query and not why_blocked(agent, pad, Move(False, agent.tool_names[0], query))
    return query if usable else heuristic_query(pad, strategy, agent.learned_reader()) or query or None

def record_blocked(agent: MoveChecksHost, pad: Scratchpad, move: Move, reason: str) -> None:
    pad.tool_calls.append(ToolCall(step=pad.step, tool=move.tool, args={"query": move.query},
                                   status=ToolStatus.BLOCKED, executed=False, blocked_reason=reason,
                                   origin=move.origin, proposed=move.proposed,
                                   replaced_because=move.replaced_because))
    blocked = ToolResult(tool=move.tool, query=move.query, status=ToolStatus.BLOCKED, note=reason)
    pad.notes.append(observation(pad, blocked, agent.tool_names, agent.profile(pad)))


def program_queries(pad: Scratchpad, reader: ReaderModel):
    """The program's own queries, best first: a term the sources use in several senses, what the
    question names that no fact covers, then each unused strategy's query (marked used as tried;
    a bridge resolved with `reader`, the program's)."""
    yield unexplored_meaning(pad), "searching a term the sources use in several senses"
    uncovered = guard.uncovered_terms(pad)
    if uncovered and pad.executed_calls:
        subjects = sorted(meaningful_tokens(" ".join(named_entities(pad.question))))
        yield " ".join(uncovered + subjects[:2]), "searching what no fact covers"
    while (strategy := guard.next_unused_strategy(pad)) is not None:
        pad.strategies_used.append(strategy)
        yield heuristic_query(pad, strategy, reader), f"strategy {strategy}"


def move_outputs(move: Move | None) -> dict:
    """A move as the step's output fields; None (no call left to make) is synthesis."""
    if move is None or move.synthesize:
        return {"next_move": "synthesize", "query": ""}  # a synthesis runs no query: a demo shows none
    return {"next_move": "search", "tool": move.tool, "query": move.query}


def trace_what_was_done(prediction: dspy.Prediction, outputs: dict) -> None:
    """Rewrite a prediction the guardrails replaced to what the program did instead. DSPy's trace
    holds this same object, so a bootstrapped demo teaches the move that was run and the answer
    that was given, never the junk they replaced; the trajectory keeps what the model proposed."""
    for name, value in outputs.items():
        if name in prediction:
            prediction[name] = value


def check_refinement(agent: MoveChecksHost, pad: Scratchpad) -> None:
    """Weak results call for a refined query; a streak of them calls for an answerability judgment
    where the evidence cannot decide: the judge's, on a call a step did not make (the program
    made the move), else the next step's own answerability claim stands for it."""
    reason = guard.refinement_reason(pad, agent.settings.relevance_drop)
    if reason is None:
        return
    strategy = guard.next_unused_strategy(pad)
    pad.notes.append(text.refine_note(reason, strategy))
    weak = guard.weak_search_streak(pad) >= agent.settings.weak_results_before_judging
    spare_call = pad.lm_calls < pad.step  # at most steps + 1 calls: one per step, and the answer's
    if weak and pad.evidence_answerability == "untyped" and not pad.model_unusable and spare_call:
        try:
            out = agent.call_lm(pad, agent.judge, question=pad.question, facts=[f.text[:160] for f in pad.facts[-6:]],
                                tried_queries=pad.tried_queries)
            if out.answerability in ANSWERABILITY:
                pad.claimed_answerability = out.answerability
            pad.uncertainties.append(f"answerability {out.answerability}: {out.reason}")
        except Exception as exc:
            raise_if_fatal(exc)  # without a judgment the exhaustion guard still ends the search
            record_lm_fault(pad, "judge", exc)
