"""`deltaseek ask --json` on the real embedded model for every seed question (marked `embedded`)."""

import json

import pytest

from deltaseek import SEED_QUESTIONS
from deltaseek.cli import main



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
