"""Metrics on hand-made predictions: answers, abstention, answerability, efficiency, combined, GEPA."""

from __future__ import annotations

import inspect

import dspy
import pytest

from deltaseek.metrics import (
    PASS_THRESHOLD,
    WEIGHTS,
    abstains,
    answerability_accuracy,
    combined_metric,
    efficiency,
    exact_match,
    gepa_feedback_metric,
    normalize_answer,
    token_f1,
)
from deltaseek.metrics.contract import never_raises

LT_GOV = dspy.Example(question="Who is the lieutenant governor of Ohio?", answer="Jim Tressel",
                      aliases=["James Tressel"], answerability="direct", corpus="seed").with_inputs("question")
XYZZY = dspy.Example(question="What is the population of Xyzzyville?", answer="", aliases=[],
                     answerability="unlikely", corpus="seed").with_inputs("question")
OLLAMA = dspy.Example(question="How many people use Ollama every day?",
                      answer="Ollama does not publish active-user counts; proxies: 140,000 GitHub stars.",
                      aliases=[], answerability="proxy_only", corpus="seed").with_inputs("question")


def call(query: str, executed: bool = True, reason: str | None = None) -> dict:
    return {"tool": "search_corpus", "args": {"query": query}, "status": "success" if executed else "blocked",
            "result_count": 3 if executed else 0, "executed": executed, "blocked_reason": reason}


def pred(answer="Jim Tressel", answerability="direct", stop_reason="answered", tool_calls=None) -> dspy.Prediction:
    calls = [call("ohio lieutenant governor")] if tool_calls is None else tool_calls
    return dspy.Prediction(answer=answer, answerability=answerability, stop_reason=stop_reason, tool_calls=calls)


# -- answers ------------------------------------------------------------------------------

def test_normalize_answer_is_squad_style():
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"
    assert normalize_answer("620 Eighth Avenue.") == "620 eighth avenue"


@pytest.mark.parametrize("answer, expected", [
    ("Jim Tressel", 1.0), ("jim tressel.", 1.0), ("The Jim Tressel", 1.0), ("James Tressel", 1.0),
    ("Jon Husted", 0.0), ("Jim Tressel, since 2025", 0.0),
])
def test_exact_match_against_answer_and_aliases(answer, expected):
    assert exact_match(LT_GOV, pred(answer)) == expected


def test_token_f1_partial_overlap():
    assert token_f1(LT_GOV, pred("Jim Tressel")) == 1.0
    # tokens [jim, tressel, of, ohio] vs [jim, tressel]: precision 1/2, recall 1 -> F1 2/3
    assert token_f1(LT_GOV, pred("Jim Tressel of Ohio")) == pytest.approx(2 / 3)
    assert token_f1(LT_GOV, pred("Jon Husted")) == 0.0


def test_token_f1_takes_the_best_alias():
    example = dspy.Example(question="q", answer="Osaka Prefecture, Japan", aliases=["Osaka"],
                           answerability="direct")
    assert token_f1(example, pred("Osaka")) == 1.0
    assert exact_match(example, pred("osaka prefecture japan")) == 1.0


def test_answer_metrics_on_unlikely_reward_only_abstention():
    assert exact_match(XYZZY, pred("No information was found about Xyzzyville.", "unlikely")) == 1.0
    assert token_f1(XYZZY, pred("The population of Xyzzyville cannot be determined.", "direct")) == 1.0
    assert exact_match(XYZZY, pred("Xyzzyville has 12,000 inhabitants.", "direct")) == 0.0
    assert token_f1(XYZZY, pred("Xyzzyville has 12,000 inhabitants.", "direct")) == 0.0


# -- abstention and answerability ---------------------------------------------------------

@pytest.mark.parametrize("answer, label, expected", [
    ("Xyzzyville has 12,000 inhabitants.", "unlikely", True),
    ("No information was found about Xyzzyville.", "direct", True),
    ("I could not find any source for this.", "direct", True),
    ("The population cannot be determined from the corpus.", "proxy_only", True),
    ("Unable to determine the population.", "direct", True),
    ("", "direct", True),
    ("The retrieved passages do not contain the answer.", "direct", True),
    ("It is not in the sources I read.", "direct", True),
    ("None of the passages give the mill's height.", "direct", True),
    ("Nothing in the sources says when it was built.", "direct", True),
    ("The sources are silent on this.", "direct", True),
    ("The information provided does not answer this.", "direct", True),
    ("After reading every source, I can't find it.", "direct", True),
    ("The documents found do not name the architect.", "direct", True),
    ("It is impossible to tell from what was found.", "direct", True),
    ("This information is not provided.", "direct", True),
    ("N/A", "direct", True),
    ("Answer: Not enough information to answer.", "direct", True),
    ("That detail is not available in these sources.", "direct", True),
    ("I don't have enough information to answer that.", "direct", True),
    ("Nothing in the retrieved text answers this.", "direct", True),
    ("The passages make no reference to a founder.", "direct", True),
    ("Unclear from the sources.", "direct", True),
    ("The mill's origin is unclear in these documents.", "direct", True),
    ("The choir does not have enough members to perform.", "direct", False),  # "enough" of something else
    ("Its meaning is unclear, scholars say.", "direct", False),
    ("Xyzzyville has 12,000 inhabitants.", "direct", False),
    ("Jim Tressel", "direct", False),
    ("Na", "direct", False),                                   # a chemical symbol, not "N/A"
    ("The album does not contain the song.", "direct", False),  # a claim about the album, not the passages
    ("The report found does not name the mill.", "direct", False),
    ("The mill is not in the town of Orla.", "direct", False),
    ("The album is not available on vinyl.", "direct", False),
    ("Not enough votes were cast to elect her.", "direct", False),
])
def test_abstains(answer, label, expected):
    assert abstains(pred(answer, label)) is expected


def test_a_crashed_prediction_does_not_abstain():
    assert abstains(None) is False
    assert abstains(dspy.Prediction(answerability="unlikely")) is False


def test_answerability_on_unlikely_zero_for_a_confident_made_up_fact():
    assert answerability_accuracy(XYZZY, pred("Xyzzyville has 12,000 inhabitants.", "direct")) == 0.0
    assert answerability_accuracy(XYZZY, pred("No information found.", "unlikely")) == 1.0
    assert answerability_accuracy(XYZZY, pred("Nothing about Xyzzyville exists.", "unlikely")) == 1.0
    assert answerability_accuracy(XYZZY, pred("No information was found about Xyzzyville.", "direct")) == 1.0


def test_answerability_on_direct_needs_an_answer_and_the_direct_label():
    assert answerability_accuracy(LT_GOV, pred("Jim Tressel", "direct")) == 1.0
    assert answerability_accuracy(LT_GOV, pred("Jon Husted", "direct")) == 1.0  # wrong answer, right judgement
    assert answerability_accuracy(LT_GOV, pred("No information was found.", "direct")) == 0.0
    assert answerability_accuracy(LT_GOV, pred("Jim Tressel", "proxy_only")) == 0.0
    assert answerability_accuracy(LT_GOV, pred("Jim Tressel", "unlikely")) == 0.0


def test_answerability_on_proxy_only_needs_the_proxy_label():
    hedged = "The exact number could not be found; proxies: 140,000 GitHub stars."
    assert answerability_accuracy(OLLAMA, pred(hedged, "proxy_only")) == 1.0
    assert answerability_accuracy(OLLAMA, pred("About 2 million people.", "direct")) == 0.0
    assert answerability_accuracy(OLLAMA, pred("No information found.", "unlikely")) == 0.0


# -- efficiency ---------------------------------------------------------------------------

@pytest.mark.parametrize("calls, stop, expected", [
    ([], "answered", 1.0),
    ([call("a")], "answered", 1.0),
    ([call("a"), call("b"), call("c")], "answered", 0.8),
    ([call("a"), call("a", False, "duplicate")], "answered", 0.8),
    ([call("a"), call("b")], "hard_budget", 0.6),
    ([call(q) for q in "abcdef"] + [call("a", False, "duplicate")] * 3, "hard_budget", 0.0),
    ([call("a")], "lm_error", 0.0),
])
def test_efficiency(calls, stop, expected):
    assert efficiency(LT_GOV, pred(tool_calls=calls, stop_reason=stop)) == pytest.approx(expected)


def test_efficiency_counts_a_call_with_a_blocked_reason_as_blocked():
    blocked = {"tool": "search_corpus", "args": {"query": "a"}, "status": "blocked", "blocked_reason": "duplicate"}
    assert efficiency(LT_GOV, pred(tool_calls=[call("a"), blocked])) == pytest.approx(0.8)


def test_efficiency_without_a_tool_call_record_is_zero():
    assert efficiency(LT_GOV, dspy.Prediction(answer="Jim Tressel", answerability="direct")) == 0.0


# -- combined -----------------------------------------------------------------------------

def test_weights_are_documented_and_sum_to_one():
    assert WEIGHTS == {"answer": 0.5, "answerability": 0.3, "efficiency": 0.2}
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)


def test_combined_metric():
    assert combined_metric(LT_GOV, pred()) == pytest.approx(1.0)
    # wrong answer, right judgement, one search: 0.3 + 0.2
    assert combined_metric(LT_GOV, pred("Jon Husted")) == pytest.approx(0.5)
    # verbose right answer (F1 2/3), three searches (efficiency 0.8)
    verbose = pred("Jim Tressel of Ohio", tool_calls=[call("a"), call("b"), call("c")])
    assert combined_metric(LT_GOV, verbose) == pytest.approx(0.5 * 2 / 3 + 0.3 + 0.2 * 0.8)


def test_combined_metric_gives_nothing_for_a_fast_made_up_answer():
    made_up = pred("Xyzzyville has 12,000 inhabitants.", "direct", tool_calls=[])
    assert efficiency(XYZZY, made_up) == 1.0
    assert combined_metric(XYZZY, made_up) == 0.0
    assert combined_metric(XYZZY, pred("No information was found about Xyzzyville.", "unlikely")) == 1.0


def test_combined_metric_with_a_trace_says_pass_or_fail():
    assert combined_metric(LT_GOV, pred(), trace=[]) is True
    assert combined_metric(LT_GOV, pred("Jon Husted"), trace=[]) is False
    assert PASS_THRESHOLD == 0.7


def test_combined_metric_runs_under_dspy_evaluate():
    class Fixed(dspy.Module):
        def forward(self, question):
            if "Xyzzyville" in question:
                return pred("No information was found.", "unlikely")
            return pred("Jim Tressel")

    result = dspy.Evaluate(devset=[LT_GOV, XYZZY], metric=combined_metric, num_threads=1,
                           display_progress=False)(Fixed())
    assert result.score == pytest.approx(100.0)


# -- GEPA feedback ------------------------------------------------------------------------

def test_gepa_metric_has_the_signature_gepa_binds():
    inspect.signature(gepa_feedback_metric).bind(None, None, None, None, None)
    result = gepa_feedback_metric(LT_GOV, pred(), None, "agent.step", None)
    assert isinstance(result, dspy.Prediction)
    assert result.score == pytest.approx(combined_metric(LT_GOV, pred()))
    assert "Correct answer" in result.feedback


def test_gepa_feedback_names_the_expected_answer():
    result = gepa_feedback_metric(LT_GOV, pred("Jon Husted"))
    assert result.score == pytest.approx(0.5)
    assert "Wrong answer" in result.feedback and "'Jon Husted'" in result.feedback
    assert "expected 'Jim Tressel'" in result.feedback and "James Tressel" in result.feedback


def test_gepa_feedback_on_a_partly_right_answer():
    feedback = gepa_feedback_metric(LT_GOV, pred("Jim Tressel of Ohio")).feedback
    assert "Partly right" in feedback and "0.67" in feedback


def test_gepa_feedback_on_loops_and_budget():
    calls = [call("ohio governor"), call("ohio governor", False, "duplicate of call 1"), call("b"), call("c"),
             call("d")]
    feedback = gepa_feedback_metric(LT_GOV, pred(tool_calls=calls, stop_reason="hard_budget")).feedback
    assert "Looped: 1 tool call(s) were blocked" in feedback
    assert "'ohio governor' (duplicate of call 1)" in feedback
    assert "Over budget" in feedback
    assert "Used 4 searches" in feedback


def test_gepa_feedback_on_a_missed_abstention():
    result = gepa_feedback_metric(XYZZY, pred("Xyzzyville has 12,000 inhabitants.", "direct"))
    assert result.score == 0.0
    assert "Missed abstention" in result.feedback and "made-up fact" in result.feedback


def test_gepa_feedback_on_giving_up_when_the_answer_exists():
    result = gepa_feedback_metric(LT_GOV, pred("No information was found.", "unlikely"))
    assert result.score == 0.0
    assert "Gave up" in result.feedback and "expected 'Jim Tressel'" in result.feedback


def test_gepa_feedback_on_proxy_only():
    wrong_label = gepa_feedback_metric(OLLAMA, pred("About 2 million people.", "direct")).feedback
    assert "'proxy_only'" in wrong_label and "proxies" in wrong_label
    right = gepa_feedback_metric(OLLAMA, pred("Not published; Ollama has 140,000 GitHub stars.", "proxy_only"))
    assert "Correctly recognised" in right.feedback and right.score > 0.5


def test_gepa_feedback_on_a_crash():
    result = gepa_feedback_metric(LT_GOV, dspy.Prediction(stop_reason="lm_error"))
    assert result.score == 0.0 and "crashed" in result.feedback and "lm_error" in result.feedback


# -- robustness: nothing ever raises ------------------------------------------------------

class Exploding:
    def __getattr__(self, name):
        raise RuntimeError("boom")


BROKEN = [
    None,
    object(),
    Exploding(),
    {},
    dspy.Prediction(),
    dspy.Prediction(answer=42, answerability="sure", stop_reason=None, tool_calls="many"),
    dspy.Prediction(answer="Jim Tressel", answerability="direct", stop_reason="answered",
                    tool_calls=[None, "junk", {"args": "not a dict", "executed": False}]),
]


# The metrics are called without their `never_raises` guard (`__wrapped__`): a broken prediction
# must be read as one, not crash the metric into the guard's 0.0.

@pytest.mark.parametrize("broken", BROKEN, ids=lambda b: type(b).__name__)
@pytest.mark.parametrize("metric", [exact_match, token_f1, answerability_accuracy, efficiency, combined_metric])
def test_metrics_tolerate_broken_predictions(metric, broken):
    score = metric.__wrapped__(LT_GOV, broken)
    assert 0.0 <= score <= 1.0


@pytest.mark.parametrize("broken", BROKEN[:6], ids=lambda b: type(b).__name__)
def test_crashed_or_partial_predictions_score_zero(broken):
    for metric in (exact_match, token_f1, answerability_accuracy, efficiency, combined_metric):
        assert metric.__wrapped__(LT_GOV, broken) == 0.0, metric.__name__
    result = gepa_feedback_metric.__wrapped__(LT_GOV, broken)
    assert result.score == 0.0 and "crashed" in result.feedback


def test_metrics_accept_plain_dicts():
    gold = {"question": "q", "answer": "Jim Tressel", "answerability": "direct"}
    assert combined_metric(gold, {"answer": "Jim Tressel", "answerability": "direct", "stop_reason": "answered",
                                  "tool_calls": []}) == pytest.approx(1.0)


def test_never_raises_turns_an_exception_into_zero():
    @never_raises()
    def broken_metric(example, pred, trace=None):
        raise KeyError("x")

    assert broken_metric(LT_GOV, pred()) == 0.0
    assert list(inspect.signature(broken_metric).parameters) == ["example", "pred", "trace"]
