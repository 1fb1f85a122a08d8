"""A question in another language than the reader reads: the answer's label agrees with what the
reader can tell, and a capable model's answer keeps its label."""

from deltaseek import AgentSettings, DeltaSeek
from deltaseek.optimize.scenario_lms import scenario_lm
from deltaseek.programs.agent.learned_reader import shipped_reader
from deltaseek.programs.index import CorpusIndex, Passage
from deltaseek.programs.tools import LocalCorpusSearch
from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth


def test_a_question_the_reader_cannot_type_is_answered_with_a_label_that_agrees(bundled_index, use_lm):
    """The reader reads English question words; for another language it cannot tell whether the
    closest passage answers, so the answer neither denies it nor is labelled unanswerable."""
    tool = LocalCorpusSearch(bundled_index)
    with use_lm(scenario_lm("echo", tool.name)):
        pred = DeltaSeek(tools=[tool])(question="Qui a créé le langage Ruby ?")
    assert "Matsumoto" in pred.answer and "do not state" not in pred.answer, pred.answer
    assert pred.answerability == "unknown"


def test_an_english_question_the_passages_leave_unanswered_is_still_denied(use_lm):
    """Only a question in another language is beyond the reader: an English question it read, with
    no kind of answer to type, over passages that do not answer it, is answered unanswerable (by a
    span the abstain margin sets aside)."""
    tool = LocalCorpusSearch(CorpusIndex.build([
        Passage(id="m", title="Orla mill", text="The Orla mill stands on the Orla river below the weir at Kestle."),
        Passage(id="k", title="Kestle", text="Kestle is a village of stone cottages on the Orla river.")]))
    program = DeltaSeek(tools=[tool], reader=shipped_reader().model_copy(update={"threshold": 0.99}),
                        settings=AgentSettings(abstain_margin=-1.0))
    with use_lm(scenario_lm("echo", tool.name)):
        pred = program(question="What did the Orla mill grind?")
    assert "do not state" in pred.answer and pred.answerability == "unlikely", (pred.answer, pred.answerability)


def french_answer(answer: str, bundled_index, use_lm):
    engine = ScriptedEngine(classify=classify("lookup"),
                            step=lambda p: step(move="synthesize") if "Matsumoto" in p else step("Ruby langage créateur"),
                            synthesize=lambda _: synth(answer))
    program = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)], settings=AgentSettings(profile="capable"))
    with use_lm(scripted_lm(engine)):
        return program(question="Qui a créé le langage Ruby ?")


def test_a_capable_models_answer_in_another_language_keeps_its_label(bundled_index, use_lm):
    pred = french_answer("Yukihiro Matsumoto a créé Ruby en 1995.", bundled_index, use_lm)
    assert (pred.answer, pred.answer_origin, pred.answerability) == ("Yukihiro Matsumoto a créé Ruby en 1995.", "lm",
                                                                     "direct"), pred.replaced_because
    wrong = french_answer("Guido van Rossum a créé Ruby en 1995.", bundled_index, use_lm)
    assert wrong.answer_origin != "lm" and "rossu" in wrong.replaced_because
