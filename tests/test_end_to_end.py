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


@pytest.mark.embedded
def test_prefix_reuse_changes_no_answer_and_no_trajectory(bundled_index):
    """The same questions asked cold (every signature's prefix evaluated and saved) and then warm
    (every prefix restored) give the same answers and trajectories, byte for byte."""
    import dspy

    from deltaseek import DeltaSeek, run_question
    from deltaseek.programs.lm import adapter_for, embedded_engine, make_lm
    from deltaseek.programs.tools import LocalCorpusSearch

    engine, lm = embedded_engine(), make_lm(cache=False)

    def ask_all():
        records = []
        for question in SEED_QUESTIONS[:2]:
            with dspy.context(lm=lm, adapter=adapter_for(lm)):
                record = run_question(DeltaSeek([LocalCorpusSearch(bundled_index)]), question)
            records.append(json.dumps({k: v for k, v in record.items() if k != "seconds"}, sort_keys=True))
        return records

    engine.forget_prefixes()
    engine.reset_stats()
    cold = ask_all()
    cold_stats = engine.reset_stats()
    warm = ask_all()
    warm_stats = engine.reset_stats()
    assert cold == warm
    assert cold_stats.prefix_misses >= 2 and warm_stats.prefix_misses == 0  # the warm run restored every prefix
    assert warm_stats.restored_tokens > cold_stats.restored_tokens > 0
