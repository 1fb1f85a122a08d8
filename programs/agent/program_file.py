"""Compiled DeltaSeek programs: JSON state files, checked before they are loaded, written atomically.

A compiled program is the state of DeltaSeek's five predictors (instructions and demos) as
`dspy.Module.save(path.json)` writes it, with the settings measured on labeled data under
"settings" (the small profile's answer-check thresholds; the budgets and thresholds `deltaseek
optimize --tune-settings` chose) and its learned reader under "reader" when it has its own; never a
pickle. Older files hold the threshold alone under "calibration", and load as they did; a file
whose settings name the rule reader (`"reader": "rules"`) is refused. The tools and other
settings are not part of it: they come from whoever loads it. An MLflow model URI (`models:/NAME/VERSION`,
`runs:/...`) stands for a file: the state of the program logged there (see `logged_model.py`)
is checked and loaded the same way.

    program = DeltaSeek.from_compiled("compiled.json")     # or "models:/deltaseek/1"
    save_program(program, "compiled.json")
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import dspy

from deltaseek.bundled import shipped_program_path
from deltaseek.errors import ProgramFileError
from deltaseek.files import replaced_atomically
from deltaseek.programs.agent.logged_model import is_model_uri, load_logged_module
from deltaseek.programs.lm import is_embedded

SETTINGS_KEY = "settings"
"""Where a saved program keeps its measured settings, beside DSPy's predictor states."""
READER_KEY = "reader"
"""Where a saved program keeps its learned reader (weights and threshold, as data), if it has one."""
LEGACY_SETTINGS_KEY = "calibration"
"""Where older program files keep the reader's threshold: read, never written."""
UNCOMPILED = "none"
"""`--program none`: DeltaSeek's own prompts, even where a compiled program is the default."""


def default_program_path(lm: dspy.BaseLM | None = None) -> Path | None:
    """The shipped compiled program when the LM is the embedded model and the file exists, else None."""
    lm = lm if lm is not None else dspy.settings.lm
    if lm is not None and is_embedded(lm) and shipped_program_path().is_file():
        return shipped_program_path()
    return None


def load_state_into(program: dspy.Module, path: str | os.PathLike | None) -> Path | str | None:
    """Load a compiled program's state into `program`; with no path, the shipped default (if it applies).

    Returns the file (or model URI) that was loaded, or None when the program keeps its own
    prompts (also what `path="none"` asks for).
    """
    if path is not None and str(path) == UNCOMPILED:
        return None
    if path is None:
        path = default_program_path()
    elif not is_model_uri(path):
        path = Path(path)
    if path is None:
        return None
    load_program_file(program, path)
    return path


def read_program_state(path: str | os.PathLike) -> dict:
    """The JSON state in `path`, or ProgramFileError saying why it is not one."""
    path = Path(path)
    if path.suffix.lower() != ".json":
        raise ProgramFileError(f"{path}: a compiled program must be a .json state file (pickles are never loaded)")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProgramFileError(f"{path}: compiled program file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProgramFileError(f"{path}: cannot read the compiled program ({type(exc).__name__}: {exc})") from None
    try:
        state = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProgramFileError(f"{path}: not a compiled program: invalid JSON at line {exc.lineno} ({exc.msg})") from None
    if not isinstance(state, dict):
        raise ProgramFileError(f"{path}: not a compiled program: expected a JSON object, got {type(state).__name__}")
    return state


def check_state_fits(program: dspy.Module, state: dict, path: Path | str) -> None:
    """The saved predictors must be exactly the program's, each with the same number of signature
    fields, text instructions, and demos that are objects of that predictor's own fields."""
    expected = dict(program.named_predictors())
    saved = {k: v for k, v in state.items() if k not in ("metadata", SETTINGS_KEY, LEGACY_SETTINGS_KEY, READER_KEY)}
    if set(saved) != set(expected):
        found = ", ".join(sorted(saved)) or "none"
        raise ProgramFileError(f"{path}: saved from another program: its predictors are {found}; "
                               f"{type(program).__name__} has {', '.join(expected)}")
    for name, predictor in expected.items():
        entry = saved[name]
        fields = entry.get("signature", {}).get("fields") if isinstance(entry, dict) else None
        if not isinstance(fields, list) or not isinstance(entry.get("demos"), list):
            raise ProgramFileError(f"{path}: predictor {name!r} has no signature fields or demos list")
        if len(fields) != len(predictor.signature.fields):
            raise ProgramFileError(f"{path}: predictor {name!r} was saved with {len(fields)} signature fields; "
                                   f"this program's has {len(predictor.signature.fields)} (another program or version)")
        problem = signature_problem(entry["signature"]) or demos_problem(entry["demos"], list(predictor.signature.fields))
        if problem:
            raise ProgramFileError(f"{path}: predictor {name!r}: {problem}")


def signature_problem(signature: dict) -> str | None:
    """Why a saved signature cannot be loaded: instructions must be text, each field a prefix and a description."""
    instructions = signature.get("instructions")
    if not isinstance(instructions, str):
        return f"instructions must be text, got {type(instructions).__name__} {instructions!r:.60}"
    for number, field in enumerate(signature["fields"], start=1):
        if not (isinstance(field, dict) and all(isinstance(field.get(k), str) for k in ("prefix", "description"))):
            return f"signature field {number} must be an object with a text prefix and description, got {field!r:.60}"
    return None


def demos_problem(demos: list, fields: list[str]) -> str | None:
    """Why saved demos cannot be used: each must be an object holding some of the predictor's own
    fields (labeled demos also carry the example's other fields, such as its gold answer)."""
    for number, demo in enumerate(demos, start=1):
        if not isinstance(demo, dict):
            return f"demo {number} must be an object of field values, got {type(demo).__name__} {demo!r:.60}"
        if not any(key in fields for key in demo):
            return (f"demo {number} holds none of this predictor's fields (it has {', '.join(map(repr, demo)) or 'none'}; "
                    f"expected some of {', '.join(fields)})")
    return None


def load_program_file(program: dspy.Module, path: str | os.PathLike) -> None:
    """Check the file, then load it with DSPy's own loader (which also warns on version mismatches);
    an MLflow model URI is loaded by `load_logged_program`."""
    if is_model_uri(path):
        load_logged_program(program, str(path))
        return
    path = Path(path)
    check_state_fits(program, read_program_state(path), path)
    try:
        program.load(path)  # DSPy's own loader
    except ProgramFileError as exc:  # the embedded reader's own check (`reader_from_dict`) says what is wrong
        raise ProgramFileError(f"{path}: {exc}") from None
    except Exception as exc:  # DSPy's loader raises KeyError/TypeError/... on a malformed entry
        raise ProgramFileError(f"{path}: cannot load the compiled program ({type(exc).__name__}: {exc})") from None


def load_logged_program(program: dspy.Module, uri: str) -> None:
    """Load into `program` the state (prompts, calibrated settings) of the program of its class
    inside an MLflow model, checked as a file's is; the model's tools and LM are not taken."""
    logged = load_logged_module(uri)
    found = next((module for _, module in logged.named_sub_modules(type(program))), None)
    if found is None:
        raise ProgramFileError(f"{uri}: the MLflow model holds no {type(program).__name__} program "
                               f"(it holds a {type(logged).__name__})")
    state = found.dump_state()
    check_state_fits(program, state, uri)
    program.load_state(state)


def save_program(program: dspy.Module, path: str | os.PathLike) -> Path:
    """Save the JSON state atomically: a temporary file in the same folder, then os.replace."""
    path = Path(path)
    if path.suffix.lower() != ".json":
        raise ProgramFileError(f"{path}: a compiled program is saved as JSON state; use a .json path")
    with replaced_atomically(path) as staging:
        program.save(staging)  # the JSON state DSPy writes, in full before it takes the path's name
    return path
