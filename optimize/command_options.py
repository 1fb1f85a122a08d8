"""The command line's shared option groups and the choices its options offer, in a module that
imports nothing heavy: `deltaseek --help` builds its parser from these without importing DSPy,
and the modules that run the commands take their constants from here."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

SPLIT_CHOICES = ("dev", "test", "train", "all")
KEEP_PROMPTS = "none"
"""The --optimizer that keeps the prompts as they are (no DSPy optimizer runs)."""
SCENARIO_NAMES = ("stubborn", "garbage", "echo", "oracle")
"""The scripted LMs of `optimize/scenario_lms.py` (SCENARIOS), by name."""
BUNDLED_SETS = ("seed_set", "musique", "squad2", "squad2_articles", "hotpotqa")
"""The labeled sets the package ships (`deltaseek.bundled.labeled_set`), each a name for `--sets`."""
SPEED_SETS = ("seed_set", "musique", "squad2")
"""The sets `bench --speed` times by default."""
OUTPUT_FORMATS = ("auto", "json", "chat")
"""`programs.lm.OUTPUT_FORMATS`, listed here so the parser needs no LM module (a test keeps them equal)."""
RESULTS_DIR = "results"
DEFAULT_PROGRAM = "default"
"""`evaluate --compare default B.json`: DeltaSeek's own prompts (the uncompiled program)."""


@dataclass(frozen=True)
class OptimizerChoice:
    name: str
    knob: str
    default_budget: int
    requires: tuple[str, ...] = ()
    """Optional packages it imports only when it runs (checked before any work starts)."""


OPTIMIZER_CHOICES = (
    OptimizerChoice("labeled", "k (labeled demos per predictor)", 2),
    OptimizerChoice("bootstrap", "max_bootstrapped_demos", 2),
    OptimizerChoice("random-search", "num_candidate_programs", 4),
    OptimizerChoice("mipro", "num_trials = num_candidates", 6, requires=("optuna",)),
    OptimizerChoice("gepa", "max_metric_calls", 150),
)


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


def add_agent_options(parser: argparse.ArgumentParser) -> None:
    """The options `optimize.agent_options.AgentOptions` holds."""
    add_lm_options(parser)
    parser.add_argument("--corpus", action="append", help="JSONL corpus to search (repeatable); default: the bundled corpus")
    parser.add_argument("--tools", default="local", help="comma-separated: local, web, wikipedia, files:PATH, "
                                                         "sphinx:HOST:PORT/INDEX (or sphinx with $DELTASEEK_SPHINX)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the search result cache")
    parser.add_argument("--program", help="a compiled program to load instead of the default: a JSON state file, "
                                           "or an MLflow model URI such as models:/NAME/VERSION (its prompts)")
    parser.add_argument("--reader", help="a learned reader's JSON weights (python -m deltaseek.optimize.train_reader) "
                        "in place of the program's; 'features': the program's reader with its ranker reading "
                        "spans in place of its adapter; default: the program's own, else the shipped "
                        "programs/compiled/reader.json")
    parser.add_argument("--soft-budget", type=int)
    parser.add_argument("--hard-budget", type=int)
    parser.add_argument("--max-searches", type=int)
    parser.add_argument("--direct-confidence", type=float, metavar="P",
                        help="label an answer direct at this confidence or above (default: the reader's fitted bound)")
    parser.add_argument("--abstain-margin", type=float, metavar="M",
                        help="the reader's span is no answer where the passages' not stating it is likelier by more "
                             "than this (default: the reader's fitted margin; 1 answers every span, as a confidence "
                             "fit's runs do)")


def add_tracking_options(parser: argparse.ArgumentParser) -> None:
    """The options `optimize.run_tracking.TrackingOptions` holds."""
    parser.add_argument("--tracking-uri", help="MLflow tracking server or store (default: $MLFLOW_TRACKING_URI, "
                                               "else sqlite:///mlflow.db in the working folder)")
    parser.add_argument("--experiment", default="deltaseek", help="MLflow experiment name (default: deltaseek)")
    parser.add_argument("--no-traces", action="store_true", help="do not log DSPy traces (mlflow.dspy.autolog)")


def add_speed_options(parser: argparse.ArgumentParser) -> None:
    """`bench --speed` and `python -m deltaseek.optimize.benchmark` (see `optimize/benchmark.py`)."""
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000], help="index sizes in passages")
    parser.add_argument("--skip-agents", action="store_true",
                        help="only the model and index figures, not the labeled sets' questions")
    parser.add_argument("--sets", nargs="+", default=list(SPEED_SETS),
                        help=f"labeled sets whose scored parts are timed: bundled names ({', '.join(BUNDLED_SETS)}) "
                             f"or files (default: {' '.join(SPEED_SETS)}; --dataset: that set alone)")
    parser.add_argument("--reader-beside", metavar="READER",
                        help="also run each question with this reader (a --reader value, e.g. features), the two "
                             "in turns, and print what the program's reader adds over it (paired medians)")
    parser.add_argument("--prefix-reuse", action="store_true",
                        help="also the seed questions with prompt-prefix reuse off and on, side by side")
    parser.add_argument("--paths-only", action="store_true",
                        help="only the seed questions by path: in-process, and through the --api-base server if given")
    parser.add_argument("--sphinx", metavar="sphinx:HOST:PORT/INDEX",
                        help="instead: in-process vs this distributed Sphinx/Manticore index, query latency side by side")
    parser.add_argument("--sphinx-shard", action="append", default=[], metavar="sphinx:HOST:PORT/INDEX",
                        help="a real-time shard behind --sphinx (repeatable); the benchmark EMPTIES and fills it")
    parser.add_argument("--sphinx-sizes", type=int, nargs="+", default=[10_000, 100_000],
                        help="passages for the --sphinx comparison (default: 10000 100000)")
