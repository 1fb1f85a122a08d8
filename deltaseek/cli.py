"""The `deltaseek` command: ask, index, evaluate, optimize, bench. It parses the
command line and calls what a Python user calls too (`deltaseek.optimize_program`,
`evaluate_dataset`, `compare_programs`, `bench_programs`); it and its parser are the only
modules that import `optimize`, and the library below them never depends on the command line.

The parser (`cli_parser.build_parser`) is built from `optimize/command_options.py` alone, and
each command imports what it runs when it runs: deferred for start-up time, not to dodge a circle
(`deltaseek --help` starts without DSPy, and `deltaseek ask` without MLflow, optuna or scipy)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import sys
from pathlib import Path

from deltaseek.cli_parser import build_parser
from deltaseek.errors import DeltaSeekError, UsageError
from deltaseek.optimize.stopping import stop_on_signals
from deltaseek.terminal import escape_controls, one_line, print_answer, print_trace, say


def options(cls, args: argparse.Namespace):
    """The options dataclass `cls` filled from the parsed options of its fields' names."""
    return cls(**{field.name: getattr(args, field.name) for field in dataclasses.fields(cls)})


def agent_options(args: argparse.Namespace):
    from deltaseek.optimize.agent_options import AgentOptions

    return options(AgentOptions, args)


def configure_lm_from(args: argparse.Namespace, **kwargs):
    """The one place a command makes its LM: the one its options name, configured for DSPy."""
    from deltaseek.optimize.agent_options import configure_agent_lm

    return configure_agent_lm(agent_options(args), **kwargs)


def run_options(args: argparse.Namespace) -> dict:
    """What every pipeline takes from the parsed options: the agent, the tracking, the LM setup."""
    from deltaseek.optimize.run_tracking import TrackingOptions

    # setup_lm ignores the pipeline's agent options: they differ from these only in the corpus
    return {"agent": agent_options(args), "tracking": options(TrackingOptions, args),
            "setup_lm": lambda _agent, **kwargs: configure_lm_from(args, **kwargs)}


def build_program(args: argparse.Namespace, source: str | None = None, tools: list | None = None):
    """The agent the parsed options describe (`optimize.agent_options.build_program`)."""
    from deltaseek.optimize.agent_options import build_program as build

    return build(agent_options(args), source, tools)


def cmd_ask(args) -> int:
    from deltaseek.optimize.agent_options import build_program
    from deltaseek.programs.agent import run_question
    from deltaseek.programs.agent.deltaseek import check_question

    if (args.question is None) == (args.file is None):
        raise UsageError("ask takes a question or --file FILE (one of them)")
    # refused before the model loads or the index is read
    questions = read_questions(args.file) if args.file else [check_question(args.question)]
    configure_lm_from(args)
    program = build_program(agent_options(args))
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
    from deltaseek.programs.agent.deltaseek import check_question

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
    from deltaseek.optimize.indexing import index_corpora

    index_corpora(args.corpus, args.to)
    return 0


def cmd_evaluate(args) -> int:
    from deltaseek.optimize.evaluate_runs import compare_programs, evaluate_dataset

    common = dict(split=args.split, limit=args.limit, threads=args.threads, out=args.out, resume=args.resume,
                  **run_options(args))
    if args.compare:
        compare_programs(args.dataset, *args.compare, **common)
    else:
        evaluate_dataset(args.dataset, **common)
    return 0


def cmd_optimize(args) -> int:
    from deltaseek.optimize.pipeline import optimize_program

    optimize_program(args.dataset, args.optimizer, budget=args.budget, tune_settings=args.tune_settings,
                     tune_only=args.tune_only.split(",") if args.tune_only else None, out=args.out,
                     eval_split=args.eval_split, reflection_lm=args.reflection_lm, threads=args.threads,
                     results_dir=args.results_dir, resume=args.resume, train_reader=args.train_reader,
                     register=args.register, **run_options(args))
    return 0


def cmd_bench(args) -> int:
    """One table, one row per program, from one run; the same as JSON and as one MLflow run per program."""
    if args.speed:
        from deltaseek.optimize import benchmark

        if ignored := speed_ignores(args):
            raise UsageError(f"bench --speed does not take {ignored}: it times each set on its own corpus with the "
                             "local tool, on the embedded model (--lm times only the server paths)")
        return benchmark.run(args, agent_options(args))
    from deltaseek.optimize.bench_runs import bench_programs

    bench_programs(args.dataset, split=args.split, limit=args.limit, scenario=args.scenario, budget=args.budget,
                   json_out=args.json_out, **run_options(args))
    return 0


def speed_ignores(args) -> str:
    """The options given that `bench --speed` has no use for, as the user wrote them."""
    given = [("--corpus", args.corpus), ("--tools", args.tools != "local"), ("--scenario", args.scenario != "model"),
             ("--json-out", args.json_out)]
    return ", ".join(name for name, value in given if value)


COMMANDS = {"ask": cmd_ask, "index": cmd_index, "evaluate": cmd_evaluate, "optimize": cmd_optimize,
            "bench": cmd_bench}


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
    handler = COMMANDS[args.command]
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
        from deltaseek.programs.lm import is_fatal_lm_error

        if is_fatal_lm_error(exc):
            print(f"deltaseek: error: the LM cannot be used: {one_line(f'{type(exc).__name__}: {exc}')}",
                  file=sys.stderr)
            return 3
        print(f"deltaseek: error: {one_line(f'{type(exc).__name__}: {exc}')} (run with --debug for the traceback)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
