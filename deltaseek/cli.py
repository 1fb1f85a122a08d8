"""The `deltaseek` command: ask, index, evaluate, optimize, bench. The only module that imports
`optimize`: the library below it never depends on the command line."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
import unicodedata
from pathlib import Path

import dspy
from pydantic import ValidationError

from deltaseek.errors import CorpusError, DeltaSeekError, UsageError
from deltaseek.bundled import labeled_set
from deltaseek.metrics import combined_metric
from deltaseek.optimize import benchmark
from deltaseek.optimize import calibrate as calibration
from deltaseek.optimize.compare import compare, format_table
from deltaseek.optimize.scenario_lms import SCENARIOS, scenario_lm
from deltaseek.optimize.compile import KEEP_PROMPTS, OPTIMIZERS, compile_program
from deltaseek.optimize.paired import format_paired, paired_table
from deltaseek.optimize.evaluate import (SPLIT_CHOICES, EvalReport, LMUnusable, corpora_for, evaluate_program,
                                         format_comparison, format_report, labeled_rows, load_dataset, refuse_overwrite,
                                         select, table_columns)
from deltaseek.optimize.stopping import stop_on_signals
from deltaseek.optimize.labeled_data import SPLITS, split
from deltaseek.optimize.tracking import Tracker, warn
from deltaseek.optimize.tune import SEARCH_SPACE, format_trials, subspace, tune_settings
from deltaseek.programs.agent import AgentSettings, DeltaSeek, run_question, save_program
from deltaseek.programs.agent.deltaseek import check_question
from deltaseek.optimize.train_reader import train_reader_into
from deltaseek.programs.agent.learned_reader import load_reader
from deltaseek.programs.agent.program_file import UNCOMPILED, default_program_path, load_state_into
from deltaseek.programs.index import CorpusIndex, read_corpus
from deltaseek.programs.lm import OUTPUT_FORMATS, configure_lm, is_fatal_lm_error, make_lm
from deltaseek.programs.tools import build_tools, load_passages, parse_target

RESULTS_DIR = "results"
DEFAULT_PROGRAM = "default"
"""`evaluate --compare default B.json`: DeltaSeek's own prompts (the uncompiled program)."""


def add_lm_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lm", help="a litellm model string (openai/gpt-4o-mini, ollama_chat/qwen2.5:7b, ...) or a "
                                     "local GGUF file run in-process (path/to/model.gguf); "
                                     "default: $DELTASEEK_LM or the embedded SmolLM2")
    parser.add_argument("--api-base", help="an OpenAI-compatible server URL; default: $DELTASEEK_API_BASE")
    parser.add_argument("--format", choices=OUTPUT_FORMATS, default="auto",
                        help="how replies are asked for: json (a JSON schema the model or server holds them to), "
                             "chat (DSPy's chat format), auto (json where the model or server takes a schema: "
                             "litellm's data, or one probe call to an --api-base server; default)")
    parser.add_argument("--profile", choices=("small", "capable"),
                        help="small: compact prompts and calls, no helper calls, a bounded schema; capable: full "
                             "prompts, every call asked (default: small for the embedded model, capable for any other)")


RULE_READER = "rules"
"""`--reader rules`: the rule reader in place of the learned one."""


def add_agent_options(parser: argparse.ArgumentParser) -> None:
    add_lm_options(parser)
    parser.add_argument("--corpus", action="append", help="JSONL corpus to search (repeatable); default: the bundled corpus")
    parser.add_argument("--tools", default="local", help="comma-separated: local, web, wikipedia, files:PATH, "
                                                         "sphinx:HOST:PORT/INDEX (or sphinx with $DELTASEEK_SPHINX)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the search result cache")
    parser.add_argument("--program", help="a compiled program to load instead of the default: a JSON state file, "
                                           "or an MLflow model URI such as models:/NAME/VERSION (its prompts)")
    parser.add_argument("--reader", help="a learned reader's JSON weights (python -m deltaseek.optimize.train_reader) "
                        "in place of the program's, or `rules` for the rule reader; default: the program's own, "
                        "else the shipped programs/compiled/reader.json")
    parser.add_argument("--soft-budget", type=int)
    parser.add_argument("--hard-budget", type=int)
    parser.add_argument("--max-searches", type=int)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="deltaseek", description="A DSPy search agent that never gets stuck.")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)

    ask = sub.add_parser("ask", help="answer one question, or each line of a file")
    ask.add_argument("question", nargs="?")
    ask.add_argument("-f", "--file", metavar="FILE",
                     help="answer each non-empty line of FILE in turn (- for standard input), the model loaded once; "
                          "with --json, one JSON object a line, printed as each ends")
    add_agent_options(ask)
    ask.add_argument("--trace", action="store_true", help="show each step: thought, tool call, short observation")
    ask.add_argument("--json", action="store_true", help="print one JSON object")
    ask.add_argument("--debug", action="store_true", default=argparse.SUPPRESS)

    index = sub.add_parser("index", help="build the BM25 index of a corpus now, or load it into Sphinx/Manticore shards")
    index.add_argument("corpus", nargs="+")
    index.add_argument("--to", action="append", metavar="sphinx:HOST:PORT/INDEX",
                       help="load into this real-time index instead (repeatable or comma-separated: the passages "
                            "are spread over the shards by a hash of their id; re-running skips what is there)")
    index.add_argument("--debug", action="store_true", default=argparse.SUPPRESS)

    register_optimize_commands(sub)
    return parser


def build_program(args, source: str | None = None, tools: list | None = None) -> DeltaSeek:
    """The agent for these options: tools (unless given), settings, and a compiled program when
    there is one (`source`, else --program)."""
    overrides = {k: v for k, v in {"soft_budget": args.soft_budget, "hard_budget": args.hard_budget,
                                   "max_searches": args.max_searches, "profile": args.profile,
                                   "reader": "rules" if args.reader == RULE_READER else None}.items() if v is not None}
    try:
        settings = AgentSettings(**overrides)
    except ValidationError as exc:
        raise UsageError(f"bad budget option: {exc.errors()[0]['loc'][0]} {exc.errors()[0]['msg']}") from None
    if tools is None:
        tools = build_tools(args.tools or "local", lambda: CorpusIndex.open(args.corpus), use_cache=not args.no_cache)
    own_reader = load_reader(args.reader) if args.reader not in (None, RULE_READER) else None
    program = DeltaSeek(tools=tools, settings=settings, reader=own_reader)
    load_state_into(program, args.program if source is None else source)
    if overrides:  # an option given here wins over the settings saved with the program
        program.settings = program.settings.model_copy(update=overrides)
    return program


def configure_lm_from(args, **kwargs) -> dspy.BaseLM:
    return configure_lm(args.lm, args.api_base, output_format=args.format, profile=args.profile, **kwargs)


KEPT_AS_IS = frozenset("\n\t\u200c\u200d")
"""Printed as they are: line breaks, tabs, and the zero-width joiners some scripts and emoji need."""


def escape_controls(text: str) -> str:
    """Text for the terminal with control and other unprintable characters escaped ("\\x1b",
    "\\u202e"): a question or a passage echoed back must not move the cursor, recolour the
    terminal or reorder what follows. Spaces of any kind stay spaces."""
    return "".join(c if c.isprintable() or c in KEPT_AS_IS or unicodedata.category(c) == "Zs"
                   else c.encode("unicode_escape").decode("ascii") for c in str(text))


def say(text: str) -> None:
    print(escape_controls(text))


def print_trace(record: dict) -> None:
    for step in record["trajectory"]["steps"]:
        thought = "; ".join(step["new_evidence"]) or "(nothing new)"
        say(f"[step {step['step']}] thought: {thought}")
        say(f"  move: {step['move'] or '-'}" + (f"  ({step['note']})" if step["note"] else ""))
        if step["observation"]:
            say("  observation: " + step["observation"].splitlines()[0])
    for call in record["tool_calls"]:
        if call.get("proposed"):
            say(f"  replaced: the model proposed {call['proposed']!r} ({call['replaced_because']}); "
                f"the program ran {call['tool']}(\"{call['args'].get('query', '')}\")")
        if not call["executed"]:
            say(f"  blocked: {call['tool']}(\"{call['args'].get('query', '')}\"): {call['blocked_reason']}")
    print()


def print_answer(record: dict) -> None:
    say(record["answer"])
    origin = {"lm": "the model's answer", "extracted": "read from the passages",
              "evidence": "the best evidence quoted"}.get(record.get("answer_origin"), "")
    say(f"\nanswer: {origin}; answerability: {record['answerability']}  (stopped: {record['stop_reason']}; "
        f"{record['steps']} steps, {sum(c['executed'] for c in record['tool_calls'])} searches, "
        f"{record['lm_calls']} LM calls, {record['seconds']} s)")
    cited = [" ".join(filter(None, (s["title"], s["url"] or f"[{s['id']}]"))) for s in record["sources"]]
    for label, items in (("caveats", record["caveats"]), ("assumptions", record["assumptions"]), ("sources", cited)):
        if items:
            say(f"{label}:")
            for item in items:
                say(f"  - {item}")


def cmd_ask(args) -> int:
    if (args.question is None) == (args.file is None):
        raise UsageError("ask takes a question or --file FILE (one of them)")
    # refused before the model loads or the index is read
    questions = read_questions(args.file) if args.file else [check_question(args.question)]
    configure_lm_from(args)
    program = build_program(args)
    for number, question in enumerate(questions):
        record = run_question(program, question)
        if args.json:
            print(json.dumps(record, ensure_ascii=False), flush=True)
            continue
        if args.file:
            say(("\n" if number else "") + f"Q: {question}")
        if args.trace:
            print_trace(record)
        print_answer(record)
        sys.stdout.flush()
    return 0


def read_questions(path: str) -> list[str]:
    """The non-empty lines of `path` (or standard input for -), each checked as a question; the
    first bad one is a UsageError naming the file and line."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the questions ({type(exc).__name__}: {exc})") from None
    questions = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            questions.append(check_question(line))
        except UsageError as exc:
            raise UsageError(f"{path}:{line_number}: {exc}") from None
    if not questions:
        raise UsageError(f"{path}: no question in it (one question a line)")
    return questions


def cmd_index(args) -> int:
    for path in args.corpus:
        if not Path(path).is_file():
            raise CorpusError(f"corpus file not found: {path}")
    if args.to:
        return load_into_sphinx(args.corpus, args.to)
    index = CorpusIndex.open(args.corpus, rebuild=True, must_save=True)
    print(f"indexed {len(index.passages)} passages in {index.build_seconds:.2f} s ({index.fingerprint})")
    return 0


def load_into_sphinx(corpora: list[str], to: list[str]) -> int:
    """`index --to`: the corpora into real-time shard indexes, in batches, with a progress bar."""
    from tqdm import tqdm

    targets = [parse_target(part) for value in to for part in value.split(",") if part.strip()]
    if repeated := sorted({str(t) for t in targets if targets.count(t) > 1}):
        raise UsageError(f"--to names {', '.join(repeated)} more than once")
    passages = [p for path in corpora for p in read_corpus(path)]
    started = time.perf_counter()
    with tqdm(total=len(passages), desc="loading", unit="passage", file=sys.stderr) as bar:
        report = load_passages(passages, targets, progress=bar.update)
    print(f"loaded {len(passages)} passages into {len(targets)} shard(s) in {time.perf_counter() - started:.2f} s: "
          f"{report.added} added, {report.skipped} already there")
    return 0


def register_optimize_commands(subparsers) -> None:
    evaluate = subparsers.add_parser("evaluate", help="score a program on a labeled dataset")
    evaluate.add_argument("--dataset", required=True, help="labeled questions (.jsonl/.json/.csv/.parquet, a saved "
                                                           "Hugging Face dataset folder, or hf:owner/name)")
    add_agent_options(evaluate)
    evaluate.add_argument("--split", choices=SPLIT_CHOICES, help="which part to run (default: dev; a set too small "
                                                                  "to hold a dev split is run whole)")
    evaluate.add_argument("--limit", type=int, help="only the first N examples of the split")
    evaluate.add_argument("--threads", type=int, default=1, help="examples run in parallel (default: 1)")
    evaluate.add_argument("--out", help="per-example JSONL (default: results/evaluate-DATASET-SPLIT-TIME.jsonl); "
                                        "an existing file is never overwritten: it is refused unless --resume")
    evaluate.add_argument("--resume", action="store_true",
                          help="continue the --out file: run only the examples it holds no finished row for")
    evaluate.add_argument("--compare", nargs=2, metavar=("A", "B"),
                          help="run two programs on the same examples (each a compiled JSON file, a models:/ URI, "
                               f"or {DEFAULT_PROGRAM}: DeltaSeek's own prompts) and print each metric for both, "
                               "B - A and its paired bootstrap 95%% interval; --out OUT.jsonl then names "
                               "OUT-A.jsonl, OUT-B.jsonl and OUT-comparison.md/.json")
    add_tracking_options(evaluate)
    evaluate.add_argument("--debug", action="store_true", default=argparse.SUPPRESS)
    evaluate.set_defaults(handler=cmd_evaluate)

    optimize = subparsers.add_parser("optimize", help="compile DeltaSeek's prompts on a labeled dataset")
    optimize.add_argument("--dataset", required=True, help="labeled questions; compiled on its train split")
    optimize.add_argument("--optimizer", required=True, choices=[*OPTIMIZERS, KEEP_PROMPTS],
                          help=f"the DSPy optimizer that compiles the prompts; {KEEP_PROMPTS}: the prompts are kept "
                               "(with --tune-settings, the settings alone are compiled)")
    optimize.add_argument("--budget", type=int, help="the optimizer's own knob: " + "; ".join(
        f"{o.name}: {o.knob} (default {o.default_budget})" for o in OPTIMIZERS.values()))
    optimize.add_argument("--tune-settings", type=int, metavar="N",
                          help="after the prompt compile, N optuna trials over the program's settings (budgets, "
                               "thresholds: optimize/tune.py SEARCH_SPACE) on the train split; the best is saved "
                               "with the program (trial 0 is the settings as they are)")
    optimize.add_argument("--tune-only", metavar="NAMES",
                          help="tune only these settings, comma-separated (e.g. max_searches,reader_min_confidence); "
                               "a space N trials can cover is tried whole")
    optimize.add_argument("--out", help="where to save the compiled program, a .json state file "
                                        "(default: results/deltaseek-OPTIMIZER-DATASET-TIME.json)")
    add_agent_options(optimize)  # --program here is the program to start from
    optimize.add_argument("--eval-split", default="dev",
                          help="held-out split(s) to compare baseline and compiled on, comma-separated (default: dev)")
    optimize.add_argument("--reflection-lm", help="GEPA's reflection model, a litellm model string (default: the task LM)")
    optimize.add_argument("--threads", type=int, default=1, help="examples run in parallel (default: 1)")
    optimize.add_argument("--results-dir", default=RESULTS_DIR, help="where the per-example JSONL files go (default: results)")
    optimize.add_argument("--resume", action="store_true",
                          help="continue an interrupted optimize with the same --out: evaluations skip the examples "
                               "their results files hold, and a compiled program already saved at --out is reused")
    add_tracking_options(optimize)
    optimize.add_argument("--train-reader", action="store_true",
                          help="train the learned reader on the set's train split (or keep the shipped one, or "
                          "retrain with the shipped data: whichever scores best on its dev split) and save it "
                          "with the compiled program")
    optimize.add_argument("--register", metavar="NAME", help="register the compiled program, logged in the run as an "
                                                             "MLflow model, under this name (models:/NAME/VERSION)")
    optimize.add_argument("--debug", action="store_true", default=argparse.SUPPRESS)
    optimize.set_defaults(handler=cmd_optimize)

    bench = subparsers.add_parser("bench", help="deltaseek against dspy.ReAct and ReActV2 on the same LM, tools and "
                                                 "questions; --speed: speed beside quality on the labeled sets")
    bench.add_argument("--dataset", help="labeled questions (default: the bundled seed set)")
    bench.add_argument("--split", choices=SPLIT_CHOICES, help="which part to run (default: test; a set too small to "
                                                               "hold a test split is run whole)")
    bench.add_argument("--limit", type=int, help="only the first N examples of the split")
    bench.add_argument("--scenario", choices=("model", *SCENARIOS), default="model",
                       help="model: the LM given by --lm (default the embedded one); stubborn: an LM that answers "
                            "every prompt with the same tool call; garbage: an LM whose replies never parse; echo: an "
                            "LM whose replies parse but echo field names, so the program's own moves are measured; oracle: "
                            "a capable LM that gives each question's labeled answer (or says the passages do not "
                            "say), so what the checks keep of right answers is measured")
    bench.add_argument("--budget", type=int, default=8, help="the step budget every program gets (default: 8)")
    bench.add_argument("--json-out", help="write the table as JSON here too (default: results/bench-TIME.json)")
    add_agent_options(bench)
    add_tracking_options(bench)
    bench.add_argument("--speed", action="store_true",
                       help="print the speed figures instead: the model, the index, and speed beside quality on the "
                            "scored part of each labeled set (--sets)")
    benchmark.add_options(bench)
    bench.add_argument("--debug", action="store_true", default=argparse.SUPPRESS)
    bench.set_defaults(handler=cmd_bench)


    calibrate = subparsers.add_parser("calibrate", help="calibrate the reader's abstention threshold on labeled "
                                                         "questions with unanswerable ones")
    calibrate.add_argument("--dataset", required=True, help="labeled questions, some of them `unlikely`")
    calibrate.add_argument("--split", choices=SPLIT_CHOICES, default="train",
                           help="which part to calibrate on: the part read while writing rules (default: train)")
    calibrate.add_argument("--limit", type=int, help="only the first N examples of the split")
    calibrate.add_argument("--scenario", choices=("echo", "model"), default="echo",
                           help="echo (default): the program's own moves with the small profile, in seconds and "
                                "without a model; model: the LM given by --lm")
    calibrate.add_argument("--max-false-abstention", type=float, default=0.25,
                           help="the share of answerable questions the reader may abstain on (default: 0.25)")
    add_agent_options(calibrate)
    add_tracking_options(calibrate)
    calibrate.add_argument("--debug", action="store_true", default=argparse.SUPPRESS)
    calibrate.set_defaults(handler=cmd_calibrate)


def add_tracking_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tracking-uri", help="MLflow tracking server or store (default: $MLFLOW_TRACKING_URI, "
                                               "else sqlite:///mlflow.db in the working folder)")
    parser.add_argument("--experiment", default="deltaseek", help="MLflow experiment name (default: deltaseek)")
    parser.add_argument("--no-traces", action="store_true", help="do not log DSPy traces (mlflow.dspy.autolog)")


def positive(name: str, value: int | None) -> None:
    if value is not None and value < 1:
        raise UsageError(f"{name} must be a positive integer, got {value}")


def timestamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def prepare_agent(args, examples: list[dspy.Example]) -> dspy.BaseLM:
    """Point the tools at the examples' bundled corpora (unless --corpus says otherwise); configure the LM."""
    if not args.corpus:
        args.corpus = corpora_for(examples) or None
    return configure_lm_from(args)


def program_source(args, lm) -> str:
    """Which prompts run: a compiled program file, or "uncompiled" (DeltaSeek's own)."""
    if args.program == UNCOMPILED:
        return "uncompiled"
    source = args.program or default_program_path(lm)
    return str(source) if source else "uncompiled"


def run_params(args, lm, program, source: str) -> dict:
    return {"lm": getattr(lm, "model", type(lm).__name__), "dataset": args.dataset, "program": source,
            "corpus": ",".join(Path(c).name for c in args.corpus or []) or "bundled", "tools": args.tools,
            "threads": args.threads,
            "settings": program.settings.model_dump()}


def split_examples(args, dataset: str, default: str) -> list[dspy.Example]:
    """The examples of `--split` (else `default`), at most `--limit`; `args.split` is set to the
    part run. A set too small to hold the default split (a user's own three rows, split by a hash
    of their ids) is run whole, with a note; an empty split named with --split is an error."""
    labeled = load_dataset(dataset)
    name = args.split or default
    examples = select(labeled.examples, name, args.limit)
    if not examples and args.split is None:
        print(f"deltaseek: note: {dataset}: the {name} split holds none of its {len(labeled.examples)} examples "
              "(too few to split); all of them are run, as with --split all", file=sys.stderr)
        name, examples = "all", select(labeled.examples, "all", args.limit)
    if not examples:
        raise UsageError(f"{dataset}: the {name} split holds none of its {len(labeled.examples)} examples; "
                         "pass --split all to run every example")
    args.split = name
    return examples


def cmd_evaluate(args) -> int:
    positive("--limit", args.limit)
    positive("--threads", args.threads)
    if args.compare:
        return compare_programs(args)
    examples = split_examples(args, args.dataset, "dev")
    lm = prepare_agent(args, examples)
    program = build_program(args)
    out = Path(args.out or Path(RESULTS_DIR) / f"evaluate-{Path(args.dataset).stem}-{args.split}-{timestamp()}.jsonl")

    refuse_overwrite(out, args.resume, name=f"--out {out}")  # before the MLflow run is opened

    with tracked(args, f"evaluate {Path(args.dataset).stem} {args.split}") as tracker:
        tracker.log_params({"command": "evaluate", "split": args.split, "examples": len(examples),
                            "resume": args.resume, **run_params(args, lm, program, program_source(args, lm))})
        log_dataset(tracker, args.dataset, args.split, examples)
        report = evaluate_program(program, examples, out, threads=args.threads, resume=args.resume,
                                  label=f"{Path(args.dataset).stem} {args.split}", tracker=tracker)
        print(format_report(report))
        print(f"per-example results: {report.path}")
        tracker.log_metrics({**report.means, **report.costs, "crashed": report.crashed})
        log_report(tracker, report, args.split)
    return 0


def compare_programs(args) -> int:
    """`evaluate --compare A B`: both programs on the same examples, each an MLflow run tagged with
    the comparison's name; the paired table is printed, saved beside the results and logged in B's run."""
    if args.program:
        raise UsageError("--compare names both programs; leave out --program")
    if args.resume and not args.out:
        raise UsageError("--resume continues the comparison that wrote --out: name its file with --out")
    examples = split_examples(args, args.dataset, "dev")
    lm = prepare_agent(args, examples)
    sources = [UNCOMPILED if name == DEFAULT_PROGRAM else name for name in args.compare]
    first = build_program(args, sources[0])  # both files are checked before anything runs
    programs = [first, build_program(args, sources[1], tools=list(first.tools.values()))]
    dataset = Path(args.dataset).stem
    base = Path(args.out).with_suffix("") if args.out else \
        Path(RESULTS_DIR) / f"compare-{dataset}-{args.split}-{timestamp()}"
    outs = [base.with_name(f"{base.name}-{side}.jsonl") for side in "AB"]
    for out in outs:
        refuse_overwrite(out, args.resume, name=str(out))  # before an MLflow run is opened
    reports = []
    for side, name, source, program, out in zip("AB", args.compare, sources, programs, outs):
        with tracked(args, f"compare {side} {dataset} {args.split}") as tracker:
            tracker.set_tags({"comparison": base.name, "comparison_side": side})
            tracker.log_params({"command": "evaluate --compare", "side": side, "split": args.split,
                                "examples": len(examples), "resume": args.resume,
                                **run_params(args, lm, program, "uncompiled" if source == UNCOMPILED else source)})
            log_dataset(tracker, args.dataset, args.split, examples)
            report = evaluate_program(program, examples, out, threads=args.threads, resume=args.resume,
                                      label=f"{side}: {name}", tracker=tracker)
            reports.append(report)
            print(format_report(report))
            tracker.log_metrics({**report.means, **report.costs, "crashed": report.crashed})
            log_report(tracker, report, args.split)
            if side == "B":
                table = paired_table(reports[0].rows, report.rows)
                text = format_paired(table, *args.compare)
                print(text)
                print(f"per-example results: {outs[0]}, {outs[1]}")
                saved = base.with_name(f"{base.name}-comparison.md")
                saved.write_text(text + "\n", encoding="utf-8")
                write_json_atomically(saved.with_suffix(".json"), {"a": args.compare[0], "b": args.compare[1],
                                                                   "split": args.split, "metrics": table})
                tracker.log_artifact(saved, "comparison")
                tracker.log_artifact(saved.with_suffix(".json"), "comparison")
                tracker.log_metrics({f"{key}_{row['metric']}": row[key] for row in table
                                     for key in ("difference", "low", "high") if row[key] is not None})
    return 0


def dataset_name(dataset: str, split_name: str) -> str:
    """A dataset input's name: the labeled set's file (or its hub name) and the split run."""
    return f"{Path(dataset).name if Path(dataset).exists() else dataset} ({split_name})"


def log_dataset(tracker: Tracker, dataset: str, split_name: str, examples: list[dspy.Example],
                context: str = "evaluation") -> None:
    tracker.log_dataset(labeled_rows(examples), dataset, dataset_name(dataset, split_name), context)


def evaluate_nested(tracker: Tracker, args, program: DeltaSeek, examples: list[dspy.Example], split_name: str,
                    side: str, path: Path) -> EvalReport:
    """One held-out evaluation of an optimize as a child run of it (`side`: baseline or compiled):
    its dataset, its scored traces and its mean scores."""
    with tracker.nested(f"{side} {split_name}"):
        tracker.log_params({"command": "optimize evaluation", "side": side, "split": split_name,
                            "examples": len(examples), "results": str(path)})
        log_dataset(tracker, args.dataset, split_name, examples)
        report = evaluate_program(program, examples, path, threads=args.threads, label=f"{side} {split_name}",
                                  resume=args.resume, tracker=tracker)
        tracker.log_metrics({**report.means, **report.costs, "crashed": report.crashed})
    return report


def log_report(tracker: Tracker, report: EvalReport, name: str) -> None:
    tracker.log_artifact(report.path, "eval")
    tracker.log_table(table_columns(report.rows), f"eval/{name}_table.json")


@contextlib.contextmanager
def tracked(args, run_name: str):
    """An MLflow run for a command. A stopped evaluation (a signal, an unusable LM) first logs
    the rows it finished; a signal marks the run KILLED, and the exception learns the run's id."""
    tracker = Tracker(args.tracking_uri, run_name=run_name, traces=not args.no_traces, experiment=args.experiment)
    try:
        with tracker:
            try:
                yield tracker
            except (KeyboardInterrupt, LMUnusable) as exc:
                report = getattr(exc, "report", None)
                if report is not None:
                    tracker.log_metrics({"examples_finished": len(report.rows), "crashed": report.crashed})
                    log_report(tracker, report, "partial")
                raise
    except KeyboardInterrupt as exc:
        exc.run_id = tracker.ended_run_id
        raise


def eval_splits(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in names if s not in SPLITS]
    if not names or bad:
        raise UsageError(f"--eval-split {text!r}: expected one or more of {', '.join(SPLITS)}, comma-separated")
    return list(dict.fromkeys(names))


def baseline_program(args):
    """The program to start from and its source: --program when given, else DeltaSeek's own prompts
    (never the shipped default, so a compile is reproducible whatever is shipped)."""
    built = build_program(args)
    if args.program and args.program != UNCOMPILED:
        return built, args.program
    return DeltaSeek(tools=list(built.tools.values()), settings=built.settings, reader=built.reader), "uncompiled"


def cmd_optimize(args) -> int:
    positive("--tune-settings", args.tune_settings)
    space = SEARCH_SPACE
    if args.tune_only:
        if not args.tune_settings:
            raise UsageError("--tune-only names the settings --tune-settings N tunes: pass --tune-settings too")
        try:
            space = subspace(args.tune_only.split(","))
        except ValueError as error:
            raise UsageError(f"--tune-only: {error}") from None
    spec = OPTIMIZERS.get(args.optimizer)  # None: --optimizer none, the prompts are kept
    if spec is None and not args.tune_settings and not args.train_reader:
        raise UsageError(f"--optimizer {KEEP_PROMPTS} compiles no prompts: pass --tune-settings N to tune the "
                         "settings alone, or --train-reader to train the reader alone")
    if spec is not None and (missing := spec.missing()):
        raise UsageError(f"--optimizer {spec.name} needs {', '.join(missing)}, which is not installed "
                         f"(pip install {' '.join(missing)})")
    budget = None if spec is None else spec.default_budget if args.budget is None else args.budget
    positive("--budget", budget)
    positive("--threads", args.threads)
    held_out = eval_splits(args.eval_split)
    out = Path(args.out or Path(RESULTS_DIR) / f"deltaseek-{args.optimizer}-{Path(args.dataset).stem}-{timestamp()}.json")
    if out.suffix.lower() != ".json":
        raise UsageError(f"--out {out}: a compiled program is saved as JSON state; use a .json path")
    if args.resume and not args.out:
        raise UsageError("--resume continues the optimize that wrote --out: name that file with --out")
    if out.exists() and not args.resume:
        raise UsageError(f"--out {out} already exists; pass --resume to continue that optimize, or choose another "
                         "--out (a compiled program is never overwritten)")
    labeled = load_dataset(args.dataset)
    parts = split(labeled.examples)
    if not parts["train"]:
        raise UsageError(f"{args.dataset}: the train split holds no examples to compile on")
    empty = [name for name in held_out if not parts[name]]
    if empty:
        raise UsageError(f"{args.dataset}: the {', '.join(empty)} split holds no examples to evaluate on")
    lm = prepare_agent(args, labeled.examples)
    reflection_lm = None
    if args.reflection_lm:
        reflection_lm = make_lm(args.reflection_lm, max_tokens=4000)
    student, source = baseline_program(args)
    # The results files are named after --out, so a --resume finds the ones it continues.
    stem, results = f"optimize-{out.stem}", Path(args.results_dir)
    if not args.resume:
        taken = sorted(str(p) for p in results.glob(f"{stem}-*.jsonl")) if results.is_dir() else []
        if taken:
            raise UsageError(f"{taken[0]} already holds results of an optimize with --out {out}; pass --resume to "
                             "continue it, or choose another --out")

    with tracked(args, f"optimize {args.optimizer} {Path(args.dataset).stem}") as tracker:
        tracker.log_params({"command": "optimize", "optimizer": args.optimizer, "budget": budget,
                            "budget_knob": spec.knob if spec else "none", "train_examples": len(parts["train"]),
                            "tune_settings": args.tune_settings or 0,
                            "eval_splits": ",".join(held_out), "out": str(out),
                            "reflection_lm": getattr(reflection_lm or lm, "model", ""),
                            **run_params(args, lm, student, source)})
        log_dataset(tracker, args.dataset, "train", parts["train"], context="training")
        baselines = {}
        for name in held_out:
            log_dataset(tracker, args.dataset, name, parts[name])
            baselines[name] = evaluate_nested(tracker, args, student, parts[name], name, "baseline",
                                              results / f"{stem}-baseline-{name}.jsonl")
            print(format_report(baselines[name]))
            tracker.log_metrics({f"{name}_baseline_{metric}": v for metric, v in baselines[name].means.items()})
            log_report(tracker, baselines[name], f"{name}_baseline")

        started = time.perf_counter()
        if args.resume and out.is_file():
            compiled = DeltaSeek(tools=list(student.tools.values()), settings=student.settings)
            load_state_into(compiled, out)
            print(f"resumed: the compiled program saved at {out} is reused, not compiled again")
        else:
            compiled = compile_program(args.optimizer, student, parts["train"], budget, args.threads,
                                       reflection_lm) if spec else student.deepcopy()
            if args.train_reader:  # the learned reader decides abstention itself: no rule-reader calibration
                tracker.log_metrics(train_reader_into(compiled, args.dataset, args.corpus))
            elif compiled.settings.reader == "rules" and (chosen := calibration.recalibrate(compiled, parts["train"])):
                print(f"{calibration.describe(chosen)}, calibrated on the train split "
                      f"(abstention on unanswerable {chosen.abstention_on_unanswerable:.0%}, false abstention "
                      f"{chosen.false_abstention:.0%})")
                tracker.log_metrics(calibration.threshold_metrics(chosen))
            # Not calibrated again after tuning: each trial was measured with these thresholds, and
            # recalibrating would run the chosen settings with others (measured worse, README issue 22).
            if args.tune_settings:
                tune_on_train(args, compiled, parts["train"], results / f"{stem}-tune", tracker, space)
            save_program(compiled, out)
            print(f"compiled in {time.perf_counter() - started:.0f} s; saved {out}")
        compile_seconds = time.perf_counter() - started

        metrics: dict[str, float] = {"compile_seconds": compile_seconds}
        for name in held_out:
            after = evaluate_nested(tracker, args, compiled, parts[name], name, "compiled",
                                    results / f"{stem}-compiled-{name}.jsonl")
            before = baselines[name]
            print(format_comparison(f"{name} split", before, after))
            print(f"per-example results: {before.path}, {after.path}")
            for metric, value in before.means.items():
                metrics.update({f"{name}_compiled_{metric}": after.means[metric],
                                f"{name}_lift_{metric}": after.means[metric] - value})
            log_report(tracker, after, f"{name}_compiled")
        tracker.log_metrics(metrics)
        tracker.log_artifact(out, "program")
        log_compiled_model(tracker, compiled, parts[held_out[0]][0].question, args.register)
    return 0


def tune_on_train(args, compiled: DeltaSeek, train: list[dspy.Example], stem: Path, tracker: Tracker,
                  space: dict) -> None:
    """`--tune-settings N`: N optuna trials over `space` (the compiled program's settings, or those
    `--tune-only` names) on the train split; the chosen settings are kept, and saved, with the program."""
    tuning = tune_settings(compiled.with_settings, compiled.settings, train, combined_metric, args.tune_settings,
                           stem.parent, stem=stem.name, threads=args.threads, tracker=tracker, resume=args.resume,
                           space=space)
    compiled.keep_settings(tuning.settings)
    print(format_trials(tuning))
    print(f"settings tuned on the train split ({args.tune_settings} trials, {tuning.metric} "
          f"{tuning.baseline[tuning.metric]:.3f} -> {tuning.best[tuning.metric]:.3f}): "
          + ", ".join(f"{name}={value}" for name, value in tuning.chosen.items()))


def log_compiled_model(tracker: Tracker, compiled: DeltaSeek, question: str, register: str | None) -> None:
    """The compiled program as an MLflow model in the optimize run (registered with --register),
    with `question` as its input example; the URI to load or serve it."""
    if register and not tracker.active:
        warn(f"--register {register}: not registered, the run is untracked (see the warning above)")
    model_uri = tracker.log_program(compiled, question, register=register)
    if model_uri:
        print(f"MLflow model: {model_uri}")


def cmd_bench(args) -> int:
    """One table, one row per program, from one run; the same as JSON and as one MLflow run per program."""
    if args.speed:
        return benchmark.run(args)
    positive("--limit", args.limit)
    positive("--budget", args.budget)
    dataset = args.dataset or str(labeled_set("seed_set"))
    examples = split_examples(args, dataset, "test")
    if not args.corpus:
        args.corpus = corpora_for(examples)
    tools = build_tools(args.tools or "local", lambda: CorpusIndex.open(args.corpus), use_cache=not args.no_cache)
    # DSPy's cache off: a call answered from an earlier run would make its seconds and tokens a lie.
    lm = configure_lm_from(args, cache=False) if args.scenario == "model" else \
        scenario_lm(args.scenario, tools[0].name, examples)
    # the oracle stands for a capable model: DSPy's chat format, as such a model is asked; a model
    # gets the adapter configure_lm chose for it (--format)
    adapter = dspy.ChatAdapter() if args.scenario == "oracle" else \
        dspy.settings.adapter if args.scenario == "model" else None
    from tqdm import tqdm

    with tqdm(total=len(examples), desc=f"bench {args.scenario}", unit="q", file=sys.stderr) as bar:
        rows = compare(examples, tools, lm, budget=args.budget, compiled_path=args.program if args.program not in
                       (None, UNCOMPILED) else None, progress=lambda: bar.update(1), profile=args.profile,
                       adapter=adapter)
    print(format_table(rows))
    table = {row.program: row.summary() for row in rows}
    out = Path(args.json_out or Path(RESULTS_DIR) / f"bench-{args.scenario}-{timestamp()}.json")
    write_json_atomically(out, {"dataset": dataset, "split": args.split, "scenario": args.scenario,
                                "lm": getattr(lm, "model", ""), "budget": args.budget, "programs": table})
    print(f"table as JSON: {out}")
    for program, summary in table.items():
        with Tracker(args.tracking_uri, run_name=f"bench {program}", traces=False,
                     experiment=args.experiment) as tracker:
            tracker.log_params({"command": "bench", "program": program, "dataset": dataset, "split": args.split,
                                "scenario": args.scenario, "lm": getattr(lm, "model", ""), "budget": args.budget})
            log_dataset(tracker, dataset, args.split, examples)
            tracker.log_metrics({k: v for k, v in summary.items() if v is not None})
    return 0


def cmd_calibrate(args) -> int:
    """The reader's abstention threshold for this labeled set: a table of thresholds and the one chosen."""
    positive("--limit", args.limit)
    if not 0 <= args.max_false_abstention <= 1:
        raise UsageError(f"--max-false-abstention must be between 0 and 1, got {args.max_false_abstention}")
    examples = select(load_dataset(args.dataset).examples, args.split, args.limit)
    if not examples:
        raise UsageError(f"{args.dataset}: the {args.split} split holds no examples (try --split all)")
    if not args.corpus:
        args.corpus = corpora_for(examples) or None
    program = build_program(args)
    lm = configure_lm_from(args) if args.scenario == "model" else None  # echo: the program's own moves
    from tqdm import tqdm

    with tqdm(total=len(examples), desc="calibrate", unit="q", file=sys.stderr) as bar:
        outcomes = calibration.collect(program, examples, lm, progress=lambda: bar.update(1))
    chosen, table = calibration.choose(outcomes, args.max_false_abstention)
    print(calibration.format_table(table, chosen))
    print(f"{calibration.describe(chosen)} ({args.dataset}, {args.split} split, {len(examples)} "
          f"questions, {sum(not o.answerable for o in outcomes)} unanswerable; false abstention at most "
          f"{args.max_false_abstention:.0%})")
    with Tracker(args.tracking_uri, run_name="calibrate", traces=False, experiment=args.experiment) as tracker:
        tracker.log_params({"command": "calibrate", "dataset": args.dataset, "split": args.split,
                            "scenario": args.scenario, "max_false_abstention": args.max_false_abstention})
        tracker.log_metrics({**calibration.threshold_metrics(chosen),
                             "abstention_on_unanswerable": chosen.abstention_on_unanswerable,
                             "false_abstention": chosen.false_abstention, "f1_answerable": chosen.f1_answerable})
    return 0


def write_json_atomically(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.tmp")
    staging.write_text(json.dumps(data, indent=2), encoding="utf-8")
    staging.replace(path)


COMMANDS = {"ask": cmd_ask, "index": cmd_index}


def one_line(text: str, limit: int = 400) -> str:
    text = escape_controls(" ".join(str(text).split()))
    return text if len(text) <= limit else text[:limit - 3] + "..."


def stopped_line(exc: KeyboardInterrupt) -> str:
    """The one line an interrupted command prints: the signal, what was kept, the MLflow run."""
    signum = getattr(exc, "signum", 2)
    kept = ""
    if (report := getattr(exc, "report", None)) is not None:
        kept = f"; {len(report.rows)} finished examples kept in {report.path}"
    run_id = getattr(exc, "run_id", None)
    run = f"; MLflow run {run_id} marked KILLED" if run_id else ""
    return f"deltaseek: stopped by {signal.Signals(signum).name}{kept}{run}"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = COMMANDS.get(args.command) or args.handler
    try:
        with stop_on_signals():
            return handler(args)
    except KeyboardInterrupt as exc:  # SIGINT or SIGTERM (see optimize/stopping.py)
        if args.debug:
            raise
        print(stopped_line(exc), file=sys.stderr)
        code = getattr(exc, "exit_code", 130)
        if getattr(exc, "abandoned", False):
            # A second signal abandoned running examples: do not wait for their threads. (Only then:
            # any other thread alive, a test's server among them, is no reason to end the process.)
            sys.stdout.flush(), sys.stderr.flush()
            os._exit(code)
        return code
    except DeltaSeekError as exc:
        if args.debug:
            raise
        print(f"deltaseek: error: {escape_controls(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:
        if args.debug:
            raise
        if is_fatal_lm_error(exc):
            print(f"deltaseek: error: the LM cannot be used: {one_line(f'{type(exc).__name__}: {exc}')}",
                  file=sys.stderr)
            return 3
        print(f"deltaseek: error: {one_line(f'{type(exc).__name__}: {exc}')} (run with --debug for the traceback)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
