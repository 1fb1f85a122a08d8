"""Speed and quality on the scored parts of the bundled labeled sets, side by side from one run.

    deltaseek bench --speed [--sets seed_set musique squad2] [--limit N] [--program P]

Each question of a set's scored part (its `test` split) runs once, in this process, on the
embedded model with DSPy's cache off, as `deltaseek evaluate` runs it. Per set it prints the
median and p90 seconds a question, LM calls (median, max, and the questions with more than
steps + 1), the prompt / restored / generated tokens of a question (mean), where the time goes
(model prompt evaluation, model generation, sampling and grammar, search, reader, the rest of
the program and DSPy) and the quality of the same runs (exact match, F1, abstention on
unanswerable questions, false abstention). The start of a new process (imports, model load,
index load) is measured once, in a child process, and printed beside the table: `deltaseek ask`
pays it on every question, `evaluate` and a batch once.

With `--reader-beside READER` (e.g. `features`) each question runs a second time with that
reader, in the same process, the two runs in turns (the program's first on one question, the
other's first on the next): the line under the table is the paired median of what the program's
reader adds over it, a question's reader seconds and its whole seconds. Runs minutes apart move
with the machine's speed; runs side by side do not.

Each question's row is appended to a JSONL file as it ends, so an interrupted run keeps them.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import dspy

from deltaseek.bundled import labeled_set
from deltaseek.metrics.contract import abstains
from deltaseek.optimize.agent_options import AgentOptions, build_program
from deltaseek.optimize.command_options import BUNDLED_SETS
from deltaseek.optimize.compare import share
from deltaseek.optimize.evaluate import corpora_for, load_dataset, select
from deltaseek.optimize.evaluation_report import score
from deltaseek.optimize.paired import pair_rows
from deltaseek.programs.agent import DeltaSeek, run_question
from deltaseek.programs.agent.evidence import Reading
from deltaseek.programs.agent.scratchpad import Scratchpad
from deltaseek.programs.index import CorpusIndex
from deltaseek.programs.lm import adapter_for, embedded_engine, make_lm
from deltaseek.programs.tools import LocalCorpusSearch, SearchTool, ToolResult
from deltaseek.programs.tools.base import WrappedTool

SCORED_SPLIT = "test"
"""The part of each labeled set that is only scored, never read while writing rules."""
TIME_PARTS = ("prompt", "generation", "sampling", "search", "reader", "program")
"""Where a question's seconds go: the model evaluating its prompt and decoding tokens (llama.cpp's
own timings), the rest of the model call (sampling under the JSON grammar, restoring the saved
prompt prefix, tokenizing), the search tools, the extractive reader, and everything else
(the guarded loop's Python and DSPy's adapters)."""


@dataclass
class Clock:
    """Seconds spent in the search tools and in the reader during one question."""
    search: float = 0.0
    reader: float = 0.0


class TimedTool(WrappedTool):
    """A tool that adds the seconds of each search to a clock."""

    def __init__(self, tool: SearchTool, clock: Clock):
        super().__init__(tool)
        self.clock = clock

    def search(self, query: str, **kwargs) -> ToolResult:
        started = time.perf_counter()
        try:
            return super().search(query, **kwargs)
        finally:
            self.clock.search += time.perf_counter() - started


class TimedDeltaSeek(DeltaSeek):
    """DeltaSeek whose reader adds its seconds to a clock (the program is otherwise the same)."""

    clock: Clock | None = None

    def read(self, pad: Scratchpad, final: bool = False) -> Reading:
        started = time.perf_counter()
        try:
            return super().read(pad, final)
        finally:
            if self.clock is not None:
                self.clock.reader += time.perf_counter() - started


def timed_program(index: CorpusIndex, clock: Clock, options: AgentOptions = AgentOptions()) -> DeltaSeek:
    """The program `ask` would run with these agent options (`--program`, `--reader`, the
    budgets), searching `index`: by default the shipped compiled program for the embedded model."""
    program = build_program(options, tools=[TimedTool(LocalCorpusSearch(index), clock)], program_type=TimedDeltaSeek)
    program.clock = clock
    return program


def question_row(set_name: str, example: dspy.Example, record: dict, stats, clock: Clock) -> dict:
    """One question's figures: its costs, where its time went, and its scores."""
    prompt = stats.prompt_eval_ms / 1000
    generation = stats.generate_ms / 1000
    sampling = max(stats.seconds - prompt - generation, 0.0)
    program = max(record["seconds"] - stats.seconds - clock.search - clock.reader, 0.0)
    answerable = example.get("answerability") != "unlikely"
    return {
        "set": set_name, "id": example.get("id"), "question": example.question, "answer": record["answer"],
        "answerability": record["answerability"], "answer_origin": record["answer_origin"],
        "stop_reason": record["stop_reason"], "gold": example.get("answer"), "answerable": answerable,
        "seconds": record["seconds"], "steps": record["steps"], "lm_calls": record["lm_calls"],
        "prompt_tokens": stats.prompt_tokens, "restored_tokens": stats.restored_tokens,
        "generated_tokens": stats.generated_tokens,
        "time": {"prompt": prompt, "generation": generation, "sampling": sampling, "search": clock.search,
                 "reader": clock.reader, "program": program},
        "scores": score(example, record), "abstained": abstains(record),
    }


def run_set(set_name: str, dataset: str, limit: int | None, out, options: AgentOptions = AgentOptions(),
            progress=None, beside: AgentOptions | None = None) -> list[dict]:
    """Every question of the set's scored part, one row each (appended to `out` as it ends); with
    `beside`, a second row each from those options, the two runs of a question in turns."""
    labeled = load_dataset(dataset).examples
    examples = select(labeled, SCORED_SPLIT, limit) or select(labeled, "all", limit)
    index = CorpusIndex.open(corpora_for(examples) or None)
    engine = embedded_engine()
    lm = make_lm(cache=False)  # a call answered from DSPy's cache would make its seconds a lie
    runs = [("program", options)] + ([("beside", beside)] if beside else [])
    rows = []
    for number, example in enumerate(examples):
        for run, run_options in runs if number % 2 == 0 else runs[::-1]:
            clock = Clock()
            engine.reset_stats()
            with dspy.context(lm=lm, adapter=adapter_for(lm)):
                program = timed_program(index, clock, run_options)
                record = run_question(program, example.question)
            row = {**question_row(set_name, example, record, engine.reset_stats(), clock), "run": run,
                   "reader": run_options.reader}
            out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            out.flush()
            rows.append(row)
        if progress:
            progress()
    return rows


def reader_added(rows: list[dict]) -> dict | None:
    """The program's runs against the `beside` runs of the same questions (paired by id, as
    `paired` pairs two programs' rows): paired medians of the difference in the reader's seconds
    and in the question's; None without `beside` runs."""
    beside = [r for r in rows if r["run"] == "beside"]
    if not beside:
        return None
    pairs = pair_rows([r for r in rows if r["run"] == "program"], beside)
    return {"questions": len(pairs),
            "reader": statistics.median(a["time"]["reader"] - b["time"]["reader"] for a, b in pairs),
            "seconds": statistics.median(a["seconds"] - b["seconds"] for a, b in pairs),
            "same_answer": sum(a["answer"] == b["answer"] for a, b in pairs)}


def quantile(values: list[float], q: float) -> float:
    """The q-quantile of the values (statistics' inclusive method; the value itself for one)."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def summarize(rows: list[dict]) -> dict:
    """A set's line of the table."""
    seconds = [r["seconds"] for r in rows]
    total = sum(seconds) or 1e-9
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    return {
        "questions": len(rows),
        "seconds_median": statistics.median(seconds), "seconds_p90": quantile(seconds, 0.9),
        "lm_calls_median": statistics.median(r["lm_calls"] for r in rows),
        "lm_calls_max": max(r["lm_calls"] for r in rows),
        "over_steps_plus_one": sum(r["lm_calls"] > r["steps"] + 1 for r in rows),
        "steps_mean": statistics.fmean(r["steps"] for r in rows),
        **{f"{kind}_tokens_mean": statistics.fmean(r[f"{kind}_tokens"] for r in rows)
           for kind in ("prompt", "restored", "generated")},
        "time_share": {part: sum(r["time"][part] for r in rows) / total for part in TIME_PARTS},
        "exact_match": statistics.fmean(r["scores"]["exact_match"] for r in rows),
        "token_f1": statistics.fmean(r["scores"]["token_f1"] for r in rows),
        "combined": statistics.fmean(r["scores"]["combined"] for r in rows),
        "abstained_unanswerable": share(r["abstained"] for r in unanswerable),
        "false_abstention": share(r["abstained"] for r in answerable),
    }


def process_start() -> dict[str, float]:
    """What a new `deltaseek ask` process pays before its first LM call, measured in a child
    process: interpreter and imports, the model load, the cached index load."""
    code = ("import time; t0 = time.perf_counter()\n"
            "import deltaseek.cli\n"
            "from deltaseek.programs.lm import embedded_engine\n"
            "from deltaseek.programs.index import CorpusIndex\n"
            "t1 = time.perf_counter(); embedded_engine()._model(); t2 = time.perf_counter()\n"
            "CorpusIndex.open(); t3 = time.perf_counter()\n"
            "print(t1 - t0, t2 - t1, t3 - t2)")
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - started
    imports, model, index = (float(x) for x in out.split())
    return {"total": wall, "imports": imports, "model_load": model, "index_load": index}


COLUMNS = (("questions", "{}"), ("seconds_median", "{:.1f}"), ("seconds_p90", "{:.1f}"),
           ("lm_calls_median", "{:g}"), ("lm_calls_max", "{}"), ("over_steps_plus_one", "{}"),
           ("prompt_tokens_mean", "{:,.0f}"), ("restored_tokens_mean", "{:,.0f}"), ("generated_tokens_mean", "{:,.0f}"),
           ("exact_match", "{:.3f}"), ("token_f1", "{:.3f}"), ("abstained_unanswerable", "{:.0%}"),
           ("false_abstention", "{:.0%}"))
HEADERS = ("set (scored part)", "questions", "median s", "p90 s", "LM calls (median)", "LM calls (max)",
           "LM calls > steps + 1", "prompt tokens", "restored", "generated", "EM", "F1", "abstained (unanswerable)",
           "false abstention")


def format_table(summaries: dict[str, dict], start: dict[str, float] | None = None) -> str:
    """The speed and quality table, then where the time goes, then the process start."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|---|" + "---:|" * len(COLUMNS)]
    for name, s in summaries.items():
        cells = ["-" if s[key] is None else fmt.format(s[key]) for key, fmt in COLUMNS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "| where the time goes | " + " | ".join(TIME_PARTS) + " |", "|---|" + "---:|" * len(TIME_PARTS)]
    for name, s in summaries.items():
        lines.append(f"| {name} | " + " | ".join(f"{s['time_share'][part]:.0%}" for part in TIME_PARTS) + " |")
    for name, s in summaries.items():
        if added := s.get("reader_added"):
            lines.append(f"\n{name}: the program's reader against {s['beside']}, the same {added['questions']} "
                         f"questions in turns: reader seconds {added['reader']:+.3f} (paired median), "
                         f"question seconds {added['seconds']:+.3f}; the same answer on {added['same_answer']}")
    if start:
        lines.append(f"\nprocess start (once per `deltaseek ask`, once per batch or evaluation): "
                     f"{start['total']:.1f} s "
                     f"(imports {start['imports']:.1f} s, model load {start['model_load']:.1f} s, "
                     f"index load {start['index_load']:.2f} s)")
    return "\n".join(lines)


@dataclass
class SpeedRun:
    sets: list[str]
    limit: int | None = None
    options: AgentOptions = field(default_factory=AgentOptions)
    out: Path = field(default_factory=lambda: Path("results") / f"speed-{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
    reader_beside: str | None = None
    """Another reader (`--reader` values) to run each question with too, in turns (`run_set`)."""

    def run(self) -> dict[str, dict]:
        from tqdm import tqdm

        self.out.parent.mkdir(parents=True, exist_ok=True)
        summaries = {}
        with self.out.open("a", encoding="utf-8") as out:
            beside = replace(self.options, reader=self.reader_beside) if self.reader_beside else None
            for name in self.sets:
                dataset = str(labeled_set(name)) if name in BUNDLED_SETS else name
                with tqdm(desc=f"speed {Path(name).stem}", unit="q", file=sys.stderr) as bar:
                    rows = run_set(Path(name).stem, dataset, self.limit, out, self.options, lambda: bar.update(1),
                                   beside)
                summaries.update(set_summaries(rows))
        return summaries


def set_summaries(rows: list[dict]) -> dict[str, dict]:
    """A line of the table per set, and per set run beside it with another reader (`run_set`),
    named after that reader; the set's own line then holds what its reader adds over the other."""
    by_set: dict[str, list[dict]] = {}
    for row in rows:
        by_set.setdefault(row["set"], []).append(row)
    summaries = {}
    for name, own in by_set.items():
        summaries[name] = summarize([r for r in own if r.get("run", "program") == "program"])
        if beside := [r for r in own if r.get("run") == "beside"]:
            label = f"--reader {beside[0]['reader']}"
            summaries[name].update(reader_added=reader_added(own), beside=label)
            summaries[f"{name}, {label}"] = summarize(beside)
    return summaries
