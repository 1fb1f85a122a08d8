"""The settings of the guarded loop, and the budgets and strategy order each kind of task gets."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BaseModel, Field, ValidationError

from deltaseek.programs.agent.learned_reader import AnswerType
from deltaseek.programs.lm.profile import ProfileName
from deltaseek.signatures import TaskKind

Strategy = Literal["direct", "broader", "narrower", "synonyms", "entity-focused", "temporal", "proxies", "bridge"]
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)
"""The angles a new query can take (seed 001's diversification strategies; `bridge`, a multi-hop
question's next hop through the entity the first one found)."""


READER_MIN_CONFIDENCE = 0.15
"""How surely the sentence holding a model's answer must support the question (`question_support`)
for the small profile's check to pass it, as measured on the train part of the bundled SQuAD 2.0
sample."""
READER_MIN_CONFIDENCE_BY_TYPE: dict[AnswerType, float] = {"person": 0.45, "entity": 0.10}
"""Thresholds of their own for the answer types found better checked with one (the same sample): a
person's name is right only from a sentence that says most of what the question does, while a
named thing is often right from one that says less."""

SAVED_SETTINGS = ("reader_min_confidence", "reader_min_confidence_by_type", "soft_budget", "hard_budget",
                  "max_searches", "min_new_tokens", "exhaustion_window", "weak_results_before_judging",
                  "relevance_drop", "max_lm_failures", "budgets_from_task_kind", "replaced_moves_before_program_leads",
                  "task_search_caps", "first_strategies", "prompt_facts", "direct_confidence", "abstain_margin")
"""The settings a compiled program may carry: measured on labeled data with its prompts (calibrated
or tuned). The profile and the LM-helper switches are not among them: they follow the model, which
is whoever runs the program's choice."""

class AgentSettings(BaseModel):
    """Budgets and thresholds of the guarded loop. Where the seeds disagree, the choice is a setting."""

    soft_budget: int = Field(4, ge=1, description="After this many steps the step is told to prefer synthesis.")
    hard_budget: int = Field(8, ge=1, description="At this many steps the tools are removed and the answer is forced.")
    max_searches: int | None = Field(None, ge=1, description="Cap on executed searches; 2 gives the seeds' search-plus-one-refinement mode.")
    min_new_tokens: int = Field(3, ge=1, description="A query differing from an earlier one by fewer meaningful tokens is a near-duplicate.")
    exhaustion_window: int = Field(3, ge=2, description="This many searches in a row adding no new facts end the search.")
    weak_results_before_judging: int = Field(2, ge=1, description="After this many weak searches in a row, judge answerability.")
    relevance_drop: float = Field(0.5, gt=0, lt=1, description="A top score below this share of the best so far is a drop in relevance.")
    max_lm_failures: int = Field(3, ge=1, description="This many unusable LM replies in a row stop the search.")
    reader_min_confidence: float = Field(READER_MIN_CONFIDENCE, ge=0, le=1,
                                         description="The small profile passes a model's answer only where the "
                                         "sentence holding it supports the question at least this much (0-1; the "
                                         "reader's `question_support`). Tuned on labeled data "
                                         "(`optimize --tune-settings`), saved with a compiled program.")
    reader_min_confidence_by_type: dict[AnswerType, Annotated[float, Field(ge=0, le=1)]] = Field(
        default_factory=lambda: dict(READER_MIN_CONFIDENCE_BY_TYPE),
        description="The threshold for the answers to these answer types (person, entity, date, ...), in place of "
        "`reader_min_confidence`, for the types with enough labeled questions to measure.")
    budgets_from_task_kind: bool = Field(True, description="Let the task kind set soft/hard budgets (seed 004).")
    profile: ProfileName | None = Field(None, description="How much the program leans on the model (see "
                                        "`profile.SMALL` and `profile.CAPABLE`): `small` (compact prompts and calls, "
                                        "stricter answer checks, the evidence decides where it can) or `capable` (full "
                                        "prompts); None: the one `configure_lm(profile=...)` recorded on the LM, else "
                                        "small for the embedded model, else capable until a reply fails a check. The "
                                        "settings below marked None override one field of it each.")
    classify_with_lm: bool = Field(False, description="Ask the LM for the task kind when no rule of the heuristic "
                                   "matches: one call beyond the step budget's (steps + 1).")
    diversify_with_lm: bool = Field(False, description="Ask the LM for another angle on a blocked query before the "
                                    "program's own: a call beyond the step budget's (steps + 1) each time.")
    replaced_moves_before_program_leads: int | None = Field(
        None, ge=0, description="After this many of the model's moves in a row were replaced by the checks (a junk "
        "or repeated query, an answer before any fact holds one), the model is not asked for moves again in this "
        "question: the program goes on with its own queries and asks the model only for the answer. 0: never; "
        "None: 1 for the small profile (whose later moves were measured junk), never for the capable.")
    search_caps_from_task_kind: bool | None = Field(
        None, description="Let the task kind cap the executed searches too (`task_search_caps`; by default a "
        "lookup gets one search and one refinement); None: yes for the small profile, whose reader answers from "
        "the facts found and reads better among fewer; a capable model decides itself when it may answer.")
    task_search_caps: dict[TaskKind, Annotated[int, Field(ge=1)]] = Field(
        default_factory=lambda: dict(TASK_SEARCH_CAPS),
        description="The executed searches each kind of task gets at most when the task kind caps them "
        "(`search_caps_from_task_kind`); a kind not named here keeps its budgets alone. Tuned and saved with a "
        "compiled program (`optimize --tune-only task_search_caps.lookup`).")
    first_strategies: dict[TaskKind, Strategy] = Field(
        default_factory=dict, description="The strategy a kind of task's searches take first, ahead of the order "
        "`TASK_PROFILES` gives it (the rest follow in that order). Tuned and saved with a compiled program.")
    prompt_facts: int | None = Field(None, ge=1, description="How many facts a prompt shows the LM (the most "
                                     "relevant to the question with compact prompts, else the last found); None: "
                                     "4 with compact prompts, else 6 to the step and 8 to the synthesis.")
    compact_prompts: bool | None = Field(None, description="Show the LM only the facts most relevant to the question, "
                                         "shorter, tool observations without the passages the scratchpad already "
                                         "holds, and ask only for the outputs the loop uses; None: yes for the small "
                                         "profile, whose speed is its prompt length.")

    direct_confidence: float | None = Field(None, ge=0.0, le=1.0, description="The least confidence an answer "
                                            "is labelled direct at (below it: a best guess, unknown); None: the "
                                            "bound the reader's confidence model was fitted with.")

    abstain_margin: float | None = Field(None, ge=-1.0, le=1.0, description="Where the probability that the "
                                         "passages do not state the answer leads the span's confidence by more "
                                         "than this, the reader's own span is taken as no answer (unlikely, its "
                                         "sentence the closest evidence), and otherwise one the reader doubted is "
                                         "shown as an answer; 1 sets none aside, -1 every one; None: the margin "
                                         "the reader's confidence model was fitted with.")

    def reader_threshold(self, kind: str) -> float:
        """The support a model's answer to this answer type needs to pass the small profile's check."""
        return self.reader_min_confidence_by_type.get(kind, self.reader_min_confidence)


def settings_problem(exc: ValidationError) -> str:
    """A settings error in one line: the setting, the value given, and what is allowed
    ("reader_min_confidence: 7 is not allowed; it must be at least 0 and at most 1")."""
    error = exc.errors()[0]
    name = ".".join(map(str, error["loc"])) or "settings"
    field = AgentSettings.model_fields.get(str(error["loc"][0])) if error["loc"] else None
    bounds = [f"{word} {getattr(rule, attr)}" for rule in (field.metadata if field else [])
              for attr, word in (("ge", "at least"), ("gt", "above"), ("le", "at most"), ("lt", "below"))
              if getattr(rule, attr, None) is not None]
    allowed = f"it must be {' and '.join(bounds)}" if bounds else error["msg"][:1].lower() + error["msg"][1:]
    return f"setting {name}: {error.get('input')!r:.60} is not allowed; {allowed}"


# Budgets and the order of search strategies for each kind of task (seed 004: the kind sets
# the strategy). Lookups refine narrower first (seed 001's Ohio refinement); aggregates scan
# broadly, then look at each side, then at proxies (seed 000's phases). Multi-hop questions
# search what they name, then the bridge entity found there.
TASK_PROFILES: dict[TaskKind, tuple[int, int, tuple[str, ...]]] = {
    "lookup": (3, 6, ("direct", "narrower", "bridge", "entity-focused", "synonyms", "temporal", "broader", "proxies")),
    "multi_hop": (4, 8, ("entity-focused", "bridge", "narrower", "direct", "synonyms", "broader", "temporal", "proxies")),
    "comparison": (4, 8, ("broader", "entity-focused", "proxies", "narrower", "synonyms", "direct", "temporal", "bridge")),
    "aggregate_or_ill_posed": (3, 6, ("broader", "entity-focused", "proxies", "synonyms", "temporal", "narrower", "direct", "bridge")),
    "codebase": (4, 8, ("direct", "synonyms", "narrower", "entity-focused", "broader", "temporal", "proxies", "bridge")),
}

TASK_SEARCH_CAPS: dict[TaskKind, int] = {"lookup": 2}
"""Executed searches a kind of task gets at most (the default of `AgentSettings.task_search_caps`, used
when `search_caps_from_task_kind`; a compile may tune it per kind): a lookup asks for one
fact of one thing, so one search and one refinement (seed 001's Ohio refinement) are enough, and more
searches bring passages about other things for the reader to pass over. Measured when
compiled on SQuAD's train split, two searches scored best of none / 1 / 2 / 3, and held out its
F1 rose 3 points; on MuSiQue, whose questions take two to four hops, the same cap on every kind cost 7
points of EM, so the other kinds keep their budgets alone."""


def run_budgets(settings: AgentSettings, kind: TaskKind) -> tuple[int, int, list[str]]:
    """The soft and hard step budgets and the strategy order a run of this kind of task gets: the
    kind's (`TASK_PROFILES`), which the settings' budgets cap (or replace, when
    `budgets_from_task_kind` is off), with the settings' first strategy for the kind put first."""
    soft, hard, order = TASK_PROFILES[kind]
    if not settings.budgets_from_task_kind:
        soft, hard = settings.soft_budget, settings.hard_budget
    else:  # the settings are ceilings the kind can only tighten
        soft, hard = min(soft, settings.soft_budget), min(hard, settings.hard_budget)
    if first := settings.first_strategies.get(kind):
        order = (first, *(strategy for strategy in order if strategy != first))
    return soft, hard, list(order)
