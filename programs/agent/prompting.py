"""What a prompt shows the model: the facts, the scratchpad, the step's guidance and each tool
result's observation, shaped by the run's profile (a small model gets the brief forms)."""

from __future__ import annotations

from deltaseek.programs.agent import guardrails as guard
from deltaseek.programs.agent.learned_reader import facts_by_relevance
from deltaseek.programs.agent.profile import Profile
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad
from deltaseek.programs.tools.base import SearchTool, ToolResult
from deltaseek.programs.tools.feedback import format_observation
from deltaseek.signatures import guidance as text


def prompt_facts(pad: Scratchpad, profile: Profile, count: int | None = None) -> list[Fact]:
    """The `count` facts a prompt shows (by default the step's): the most relevant to the
    question, or the last found."""
    count = count or profile.step_facts
    if profile.facts_by_relevance:
        return facts_by_relevance(pad.question, pad.facts)[:count]
    return pad.facts[-count:]


def rendered_scratchpad(pad: Scratchpad, profile: Profile) -> str:
    return pad.render(profile.step_fact_chars, facts=prompt_facts(pad, profile, profile.step_facts),
                      brief=profile.brief_prompts)


def step_guidance(pad: Scratchpad, profile: Profile, tools: dict[str, SearchTool]) -> str:
    """What the step about to run reads besides the scratchpad (its record is already on the pad)."""
    if profile.brief_prompts:  # the names alone: the step's tool field already lists them
        listed = ", ".join(tools)
    else:
        listed = "; ".join(text.TOOL_ENTRY.format(name=t.name, description=t.description) for t in tools.values())
    parts = [text.TOOLS_LINE.format(tools=listed), text.budget_guidance(pad.step - 1, pad.soft_budget, pad.hard_budget)]
    if not pad.executed_calls:
        parts.append(text.START.format(strategy=pad.strategy_order[0], plan=" -> ".join(pad.plan)))
    parts += pad.notes[-2:]
    return "\n".join(parts)


def observation(pad: Scratchpad, result: ToolResult, tool_names: list[str], profile: Profile,
                strategy: str | None = None) -> str:
    """What the LM reads about a tool result, with next steps that name only untried moves."""
    alternatives = guard.untried_tools(pad, result.query, tool_names, exclude=result.tool)
    return format_observation(result, pad.tried_queries, alternatives, strategy, brief=profile.brief_prompts)
