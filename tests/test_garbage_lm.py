"""A model that answers every field with junk (field names, numbers, DSPy's placeholder,
copied sentences) never gets its junk into a search or in front of a user, and the guardrails
alone still reach the seed cases' answers from the bundled corpus."""

import itertools
import re

import pytest

from deltaseek import DeltaSeek
from deltaseek.programs.agent import guardrails as guard
from deltaseek.programs.tools import LocalCorpusSearch
from tests.scripted import ScriptedEngine, followed_label, scripted_lm, step, synth

JUNK_QUERIES = ["2018-2022", "#4", "3.0.0.0.0.0.0.0.0", "not found", "1", "search_corpus", "query", "unlikely"]
JUNK_ITEMS = ["2018-2022", "search_corpus", "sources", "Not supplied for this particular example.", "Assumptions",
              "Unlikely", "not found", "answerability", "1"]


def garbage_engine() -> ScriptedEngine:
    queries = itertools.cycle(JUNK_QUERIES + ["COPY"])
    moves = itertools.cycle(["search", "search", "synthesize"])

    def junk_step(prompt: str) -> dict:
        query = next(queries)
        if query == "COPY":  # a sentence copied out of the last observation
            found = re.findall(r"## \[[^\]]+\] [^\n]*\n([^\n]{60,})", prompt)
            query = " ".join(found[-1].split()[:12]) if found else "2018-2022"
        return step(query, move=next(moves), answerability="direct", evidence=JUNK_ITEMS[:3])

    return ScriptedEngine(
        classify=lambda _: {"kind": "lookup"},
        step=junk_step,
        diversify=lambda _: {"query": next(queries).replace("COPY", "#4")},
        judge=lambda _: {"answerability": "direct", "reason": "answerability"},
        synthesize=lambda _: synth("2018-2022", sources=["1"], caveats=JUNK_ITEMS[:4], assumptions=JUNK_ITEMS[4:],
                                   answerability="direct"),
    )


def ask(question, bundled_index, use_lm):
    program = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])
    with use_lm(scripted_lm(garbage_engine())):
        return program(question=question)


def assert_no_echo(pred, program_names):
    pad = pred.scratchpad
    for call in pred.tool_calls:
        if call["executed"]:
            assert call["args"]["query"] not in JUNK_QUERIES
            assert guard.reject_junk_query(call["args"]["query"], pad, program_names) is None, call
    junk = {j.lower() for j in JUNK_ITEMS} | {n.lower() for n in program_names}
    for item in pred.caveats + pred.assumptions:
        assert item.strip().lower() not in junk and "not supplied" not in item.lower(), item
    assert pred.answer not in JUNK_ITEMS


@pytest.mark.parametrize("question,expected", [
    ("Who is the lieutenant governor of Ohio?", ["Tressel"]),
    ("Who created the Ruby programming language, and where was he born?", ["Yukihiro", "Matsumoto", "Osaka"]),
    ("What is the street address of The New York Times headquarters?", ["620 Eighth Avenue"]),
    # the Ruby on Rails passage says who created Rails; a passage on Ruby itself says who created Ruby
    ("Who created Ruby?", ["Matsumoto"]),
])
def test_the_guardrails_reach_the_answer_whatever_the_model_says(question, expected, bundled_index, use_lm):
    pred = ask(question, bundled_index, use_lm)
    names = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)]).reserved_names
    assert_no_echo(pred, names)
    assert all(e in pred.answer for e in expected), pred.answer
    if any("was set aside" in c for c in pred.caveats):
        # the abstain margin set the reader's span aside: its sentence is quoted instead
        assert pred.answerability == "unlikely" and pred.answer_origin == "evidence"
    else:
        assert pred.answerability == followed_label(pred) and pred.answer_origin == "extracted"
    assert any(c["origin"] == "program" and c["proposed"] for c in pred.tool_calls)  # the replacement is recorded


def test_xyzzyville_is_no_information_and_unlikely(bundled_index, use_lm):
    pred = ask("What is the population of Xyzzyville?", bundled_index, use_lm)
    assert_no_echo(pred, DeltaSeek(tools=[LocalCorpusSearch(bundled_index)]).reserved_names)
    assert pred.answer.startswith("No information found about Xyzzyville") and pred.answerability == "unlikely"


def test_magnificent_7_says_no_rate_was_found_gives_proxies_and_names_its_reading(bundled_index, use_lm):
    pred = ask("What is the current rate of adoption for Ollama vs llama.cpp in the magnificent 7?",
               bundled_index, use_lm)
    assert_no_echo(pred, DeltaSeek(tools=[LocalCorpusSearch(bundled_index)]).reserved_names)
    assert pred.answerability == "proxy_only"  # the answer gives proxies: its label says so
    assert "No current rate of adoption figure was found" in pred.answer and "stars" in pred.answer
    assert any("magnificent 7" in a for a in pred.assumptions)
