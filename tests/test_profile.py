"""The profile: one object chosen once per run, at most one LM call per step plus the answer in
either profile, and a profile nobody set follows how the model's replies fare."""

import dspy
import pytest

from deltaseek import AgentSettings, DeltaSeek, run_question
from deltaseek.optimize.scenario_lms import scenario_lm
from deltaseek.programs.agent.profile import CAPABLE, SMALL, choose_profile, profile_for
from deltaseek.programs.lm import configure_lm
from deltaseek.programs.lm.profile import recorded_profile
from deltaseek.programs.index import CorpusIndex, Passage
from deltaseek.programs.tools import LocalCorpusSearch
from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth

OHIO = "Who is the lieutenant governor of Ohio?"
MAG7 = "What is the current rate of adoption for Ollama vs llama.cpp in the magnificent 7?"
HELPERS = dict(classify=classify("lookup"), diversify=lambda _: {"query": "Ollama llama.cpp adoption"},
               judge=lambda _: {"answerability": "proxy_only", "reason": "no rate is published"})
"""Every helper answers if asked, so a test counts a call that should not have been made instead of failing on it."""


def answer_found():
    return OHIO, {}, None, ScriptedEngine(
        **HELPERS, synthesize=lambda _: synth("Jim Tressel", sources=["jim-tressel"]),
        step=lambda p: step(move="synthesize") if "Tressel" in p else step("lieutenant governor Ohio"))


def refinement():
    # an answer asked for right after the first search, before any fact holds a rate
    return MAG7, {}, None, ScriptedEngine(
        **HELPERS, synthesize=lambda _: synth("No rate is published.", answerability="proxy_only"),
        step=lambda p: step(move="synthesize") if "Searches already run" in p else step("Ollama llama.cpp adoption rate"))


OLLAMA = [Passage(id="o1", title="Ollama", text="Ollama runs language models on a laptop, a desktop or a server."),
          Passage(id="o2", title="Ollama library", text="Ollama keeps a library of models to pull, tag, copy and delete.")]
"""Two passages: every search after the first finds nothing new."""


def exhaustion():
    queries = iter(["Ollama laptop desktop server", "Ollama library pull tag", "copy delete models",
                    "runs language keeps"])
    return "Tell me about Ollama.", {}, OLLAMA, ScriptedEngine(
        **HELPERS, synthesize=lambda _: synth("Ollama runs language models on a laptop."),
        step=lambda _: step(next(queries, "Ollama"), answerability="unknown"))


def hard_budget():
    queries = iter(["Ollama stars", "llama.cpp contributors", "Ollama docker pulls", "llama.cpp bindings"])
    return "Tell me about Ollama and llama.cpp.", {"soft_budget": 2, "hard_budget": 3, "budgets_from_task_kind": False}, \
        None, ScriptedEngine(**HELPERS, synthesize=lambda _: synth("Both run language models locally."),
                             step=lambda _: step(next(queries, "Ollama"), answerability="unknown"))


def junk():
    return OHIO, {}, None, ScriptedEngine(**HELPERS, step=lambda _: step("query"), synthesize=lambda _: synth("query"))


SCENARIOS = {"answer found": answer_found, "refinement": refinement, "exhaustion": exhaustion,
             "hard budget": hard_budget, "junk": junk}


def run_scenario(name: str, profile: str, bundled_index, use_lm):
    question, settings, passages, engine = SCENARIOS[name]()
    tool = LocalCorpusSearch(CorpusIndex.build(passages) if passages else bundled_index)
    program = DeltaSeek(tools=[tool], settings=AgentSettings(profile=profile, **settings))
    with use_lm(scripted_lm(engine)):
        return program(question=question), engine


@pytest.mark.parametrize("profile", ["small", "capable"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_run_makes_at_most_one_lm_call_per_step_and_one_for_the_answer(bundled_index, use_lm, scenario, profile):
    pred, engine = run_scenario(scenario, profile, bundled_index, use_lm)
    calls = sum(engine.calls.values())
    assert 1 <= calls <= pred.steps + 1, (dict(engine.calls), pred.steps, pred.stop_reason)
    assert calls == pred.scratchpad.lm_calls and engine.calls["classify"] == engine.calls["diversify"] == 0
    if scenario == "refinement" and profile == "capable":  # the early answer became refined searches
        assert len([c for c in pred.tool_calls if c["executed"]]) >= 2


def test_the_stop_scenarios_end_as_they_are_named(bundled_index, use_lm):
    """The scenarios above reach the stops they are named for (with the capable profile, which
    follows the model's queries)."""
    stops = {name: run_scenario(name, "capable", bundled_index, use_lm)[0]
             for name in ("answer found", "exhaustion", "hard budget")}
    assert stops["answer found"].stop_reason == "answered" and stops["answer found"].answered_by == "model"
    assert stops["exhaustion"].stop_reason == "exhausted"
    assert stops["hard budget"].stop_reason == "hard_budget" and stops["hard budget"].steps == 3


@pytest.mark.parametrize("profile", [None, "small", "capable"])
def test_the_oracle_answers_right_in_one_call_per_step_and_one_for_the_answer(bundled_index, profile):
    examples = [dspy.Example(question=OHIO, answer="Jim Tressel", answerability="direct"),
                dspy.Example(question="What is the population of Xyzzyville?", answer="", answerability="unlikely")]
    program = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)], settings=AgentSettings(profile=profile))
    with dspy.context(lm=scenario_lm("oracle", "search_corpus", examples), adapter=dspy.ChatAdapter()):
        records = [run_question(program, example.question) for example in examples]
    assert all(1 <= r["lm_calls"] <= r["steps"] + 1 for r in records), [(r["lm_calls"], r["steps"]) for r in records]
    assert "Tressel" in records[0]["answer"] and records[1]["answerability"] == "unlikely"
    if profile != "small":
        assert records[0]["answer_origin"] == "lm" and records[0]["profile"] == "capable"


def test_a_junk_model_is_run_as_the_small_profile_from_its_first_failed_reply(bundled_index, use_lm):
    engine = ScriptedEngine(**HELPERS, step=lambda _: step("query"), synthesize=lambda _: synth("query"))
    lm = scripted_lm(engine)
    program = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])
    with use_lm(lm):
        first = program(question=OHIO)
    pad = first.scratchpad
    assert pad.profile == "small" and pad.profile_because.startswith("switched at step 1: the query only repeats")
    # the program leads after the replaced move: one step call (the first asks for the move alone,
    # with the capable profile's full guidance: each tool with its description), compact from there on
    assert engine.calls["step"] == 1 and "search_corpus(query):" in engine.prompts[0][1]
    assert "`new_evidence`" not in engine.prompts[0][1]
    assert all("`caveats`" not in text for kind, text in engine.prompts if kind == "synthesize")
    assert recorded_profile(lm) is None  # nothing is written on the LM

    # every later run starts as the first did: its own replies decide, not earlier questions'
    for question in ("Who founded the Tarbury bell foundry?", "When did the Tarbury bell foundry close?"):
        engine.prompts.clear()
        with use_lm(lm):
            later = program(question=question)
        assert later.scratchpad.profile_because.startswith("switched at step 1")
        assert "search_corpus(query):" in next(text for kind, text in engine.prompts if kind == "step")
    assert recorded_profile(lm) is None


def test_a_reply_that_does_not_parse_switches_the_profile_too(bundled_index, use_lm):
    lm = scenario_lm("garbage", "search_corpus")
    with use_lm(lm):
        pred = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])(question=OHIO)
    assert pred.profile == "small" and "could not be read" in pred.scratchpad.profile_because


def test_a_capable_model_keeps_the_full_prompts(bundled_index, use_lm):
    question, _, _, engine = answer_found()
    lm = scripted_lm(engine)
    program = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])
    with use_lm(lm):
        preds = [program(question=question), program(question=question)]
    assert [p.profile for p in preds] == ["capable", "capable"] and recorded_profile(lm) is None
    steps = [text for kind, text in engine.prompts if kind == "step"]
    # before any search there is nothing to report: the first step of each run asks for the move alone
    firsts = [text for text in steps if "Searches already run" not in text]
    assert len(firsts) == 2 and all("`new_evidence`" not in text for text in firsts)
    assert all("`new_evidence`" in text for text in steps if text not in firsts) and len(steps) > 2
    assert "Jim Tressel" in preds[1].answer and preds[1].answer_origin == "lm"


def test_a_profile_that_was_set_is_kept_whatever_the_replies(bundled_index, use_lm):
    _, _, _, engine = junk()
    lm = scripted_lm(engine)
    program = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)], settings=AgentSettings(profile="capable"))
    with use_lm(lm):
        pred = program(question=OHIO)
    assert pred.profile == "capable" and recorded_profile(lm) is None
    assert engine.calls["step"] > 1  # the capable profile never hands the moves to the program


def test_configure_lm_records_the_profile_the_program_then_takes():
    saved = dspy.settings.lm, dspy.settings.adapter
    try:
        lm = configure_lm("openai/gpt-4o-mini", output_format="chat", profile="small")
        assert recorded_profile(lm).name == "small"
        assert DeltaSeek().profile() == SMALL
        assert DeltaSeek(settings=AgentSettings(profile="capable")).profile() == CAPABLE  # the program's own wins
    finally:
        dspy.configure(lm=saved[0], adapter=saved[1])


def test_the_settings_override_one_field_each():
    assert profile_for("capable", AgentSettings(replaced_moves_before_program_leads=2)) == \
        CAPABLE.model_copy(update={"replaced_moves_before_program_leads": 2})
    assert profile_for("small", AgentSettings(search_caps_from_task_kind=False)).search_caps_from_task_kind is False
    assert choose_profile(AgentSettings(), None) == ("capable", "capable until a reply of this run fails a check", True)
    assert choose_profile(AgentSettings(profile="small"), None).follows_replies is False


def test_the_judge_is_asked_only_on_a_call_a_step_did_not_make(use_lm):
    """Where the evidence cannot decide (the question names no answer type) and searches stop adding
    facts, the judge is asked, but only when the program made a step's move: within steps + 1 calls."""
    engine = ScriptedEngine(**HELPERS, step=lambda _: step("query"), synthesize=lambda _: synth("query"))
    program = DeltaSeek(tools=[LocalCorpusSearch(CorpusIndex.build(OLLAMA))],
                        settings=AgentSettings(profile="small", search_caps_from_task_kind=False))
    with use_lm(scripted_lm(engine)):
        pred = program(question="Tell me about Ollama.")
    assert engine.calls["step"] == 1 and engine.calls["judge"] == 1  # after the program's moves added nothing
    assert pred.stop_reason == "answerability" and sum(engine.calls.values()) <= pred.steps + 1

    capable = ScriptedEngine(**HELPERS, synthesize=lambda _: synth("Ollama runs language models on a laptop."),
                             step=lambda _: step(next(queries), answerability="unknown"))
    queries = iter(["Ollama laptop desktop server", "Ollama library pull tag", "copy delete models", "runs language keeps"])
    with use_lm(scripted_lm(capable)):
        pred = DeltaSeek(tools=[LocalCorpusSearch(CorpusIndex.build(OLLAMA))],
                         settings=AgentSettings(profile="capable"))(question="Tell me about Ollama.")
    assert capable.calls["judge"] == 0 and pred.stop_reason == "exhausted"  # every step asked the model
