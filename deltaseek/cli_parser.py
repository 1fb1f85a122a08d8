"""The `deltaseek` command line's parser: its commands (ask, index, evaluate, optimize, bench) and
their options. Built from `optimize/command_options.py` alone, so `deltaseek --help` starts
without DSPy; `cli.py` runs what it parses.
"""

from __future__ import annotations

import argparse

from deltaseek.optimize.command_options import (DEFAULT_PROGRAM, KEEP_PROMPTS, OPTIMIZER_CHOICES, RESULTS_DIR,
                                                SCENARIO_NAMES, SPLIT_CHOICES, add_agent_options, add_speed_options,
                                                add_tracking_options)


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

    index = sub.add_parser("index", help="build the BM25 index of a corpus now, or load it into Sphinx/Manticore shards")
    index.add_argument("corpus", nargs="+")
    index.add_argument("--to", action="append", metavar="sphinx:HOST:PORT/INDEX",
                       help="load into this real-time index instead (repeatable or comma-separated: the passages "
                            "are spread over the shards by a hash of their id; re-running skips what is there)")

    register_optimize_commands(sub)
    for command in sub.choices.values():  # also after the command: deltaseek ask --debug ...
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS)
    return parser


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

    optimize = subparsers.add_parser("optimize", help="compile DeltaSeek's prompts on a labeled dataset")
    optimize.add_argument("--dataset", required=True, help="labeled questions; compiled on its train split")
    optimize.add_argument("--optimizer", required=True, choices=[*(o.name for o in OPTIMIZER_CHOICES), KEEP_PROMPTS],
                          help=f"the DSPy optimizer that compiles the prompts; {KEEP_PROMPTS}: the prompts are kept "
                               "(with --tune-settings, the settings alone are compiled)")
    optimize.add_argument("--budget", type=int, help="the optimizer's own knob: " + "; ".join(
        f"{o.name}: {o.knob} (default {o.default_budget})" for o in OPTIMIZER_CHOICES))
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
                          "retrain with the shipped data: whichever scores best on its dev split), choose its "
                          "threshold and rules on the program's own runs of the dev split, and save it with the "
                          "compiled program")
    optimize.add_argument("--register", metavar="NAME", help="register the compiled program, logged in the run as an "
                                                             "MLflow model, under this name (models:/NAME/VERSION)")

    bench = subparsers.add_parser("bench", help="deltaseek against dspy.ReAct and ReActV2 on the same LM, tools and "
                                                 "questions; --speed: speed beside quality on the labeled sets")
    bench.add_argument("--dataset", help="labeled questions (default: the bundled seed set)")
    bench.add_argument("--split", choices=SPLIT_CHOICES, help="which part to run (default: test; a set too small to "
                                                               "hold a test split is run whole)")
    bench.add_argument("--limit", type=int, help="only the first N examples of the split")
    bench.add_argument("--scenario", choices=("model", *SCENARIO_NAMES), default="model",
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
    add_speed_options(bench)
