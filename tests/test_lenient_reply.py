"""A capable model's reply that misses its format by a near miss ("Direct" for "direct", a caveat
as a string, an answer as a list) is read as what it says, and the answer beside the off field
is the model's; a reply that says nothing readable is still unreadable. Scripted replies; the
passages are hand-written and come from no dataset."""

from typing import Literal

import dspy
import pytest

from deltaseek import DeltaSeek
from deltaseek.programs.agent.lenient_reply import NO_LABEL, near_miss, read_leniently
from deltaseek.programs.agent.settings import AgentSettings
from deltaseek.programs.index import CorpusIndex, Passage
from deltaseek.programs.tools import LocalCorpusSearch
from deltaseek.signatures import Synthesize
from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth

GUILD = [Passage(id="guild", title="Tarbury Writers Guild",
                 text="The Tarbury Writers Guild was founded in 1903 by the poet Ada Lind. It meets in the old mill."),
         Passage(id="mill", title="Tarbury mill", text="The old mill of Tarbury grinds oats for the valley.")]
QUESTION = "Who founded the Tarbury Writers Guild?"


@pytest.fixture(scope="module")
def corpus():
    return LocalCorpusSearch(CorpusIndex.build(GUILD))


def run(corpus, use_lm, then_step=None, synthesis=None, adapter=None):
    engine = ScriptedEngine(classify=classify("lookup"),
                            step=lambda p: (then_step or step(move="synthesize")) if "Ada Lind" in p else step("Tarbury guild founder"),
                            judge=lambda _: {"answerability": "direct", "reason": "read"},
                            diversify=lambda _: {"strategy": "direct", "query": "Tarbury guild"},
                            synthesize=lambda _: synthesis or synth("Ada Lind", sources=["guild"]))
    program = DeltaSeek(tools=[corpus], settings=AgentSettings(profile="capable"))
    with dspy.context(lm=scripted_lm(engine), adapter=adapter or dspy.JSONAdapter()):
        return program(question=QUESTION), engine


def test_near_misses_of_a_fields_type_are_what_they_plainly_mean():
    label = Literal["direct", "proxy_only", "unlikely"]
    assert [near_miss(v, label) for v in ("Direct.", "PROXY ONLY", " unlikely ")] == ["direct", "proxy_only", "unlikely"]
    assert near_miss("high", label) is NO_LABEL  # a word that is no label is no label, never the nearest one
    assert near_miss("None.", list[str]) == [] and near_miss("Only one source.", list[str]) == ["Only one source."]
    assert near_miss("- one\n- two", list[str]) == ["one", "two"]
    assert near_miss(["Emil Varga", "Jon Varga"], str) == "Emil Varga, Jon Varga"
    assert near_miss({"name": "Ada Lind"}, str) == "Ada Lind"
    assert near_miss({"a": 1, "b": 2}, str) == {"a": 1, "b": 2}  # left for DSPy to refuse


def test_a_reply_is_read_leniently_only_when_every_field_is_there():
    fields, read_as = read_leniently(Synthesize, '{"answer": "Ada Lind", "caveats": "None", "assumptions": [], '
                                                 '"sources": "guild", "answerability": "Direct"}')
    assert fields == {"answer": "Ada Lind", "caveats": [], "assumptions": [], "sources": ["guild"], "answerability": "direct"}
    assert "answerability 'Direct' as 'direct'" in read_as
    assert read_leniently(Synthesize, '{"caveats": [], "answerability": "direct"}') is None  # no answer
    assert read_leniently(Synthesize, "%% ## ?? Not supplied ]]") is None
    chat = "[[ ## answer ## ]]\nAda Lind\n\n[[ ## answerability ## ]]\nDirect\n\n[[ ## completed ## ]]"
    assert read_leniently(Synthesize, chat)[0]["answerability"] == "direct"


@pytest.mark.parametrize("off", [{"answerability": "Direct"}, {"answerability": "direct."}, {"answerability": "high"},
                                 {"caveats": "None."}, {"sources": "guild"}, {"answer": ["Ada Lind"]},
                                 {"answer": {"name": "Ada Lind"}}])
def test_the_answer_beside_an_off_field_is_the_models(corpus, use_lm, off):
    pred, _ = run(corpus, use_lm, synthesis={**synth("Ada Lind", sources=["guild"]), **off})
    assert (pred.answer, pred.answer_origin, pred.replaced_because) == ("Ada Lind", "lm", None)
    assert pred.scratchpad.lm_faults == []  # read, not a reply that could not be read


@pytest.mark.parametrize("move", ["Synthesize", "synthesize.", "finish"])
def test_a_step_whose_move_is_off_goes_on_without_an_lm_error(corpus, use_lm, move):
    pred, engine = run(corpus, use_lm, then_step={**step(move="synthesize"), "next_move": move})
    assert pred.stop_reason == "answered" and engine.calls["step"] == 2
    assert pred.answer == "Ada Lind"


def test_what_was_read_leniently_is_recorded_on_the_run(corpus, use_lm):
    pred, _ = run(corpus, use_lm, synthesis={**synth("Ada Lind", sources=["guild"]), "answerability": "DIRECT"})
    assert pred.scratchpad.read_leniently == ["synthesize: answerability 'DIRECT' as 'direct'"]  # the call, the field


def test_a_wrong_answer_read_leniently_is_still_checked(corpus, use_lm):
    pred, _ = run(corpus, use_lm, synthesis={**synth("x"), "answer": ["Mira Holt"], "answerability": "Direct"})
    assert pred.answer_origin != "lm" and "holt" in pred.replaced_because


def test_a_reasoning_models_scratch_left_in_the_answer_is_left_out(corpus, use_lm):
    pred, _ = run(corpus, use_lm, synthesis=synth("<think>The guild page names her.</think> Ada Lind", sources=["guild"]))
    assert (pred.answer, pred.answer_origin) == ("Ada Lind", "lm")


def test_a_chat_reply_with_caveats_as_bullets_is_read(corpus, use_lm):
    chat = ("[[ ## answer ## ]]\nAda Lind\n\n[[ ## caveats ## ]]\n- Only one passage names her.\n- It gives no month.\n\n"
            "[[ ## assumptions ## ]]\n[]\n\n[[ ## sources ## ]]\n[\"guild\"]\n\n[[ ## answerability ## ]]\ndirect\n\n"
            "[[ ## completed ## ]]")
    pred, _ = run(corpus, use_lm, synthesis=chat, adapter=dspy.ChatAdapter())
    assert (pred.answer, pred.answer_origin) == ("Ada Lind", "lm")
    assert pred.scratchpad.read_leniently == ["synthesize: caveats '- Only one passage names her.\\n- It gives no month.' as "
                                              "['Only one passage names her.', 'It gives no month.']"]


def test_a_field_written_as_null_is_read_as_dspy_reads_it_not_as_no_label():
    reply = '{"answer": null, "caveats": [], "assumptions": [], "sources": [], "answerability": "Direct"}'
    fields, _ = read_leniently(Synthesize, reply)
    assert fields["answer"] == "None" and fields["answerability"] == "direct"  # a text, never None
