"""What the commands that run labeled examples share: the examples of a split, the MLflow run
around them (`tracked`), and what is logged in it (parameters, the dataset, a report)."""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

import dspy

from deltaseek.errors import UsageError
from deltaseek.optimize.agent_options import AgentOptions
from deltaseek.optimize.evaluate import (LMUnusable, corpora_for, evaluate_program, labeled_rows, load_dataset,
                                         select)
from deltaseek.optimize.evaluation_report import EvalReport, table_columns
from deltaseek.optimize.tracking import EXPERIMENT_NAME, Tracker


@dataclass(frozen=True)
class TrackingOptions:
    """Where a command's MLflow runs go (`--tracking-uri`, `--experiment`, `--no-traces`)."""

    tracking_uri: str | None = None
    """None: $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db in the working folder."""
    experiment: str = EXPERIMENT_NAME
    no_traces: bool = False

    def tracker(self, run_name: str, traces: bool | None = None) -> Tracker:
        return Tracker(self.tracking_uri, run_name=run_name, experiment=self.experiment,
                       traces=not self.no_traces if traces is None else traces)


def positive(name: str, value: int | None) -> None:
    if value is not None and value < 1:
        raise UsageError(f"{name} must be a positive integer, got {value}")


def timestamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def split_examples(dataset: str, split: str | None, default: str, limit: int | None = None
                   ) -> tuple[str, list[dspy.Example]]:
    """The split run (`split`, else `default`) and its examples, at most `limit`. A set too small
    to hold the default split (a user's own three rows, split by a hash of their ids) is run
    whole, with a note; an empty split named explicitly is an error."""
    labeled = load_dataset(dataset)
    name = split or default
    examples = select(labeled.examples, name, limit)
    if not examples and split is None:
        print(f"deltaseek: note: {dataset}: the {name} split holds none of its {len(labeled.examples)} examples "
              "(too few to split); all of them are run, as with --split all", file=sys.stderr)
        name, examples = "all", select(labeled.examples, "all", limit)
    if not examples:
        raise UsageError(f"{dataset}: the {name} split holds none of its {len(labeled.examples)} examples; "
                         "pass --split all to run every example")
    return name, examples


def with_bundled_corpora(agent: AgentOptions, examples: list[dspy.Example]) -> AgentOptions:
    """The agent options, searching the examples' bundled corpora unless a corpus is named."""
    return agent if agent.corpus else replace(agent, corpus=corpora_for(examples) or None)


def run_params(agent: AgentOptions, dataset: str, threads: int, lm, program, source: str) -> dict:
    return {"lm": getattr(lm, "model", type(lm).__name__), "dataset": dataset, "program": source,
            "corpus": ",".join(Path(c).name for c in agent.corpus or []) or "bundled", "tools": agent.tools,
            "threads": threads, "settings": program.settings.model_dump()}


def dataset_name(dataset: str, split_name: str) -> str:
    """A dataset input's name: the labeled set's file (or its hub name) and the split run."""
    return f"{Path(dataset).name if Path(dataset).exists() else dataset} ({split_name})"


def log_dataset(tracker: Tracker, dataset: str, split_name: str, examples: list[dspy.Example],
                context: str = "evaluation") -> None:
    tracker.log_dataset(labeled_rows(examples), dataset, dataset_name(dataset, split_name), context)


def log_report(tracker: Tracker, report: EvalReport, name: str) -> None:
    tracker.log_artifact(report.path, "eval")
    tracker.log_table(table_columns(report.rows), f"eval/{name}_table.json")


def evaluate_nested(tracker: Tracker, dataset: str, program, examples: list[dspy.Example], split_name: str,
                    side: str, path: Path, threads: int = 1, resume: bool = False) -> EvalReport:
    """One held-out evaluation of an optimize as a child run of it (`side`: baseline or compiled):
    its dataset, its scored traces and its mean scores."""
    with tracker.nested(f"{side} {split_name}"):
        tracker.log_params({"command": "optimize evaluation", "side": side, "split": split_name,
                            "examples": len(examples), "results": str(path)})
        log_dataset(tracker, dataset, split_name, examples)
        report = evaluate_program(program, examples, path, threads=threads, label=f"{side} {split_name}",
                                  resume=resume, tracker=tracker)
        tracker.log_metrics({**report.means, **report.calibration, **report.costs, "crashed": report.crashed})
    return report


@contextlib.contextmanager
def tracked(tracking: TrackingOptions, run_name: str) -> Iterator[Tracker]:
    """An MLflow run for a command. A stopped evaluation (a signal, an unusable LM) first logs
    the rows it finished; a signal marks the run KILLED, and the exception learns the run's id."""
    tracker = tracking.tracker(run_name)
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
