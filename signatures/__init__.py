"""All prompt text deltaseek sends to a model lives here, in DSPy signatures an optimizer can rewrite."""

from signatures.agent import (
    ANSWERABILITY,
    TASK_KINDS,
    ClassifyTask,
    DiversifyQuery,
    JudgeAnswerability,
    StepDelta,
    Synthesize,
    step_delta_for_tools,
)

__all__ = [
    "ANSWERABILITY",
    "TASK_KINDS",
    "ClassifyTask",
    "DiversifyQuery",
    "JudgeAnswerability",
    "StepDelta",
    "Synthesize",
    "step_delta_for_tools",
]
