"""deltaseek against dspy.ReAct and dspy.ReActV2 on the same LM, tools, step budget and questions.

Every program searches through the same `LoggedTool`s, which record each execution, so tool
calls and duplicate executions are counted the same way for all of them; LM calls and tokens
come from DSPy's per-run usage tracking. One row per program:

    answered, exact match, token F1, answerability accuracy; executed tool calls (mean, max),
    duplicate executions, runs that hit the budget, runs that raised; LM calls and tokens per
    question (mean), wall seconds per question (median); how often the next call follows a
    suggestion of the tool feedback (seed 003); how often a query, answer, caveat or assumption
    is an echo of a field name, tool name or DSPy placeholder.
"""

from __future__ import annotations

import re
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

import dspy
from dspy.utils.usage_tracker import track_usage

from deltaseek.metrics import answerability_accuracy, exact_match, token_f1
from deltaseek.metrics.answers import normalize_answer
from deltaseek.metrics.contract import abstains
from deltaseek.programs.agent import AgentSettings, DeltaSeek
from deltaseek.programs.agent.run import usage_totals
from deltaseek.programs.lm import adapter_for, is_embedded
from deltaseek.programs.text import normalize_query
from deltaseek.programs.tools import SearchTool, ToolResult
from deltaseek.programs.tools.base import WrappedTool
from deltaseek.signatures import StepDelta, Synthesize

PLACEHOLDER = "not supplied for this particular example"
_SUGGESTION = re.compile(r"Try (\w+)\(query: \"([^\"]+)\"\)")


class LoggedTool(WrappedTool):
    """A tool that records every execution (tool, query) in a shared log."""

    def __init__(self, tool: SearchTool, log: list[tuple[str, str]]):
        super().__init__(tool)
        self.log = log

    def search(self, query: str, **kwargs) -> ToolResult:
        self.log.append((self.name, query))
        return super().search(query, **kwargs)


def as_function(tool: LoggedTool) -> Callable[[str], str]:
    """The tool as the plain function dspy.ReAct and ReActV2 take: name, docstring, `query` arg."""
    def search(query: str) -> str:
        result = tool(query)
        hits = "\n".join(f"[{h.source}] {h.title}: {h.text[:300]}" for h in result.hits)
        return hits or f"{result.status.value}: {result.note}"

    search.__name__ = tool.name
    search.__doc__ = tool.description
    return search


@dataclass
class Run:
    """One program on one question."""

    answer: str = ""
    answerability: str | None = None
    raised: str | None = None
    executed: list[tuple[str, str]] = field(default_factory=list)
    hit_budget: bool = False
    lm_calls: int = 0
    steps: int | None = None
    """deltaseek's steps (the budget of LM calls is steps + 1); None for the other programs."""
    tokens: int = 0
    seconds: float = 0.0
    followed: tuple[int, int] = (0, 0)
    """(calls that followed a feedback suggestion, calls that had a suggestion before them)"""
    echoes: tuple[int, int] = (0, 0)
    """(outputs that are echoes, outputs checked)"""
    facts_text: str = ""
    """What the program read (deltaseek's facts), to tell whether the gold answer was in reach."""

    @property
    def duplicates(self) -> int:
        keys = [(tool, normalize_query(query)) for tool, query in self.executed]
        return len(keys) - len(set(keys))


def echo_names(tool_names: list[str]) -> set[str]:
    fields = set(StepDelta.fields) | set(Synthesize.fields)
    return {n.lower() for n in (*tool_names, *fields, "direct", "proxy_only", "unlikely", "search", "synthesize")}


def count_echoes(texts: list[str], names: set[str]) -> tuple[int, int]:
    """(echoes, texts): a text that is only a field, tool or label name, or DSPy's placeholder."""
    def is_echo(text: str) -> bool:
        said = text.strip().strip(".:;-* ").lower()
        return not said or PLACEHOLDER in said or said in names or said.replace(" ", "_") in names
    return sum(map(is_echo, texts)), len(texts)


def followed_feedback(pred) -> tuple[int, int]:
    """Seed 003's measure for deltaseek: of the executed calls that came after an observation with
    suggestions, how many ran a suggested tool call (or a new query on the suggested tool)."""
    calls = [c for c in pred.tool_calls if c["executed"]]
    steps = {s["step"]: s["observation"] for s in pred.scratchpad.model_dump()["steps"]}
    followed = asked = 0
    for previous, call in zip(calls, calls[1:]):
        suggestions = _SUGGESTION.findall(steps.get(previous["step"], ""))
        if not suggestions and "NEXT STEPS" not in steps.get(previous["step"], ""):
            continue
        asked += 1
        suggested_tools = {tool for tool, _ in suggestions} or {previous["tool"]}
        followed += call["tool"] in suggested_tools
    return followed, asked


def run_one(name: str, program: dspy.Module, question: str, log: list, budget: int, names: set[str]) -> Run:
    log.clear()
    run = Run()
    started = time.perf_counter()
    with track_usage() as tracker:
        try:
            pred = program(question=question)
        except Exception as exc:  # a program that raises is a row of the table, not a crash of the bench
            pred, run.raised = None, f"{type(exc).__name__}: {str(exc)[:120]}"
    run.seconds = time.perf_counter() - started
    run.lm_calls, run.tokens = usage_totals(tracker)
    run.executed = list(log)
    if pred is None:
        return run
    run.answer = str(getattr(pred, "answer", "") or "")
    run.answerability = getattr(pred, "answerability", None)
    outputs = [run.answer, *(q for _, q in run.executed)]
    if name.startswith("deltaseek"):
        run.hit_budget = pred.stop_reason == "hard_budget"
        run.steps = pred.steps
        run.followed = followed_feedback(pred)
        outputs += list(pred.caveats) + list(pred.assumptions)
        run.facts_text = " ".join(f"{f.title} {f.text}" for f in pred.scratchpad.facts)
    else:
        reason = getattr(pred, "termination_reason", None)
        run.hit_budget = reason == "max_iters" if reason else len(run.executed) >= budget
    run.echoes = count_echoes(outputs, names)
    return run


@dataclass
class Row:
    program: str
    runs: list[Run]
    scores: list[dict[str, float]]

    def summary(self) -> dict[str, float | int | None]:
        runs, n = self.runs, max(len(self.runs), 1)
        answerable = [s for s in self.scores if s["answerable"]]
        in_reach = [s for s in answerable if s["gold_in_facts"]]
        unanswerable = [s for s in self.scores if not s["answerable"]]
        followed = [r.followed for r in runs]
        echoes = [r.echoes for r in runs]
        asked = sum(a for _, a in followed)
        return {
            "answered": sum(1 for r in runs if r.answer.strip() and not r.raised) / n,
            "exact_match": statistics.fmean(s["exact_match"] for s in self.scores) if self.scores else 0.0,
            "token_f1": statistics.fmean(s["token_f1"] for s in self.scores) if self.scores else 0.0,
            "answerability_accuracy": statistics.fmean(s["answerability"] for s in self.scores) if self.scores else 0.0,
            "tool_calls_mean": statistics.fmean(len(r.executed) for r in runs) if runs else 0.0,
            "tool_calls_max": max((len(r.executed) for r in runs), default=0),
            "duplicate_executions": sum(r.duplicates for r in runs),
            "hit_budget": sum(r.hit_budget for r in runs),
            "raised": sum(1 for r in runs if r.raised),
            "lm_calls_mean": statistics.fmean(r.lm_calls for r in runs) if runs else 0.0,
            "lm_calls_max": max((r.lm_calls for r in runs), default=0),
            "calls_over_steps_plus_one": (sum(r.lm_calls > r.steps + 1 for r in runs if r.steps is not None)
                                          if any(r.steps is not None for r in runs) else None),
            "tokens_mean": statistics.fmean(r.tokens for r in runs) if runs else 0.0,
            "seconds_median": statistics.median(r.seconds for r in runs) if runs else 0.0,
            "followed_feedback": sum(f for f, _ in followed) / asked if asked else None,
            "echo_rate": sum(e for e, _ in echoes) / max(sum(t for _, t in echoes), 1),
            # both sides of the guards: right answers and honest abstentions shown, junk not shown
            "gold_shown": share(s["exact_match"] for s in answerable),
            "gold_shown_in_reach": share(s["exact_match"] for s in in_reach),
            "in_reach": len(in_reach),
            "abstained_unanswerable": share(s["abstained"] for s in unanswerable),
            "false_abstention": share(s["abstained"] for s in answerable),
        }


def share(values) -> float | None:
    """The mean of 0/1 values, None for none (a column with nothing to count says so)."""
    values = list(values)
    return statistics.fmean(values) if values else None


def gold_in(example: dspy.Example, text: str) -> bool:
    """Whether the gold answer (or an alias) stands in the text, compared as normalized words."""
    said = f" {normalize_answer(text)} "
    golds = [example.get("answer") or "", *(example.get("aliases") or [])]
    return any(g.strip() and f" {normalize_answer(g)} " in said for g in golds)


def build_programs(tools: list[SearchTool], budget: int, log: list, compiled_path: str | None = None,
                   profile: str | None = None) -> dict[str, dspy.Module]:
    logged = [LoggedTool(tool, log) for tool in tools]
    settings = AgentSettings(hard_budget=budget, soft_budget=min(4, budget), profile=profile)
    programs: dict[str, dspy.Module] = {"deltaseek": DeltaSeek(tools=logged, settings=settings)}
    if compiled_path:
        compiled = DeltaSeek.from_compiled(compiled_path, tools=logged, settings=settings)
        # every program gets the same step budget, whatever budgets were saved with this one
        budgets = {name: getattr(settings, name) for name in ("soft_budget", "hard_budget")}
        compiled.settings = compiled.settings.model_copy(update=budgets)
        programs["deltaseek (compiled)"] = compiled
    functions = [as_function(tool) for tool in logged]
    programs["dspy.ReAct"] = dspy.ReAct("question -> answer", tools=functions, max_iters=budget)
    programs["dspy.ReActV2"] = dspy.ReActV2("question -> answer", tools=functions, max_iters=budget)
    return programs


def compare(examples: list[dspy.Example], tools: list[SearchTool], lm: dspy.BaseLM, budget: int = 8,
            compiled_path: str | None = None, progress: Callable | None = None, profile: str | None = None,
            adapter: dspy.Adapter | None = None) -> list[Row]:
    """Every program on every example, with the same LM, tools and step budget. `adapter`: the
    format deltaseek's calls use (default: the embedded model's own, else DSPy's JSON adapter);
    `profile`: deltaseek's (AgentSettings.profile)."""
    log: list[tuple[str, str]] = []
    programs = build_programs(tools, budget, log, compiled_path, profile)
    names = echo_names([t.name for t in tools])
    rows = {name: Row(name, [], []) for name in programs}
    for example in examples:
        for name, program in programs.items():
            # deltaseek's guarded decoding wants the JSON adapter (the embedded model's own); ReAct and
            # ReActV2 their default.
            json_adapter = adapter or (adapter_for(lm) if is_embedded(lm) else dspy.JSONAdapter())
            with dspy.context(lm=lm, adapter=json_adapter if name.startswith("deltaseek") else dspy.ChatAdapter()):
                run = run_one(name, program, example.question, log, budget, names)
            rows[name].runs.append(run)
            prediction = {"answer": run.answer if not run.raised else None, "answerability": run.answerability,
                          "tool_calls": []}
            answerable = example.get("answerability") != "unlikely"
            rows[name].scores.append({"exact_match": exact_match(example, prediction),
                                      "token_f1": token_f1(example, prediction),
                                      "answerability": answerability_accuracy(example, prediction),
                                      "answerable": answerable,
                                      "gold_in_facts": answerable and gold_in(example, run.facts_text),
                                      "abstained": float(not run.raised and abstains(prediction))})
        if progress:
            progress()
    return list(rows.values())


COLUMNS = [("answered", "{:.0%}"), ("exact_match", "{:.3f}"), ("token_f1", "{:.3f}"), ("answerability_accuracy", "{:.3f}"),
           ("tool_calls_mean", "{:.1f}"), ("tool_calls_max", "{}"), ("duplicate_executions", "{}"),
           ("hit_budget", "{}"), ("raised", "{}"), ("lm_calls_mean", "{:.1f}"), ("lm_calls_max", "{}"),
           ("calls_over_steps_plus_one", "{}"), ("tokens_mean", "{:.0f}"),
           ("seconds_median", "{:.1f}"), ("followed_feedback", "{:.0%}"), ("echo_rate", "{:.0%}"),
           ("gold_shown", "{:.0%}"), ("gold_shown_in_reach", "{:.0%}"), ("in_reach", "{}"),
           ("abstained_unanswerable", "{:.0%}"), ("false_abstention", "{:.0%}")]


def format_table(rows: list[Row]) -> str:
    header = "| program | " + " | ".join(name for name, _ in COLUMNS) + " |"
    lines = [header, "|" + "---|" * (len(COLUMNS) + 1)]
    for row in rows:
        summary = row.summary()
        cells = ["-" if summary[name] is None else fmt.format(summary[name]) for name, fmt in COLUMNS]
        lines.append(f"| {row.program} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
