"""`deltaseek optimize` as one function: split a labeled set, score the starting program on the
held-out splits, compile its prompts (and train its reader, tune its settings),
save it, and score the compiled program on the same splits, all in one tracked MLflow run.

    from deltaseek import AgentOptions, optimize_program

    optimized = optimize_program("datasets/seed_set.jsonl", "bootstrap", out="results/compiled.json",
                                 agent=AgentOptions(lm="openai/gpt-4o-mini"))
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import dspy

from deltaseek.errors import UsageError, warn
from deltaseek.files import unwritable_reason
from deltaseek.metrics import combined_metric
from deltaseek.optimize.agent_options import AgentOptions, SetupLM, build_program, configure_agent_lm
from deltaseek.optimize.command_options import KEEP_PROMPTS, RESULTS_DIR
from deltaseek.optimize.compile import OPTIMIZERS, compile_program
from deltaseek.optimize.evaluate import load_dataset
from deltaseek.optimize.evaluation_report import EvalReport, format_comparison, format_report
from deltaseek.optimize.fit_confidence import fit_into
from deltaseek.optimize.labeled_data import SPLITS, split
from deltaseek.optimize.reader_runs import RUN_SCORE, choose_by_runs
from deltaseek.optimize.run_tracking import (TrackingOptions, evaluate_nested, log_dataset, log_report, positive,
                                             run_params, timestamp, tracked, with_bundled_corpora)
from deltaseek.optimize.tracking import Tracker
from deltaseek.optimize.train_reader import train_reader_into
from deltaseek.optimize.tune import SEARCH_SPACE, format_trials, subspace, tune_settings
from deltaseek.programs.agent import DeltaSeek, save_program
from deltaseek.programs.agent.learned_reader import ReaderModel
from deltaseek.programs.agent.logged_model import PICKLED
from deltaseek.programs.agent.program_file import UNCOMPILED, load_state_into
from deltaseek.programs.lm import make_lm


@dataclass
class Optimized:
    """What an optimize made: the compiled program, where it is saved, and the held-out reports
    before and after, by split."""

    program: DeltaSeek
    path: Path
    baselines: dict[str, EvalReport] = field(default_factory=dict)
    compiled: dict[str, EvalReport] = field(default_factory=dict)


def eval_splits(names: str | Sequence[str]) -> list[str]:
    """The held-out splits, from "dev,test" or a list; each must be a split name."""
    text = names if isinstance(names, str) else ",".join(names)
    found = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in found if s not in SPLITS]
    if not found or bad:
        raise UsageError(f"--eval-split {text!r}: expected one or more of {', '.join(SPLITS)}, comma-separated")
    return list(dict.fromkeys(found))


def tuning_space(tune_settings: int | None, tune_only: Sequence[str] | None) -> dict:
    """The settings `--tune-settings` searches: all of SEARCH_SPACE, or those `tune_only` names."""
    if not tune_only:
        return SEARCH_SPACE
    if not tune_settings:
        raise UsageError("--tune-only names the settings --tune-settings N tunes: pass --tune-settings too")
    try:
        return subspace(list(tune_only))
    except ValueError as error:
        raise UsageError(f"--tune-only: {error}") from None


def baseline_program(agent: AgentOptions) -> tuple[DeltaSeek, str]:
    """The program to start from and its source: `agent.program` when given, else DeltaSeek's own
    prompts (never the shipped default, so a compile is reproducible whatever is shipped)."""
    built = build_program(agent)
    if agent.program and agent.program != UNCOMPILED:
        return built, agent.program
    return DeltaSeek(tools=list(built.tools.values()), settings=built.settings, reader=built.reader), "uncompiled"


def optimize_program(dataset: str, optimizer: str, agent: AgentOptions = AgentOptions(),
                     tracking: TrackingOptions = TrackingOptions(), budget: int | None = None,
                     tune_settings: int | None = None, tune_only: Sequence[str] | None = None,
                     out: str | Path | None = None, eval_split: str | Sequence[str] = "dev",
                     reflection_lm: str | None = None, threads: int = 1, results_dir: str | Path = RESULTS_DIR,
                     resume: bool = False, train_reader: bool = False, register: str | None = None,
                     setup_lm: SetupLM = configure_agent_lm) -> Optimized:
    """Compile the program `agent` describes on the train split of `dataset` with `optimizer`
    (one of OPTIMIZERS, or "none" to keep the prompts) and compare it with the program it started
    from on `eval_split`. `out` (default results/deltaseek-OPTIMIZER-DATASET-TIME.json) is never
    overwritten; `resume` continues the optimize that wrote it. `setup_lm(agent)` configures
    DSPy's LM and returns it (default: the LM `agent` names). See `deltaseek optimize --help`."""
    positive("--tune-settings", tune_settings)
    space = tuning_space(tune_settings, tune_only)
    spec = OPTIMIZERS.get(optimizer)  # None: --optimizer none, the prompts are kept
    if spec is None and optimizer != KEEP_PROMPTS:
        raise UsageError(f"--optimizer {optimizer}: expected one of {', '.join([*OPTIMIZERS, KEEP_PROMPTS])}")
    if spec is None and not tune_settings and not train_reader:
        raise UsageError(f"--optimizer {KEEP_PROMPTS} compiles no prompts: pass --tune-settings N to tune the "
                         "settings alone, or --train-reader to train the reader alone")
    if spec is not None and (missing := spec.missing()):
        raise UsageError(f"--optimizer {spec.name} needs {', '.join(missing)}, which is not installed "
                         f"(pip install {' '.join(missing)})")
    budget = None if spec is None else spec.default_budget if budget is None else budget
    positive("--budget", budget)
    positive("--threads", threads)
    held_out = eval_splits(eval_split)
    path = Path(out or Path(RESULTS_DIR) / f"deltaseek-{optimizer}-{Path(dataset).stem}-{timestamp()}.json")
    if path.suffix.lower() != ".json":
        raise UsageError(f"--out {path}: a compiled program is saved as JSON state; use a .json path")
    if resume and not out:
        raise UsageError("--resume continues the optimize that wrote --out: name that file with --out")
    if path.exists() and not resume:
        raise UsageError(f"--out {path} already exists; pass --resume to continue that optimize, or choose another "
                         "--out (a compiled program is never overwritten)")
    if reason := unwritable_reason(path):  # before the model loads and the baseline runs
        raise UsageError(f"--out {path}: {reason}; make it writable or choose another --out")
    if reason := unwritable_reason(Path(results_dir) / "results.jsonl"):
        raise UsageError(f"the results folder {results_dir}: {reason}; the held-out results are kept there")
    labeled = load_dataset(dataset)
    parts = split(labeled.examples)
    if not parts["train"]:
        raise UsageError(f"{dataset}: the train split holds no examples to compile on")
    empty = [name for name in held_out if not parts[name]]
    if empty:
        raise UsageError(f"{dataset}: the {', '.join(empty)} split holds no examples to evaluate on")
    agent = with_bundled_corpora(agent, labeled.examples)
    lm = setup_lm(agent)
    reflection = make_lm(reflection_lm, max_tokens=4000) if reflection_lm else None
    student, source = baseline_program(agent)
    # The results files are named after --out, so a resume finds the ones it continues.
    stem, results = f"optimize-{path.stem}", Path(results_dir)
    if not resume:
        taken = sorted(str(p) for p in results.glob(f"{stem}-*.jsonl")) if results.is_dir() else []
        if taken:
            raise UsageError(f"{taken[0]} already holds results of an optimize with --out {path}; pass --resume to "
                             "continue it, or choose another --out")
    optimized = Optimized(student, path)

    def evaluate(tracker: Tracker, program: DeltaSeek, name: str, side: str) -> EvalReport:
        return evaluate_nested(tracker, dataset, program, parts[name], name, side,
                               results / f"{stem}-{side}-{name}.jsonl", threads=threads, resume=resume)

    with tracked(tracking, f"optimize {optimizer} {Path(dataset).stem}") as tracker:
        tracker.log_params({"command": "optimize", "optimizer": optimizer, "budget": budget,
                            "budget_knob": spec.knob if spec else "none", "train_examples": len(parts["train"]),
                            "tune_settings": tune_settings or 0, "eval_splits": ",".join(held_out), "out": str(path),
                            "reflection_lm": getattr(reflection or lm, "model", ""),
                            **run_params(agent, dataset, threads, lm, student, source)})
        log_dataset(tracker, dataset, "train", parts["train"], context="training")
        for name in held_out:
            log_dataset(tracker, dataset, name, parts[name])
            before = optimized.baselines[name] = evaluate(tracker, student, name, "baseline")
            print(format_report(before))
            tracker.log_metrics({f"{name}_baseline_{metric}": v for metric, v in before.means.items()})
            log_report(tracker, before, f"{name}_baseline")

        started = time.perf_counter()
        if resume and path.is_file():
            compiled = DeltaSeek(tools=list(student.tools.values()), settings=student.settings)
            load_state_into(compiled, path)
            print(f"resumed: the compiled program saved at {path} is reused, not compiled again")
        else:
            compiled = compile_program(optimizer, student, parts["train"], budget, threads,
                                       reflection) if spec else student.deepcopy()
            if train_reader:  # the reader's threshold is chosen with its weights, on the dev split
                start = compiled.learned_reader()
                tracker.log_metrics(train_reader_into(compiled, dataset, agent.corpus))
                reused = optimized.baselines.get("dev") if spec is None else None  # the same program's runs
                if parts["dev"]:
                    keep_reader_by_runs(compiled, start, reused.rows if reused else None,
                                        lambda side: evaluate(tracker, compiled, "dev", side).rows, tracker)
                fine_tune_adapter(compiled, dataset, agent.corpus, path.with_name(f"{path.stem}.reader-adapter.gguf"),
                                  tracker)
            if tune_settings:
                tune_on_train(compiled, parts["train"], tune_settings, results / f"{stem}-tune", tracker, space,
                              threads, resume)
            save_program(compiled, path)
            print(f"compiled in {time.perf_counter() - started:.0f} s; saved {path}")
        optimized.program = compiled

        metrics: dict[str, float] = {"compile_seconds": time.perf_counter() - started}
        if train_reader and "dev" in held_out:  # the confidence follows the reader: refitted on its dev runs
            with every_span_answered(compiled) as answering:
                fit_runs = evaluate(tracker, answering, "dev", "confidence-fit").rows
            metrics.update(fit_into(compiled, fit_runs, f"the dev split of {dataset}"))
            save_program(compiled, path)
        for name in held_out:
            after = optimized.compiled[name] = evaluate(tracker, compiled, name, "compiled")
            before = optimized.baselines[name]
            print(format_comparison(f"{name} split", before, after))
            print(f"per-example results: {before.path}, {after.path}")
            for metric, value in before.means.items():
                metrics.update({f"{name}_compiled_{metric}": after.means[metric],
                                f"{name}_lift_{metric}": after.means[metric] - value})
            log_report(tracker, after, f"{name}_compiled")
        tracker.log_metrics(metrics)
        tracker.log_artifact(path, "program")
        log_compiled_model(tracker, compiled, parts[held_out[0]][0].question, register, path)
    return optimized


@contextmanager
def every_span_answered(program: DeltaSeek):
    """The program with nothing set aside for its confidence (abstain margin 1): every span its reader
    read, doubted or not, is answered, so the confidence is fitted on what each would have scored."""
    settings = program.settings
    program.settings = settings.model_copy(update={"abstain_margin": 1.0})
    try:
        yield program
    finally:
        program.settings = settings


def keep_reader_by_runs(compiled: DeltaSeek, start: ReaderModel, start_rows: list[dict] | None,
                        run_dev: Callable[[str], list[dict]], tracker: Tracker) -> None:
    """`--train-reader`: the reader its dev figures proposed, or one of its rules turned, replaces
    the one the program started with only where the program's own runs of the dev split score
    better beyond chance (`reader_runs.choose_by_runs`); `start_rows` are the start's runs where
    the baseline already made them."""
    proposed, names = compiled.learned_reader(), {}

    def scores_of(rows: list[dict]) -> list[float]:  # in question order, so two runs pair up
        return [row["scores"][RUN_SCORE] for row in sorted(rows, key=lambda row: row["index"])]

    def run(name: str, reader: ReaderModel) -> list[float]:
        compiled.reader = reader
        return scores_of(run_dev(names.setdefault(name, f"reader-run-{len(names)}")))

    start_scores = scores_of(start_rows) if start_rows is not None else run("the starting reader", start)
    kept, reader, means = choose_by_runs(start, start_scores, proposed, run)
    compiled.reader = reader.model_copy(update={"trained_on": {**reader.trained_on, "kept_on_dev_runs": kept}})
    for name, mean in means.items():
        print(f"reader on the program's dev runs, {name}{' (kept)' if name == kept else ''}: {RUN_SCORE} {mean:.3f}")
    tracker.log_metrics({"reader_runs_candidates": float(len(means) - 1),
                         "reader_runs_kept_combined": means[kept],
                         "reader_runs_start_combined": means["the starting reader"]})


def fine_tune_adapter(compiled: DeltaSeek, dataset: str, corpus: list[str] | None, out: Path,
                      tracker: Tracker) -> None:
    """`--train-reader` with the train extra installed: the reader adapter fine-tuned on the train
    split (`fine_tune.fine_tune_into`), kept only if it reads the dev split better; the
    adapter file and its figures are logged to the run. Without the extra it says so and goes on."""
    if importlib.util.find_spec("peft") is None:
        print("reader adapter: not fine-tuned (pip install 'deltaseek[train]' to fine-tune it)")
        return
    from deltaseek.optimize.fine_tune import fine_tune_into

    tracker.log_metrics(fine_tune_into(compiled, dataset, corpus, out))
    if out.is_file() and compiled.learned_reader().adapter == str(out.absolute()):
        tracker.log_artifact(out, "reader_adapter")


def tune_on_train(compiled: DeltaSeek, train: list[dspy.Example], trials: int, stem: Path, tracker: Tracker,
                  space: dict, threads: int = 1, resume: bool = False) -> None:
    """`--tune-settings N`: N optuna trials over `space` (the compiled program's settings, or those
    `--tune-only` names) on the train split; the chosen settings are kept, and saved, with the program."""
    tuning = tune_settings(compiled.with_settings, compiled.settings, train, combined_metric, trials,
                           stem.parent, stem=stem.name, threads=threads, tracker=tracker, resume=resume, space=space)
    compiled.keep_settings(tuning.settings)
    print(format_trials(tuning))
    print(f"settings tuned on the train split ({trials} trials, {tuning.metric} "
          f"{tuning.baseline[tuning.metric]:.3f} -> {tuning.best[tuning.metric]:.3f}): "
          + ", ".join(f"{name}={value}" for name, value in tuning.chosen.items()))


def log_compiled_model(tracker: Tracker, compiled: DeltaSeek, question: str, register: str | None,
                       path: Path) -> None:
    """The compiled program as an MLflow model in the optimize run (registered with --register),
    with `question` as its input example; the URI to load or serve it, and what it pickles
    (`path`: the program's own JSON file)."""
    if register and not tracker.active:
        warn(f"--register {register}: not registered, the run is untracked (see the warning above)")
    model_uri = tracker.log_program(compiled, question, register=register)
    if model_uri:
        print(f"MLflow model: {model_uri}")
        print(f"deltaseek: note: {PICKLED}; the compiled program itself is JSON: {path}", file=sys.stderr)
