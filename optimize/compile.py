"""The optimizers `deltaseek optimize` offers, each with `--budget` mapped onto its own knob.

| optimizer     | DSPy class                          | --budget is                                  |
|---------------|-------------------------------------|----------------------------------------------|
| labeled       | LabeledFewShot                      | k: labeled demos per predictor               |
| bootstrap     | BootstrapFewShot                    | max_bootstrapped_demos                       |
| random-search | BootstrapFewShotWithRandomSearch    | num_candidate_programs                       |
| mipro         | MIPROv2 (auto=None)                 | num_trials (= num_candidates)                |
| gepa          | GEPA                                | max_metric_calls                             |

`deltaseek optimize --optimizer none` (KEEP_PROMPTS) compiles no prompts: with `--tune-settings N`
only the program's settings are tuned (`tune.py`), the ablation beside prompts alone and both.

All optimize `metrics.combined_metric`; GEPA optimizes `metrics.gepa_feedback_metric` (the same
score plus feedback in words) and reflects with the task LM unless given another.

The bootstrapping optimizers keep only demos from complete traces (`max_labeled_demos=0`): a
labeled example holds a question and an answer, not a step's scratchpad or move, and DSPy fills
each field it lacks with "Not supplied for this particular example.", which a small model copies. `labeled` is exactly such demos; it stays for a capable model, which ignores them.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Callable

import dspy

from deltaseek.metrics import combined_metric, gepa_feedback_metric
from deltaseek.optimize.command_options import OPTIMIZER_CHOICES

DEMOS = 2
"""Demos per predictor for the optimizers whose budget counts something else."""
LABELED_DEMOS = 0
"""Raw labeled examples a bootstrapping optimizer may add as demos: none (see above)."""
MIPRO_MINIBATCH = 35


@dataclass(frozen=True)
class Optimizer:
    name: str
    knob: str
    default_budget: int
    compile: Callable[..., dspy.Module]
    """compile(student, trainset, budget, threads, reflection_lm) -> the compiled program"""
    requires: tuple[str, ...] = ()
    """Optional packages it imports only when it runs (checked before any work starts)."""

    def missing(self) -> list[str]:
        return [name for name in self.requires if importlib.util.find_spec(name) is None]


def labeled(student, trainset, budget, threads, reflection_lm):
    return dspy.LabeledFewShot(k=budget).compile(student, trainset=trainset)


def bootstrap(student, trainset, budget, threads, reflection_lm):
    optimizer = dspy.BootstrapFewShot(metric=combined_metric, max_bootstrapped_demos=budget,
                                      max_labeled_demos=LABELED_DEMOS)
    return optimizer.compile(student, trainset=trainset)


def random_search(student, trainset, budget, threads, reflection_lm):
    optimizer = dspy.BootstrapFewShotWithRandomSearch(
        metric=combined_metric, max_bootstrapped_demos=DEMOS, max_labeled_demos=LABELED_DEMOS,
        num_candidate_programs=budget, num_threads=threads)
    return optimizer.compile(student, trainset=trainset)


def mipro(student, trainset, budget, threads, reflection_lm):
    if len(trainset) < 2:
        raise ValueError("MIPROv2 needs at least 2 training examples (it holds some out for validation)")
    optimizer = dspy.MIPROv2(metric=combined_metric, auto=None, num_candidates=budget, max_bootstrapped_demos=DEMOS,
                             max_labeled_demos=LABELED_DEMOS, num_threads=threads, verbose=False)
    # MIPROv2 validates on the last 80% of the trainset when given no valset; a minibatch cannot exceed it.
    valset_size = max(1, int(len(trainset) * 0.8))
    return optimizer.compile(student, trainset=trainset, num_trials=budget,
                             minibatch_size=min(MIPRO_MINIBATCH, valset_size))


def gepa(student, trainset, budget, threads, reflection_lm):
    optimizer = dspy.GEPA(metric=gepa_feedback_metric, max_metric_calls=budget,
                          reflection_lm=reflection_lm or dspy.settings.lm, num_threads=threads)
    return optimizer.compile(student, trainset=trainset)


COMPILERS = {"labeled": labeled, "bootstrap": bootstrap, "random-search": random_search, "mipro": mipro,
             "gepa": gepa}
OPTIMIZERS = {c.name: Optimizer(c.name, c.knob, c.default_budget, COMPILERS[c.name], c.requires)
              for c in OPTIMIZER_CHOICES}


def compile_program(optimizer: str, student: dspy.Module, trainset: list[dspy.Example], budget: int,
                    threads: int = 1, reflection_lm: dspy.BaseLM | None = None) -> dspy.Module:
    return OPTIMIZERS[optimizer].compile(student, trainset, budget, threads, reflection_lm)
