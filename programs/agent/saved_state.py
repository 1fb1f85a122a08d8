"""What a compiled DeltaSeek program saves beside DSPy's predictor states: the settings measured
on labeled data with its prompts, and its learned reader, if it has one.

`SavedState` is a part of `DeltaSeek`; the file format itself is `program_file.py`'s.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from deltaseek.programs.agent.learned_reader.model import reader_from_dict
from deltaseek.programs.agent.program_file import LEGACY_SETTINGS_KEY, READER_KEY, SETTINGS_KEY, load_program_file
from deltaseek.programs.agent.settings import SAVED_SETTINGS, AgentSettings, settings_problem
from deltaseek.programs.tools.base import SearchTool

CALIBRATED_SETTINGS = ("reader_min_confidence", "reader_min_confidence_by_type")
"""Saved with every program: the small profile's answer-check thresholds, measured on labeled data.
A program saves the settings tuned on labeled data too (`keep_settings`); see SAVED_SETTINGS."""
RULE_READER = "rules"
"""What the `reader` setting of a program saved before deltaseek had one reader names for the rule
reader it no longer has (its other value, "learned", is how every program reads now)."""


class SavedState:
    """Loading and saving a DeltaSeek program's state (prompts, measured settings, reader)."""

    @classmethod
    def from_compiled(cls, path: str | Path, tools: list[SearchTool] | None = None,
                      settings: AgentSettings | None = None) :
        """A program with the prompts (instructions and demos) of a compiled JSON state file or of
        an MLflow model URI (`models:/NAME/VERSION`), checked against this program's predictors
        before it is loaded. The settings saved with it (calibrated or tuned) replace those of
        `settings`: they were measured with its prompts."""
        program = cls(tools=tools, settings=settings)
        load_program_file(program, path)
        return program

    def dump_state(self, json_mode=True):
        """DSPy's state of the predictors, and the settings measured on labeled data (the reader's
        threshold, and any `keep_settings` was given), so a compiled program carries both."""
        state = super().dump_state(json_mode=json_mode)
        state[SETTINGS_KEY] = {name: getattr(self.settings, name) for name in self.saved_settings}
        if self.reader is not None:
            state[READER_KEY] = self.reader.model_dump(mode="json")
        return state

    def load_state(self, state, **kwargs):
        """DSPy's own load, then the saved settings: under "settings", or the reader's threshold alone
        under "calibration" in a file saved before the settings were."""
        state = dict(state)
        saved = [state.pop(key, None) or {} for key in (LEGACY_SETTINGS_KEY, SETTINGS_KEY)]
        if (reader := state.pop(READER_KEY, None)) is not None:
            self.reader = reader_from_dict(reader, "the program's reader")
        if not all(isinstance(values, dict) for values in saved):
            raise ValueError("the saved settings must be an object of setting names and values")
        super().load_state(state, **kwargs)
        values = {**saved[0], **saved[1]}
        if values.pop("reader", None) == RULE_READER:
            raise ValueError("the program was saved to read with the rule reader (settings.reader = \"rules\"), "
                             "which deltaseek no longer has; remove the setting to read with the learned reader")
        if "reader_min_confidence" in values and "reader_min_confidence_by_type" not in values:
            values["reader_min_confidence_by_type"] = {}  # calibrated before types had thresholds: one for all
        self.keep_settings(values)
        return self

    def keep_settings(self, values: dict) -> None:
        """Run with these settings and save them with the program (they were measured on labeled data
        with its prompts). ValueError names a setting a program does not carry or a value out of range."""
        unknown = set(values) - set(SAVED_SETTINGS)
        if unknown:
            raise ValueError(f"setting(s) a compiled program does not carry: {', '.join(sorted(unknown))} "
                             f"(it carries {', '.join(SAVED_SETTINGS)})")
        try:
            self.settings = AgentSettings.model_validate({**self.settings.model_dump(), **values})
        except ValidationError as exc:
            raise ValueError(settings_problem(exc)) from None
        self.saved_settings = tuple(name for name in SAVED_SETTINGS if name in {*self.saved_settings, *values})

    def with_settings(self, settings: AgentSettings) :
        """Another program with this one's tools and prompts, run with `settings`."""
        program = type(self)(tools=list(self.tools.values()), settings=settings, reader=self.reader)
        program.load_state(self.dump_state())
        program.settings = settings
        return program
