"""deltaseek: a DSPy search agent that never gets stuck.

    import dspy
    from deltaseek import DeltaSeek, configure_lm

    configure_lm()                      # the embedded SmolLM2; or configure_lm("openai/gpt-4o-mini")
    program = DeltaSeek()               # tools: the bundled corpus; or tools=build_tools("web,wikipedia")
                                        # shipped_program(): the compiled one, when this version ships it
    print(program(question="Who designed the Ruby language?").answer)

The names below are imported when first used (PEP 562), so `import deltaseek` and the
`deltaseek` command start without DSPy, MLflow or the optimizers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_PUBLIC = {
    "deltaseek.bundled": ("SEED_QUESTIONS", "bundled_corpora", "corpus_path", "labeled_set"),
    "deltaseek.errors": ("CorpusError", "DatasetError", "DeltaSeekError", "LMConfigError", "ProgramFileError",
                         "ToolConfigError", "UsageError"),
    "deltaseek.metrics": ("answerability_accuracy", "combined_metric", "exact_match", "gepa_feedback_metric",
                          "token_f1"),
    "deltaseek.optimize.agent_options": ("AgentOptions", "build_program"),
    "deltaseek.optimize.bench_runs": ("bench_programs",),
    "deltaseek.optimize.compile": ("OPTIMIZERS", "compile_program"),
    "deltaseek.optimize.evaluate": ("evaluate_program",),
    "deltaseek.optimize.evaluate_runs": ("compare_programs", "evaluate_dataset"),
    "deltaseek.optimize.indexing": ("index_corpora",),
    "deltaseek.optimize.labeled_data": ("load_labeled", "split"),
    "deltaseek.optimize.pipeline": ("Optimized", "optimize_program"),
    "deltaseek.optimize.run_tracking": ("TrackingOptions",),
    "deltaseek.programs.agent": ("AgentSettings", "DeltaSeek", "Scratchpad", "log_program", "run_question",
                                 "save_program", "shipped_program"),
    "deltaseek.programs.index": ("CorpusIndex",),
    "deltaseek.programs.lm": ("configure_lm", "make_lm"),
    "deltaseek.programs.tools": ("SearchTool", "ToolResult", "ToolStatus", "build_tools"),
}
_MODULE_OF = {name: module for module, names in _PUBLIC.items() for name in names}

__all__ = sorted(_MODULE_OF, key=lambda name: (not name.isupper(), not name[0].isupper(), name))


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'deltaseek' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once imported, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # what type checkers and IDEs read; at run time the names come from __getattr__
    from deltaseek.bundled import SEED_QUESTIONS, bundled_corpora, corpus_path, labeled_set
    from deltaseek.errors import (CorpusError, DatasetError, DeltaSeekError, LMConfigError, ProgramFileError,
                                  ToolConfigError, UsageError)
    from deltaseek.metrics import (answerability_accuracy, combined_metric, exact_match, gepa_feedback_metric,
                                   token_f1)
    from deltaseek.optimize.agent_options import AgentOptions, build_program
    from deltaseek.optimize.bench_runs import bench_programs
    from deltaseek.optimize.compile import OPTIMIZERS, compile_program
    from deltaseek.optimize.evaluate import evaluate_program
    from deltaseek.optimize.evaluate_runs import compare_programs, evaluate_dataset
    from deltaseek.optimize.indexing import index_corpora
    from deltaseek.optimize.labeled_data import load_labeled, split
    from deltaseek.optimize.pipeline import Optimized, optimize_program
    from deltaseek.optimize.run_tracking import TrackingOptions
    from deltaseek.programs.agent import (AgentSettings, DeltaSeek, Scratchpad, log_program, run_question,
                                          save_program, shipped_program)
    from deltaseek.programs.index import CorpusIndex
    from deltaseek.programs.lm import configure_lm, make_lm
    from deltaseek.programs.tools import SearchTool, ToolResult, ToolStatus, build_tools
