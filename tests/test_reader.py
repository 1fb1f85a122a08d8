"""The extractive reader and the content guards on hand-written passages, with no LM."""

import pytest

from deltaseek import DeltaSeek
from deltaseek.optimize.scenario_lms import scenario_lm
from deltaseek.programs.agent import evidence
from deltaseek.programs.agent import guardrails as guard
from deltaseek.programs.agent.answer import program_answer
from deltaseek.programs.agent.checks import kind_reason
from deltaseek.programs.agent.evidence import Reading, ambiguous_terms, proxy_answer, read_evidence
from deltaseek.programs.agent.learned_reader import Extracted, expected_answer_types, extract_answer
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad, ToolCall
from deltaseek.programs.index import CorpusIndex, Passage
from deltaseek.programs.tools import LocalCorpusSearch, ToolStatus

RULE_READER_CASE = pytest.mark.xfail(strict=True, reason=(
    "written for the rule reader, now removed: the one reader's learned ranker picks another span here "
    "(it already did in the program, whose default reader it was); kept as a known miss"))

PASSAGES = {
    "ada": ("Ada Quill", "Ada Quill (born 3 March 1971) is a Canadian engineer. She designed the Tern compiler "
                         "in 1998. She was born in Halifax, Nova Scotia, and studied in Toronto."),
    "tern": ("Tern (compiler)", "Tern is an optimizing compiler for the Kestrel language. It was designed by "
                                "Ada Quill at Lumen Labs."),
    "lumen": ("Lumen Labs", "Lumen Labs is a research company whose headquarters stand at 44 Harbour Street "
                            "in Halifax. It employs about 320 people."),
    "mayor": ("Mayor of Brindle", "The mayor of Brindle leads the town council. Mark Olsen served as mayor "
                                  "from 2010 to 2018. Council member Dana Ruiz was elected in 2022, and she "
                                  "took office as mayor in January 2023."),
    "kestrel-stars": ("Kestrel popularity", "The Kestrel repository has about 12,000 stars and 400 contributors."),
    "kestrel-bird": ("Kestrel (bird)", "The kestrel is a small falcon that hovers while hunting."),
    "kestrel-lang": ("Kestrel (programming language)", "Kestrel is a systems language compiled by Tern."),
    "renee": ("Renée Dufour", "Renée Dufour gave her prize money to a local charity in 2004."),
    "guild": ("Tarbury Guild", "Ada Quill chaired the Tarbury Guild from 1990–1996. The guild's charter took "
                               "six months to write, and the town published three copies."),
    "ferry": ("Vey ferry", "The ferry crossed the Vey for a century. However, rising costs ended the ferry "
                           "service, however loved it was."),
}


def pad_of(question, *ids):
    pad = Scratchpad(question=question)
    pad.facts = [Fact(source=i, title=PASSAGES[i][0], text=PASSAGES[i][1], step=1) for i in ids]
    pad.tool_calls = [ToolCall(step=1, tool="search", args={"query": question}, status=ToolStatus.SUCCESS,
                               executed=True, result_count=len(ids), new_facts=len(ids))]
    return pad


@pytest.mark.parametrize("question,kinds", [
    ("Who designed Tern?", ["person"]),
    ("Where was Ada Quill born?", ["place"]),
    ("When was Ada Quill born?", ["date"]),
    ("How many people does Lumen Labs employ?", ["number"]),
    ("What is the street address of Lumen Labs?", ["address"]),
    ("Is Tern a compiler?", ["yes_no"]),
    ("Who designed Tern, and where was she born?", ["person", "place"]),
    ("Describe the Tern compiler.", ["other"]),
    ("Which company built the Tern compiler?", ["entity"]),
    ("In what city does Lumen Labs stand?", ["place"]),
    ("In what language is Tern written?", ["entity"]),
    ("Who led the country where the composer of Tern was a citizen?", ["person"]),  # "where" relative
    ("What is the usual snowfall in the city where Lumen Labs was founded?", ["other"]),
    ("What was the first ship to cross the strait?", ["entity"]),  # one singled out of a kind: a name
    ("What was the result of the vote?", ["entity"]),
    ("What was decided?", ["other"]),
    ("In 1990, who led the band?", ["person"]),  # the question starts after the scene-setting phrase
    ("According to the survey, how many towns have a ferry?", ["number"]),
    ("Into what sea does the Vell flow?", ["entity"]),
    ("The ship was renamed what?", ["entity"]),  # a name asked for at the end
    ("The ship was loaded with what?", ["other"]),
    ("The Tarbury Rovers play at which ground in Portmere?", ["entity"]),  # a phrase placing a name may follow
])
def test_the_expected_answer_type_comes_from_the_wording(question, kinds):
    assert expected_answer_types(question) == kinds


@pytest.mark.parametrize("question,ids,answer", [
    ("Who designed Tern?", ("tern", "lumen"), "Ada Quill"),
    ("Where was Ada Quill born?", ("ada",), "Halifax"),
    ("When was Ada Quill born?", ("ada",), "3 March 1971"),
    pytest.param("How many people does Lumen Labs employ?", ("lumen",), "320 people",
                 marks=RULE_READER_CASE),  # the learned ranker picks "44" of the address
    ("What is the street address of Lumen Labs?", ("lumen", "tern"), "44 Harbour Street"),
    ("Who is the mayor of Brindle?", ("mayor",), "Dana Ruiz"),  # the holder now, not one who served until 2018
    ("Who designed Tern, and where was she born?", ("tern", "ada"), "Ada Quill; Halifax"),
    ("Which language does the Tern optimizing compiler compile?", ("tern", "lumen"), "Kestrel"),
    ("What years did Ada Quill chair the Tarbury Guild?", ("guild",), "1990–1996"),  # a span of years is one date
    ("How long did the charter of the Tarbury Guild take to write?", ("guild",), "six months"),  # a count in words
])
def test_the_reader_extracts_a_typed_span_the_question_does_not_contain(question, ids, answer):
    spans = extract_answer(question, pad_of(question, *ids).facts)
    assert "; ".join(s.span for s in spans).startswith(answer)
    for s in spans:  # from a passage asked for, a sentence of it, and the span in that sentence or the title
        title, text = PASSAGES[s.source] if s.source in ids else ("", "")
        assert s.sentence in text and (s.span in s.sentence or s.span in title), s


def test_a_type_that_does_not_fit_is_named_for_the_small_profile():
    assert kind_reason("2018-2022", "Who is the mayor of Brindle?") is not None
    assert kind_reason("Dana Ruiz", "Who is the mayor of Brindle?") is None
    assert kind_reason("Dana Ruiz", "When did Dana Ruiz take office?") is not None
    assert kind_reason("in January 2023", "When did Dana Ruiz take office?") is None
    assert kind_reason("two", "How many bridges cross the Vey?") is None  # a number in words is a number


def test_answerability_comes_from_the_evidence():
    assert read_evidence(pad_of("Who designed Tern?", "tern")).answerability == "direct"
    rate = pad_of("What is the adoption rate of Kestrel?", "kestrel-stars", "kestrel-lang")
    reading = read_evidence(rate)
    assert reading.answerability == "proxy_only" and "12,000 stars" in reading.proxies[0].span
    assert read_evidence(pad_of("What is the population of Zorbington?", "lumen")).answerability == "unlikely"
    assert read_evidence(pad_of("Who founded Lumen Labs?", "lumen")).answerability == "unknown"


def test_an_ambiguous_term_becomes_an_assumption_naming_the_reading():
    pad = pad_of("How popular is Kestrel among compiler writers?", "kestrel-bird", "kestrel-lang", "tern")
    [note] = ambiguous_terms(pad)
    assert note.startswith('Read "Kestrel" as Kestrel (programming language)') and "Kestrel (bird)" in note


@pytest.mark.parametrize("query,problem", [
    ("", "empty"),
    ("3.0.0.0.0.0.0", "repeat"),
    ("The New York Times, Inc. (The New York Times) (The New York Times, Inc. (The New York Times)", "repeat"),
    ("#4", "no term"),
    ("search_corpus", "tool or field names"),
    ("new_evidence", "tool or field names"),
    ("The mayor of Brindle leads the town council", "copied"),
])
def test_junk_queries_are_rejected_with_a_reason(query, problem):
    pad = pad_of("Who is the mayor of Brindle?", "mayor")
    reason = guard.reject_junk_query(query, pad, {"search_corpus", "new_evidence", "query"})
    assert reason and problem in reason


def test_a_real_query_passes_the_guard():
    pad = pad_of("Who is the mayor of Brindle?", "mayor")
    assert guard.reject_junk_query("Brindle mayor 2023 council", pad, {"search_corpus"}) is None


@pytest.mark.parametrize("item,echo", [
    ("Not supplied for this particular example.", True),
    ("unlikely", True),
    ("search_corpus", True),
    ("Assumptions", True),
    ("2018-2022", True),
    ("No adoption figure for Kestrel is published", False),
])
def test_caveats_that_echo_the_prompt_are_dropped(item, echo):
    pad = pad_of("What is the adoption rate of Kestrel?", "kestrel-stars")
    assert guard.is_echo(item, pad, {"search_corpus", "caveats", "assumptions"}) is echo


def test_the_program_tries_each_tool_in_the_users_order_before_repeating():
    pad = pad_of("Who designed Tern?", "tern")
    pad.tool_calls[0].tool = "wikipedia"
    assert guard.program_tool(pad, ["wikipedia", "search_corpus"]) == "search_corpus"
    pad.tool_calls.append(pad.tool_calls[0].model_copy(update={"tool": "search_corpus"}))
    assert guard.program_tool(pad, ["wikipedia", "search_corpus"]) == "wikipedia"


def test_a_text_the_model_was_given_is_an_echo_when_handed_back():
    pad = pad_of("Who is the mayor of Brindle?", "mayor")
    given = ("No materially different query was left to try.",)
    assert guard.is_echo("No materially different query was left to try.", pad, set(), given)
    assert not guard.is_echo("Dana Ruiz took office as mayor of Brindle in January 2023", pad, set(), given)


@pytest.mark.parametrize("question,ids,answer", [
    # the question's own name spelled without its accent is still the question's, not its answer: the
    # rule reader, which read names only, found none; the learned reader reads the phrase that answers
    pytest.param("Renee Dufour gave her prize money to which organization?", ("renee",), "local charity",
                 marks=pytest.mark.xfail(strict=True, reason="the ranker retrained on whole articles reads the year "
                                                             "here, and the reader adapter abstains")),
    # "However" is capitalized only because it opens the sentence: no name, so no answer
    pytest.param("What ended the ferry service across the Vey?", ("ferry",), "rising costs", marks=RULE_READER_CASE),
])
def test_the_reader_takes_no_name_of_the_questions_own_nor_a_word_opening_a_sentence(question, ids, answer):
    assert [e.span for e in extract_answer(question, pad_of(question, *ids).facts)] == [answer]


def test_an_answer_fits_only_with_a_span_the_question_does_not_hold():
    question = "What is the adoption rate of Kestrel in the top 7?"
    assert kind_reason("The adoption rate of Kestrel in the top 7", question) is not None
    assert kind_reason("About 12 percent of teams use Kestrel", question) is None


def test_a_caveat_copied_from_a_fact_is_an_echo():
    pad = pad_of("Who designed Tern?", "tern")
    fact = f"[tern] {PASSAGES['tern'][0]}: {PASSAGES['tern'][1]}"
    assert guard.is_echo("[tern] Tern (compiler): Tern is an optimizing compiler for the", pad, set(), (fact,))


def test_a_passage_that_mentions_the_term_does_not_vote_for_its_meaning(monkeypatch):
    monkeypatch.setitem(PASSAGES, "kestrel-film", ("Kestrel (film)", "Kestrel is a 1990 film; its sequel was a film too."))
    monkeypatch.setitem(PASSAGES, "kestrel-review", ("Film reviews", "Critics called Kestrel the film of the year."))
    monkeypatch.setitem(PASSAGES, "compilers", ("Compilers", "A compiler translates a systems language to code."))
    pad = pad_of("How popular is Kestrel?", "kestrel-film", "kestrel-review", "kestrel-lang", "compilers")
    [note] = ambiguous_terms(pad)
    assert note.startswith('Read "Kestrel" as Kestrel (programming language)')


@pytest.mark.parametrize("item", [
    "1. Yukihiro Matsumoto",  # a fragment, not a statement
    "The New York Times Company (The NewYorkT.Com) (The NewYorkT.Com) (The NewYorkT.Com)",  # degenerate repetition
])
def test_fragments_and_repetitions_are_not_caveats(item):
    pad = pad_of("What is the street address of Lumen Labs?", "lumen")
    assert guard.is_echo(item, pad, set())


def test_an_answer_must_come_from_a_passage_about_the_subject_or_one_hop_from_it():
    from deltaseek.programs.agent.checks import unsupported_reason

    pad = pad_of("What is the headquarters city of Lumen Labs?", "lumen", "ada")
    assert unsupported_reason("Halifax", pad) is None  # the Lumen Labs passage names Halifax


def test_a_passage_handed_back_whole_is_an_echo_but_a_short_stretch_is_an_answer():
    from deltaseek.programs.agent.checks import echo_reason

    pad = pad_of("Who designed Tern?", "tern", "ada", "lumen")
    passage = f"{PASSAGES['ada'][1]} {PASSAGES['lumen'][1]}"  # two passages read as one fact: 40 words
    pad.facts[1].text = passage
    assert len(passage.split()) >= 30 and "hands back a passage" in echo_reason(passage, pad, set(), ())
    assert echo_reason(" ".join(passage.split()[:6]), pad, set(), ()) is None


def test_a_number_that_belongs_to_a_name_is_no_figure():
    from deltaseek.programs.agent.learned_reader import candidate_spans

    spans = lambda text: [span for span, _ in candidate_spans(text, "number")]
    assert spans("Together they account for a large share of the S&P 500 index's market value.") == []
    assert spans("The release of Python 3.0 came with 500,000 projects on PyPI.") == ["500,000 projects"]
    assert spans("Python 3.0 was released in December 2008.") == []
    assert spans("About 500 people live there.") == ["500 people"]
    assert spans("Roughly 500 people live there.") == ["500 people"]
    assert spans("It had roughly 80,000 stars.") == ["80,000 stars"]


def untitled_items(count: int) -> list[Passage]:
    return [Passage(id=str(n), title="", text=f"The code of item {n} is X{n}.") for n in range(1, count + 1)]


def test_a_sentence_that_restates_the_question_answers_it():
    fact = Fact(source="abbey", title="", text="Wendle Abbey stands on a hill. The motto of Wendle Abbey is Ora et "
                                               "labora, carved over its gate.", step=1)
    found = evidence.restated_answer("What is the motto of Wendle Abbey?", [fact])
    assert found is not None and found.span == "Ora et labora" and found.source == "abbey"
    assert evidence.restated_answer("What is the motto of Wendle Priory?", [fact]) is None  # another subject
    assert evidence.restated_answer("What is Wendle Abbey?", [fact]) is None  # a description, not a span


def test_the_closest_evidence_that_answers_the_question_is_the_answer_not_a_denial(use_lm):
    """A model whose replies are junk: the program answers, and a passage that says the answer in
    the question's own words is an answer, never "the passages do not state it"."""
    tool = LocalCorpusSearch(CorpusIndex.build(untitled_items(2000)))
    with use_lm(scenario_lm("echo", tool.name)):
        pred = DeltaSeek(tools=[tool])(question="What is the code of item 777?")
    assert "do not state" not in pred.answer and "X777" in pred.answer, pred.answer
    assert pred.answerability == "direct" and pred.sources == ["777"]


def test_closest_evidence_of_an_untitled_passage_has_no_empty_brackets():
    pad = Scratchpad(question="Which colour is the gate of the Wendle mill?")
    pad.facts.append(Fact(source="mill", title="", text="The Wendle mill grinds oats for the valley.", step=1))
    answer = program_answer(pad, Reading()).text
    assert "()" not in answer and "Closest evidence: The Wendle mill grinds oats" in answer, answer


@pytest.mark.parametrize("question, figure", [
    ("Wendle has a population of how many inhabitants?", "population figure"),
    ("What is the population of Wendle?", "population figure"),
    ("What is the current rate of adoption for Wendle Mail?", "current rate of adoption figure"),
])
def test_the_figure_not_found_is_named_in_plain_words(question, figure):
    assert evidence.figure_asked(question) == figure
    proxy = Extracted("1,200", "About 1,200 people voted in Wendle.", "votes", "number", 1.0)
    answer = proxy_answer(question, Reading(proxies=[proxy]), {"votes": ""})
    assert answer.startswith(f"No {figure} was found in the sources. Related figures found: 1,200 (About"), answer
