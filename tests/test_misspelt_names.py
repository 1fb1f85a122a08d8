"""One misspelt word of a longer name: the search goes on, a capable model's answer comes through,
and a name no passage holds is still missing."""

from deltaseek import AgentSettings, DeltaSeek
from deltaseek.optimize.scenario_lms import scenario_lm
from deltaseek.programs.index import CorpusIndex, Passage
from deltaseek.programs.tools import LocalCorpusSearch
from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth


BRIDGE = [Passage(id="thb", title="Tarbury Hall Bridge", text="The Tarbury Hall Bridge crosses the Vey below the old "
                  "hall. It was built in 1842 by the engineer Ada Lind."),
          Passage(id="mill", title="Tarbury mill", text="The old mill of Tarbury grinds oats for the valley.")]


def test_a_misspelt_word_of_a_name_does_not_end_the_search(use_lm):
    tool = LocalCorpusSearch(CorpusIndex.build(BRIDGE))
    with use_lm(scenario_lm("echo", tool.name)):
        pred = DeltaSeek(tools=[tool])(question="Who built the Tarbury Hal Bridge?")
    assert "No information found" not in pred.answer and "Ada Lind" in pred.answer, pred.answer
    assert pred.stop_reason != "answerability"


def test_a_capable_models_answer_about_a_misspelt_name_comes_through(use_lm):
    engine = ScriptedEngine(classify=classify("lookup"),
                            step=lambda p: step(move="synthesize") if "Ada Lind" in p else step("Tarbury Hal Bridge"),
                            synthesize=lambda _: synth("Ada Lind built it in 1842.", sources=["thb"]))
    program = DeltaSeek(tools=[LocalCorpusSearch(CorpusIndex.build(BRIDGE))], settings=AgentSettings(profile="capable"))
    with use_lm(scripted_lm(engine)):
        pred = program(question="Who built the Tarbury Hal Bridge?")
    assert (pred.answer, pred.answer_origin) == ("Ada Lind built it in 1842.", "lm"), pred.replaced_because


def test_a_name_no_passage_holds_is_still_missing(use_lm):
    tool = LocalCorpusSearch(CorpusIndex.build(BRIDGE))
    with use_lm(scenario_lm("echo", tool.name)):
        pred = DeltaSeek(tools=[tool])(question="Who built the Tarbury Xyzzy Bridge?")
    assert pred.answer.startswith("No information found about Xyzzy") and pred.answerability == "unlikely"


def test_the_corpus_tool_ranks_a_name_with_a_misspelt_word_and_names_the_word():
    result = LocalCorpusSearch(CorpusIndex.build(BRIDGE)).search("Tarbury Hal Bridge")
    assert result.hits and result.hits[0].id == "thb" and "hal" in result.note, (result.status, result.note)
    result = LocalCorpusSearch(CorpusIndex.build(BRIDGE)).search("Tarbury Xyzzy Bridge")
    assert not result.hits and "Xyzzy" in result.note
