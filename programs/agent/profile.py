"""What differs between a small model and a capable one, as one object with named fields.

The program reads these fields and never a profile's name: `SMALL` and `CAPABLE` are the two
named instances, and `profile_for` applies the AgentSettings that override a field or two.
Which one a run starts with is `choose_profile`'s decision, from the run's inputs alone (the
settings, the profile the LM was configured with, the model); a run that started capable by
default is switched to small from the first of its own replies that fails a check
(`DeltaSeek.saw_junk`), and the next run starts afresh.
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from deltaseek.programs.agent.settings import AgentSettings
from deltaseek.programs.lm import is_embedded
from deltaseek.programs.lm.profile import ProfileName, recorded_profile


class Profile(BaseModel):
    """How much the program leans on the model, field by field."""

    model_config = ConfigDict(frozen=True)

    name: ProfileName
    facts_by_relevance: bool
    """A prompt shows the facts most relevant to the question (else the last found)."""
    step_facts: int
    synthesis_facts: int
    """How many facts the step's and the synthesis's prompts show."""
    step_fact_chars: int
    synthesis_fact_chars: int
    """How much of each fact they show."""
    brief_prompts: bool
    """Prompts without the lines a small model cannot use: the tools by name alone, observations
    without the passages the scratchpad holds, and only the outputs the loop uses asked for."""
    evidence_decides: bool
    """A typed answer in the facts ends the search without another step call, and where the
    evidence decides the answer (nothing found, or a direct reading) no synthesis is asked for:
    at the embedded model's size code reads better than the model."""
    strict_answer_checks: bool
    """The model's answer must also be of the type asked for and supported by a fact read (see
    `checks.answer_failure`)."""
    replaced_moves_before_program_leads: int
    """After this many of the model's moves in a row were replaced, the program makes the moves; 0: never."""
    search_caps_from_task_kind: bool
    """The task kind caps the executed searches (`AgentSettings.task_search_caps`)."""
    refinements_before_answer: int | None
    """An answer proposed before any fact holds one of the kind asked for is replaced by a refined
    search while this many searches or fewer have run; None: while any strategy is left."""


SMALL = Profile(name="small", facts_by_relevance=True, step_facts=4, synthesis_facts=4, step_fact_chars=120,
                synthesis_fact_chars=240, brief_prompts=True, evidence_decides=True, strict_answer_checks=True,
                replaced_moves_before_program_leads=1, search_caps_from_task_kind=True, refinements_before_answer=None)
"""The embedded 135M model's: its seconds are its prompt tokens, its later moves were measured junk
(four in five replaced on unseen questions), and the reader answers from the facts found."""
CAPABLE = Profile(name="capable", facts_by_relevance=False, step_facts=6, synthesis_facts=8, step_fact_chars=160,
                  synthesis_fact_chars=400, brief_prompts=False, evidence_decides=False, strict_answer_checks=False,
                  replaced_moves_before_program_leads=0, search_caps_from_task_kind=False, refinements_before_answer=1)
"""A model whose answers are used as written unless a check names what is wrong with them; its early
answer is turned into one refined search at most (the first search, then one refinement)."""
PROFILES: dict[str, Profile] = {"small": SMALL, "capable": CAPABLE}

PROMPT_SHAPE = ("facts_by_relevance", "step_facts", "synthesis_facts", "step_fact_chars", "synthesis_fact_chars",
                "brief_prompts", "evidence_decides")
"""The fields `AgentSettings.compact_prompts` sets: all of the small profile's (True) or the capable's (False)."""
OVERRIDES = ("replaced_moves_before_program_leads", "search_caps_from_task_kind")
"""AgentSettings that replace the profile's field of the same name when they are not None."""


def profile_for(name: ProfileName, settings: AgentSettings) -> Profile:
    """The named profile with the settings that override its fields applied."""
    update = {}
    if settings.compact_prompts is not None:
        shape = SMALL if settings.compact_prompts else CAPABLE
        update.update({field: getattr(shape, field) for field in PROMPT_SHAPE})
    if settings.prompt_facts:
        update.update(step_facts=settings.prompt_facts, synthesis_facts=settings.prompt_facts)
    update.update({field: value for field in OVERRIDES if (value := getattr(settings, field)) is not None})
    return PROFILES[name].model_copy(update=update)


class ProfileChoice(NamedTuple):
    name: ProfileName
    because: str
    """Who chose it, said for the trajectory."""
    follows_replies: bool
    """Nobody chose it: the run goes on as the small profile from the first reply that fails a check."""


def choose_profile(settings: AgentSettings, lm) -> ProfileChoice:
    """The profile a run starts with, from its inputs alone: the settings', else the one the LM was
    configured with (`configure_lm(profile=...)`), else small for the embedded model and GGUF files,
    else capable until one of this run's replies fails a check."""
    if settings.profile is not None:
        return ProfileChoice(settings.profile, "set in the settings", False)
    if lm is not None and (recorded := recorded_profile(lm)) is not None:
        return ProfileChoice(recorded.name, "set when the LM was configured", False)
    if lm is not None and is_embedded(lm):
        return ProfileChoice(SMALL.name, "the embedded model", False)
    return ProfileChoice(CAPABLE.name, "capable until a reply of this run fails a check", True)
