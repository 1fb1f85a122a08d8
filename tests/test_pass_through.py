"""A capable model's answers pass through in any phrasing, and a run depends only on its inputs.

The oracle (a scripted capable model that searches with the question, then answers with the
label) writes its answer inside a sentence; over 150 questions run in one process with one LM
object, in the set's order and reversed, its right answer must be the final answer, word for
word, wherever the answer was in the facts read, its "the passages do not say" wherever the
question cannot be answered, and every question must get the same answer and moves in both orders.
"""

import dspy
import pytest

from deltaseek.bundled import labeled_set
from deltaseek.optimize.evaluate import load_dataset
from deltaseek.optimize.pass_through import measure
from deltaseek.programs.tools import LocalCorpusSearch

KEPT_AT_LEAST = 0.95


@pytest.fixture(scope="module")
def questions() -> list[dspy.Example]:
    """Every question of the seed set and of MuSiQue: both corpora are the bundled default."""
    return [*load_dataset(str(labeled_set("seed_set"))).examples, *load_dataset(str(labeled_set("musique"))).examples]


@pytest.mark.parametrize("phrasing", ["sentence", "after_clause"])
def test_a_capable_models_answers_in_sentences_are_kept_in_either_order(bundled_index, questions, phrasing):
    report = measure(questions, phrasing, LocalCorpusSearch(bundled_index))
    assert len(questions) >= 100 and report.answer_read >= 50 and report.unanswerable >= 10
    assert report.order_changes == 0
    assert report.kept >= KEPT_AT_LEAST * report.answer_read, report.set_aside[:5]
    assert report.abstention_kept >= KEPT_AT_LEAST * report.unanswerable, report.set_aside[:5]
