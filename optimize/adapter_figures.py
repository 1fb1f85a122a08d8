"""What a checkpoint of the reader adapter reads on dev questions: the figures its checkpoints and
its bound are chosen on (`train_adapter`); whether a fine-tune's gain is beyond chance is
`paired.beyond_chance` over `held_scores`. Rows are (example, span read, the adapter's doubt); an
example is a `train_adapter.Example`.
"""

from __future__ import annotations

from deltaseek.metrics.answers import f1_score
from deltaseek.programs.agent.learned_reader.adapter_file import choose_bound

MAX_FALSE_ABSTENTION = 0.10
"""The bound on the adapter's doubt is the lowest at which answerable dev questions are abstained
on at most this often: below a run's 20%, since the agent also abstains for reasons of its own
(a subject no passage names), and its searches find less than the dev questions' six passages."""


def figures_at(rows: list[tuple], bound: float) -> dict[str, float]:
    """Dev figures when the reader abstains at `bound`: F1 on the questions whose sentences hold
    the answer and on every answerable one, abstention where the sentences do not hold it, false
    abstention where they do; rows are (example, span read, the adapter's doubt)."""
    held = [ex for ex, _, _ in rows if ex.held]
    f1 = answer_scores(rows, bound)
    abstained = {ex.id for ex, _, p in rows if p >= bound}
    return {"bound": round(bound, 4),
            "f1_held": round(sum(f1.get(ex.id, 0.0) for ex in held) / max(1, len(held)), 4),
            "f1_answerable": round(sum(f1.values()) / max(1, sum(bool(ex.answers) for ex, _, _ in rows)), 4),
            "abstention_not_held": round(sum(ex.id in abstained for ex, _, _ in rows if not ex.held)
                                         / max(1, sum(not ex.held for ex, _, _ in rows)), 4),
            "false_abstention_held": round(sum(ex.id in abstained for ex in held) / max(1, len(held)), 4),
            "questions": len(rows), "held": len(held)}


def answer_scores(rows: list[tuple], bound: float) -> dict[str, float]:
    """The F1 of each answerable question's span the reader reads at `bound` (none where it abstains)."""
    return {ex.id: max(f1_score(span, gold) for gold in ex.answers) for ex, span, p in rows if ex.answers and p < bound}


def held_scores(rows: list[tuple], bound: float) -> list[float]:
    """Each held question's F1 at `bound`, 0 where the reader abstains, in the rows' order."""
    f1 = answer_scores(rows, bound)
    return [f1.get(ex.id, 0.0) for ex, _, _ in rows if ex.held]


def chosen_figures(rows: list[tuple]) -> dict[str, float]:
    """The figures at the bound chosen on these rows: false abstention on the answerable questions
    at most `MAX_FALSE_ABSTENTION`, whether or not their sentences hold the answer (a run counts
    every answerable question it abstains on)."""
    return figures_at(rows, choose_bound([(p, bool(ex.answers)) for ex, _, p in rows], MAX_FALSE_ABSTENTION))
