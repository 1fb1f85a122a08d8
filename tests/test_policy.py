"""The loop's stop checks: small named functions over the scratchpad, each returning a verdict
with its reason, run in order; the trajectory keeps the reason of the one that ended the search."""

from deltaseek import AgentSettings, DeltaSeek
from deltaseek.programs.agent.policy import STOP_CHECKS, Verdict, steering, stop_verdict
from deltaseek.programs.agent.profile import CAPABLE, SMALL
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad, StepRecord, ToolCall
from deltaseek.programs.tools import LocalCorpusSearch
from deltaseek.programs.tools.base import ToolStatus
from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth


def verdict(pad, profile=CAPABLE, window=3):
    return stop_verdict(pad, AgentSettings(exhaustion_window=window), profile)


def searched(pad: Scratchpad, *counts: int) -> Scratchpad:
    for n, count in enumerate(counts, 1):
        pad.steps.append(StepRecord(step=n))
        pad.tool_calls.append(ToolCall(step=n, tool="search_corpus", args={"query": f"q{n}"}, executed=True,
                                       status=ToolStatus.SUCCESS if count else ToolStatus.NO_RESULTS,
                                       result_count=count, new_facts=count))
        if count:
            pad.facts.append(Fact(source="bell", title="Harrow Bell", text="The Harrow Bell was cast by Emil Varga.",
                                  step=n))
    return pad


def test_nothing_ends_a_fresh_search():
    assert verdict(Scratchpad(question="Who cast the Harrow Bell?")) is None


def test_each_check_names_its_stop_and_why():
    pad = searched(Scratchpad(question="Who cast the Harrow Bell?", hard_budget=2), 1, 1)
    assert verdict(pad) == Verdict("hard_budget", "2 steps: the hard budget")
    capped = searched(Scratchpad(question="Who cast the Harrow Bell?", max_searches=1), 1)
    assert verdict(capped).stop == "max_searches"
    capped.evidence_answerability = "direct"  # a typed answer read: the small profile lets the evidence decide
    assert verdict(capped, SMALL) == Verdict("answered", "the last search allowed found a typed answer", "evidence")
    assert verdict(capped).stop == "max_searches"  # the capable model is asked instead
    settled = searched(Scratchpad(question="What is the weight of the Harrow Bell?"), 1)
    settled.evidence_answerability = "unlikely"
    assert verdict(settled).because == "the answerability steering the search is unlikely"
    empty = searched(Scratchpad(question="Who cast the Harrow Bell?"), 0, 0, 0)
    assert verdict(empty).stop == "exhausted"
    read = searched(Scratchpad(question="Who cast the Harrow Bell?", evidence_answerability="direct"), 1)
    assert verdict(read, SMALL).answered_by == "evidence" and verdict(read) is None
    assert [check.__name__ for check in STOP_CHECKS] == ["hard_budget", "search_limit", "answerability_settled",
                                                         "search_exhausted", "evidence_decides"]


def test_the_evidence_steers_where_it_can_decide_and_the_models_claim_where_it_cannot():
    pad = searched(Scratchpad(question="What is the weight of the Harrow Bell?", claimed_answerability="unlikely"), 1)
    pad.evidence_answerability = "direct"
    assert steering(pad) == "direct"
    pad.evidence_answerability = "untyped"  # no answer type to look for: the model's claim steers
    assert steering(pad) == "unlikely"


def test_the_trajectory_says_why_the_search_ended(bundled_index, use_lm):
    engine = ScriptedEngine(classify=classify("lookup"), synthesize=lambda _: synth("Jim Tressel"),
                            step=lambda p: step(move="synthesize") if "Tressel" in p else step("lieutenant governor Ohio"))
    with use_lm(scripted_lm(engine)):
        pred = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])(question="Who is the lieutenant governor of Ohio?")
    assert pred.stop_reason == "answered" and pred.answered_by == "model"
    assert pred.scratchpad.stop_because == "the model asked for the answer"
