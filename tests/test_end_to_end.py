"""`deltaseek ask --json` on the real embedded model for every seed question (marked `embedded`)."""

import json

import pytest

from programs.cli import main

SEED_QUESTIONS = [
    "Who is the lieutenant governor of Ohio?",
    "Where was the creator of Ruby born?",
    "What is the street address of The New York Times headquarters?",
    "What is the population of Xyzzyville?",
    "What is the current rate of adoption for Ollama vs llama.cpp in the magnificent 7?",
]


@pytest.mark.embedded
@pytest.mark.parametrize("question", SEED_QUESTIONS)
def test_every_seed_question_gets_an_answer_on_the_embedded_model(capsys, question):
    code = main(["ask", question, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    record = json.loads(out)
    assert record["answer"].strip()
    assert record["answerability"] in {"direct", "proxy_only", "unlikely"}
    executed = [c for c in record["tool_calls"] if c["executed"]]
    assert 1 <= len(executed) <= 8
    queries = [(c["tool"], c["args"]["query"].lower()) for c in executed]
    assert len(queries) == len(set(queries))  # no call ran twice
    assert record["lm_calls"] >= 2 and record["tokens"] > 0
