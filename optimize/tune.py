"""Tune the program's own settings (budgets, thresholds) on labeled examples with optuna.

The settings decide much of what the small embedded model gets to do (how many steps, when a
search is exhausted, when the reader abstains), so they are compiled like the prompts: optuna's
TPE sampler, seeded, proposes settings from `SEARCH_SPACE`; each candidate runs on the train
examples through `evaluate.evaluate_program` (its per-example JSONL appended as each question
ends) and scores the mean of the metric. Trial 0 is the program's settings as they are, so the
chosen settings never score below them on the examples tuned on (a tie keeps them).

    deltaseek optimize --dataset datasets/squad2.jsonl --optimizer none --tune-settings 20

Each trial is a nested MLflow run of the optimize run (its settings as params, its mean scores
as metrics); the chosen settings go on the parent run, and `DeltaSeek.keep_settings` saves them
with the compiled program. Optuna's own INFO lines are turned off: the trials table says it all.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import statistics
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import dspy
import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution

from deltaseek.optimize.evaluate import evaluate_program
from deltaseek.optimize.tracking import Tracker
from deltaseek.programs.agent.settings import SAVED_SETTINGS, TASK_PROFILES, AgentSettings, Strategy
from deltaseek.programs.lm.factory import adapter_for
from deltaseek.signatures import TaskKind

def first_strategy_choices(kind: TaskKind, strategies: tuple[Strategy, ...]) -> CategoricalDistribution:
    """None (the kind's own order) and those of `strategies` that change it: the strategy the kind
    already takes first would only run None's trial again."""
    own_first = TASK_PROFILES[kind][2][0]
    return CategoricalDistribution([None, *(strategy for strategy in strategies if strategy != own_first)])


SEARCH_SPACE: dict[str, BaseDistribution] = {
    # the small profile's answer check needs this support of the sentence holding a model's answer
    "reader_min_confidence": FloatDistribution(0.0, 0.6, step=0.05),
    # steps before synthesis is preferred, and the step at which the answer is forced
    "soft_budget": IntDistribution(2, 6),
    "hard_budget": IntDistribution(3, 10),
    # searches in a row adding nothing new before the search ends
    "exhaustion_window": IntDistribution(2, 5),
    # the task kind's budgets (capped by the two above), or the two above as they are
    "budgets_from_task_kind": CategoricalDistribution([True, False]),
    # weak searches in a row before answerability is judged
    "weak_results_before_judging": IntDistribution(1, 4),
    # a top score below this share of the best so far is a drop in relevance
    "relevance_drop": FloatDistribution(0.3, 0.8, step=0.1),
    # a cap on executed searches (None: the budgets alone): one search and a careful read is often
    # enough for questions a single passage answers, and every search beyond the first costs
    "max_searches": CategoricalDistribution([None, 1, 2, 3]),
    # meaningful tokens a query must add to be new
    "min_new_tokens": IntDistribution(1, 5),
    # the model's moves replaced in a row before the program makes the moves (0: never; None: the
    # profile's default)
    "replaced_moves_before_program_leads": CategoricalDistribution([None, 0, 1, 2, 3]),
    # searches one kind of task gets (None: its budgets alone): a cap that suits questions of one kind
    # leaves the others' searches alone, where `max_searches` caps every question
    "task_search_caps.lookup": CategoricalDistribution([None, 1, 2, 3]),
    "task_search_caps.multi_hop": CategoricalDistribution([None, 1, 2, 3, 4]),
    # the strategy a kind's searches take first (None: the order its profile gives)
    "first_strategies.lookup": first_strategy_choices("lookup", ("direct", "narrower", "entity-focused",
                                                                 "synonyms")),
    "first_strategies.multi_hop": first_strategy_choices("multi_hop", ("entity-focused", "bridge", "direct",
                                                                       "narrower")),
    # facts a prompt shows the LM (None: the profile's counts); fewer is faster, more may inform
    "prompt_facts": CategoricalDistribution([None, 2, 3, 6, 8]),
}
"""The settings searched, one line each: an AgentSettings field a compiled program carries
(SAVED_SETTINGS), or `FIELD.KEY` for one key of a dict setting, and the optuna distribution its
values come from."""


@dataclass
class Tuning:
    """The chosen settings and every trial: its settings, mean scores, objective and results file."""

    chosen: dict[str, Any]
    trials: list[dict]
    metric: str
    settings: dict[str, Any]
    """The chosen values as AgentSettings fields (`settings_update`), what the program keeps."""

    @property
    def baseline(self) -> dict:
        return self.trials[0]

    @property
    def best(self) -> dict:
        return next(t for t in self.trials if t["chosen"])


def results_name(stem: str, params: dict[str, Any]) -> str:
    """A trial's results file, named by its settings: a resumed tuning reuses only the rows of the
    very same settings, and a trial that repeats settings reuses the earlier one's rows."""
    digest = hashlib.sha1(json.dumps(params, sort_keys=True).encode()).hexdigest()[:10]
    return f"{stem}-{digest}.jsonl"


def check_space(space: dict[str, BaseDistribution]) -> None:
    unknown = {name.partition(".")[0] for name in space} - set(SAVED_SETTINGS)
    if unknown:
        raise ValueError(f"cannot tune {', '.join(sorted(unknown))}: a compiled program carries only "
                         f"{', '.join(SAVED_SETTINGS)}")
    not_dicts = sorted(name for name in space if "." in name
                       and not isinstance(getattr(AgentSettings(), name.partition(".")[0]), dict))
    if not_dicts:
        raise ValueError(f"cannot tune {', '.join(not_dicts)}: only a dict setting has keys to tune one by one")


def current_value(settings: AgentSettings, name: str) -> Any:
    """The value `settings` give a searched name: a field, or one key of a dict field (None: unset)."""
    field, _, key = name.partition(".")
    value = getattr(settings, field)
    return value.get(key) if key else value


def settings_update(start: AgentSettings, params: dict[str, Any]) -> dict[str, Any]:
    """A trial's values as AgentSettings fields: `FIELD.KEY` sets one key of the dict `FIELD` and
    keeps `start`'s others; None unsets the key (`task_search_caps.lookup = None`: lookups keep
    their budgets alone)."""
    update: dict[str, Any] = {}
    for name, value in params.items():
        field, _, key = name.partition(".")
        if not key:
            update[field] = value
            continue
        keys = update.setdefault(field, dict(getattr(start, field)))
        if value is None:
            keys.pop(key, None)
        else:
            keys[key] = value
    return update


def subspace(names: list[str], space: dict[str, BaseDistribution] = SEARCH_SPACE) -> dict[str, BaseDistribution]:
    """The part of `space` that tunes only `names` (the rest keep the program's values)."""
    unknown = [name for name in names if name not in space]
    if unknown:
        raise ValueError(f"cannot tune {', '.join(unknown)}: the settings tuned are {', '.join(space)}")
    return {name: space[name] for name in names}


def space_size(space: dict[str, BaseDistribution]) -> int | None:
    """How many settings the space holds, or None when one of its distributions is continuous."""
    size = 1
    for dist in space.values():
        if isinstance(dist, CategoricalDistribution):
            size *= len(dist.choices)
        elif isinstance(dist, (IntDistribution, FloatDistribution)) and dist.step is not None and not dist.log:
            size *= int(round((dist.high - dist.low) / dist.step)) + 1
        else:
            return None
    return size


def suggest(trial: optuna.Trial, name: str, dist: BaseDistribution) -> Any:
    """The trial's value for one setting, drawn from its distribution."""
    if isinstance(dist, CategoricalDistribution):
        return trial.suggest_categorical(name, dist.choices)
    if isinstance(dist, IntDistribution):
        return trial.suggest_int(name, dist.low, dist.high, step=dist.step, log=dist.log)
    return trial.suggest_float(name, dist.low, dist.high, step=dist.step, log=dist.log)


def sampler_for(space: dict[str, BaseDistribution], n_trials: int, seed: int) -> optuna.samplers.BaseSampler:
    """TPE, seeded; but a space the trials can try whole is tried whole (optuna's brute-force
    sampler), so that a few trials over a setting or two are not left to chance."""
    size = space_size(space)
    if size is not None and size <= n_trials:
        with warnings.catch_warnings():  # experimental in optuna 4, and used here as documented
            warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
            return optuna.samplers.BruteForceSampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed)


def tune_settings(make_program: Callable[[AgentSettings], dspy.Module], start: AgentSettings,
                  examples: list[dspy.Example], metric: Callable, n_trials: int, results_dir: str | Path,
                  stem: str = "tune", lm: dspy.BaseLM | None = None, threads: int = 1,
                  tracker: Tracker | None = None, seed: int = 0, resume: bool = False,
                  space: dict[str, BaseDistribution] = SEARCH_SPACE) -> Tuning:
    """Search `space` for the settings whose program scores the highest mean `metric` on `examples`.

    `make_program(settings)` builds the program a trial runs; `start` is trial 0 (the settings as
    they are) and the base every candidate changes. The LM is `lm`, else the one configured now.
    Each trial's rows go to `results_dir/STEM-DIGEST.jsonl` (continued with `resume`); a run that
    is interrupted raises as `evaluate_program` does, after the trials finished were logged.
    """
    check_space(space)
    if n_trials < 1:
        raise ValueError(f"n_trials must be at least 1, got {n_trials}")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=sampler_for(space, n_trials, seed))
    study.enqueue_trial({name: current_value(start, name) for name in space})
    metric_name = getattr(metric, "__name__", "metric")
    trials: list[dict] = []
    seen: dict[str, float] = {}

    def objective(trial: optuna.Trial) -> float:
        params = {name: suggest(trial, name, dist) for name, dist in space.items()}
        settings = AgentSettings.model_validate({**start.model_dump(), **settings_update(start, params)})
        path = Path(results_dir) / results_name(stem, params)
        # each trial a child run of the tracker's, its examples' scored traces in it
        trial_run = tracker.nested(f"trial {trial.number}") if tracker is not None else contextlib.nullcontext()
        # the LM given comes with its own adapter: whatever a caller configured globally before (a
        # served model's JSON object mode, say) is not this LM's, and a trial depends only on its inputs
        with trial_run, dspy.context(**({"lm": lm, "adapter": adapter_for(lm)} if lm is not None else {})):
            report = evaluate_program(make_program(settings), examples, path, threads=threads,
                                      label=f"tune trial {trial.number}", resume=resume or str(path) in seen,
                                      tracker=tracker)
            value = statistics.fmean(metric(examples[row["index"]], row) for row in report.rows)
            if tracker is not None:
                tracker.log_params({**params, "results": str(path)})
                tracker.log_metrics({"objective": value, **report.means, **report.costs})
        seen[str(path)] = value
        trials.append({"trial": trial.number, **params, **report.means, metric_name: value, **report.costs,
                       "results": str(path)})
        return value

    with warnings.catch_warnings():  # trial 0, the settings as they are, may lie outside the space
        warnings.filterwarnings("ignore", message="Fixed parameter")
        # optimize, not ask-and-tell: the brute-force sampler stops the study once it has tried all
        study.optimize(objective, n_trials=n_trials)
    chosen = dict(study.best_trial.params)
    for row in trials:
        row["chosen"] = row["trial"] == study.best_trial.number
    tuning = Tuning(chosen, trials, metric_name, settings_update(start, chosen))
    if tracker is not None:
        tracker.log_params({"tuned": chosen, "tune_trials": n_trials, "tune_seed": seed})
        tracker.log_metrics({f"tune_baseline_{metric_name}": tuning.baseline[metric_name],
                             f"tune_chosen_{metric_name}": tuning.best[metric_name]})
        tracker.log_table({name: [row.get(name) for row in trials] for name in trials[0]}, "tune/trials.json")
    return tuning


def format_trials(tuning: Tuning) -> str:
    """The trials as a markdown table: the settings searched, the objective, LM calls and seconds."""
    names = [name for name in tuning.trials[0] if name.partition(".")[0] in SAVED_SETTINGS]
    columns = ["trial", *names, tuning.metric, "lm_calls_mean", "seconds_median"]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---:|" * len(columns)]
    for row in tuning.trials:
        cells = [f"{row[c]:.3f}" if isinstance(row.get(c), float) else str(row.get(c, "-")) for c in columns]
        cells[0] += " **chosen**" if row["chosen"] else " (as given)" if row["trial"] == 0 else ""
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
