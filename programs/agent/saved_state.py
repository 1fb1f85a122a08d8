"""What a compiled DeltaSeek program saves beside DSPy's predictor states: the settings measured
on labeled data with its prompts, and its learned reader, if it has one.

`DeltaSeek.dump_state` and `load_state` call these functions around DSPy's own; the file format
itself is `program_file.py`'s.
"""

from __future__ import annotations

from pydantic import ValidationError

from deltaseek.programs.agent.learned_reader.model import reader_from_dict
from deltaseek.programs.agent.program_file import LEGACY_SETTINGS_KEY, READER_KEY, SETTINGS_KEY
from deltaseek.programs.agent.settings import SAVED_SETTINGS, AgentSettings, settings_problem

CALIBRATED_SETTINGS = ("reader_min_confidence", "reader_min_confidence_by_type")
"""Saved with every program: the small profile's answer-check thresholds, measured on labeled data.
A program saves the settings tuned on labeled data too (`keep_settings`); see SAVED_SETTINGS."""
RULE_READER = "rules"
"""What the `reader` setting of a program saved before deltaseek had one reader names for the rule
reader it no longer has (its other value, "learned", is how every program reads now)."""


def saved_state(program, state: dict) -> dict:
    """DSPy's `state` of the program's predictors, with the settings measured on labeled data (the
    reader's threshold, and any `keep_settings` was given) and the program's own reader, so a
    compiled program carries all three."""
    state[SETTINGS_KEY] = {name: getattr(program.settings, name) for name in program.saved_settings}
    if program.reader is not None:
        state[READER_KEY] = program.reader.model_dump(mode="json")
    return state


def split_saved_state(program, state: dict) -> tuple[dict, dict]:
    """`state` as DSPy's own and the settings saved beside it (under "settings", or the reader's
    threshold alone under "calibration" in a file saved before the settings were); the reader
    saved with it is set on `program`. ValueError says what a saved setting can no longer mean."""
    state = dict(state)
    saved = [state.pop(key, None) or {} for key in (LEGACY_SETTINGS_KEY, SETTINGS_KEY)]
    if (reader := state.pop(READER_KEY, None)) is not None:
        program.reader = reader_from_dict(reader, "the program's reader")
    if not all(isinstance(values, dict) for values in saved):
        raise ValueError("the saved settings must be an object of setting names and values")
    values = {**saved[0], **saved[1]}
    if values.pop("reader", None) == RULE_READER:
        raise ValueError("the program was saved to read with the rule reader (settings.reader = \"rules\"), "
                         "which deltaseek no longer has; remove the setting to read with the learned reader")
    if "reader_min_confidence" in values and "reader_min_confidence_by_type" not in values:
        values["reader_min_confidence_by_type"] = {}  # calibrated before types had thresholds: one for all
    return state, values


def keep_settings(program, values: dict) -> None:
    """Run `program` with these settings and save them with it (they were measured on labeled data
    with its prompts). ValueError names a setting a program does not carry or a value out of range."""
    unknown = set(values) - set(SAVED_SETTINGS)
    if unknown:
        raise ValueError(f"setting(s) a compiled program does not carry: {', '.join(sorted(unknown))} "
                         f"(it carries {', '.join(SAVED_SETTINGS)})")
    try:
        program.settings = AgentSettings.model_validate({**program.settings.model_dump(), **values})
    except ValidationError as exc:
        raise ValueError(settings_problem(exc)) from None
    program.saved_settings = tuple(name for name in SAVED_SETTINGS if name in {*program.saved_settings, *values})
