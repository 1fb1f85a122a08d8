"""A program scored on a labeled set, or two programs compared on the same questions: the
pipelines behind `deltaseek evaluate` and `deltaseek evaluate --compare A B`, each run tracked."""

from __future__ import annotations

import json
from pathlib import Path

from deltaseek.errors import UsageError
from deltaseek.files import write_text_atomically
from deltaseek.optimize.agent_options import (AgentOptions, SetupLM, build_program, configure_agent_lm,
                                              program_source)
from deltaseek.optimize.command_options import DEFAULT_PROGRAM, RESULTS_DIR
from deltaseek.optimize.evaluate import evaluate_program
from deltaseek.optimize.evaluation_report import EvalReport, format_report
from deltaseek.optimize.paired import format_paired, paired_table
from deltaseek.optimize.results_file import check_writable, refuse_overwrite
from deltaseek.optimize.run_tracking import (TrackingOptions, log_dataset, log_report, positive, run_params,
                                             split_examples, timestamp, tracked, with_bundled_corpora)
from deltaseek.optimize.tracking import Tracker
from deltaseek.programs.agent.program_file import UNCOMPILED

def evaluate_dataset(dataset: str, agent: AgentOptions = AgentOptions(), tracking: TrackingOptions = TrackingOptions(),
                     split: str | None = None, limit: int | None = None, threads: int = 1,
                     out: str | Path | None = None, resume: bool = False, setup_lm: SetupLM = configure_agent_lm
                     ) -> EvalReport:
    """Score the agent `agent` describes on the `split` (default dev) of `dataset`, in an MLflow
    run; the per-example rows go to `out` (default results/evaluate-DATASET-SPLIT-TIME.jsonl),
    which is never overwritten unless `resume` continues it. `setup_lm(agent)` configures DSPy's
    LM and returns it once the examples are read (default: the LM `agent` names)."""
    positive("--limit", limit)
    positive("--threads", threads)
    split, examples = split_examples(dataset, split, "dev", limit)
    out = Path(out or Path(RESULTS_DIR) / f"evaluate-{Path(dataset).stem}-{split}-{timestamp()}.jsonl")
    refuse_overwrite(out, resume, name=f"--out {out}")  # before the model loads and the MLflow run is opened
    check_writable(out, name=f"--out {out}")
    agent = with_bundled_corpora(agent, examples)
    lm = setup_lm(agent)
    program = build_program(agent)

    with tracked(tracking, f"evaluate {Path(dataset).stem} {split}") as tracker:
        tracker.log_params({"command": "evaluate", "split": split, "examples": len(examples), "resume": resume,
                            **run_params(agent, dataset, threads, lm, program, program_source(agent, lm))})
        log_dataset(tracker, dataset, split, examples)
        report = evaluate_program(program, examples, out, threads=threads, resume=resume,
                                  label=f"{Path(dataset).stem} {split}", tracker=tracker)
        print(format_report(report))
        print(f"per-example results: {report.path}")
        tracker.log_metrics({**report.means, **report.calibration, **report.costs, "crashed": report.crashed})
        log_report(tracker, report, split)
    return report


def compare_programs(dataset: str, a: str, b: str, agent: AgentOptions = AgentOptions(),
                     tracking: TrackingOptions = TrackingOptions(), split: str | None = None,
                     limit: int | None = None, threads: int = 1, out: str | Path | None = None,
                     resume: bool = False, setup_lm: SetupLM = configure_agent_lm) -> list[dict]:
    """Programs `a` and `b` (each a compiled JSON file, a models:/ URI, or "default": DeltaSeek's
    own prompts) on the same examples, each an MLflow run tagged with the comparison's name; the
    paired table (each metric for both, B - A and its bootstrap interval) is printed, saved beside
    the results (OUT-comparison.md/.json) and logged in B's run, and returned."""
    positive("--limit", limit)
    positive("--threads", threads)
    if agent.program:
        raise UsageError("--compare names both programs; leave out --program")
    if resume and not out:
        raise UsageError("--resume continues the comparison that wrote --out: name its file with --out")
    split, examples = split_examples(dataset, split, "dev", limit)
    stem = Path(dataset).stem
    base = Path(out).with_suffix("") if out else Path(RESULTS_DIR) / f"compare-{stem}-{split}-{timestamp()}"
    outs = [base.with_name(f"{base.name}-{side}.jsonl") for side in "AB"]
    for path in outs:
        refuse_overwrite(path, resume, name=str(path))  # before the model loads and an MLflow run is opened
        check_writable(path)
    agent = with_bundled_corpora(agent, examples)
    lm = setup_lm(agent)
    names = (a, b)
    sources = [UNCOMPILED if name == DEFAULT_PROGRAM else name for name in names]
    first = build_program(agent, sources[0])  # both files are checked before anything runs
    programs = [first, build_program(agent, sources[1], tools=list(first.tools.values()))]
    reports, table = [], []
    for side, name, source, program, path in zip("AB", names, sources, programs, outs):
        with tracked(tracking, f"compare {side} {stem} {split}") as tracker:
            tracker.set_tags({"comparison": base.name, "comparison_side": side})
            tracker.log_params({"command": "evaluate --compare", "side": side, "split": split,
                                "examples": len(examples), "resume": resume,
                                **run_params(agent, dataset, threads, lm, program,
                                             "uncompiled" if source == UNCOMPILED else source)})
            log_dataset(tracker, dataset, split, examples)
            report = evaluate_program(program, examples, path, threads=threads, resume=resume,
                                      label=f"{side}: {name}", tracker=tracker)
            reports.append(report)
            print(format_report(report))
            tracker.log_metrics({**report.means, **report.calibration, **report.costs, "crashed": report.crashed})
            log_report(tracker, report, split)
            if side == "B":
                table = paired_table(reports[0].rows, report.rows)
                log_comparison(tracker, table, base, names, split)
                print(f"per-example results: {outs[0]}, {outs[1]}")
    return table


def log_comparison(tracker: Tracker, table: list[dict], base: Path, names: tuple[str, str], split: str) -> None:
    """The paired table printed, saved as BASE-comparison.md and .json, and logged in the run."""
    text = format_paired(table, *names)
    print(text)
    saved = write_text_atomically(base.with_name(f"{base.name}-comparison.md"), text + "\n", mode=0o644)
    data = {"a": names[0], "b": names[1], "split": split, "metrics": table}
    write_text_atomically(saved.with_suffix(".json"), json.dumps(data, indent=2), mode=0o644)
    tracker.log_artifact(saved, "comparison")
    tracker.log_artifact(saved.with_suffix(".json"), "comparison")
    tracker.log_metrics({f"{key}_{row['metric']}": row[key] for row in table
                         for key in ("difference", "low", "high") if row[key] is not None})
