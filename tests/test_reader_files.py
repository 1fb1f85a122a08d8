"""A reader file (the learned reader's weights) that does not fit the code is refused in one line,
alone or inside a program file."""

import json

import pytest

from deltaseek import DeltaSeek, ProgramFileError, save_program
from deltaseek.bundled import shipped_reader_path
from deltaseek.programs.agent.learned_reader import load_reader, shipped_reader
from deltaseek.programs.agent.program_file import READER_KEY, load_state_into
from deltaseek.programs.tools import LocalCorpusSearch


def shipped_data() -> dict:
    return json.loads(shipped_reader_path().read_text(encoding="utf-8"))


def drop(linear: dict, name: str) -> None:
    at = linear["features"].index(name)
    del linear["features"][at], linear["coef"][at]


def set_nan(linear: dict, field: str) -> None:
    if field == "coef":
        linear["coef"][3] = float("nan")
    else:
        linear["intercept"] = float("nan")


BROKEN_READERS = {
    "a feature the code does not compute": (
        lambda d: d["answerability"]["features"].__setitem__(0, "top_scor"), "feature 'top_scor' is not one"),
    "a feature deleted from the answerability model": (
        lambda d: drop(d["answerability"], "margin"), "field 'answerability': feature 'margin' is missing"),
    "a feature deleted from the ranker": (
        lambda d: drop(d["ranker"], "closeness"), "field 'ranker': feature 'closeness' is missing"),
    "a feature named twice": (
        lambda d: d["answerability"]["features"].__setitem__(1, "top_score"), "'top_score' is named 2 times"),
    "both lists cut to the same length": (
        lambda d: d["ranker"].update(features=d["ranker"]["features"][:10], coef=d["ranker"]["coef"][:10]),
        "field 'ranker': feature "),
    "empty lists": (lambda d: d["answerability"].update(features=[], coef=[]), "field 'answerability': feature "),
    "a NaN coefficient": (lambda d: set_nan(d["ranker"], "coef"), "field 'ranker.coef.3': Input should be a finite"),
    "a NaN intercept": (lambda d: set_nan(d["answerability"], "intercept"),
                        "field 'answerability.intercept': Input should be a finite"),
    "the format version as text": (lambda d: d.update(format_version="1"),
                                   "field 'format_version' must be a whole number such as 1, not \"1\""),
}


@pytest.mark.parametrize("name", BROKEN_READERS)
def test_a_reader_file_that_does_not_fit_the_code_is_refused_in_one_line(tmp_path, name):
    edit, problem = BROKEN_READERS[name]
    data = shipped_data()
    edit(data)
    path = tmp_path / "reader.json"
    path.write_text(json.dumps(data))  # Python's json writes a NaN as NaN, and reads it back
    with pytest.raises(ProgramFileError) as raised:
        load_reader(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: reader field ") and problem in message and "\n" not in message


def test_the_shipped_reader_loads_and_weighs_every_feature_the_code_computes():
    """The check refuses nothing the training command writes: the shipped file passes it."""
    assert load_reader(shipped_reader_path()) == shipped_reader()


@pytest.mark.parametrize("name", ["a feature deleted from the ranker", "a feature named twice", "empty lists",
                                  "the format version as text"])
def test_a_reader_inside_a_program_file_is_checked_the_same(tmp_path, bundled_index, name):
    edit, problem = BROKEN_READERS[name]
    path = save_program(DeltaSeek(tools=[LocalCorpusSearch(bundled_index)], reader=shipped_reader()),
                        tmp_path / "p.json")
    state = json.loads(path.read_text())
    edit(state[READER_KEY])
    path.write_text(json.dumps(state))
    with pytest.raises(ProgramFileError) as raised:
        load_state_into(DeltaSeek(tools=[LocalCorpusSearch(bundled_index)]), path)
    message = str(raised.value)
    assert message.startswith(f"{path}: the program's reader: reader field ") and problem in message
    assert "\n" not in message
