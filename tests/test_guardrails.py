"""Each guardrail is a pure function over the scratchpad: tested here without any LM."""

import pytest

from deltaseek.programs.agent import guardrails as guard
from deltaseek.programs.agent.settings import STRATEGIES, TASK_PROFILES
from deltaseek.programs.tools.feedback import format_observation
from deltaseek.signatures.guidance import budget_guidance
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad, StepRecord, ToolCall
from deltaseek.programs.agent.text_calls import normalize_tool_name, parse_text_tool_call
from deltaseek.programs.tools import Hit, ToolResult, ToolStatus


def pad_with(*calls, question="Who is the lieutenant governor of Ohio?"):
    pad = Scratchpad(question=question)
    for i, (tool, query, status, count, new) in enumerate(calls, start=1):
        pad.steps.append(StepRecord(step=i))
        pad.tool_calls.append(ToolCall(step=i, tool=tool, args={"query": query}, status=status, executed=True,
                                       result_count=count, new_facts=new, top_score=10.0 if count else None))
    return pad


def test_exact_duplicate_is_blocked_after_normalization():
    pad = pad_with(("search_corpus", "Lieutenant Governor  Ohio", ToolStatus.SUCCESS, 3, 3))
    reason = guard.block_duplicate_call(pad, "search_corpus", "lieutenant governor ohio?")
    assert reason and "exact duplicate" in reason


def test_near_duplicate_needs_three_meaningful_tokens_of_difference():
    pad = pad_with(("search_corpus", "lieutenant governor Ohio", ToolStatus.SUCCESS, 3, 3))
    assert "near-duplicate" in guard.block_duplicate_call(pad, "search_corpus", "who is the Ohio lieutenant governor 2026")
    assert guard.block_duplicate_call(pad, "search_corpus", "Ohio lieutenant governor sworn February 2025") is None
    assert guard.block_duplicate_call(pad, "search_corpus", "Ohio lieutenant governor 2026 name", min_new_tokens=2) is None


def test_the_same_query_on_another_tool_is_not_a_duplicate():
    pad = pad_with(("web_search", "Ruby creator", ToolStatus.RATE_LIMITED, 0, 0))
    assert guard.block_duplicate_call(pad, "wikipedia", "Ruby creator") is None
    assert guard.block_duplicate_call(pad, "web_search", "Ruby creator") is not None


def test_a_query_of_only_stopwords_or_prompt_names_is_blocked():
    pad = pad_with()
    assert guard.block_duplicate_call(pad, "search_corpus", "who is the") is not None
    assert guard.block_echo_query("search_corpus", {"search_corpus", "query"}) is not None
    assert guard.block_echo_query("query", {"search_corpus", "query"}) is not None
    assert guard.block_echo_query("Ohio search", {"search_corpus", "query"}) is None


def test_a_query_repeating_a_phrase_is_junk_unless_the_question_repeats_it_as_often():
    assert guard.repeats_itself("Tarbury Herald Tarbury Herald Tarbury Herald")
    question = ("The Kell tower is a brick stack near the Kell tower works; how tall was the Kell tower "
                "before the works closed?")
    pad = Scratchpad(question=question)
    assert guard.reject_junk_query(question, pad, set()) is None  # the question quoted whole
    assert "repeats itself" in guard.reject_junk_query("Kell tower Kell tower Kell tower Kell tower height", pad, set())


def test_reroute_from_failed_tool_picks_a_healthy_untried_tool():
    pad = pad_with(("web_search", "Ruby creator", ToolStatus.RATE_LIMITED, 0, 0))
    assert guard.reroute_from_failed_tool(pad, "web_search", "Ruby creator", ["web_search", "wikipedia"]) == "wikipedia"
    assert guard.reroute_from_failed_tool(pad, "wikipedia", "Ruby creator", ["web_search", "wikipedia"]) is None
    assert guard.reroute_from_failed_tool(pad, "web_search", "x", ["web_search"]) is None


def test_budgets():
    pad = pad_with(*[("s", f"q{i} a b c", ToolStatus.SUCCESS, 1, 1) for i in range(4)])
    assert not guard.hard_budget_reached(pad, 5) and guard.hard_budget_reached(pad, 4)
    assert guard.search_limit_reached(pad, 4) and not guard.search_limit_reached(pad, None)
    assert "prefer next_move=synthesize" in budget_guidance(pad.step, soft_budget=4, hard_budget=8)
    assert "prefer" not in budget_guidance(pad.step, soft_budget=5, hard_budget=8)


@pytest.mark.parametrize("count,new,score,expected", [
    (0, 0, None, "found no results"),
    (3, 0, 10.0, "added no new facts"),
    (3, 2, 2.0, "much less relevant"),
    (3, 2, 9.0, None),
])
def test_refinement_triggers_on_quality_not_only_on_zero_results(count, new, score, expected):
    pad = pad_with(("s", "first query terms", ToolStatus.SUCCESS, 3, 3))
    pad.tool_calls[0].top_score = 10.0
    pad.steps.append(StepRecord(step=2))
    pad.tool_calls.append(ToolCall(step=2, tool="s", args={"query": "second"}, status=ToolStatus.SUCCESS,
                                   executed=True, result_count=count, new_facts=new, top_score=score))
    reason = guard.refinement_reason(pad)
    assert (reason is None) if expected is None else (expected in reason)


def test_a_tool_failure_calls_for_another_tool_not_a_refinement():
    pad = pad_with(("web", "q", ToolStatus.RATE_LIMITED, 0, 0))
    assert guard.refinement_reason(pad) is None


def test_search_exhaustion_after_three_searches_adding_nothing():
    pad = pad_with(("s", "a", ToolStatus.SUCCESS, 3, 3), ("s", "b", ToolStatus.SUCCESS, 3, 0),
                   ("s", "c", ToolStatus.NO_RESULTS, 0, 0))
    assert guard.weak_search_streak(pad) == 2 and not guard.search_exhausted(pad, 3)
    pad.tool_calls.append(ToolCall(step=4, tool="s", args={"query": "d"}, status=ToolStatus.SUCCESS,
                                   executed=True, result_count=2, new_facts=0))
    assert guard.search_exhausted(pad, 3)


def test_answerability_stops_search_only_once_evidence_exists():
    assert not guard.answerability_stops_search(pad_with(), "unlikely")
    searched = pad_with(("s", "a", ToolStatus.NO_RESULTS, 0, 0))
    assert guard.answerability_stops_search(searched, "proxy_only")
    assert not guard.answerability_stops_search(searched, "direct")


def test_strategies_are_used_in_the_task_kind_order_without_repeats():
    pad = pad_with()
    pad.strategy_order = list(TASK_PROFILES["aggregate_or_ill_posed"][2])
    assert guard.next_unused_strategy(pad) == "broader"
    pad.strategies_used += ["broader", "entity-focused"]
    assert guard.next_unused_strategy(pad) == "proxies"
    pad.strategies_used = list(STRATEGIES)
    assert guard.next_unused_strategy(pad) is None


def test_every_task_profile_orders_all_strategies():
    for soft, hard, order in TASK_PROFILES.values():
        assert soft < hard and sorted(order) == sorted(STRATEGIES)


def test_a_question_s_opening_word_is_never_a_subject():
    assert guard.question_subjects("Were Ann Holt and Bo Sim of the same nationality?") == ["Ann", "Holt", "Bo", "Sim"]
    assert guard.question_subjects("Describe the Vey bridge.") == ["Vey"]
    assert guard.question_subjects("Qui a créé le langage Ruby ?") == ["Ruby"]
    assert guard.question_subjects("Ada Lind was born where?") == ["Ada", "Lind"]


def test_an_answer_needs_support_in_the_facts_read():
    from deltaseek.programs.agent.checks import answer_failure

    pad = pad_with(question="Who is the mayor of Tarbury?")
    pad.facts.append(Fact(source="x", title="Ada Lind", text="Ada Lind was sworn in as mayor of Tarbury.", step=1))
    assert answer_failure("Ada Lind", pad, set()) is None
    assert "placeholder" in answer_failure("Not supplied for this particular example.", pad, set())
    assert "no passage read holds" in answer_failure("Olaf Sund", pad, set())
    restating = pad_with(question="Where was the designer of Tern born?")
    restating.facts.append(Fact(source="m", title="Ada Lind", text="The designer of Tern, born in Lundby", step=1))
    assert "repeats the question" in answer_failure("Where was the designer of Tern born?", restating, set())
    assert answer_failure("Lundby", restating, set()) is None


def test_facts_are_deduplicated_by_source():
    pad = pad_with()
    assert pad.add_facts([Fact(source="a", title="A", text="x", step=1), Fact(source="b", title="B", text="y", step=1)]) == 2
    assert pad.add_facts([Fact(source="a", title="A", text="x", step=2)]) == 0
    assert len(pad.facts) == 2


def test_scratchpad_save_is_atomic_and_round_trips(tmp_path):
    pad = pad_with(("s", "a", ToolStatus.SUCCESS, 3, 3))
    pad.save(tmp_path / "run.json")
    assert Scratchpad.model_validate_json((tmp_path / "run.json").read_text()) == pad
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


# --- tool feedback ----------------------------------------------------------------

def test_feedback_for_rate_limit_names_only_existing_alternatives():
    pad = pad_with(("web_search", "Ruby creator", ToolStatus.RATE_LIMITED, 0, 0))
    text = format_observation(ToolResult(tool="web_search", query="Ruby creator", status=ToolStatus.RATE_LIMITED),
                              pad.tried_queries, guard.untried_tools(pad, "Ruby creator", ["web_search", "wikipedia"], "web_search"))
    assert text.startswith("✗ web_search is rate limited")
    assert "Try wikipedia(query: \"Ruby creator\")" in text
    assert "duckduckgo" not in text and "Try web_search" not in text


def test_feedback_never_suggests_a_query_already_run_on_that_tool():
    pad = pad_with(("wikipedia", "Xyzzyville population", ToolStatus.NO_RESULTS, 0, 0),
                   ("web_search", "Xyzzyville population", ToolStatus.NO_RESULTS, 0, 0))
    text = format_observation(ToolResult(tool="web_search", query="Xyzzyville population", status=ToolStatus.NO_RESULTS),
                              pad.tried_queries,
                              guard.untried_tools(pad, "Xyzzyville population", ["web_search", "wikipedia"], "web_search"))
    assert "Try wikipedia" not in text
    assert "no information was found" in text


def test_feedback_for_success_shows_results_and_next_steps():
    pad = pad_with(("wikipedia", "Ruby creator", ToolStatus.SUCCESS, 1, 1))
    result = ToolResult(tool="wikipedia", query="Ruby creator", status=ToolStatus.SUCCESS,
                        hits=[Hit(title="Yukihiro Matsumoto", text="born in Osaka", id="matz")])
    text = format_observation(result, pad.tried_queries, guard.untried_tools(pad, "Ruby creator", ["wikipedia"], "wikipedia"))
    assert "✓ wikipedia found 1 result(s)" in text and "## [matz] Yukihiro Matsumoto" in text
    assert "NEXT STEPS:" in text and "synthesize" in text


# --- tool calls written as text ------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ('Action: web_search("ollama github stars")', ("web_search", "ollama github stars")),
    ("**Action:** `Web Search`\n**Action Input:** {\"query\": \"ollama github stars\"}", ("web_search", "ollama github stars")),
    ("Action: wikipedia\nAction Input: Ruby creator", ("wikipedia", "Ruby creator")),
    ('{"name": "wikipedia", "arguments": {"query": "Ruby creator"},}', ("wikipedia", "Ruby creator")),
    ("search(query='Xyzzyville')", ("web_search", "Xyzzyville")),
])
def test_parse_text_tool_call(text, expected):
    assert parse_text_tool_call(text, ["web_search", "wikipedia"]) == expected


@pytest.mark.parametrize("text", ["", "I think the answer is 42.", "Action: fly_to_moon(\"now\")"])
def test_unparseable_text_gives_no_call(text):
    assert parse_text_tool_call(text, ["web_search", "wikipedia"]) is None


def test_tool_names_are_normalized():
    assert normalize_tool_name("**Wikipedia**", ["web_search", "wikipedia"]) == "wikipedia"
    assert normalize_tool_name("web-search", ["web_search", "wikipedia"]) == "web_search"
    assert normalize_tool_name("calculator", ["web_search", "wikipedia"]) is None


# --- deterministic fallbacks of the agent ------------------------------------------------

from deltaseek.programs.agent.fallbacks import clean_items, heuristic_query, heuristic_task_kind  # noqa: E402


@pytest.mark.parametrize("question,kind", [
    ("What is the VectorStore interface?", "codebase"),
    ("What is the current rate of adoption for Ollama vs llama.cpp in the magnificent 7?", "aggregate_or_ill_posed"),
    ("Ollama versus llama.cpp: which is easier?", "comparison"),
    ("Where was the creator of Ruby born?", "multi_hop"),
    ("Who is the lieutenant governor of Ohio?", "lookup"),
])
def test_heuristic_task_kind(question, kind):
    assert heuristic_task_kind(question) == kind


def test_heuristic_queries_need_no_world_knowledge():
    pad = pad_with(("s", "governor lieutenant ohio", ToolStatus.SUCCESS, 3, 3))
    assert heuristic_query(pad, "direct") == "governor lieutenant ohio"
    assert heuristic_query(pad, "entity-focused") == "Ohio"
    assert heuristic_query(pad, "proxies") == "Ohio statistics usage downloads stars users"
    pad.facts.append(Fact(source="a", title="t", text="The vacancy was filled when Tressel was sworn; Tressel sworn.", step=1))
    narrower = heuristic_query(pad, "narrower")
    assert narrower.startswith("governor lieutenant ohio") and "tressel" in narrower and "sworn" in narrower


def test_clean_items_drops_padding():
    assert clean_items([" ,", " ", "", "No adoption rate is published", None]) == ["No adoption rate is published"]


def test_subjects_missing_from_facts_catches_evidence_about_something_else():
    pad = pad_with(question="What is the population of Xyzzyville?")
    pad.facts.append(Fact(source="r", title="Ruovesi", text="The municipality has a population of 4,500.", step=1))
    pad.subject_presence = {"Xyzzyville": False}  # the tool's collection names it nowhere
    assert guard.subjects_missing_from_facts(pad) == ["Xyzzyville"]
    pad.subject_presence = {"Xyzzyville": True}  # it does: the passages read so far are about something else
    assert guard.subjects_missing_from_facts(pad) == []
    pad.subject_presence = {"Xyzzyville": None}  # no tool can tell: missing once a search named it
    assert guard.subjects_missing_from_facts(pad) == []
    pad.tool_calls.append(ToolCall(step=1, tool="web", args={"query": "Xyzzyville population"},
                                   status=ToolStatus.NO_RESULTS, executed=True))
    assert guard.subjects_missing_from_facts(pad) == ["Xyzzyville"]
    pad = pad_with(question="Who is the lieutenant governor of Ohio?")
    pad.facts.append(Fact(source="o", title="Lieutenant Governor of Ohio", text="The office ...", step=1))
    assert guard.subjects_missing_from_facts(pad) == []
    pad = pad_with(question="Who chairs the TWA?")  # initials the facts spell out are no missing subject
    pad.facts.append(Fact(source="w", title="Water", text="The Tarbury Water Authority is chaired by Ada Lind.", step=1))
    pad.subject_presence = {"TWA": False}
    assert guard.subjects_missing_from_facts(pad) == []


def test_the_program_s_answer_quotes_the_fact_about_the_subject_when_it_abstains():
    from deltaseek.programs.agent.answer import program_answer
    from deltaseek.programs.agent.evidence import Reading

    pad = pad_with(question="Where was the designer of Tern born?")
    pad.facts += [Fact(source="g", title="Olaf Sund", text="Olaf was born in Haarlem.", step=1),
                  Fact(source="m", title="Ada Lind", text="Designer of Tern, born in Lundby.", step=1)]
    final = program_answer(pad, Reading(answerability="unknown"))
    assert "Lundby" in final.text and final.sources == ["m"] and final.answerability == "unlikely"
    pad.model_unusable = True  # an unusable model shows nothing about the answer's existence
    assert program_answer(pad, Reading(answerability="unknown")).answerability == "unknown"


def test_a_sentence_of_the_models_own_is_not_a_query():
    pad = pad_with(question="Where was the creator of Ruby born?")
    invented = "The creator of Ruby born in 2010 in the city of London, UK, is a renowned and influential figure in"
    assert "sentence of the model's own" in guard.reject_junk_query(invented, pad, set())
    # keywords, the question itself and a list of new names are queries
    for query in ("Ruby creator birthplace", "Where was the creator of Ruby born?",
                  "Ruby creator Matsumoto Osaka Japan Tottori Shimane Hiroshima Okayama"):
        assert guard.reject_junk_query(query, pad, set()) is None, query
