"""What a new process imports: the parser alone imports no DSPy, and answering a question no
MLflow, optuna or scipy. Structural checks in a fresh interpreter (timings are never asserted)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import deltaseek

HEAVY = ("dspy", "mlflow", "optuna", "scipy", "sklearn")


def modules_after(code: str) -> set[str]:
    """The top-level modules loaded in a fresh interpreter after `code` runs."""
    probe = code + "\nimport json, sys; print(json.dumps(sorted({name.split('.')[0] for name in sys.modules})))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_the_parser_is_built_without_dspy_or_the_optimizers():
    loaded = modules_after("import deltaseek.cli\ndeltaseek.cli.build_parser().parse_args(['ask', 'Who?'])")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_help_runs_without_dspy():
    loaded = modules_after("import contextlib, io, deltaseek.cli\n"
                           "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
                           "    deltaseek.cli.main(['optimize', '--help'])")
    assert "dspy" not in loaded and "mlflow" not in loaded


ASK = "import deltaseek.cli\nassert deltaseek.cli.main(['ask', '']) == 2"
"""`ask ""` runs the command's imports, then refuses the empty question before any model loads."""


def test_ask_imports_no_tracking_tuning_or_statistics():
    loaded = modules_after(ASK)
    assert "dspy" in loaded  # the check would pass vacuously if ask had imported nothing
    assert not loaded & {"mlflow", "optuna", "scipy", "sklearn"}, sorted(loaded & {"mlflow", "optuna", "scipy", "sklearn"})


def test_the_program_ask_builds_imports_no_tracking_or_training():
    # BM25 (bm25s, which imports scipy.sparse) is what answering searches and reads with: not checked here
    loaded = modules_after(ASK + "\nfrom deltaseek.optimize.agent_options import AgentOptions, build_program\n"
                           "build_program(AgentOptions(no_cache=True))")
    assert "deltaseek" in loaded and not loaded & {"mlflow", "optuna", "sklearn"}, sorted(loaded & set(HEAVY))


def test_import_deltaseek_is_lazy_and_every_public_name_resolves():
    assert modules_after("import deltaseek") & set(HEAVY) == set()
    assert set(deltaseek.__all__) <= set(dir(deltaseek))
    for name in deltaseek.__all__:
        assert getattr(deltaseek, name) is not None, name
    from deltaseek import DeltaSeek, optimize_program  # noqa: F401 (the import itself is the check)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        deltaseek.nothing_here  # noqa: B018


def test_the_parser_choices_are_the_modules_own():
    from deltaseek.optimize import command_options
    from deltaseek.optimize.compile import OPTIMIZERS
    from deltaseek.optimize.scenario_lms import SCENARIOS
    from deltaseek.programs.lm import OUTPUT_FORMATS

    assert command_options.OUTPUT_FORMATS == OUTPUT_FORMATS
    assert command_options.SCENARIO_NAMES == tuple(SCENARIOS)
    assert [o.name for o in command_options.OPTIMIZER_CHOICES] == list(OPTIMIZERS)
