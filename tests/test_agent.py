"""The guarded agent against scripted LMs that reproduce the seeds' failure modes."""

import re

import pytest

from deltaseek import AgentSettings, DeltaSeek
from deltaseek.programs.agent import guardrails as guard
from deltaseek.programs.text import named_entities
from deltaseek.programs.index import CorpusIndex, Passage
from deltaseek.programs.tools import LocalCorpusSearch, ToolResult, ToolStatus
from tests.scripted import ScriptedEngine, ScriptedWeb, classify, followed_label, scripted_lm, step, synth

STUCK_QUERY = "current adoption rates Ollama vs Llama.cpp"
MAG7 = "What is the current rate of adoption for Ollama vs llama.cpp in the magnificent 7?"


def run(engine, tools, question, use_lm, **settings):
    program = DeltaSeek(tools=tools, settings=AgentSettings(**settings))
    with use_lm(scripted_lm(engine)):
        return program(question=question)


def executed(pred):
    return [c for c in pred.tool_calls if c["executed"]]


def blocked(pred):
    return [c for c in pred.tool_calls if not c["executed"]]


def test_seed_000_stuck_query_runs_once_and_ends_with_a_proxy_answer(bundled_index, use_lm):
    proxies = iter(["ollama github stars docker pulls", "llama.cpp contributors pypi downloads bindings",
                    "ollama llama.cpp production case studies teams"])
    engine = ScriptedEngine(
        classify=classify("aggregate_or_ill_posed"),
        step=lambda _: step(STUCK_QUERY),  # the seed's failure: the same query at every step
        diversify=lambda _: {"query": next(proxies, STUCK_QUERY)},
        judge=lambda _: {"answerability": "proxy_only", "reason": "no adoption rate is published"},
        synthesize=lambda _: synth(
            "No adoption-rate figure exists; by proxies Ollama (140,000+ GitHub stars) is more popular "
            "among developers, while llama.cpp is embedded in many products.",
            sources=["ollama-github", "llamacpp-github"], answerability="proxy_only",
            caveats=["No published adoption rate for these companies"],
            assumptions=["'magnificent 7' read as Alphabet, Amazon, Apple, Meta, Microsoft, Nvidia, Tesla"]),
    )
    pred = run(engine, [LocalCorpusSearch(bundled_index)], MAG7, use_lm)

    stuck = [c for c in pred.tool_calls if c["args"]["query"] == STUCK_QUERY]
    assert sum(c["executed"] for c in stuck) == 1
    # the evidence reads proxy_only (star counts, no rate) after the first search, so the loop stops
    # sooner than it did when the LM's label decided; the repeat it proposed was still blocked
    assert len([c for c in stuck if not c["executed"]]) >= 1
    assert all("duplicate" in c["blocked_reason"] for c in stuck if not c["executed"])
    assert len(executed(pred)) <= 6  # the aggregate kind's hard budget
    assert pred.answerability == "proxy_only"
    assert "stars" in pred.answer and pred.caveats
    assert any("magnificent 7" in a for a in pred.assumptions)
    assert "ollama-github" in pred.sources


def test_ohio_refines_after_passages_that_do_not_name_the_holder(bundled_index, use_lm):
    def ohio_step(prompt):
        if "Tressel" in prompt:
            return step(move="synthesize", evidence=["Jim Tressel was sworn in in February 2025"])
        if "lieutenant governor Ohio" in prompt:  # the first search ran and named nobody
            return step("Ohio lieutenant governor sworn in February 2025")
        return step("lieutenant governor Ohio")

    engine = ScriptedEngine(
        classify=classify("lookup"), step=ohio_step,
        synthesize=lambda p: synth("Jim Tressel is the lieutenant governor of Ohio, sworn in in February 2025.",
                                   sources=["jim-tressel"]) if "Tressel" in p else synth("unknown"))
    pred = run(engine, [LocalCorpusSearch(bundled_index)], "Who is the lieutenant governor of Ohio?", use_lm)

    first, second = executed(pred)[:2]
    assert first["args"]["query"] != second["args"]["query"]
    trajectory = pred.scratchpad
    first_sources = [f.source for f in trajectory.facts if f.step == 1]
    assert first_sources and "jim-tressel" not in first_sources
    assert "Jim Tressel" in pred.answer
    assert pred.sources == ["jim-tressel"]
    assert pred.stop_reason == "answered" and "Tressel" in pred.answer


def test_xyzzyville_stops_quickly_with_no_information_found(bundled_index, use_lm):
    queries = iter(["Xyzzyville population", "Xyzzyville town census residents", "Xyzzyville city demographics data"])
    engine = ScriptedEngine(
        classify=classify("lookup"), step=lambda _: step(next(queries, "Xyzzyville population")),
        judge=lambda _: {"answerability": "unlikely", "reason": "no source mentions Xyzzyville"},
        synthesize=lambda _: synth("Xyzzyville has 12,000 inhabitants.", answerability="direct"))
    pred = run(engine, [LocalCorpusSearch(bundled_index)], "What is the population of Xyzzyville?", use_lm)

    assert len(executed(pred)) <= 3
    assert all(c["status"] == "no_results" for c in executed(pred))
    assert pred.answerability == "unlikely"
    assert pred.answer.startswith("No information found")  # the made-up figure is not passed on
    assert "12,000" not in pred.answer


@pytest.mark.parametrize("profile", ["capable", "small"])
def test_a_search_for_a_misspelt_name_that_finds_nothing_does_not_end_the_run(use_lm, profile):
    """A model that misspells the question's subject in its query ("Whitnesh") finds nothing and
    calls the question unanswerable; nothing read says so, the subject is in the collection, so
    the program searches on, and the answer comes from what was found (the model's, or on the
    small profile the reader's)."""
    index = CorpusIndex.build([
        Passage(id="w", title="Whitnash", text="Whitnash is a market town on the river Leam, south of Harbury."),
        Passage(id="h", title="Harbury", text="Harbury is a village of limestone quarries and a windmill.")])
    engine = ScriptedEngine(
        classify=classify("lookup"),
        step=lambda _: step("Whitnesh river town", answerability="unlikely"),
        judge=lambda _: {"answerability": "unlikely", "reason": "no passage was found"},
        synthesize=lambda prompt: synth("The river Leam.", ["w"]) if "Leam" in prompt else
        synth("No information found.", answerability="unlikely"))
    pred = run(engine, [LocalCorpusSearch(index)], "Which river flows through Whitnash?", use_lm, profile=profile)

    ran = executed(pred)
    assert ran[0]["args"]["query"] == "Whitnesh river town" and ran[0]["status"] == "no_results"
    assert len(ran) >= 2 and ran[1]["result_count"] > 0, ran
    assert "Leam" in pred.answer and pred.answerability == followed_label(pred), (pred.answer, pred.answerability)


def rate_limited_web() -> ScriptedWeb:
    return ScriptedWeb(lambda query, _n: ToolResult(tool="web_search", query=query,
                                                   status=ToolStatus.RATE_LIMITED, note="HTTP 429"))


def test_rate_limited_tool_feedback_names_the_alternative_and_the_agent_switches(bundled_index, use_lm):
    def follow_feedback(prompt):
        suggested = re.search(r"Try (\w+)\(query: \"([^\"]+)\"\)", prompt)
        if "Matsumoto" in prompt:
            return step(move="synthesize")
        if suggested:
            return step(suggested.group(2), tool=suggested.group(1))
        return step("Ruby programming language creator", tool="web_search")

    web = rate_limited_web()
    engine = ScriptedEngine(classify=classify("multi_hop"), step=follow_feedback,
                            synthesize=lambda _: synth("Yukihiro Matsumoto created Ruby.", sources=["ruby-lang"]))
    pred = run(engine, [web, LocalCorpusSearch(bundled_index)], "Who created Ruby?", use_lm)

    step_prompts = [text for kind, text in engine.prompts if kind == "step"]
    assert "search_corpus(query: \"Ruby programming language creator\")" in step_prompts[1]
    assert "rate limited" in step_prompts[1]
    calls = executed(pred)
    assert calls[0]["tool"] == "web_search" and calls[0]["status"] == "rate_limited"
    assert calls[1]["tool"] == "search_corpus" and calls[1]["status"] == "success"
    assert web.calls == 1


def test_a_failed_tool_is_not_called_again_even_when_the_lm_insists(bundled_index, use_lm):
    queries = iter(["Ruby programming language creator", "Ruby creator Yukihiro Matsumoto birthplace"])
    web = rate_limited_web()
    engine = ScriptedEngine(classify=classify("multi_hop"),
                            step=lambda p: step(next(queries), tool="web_search") if "Osaka" not in p else step(move="synthesize"),
                            synthesize=lambda _: synth("He was born in Osaka Prefecture.", sources=["matz"]))
    pred = run(engine, [web, LocalCorpusSearch(bundled_index)], "Where was the creator of Ruby born?", use_lm)
    calls = executed(pred)
    assert web.calls == 1
    assert [c["tool"] for c in calls[:2]] == ["web_search", "search_corpus"]
    assert calls[1]["origin"] == "rerouted" and all(c["tool"] == "search_corpus" for c in calls[1:])


@pytest.mark.parametrize("reply", [
    'Thought: I should look this up.\nAction: search_corpus("Ruby programming language creator")',
    "**Thought:** need the creator\n**Action:** Search_Corpus\n**Action Input:** \"Ruby programming language creator\"",
    'I will call {"tool": "search corpus", "args": {"query": "Ruby programming language creator"}}',
])
def test_a_tool_call_written_as_text_is_parsed_and_executed(bundled_index, use_lm, reply):
    replies = iter([reply])
    engine = ScriptedEngine(classify=classify("lookup"),
                            step=lambda _: next(replies, "nothing useful"),
                            synthesize=lambda _: synth("Yukihiro Matsumoto designed Ruby.", sources=["ruby-lang"]))
    pred = run(engine, [LocalCorpusSearch(bundled_index)], "Who created Ruby?", use_lm)
    first = executed(pred)[0]
    assert first["args"]["query"] == "Ruby programming language creator"
    assert first["origin"] == "text" and first["tool"] == "search_corpus"
    assert "Matsumoto" in pred.answer


@pytest.mark.parametrize("failure", ["garbage", "raises"])
def test_an_unusable_lm_still_yields_an_answer_with_the_reason(bundled_index, use_lm, failure):
    if failure == "garbage":
        engine = ScriptedEngine(default=lambda _: "}}} qwerty ::: [[ ## nothing ## ]]")
    else:
        engine = ScriptedEngine(default=RuntimeError("the model server fell over"))
    pred = run(engine, [LocalCorpusSearch(bundled_index)], "Who is the lieutenant governor of Ohio?", use_lm)
    assert pred.stop_reason == "lm_error"
    assert any("could not be used" in c for c in pred.caveats)
    # After max_lm_failures unusable replies the program goes on alone: its own
    # queries, then the reader's answer; an unusable model is never reported as "unlikely".
    calls = executed(pred)
    assert calls and all(c["origin"] in ("program", "tool_first") for c in calls)
    assert "Tressel" in pred.answer and pred.answerability == followed_label(pred)
    assert pred.scratchpad.steps[2].note.endswith("the program goes on with its own moves")


@pytest.mark.parametrize("hard_budget", [1, 2, 5, 8])
def test_the_hard_budget_is_never_exceeded(bundled_index, use_lm, hard_budget):
    words = iter(["ohio river", "ruby gemstone", "times square", "github stars", "python language",
                  "census population", "magnificent film", "rails framework", "lieutenant senate", "gerganov gguf"])
    engine = ScriptedEngine(classify=classify("multi_hop"),
                            # each query keeps a term of the question, so the query guard lets it run
                            step=lambda _: step(f"{next(words)} governor {hard_budget} unique terms"),
                            synthesize=lambda _: synth("A best-effort answer about Ohio.", caveats=["incomplete"]))
    pred = run(engine, [LocalCorpusSearch(bundled_index)], "Who is the lieutenant governor of Ohio?", use_lm,
               hard_budget=hard_budget, soft_budget=1, exhaustion_window=10)
    assert len(executed(pred)) <= hard_budget
    assert pred.steps <= hard_budget
    assert pred.stop_reason == "hard_budget"
    assert any("budget" in c for c in pred.caveats)


def test_max_searches_gives_one_search_plus_one_refinement(bundled_index, use_lm):
    queries = iter(["lieutenant governor Ohio", "Ohio lieutenant governor sworn in February 2025", "Jim Tressel coach"])
    engine = ScriptedEngine(classify=classify("lookup"), step=lambda _: step(next(queries)),
                            synthesize=lambda _: synth("Jim Tressel.", sources=["jim-tressel"]))
    pred = run(engine, [LocalCorpusSearch(bundled_index)], "Who is the lieutenant governor of Ohio?", use_lm,
               max_searches=2)
    assert len(executed(pred)) == 2
    assert pred.stop_reason == "max_searches"


def test_a_final_answer_before_any_search_is_not_accepted(bundled_index, use_lm):
    engine = ScriptedEngine(classify=classify("lookup"),
                            step=lambda p: step(move="synthesize"),
                            synthesize=lambda _: synth("Jim Tressel is the lieutenant governor.", sources=["jim-tressel"]))
    pred = run(engine, [LocalCorpusSearch(bundled_index)], "Who is the lieutenant governor of Ohio?", use_lm)
    calls = executed(pred)
    assert calls[0]["origin"] == "tool_first"
    # The office passages name no person: the guardrails refine with the program's own queries
    # instead of accepting an answer with no typed span, then the answer is accepted.
    assert all(c["origin"] == "program" and c["proposed"] == "synthesize" for c in calls[1:])
    assert pred.stop_reason == "answered" and "Tressel" in pred.answer


def test_proxy_only_answerability_ends_the_search(bundled_index, use_lm):
    engine = ScriptedEngine(classify=classify("aggregate_or_ill_posed"),
                            step=lambda p: step("ollama github stars downloads", answerability="proxy_only"),
                            synthesize=lambda _: synth("Only proxies exist: Ollama has 140,000+ stars.",
                                                       answerability="proxy_only"))
    pred = run(engine, [LocalCorpusSearch(bundled_index)], MAG7, use_lm)
    assert len(executed(pred)) == 1
    assert pred.stop_reason == "answerability"
    assert pred.answerability == "proxy_only"


def test_one_lm_call_per_step_and_one_for_the_answer(bundled_index, use_lm):
    queries = iter(["lieutenant governor Ohio", "Ohio lieutenant governor sworn in February 2025"])
    engine = ScriptedEngine(classify=classify("lookup"),
                            step=lambda p: step(move="synthesize") if "Tressel" in p else step(next(queries)),
                            synthesize=lambda _: synth("Jim Tressel.", sources=["jim-tressel"]))
    pred = run(engine, [LocalCorpusSearch(bundled_index)], "Who is the lieutenant governor of Ohio?", use_lm)
    total = sum(engine.calls.values())
    assert engine.calls["diversify"] == engine.calls["judge"] == engine.calls["classify"] == 0
    assert total == pred.steps + 1 == pred.scratchpad.lm_calls  # one per step, and the synthesis


def test_the_prompt_grows_with_facts_not_with_steps(bundled_index, use_lm):
    engine = ScriptedEngine(classify=classify("multi_hop"),
                            step=lambda _: step("lieutenant governor Ohio"),
                            diversify=lambda _: {"query": "lieutenant governor Ohio"},
                            synthesize=lambda _: synth("Ohio's lieutenant governor."))
    run(engine, [LocalCorpusSearch(bundled_index)], "Who is the lieutenant governor of Ohio?", use_lm)
    step_prompts = [text for kind, text in engine.prompts if kind == "step"]
    assert len(step_prompts) >= 3
    # Raw observations are not accumulated: a prompt holds the last two notes (a blocked call's and
    # the search run instead), never one per step so far.
    assert [p.count("NEXT STEPS") for p in step_prompts[1:]] == [1] + [2] * (len(step_prompts) - 2)


def test_with_no_lm_configured_the_call_raises_dspys_own_error(bundled_index):
    import dspy

    program = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])
    with dspy.context(lm=None), pytest.raises(ValueError, match="No LM is loaded"):
        program(question="Who created Ruby?")


def test_an_lm_that_cannot_be_reached_ends_the_run_with_its_error(bundled_index, use_lm):
    class APIConnectionError(Exception):  # litellm's class name: the check goes by name
        pass

    from dspy.utils.exceptions import LMError

    engine = ScriptedEngine(default=APIConnectionError("Connection refused: http://127.0.0.1:9"))
    with pytest.raises(LMError, match="Connection refused"):  # DSPy's error, wrapping the provider's
        run(engine, [LocalCorpusSearch(bundled_index)], "Who created Ruby?", use_lm)


def test_when_every_search_fails_the_answer_says_so_and_is_not_unlikely(use_lm):
    down = ScriptedWeb(lambda q, n: ToolResult(tool="web_search", query=q, status=ToolStatus.UNAVAILABLE,
                                               note="cannot reach the search service (ConnectError)"))
    engine = ScriptedEngine(classify=classify("lookup"), step=lambda _: step("Ruby creator", tool="web_search"),
                            synthesize=lambda _: synth("No information found about Ruby.", answerability="unlikely"))
    pred = run(engine, [down], "Who created Ruby?", use_lm)
    assert pred.answer.startswith("No answer: every search failed (web_search: cannot reach the search service")
    assert pred.answerability != "unlikely"
    assert any("web_search failed" in c for c in pred.caveats)


def test_a_subject_is_not_declared_missing_before_a_search_has_named_it(use_lm):
    """The model's first query is about something else; passages about something else are not
    evidence that the subject has none: the program searches for the subject before it says so."""
    from deltaseek.programs.tools import Hit

    def respond(query, n):
        if "ohio" in query.lower():
            hit = Hit(id="oh", title="Ohio", text="Ohio is a state in the Midwest. Its capital and largest city is Columbus.")
        else:
            hit = Hit(id="ny", title="New York", text="New York is the most populous city of the United States.")
        return ToolResult(tool="web_search", query=query, status=ToolStatus.SUCCESS, hits=[hit])

    web = ScriptedWeb(respond)
    engine = ScriptedEngine(classify=classify("lookup"),
                            step=lambda _: step("capital United States New York", tool="web_search", answerability="unlikely"),
                            synthesize=lambda _: synth("The capital is New York.", answerability="unlikely"))
    pred = run(engine, [web], "What is the capital of Ohio?", use_lm)
    queries = [c["args"]["query"].lower() for c in executed(pred)]
    assert "ohio" not in queries[0] and any("ohio" in q for q in queries[1:])
    assert "Columbus" in pred.answer and pred.answerability == "direct"


def test_a_failed_call_that_still_brought_passages_is_answered_from_them(use_lm):
    """A cluster with one shard down reports `unavailable` with the other shards' hits: those are
    evidence, so the answer is read from them, and the fault is a caveat."""
    from deltaseek.programs.tools import Hit

    hit = Hit(id="ruby", title="Ruby (programming language)", text="Ruby was created by Yukihiro Matsumoto in 1995.")
    half_down = ScriptedWeb(lambda q, n: ToolResult(tool="web_search", query=q, status=ToolStatus.UNAVAILABLE,
                                                    hits=[hit], note="agent 127.0.0.1:9313: connect() failed"))
    engine = ScriptedEngine(classify=classify("lookup"), step=lambda _: step("Ruby creator", tool="web_search"),
                            synthesize=lambda _: synth("Yukihiro Matsumoto created Ruby.", sources=["ruby"]))
    pred = run(engine, [half_down], "Who created Ruby?", use_lm)
    assert "Matsumoto" in pred.answer and "every search failed" not in pred.answer
    assert any("connect() failed" in c for c in pred.caveats)


@pytest.mark.parametrize("question,problem", [("", "empty"), ("x" * 20_000, "20,000 characters")])
def test_an_empty_or_huge_question_is_refused_before_any_work(bundled_index, question, problem):
    from deltaseek import UsageError

    with pytest.raises(UsageError, match=problem):
        DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])(question=question)


def test_a_subject_written_beside_another_script_is_found(bundled_index, use_lm):
    """"Rubyの作者": the subject is "Ruby", split where the script changes, and the facts mention it;
    read whole, "Rubyの作者" would be a subject no passage mentions, and the answer "No information found"."""
    question = "Rubyの作者 Yukihiro Matsumoto はどこで生まれましたか？"
    engine = ScriptedEngine(step=lambda _: step("Yukihiro Matsumoto Ruby"),
                            synthesize=lambda _: synth("大阪", sources=["matz"]))
    pred = run(engine, [LocalCorpusSearch(bundled_index)], question, use_lm)
    assert named_entities(question) == ["Ruby", "Yukihiro", "Matsumoto"]
    assert guard.subjects_missing_from_facts(pred.scratchpad) == []
    # the model's answer in the question's language is shown as written: a translation of what the
    # passages say is not a claim nothing read supports
    assert pred.answerability == "direct" and pred.sources == ["matz"] and pred.answer == "大阪"


def test_the_budget_line_counts_the_step_about_to_run(bundled_index, use_lm):
    engine = ScriptedEngine(classify=classify("lookup"), step=lambda _: step(move="synthesize"),
                            synthesize=lambda _: synth("Jim Tressel", sources=["jim-tressel"]))
    run(engine, [LocalCorpusSearch(bundled_index)], "Who is the lieutenant governor of Ohio?", use_lm)
    first, second = [text for kind, text in engine.prompts if kind == "step"][:2]
    assert "Step 1 of at most 6 (6 left)" in first and "Step 2 of at most 6" in second


# --- compact prompts (the embedded model's default) ---------------------------------------------

OHIO = "Who is the lieutenant governor of Ohio?"


def test_compact_calls_ask_only_for_the_outputs_the_loop_uses(bundled_index, use_lm):
    # "What is RubyKaigi?" asks for no typed span and no passage says what it is ("RubyKaigi is a ..."):
    # the evidence cannot decide, and the model answers.
    engine = ScriptedEngine(classify=classify("lookup"), step=lambda _: step("RubyKaigi conference"),
                            synthesize=lambda _: synth("RubyKaigi is the largest conference about Ruby, held in Japan."))
    pred = run(engine, [LocalCorpusSearch(bundled_index)], "What is RubyKaigi?", use_lm, compact_prompts=True)
    step_prompts = [text for kind, text in engine.prompts if kind == "step"]
    synth_prompts = [text for kind, text in engine.prompts if kind == "synthesize"]
    assert step_prompts and all("`new_evidence`" not in p and "`answerability`" not in p for p in step_prompts)
    assert len(synth_prompts) == 1 and "`caveats`" not in synth_prompts[0] and "`answer`" in synth_prompts[0]
    assert pred.answer_origin == "lm" and "conference" in pred.answer


def test_compact_search_ends_without_a_step_call_once_the_facts_answer(bundled_index, use_lm):
    # The embedded model's habit: a field name for a query at every step. The program's queries run
    # instead; once a fact names a person for "who", the next step would only be replaced by synthesis.
    engine = ScriptedEngine(classify=classify("lookup"), step=lambda _: step("query"),
                            synthesize=lambda _: synth("query"))
    # (the capable profile, set: left to the replies, the first echo would make it the small one)
    compact = run(engine, [LocalCorpusSearch(bundled_index)], OHIO, use_lm, compact_prompts=True, profile="capable")
    assert compact.stop_reason == "answered" and "Tressel" in compact.answer
    assert engine.calls["step"] == len(executed(compact))  # a step call before each search, none after
    # the typed span decides the answer: the model is not asked to synthesize one
    assert engine.calls["synthesize"] == 0 and compact.answer_origin == "extracted"

    full_engine = ScriptedEngine(classify=classify("lookup"), step=lambda _: step("query"),
                                 synthesize=lambda _: synth("query"))
    full = run(full_engine, [LocalCorpusSearch(bundled_index)], OHIO, use_lm, compact_prompts=False, profile="capable")
    assert "Tressel" in full.answer and full_engine.calls["step"] == len(executed(full)) + 1


def test_a_duplicate_left_after_diversifying_gives_way_to_the_programs_own_query(bundled_index, use_lm):
    engine = ScriptedEngine(classify=classify("lookup"), step=lambda _: step("lieutenant governor Ohio"),
                            diversify=lambda _: {"query": "lieutenant governor Ohio"},
                            synthesize=lambda _: synth("Jim Tressel"))
    pred = run(engine, [LocalCorpusSearch(bundled_index)], OHIO, use_lm)
    queries = [c["args"]["query"] for c in executed(pred)]
    assert len(queries) == len(set(queries)) >= 2
    assert any(c["origin"] == "program" for c in executed(pred))
    assert "Tressel" in pred.answer


def test_an_answer_that_nothing_was_found_claims_no_quote(bundled_index, use_lm):
    engine = ScriptedEngine(classify=classify("lookup"), step=lambda _: step("Xyzzyville population"),
                            synthesize=lambda _: synth("Xyzzyville has 12,000 people."))
    pred = run(engine, [LocalCorpusSearch(bundled_index)], "What is the population of Xyzzyville?", use_lm)
    assert pred.answer.startswith("No information found about Xyzzyville")
    assert not any("quotes" in c for c in pred.caveats)


def test_the_trace_a_demo_is_bootstrapped_from_holds_what_the_program_did(bundled_index, use_lm):
    import dspy

    engine = ScriptedEngine(classify=classify("lookup"), step=lambda _: step("query"),
                            synthesize=lambda _: synth("2018-2022"))
    program = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)],
                        settings=AgentSettings(profile="capable", compact_prompts=False))
    with use_lm(scripted_lm(engine)), dspy.context(trace=[]):
        pred = program(question=OHIO)
        trace = list(dspy.settings.trace)
    steps = [out for predictor, _, out in trace if predictor is program.step_delta]
    [synthesis] = [out for predictor, _, out in trace if predictor is program.synthesize]
    run_queries = [c["args"]["query"] for c in executed(pred)]
    traced_queries = [out["query"] for out in steps if out["next_move"] == "search"]
    assert traced_queries == run_queries and "query" not in traced_queries
    assert synthesis["answer"] == pred.answer and "Tressel" in pred.answer
    # the trajectory still shows what the model proposed
    assert pred.proposed_answer == "2018-2022"


def test_a_rejected_query_is_never_handed_back_when_the_program_has_no_move_left(bundled_index, use_lm):
    """With every strategy used and nothing left to search, a junk query the
    checks rejected gives way to the answer, not to itself."""
    from deltaseek.programs.agent.moves import Move, dispose
    from deltaseek.programs.agent.scratchpad import Scratchpad, ToolCall, StepRecord
    from deltaseek.programs.agent.settings import STRATEGIES
    from deltaseek.programs.tools import ToolStatus

    program = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])
    pad = Scratchpad(question="Who is the lieutenant governor of Ohio?", strategies_used=list(STRATEGIES))
    pad.steps.append(StepRecord(step=1))
    pad.tool_calls.append(ToolCall(step=1, tool="search_corpus", args={"query": "lieutenant governor ohio"},
                                   status=ToolStatus.SUCCESS, executed=True))
    with use_lm(scripted_lm(ScriptedEngine())):
        move = dispose(program, pad, Move(False, "search_corpus", "query"))
    assert move.synthesize and move.origin == "program" and move.proposed == "query"
    assert "field names" in move.replaced_because


TARBURY = [Passage(id=f"t{i}", title=title, text=text) for i, (title, text) in enumerate([
    ("Tarbury", "Tarbury is a market town on the river Vell, known for its bell foundry and its wool trade."),
    ("Tarbury bell foundry", "The Tarbury bell foundry cast bells for churches across the county until 1911."),
    ("Vell (river)", "The Vell rises in the hills north of Tarbury and joins the sea at Portmere."),
    ("Portmere", "Portmere is a harbour town whose wool exports came down the Vell from Tarbury."),
])]


def junk_after_first_query(text: str) -> dict:
    """A small model's steps: one usable query, then its own field name as the query (an echo)."""
    return step("Tarbury bell foundry founder") if "Facts: none yet" in text else step("query")


@pytest.mark.parametrize("limit, step_calls", [(None, 2), (0, None)])
def test_small_profile_program_leads_after_a_replaced_move(use_lm, limit, step_calls):
    """Once the checks replaced the small model's move, the model is not asked for moves
    again (its step calls cost seconds for nothing); it is still asked with limit 0."""
    engine = ScriptedEngine(step=junk_after_first_query, synthesize=lambda _: synth("unknown"))
    pred = run(engine, [LocalCorpusSearch(CorpusIndex.build(TARBURY))], "Who founded the Tarbury bell foundry?",
               use_lm, profile="small", replaced_moves_before_program_leads=limit,
               search_caps_from_task_kind=False)  # a lookup's cap would end it after two searches
    notes = " ".join(s.note for s in pred.scratchpad.steps)
    if step_calls is None:  # never: every step asks the model, and each junk query is replaced again
        assert engine.calls["step"] == pred.steps and not pred.scratchpad.program_leads
        assert "the program makes the next moves" not in notes
    else:
        assert engine.calls["step"] == step_calls < pred.steps
        assert pred.scratchpad.program_leads and "the program makes the next moves" in notes
    assert len(executed(pred)) >= 3  # the program's own queries went on either way
    assert all(c["args"]["query"] != "query" for c in executed(pred))


@pytest.mark.parametrize("profile, caps, capped", [("small", None, True), ("small", False, False),
                                                   ("capable", None, False), ("capable", True, True)])
def test_a_lookup_gets_one_search_and_one_refinement_where_the_kind_caps_searches(use_lm, profile, caps, capped):
    """A lookup asks for one fact of one thing; by default the small profile stops it after
    two searches (TASK_SEARCH_CAPS), and says so; a capable model decides itself when to answer."""
    engine = ScriptedEngine(classify=classify("lookup"), step=junk_after_first_query,
                            synthesize=lambda _: synth("unknown"))
    pred = run(engine, [LocalCorpusSearch(CorpusIndex.build(TARBURY))], "Who founded the Tarbury bell foundry?",
               use_lm, profile=profile, search_caps_from_task_kind=caps)
    assert pred.scratchpad.task_kind == "lookup"
    if capped:
        assert len(executed(pred)) == 2 and pred.stop_reason == "max_searches"
        assert "The search stopped at its limit on searches." in pred.caveats
    else:
        assert len(executed(pred)) >= 3 and pred.stop_reason != "max_searches"


def test_the_reader_reads_a_long_passage_to_its_end(use_lm):
    """A fact keeps the passage whole (FACT_CHARS holds an encyclopedia paragraph): what its last
    sentence says is read, though prompts show only the passage's opening."""
    opening = " ".join(f"In {year} the town's wool fair drew traders from every port along the coast." for year in
                       range(1800, 1825))
    long_passage = Passage(id="long", title="Tarbury bell foundry",
                           text=f"{opening} The Tarbury bell foundry was founded by Ada Lind in 1702.")
    assert len(opening) > 1500
    engine = ScriptedEngine(classify=classify("lookup"), step=junk_after_first_query,
                            synthesize=lambda _: synth("unknown"))
    pred = run(engine, [LocalCorpusSearch(CorpusIndex.build([long_passage, *TARBURY]))],
               "Who founded the Tarbury bell foundry?", use_lm, profile="small")
    assert pred.answer.startswith("Ada Lind")


def test_the_trajectory_is_append_only_what_a_step_recorded_is_never_rewritten(bundled_index, use_lm):
    """Steps, calls and facts are a record of what happened: a later step adds to them, never edits them."""
    snapshots = []

    class Recorded(DeltaSeek):
        def step(self, pad):
            verdict = super().step(pad)
            snapshots.append(pad.model_dump(include={"steps", "tool_calls", "facts"}))
            return verdict

    engine = ScriptedEngine(  # the seed's stuck query, blocked, diversified and judged: every kind of record
        classify=classify("aggregate_or_ill_posed"), step=lambda _: step(STUCK_QUERY),
        diversify=lambda _: {"query": "ollama github stars docker pulls"},
        judge=lambda _: {"answerability": "proxy_only", "reason": "no adoption rate is published"},
        synthesize=lambda _: synth("By proxies, Ollama has more GitHub stars.", answerability="proxy_only"))
    program = Recorded(tools=[LocalCorpusSearch(bundled_index)])
    with use_lm(scripted_lm(engine)):
        pred = program(question=MAG7)
    final = pred.scratchpad.model_dump(include={"steps", "tool_calls", "facts"})
    assert len(snapshots) >= 3 and blocked(pred) and executed(pred)
    for snapshot in snapshots:
        for name, records in snapshot.items():
            assert final[name][:len(records)] == records, f"{name} rewritten after step {len(snapshot['steps'])}"
