"""DeltaSeek: a ReAct-style search agent whose guardrails live in Python control flow.

Each step asks the LM only for what is new (StepDelta) and one next move; the loop, not the
prompt, blocks duplicate calls, enforces the budgets, refines weak searches, stops exhausted
ones and always ends with a synthesized answer whose caveats say what is missing.

The loop is here; what differs between a small model and a capable one is `profile.py`'s, the
checks on a proposed move and the program's own moves `moves.py`'s, the answer `final.py`'s, and
what a compiled program saves `saved_state.py`'s.
"""

from __future__ import annotations

import dspy

from deltaseek.errors import ProgramFileError, ToolConfigError
from deltaseek.programs.agent import guardrails as guard
from deltaseek.programs.agent.evidence import Reading, read_evidence
from deltaseek.programs.agent.fallbacks import clean_items, heuristic_task_kind
from deltaseek.programs.agent.final import finish
from deltaseek.programs.agent.learned_reader import ReaderModel, shipped_reader
from deltaseek.programs.agent.lenient_reply import read_or_raise, texts_as_written
from deltaseek.programs.agent.lm_faults import UNREADABLE_ERRORS, raise_if_fatal, record_lm_fault
from deltaseek.programs.agent.moves import (Move, admit_call, check_refinement, dispose, move_outputs, program_move,
                                            recover_text_call, trace_what_was_done)
from deltaseek.programs.agent.policy import Verdict, answerability_settled, count_model_move, steering, stop_verdict
from deltaseek.programs.agent.profile import SMALL, Profile, choose_profile, profile_for
from deltaseek.programs.agent.prompting import observation, rendered_scratchpad, step_guidance
from deltaseek.programs.agent.question import check_question
from deltaseek.programs.agent.program_file import load_program_file, shipped_program_path
from deltaseek.programs.agent.saved_state import CALIBRATED_SETTINGS, keep_settings, saved_state, split_saved_state
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad, StepRecord, ToolCall
from deltaseek.programs.agent.settings import AgentSettings, run_budgets
from deltaseek.programs.tools.base import SearchTool, ToolResult, ToolStatus, tools_naming
from deltaseek.programs.tools.registry import build_tools
from deltaseek.signatures import (ANSWERABILITY, ClassifyTask, DiversifyQuery, JudgeAnswerability, StepDelta,
                                  StopReason, Synthesize, compact_signature, step_delta_for_tools)
from deltaseek.signatures import guidance as text

FACT_CHARS = 3000
"""How much of a passage is kept as a fact: the reader reads it whole (an encyclopedia paragraph
fits; 1200 cut the tail off one bundled passage in ten, and the answer with it); prompts show less."""


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

    @classmethod
    def from_compiled(cls, path, tools: list[SearchTool] | None = None,
                      settings: AgentSettings | None = None) -> "DeltaSeek":
        """A program with the prompts (instructions and demos) of a compiled JSON state file or of
        an MLflow model URI (`models:/NAME/VERSION`), checked against this program's predictors
        before it is loaded. The settings saved with it (calibrated or tuned) replace those of
        `settings`: they were measured with its prompts."""
        program = cls(tools=tools, settings=settings)
        load_program_file(program, path)
        return program

    def dump_state(self, json_mode=True):
        """DSPy's state of the predictors, with the settings measured on labeled data and the reader."""
        return saved_state(self, super().dump_state(json_mode=json_mode))

    def load_state(self, state, **kwargs):
        """DSPy's own load of the predictors, then the settings and reader saved beside them."""
        state, settings = split_saved_state(self, state)
        super().load_state(state, **kwargs)
        keep_settings(self, settings)
        return self

    def keep_settings(self, values: dict) -> None:
        """Run with these settings and save them with the program (`saved_state.keep_settings`)."""
        keep_settings(self, values)

    def with_settings(self, settings: AgentSettings) -> "DeltaSeek":
        """Another program with this one's tools, prompts and reader, run with `settings`."""
        program = type(self)(tools=list(self.tools.values()), settings=settings, reader=self.reader)
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
        while stop is None:  # a named check ends the search (policy.STOP_CHECKS), else one more step
            verdict = stop_verdict(pad, self.settings, self.profile(pad)) or self.step(pad)
            if verdict is not None:
                stop, pad.stop_because = verdict.stop, verdict.because
                pad.answered_by = verdict.answered_by
        return finish(self, pad, stop)

    # --- the steps of the loop -------------------------------------------------

    def begin(self, pad: Scratchpad) -> None:
        """Choose the profile; classify the task: the kind sets budgets, plan and strategy order;
        ask each tool whether it holds each subject of the question."""
        pad.profile, pad.profile_because, pad.profile_follows_replies = choose_profile(self.settings, self.lm())
        pad.task_kind = self.task_kind(pad)
        pad.plan = text.PLANS[pad.task_kind]
        pad.soft_budget, pad.hard_budget, pad.strategy_order = run_budgets(self.settings, pad.task_kind)
        pad.max_searches = self.search_cap(pad)
        for subject in guard.question_subjects(pad.question):
            said = tools_naming(self.tools, subject)
            pad.subject_presence[subject] = True if True in said.values() else None if None in said.values() else False
            pad.subject_unknown_to[subject] = [name for name, says in said.items() if says is None]

    def step(self, pad: Scratchpad) -> Verdict | None:
        """One step: the model's move (or the program's), the checks, the call; a verdict ends the search."""
        asked_model = not pad.program_moves
        move = self.propose_move(pad)
        if move is None:
            return None  # an unusable reply: no progress, the budget still counts
        if pad.executed_calls and move.synthesize:
            if move.origin != "program":
                return Verdict("answered", "the model asked for the answer", "model")
            if steering(pad) == "direct":
                return Verdict("answered", "the facts hold a typed answer", "evidence")
            return Verdict("answered", "no query of the program's own is left", "program")
        if pad.executed_calls and (verdict := answerability_settled(pad, self.settings, self.profile(pad))):
            return verdict
        if move.synthesize:  # tool first: no answer before one search has run
            move = Move(False, self.tool_names[0], pad.question, "tool_first", prediction=move.prediction)
        call = admit_call(self, pad, move)
        if asked_model:
            count_model_move(pad, self.profile(pad), replaced=move.origin == "program" or call is None
                             or call.origin in ("diversified", "program"))
        if move.prediction is not None and (call is None or (call.tool, call.query) != (move.tool, move.query)):
            trace_what_was_done(move.prediction, move_outputs(call))
        if call is None:
            return Verdict("no_new_query", "every query left was a duplicate of one already run")
        self.execute(pad, call)
        return None

    def task_kind(self, pad: Scratchpad) -> str:
        """The question's own words decide; where no rule matches them, a lookup, or the LM's
        class when `classify_with_lm` asks for one (a call beyond the steps + 1 budget)."""
        kind = heuristic = heuristic_task_kind(pad.question)
        if kind == "lookup" and self.settings.classify_with_lm:
            try:
                kind = self.call_lm(pad, self.classify, question=pad.question).kind
            except Exception as exc:  # any LM failure but an unusable LM falls back to the heuristic
                raise_if_fatal(exc)
        return kind if kind in text.PLANS else heuristic

    def propose_move(self, pad: Scratchpad) -> Move | None:
        record = StepRecord(step=pad.step + 1)
        pad.steps.append(record)
        if pad.program_moves:  # the program goes on alone: the question first, its own queries, then the answer
            if not pad.executed_calls:
                return Move(False, self.tool_names[0], pad.question, "tool_first")
            reason = ("the model's replies could not be used" if pad.model_unusable else
                      f"the model's last {pad.replaced_moves_in_a_row} move(s) were replaced by the checks")
            return program_move(self, pad, proposed="", reason=reason) or \
                Move(True, origin="program", replaced_because=reason)
        guidance = step_guidance(pad, self.profile(pad), self.tools)
        pad.notes.clear()
        signature = self.step_delta.signature
        if self.profile(pad).brief_prompts or not pad.executed_calls:
            # before any search there is no evidence to report: the first step asks for the move alone
            # (a small model behind a server, taken for capable, then writes a query, not 256 tokens of bullets)
            signature = compact_signature(signature, StepDelta)
        try:
            out = self.call_lm(pad, self.step_delta, signature=signature, question=pad.question, step=record.step,
                                  scratchpad=rendered_scratchpad(pad, self.profile(pad)), guidance=guidance)
        except Exception as exc:  # a parse error or a bad reply must not escape forward()
            raise_if_fatal(exc)
            record_lm_fault(pad, "step", exc)
            return recover_text_call(self, pad, record, exc)
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
        move = dispose(self, pad, Move(out.next_move == "synthesize", out.tool, (out.query or "").strip()))
        move.prediction = out
        if move.origin == "program" or move.synthesize:
            trace_what_was_done(out, move_outputs(move))
        return move

    def learned_reader(self) -> ReaderModel:
        """The reader's weights the program reads with: its own, else the shipped ones."""
        return self.reader or shipped_reader()

    def read(self, pad: Scratchpad, final: bool = False) -> Reading:
        """The evidence's reading, with the reader abstaining below its threshold. Between searches
        the ranker reads (milliseconds: it steers the search); the answer's reading (`final`) is
        the reader adapter's where the reader has one (about 0.6 s a reading on 2 cores)."""
        reader = self.learned_reader()
        return read_evidence(pad, reader if final else reader.without_adapter())

    def missing_subjects(self, pad: Scratchpad) -> list[str]:
        """The question's subjects that the sources lack, where the reader takes that to mean
        nothing answers the question (`ReaderModel.abstain_on_absent_subject`)."""
        return guard.subjects_missing_from_facts(pad) if self.learned_reader().abstain_on_absent_subject else []

    def profile(self, pad: Scratchpad | None = None) -> Profile:
        """The run's profile with the settings' overrides (see `profile.py`); with no run, the one
        a run would start with."""
        name = pad.profile if pad is not None else choose_profile(self.settings, self.lm()).name
        return profile_for(name, self.settings)

    def lm(self) -> dspy.BaseLM | None:
        """The LM the step is asked with: its own (`set_lm`), else DSPy's configured one."""
        return self.step_delta.lm or dspy.settings.lm

    def saw_junk(self, pad: Scratchpad, why: str) -> None:
        """A reply failed a check: where nobody chose the profile, this run goes on as the small
        one from here; the next run starts with the profile its inputs give, whatever this one saw."""
        if not pad.profile_follows_replies:
            return
        pad.profile, pad.profile_follows_replies = SMALL.name, False
        pad.profile_because = f"switched at step {pad.step}: {why}"
        pad.max_searches = self.search_cap(pad)

    def search_cap(self, pad: Scratchpad) -> int | None:
        """The executed searches the run gets at most: the setting, tightened by the task kind's cap
        where the profile lets the kind cap searches."""
        kind_cap = self.settings.task_search_caps.get(pad.task_kind) if self.profile(pad).search_caps_from_task_kind \
            else None
        return min(filter(None, (kind_cap, self.settings.max_searches)), default=None)

    def call_lm(self, pad: Scratchpad, predictor: dspy.Predict, **inputs) -> dspy.Prediction:
        """Every LM call of a run goes through here, so `pad.lm_calls` counts them."""
        pad.lm_calls += 1
        signature = inputs.get("signature") or predictor.signature
        try:
            prediction = predictor(**inputs)
            read_as = texts_as_written(prediction, signature)
        except Exception as exc:
            if type(exc).__name__ not in UNREADABLE_ERRORS:
                raise
            prediction, read_as = read_or_raise(exc)  # a near miss of a field's type is read as what it says
        if read_as:
            call = next((name for name, p in self.named_predictors() if p is predictor), signature.__name__)
            pad.read_leniently += [f"{call}: {r}" for r in read_as]
        return prediction

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
        observed = observation(pad, result, self.tool_names, self.profile(pad), guard.next_unused_strategy(pad))
        pad.steps[-1].observation = observed
        pad.notes.append(observed)
        check_refinement(self, pad)


def shipped_program(tools: list[SearchTool] | None = None, settings: AgentSettings | None = None) -> DeltaSeek:
    """The program shipped with the package (`programs/compiled/shipped.json`: prompts and settings
    compiled for the embedded model), or ProgramFileError when this version ships none: a program
    that silently fell back to DeltaSeek's own prompts would be measured as the shipped one."""
    path = shipped_program_path()
    if not path.is_file():
        raise ProgramFileError(f"no compiled program is shipped with this version of deltaseek ({path} is absent); "
                               "use DeltaSeek() for its own prompts, or DeltaSeek.from_compiled(path)")
    return DeltaSeek.from_compiled(path, tools=tools, settings=settings)
