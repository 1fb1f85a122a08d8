"""The reader's abstention threshold is calibrated on labeled data with unanswerable
questions, reproduced by a command, and saved with a compiled program."""

import json

import dspy
import pytest

from deltaseek import DeltaSeek
from deltaseek.cli import main
from deltaseek.errors import ProgramFileError
from deltaseek.optimize.calibrate import ReaderOutcome, choose, recalibrate, score
from deltaseek.programs.agent.program_file import save_program
from deltaseek.programs.agent.settings import AgentSettings
from deltaseek.programs.index import CorpusIndex, Passage
from deltaseek.programs.tools import LocalCorpusSearch


def test_the_threshold_abstains_most_on_unanswerables_within_the_false_abstention_bound():
    outcomes = ([ReaderOutcome(True, c, 1.0) for c in (0.9, 0.8, 0.7, 0.3)]   # answerable, read surely or not
                + [ReaderOutcome(False, c, 0.0) for c in (0.2, 0.4, 0.75)])   # unanswerable
    chosen, table = choose(outcomes, max_false_abstention=0.25)
    assert chosen.threshold == 0.45  # the lowest that abstains on 0.3 (1 of 4 answerable) and on 0.2, 0.4 (2 of 3)
    assert chosen.false_abstention == 0.25 and round(chosen.abstention_on_unanswerable, 2) == 0.67
    strict, _ = choose(outcomes, max_false_abstention=0.0)
    assert strict.threshold <= 0.3 and strict.false_abstention == 0.0


def test_an_answer_type_read_often_enough_gets_a_threshold_of_its_own():
    # Names of people are right only when read surely; named things are right even when read less surely.
    people = ([ReaderOutcome(True, c, 1.0, {"person": c}) for c in (0.9, 0.8, 0.7, 0.6, 0.3)] * 4
              + [ReaderOutcome(False, c, 0.0, {"person": c}) for c in (0.2, 0.3, 0.4, 0.5, 0.5)] * 4)
    things = ([ReaderOutcome(True, c, 1.0, {"entity": c}) for c in (0.9, 0.5, 0.3, 0.2, 0.2)] * 4
              + [ReaderOutcome(False, c, 0.0, {"entity": c}) for c in (0.1, 0.1, 0.05, 0.6, 0.7)] * 4)
    one, _ = choose(people + things, max_false_abstention=0.25)
    alone = score(people + things, one.threshold)  # 0.25 for every type: 40% abstention, 20% false abstention
    assert (one.threshold, alone.abstention_on_unanswerable, alone.false_abstention) == (0.25, 0.4, 0.2)
    # People above every unanswerable one (costing the answerable 0.3), named things below 0.2 to pay for it
    assert one.by_type == {"person": 0.55, "entity": 0.15}
    assert (one.abstention_on_unanswerable, one.false_abstention) == (0.8, 0.1)
    few, _ = choose(people[:5] + people[20:25] + things, max_false_abstention=0.25)
    assert "person" not in few.by_type  # ten people read: too few to fit a threshold to


def labeled(question, answer, label="direct"):
    return dspy.Example(question=question, answer=answer, aliases=[], answerability=label).with_inputs("question")


@pytest.fixture(scope="module")
def tools():
    return [LocalCorpusSearch(CorpusIndex.build([
        Passage("vey", "Vey bridge", "The iron bridge over the Vey at Tarbury was built in 1911 by Ada Lind."),
        Passage("moss", "Moss tower", "The Moss tower was designed by Olaf Sund and finished in 1934."),
    ]))]


def test_recalibrating_on_labeled_questions_sets_the_program_s_threshold(tools):
    program = DeltaSeek(tools=tools, settings=AgentSettings(reader_min_confidence=0.99))
    examples = [labeled("Who built the iron bridge over the Vey?", "Ada Lind"),
                labeled("Who designed the Moss tower?", "Olaf Sund"),
                labeled("Who built the wooden tunnel under the Vey?", "", "unlikely")]
    chosen = recalibrate(program, examples)
    assert chosen is not None and program.settings.reader_min_confidence == chosen.threshold
    assert program.settings.reader_min_confidence_by_type == {}  # three questions: no type read often enough
    assert chosen.false_abstention == 0.0 and chosen.abstention_on_unanswerable == 1.0
    assert recalibrate(program, examples[:2]) is None  # no unanswerable question: nothing to measure


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


def test_the_calibrate_command_prints_the_table_and_the_chosen_threshold(capsys, tmp_path):
    code = main(["calibrate", "--dataset", "datasets/squad2.jsonl", "--limit", "12", "--no-cache",
                 "--tracking-uri", f"sqlite:///{tmp_path}/mlflow.db"])
    out = capsys.readouterr().out
    assert code == 0
    assert "| threshold | abstention on unanswerable | false abstention | F1 on answerable |" in out
    assert "**chosen**" in out and "reader_min_confidence = " in out and "reader_min_confidence_by_type = {" in out
