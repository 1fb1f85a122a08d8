"""DeltaSeek: a ReAct-style search agent whose guardrails live in Python control flow.

Each step asks the LM only for what is new (StepDelta) and one next move; the loop, not the
prompt, blocks duplicate calls, enforces the budgets, refines weak searches, stops exhausted
ones and always ends with a synthesized answer whose caveats say what is missing.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import dspy

from programs import guardrails as guard
from programs.feedback import format_observation
from programs.guardrails import AgentSettings
from programs.scratchpad import Fact, Scratchpad, StepRecord, ToolCall
from programs.text_calls import parse_text_tool_call
from programs.tools import SearchTool, ToolResult, ToolStatus, named_entities
from signatures import ClassifyTask, DiversifyQuery, JudgeAnswerability, Synthesize, step_delta_for_tools

FACT_CHARS = 400
PLANS = {
    "lookup": ["Search the question's key terms", "Refine once if the passage does not name the answer", "Answer"],
    "multi_hop": ["Find the first entity", "Search the second hop from what was found", "Answer from both"],
    "comparison": ["Broad scan", "Search each side separately", "Compare with caveats"],
    "aggregate_or_ill_posed": ["Broad scan for a published figure", "Search proxies if none exists",
                               "Answer qualitatively, naming the missing metric and the assumptions"],
    "codebase": ["Search the code for the name", "Read the definition", "Answer"],
}


@dataclass
class Move:
    """What a step decided: synthesize, or run `tool` with `query`."""
    synthesize: bool
    tool: str = ""
    query: str = ""
    origin: str = "structured"


class CompiledLoader:
    """`DeltaSeek.load(path, tools=None, settings=None)` on the class builds a program and loads a
    compiled JSON state into it (default tools: the bundled corpus); `program.load(path)` on an
    instance stays dspy.Module's own loader, which DSPy itself calls."""

    def __get__(self, instance, owner):
        if instance is not None:
            return dspy.Module.load.__get__(instance, owner)

        def load(path, tools: list[SearchTool] | None = None, settings: AgentSettings | None = None):
            from optimize.programs import load_program_file
            from programs.corpus import CorpusIndex
            from programs.tools import LocalCorpusSearch

            program = owner(tools=tools or [LocalCorpusSearch(CorpusIndex.open())], settings=settings)
            load_program_file(program, path)
            return program

        return load


class DeltaSeek(dspy.Module):
    load = CompiledLoader()

    def __init__(self, tools: list[SearchTool], settings: AgentSettings | None = None):
        super().__init__()
        if not tools:
            raise ValueError("DeltaSeek needs at least one tool")
        self.tools = {tool.name: tool for tool in tools}
        self.settings = settings or AgentSettings()
        self.step_delta = dspy.Predict(step_delta_for_tools(list(self.tools)))
        self.diversify = dspy.Predict(DiversifyQuery)
        self.judge = dspy.Predict(JudgeAnswerability)
        self.classify = dspy.Predict(ClassifyTask)
        self.synthesize = dspy.Predict(Synthesize)
        self._task_kinds: dict[str, str] = {}

    @property
    def tool_names(self) -> list[str]:
        return list(self.tools)

    @property
    def reserved_names(self) -> set[str]:
        """Names from the prompt itself: tools, the step's fields and the search strategies."""
        return set(self.tools) | set(self.step_delta.signature.fields) | set(guard.STRATEGIES)

    def forward(self, question: str) -> dspy.Prediction:
        pad = Scratchpad(question=question)
        self.begin(pad)
        stop = None
        while stop is None:
            stop = self.stop_reason(pad)
            if stop:
                break
            move = self.propose_move(pad)
            if move is None:
                continue  # an unusable reply: no progress, the budget still counts
            if pad.executed_calls and (move.synthesize or guard.answerability_stops_search(pad)):
                stop = "answered" if move.synthesize else "answerability"
                break
            if move.synthesize:  # tool first: no answer before one search has run
                move = Move(False, self.tool_names[0], question, "tool_first")
            call = self.admit_call(pad, move)
            if call is None:
                stop = "no_new_query"
                break
            self.execute(pad, call)
        return self.finish(pad, stop)

    # --- the steps of the loop -------------------------------------------------

    def begin(self, pad: Scratchpad) -> None:
        """Classify the task (cached per question); the kind sets budgets, plan and strategy order."""
        kind = self.task_kind(pad.question)
        soft, hard, order = guard.TASK_PROFILES[kind]
        if not self.settings.budgets_from_task_kind:
            soft, hard = self.settings.soft_budget, self.settings.hard_budget
        else:  # the settings are ceilings the kind can only tighten
            soft, hard = min(soft, self.settings.soft_budget), min(hard, self.settings.hard_budget)
        pad.task_kind, pad.plan, pad.interpretation = kind, PLANS[kind], pad.question
        pad.soft_budget, pad.hard_budget, pad.strategy_order = soft, hard, list(order)

    def task_kind(self, question: str) -> str:
        if question not in self._task_kinds:
            kind = None
            if self.settings.classify_with_lm:
                try:
                    kind = self.classify(question=question).kind
                except Exception:  # any LM failure falls back to the heuristic
                    kind = None
            self._task_kinds[question] = kind if kind in PLANS else heuristic_task_kind(question)
        return self._task_kinds[question]

    def stop_reason(self, pad: Scratchpad) -> str | None:
        if guard.hard_budget_reached(pad, pad.hard_budget):
            return "hard_budget"
        if guard.search_limit_reached(pad, self.settings.max_searches):
            return "max_searches"
        if guard.answerability_stops_search(pad):
            return "answerability"
        if guard.search_exhausted(pad, self.settings.exhaustion_window):
            return "exhausted"
        if pad.consecutive_lm_failures >= self.settings.max_lm_failures:
            return "lm_error"
        return None

    def propose_move(self, pad: Scratchpad) -> Move | None:
        record = StepRecord(step=pad.step + 1)
        pad.steps.append(record)
        guidance = self.guidance(pad)
        pad.notes.clear()
        try:
            out = self.step_delta(question=pad.question, step=record.step, scratchpad=pad.render(), guidance=guidance)
        except Exception as exc:  # a parse error or a failing LM must not escape forward()
            return self.recover_text_call(pad, record, exc)
        pad.consecutive_lm_failures = 0
        record.new_evidence = clean_items(out.new_evidence)[:3]
        record.uncertain = clean_items(out.uncertain)[:2]
        record.answerability = out.answerability
        pad.uncertainties = (pad.uncertainties + record.uncertain)[-4:]
        if pad.executed_calls:  # an answerability claim counts only once evidence exists
            pad.answerability = out.answerability
        record.move = "synthesize" if out.next_move == "synthesize" else f"{out.tool}(\"{out.query}\")"
        return Move(out.next_move == "synthesize", out.tool, (out.query or "").strip())

    def recover_text_call(self, pad: Scratchpad, record: StepRecord, exc: Exception) -> Move | None:
        raw = getattr(exc, "lm_response", None) or ""
        parsed = parse_text_tool_call(raw, self.tool_names)
        if parsed:
            pad.consecutive_lm_failures = 0
            record.note = "structured output failed; tool call parsed from text"
            record.move = f"{parsed[0]}(\"{parsed[1]}\")"
            return Move(False, parsed[0], parsed[1], "text")
        pad.lm_failures += 1
        pad.consecutive_lm_failures += 1
        record.note = f"no usable move ({type(exc).__name__}); counted as no progress"
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
            if query is None:
                continue
            retry = Move(False, move.tool, query, "diversified")
            reason = self.why_blocked(pad, retry)
            if reason is None:
                return retry
            self.record_blocked(pad, retry, reason)
            return None  # still a duplicate after diversifying: move to synthesis
        return None

    def why_blocked(self, pad: Scratchpad, move: Move) -> str | None:
        return (guard.block_duplicate_call(pad, move.tool, move.query, self.settings.min_new_tokens)
                or guard.block_echo_query(move.query, self.reserved_names))

    def diversified_query(self, pad: Scratchpad, strategy: str) -> str | None:
        try:
            out = self.diversify(question=pad.question, tried_queries=pad.tried_queries,
                                 facts=[f.text[:160] for f in pad.facts[-6:]], strategy=strategy)
            query = (out.query or "").strip()
        except Exception:
            query = ""
        usable = query and not self.why_blocked(pad, Move(False, self.tool_names[0], query))
        return query if usable else heuristic_query(pad, strategy) or query or None

    def record_blocked(self, pad: Scratchpad, move: Move, reason: str) -> None:
        pad.tool_calls.append(ToolCall(step=pad.step, tool=move.tool, args={"query": move.query},
                                       status=ToolStatus.BLOCKED, executed=False, blocked_reason=reason,
                                       origin=move.origin))
        blocked = ToolResult(tool=move.tool, query=move.query, status=ToolStatus.BLOCKED, note=reason)
        pad.notes.append(format_observation(blocked, pad, self.tool_names))

    def execute(self, pad: Scratchpad, move: Move) -> None:
        try:
            result = self.tools[move.tool](move.query)
        except Exception as exc:  # a tool's own bug becomes an observation, not a crash
            result = ToolResult(tool=move.tool, query=move.query, status=ToolStatus.UNAVAILABLE,
                                note=f"{type(exc).__name__}: {exc}")
        facts = [Fact(source=h.source, title=h.title, url=h.url, text=h.text[:FACT_CHARS], step=pad.step)
                 for h in result.hits]
        call = ToolCall(step=pad.step, tool=move.tool, args={"query": move.query}, status=result.status,
                        executed=True, result_count=len(result.hits), origin=move.origin,
                        top_score=max((h.score for h in result.hits if h.score is not None), default=None),
                        summary=result.note or ", ".join(h.title for h in result.hits))
        pad.tool_calls.append(call)
        call.new_facts = pad.add_facts(facts)
        observation = format_observation(result, pad, self.tool_names, guard.next_unused_strategy(pad))
        pad.steps[-1].observation = observation
        pad.notes.append(observation)
        self.check_refinement(pad)

    def check_refinement(self, pad: Scratchpad) -> None:
        """Weak results call for a refined query; a streak of them calls for an answerability judgment."""
        reason = guard.refinement_reason(pad, self.settings.relevance_drop)
        if reason is None:
            return
        strategy = guard.next_unused_strategy(pad)
        pad.notes.append(f"REFINE: the last search {reason}. Use a materially different query"
                         + (f" (strategy: {strategy})" if strategy else "") + ", or synthesize.")
        if guard.weak_search_streak(pad) >= self.settings.weak_results_before_judging:
            try:
                out = self.judge(question=pad.question, facts=[f.text[:160] for f in pad.facts[-6:]],
                                 tried_queries=pad.tried_queries)
                pad.answerability = out.answerability
                pad.uncertainties.append(f"answerability {out.answerability}: {out.reason}")
            except Exception:
                pass  # without a judgment the exhaustion guard still ends the search

    def guidance(self, pad: Scratchpad) -> str:
        tools = "; ".join(f"{t.name}(query): {t.description}" for t in self.tools.values())
        parts = [f"Tools: {tools}", guard.budget_guidance(pad, pad.soft_budget, pad.hard_budget)]
        if not pad.executed_calls:
            parts.append(f"Start with the {pad.strategy_order[0]} search strategy. Plan: " + " -> ".join(pad.plan))
        parts += pad.notes[-2:]
        return "\n".join(parts)

    # --- the final answer ------------------------------------------------------

    def finish(self, pad: Scratchpad, stop: str) -> dspy.Prediction:
        if not pad.executed_calls:  # tool first holds even when every LM reply was unusable
            self.execute(pad, Move(False, self.tool_names[0], pad.question, "tool_first"))
        missing = list(dict.fromkeys(pad.uncertainties))[-4:]
        if stop in ("hard_budget", "max_searches", "exhausted", "no_new_query", "lm_error"):
            missing.append(STOP_CAVEATS[stop])
        answer, caveats, assumptions, sources, claimed = self.synthesize_answer(pad, missing)
        answerability = guard.settle_answerability(pad, claimed)
        missing_subjects = guard.subjects_missing_from_facts(pad)
        if not pad.facts or missing_subjects:
            about = ", ".join(missing_subjects) or f"\"{pad.question}\""
            answer = f"No information found about {about}: no passage found mentions it."
            sources = []
        if stop in STOP_CAVEATS:
            caveats.append(STOP_CAVEATS[stop])
        pad.candidate_answer, pad.answerability = answer, answerability
        pad.assumptions = list(dict.fromkeys(pad.assumptions + assumptions))
        return dspy.Prediction(
            answer=answer, answerability=answerability, caveats=list(dict.fromkeys(caveats)),
            assumptions=pad.assumptions, sources=sources, stop_reason=stop, steps=pad.step,
            tool_calls=[c.model_dump(mode="json") for c in pad.tool_calls], scratchpad=pad,
        )

    def synthesize_answer(self, pad: Scratchpad, missing: list[str]):
        facts = [f"[{f.source}] {f.title}: {f.text}" for f in pad.facts[-8:]]
        known = {f.source for f in pad.facts}
        try:
            out = self.synthesize(question=pad.question, facts=facts, missing=missing)
            sources = [s.strip("[] ") for s in (out.sources or []) if s.strip("[] ") in known]
            answer, caveats = str(out.answer).strip(), clean_items(out.caveats)
            if pad.facts and not guard.answer_is_grounded(answer, pad):
                answer = best_effort_answer(pad)
                caveats.append("The model's answer was not supported by the facts found; "
                               "this answer quotes the best evidence instead.")
            return (answer, caveats, clean_items(out.assumptions),
                    sources or [f.source for f in pad.facts[:3]], out.answerability)
        except Exception as exc:  # the answer is never skipped: fall back to the evidence itself
            return (best_effort_answer(pad), [f"The synthesis step failed ({type(exc).__name__}); "
                                              "this answer quotes the best evidence found."],
                    [], [f.source for f in pad.facts[:1]], None)


STOP_CAVEATS = {
    "hard_budget": "The search stopped at its step budget before it was complete.",
    "max_searches": "The search stopped at its limit on searches.",
    "exhausted": "Several searches in a row found nothing new; the search was stopped.",
    "no_new_query": "No materially different query was left to try.",
    "lm_error": "The model's replies could not be used; the answer rests on the searches that ran.",
    "answerability": "The exact question does not look answerable from the available sources.",
}


def best_effort_answer(pad: Scratchpad) -> str:
    """Quote the fact that best matches the question: its named subjects count double."""
    if not pad.facts:
        return f"No information found about \"{pad.question}\"."
    terms = guard.meaningful_tokens(pad.question)
    subjects = guard.meaningful_tokens(" ".join(named_entities(pad.question)))

    def relevance(fact: Fact) -> int:
        words = guard.meaningful_tokens(fact.title + " " + fact.text)
        return len(terms & words) + len(subjects & words)

    best = max(pad.facts, key=relevance)
    return f"Best evidence found ({best.title}): {best.text[:300]}"


def heuristic_task_kind(question: str) -> str:
    q = question.lower()
    if re.search(r"\b(interface|class|function|method|module|codebase|repository|repo)\b", q):
        return "codebase"
    if re.search(r"\b(rate|adoption|percentage|share|how many|statistics?|market)\b", q):
        return "aggregate_or_ill_posed"
    if re.search(r"\b(vs\.?|versus|compare|compared|difference between)\b", q):
        return "comparison"
    if re.search(r"\b(of the|creator|founder|author|whose|born)\b", q) and len(named_entities(question)) >= 1:
        return "multi_hop"
    return "lookup"


def heuristic_query(pad: Scratchpad, strategy: str) -> str | None:
    """A deterministic query when the LM gives none usable, for the strategies that need no
    world knowledge. `narrower` is pseudo-relevance feedback: the question's terms plus the
    terms the facts found repeat most that no query has used yet."""
    keywords = sorted(guard.meaningful_tokens(pad.question))
    if strategy == "direct":
        return " ".join(keywords) or None
    if strategy == "entity-focused":
        return " ".join(named_entities(pad.question)) or None
    if strategy == "narrower" and pad.facts:
        used = set(keywords).union(*(guard.meaningful_tokens(q) for q in pad.tried_queries))
        counts = Counter(t for f in pad.facts for t in re.findall(r"[a-z0-9]{3,}", f.text.lower())
                         if t not in used and t in guard.meaningful_tokens(t))
        return " ".join(keywords + [t for t, _ in counts.most_common(3)]) or None
    return None


def clean_items(items) -> list[str]:
    """Drop the empty and punctuation-only entries a small model pads its lists with."""
    return [text for text in (str(i).strip() for i in items or [] if i is not None) if re.search(r"[A-Za-z0-9]{2,}", text)]
