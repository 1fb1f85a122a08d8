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


OHIO = "Who is the lieutenant governor of Ohio?"


def test_a_question_asked_again_after_fifty_others_gets_the_same_answer_and_moves(bundled_index, use_lm):
    """A model whose first query is junk on two questions in three (a field name): each such run
    switches to the small profile for itself alone, and the Ohio question, asked first and again
    after fifty others with the same LM object, gets the same answer and the same moves."""
    from deltaseek import DeltaSeek
    from deltaseek.programs.lm.profile import recorded_profile
    from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth

    others = [f"Who founded the Tarbury mill number {n}?" for n in range(50)]

    def step_reply(prompt: str):
        if "Searches already run" in prompt:
            return step(move="synthesize")
        if "Ohio" in prompt:
            return step("lieutenant governor Ohio")
        return step("query" if any(f"number {n}?" in prompt for n in range(50) if n % 3) else "Tarbury mill founder")

    engine = ScriptedEngine(classify=classify("lookup"), step=step_reply,
                            synthesize=lambda p: synth("Jim Tressel" if "Tressel" in p else "The passages do not say."))
    lm = scripted_lm(engine)
    program = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])
    with use_lm(lm):
        first = program(question=OHIO)
        switched = [program(question=q).scratchpad.profile_because.startswith("switched") for q in others]
        again = program(question=OHIO)
    assert sum(switched) == 33 and recorded_profile(lm) is None
    assert again.answer == first.answer and "Tressel" in first.answer
    assert again.profile == first.profile == "capable"
    assert [(c["tool"], c["args"], c["origin"]) for c in again.tool_calls] == \
        [(c["tool"], c["args"], c["origin"]) for c in first.tool_calls]


@pytest.mark.embedded
@pytest.mark.llama_server
def test_a_served_models_answer_and_moves_are_the_same_in_a_later_process(llama_server, tmp_path):
    """The bundled GGUF behind llama-cpp-python's server on loopback, no `--profile`: the Ohio
    question in one process, three other questions in a second, the Ohio question again in a
    third. The processes share deltaseek's cache folder (where the server's wire format is
    remembered), each with DSPy's cache in a new folder: the same answer and the same moves."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    deltaseek = str(Path(sys.executable).parent / "deltaseek")
    served = ["--lm", "openai/smollm2", "--api-base", llama_server, "--json"]

    def ask(name: str, *questions: str) -> list[dict]:
        (tmp_path / f"{name}.txt").write_text("\n".join(questions) + "\n")
        env = {**os.environ, "DELTASEEK_CACHE": str(tmp_path / "cache"), "DSPY_CACHEDIR": str(tmp_path / f"dspy-{name}")}
        done = subprocess.run([deltaseek, "ask", "-f", str(tmp_path / f"{name}.txt"), *served], env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]

    [first] = ask("first", OHIO)
    others = ask("others", "Who created the Ruby programming language?", "What is the population of Xyzzyville?",
                 "What is the street address of The New York Times headquarters?")
    [again] = ask("again", OHIO)
    assert len(others) == 3
    assert again["answer"] == first["answer"] and "Tressel" in first["answer"]
    assert again["profile"] == first["profile"]
    assert [(c["tool"], c["args"], c["origin"], c["executed"]) for c in again["tool_calls"]] == \
        [(c["tool"], c["args"], c["origin"], c["executed"]) for c in first["tool_calls"]]
