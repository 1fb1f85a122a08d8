"""`deltaseek ask --json` on the real embedded model for every seed question (marked `embedded`),
in-process and through llama-cpp-python's server on loopback (also marked `llama_server`)."""

import json

import pytest

from deltaseek import SEED_QUESTIONS
from deltaseek.cli import main
from tests.scripted import followed_label



# What each seed case asks on the embedded default: words the answer holds, the
# answerabilities allowed, and a word an assumption must hold (how "magnificent 7" was read).
SEED_CASES = {
    SEED_QUESTIONS[0]: (["Tressel"], {"direct"}, None),
    SEED_QUESTIONS[1]: (["Matsumoto", "Osaka"], {"direct"}, None),
    SEED_QUESTIONS[2]: (["620 Eighth Avenue"], {"direct"}, None),
    SEED_QUESTIONS[3]: (["No information found"], {"unlikely"}, None),
    SEED_QUESTIONS[4]: (["stars"], {"proxy_only"}, "Magnificent Seven"),
}


PATHS = [pytest.param("in-process"), pytest.param("server", marks=pytest.mark.llama_server)]
"""The embedded model in-process, and the same model behind llama-cpp-python's OpenAI-compatible
server (`--lm openai/smollm2 --api-base URL --profile small`; one server for the session)."""


@pytest.mark.embedded
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("question", SEED_QUESTIONS)
def test_every_seed_question_gets_its_answer_on_the_embedded_model(request, capsys, question, path):
    argv = ["ask", question, "--json"]
    if path == "server":
        argv += ["--lm", "openai/smollm2", "--api-base", request.getfixturevalue("llama_server"), "--profile", "small"]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    record = json.loads(out)
    words, answerabilities, assumed = SEED_CASES[question]
    assert all(word in record["answer"] for word in words), record["answer"]
    assert record["answerability"] in {followed_label(record, a) for a in answerabilities}
    if assumed:
        assert any(assumed in a for a in record["assumptions"]), record["assumptions"]
    executed = [c for c in record["tool_calls"] if c["executed"]]
    assert 1 <= len(executed) <= 8
    queries = [(c["tool"], c["args"]["query"].lower()) for c in executed]
    assert len(queries) == len(set(queries))  # no call ran twice
    assert 1 <= record["lm_calls"] <= record["steps"] + 1 and record["tokens"] > 0


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
        for question in (SEED_QUESTIONS[0], SEED_QUESTIONS[4]):  # the second asks both signatures
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


@pytest.mark.embedded
def test_the_embedded_model_gets_the_small_profile_by_default(bundled_index):
    import dspy

    from deltaseek import DeltaSeek
    from deltaseek.programs.lm import make_lm
    from deltaseek.programs.tools import LocalCorpusSearch

    with dspy.context(lm=make_lm()):
        assert DeltaSeek(tools=[LocalCorpusSearch(bundled_index)]).profile().name == "small"
