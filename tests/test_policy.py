"""The loop's stop checks: small named functions over the scratchpad, each returning a verdict
with its reason, run in order; the trajectory keeps the reason of the one that ended the search."""

from types import SimpleNamespace

from deltaseek import AgentSettings, DeltaSeek
from deltaseek.programs.agent.policy import STOP_CHECKS, Verdict, stop_verdict
from deltaseek.programs.agent.scratchpad import Scratchpad, StepRecord, ToolCall
from deltaseek.programs.tools import LocalCorpusSearch
from deltaseek.programs.tools.base import ToolStatus
from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth


def agent(steering="unknown", evidence_answers=False, window=3):
    return SimpleNamespace(settings=AgentSettings(exhaustion_window=window), steering=lambda pad: steering,
                           evidence_answers=lambda pad: evidence_answers)


def searched(pad: Scratchpad, *counts: int) -> Scratchpad:
    for n, count in enumerate(counts, 1):
        pad.steps.append(StepRecord(step=n))
        pad.tool_calls.append(ToolCall(step=n, tool="search_corpus", args={"query": f"q{n}"}, executed=True,
                                       status=ToolStatus.SUCCESS if count else ToolStatus.NO_RESULTS,
                                       result_count=count, new_facts=count))
    return pad


def test_nothing_ends_a_fresh_search():
    assert stop_verdict(agent(), Scratchpad(question="Who cast the Harrow Bell?")) is None


def test_each_check_names_its_stop_and_why():
    pad = searched(Scratchpad(question="Who cast the Harrow Bell?", hard_budget=2), 1, 1)
    assert stop_verdict(agent(), pad) == Verdict("hard_budget", "2 steps: the hard budget")
    capped = searched(Scratchpad(question="Who cast the Harrow Bell?", max_searches=1), 1)
    assert stop_verdict(agent(), capped).stop == "max_searches"
    assert stop_verdict(agent(evidence_answers=True), capped) == \
        Verdict("answered", "the last search allowed found a typed answer", "evidence")
    settled = searched(Scratchpad(question="What is the weight of the Harrow Bell?"), 1)
    assert stop_verdict(agent(steering="unlikely"), settled).because == "the answerability steering the search is unlikely"
    empty = searched(Scratchpad(question="Who cast the Harrow Bell?"), 0, 0, 0)
    assert stop_verdict(agent(), empty).stop == "exhausted"
    assert stop_verdict(agent(evidence_answers=True), searched(Scratchpad(question="Who?"), 1)).answered_by == "evidence"
    assert [check.__name__ for check in STOP_CHECKS] == ["hard_budget", "search_limit", "answerability_settled",
                                                         "search_exhausted", "evidence_answers"]


def test_the_trajectory_says_why_the_search_ended(bundled_index, use_lm):
    engine = ScriptedEngine(classify=classify("lookup"), synthesize=lambda _: synth("Jim Tressel"),
                            step=lambda p: step(move="synthesize") if "Tressel" in p else step("lieutenant governor Ohio"))
    with use_lm(scripted_lm(engine)):
        pred = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])(question="Who is the lieutenant governor of Ohio?")
    assert pred.stop_reason == "answered" and pred.answered_by == "model"
    assert pred.scratchpad.stop_because == "the model asked for the answer"
