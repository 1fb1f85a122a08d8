"""All prompt text deltaseek sends to a model lives here: DSPy signatures an optimizer can
rewrite, the templates the loop fills into them, and the value sets they choose from."""

from deltaseek.signatures.agent import (
    ClassifyTask,
    DiversifyQuery,
    JudgeAnswerability,
    StepDelta,
    StepMove,
    Synthesize,
    SynthesizeAnswer,
    compact_signature,
    step_delta_for_tools,
)
from deltaseek.signatures.values import (
    ANSWERABILITY,
    STOP_REASONS,
    TASK_KINDS,
    Answerability,
    AnswerabilityStatus,
    StopReason,
    TaskKind,
)

__all__ = [
    "ANSWERABILITY",
    "STOP_REASONS",
    "TASK_KINDS",
    "Answerability",
    "AnswerabilityStatus",
    "ClassifyTask",
    "DiversifyQuery",
    "JudgeAnswerability",
    "StepDelta",
    "StepMove",
    "StopReason",
    "Synthesize",
    "SynthesizeAnswer",
    "TaskKind",
    "compact_signature",
    "step_delta_for_tools",
]
