"""DeltaSeek: a ReAct-style search agent whose guardrails live in Python control flow.

Each step asks the LM only for what is new (StepDelta) and one next move; the loop, not the
prompt, blocks duplicate calls, enforces the budgets, refines weak searches, stops exhausted
ones and always ends with a synthesized answer whose caveats say what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dspy
from pydantic import ValidationError

from deltaseek.errors import ProgramFileError, ToolConfigError, UsageError
from deltaseek.programs.agent import guardrails as guard
from deltaseek.programs.agent.answer import FinalAnswer, Proposal, model_answer, program_answer, state_caveats
from deltaseek.programs.agent.checks import answer_failure, is_abstention
from deltaseek.programs.agent.evidence import Reading, ambiguous_terms, read_evidence, unexplored_meaning
from deltaseek.programs.agent.fallbacks import clean_items, heuristic_query, heuristic_task_kind
from deltaseek.programs.agent.lm_faults import lm_fault_caveats, record_lm_fault
from deltaseek.programs.agent.program_file import (LEGACY_SETTINGS_KEY, READER_KEY, SETTINGS_KEY, load_program_file,
                                                   shipped_program_path)
from deltaseek.programs.agent.learned_reader import ReaderModel, shipped_reader
from deltaseek.programs.agent.learned_reader.model import reader_from_dict
from deltaseek.programs.agent.reader import expected_answer_types, facts_by_relevance
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad, StepRecord, ToolCall
from deltaseek.programs.agent.settings import SAVED_SETTINGS, TASK_PROFILES, AgentSettings, settings_problem
from deltaseek.programs.agent.text_calls import parse_text_tool_call
from deltaseek.programs.lm import is_embedded, is_fatal_lm_error
from deltaseek.programs.text import meaningful_tokens, named_entities
from deltaseek.programs.tools.base import SearchTool, ToolResult, ToolStatus
from deltaseek.programs.tools.feedback import format_observation
from deltaseek.programs.tools.registry import build_tools
from deltaseek.signatures import (ANSWERABILITY, ClassifyTask, DiversifyQuery, JudgeAnswerability, StepDelta,
                                  StopReason, Synthesize, compact_signature, step_delta_for_tools)
from deltaseek.signatures import guidance as text

FACT_CHARS = 3000
"""How much of a passage is kept as a fact: the reader reads it whole (an encyclopedia paragraph
fits; 1200 cut the tail off one bundled passage in ten, and the answer with it); prompts show less."""
PROMPT_FACT_CHARS = 400
COMPACT_FACTS = 4
"""With compact prompts, the step sees this many facts (the most relevant to the question,
`COMPACT_STEP_FACT_CHARS` each) and the synthesis as many (`COMPACT_FACT_CHARS` each)."""
COMPACT_STEP_FACT_CHARS = 120
STEP_FACTS, SYNTHESIS_FACTS = 6, 8
"""Without compact prompts, the step and the synthesis see the last this many facts found."""
CALIBRATED_SETTINGS = ("reader_min_confidence", "reader_min_confidence_by_type")
"""Saved with every program: calibrated on labeled data (`deltaseek calibrate`). A program saves
the settings tuned on labeled data too (`keep_settings`); see SAVED_SETTINGS."""
CAPABLE_REFINEMENTS = 1
"""A capable model's early answer is turned into this many refined searches at most, when no fact
holds an answer of the kind asked for yet; after that the model decides when it has enough."""
COMPACT_FACT_CHARS = 240


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


class DeltaSeek(dspy.Module):
    """The guarded search agent: `DeltaSeek(tools)(question=...)` returns a Prediction with the
    answer, answerability, caveats, assumptions, sources, stop reason, tool calls and scratchpad.

    Tools default to the bundled corpus. `DeltaSeek.from_compiled(path)` builds one with a compiled
    program's prompts; `program.save(path)` / `program.load(path)` are DSPy's own.
    """

    def __init__(self, tools: list[SearchTool] | None = None, settings: AgentSettings | None = None,
                 reader: ReaderModel | None = None):
        super().__init__()
        tools = build_tools("local") if tools is None else list(tools)
        if not tools:
            raise ToolConfigError("DeltaSeek needs at least one tool")
        self.tools = {tool.name: tool for tool in tools}
        self.settings = settings or AgentSettings()
        self.reader = reader
        """The learned reader's weights and threshold, when the program has its own (trained by
        `deltaseek optimize --train-reader`); None: the shipped reader's."""
        self.saved_settings: tuple[str, ...] = CALIBRATED_SETTINGS
        """The settings saved with this program's state (measured on labeled data with its prompts)."""
        self.step_delta = dspy.Predict(step_delta_for_tools(list(self.tools)))
        self.diversify = dspy.Predict(DiversifyQuery)
        self.judge = dspy.Predict(JudgeAnswerability)
        self.classify = dspy.Predict(ClassifyTask)
        self.synthesize = dspy.Predict(Synthesize)
        self._task_kinds: dict[str, str] = {}

    @classmethod
    def from_compiled(cls, path: str | Path, tools: list[SearchTool] | None = None,
                      settings: AgentSettings | None = None) -> "DeltaSeek":
        """A program with the prompts (instructions and demos) of a compiled JSON state file or of
        an MLflow model URI (`models:/NAME/VERSION`), checked against this program's predictors
        before it is loaded. The settings saved with it (calibrated or tuned) replace those of
        `settings`: they were measured with its prompts."""
        program = cls(tools=tools, settings=settings)
        load_program_file(program, path)
        return program

    def dump_state(self, json_mode=True):
        """DSPy's state of the predictors, and the settings measured on labeled data (the reader's
        threshold, and any `keep_settings` was given), so a compiled program carries both."""
        state = super().dump_state(json_mode=json_mode)
        state[SETTINGS_KEY] = {name: getattr(self.settings, name) for name in self.saved_settings}
        if self.reader is not None:
            state[READER_KEY] = self.reader.model_dump(mode="json")
        return state

    def load_state(self, state, **kwargs):
        """DSPy's own load, then the saved settings: under "settings", or the reader's threshold alone
        under "calibration" in a file saved before issue 22."""
        state = dict(state)
        saved = [state.pop(key, None) or {} for key in (LEGACY_SETTINGS_KEY, SETTINGS_KEY)]
        if (reader := state.pop(READER_KEY, None)) is not None:
            self.reader = reader_from_dict(reader, "the program's reader")
        if not all(isinstance(values, dict) for values in saved):
            raise ValueError("the saved settings must be an object of setting names and values")
        super().load_state(state, **kwargs)
        values = {**saved[0], **saved[1]}
        if "reader_min_confidence" in values and "reader_min_confidence_by_type" not in values:
            values["reader_min_confidence_by_type"] = {}  # calibrated before types had thresholds: one for all
        self.keep_settings(values)
        return self

    def keep_settings(self, values: dict) -> None:
        """Run with these settings and save them with the program (they were measured on labeled data
        with its prompts). ValueError names a setting a program does not carry or a value out of range."""
        unknown = set(values) - set(SAVED_SETTINGS)
        if unknown:
            raise ValueError(f"setting(s) a compiled program does not carry: {', '.join(sorted(unknown))} "
                             f"(it carries {', '.join(SAVED_SETTINGS)})")
        try:
            self.settings = AgentSettings.model_validate({**self.settings.model_dump(), **values})
        except ValidationError as exc:
            raise ValueError(settings_problem(exc)) from None
        self.saved_settings = tuple(name for name in SAVED_SETTINGS if name in {*self.saved_settings, *values})

    def with_settings(self, settings: AgentSettings) -> "DeltaSeek":
        """Another program with this one's tools and prompts, run with `settings`."""
        program = DeltaSeek(tools=list(self.tools.values()), settings=settings, reader=self.reader)
        program.load_state(self.dump_state())
        program.settings = settings
        return program

    @property
    def tool_names(self) -> list[str]:
        return list(self.tools)

    @property
    def reserved_names(self) -> set[str]:
        """Names from the prompt itself: tools, every signature's fields and the search strategies."""
        fields = {name for _, predictor in self.named_predictors() for name in predictor.signature.fields}
        return set(self.tools) | fields | set(guard.STRATEGIES)

    def forward(self, question: str) -> dspy.Prediction:
        pad = Scratchpad(question=check_question(question))
        self.begin(pad)
        stop: StopReason | None = None
        while stop is None:
            stop = self.stop_reason(pad)
            if stop:
                break
            if self.evidence_answers(pad):
                stop = "answered"
                break
            asked_model = not pad.program_moves
            move = self.propose_move(pad)
            if move is None:
                continue  # an unusable reply: no progress, the budget still counts
            if pad.executed_calls and (move.synthesize or guard.answerability_stops_search(pad, self.steering(pad))):
                stop = "answered" if move.synthesize else "answerability"
                break
            if move.synthesize:  # tool first: no answer before one search has run
                move = Move(False, self.tool_names[0], question, "tool_first", prediction=move.prediction)
            call = self.admit_call(pad, move)
            if asked_model:
                self.count_model_move(pad, replaced=move.origin == "program" or call is None
                                      or call.origin in ("diversified", "program"))
            if move.prediction is not None and (call is None or (call.tool, call.query) != (move.tool, move.query)):
                trace_what_was_done(move.prediction, move_outputs(call))
            if call is None:
                stop = "no_new_query"
                break
            self.execute(pad, call)
        return self.finish(pad, stop)

    # --- the steps of the loop -------------------------------------------------

    def begin(self, pad: Scratchpad) -> None:
        """Classify the task (cached per question); the kind sets budgets, plan and strategy order."""
        kind = self.task_kind(pad.question)
        soft, hard, order = TASK_PROFILES[kind]
        if not self.settings.budgets_from_task_kind:
            soft, hard = self.settings.soft_budget, self.settings.hard_budget
        else:  # the settings are ceilings the kind can only tighten
            soft, hard = min(soft, self.settings.soft_budget), min(hard, self.settings.hard_budget)
        pad.task_kind, pad.plan, pad.interpretation = kind, text.PLANS[kind], pad.question
        if first := self.settings.first_strategies.get(kind):
            order = (first, *(strategy for strategy in order if strategy != first))
        pad.soft_budget, pad.hard_budget, pad.strategy_order = soft, hard, list(order)
        caps = self.settings.search_caps_from_task_kind
        capped_by_kind = self.profile() == "small" if caps is None else caps
        kind_cap = self.settings.task_search_caps.get(kind) if capped_by_kind else None
        pad.max_searches = min(filter(None, (kind_cap, self.settings.max_searches)), default=None)
        pad.subject_presence = {subject: self.sources_name(subject) for subject in guard.question_subjects(pad.question)}

    def sources_name(self, subject: str) -> bool | None:
        """Whether any tool's collection names the subject: True if one does, False if every tool
        can tell and none does, None when no tool can tell (see `SearchTool.names`)."""
        said = []
        for tool in self.tools.values():
            try:
                said.append(tool.names(subject))
            except Exception:  # a tool that cannot answer this cannot tell
                said.append(None)
        return True if True in said else None if None in said else False

    def task_kind(self, question: str) -> str:
        """The question's own words decide when a rule matches them; the LM classifies the rest."""
        if question not in self._task_kinds:
            kind = heuristic = heuristic_task_kind(question)
            if kind == "lookup" and self.lm_helps(self.settings.classify_with_lm):
                try:
                    kind = self.classify(question=question).kind
                except Exception as exc:  # any LM failure but an unusable LM falls back to the heuristic
                    raise_if_fatal(exc)
                    kind = None
            self._task_kinds[question] = kind if kind in text.PLANS else heuristic
        return self._task_kinds[question]

    def stop_reason(self, pad: Scratchpad) -> StopReason | None:
        if guard.hard_budget_reached(pad, pad.hard_budget):
            return "hard_budget"
        if guard.search_limit_reached(pad, pad.max_searches):
            # the last search allowed found the answer: nothing was cut short
            return "answered" if self.evidence_answers(pad) else "max_searches"
        if guard.answerability_stops_search(pad, self.steering(pad)):
            return "answerability"
        if guard.search_exhausted(pad, self.settings.exhaustion_window):
            return "exhausted"
        return None

    def propose_move(self, pad: Scratchpad) -> Move | None:
        record = StepRecord(step=pad.step + 1)
        pad.steps.append(record)
        if pad.program_moves:  # the program goes on alone: the question first, its own queries, then the answer
            if not pad.executed_calls:
                return Move(False, self.tool_names[0], pad.question, "tool_first")
            reason = ("the model's replies could not be used" if pad.model_unusable else
                      f"the model's last {pad.replaced_moves_in_a_row} move(s) were replaced by the checks")
            return self.program_move(pad, proposed="", reason=reason) or \
                Move(True, origin="program", replaced_because=reason)
        guidance = self.guidance(pad)
        pad.notes.clear()
        signature = self.step_delta.signature
        if self.compact():
            signature = compact_signature(signature, StepDelta)
        try:
            out = self.step_delta(signature=signature, question=pad.question, step=record.step,
                                  scratchpad=self.render(pad), guidance=guidance)
        except Exception as exc:  # a parse error or a bad reply must not escape forward()
            raise_if_fatal(exc)
            record_lm_fault(pad, "step", exc)
            return self.recover_text_call(pad, record, exc)
        pad.consecutive_lm_failures = 0
        record.new_evidence = clean_items(out.get("new_evidence"))[:3]
        record.uncertain = clean_items(out.get("uncertain"))[:2]
        record.answerability = out.get("answerability") or "unknown"
        # the record keeps what the model said; only what says something is carried to later prompts
        meaningful = guard.keep_meaningful(record.uncertain, pad, self.reserved_names, (pad.question,))
        pad.uncertainties = list(dict.fromkeys(pad.uncertainties + meaningful))[-4:]
        if pad.executed_calls and out.get("answerability") in ANSWERABILITY:  # a claim counts once evidence exists
            pad.claimed_answerability = out.answerability
        record.move = "synthesize" if out.next_move == "synthesize" else f"{out.tool}(\"{out.query}\")"
        move = self.dispose(pad, Move(out.next_move == "synthesize", out.tool, (out.query or "").strip()))
        move.prediction = out
        if move.origin == "program" or move.synthesize:
            trace_what_was_done(out, move_outputs(move))
        return move

    def count_model_move(self, pad: Scratchpad, replaced: bool) -> None:
        """Count the model's moves the checks replaced in a row; at the limit the program leads
        (issue 23: on unseen questions four in five of the embedded model's later moves were
        replaced, each after a step call whose seconds were spent for nothing)."""
        pad.replaced_moves_in_a_row = pad.replaced_moves_in_a_row + 1 if replaced else 0
        limit = self.settings.replaced_moves_before_program_leads
        if limit is None:
            limit = 1 if self.profile() == "small" else 0
        if limit and pad.replaced_moves_in_a_row >= limit:
            pad.program_leads = True
            pad.steps[-1].note += (("; " if pad.steps[-1].note else "") + "the program makes the next moves: the "
                                   f"model's last {pad.replaced_moves_in_a_row} move(s) were replaced")

    def steering(self, pad: Scratchpad) -> str:
        """The answerability that steers the search, from the two kept apart on the scratchpad:
        the evidence's reading where it can decide (a 135M model says "unlikely" out of habit),
        the model's claim where it cannot (the question names no answer type to look for)."""
        reading, claimed = pad.evidence_answerability, pad.claimed_answerability or "unknown"
        if reading == "untyped":
            return claimed
        open_leads = guard.uncovered_terms(pad) or unexplored_meaning(pad)
        if reading == "proxy_only" and claimed != "proxy_only" and open_leads and self.steps_left(pad):
            return "unknown"  # proxies so far, the model does not agree, and a lead is open: follow it first
        return reading

    def read(self, pad: Scratchpad) -> Reading:
        """The evidence's reading, with the reader abstaining below the calibrated confidence."""
        reader = None if self.settings.reader == "rules" else self.reader or shipped_reader()
        return read_evidence(pad, self.settings.reader_min_confidence, self.settings.reader_min_confidence_by_type,
                             reader)

    def profile(self) -> str:
        """`small` or `capable` (AgentSettings.profile): the one place where the two kinds of
        model are told apart; by default the embedded model is small and any other capable."""
        return self.settings.profile or ("small" if is_embedded(dspy.settings.lm) else "capable")

    def lm_helps(self, setting: bool | None) -> bool:
        """A helper call (task kind, another angle) goes to the LM when the setting says so; by
        default for the capable profile: the 135M model's replies to both were measured junk
        that the heuristics replaced anyway (issue 9: no LM call whose result goes unused)."""
        return setting if setting is not None else self.profile() == "capable"

    def compact(self) -> bool:
        """Compact prompts and calls: by default for the small profile, whose seconds are its prompt tokens."""
        setting = self.settings.compact_prompts
        return setting if setting is not None else self.profile() == "small"

    def evidence_answers(self, pad: Scratchpad) -> bool:
        """With compact prompts (or no usable model), a typed answer in the facts, with every term of
        the question covered, ends the search without another step call: the embedded model's step
        at that point could only repeat it (a junk query is replaced by synthesis, see `dispose`)."""
        return ((self.compact() or pad.program_moves) and bool(pad.executed_calls) and self.steering(pad) == "direct"
                and not guard.uncovered_terms(pad))

    def prompt_facts(self, pad: Scratchpad, limit: int) -> list[Fact]:
        """The facts a prompt shows: the last `limit` found, or with compact prompts the
        `COMPACT_FACTS` most relevant to the question; the setting `prompt_facts` replaces both counts."""
        if self.compact():
            return facts_by_relevance(pad.question, pad.facts)[:self.settings.prompt_facts or COMPACT_FACTS]
        return pad.facts[-(self.settings.prompt_facts or limit):]

    def render(self, pad: Scratchpad) -> str:
        if self.compact():
            return pad.render(COMPACT_STEP_FACT_CHARS, facts=self.prompt_facts(pad, COMPACT_FACTS), brief=True)
        return pad.render(facts=self.prompt_facts(pad, STEP_FACTS))

    @staticmethod
    def steps_left(pad: Scratchpad) -> bool:
        """Room for one more search and the answer after it."""
        return pad.step < pad.hard_budget - 1

    def dispose(self, pad: Scratchpad, move: Move) -> Move:
        """The checks on the model's move: a query that a check names as junk (an echo, a repeated
        run, no search term, a copied or invented sentence) becomes the program's move. With the
        small profile, an answer before any fact holds a typed answer, while strategies remain, is
        also replaced by a search (the lieutenant-governor case); a capable model's is replaced only
        for `CAPABLE_REFINEMENTS` search (seed 001: the first search, then one refinement), or
        while a term of the question that the sources use in several senses is unsearched (seed 000's
        "magnificent 7": the answer must say how it was read)."""
        if move.synthesize:
            refinements = None if self.profile() == "small" else CAPABLE_REFINEMENTS
            premature = (pad.executed_calls and self.steering(pad) == "unknown" and self.steps_left(pad)
                         and guard.next_unused_strategy(pad) is not None
                         and (refinements is None or len(pad.executed_calls) <= refinements
                              or unexplored_meaning(pad) is not None))
            reason = "no fact found so far holds an answer of the kind asked for" if premature else None
        else:
            reason = guard.reject_junk_query(move.query, pad, self.reserved_names)
        if reason is None:
            return move
        proposed = "synthesize" if move.synthesize else move.query
        answer_now = Move(True, origin="program", proposed=proposed, replaced_because=reason)
        if not move.synthesize and self.steering(pad) == "direct":
            # the facts already hold a typed answer: the program's best move is to answer
            pad.steps[-1].note = f"replaced {move.query!r}: {reason}; the facts already answer the question"
            return answer_now
        if program := self.program_move(pad, proposed=proposed, reason=reason):
            return program
        if pad.executed_calls:  # no query of the program's own is left: answer, never the rejected move
            pad.steps[-1].note = f"replaced {proposed!r}: {reason}; no query of the program's own is left"
            return answer_now
        return Move(False, self.tool_names[0], pad.question, "tool_first", proposed, reason)

    def program_move(self, pad: Scratchpad, proposed: str, reason: str) -> Move | None:
        """The first of the program's own queries that is not a duplicate, on the next tool in the user's order."""
        tool = guard.program_tool(pad, self.tool_names)
        for query, why in self.program_queries(pad):
            if query and not self.why_blocked(pad, Move(False, tool, query)):
                pad.steps[-1].note = f"replaced {proposed!r}: {reason}; {why}"
                return Move(False, tool, query, "program", proposed, reason)
        return None

    @staticmethod
    def program_queries(pad: Scratchpad):
        """The program's own queries, best first: a term the sources use in several senses, what the
        question names that no fact covers, then each unused strategy's query (marked used as tried)."""
        yield unexplored_meaning(pad), "searching a term the sources use in several senses"
        uncovered = guard.uncovered_terms(pad)
        if uncovered and pad.executed_calls:
            subjects = sorted(meaningful_tokens(" ".join(named_entities(pad.question))))
            yield " ".join(uncovered + subjects[:2]), "searching what no fact covers"
        while (strategy := guard.next_unused_strategy(pad)) is not None:
            pad.strategies_used.append(strategy)
            yield heuristic_query(pad, strategy), f"strategy {strategy}"

    def recover_text_call(self, pad: Scratchpad, record: StepRecord, exc: Exception) -> Move | None:
        raw = getattr(exc, "lm_response", None) or ""
        parsed = parse_text_tool_call(raw, self.tool_names)
        if parsed:
            pad.consecutive_lm_failures = 0
            record.note = "structured output failed; tool call parsed from text"
            record.move = f"{parsed[0]}(\"{parsed[1]}\")"
            return self.dispose(pad, Move(False, parsed[0], parsed[1], "text"))
        pad.lm_failures += 1
        pad.consecutive_lm_failures += 1
        record.note = f"no usable move ({type(exc).__name__}); counted as no progress"
        if pad.consecutive_lm_failures >= self.settings.max_lm_failures:
            pad.model_unusable = True
            record.note += "; the model's replies could not be used, the program goes on with its own moves"
        return None

    def admit_call(self, pad: Scratchpad, move: Move) -> Move | None:
        """The duplicate guard: reroute from failed tools, block repeats, ask for another angle."""
        if move.tool not in self.tools:
            move.tool = self.tool_names[0]
        rerouted = guard.reroute_from_failed_tool(pad, move.tool, move.query, self.tool_names)
        if rerouted:
            move = Move(False, rerouted, move.query, "rerouted")
        reason = self.why_blocked(pad, move)
        if reason is None:
            return move
        self.record_blocked(pad, move, reason)
        while (strategy := guard.next_unused_strategy(pad)) is not None:
            pad.strategies_used.append(strategy)
            query = self.diversified_query(pad, strategy)
            if query is None or guard.reject_junk_query(query, pad, self.reserved_names):
                continue
            retry = Move(False, move.tool, query, "diversified")
            if (retry_blocked := self.why_blocked(pad, retry)) is None:
                return retry
            self.record_blocked(pad, retry, retry_blocked)
            break
        # still a duplicate after diversifying: the program's own next query, else synthesis
        return self.program_move(pad, proposed=move.query, reason=reason)

    def why_blocked(self, pad: Scratchpad, move: Move) -> str | None:
        return (guard.block_duplicate_call(pad, move.tool, move.query, self.settings.min_new_tokens)
                or guard.block_echo_query(move.query, self.reserved_names))

    def diversified_query(self, pad: Scratchpad, strategy: str) -> str | None:
        if not self.lm_helps(self.settings.diversify_with_lm):
            return heuristic_query(pad, strategy)
        try:
            out = self.diversify(question=pad.question, tried_queries=pad.tried_queries,
                                 facts=[f.text[:160] for f in pad.facts[-6:]], strategy=strategy)
            query = (out.query or "").strip()
        except Exception as exc:
            raise_if_fatal(exc)
            record_lm_fault(pad, "diversify", exc)
            query = ""
        usable = query and not self.why_blocked(pad, Move(False, self.tool_names[0], query))
        return query if usable else heuristic_query(pad, strategy) or query or None

    def record_blocked(self, pad: Scratchpad, move: Move, reason: str) -> None:
        pad.tool_calls.append(ToolCall(step=pad.step, tool=move.tool, args={"query": move.query},
                                       status=ToolStatus.BLOCKED, executed=False, blocked_reason=reason,
                                       origin=move.origin, proposed=move.proposed,
                                       replaced_because=move.replaced_because))
        blocked = ToolResult(tool=move.tool, query=move.query, status=ToolStatus.BLOCKED, note=reason)
        pad.notes.append(self.observe(pad, blocked))

    def execute(self, pad: Scratchpad, move: Move) -> None:
        try:
            result = self.tools[move.tool](move.query, seen=frozenset(f.source for f in pad.facts))
        except Exception as exc:  # a tool's own bug becomes an observation, not a crash
            result = ToolResult(tool=move.tool, query=move.query, status=ToolStatus.UNAVAILABLE,
                                note=f"{type(exc).__name__}: {exc}")
        facts = [Fact(source=h.source, title=h.title, url=h.url, text=h.text[:FACT_CHARS], step=pad.step)
                 for h in result.hits]
        call = ToolCall(step=pad.step, tool=move.tool, args={"query": move.query}, status=result.status,
                        executed=True, result_count=len(result.hits), origin=move.origin, proposed=move.proposed,
                        replaced_because=move.replaced_because,
                        top_score=max((h.score for h in result.hits if h.score is not None), default=None),
                        summary=result.note or ", ".join(h.title for h in result.hits))
        pad.tool_calls.append(call)
        call.new_facts = pad.add_facts(facts)
        pad.evidence_answerability = self.read(pad).answerability
        observation = self.observe(pad, result, guard.next_unused_strategy(pad))
        pad.steps[-1].observation = observation
        pad.notes.append(observation)
        self.check_refinement(pad)

    def observe(self, pad: Scratchpad, result: ToolResult, strategy: str | None = None) -> str:
        """What the LM reads about a tool result, with next steps that name only untried moves."""
        alternatives = guard.untried_tools(pad, result.query, self.tool_names, exclude=result.tool)
        return format_observation(result, pad.tried_queries, alternatives, strategy, brief=self.compact())

    def check_refinement(self, pad: Scratchpad) -> None:
        """Weak results call for a refined query; a streak of them calls for an answerability judgment."""
        reason = guard.refinement_reason(pad, self.settings.relevance_drop)
        if reason is None:
            return
        strategy = guard.next_unused_strategy(pad)
        pad.notes.append(text.refine_note(reason, strategy))
        weak = guard.weak_search_streak(pad) >= self.settings.weak_results_before_judging
        if weak and pad.evidence_answerability == "untyped" and not pad.model_unusable:  # where the evidence decides, no LM call
            try:
                out = self.judge(question=pad.question, facts=[f.text[:160] for f in pad.facts[-6:]],
                                 tried_queries=pad.tried_queries)
                if out.answerability in ANSWERABILITY:
                    pad.claimed_answerability = out.answerability
                pad.uncertainties.append(f"answerability {out.answerability}: {out.reason}")
            except Exception as exc:
                raise_if_fatal(exc)  # without a judgment the exhaustion guard still ends the search
                record_lm_fault(pad, "judge", exc)

    def guidance(self, pad: Scratchpad) -> str:
        """What the step about to run reads besides the scratchpad (its record is already on the pad)."""
        if self.compact():  # the names alone: the step's tool field already lists them
            tools = ", ".join(self.tools)
        else:
            tools = "; ".join(text.TOOL_ENTRY.format(name=t.name, description=t.description) for t in self.tools.values())
        parts = [text.TOOLS_LINE.format(tools=tools), text.budget_guidance(pad.step - 1, pad.soft_budget, pad.hard_budget)]
        if not pad.executed_calls:
            parts.append(text.START.format(strategy=pad.strategy_order[0], plan=" -> ".join(pad.plan)))
        parts += pad.notes[-2:]
        return "\n".join(parts)

    # --- the final answer ------------------------------------------------------

    def finish(self, pad: Scratchpad, stop: StopReason) -> dspy.Prediction:
        if not pad.executed_calls:  # tool first holds even when every LM reply was unusable
            self.execute(pad, Move(False, self.tool_names[0], pad.question, "tool_first"))
        if pad.model_unusable:
            stop = "lm_error"
        missing = list(dict.fromkeys(pad.uncertainties))[-4:]
        if stop in text.INCOMPLETE_STOPS:
            missing.append(text.STOP_CAVEATS[stop])
        reading = self.read(pad)
        missing_subjects = guard.subjects_missing_from_facts(pad)
        nothing_found = not pad.facts or bool(missing_subjects)
        if self.compact() and (nothing_found or reading.answerability == "direct"):
            # The evidence decides the answer, and at the embedded model's size code reads better
            # than the model (issue 8): its synthesis could only be set aside.
            proposal = Proposal("", [], [], [], None, asked=False)
        else:
            proposal = self.synthesize_answer(pad, missing)
        # handed back, the texts the LM was given (what is missing, the queries run) are echoes, not findings
        # (a query may be the answer's own name: only the texts of the prompt's own count for the answer)
        given = (*missing, *text.STOP_CAVEATS.values())
        final = self.final_answer(pad, proposal, reading, missing_subjects, given)
        given_facts = (*given, *pad.tried_queries, pad.question, *(f"[{f.source}] {f.title}: {f.text}" for f in pad.facts))
        # "set aside" needs an answer: a failed or empty synthesis gave none (its fault is named instead)
        caveats = (guard.keep_meaningful(proposal.caveats, pad, self.reserved_names, given_facts) + lm_fault_caveats(pad)
                   + state_caveats(pad, stop, final, proposal.asked and bool(proposal.answer)))
        assumptions = guard.keep_meaningful(proposal.assumptions, pad, self.reserved_names, given_facts) + ambiguous_terms(pad)
        if final.origin != "lm" and proposal.prediction is not None:
            trace_what_was_done(proposal.prediction, {"answer": final.text, "answerability": final.answerability})
        pad.candidate_answer, pad.answerability, pad.answer_origin = final.text, final.answerability, final.origin
        pad.answer_replaced_because = final.replaced_because
        pad.assumptions = list(dict.fromkeys(pad.assumptions + assumptions))
        return dspy.Prediction(
            answer=final.text, answerability=final.answerability, caveats=list(dict.fromkeys(caveats)),
            assumptions=pad.assumptions, sources=final.sources, stop_reason=stop, steps=pad.step,
            answer_origin=final.origin, proposed_answer=proposal.answer, replaced_because=final.replaced_because,
            tool_calls=[c.model_dump(mode="json") for c in pad.tool_calls], scratchpad=pad,
        )

    def final_answer(self, pad: Scratchpad, proposal: Proposal, reading: Reading, missing_subjects: list[str],
                     given: tuple[str, ...]) -> FinalAnswer:
        """The model's answer unless a check names what is wrong with it; else the program's own:
        no information about a subject the sources lack, the tools' failure, or the reader's answer."""
        failure = None
        searched_nothing = not pad.facts and all(c.status.failed for c in pad.executed_calls)
        if proposal.asked and searched_nothing:
            failure = "every search failed, so nothing read supports or rules out an answer"
        elif proposal.asked:
            failure = answer_failure(proposal.answer, pad, self.reserved_names, given, small=self.profile() == "small",
                                     min_support=max(map(self.settings.reader_threshold,
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
                               "unknown" if pad.model_unusable and not missing_subjects else "unlikely", failure)
        final = program_answer(pad, reading)
        final.replaced_because = failure
        return final

    def synthesize_answer(self, pad: Scratchpad, missing: list[str]) -> Proposal:
        """The LM's proposed answer; an LM failure is an empty proposal, never a crash."""
        chars = COMPACT_FACT_CHARS if self.compact() else PROMPT_FACT_CHARS
        facts = [f"[{f.source}] {f.title}: {f.text[:chars]}" for f in self.prompt_facts(pad, SYNTHESIS_FACTS)]
        signature = self.synthesize.signature
        if self.compact():  # the answer alone: caveats and assumptions come from the program's state
            signature = compact_signature(signature, Synthesize)
        try:
            out = self.synthesize(signature=signature, question=pad.question, facts=facts, missing=missing)
        except Exception as exc:
            raise_if_fatal(exc)
            record_lm_fault(pad, "synthesis", exc)  # its caveat names the fault
            return Proposal("", [], [], [], None)
        return Proposal(str(out.answer or "").strip(), clean_items(out.get("caveats")), clean_items(out.get("assumptions")),
                        [str(x).strip("[] ") for x in out.get("sources") or []], out.get("answerability"),
                        prediction=out)


def shipped_program(tools: list[SearchTool] | None = None, settings: AgentSettings | None = None) -> DeltaSeek:
    """The program shipped with the package (`programs/compiled/shipped.json`: prompts and settings
    compiled for the embedded model), or ProgramFileError when this version ships none: a program
    that silently fell back to DeltaSeek's own prompts would be measured as the shipped one."""
    path = shipped_program_path()
    if not path.is_file():
        raise ProgramFileError(f"no compiled program is shipped with this version of deltaseek ({path} is absent); "
                               "use DeltaSeek() for its own prompts, or DeltaSeek.from_compiled(path)")
    return DeltaSeek.from_compiled(path, tools=tools, settings=settings)


MAX_QUESTION_CHARS = 2000
"""Longer input is not a question but a document: every step's prompt would overflow the context."""


def check_question(question: str) -> str:
    """The question, stripped; UsageError when it is empty or longer than MAX_QUESTION_CHARS. Empty
    means nothing printable is left: control and zero-width characters alone ("\\x00", "\\u200b")
    would run the whole search on nothing and quote an unrelated passage; punctuation alone ("???")
    holds no word to search for either."""
    question = (question or "").strip()
    if not any(char.isprintable() and not char.isspace() for char in question):
        raise UsageError("the question is empty")
    if not any(char.isalnum() for char in question):  # "???": every query built from it would be invented
        raise UsageError("the question is empty: it holds no word, only punctuation or symbols")
    if len(question) > MAX_QUESTION_CHARS:
        raise UsageError(f"the question is {len(question):,} characters long; at most {MAX_QUESTION_CHARS:,} are "
                         "accepted (put documents in a corpus and ask about them)")
    return question


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


def raise_if_fatal(exc: Exception) -> None:
    """An LM that cannot be used at all (no LM configured, no key, unknown model, unreachable
    server) ends the run with its own error: answering from searches alone would look like success."""
    if is_fatal_lm_error(exc):
        raise exc
