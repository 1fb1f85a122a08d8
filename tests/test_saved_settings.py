"""A compiled program carries the settings measured with its prompts (calibrated or tuned),
files saved before it load as they did, and `deltaseek.shipped_program()` returns the packaged program."""

import json

import pytest

import deltaseek
import deltaseek.programs.agent.deltaseek as agent_module
from deltaseek import AgentSettings, DeltaSeek, ProgramFileError, save_program
from deltaseek.cli import build_parser, build_program
from deltaseek.programs.agent.settings import READER_MIN_CONFIDENCE, READER_MIN_CONFIDENCE_BY_TYPE
from deltaseek.programs.index import CorpusIndex, Passage
from deltaseek.programs.tools import LocalCorpusSearch
from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth

TUNED = {"reader_min_confidence": 0.3, "reader_min_confidence_by_type": {"person": 0.5}, "hard_budget": 5,
         "soft_budget": 3, "exhaustion_window": 2, "budgets_from_task_kind": False,
         "task_search_caps": {"lookup": 1, "comparison": 3}, "first_strategies": {"lookup": "narrower"},
         "prompt_facts": 3}


@pytest.fixture(scope="module")
def tools():
    return [LocalCorpusSearch(CorpusIndex.build([
        Passage("vey", "Vey bridge", "The iron bridge over the Vey at Tarbury was built in 1911 by Ada Lind."),
        Passage("moss", "Moss tower", "The Moss tower was designed by Olaf Sund and finished in 1934."),
    ]))]


def tuned_program(tools):
    program = DeltaSeek(tools=tools, settings=AgentSettings(profile="capable"))
    program.keep_settings(TUNED)
    return program


def test_tuned_settings_are_saved_and_restored_by_from_compiled(tools, tmp_path):
    path = save_program(tuned_program(tools), tmp_path / "tuned.json")
    state = json.loads(path.read_text())
    assert state["settings"] == TUNED and "calibration" not in state
    loaded = DeltaSeek.from_compiled(path, tools=tools, settings=AgentSettings(max_lm_failures=5))
    assert {name: getattr(loaded.settings, name) for name in TUNED} == TUNED
    assert loaded.settings.max_lm_failures == 5 and loaded.settings.profile is None  # the caller's, not saved
    again = save_program(loaded, tmp_path / "again.json")  # a loaded program saves what it loaded
    assert json.loads(again.read_text())["settings"] == TUNED


def test_an_untuned_program_saves_only_its_calibrated_thresholds(tools, tmp_path):
    path = save_program(DeltaSeek(tools=tools, settings=AgentSettings(hard_budget=3)), tmp_path / "plain.json")
    assert json.loads(path.read_text())["settings"] == {"reader_min_confidence": READER_MIN_CONFIDENCE,
                                                        "reader_min_confidence_by_type": READER_MIN_CONFIDENCE_BY_TYPE}
    assert DeltaSeek.from_compiled(path, tools=tools, settings=AgentSettings(hard_budget=4)).settings.hard_budget == 4


def test_a_file_saved_before_issue_22_loads_its_calibration(tools, tmp_path):
    path = save_program(DeltaSeek(tools=tools), tmp_path / "old.json")
    state = json.loads(path.read_text())
    del state["settings"]
    state["calibration"] = {"reader_min_confidence": 0.35}  # the layout main wrote before
    path.write_text(json.dumps(state))
    loaded = DeltaSeek.from_compiled(path, tools=tools)
    assert loaded.settings.reader_min_confidence == 0.35
    assert loaded.settings.reader_threshold("person") == 0.35  # one threshold for every type, as calibrated then
    assert loaded.settings.hard_budget == AgentSettings().hard_budget
    resaved = json.loads(save_program(loaded, tmp_path / "new.json").read_text())
    assert resaved["settings"] == {"reader_min_confidence": 0.35, "reader_min_confidence_by_type": {}}
    assert "calibration" not in resaved


@pytest.mark.parametrize("saved,problem", [
    ({"profile": "small"}, "does not carry: profile"),
    ({"hard_budget": 0}, "hard_budget"),
    ({"reader_min_confidence_by_type": {"person": 1.5}}, "reader_min_confidence_by_type.person"),
    ({"reader_min_confidence_by_type": {"persons": 0.5}}, "reader_min_confidence_by_type.persons"),
    ({"task_search_caps": {"lookups": 1}}, "task_search_caps.lookups"),
    ({"task_search_caps": {"lookup": 0}}, "task_search_caps.lookup"),
    ({"first_strategies": {"lookup": "sideways"}}, "first_strategies.lookup"),
    ({"prompt_facts": 0}, "prompt_facts"),
    ([0.3], "must be an object"),
])
def test_bad_saved_settings_are_refused_with_the_file_named(tools, tmp_path, saved, problem):
    path = save_program(DeltaSeek(tools=tools), tmp_path / "bad.json")
    state = json.loads(path.read_text())
    state["settings"] = saved
    path.write_text(json.dumps(state))
    with pytest.raises(ProgramFileError, match=problem) as caught:
        DeltaSeek.from_compiled(path, tools=tools)
    assert str(path) in str(caught.value)


def test_an_option_on_the_command_line_wins_over_the_saved_settings(tools, tmp_path):
    path = save_program(tuned_program(tools), tmp_path / "tuned.json")
    args = build_parser().parse_args(["ask", "Who built it?", "--program", str(path), "--hard-budget", "2"])
    program = build_program(args)
    assert program.settings.hard_budget == 2 and program.settings.exhaustion_window == 2


def test_shipped_program_says_when_none_is_shipped(monkeypatch, tmp_path):
    monkeypatch.setattr(agent_module, "shipped_program_path", lambda: tmp_path / "shipped.json")
    with pytest.raises(ProgramFileError, match="no compiled program is shipped"):
        deltaseek.shipped_program()


def test_shipped_program_loads_the_packaged_file_and_answers(monkeypatch, tmp_path, tools, use_lm):
    shipped = save_program(tuned_program(tools), tmp_path / "shipped.json")
    monkeypatch.setattr(agent_module, "shipped_program_path", lambda: shipped)
    program = deltaseek.shipped_program(tools=tools)
    assert {name: getattr(program.settings, name) for name in TUNED} == TUNED

    def step_handler(prompt):
        return step(move="synthesize") if "Searches already run" in prompt else step("iron bridge Vey")

    engine = ScriptedEngine(classify=classify("lookup"), step=step_handler,
                            synthesize=lambda _: synth("Ada Lind", sources=["vey"]))
    with use_lm(scripted_lm(engine)):
        pred = program(question="Who built the iron bridge over the Vey?")
    assert pred.answer == "Ada Lind" and pred.answer_origin == "lm"
    assert pred.scratchpad.hard_budget == TUNED["hard_budget"]  # the saved budgets, not the task kind's


def test_a_compiled_program_carries_its_threshold_and_refuses_a_bad_one(tools, tmp_path):
    settings = AgentSettings(reader_min_confidence=0.42, reader_min_confidence_by_type={"date": 0.2})
    path = save_program(DeltaSeek(tools=tools, settings=settings), tmp_path / "p.json")
    assert json.loads(path.read_text())["settings"] == {"reader_min_confidence": 0.42,
                                                        "reader_min_confidence_by_type": {"date": 0.2}}
    loaded = DeltaSeek.from_compiled(path, tools=tools).settings
    assert loaded.reader_threshold("person") == 0.42 and loaded.reader_threshold("date") == 0.2
    state = json.loads(path.read_text())
    state["settings"] = {"reader_min_confidence": 7}
    path.write_text(json.dumps(state))
    with pytest.raises(ProgramFileError, match="reader_min_confidence"):
        DeltaSeek.from_compiled(path, tools=tools)


def test_a_program_saved_to_read_with_the_rule_reader_is_refused_in_one_line(tools, tmp_path):
    path = save_program(DeltaSeek(tools=tools), tmp_path / "rules.json")
    state = json.loads(path.read_text())
    state["settings"]["reader"] = "rules"  # what a program saved before deltaseek had one reader may say
    path.write_text(json.dumps(state))
    with pytest.raises(ProgramFileError, match="rule reader") as refused:
        DeltaSeek.from_compiled(path, tools=tools)
    assert "\n" not in str(refused.value)
    state["settings"]["reader"] = "learned"  # the only other value it had: how every program reads now
    path.write_text(json.dumps(state))
    assert "reader" not in DeltaSeek.from_compiled(path, tools=tools).saved_settings


@pytest.mark.parametrize("settings, problem", [
    ({"reader_min_confidence": 7}, "setting reader_min_confidence: 7 is not allowed; it must be at least 0 and at most 1"),
    ({"relevance_drop": 0}, "setting relevance_drop: 0 is not allowed; it must be above 0 and below 1"),
    ({"reader_min_confidence_by_type": {"person": 3}},
     "setting reader_min_confidence_by_type.person: 3 is not allowed; input should be less than or equal to 1"),
])
def test_a_setting_out_of_range_in_a_program_file_is_one_line_naming_the_file_and_range(tmp_path, settings, problem):
    path = save_program(DeltaSeek(), tmp_path / "program.json")
    state = json.loads(path.read_text())
    state["settings"] = settings
    path.write_text(json.dumps(state))
    with pytest.raises(ProgramFileError) as raised:
        DeltaSeek.from_compiled(path)
    message = str(raised.value)
    assert message.startswith(str(path)) and problem in message and "\n" not in message, message
