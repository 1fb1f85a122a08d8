"""The end of a run: the model's proposed answer, the checks on it, and the prediction returned.

`finish` is the loop's last move, a function of the program (what it reads of it is
`FinishingHost`) and the run's scratchpad: the model's answer is used unless a check names what
is wrong with it; else the program answers from what the search found.
"""

from __future__ import annotations

from typing import Protocol

import dspy

from deltaseek.programs.agent import guardrails as guard
from deltaseek.programs.agent.answer import (FinalAnswer, Proposal, cannot_deny, model_answer, program_answer,
                                             state_caveats)
from deltaseek.programs.agent.checks import answer_failure, is_abstention
from deltaseek.programs.agent.confidence import settle
from deltaseek.programs.agent.evidence import Reading, ambiguous_terms
from deltaseek.programs.agent.fallbacks import clean_items
from deltaseek.programs.agent.learned_reader import ReaderModel, expected_answer_types
from deltaseek.programs.agent.learned_reader.disagreement import disagreeing_values
from deltaseek.programs.agent.lm_faults import lm_fault_caveats, raise_if_fatal, record_lm_fault
from deltaseek.programs.agent.moves import Move, trace_what_was_done
from deltaseek.programs.agent.profile import Profile
from deltaseek.programs.agent.prompting import prompt_facts
from deltaseek.programs.agent.scratchpad import Scratchpad
from deltaseek.programs.agent.settings import AgentSettings
from deltaseek.signatures import StopReason, Synthesize, compact_signature
from deltaseek.signatures import guidance as text


class FinishingHost(Protocol):
    """What the end of a run reads of the program: its tools and settings, its profile and reader
    for the run, the names the prompt holds, and the synthesis predictor it calls."""

    settings: AgentSettings
    synthesize: dspy.Predict
    tool_names: list[str]
    reserved_names: set[str]

    def execute(self, pad: Scratchpad, move: Move) -> None: ...
    def read(self, pad: Scratchpad) -> Reading: ...
    def missing_subjects(self, pad: Scratchpad) -> list[str]: ...
    def profile(self, pad: Scratchpad | None = None) -> Profile: ...
    def learned_reader(self) -> ReaderModel: ...
    def call_lm(self, pad: Scratchpad, predictor: dspy.Predict, **inputs) -> dspy.Prediction: ...

def finish(agent: FinishingHost, pad: Scratchpad, stop: StopReason) -> dspy.Prediction:
    if not pad.executed_calls:  # tool first holds even when every LM reply was unusable
        agent.execute(pad, Move(False, agent.tool_names[0], pad.question, "tool_first"))
    if pad.model_unusable:
        stop = "lm_error"
    if stop != "answered":
        pad.answered_by = None
    missing = list(dict.fromkeys(pad.uncertainties))[-4:]
    if stop in text.INCOMPLETE_STOPS:
        missing.append(text.STOP_CAVEATS[stop])
    reading = agent.read(pad, final=True)
    missing_subjects = agent.missing_subjects(pad)
    nothing_found = not pad.facts or bool(missing_subjects)
    if agent.profile(pad).evidence_decides and (nothing_found or reading.answerability == "direct"):
        # the evidence decides the answer: a small model's synthesis could only be set aside
        proposal = Proposal("", [], [], [], None, asked=False)
    else:
        proposal = synthesize_answer(agent, pad, missing)
    # handed back, the texts the LM was given (what is missing, the queries run) are echoes, not findings
    # (a query may be the answer's own name: only the texts of the prompt's own count for the answer)
    given = (*missing, *text.STOP_CAVEATS.values())
    final = final_answer(agent, pad, proposal, reading, missing_subjects, given)
    final, confidence, signals, confidence_caveat = settle(pad, final, reading, proposal, missing_subjects,
                                                           stop in text.INCOMPLETE_STOPS, agent.learned_reader(),
                                                           agent.settings)
    given_facts = (*given, *pad.tried_queries, pad.question, *(f"[{f.source}] {f.title}: {f.text}" for f in pad.facts))
    # "set aside" needs an answer: a failed or empty synthesis gave none (its fault is named instead)
    caveats = (guard.keep_meaningful(proposal.caveats, pad, agent.reserved_names, given_facts) + lm_fault_caveats(pad)
               + state_caveats(pad, stop, final, proposal.asked and bool(proposal.answer))
               + [confidence_caveat] * bool(confidence_caveat))
    if final.origin != "evidence" and (values := disagreeing_values(pad.question, pad.facts, agent.learned_reader())):
        caveats.append(f"The passages read disagree on the value asked for: they give {', '.join(values)}.")
    assumptions = (guard.keep_meaningful(proposal.assumptions, pad, agent.reserved_names, given_facts)
                   + ambiguous_terms(pad))
    if final.origin != "lm" and proposal.prediction is not None:
        trace_what_was_done(proposal.prediction, {"answer": final.text, "answerability": final.answerability,
                                                  "confidence": confidence})
    pad.answer, pad.answerability, pad.answer_origin = final.text, final.answerability, final.origin
    pad.confidence, pad.confidence_signals = confidence, signals
    pad.answer_replaced_because = final.replaced_because
    pad.assumptions = list(dict.fromkeys(pad.assumptions + assumptions))
    return dspy.Prediction(
        answer=final.text, answerability=final.answerability, confidence=confidence, caveats=list(dict.fromkeys(caveats)),
        assumptions=pad.assumptions, sources=final.sources, stop_reason=stop, answered_by=pad.answered_by,
        steps=pad.step, answer_origin=final.origin, proposed_answer=proposal.answer,
        replaced_because=final.replaced_because, profile=pad.profile,
        tool_calls=[c.model_dump(mode="json") for c in pad.tool_calls], scratchpad=pad,
    )

def final_answer(agent: FinishingHost, pad: Scratchpad, proposal: Proposal, reading: Reading,
                 missing_subjects: list[str],
                 given: tuple[str, ...]) -> FinalAnswer:
    """The model's answer unless a check names what is wrong with it; else the program's own:
    no information about a subject the sources lack, the tools' failure, or the reader's answer."""
    failure = None
    searched_nothing = not pad.facts and all(c.status.failed for c in pad.executed_calls)
    if proposal.asked and searched_nothing:
        failure = "every search failed, so nothing read supports or rules out an answer"
    elif proposal.asked:
        failure = answer_failure(proposal.answer, pad, agent.reserved_names, given,
                                 small=agent.profile(pad).strict_answer_checks,
                                 min_support=max(map(agent.settings.reader_threshold,
                                                     expected_answer_types(pad.question))))
        if failure is None and missing_subjects and not is_abstention(proposal.answer):
            failure = f"no passage in the sources names {', '.join(missing_subjects)}"
        if failure is None:
            return model_answer(pad, proposal)
    if searched_nothing:
        # Nothing was searched, so nothing is known to be missing: say that the tools failed.
        # (A failed call can still bring hits: a cluster with one shard down answers from the others.)
        faults = "; ".join(dict.fromkeys(f"{c.tool}: {c.summary or c.status.value}" for c in pad.executed_calls))
        return FinalAnswer(f"No answer: every search failed ({faults}).", "evidence", [], "unknown", failure)
    if missing_subjects or not pad.facts:
        about = ", ".join(missing_subjects) or f"\"{pad.question}\""
        return FinalAnswer(f"No information found about {about}: no passage found mentions it.", "evidence", [],
                           "unknown" if cannot_deny(pad, missing_subjects) else "unlikely", failure)
    final = program_answer(pad, reading)
    final.replaced_because = failure
    return final

def synthesize_answer(agent: FinishingHost, pad: Scratchpad, missing: list[str]) -> Proposal:
    """The LM's proposed answer; an LM failure is an empty proposal, never a crash."""
    profile = agent.profile(pad)
    facts = [f"[{f.source}] {f.title}: {f.text[:profile.synthesis_fact_chars]}"
             for f in prompt_facts(pad, profile, profile.synthesis_facts)]
    signature = agent.synthesize.signature
    if profile.brief_prompts:  # the answer alone: caveats and assumptions come from the program's state
        signature = compact_signature(signature, Synthesize)
    try:
        out = agent.call_lm(pad, agent.synthesize, signature=signature, question=pad.question, facts=facts,
                           missing=missing)
    except Exception as exc:
        raise_if_fatal(exc)
        record_lm_fault(pad, "synthesis", exc)  # its caveat names the fault
        return Proposal("", [], [], [], None)
    return Proposal(str(out.answer or "").strip(), clean_items(out.get("caveats")), clean_items(out.get("assumptions")),
                    [str(x).strip("[] ") for x in out.get("sources") or []], out.get("answerability"),
                    prediction=out)
