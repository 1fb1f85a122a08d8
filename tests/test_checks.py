"""Checks name a failure, and only a named failure replaces. A scripted capable model's
right answer of every kind comes through as it wrote it; junk is replaced, with the reason recorded.
All passages are hand-written and come from no dataset."""

import pytest

from deltaseek import DeltaSeek
from deltaseek.programs.agent import checks, evidence
from deltaseek.programs.agent.checks import answer_failure, is_abstention, one_spelling, unsupported_reason
from deltaseek.programs.agent.claims import claim
from deltaseek.programs.agent.learned_reader import (choice_options, compare_options, compare_pair, names_an_option,
                                                     option_by_support, question_options, question_support,
                                                     shipped_reader)
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad
from deltaseek.programs.agent.quantities import compared_amounts, quantities
from deltaseek.programs.agent.profile import CAPABLE, SMALL
from deltaseek.programs.agent.settings import AgentSettings
from deltaseek.programs.index import CorpusIndex, Passage
from deltaseek.programs.tools import LocalCorpusSearch
from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth

PASSAGES = [
    Passage("brandt", "Ada Brandt", "Ada Brandt (born 3 May 1921) was a Veltrian novelist and poet from Tarbury."),
    Passage("sund", "Olaf Sund", "Olaf Sund (1934 – 2001) was a Norvanian painter who worked in Lundby."),
    Passage("vey", "Vey bridges", "Two bridges cross the Vey at Tarbury: the old stone bridge and the iron bridge of 1911."),
    Passage("tern", "Tern (compiler)", "The Tern compiler is known among students for its inherent difficulty."),
    Passage("bell", "Harrow Bell", "The Harrow Bell was cast by the brothers Emil and Jon Varga for the town hall."),
]


@pytest.fixture(scope="module")
def corpus():
    return LocalCorpusSearch(CorpusIndex.build(PASSAGES))


def capable(answer: str, answerability: str = "direct") -> ScriptedEngine:
    """A capable model: it searches with the question, then answers."""
    return ScriptedEngine(classify=classify("lookup"),
                          step=lambda p: step(move="synthesize") if "Searches already run" in p else step(QUESTION[0]),
                          synthesize=lambda _: synth(answer, answerability=answerability))


QUESTION = [""]


def ask(corpus, question, answer, use_lm, answerability="direct", **settings):
    QUESTION[0] = question
    program = DeltaSeek(tools=[corpus], settings=AgentSettings(**settings))
    with use_lm(scripted_lm(capable(answer, answerability))):
        return program(question=question)


@pytest.mark.parametrize("question, answer", [
    ("Were Ada Brandt and Olaf Sund of the same nationality?", "No"),                     # yes / no
    ("Who was born first, Ada Brandt or Olaf Sund?", "Ada Brandt"),                       # an option the question names
    ("How many bridges cross the Vey at Tarbury?", "two"),                                 # a number in words
    ("What is the Tern compiler known for among students?", "inherent difficulty"),        # a lowercase phrase
    ("When did Olaf Sund live?", "1934 – 2001"),                                           # a date range
])
def test_a_capable_model_s_right_answer_is_shown_as_written(corpus, use_lm, question, answer):
    pred = ask(corpus, question, answer, use_lm)
    assert pred.answer == answer and pred.answer_origin == "lm", (pred.answer, pred.replaced_because)
    assert pred.replaced_because is None and pred.answerability == "direct"


FRAMES = [
    "{answer}",
    "According to the passages, the answer is {answer}.",
    "The answer is {answer}.",
    "Based on what was found, it is {answer}.",
    "After reading the sources, I would say that it is {answer}.",
    "{answer}, as the passages found show.",
    "{answer} is the answer, according to the sources.",
    "Answer: **{answer}**",
    "I believe the correct answer is {answer}.",
    "{answer} (as stated in the retrieved passages)",
    "{answer} - as noted in the second source.",
    "The passages discuss this directly. The answer is {answer}.",
    "I searched twice. It is {answer}.",
    "The answer is {answer}, based on what was found.",
    "{answer}. The first source states this, and no other source disputes it.",
    "It is most likely {answer}, although the sources mention it only briefly.",
    "{answer}\n\nThe third passage says so explicitly.",
    "I found that it is {answer}; the sources agree on this.",
    "**Answer:** {answer}\n\n**Explanation:** The second source states this directly.",
    "{answer} \u2014 this is stated in the first passage.",
    "{answer}, according to passage 1.",
    "The answer is {answer} [1][3].",
    "Looking at the passages, the relevant one covers this. So the answer is {answer}.",
    "1. {answer}",
    "{answer}. Confidence: 90%",
    "{answer} (confidence: high)",
    "The passages point to {answer} as the answer.",
]
"""Sentences a capable model puts round its answer, written here by hand."""
RIGHT_ANSWERS = [
    ("Were Ada Brandt and Olaf Sund of the same nationality?", "no"),
    ("Who was born first, Ada Brandt or Olaf Sund?", "Ada Brandt"),
    ("How many bridges cross the Vey at Tarbury?", "two"),
    ("What is the Tern compiler known for among students?", "its inherent difficulty"),
    ("Who cast the Harrow Bell?", "the brothers Emil and Jon Varga"),
]


@pytest.mark.parametrize("frame", FRAMES)
@pytest.mark.parametrize("question, answer", RIGHT_ANSWERS)
def test_a_right_answer_in_a_sentence_passes_as_written(corpus, question, answer, frame):
    """The checks read the claim inside the sentence: the frame's own words ("answer", "passages",
    "I believe") are no unsupported claim, and the sentence is used word for word."""
    pad = Scratchpad(question=question)
    pad.facts += [Fact(source=p.id, title=p.title, text=p.text, step=1) for p in PASSAGES]
    written = frame.format(answer=answer)
    assert answer_failure(written, pad, {"search_corpus", "answer", "question"}) is None, written


@pytest.mark.parametrize("frame", FRAMES[1:])
@pytest.mark.parametrize("junk, reason", [("answer", "name"), ("a German-Jewish festival held every spring", "no passage read")])
def test_junk_inside_a_sentence_is_still_named(corpus, junk, reason, frame):
    pad = Scratchpad(question="Who cast the Harrow Bell?")
    pad.facts += [Fact(source=p.id, title=p.title, text=p.text, step=1) for p in PASSAGES]
    failure = answer_failure(frame.format(answer=junk), pad, {"search_corpus", "answer", "question"})
    assert failure is not None and (reason in failure or "nothing beyond its frame" in failure), failure


@pytest.mark.parametrize("written, kept", [
    ("Answer: unknown (the passages do not give it)", True),   # the label's word inside an abstention
    ("Unknown: none of the passages names the founder.", True),
    ("unknown", False),                                        # the label's name alone: an echo
    ("Answer: unknown", False),
])
def test_a_labels_word_inside_an_abstention_is_the_abstention_not_an_echo(written, kept):
    pad = Scratchpad(question="Who founded the Harrow Bell foundry?")
    pad.facts += [Fact(source=p.id, title=p.title, text=p.text, step=1) for p in PASSAGES]
    failure = answer_failure(written, pad, {"search_corpus", "answer", "question"})
    assert (failure is None) == kept, failure
    assert kept or "name 'unknown'" in failure or "nothing beyond its frame" in failure, failure


@pytest.mark.parametrize("written, claimed", [
    ("Let It Be Spring is the answer, as the passages show.", "Let It Be Spring."),  # a title with stopwords
    ("Off The Map is the answer, based on what was found.", "Off The Map."),
    ("Based on the passages, it is Vey.", "Vey."),                                  # still a frame
])
def test_a_name_before_is_the_answer_is_the_claim_though_it_holds_stopwords(written, claimed):
    assert claim(written) == claimed


def test_a_yes_or_no_that_closes_a_sentence_answers_a_yes_no_question():
    pad = Scratchpad(question="Were Ada Brandt and Olaf Sund of the same nationality?")
    pad.facts += [Fact(source=p.id, title=p.title, text=p.text, step=1) for p in PASSAGES[:2]]
    assert answer_failure("One was Veltrian and the other Norvanian, so no.", pad, set()) is None


def test_the_passages_do_not_say_is_an_answer(corpus, use_lm):
    pred = ask(corpus, "What is the weight of the Harrow Bell?", "The passages do not say.", use_lm, "unlikely")
    assert pred.answer == "The passages do not say." and pred.answer_origin == "lm"
    assert pred.answerability == "unlikely"


@pytest.mark.parametrize("junk, reason", [
    ("answer", "name"),                                                 # an echo of a field name
    ("Not supplied for this particular example.", "placeholder"),      # DSPy's placeholder
    ("Emil Emil Emil Emil Emil", "repeats itself"),                    # degenerate repetition
    ("1.000.000.000.000", "repeats itself"),                           # a run of characters, no number
    ("A German-Jewish festival held every spring.", "no passage read"),  # a claim nothing read supports
])
def test_junk_is_replaced_and_the_reason_recorded(corpus, use_lm, junk, reason):
    pred = ask(corpus, "Who cast the Harrow Bell?", junk, use_lm)
    assert pred.answer != junk and pred.answer_origin != "lm"
    assert reason in pred.replaced_because
    assert any("set aside" in c and reason in c for c in pred.caveats)
    assert pred.proposed_answer == junk  # what the model said stays on record


def test_the_small_profile_also_asks_for_the_kind_asked_and_a_sure_sentence(corpus, use_lm):
    """The same right answers pass the small profile's two extra checks; a date for "who" does not."""
    assert ask(corpus, "Who cast the Harrow Bell?", "Emil and Jon Varga", use_lm, profile="small",
               compact_prompts=False).answer_origin in ("lm", "extracted")
    pad = Scratchpad(question="Who cast the Harrow Bell?")
    pad.facts.append(Fact(source="bell", title="Harrow Bell", text=PASSAGES[4].text, step=1))
    assert answer_failure("1911", pad, set(), small=True) is not None
    assert answer_failure("1911", pad, set(), small=False) is not None  # 1911 is in no passage read
    assert answer_failure("Emil and Jon Varga", pad, set(), small=True, min_support=0.5) is None


def test_an_answer_from_a_passage_about_something_else_is_named():
    pad = Scratchpad(question="What is the capital of Veltria?")
    pad.facts += [Fact(source="v", title="Veltria", text="Veltria is a country. Its capital is Moss.", step=1),
                  Fact(source="t", title="Lundby", text="Lundby is the largest port of Norvania.", step=1)]
    assert "something else" in answer_failure("Lundby", pad, set())
    assert answer_failure("Moss", pad, set(), small=True) is None
    # a capable model's two-hop answer often stands in a passage about the bridge, which the passages
    # read may not link by name: for it, a passage read that holds the answer supports it
    two_hop = Scratchpad(question="What is the capital of the country where Olaf Sund was born?", task_kind="multi_hop")
    two_hop.facts += [Fact(source="s", title="Olaf Sund", text="Olaf Sund was a painter of harbours.", step=1),
                      Fact(source="n", title="Norvania", text="Norvania is a kingdom. Its capital is Lundby.", step=1)]
    assert answer_failure("Lundby", two_hop, set()) is None
    assert "something else" in answer_failure("Lundby", two_hop, set(), small=True)
    # two-hop by a bridge in its words, though its kind is another (a count)
    counted = Scratchpad(question="How many bridges has the capital of the country where Olaf Sund was born?",
                         task_kind="aggregate_or_ill_posed")
    counted.facts += [Fact(source="s", title="Olaf Sund", text="Olaf Sund was a painter of harbours.", step=1),
                      Fact(source="n", title="Norvania", text="Norvania's capital Lundby has 14 bridges.", step=1)]
    assert answer_failure("14", counted, set()) is None
    assert "something else" in answer_failure("14", counted, set(), small=True)
    # two-hop by a clause that describes what it asks through another thing
    for question in ("Tarbury Hall opened with a comedy written by whom?", "Who wrote a play that opened Tarbury Hall?"):
        described = Scratchpad(question=question)
        described.facts += [Fact(source="t", title="", text="Tarbury Hall opened in 1901 with a new play.", step=1),
                            Fact(source="p", title="", text="It was written by Ada Lind in a week.", step=1)]
        assert answer_failure("Ada Lind", described, set()) is None
        assert "something else" in answer_failure("Ada Lind", described, set(), small=True)
    # a passage that gives a figure the question gives is about what the question describes
    figured = Scratchpad(question="Which hall seats 4,120 and stands by the Vey?")
    figured.facts += [Fact(source="v", title="", text="The Vey runs past the old mills.", step=1),
                      Fact(source="h", title="", text="Lundby Hall seats 4,120.", step=1)]
    assert answer_failure("Lundby Hall", figured, set()) is None
    assert "something else" in answer_failure("Lundby Hall", figured, set(), small=True)
    figured.facts[1] = Fact(source="h", title="", text="Lundby Hall seats 3,900.", step=1)
    assert "something else" in answer_failure("Lundby Hall", figured, set())


def test_abstentions_are_recognized():
    assert is_abstention("The passages do not say.")
    assert is_abstention("The weight is not stated in the sources.")
    assert not is_abstention("No")
    assert is_abstention("**Nothing** in the passages answers this.")
    assert is_abstention("> The passages are insufficient to answer this.")
    assert is_abstention("That isn't covered by any of the passages.")
    assert not is_abstention("Flood damage is not covered by the warranty.")


def test_a_subject_the_collection_holds_is_not_missing_because_the_facts_read_lack_it(corpus, use_lm):
    """Yes/no about two people: the first search found one; the other is in the collection, so the
    model's "no" stands instead of "No information found about ..."."""
    pred = ask(corpus, "Were Ada Brandt and Olaf Sund of the same nationality?", "no", use_lm, max_searches=1)
    assert pred.answer == "no" and not pred.answer.startswith("No information")
    assert pred.scratchpad.subject_presence == {"Ada": True, "Brandt": True, "Olaf": True, "Sund": True}


FACTS = [Fact(source=p.id, title=p.title, text=p.text, step=1) for p in PASSAGES]


def test_comparison_questions_read_each_side_and_compare():
    assert question_options("Who was born first, Ada Brandt or Olaf Sund?") == ["Ada Brandt", "Olaf Sund"]
    assert compare_options("Who was born first, Ada Brandt or Olaf Sund?", FACTS).span == "Ada Brandt"
    assert compare_options("Which of them is younger, Ada Brandt or Olaf Sund?", FACTS).span == "Olaf Sund"
    assert compare_pair("Were Ada Brandt and Olaf Sund of the same nationality?", FACTS).span == "no"
    assert compare_pair("Are Ada Brandt and Olaf Sund both painters?", FACTS).span == "no"
    assert compare_options("Who was born first, Ada Brandt or Kai Moor?", FACTS) is None  # no side is guessed


def test_a_pair_asked_about_together_reads_what_follows_the_pair():
    """"Are both A and B in C?" asks what follows the pair of each side, as "Are A and B both in C?"
    does; what follows is read from the question after its opening word, where the pair was found."""
    facts = [Fact(source="tern", title="", text="Tern Hall is a concert hall in Lundby, Veltria.", step=1),
             Fact(source="vey", title="", text="Vey Tower is a tower on the coast of Veltria.", step=1)]
    assert compare_pair("Are both Tern Hall and Vey Tower in Veltria?", facts).span == "yes"
    assert compare_pair("Are Tern Hall and Vey Tower both in Veltria?", facts).span == "yes"
    assert compare_pair("Are both Tern Hall and Vey Tower in Lundby?", facts).span == "no"
    assert compare_pair("Are both Tern Hall and Kai Moor in Veltria?", facts) is None  # a side no fact is about


def test_support_is_low_for_a_sentence_about_another_thing():
    fact = Fact(source="vey", title="Vey bridges", text=PASSAGES[2].text, step=1)
    sure = question_support("When was the iron bridge over the Vey built?", fact.text, fact)
    other = question_support("When was the iron tunnel under the Vey built?", fact.text, fact)
    renamed = question_support("When was the Iron Vey Bridge built?", fact.text, fact)  # a name the passage never writes
    negated = question_support("Which bridge does not cross the Vey?", fact.text, fact)
    assert sure > other and sure > renamed and sure > negated


def test_a_name_asked_by_its_initials_is_said_by_the_passage_that_spells_it_out():
    fact = Fact(source="wa", title="Water board", text="The Tarbury Water Authority opened the dam in 1931.", step=1)
    shortened = question_support("When did the TWA open the dam?", fact.text, fact)
    spelled = question_support("When did the Tarbury Water Authority open the dam?", fact.text, fact)
    unknown = question_support("When did the KLM open the dam?", fact.text, fact)
    assert spelled > shortened > 0.5 > unknown  # the initials cost no missing name; their words are fewer


def test_an_ordinal_before_a_verb_says_when_and_is_no_name_to_find():
    fact = Fact(source="b", title="Vey bridges", text="The iron bridge over the Vey opened to traffic in 1911.", step=1)
    assert question_support("When was the iron bridge over the Vey first opened?", fact.text, fact) > 0.8
    assert question_support("When did the first iron bridge over the Vey open?", fact.text, fact) < 0.5  # "first" names which


def test_a_name_the_passage_holds_outside_the_sentence_counts_for_a_part():
    text = "Ada Lind grew up in Tarbury and studied law. In 2020 she was elected mayor."
    context = Fact(source="lind", title="Ada Lind", text=text, step=1)
    elsewhere = Fact(source="moss", title="Ada Moss", text="Ada Moss grew up in Lundby. In 2020 she was elected mayor.",
                     step=1)
    sentence = "In 2020 she was elected mayor."
    named = question_support("Who was elected mayor of Tarbury in 2020?", "In 2020 she was elected mayor of Tarbury.", context)
    left_to_context = question_support("Who was elected mayor of Tarbury in 2020?", sentence, context)
    never_named = question_support("Who was elected mayor of Tarbury in 2020?", sentence, elsewhere)
    assert named > left_to_context > never_named


def test_the_profile_is_one_setting_with_a_default_per_model(corpus, use_lm):
    """Capable for any model but the embedded one (which is small, tests/test_end_to_end.py), unless
    set; the settings that override one of its fields each replace that field alone."""
    program = DeltaSeek(tools=[corpus])
    with use_lm(scripted_lm(ScriptedEngine())):
        assert program.profile() == CAPABLE
        program.settings = AgentSettings(profile="small")
        assert program.profile() == SMALL
        program.settings = AgentSettings(profile="small", compact_prompts=False, prompt_facts=3)
        profile = program.profile()
        assert not profile.brief_prompts and not profile.evidence_decides and profile.step_facts == 3
        assert profile.strict_answer_checks and profile.replaced_moves_before_program_leads == 1  # still small's


def test_a_full_name_is_read_where_the_facts_hold_its_surname():
    pad = Scratchpad(question="Who designed the Tern compiler?")
    pad.facts.append(Fact(source="t", title="Tern (compiler)", text="Lind has said she designed Tern in 1990.", step=1))
    assert unsupported_reason("Ada Lind", pad) is None
    assert "no passage read holds" in unsupported_reason("Ada Brook", pad)
    assert unsupported_reason("Dr. Ada Lind", pad) is None  # a title abbreviated before a name read


def test_a_name_with_a_word_abbreviated_is_the_name_read():
    pad = Scratchpad(question="Where is the Lindor observatory?")
    pad.facts.append(Fact(source="t", title="Lindor", text="The observatory stands on Mount Lindor above Tarbury.", step=1))
    assert unsupported_reason("On Mt. Lindor", pad) is None
    assert "no passage read holds" in unsupported_reason("On Mt. Rask", pad)


NUMBERS = [  # (what a passage writes, the question, the same number as a capable model writes it)
    ("The Vey bridge cost 1,200 crowns in 1911.", "How much did the Vey bridge cost?", "1200 crowns"),
    ("The Vey bridge cost 1200 crowns in 1911.", "How much did the Vey bridge cost?", "1,200 crowns"),
    ("Tarbury had 1.2 million visitors last year.", "How many visitors did Tarbury have?", "about 1,200,000"),
    ("Tarbury had 12,000,000 visitors last year.", "How many visitors did Tarbury have?", "12 million"),
    ("The Lundby fair opens on the 3rd of March.", "When does the Lundby fair open?", "March 3"),
    ("The Lundby fair opens on March 3.", "When does the Lundby fair open?", "the third of March"),
    ("The Tarbury choir has twenty-five members.", "How many members does the Tarbury choir have?", "25"),
    ("The Tarbury choir has 25 members.", "How many members does the Tarbury choir have?", "twenty-five members"),
    ("Ada Brandt finished third in the Lundby race.", "Where did Ada Brandt finish in the Lundby race?", "3rd"),
    ("Olaf Sund lived to the age of 90.", "How old was Olaf Sund when he died?", "ninety"),
    ("The Lundby canal opened on 1 July 1905.", "When did the Lundby canal open?", "1905-07-01"),
    ("The Vey flood left 10,000 people homeless.", "How many people did the Vey flood leave homeless?", "10000"),
    ("The Vey bridge of iron opened in 1911.", "When did the iron Vey bridge open?", "**1911**"),  # bold round a number
    ("Sales at Tarbury Mills reached $3.5 billion in 2010.", "What did sales at Tarbury Mills reach in 2010?", "$3.5bn"),
    ("The Vey dam is 300 ft tall.", "How tall is the Vey dam?", "300 feet (91 m)"),  # converted in brackets
    ("The Lundby trail is 5 km long.", "How long is the Lundby trail?", "It is 5 km (about 3.1 miles) long."),
]


SAME_THING_WRITTEN_OTHERWISE = [  # (what a passage writes, the question, the same thing as a capable model writes it)
    ("The Vey report was written by the WHO in 2004.", "Who wrote the Vey report?", "The WHO"),  # capitals spell a stopword
    ("Olaf Sund moved to the U.S. in 1950.", "Where did Olaf Sund move in 1950?", "the US"),
    ("Olaf Sund moved to the US in 1950.", "Where did Olaf Sund move in 1950?", "the U.S."),
    ("The Vey ferry sailed at 9 a.m. on Monday.", "When did the Vey ferry sail?", "9am Monday"),
    ("The Vey ferry sailed at 9:00 AM on Monday.", "When did the Vey ferry sail?", "9 a.m."),
    ("Karl Sund Jr. founded the Tarbury Post.", "Who founded the Tarbury Post?", "Karl Sund Junior"),
    ("Karl Sund Junior founded the Tarbury Post.", "Who founded the Tarbury Post?", "Karl Sund Jr."),
    ("The cup went to Tarbury Rovers F.C.", "Who won the cup?", "Tarbury Rovers FC"),
    ("The cup went to Tarbury Rovers Football Club.", "Who won the cup?", "Tarbury Rovers FC"),
    ("The Vey crane lifts 2.5 tonnes.", "How much does the Vey crane lift?", "2,500 kg"),  # a quantity converted
    ("The Lundby trail is 40 km long.", "How long is the Lundby trail?", "about 25 miles"),
    ("The Vey dam is 300 feet tall.", "How tall is the Vey dam?", "about 90 m"),
    ("Lake Vey freezes at -5 °C.", "How cold does Lake Vey get?", "23 °F"),
    ("The Vey tram runs at 60 km/h.", "How fast is the Vey tram?", "60 kilometres per hour"),
    ("Lake Vey freezes at -5 °C.", "How cold does Lake Vey get?", "\u22125 °C"),  # a minus sign
    ("The Vey tower was built in 1851.", "When was the Vey tower built?", "in the 19th century"),  # a century worked out
    ("The Vey tower was built in the 1800s.", "When was the Vey tower built?", "the nineteenth century"),
    ("The Vey tower was built in the nineteenth century.", "When was the Vey tower built?", "the 1800s"),
    ("King Edmund VII opened the Vey hall.", "Who opened the Vey hall?", "Edmund the Seventh"),  # a Roman numeral
    ("King Edmund the Seventh opened the Vey hall.", "Who opened the Vey hall?", "Edmund VII"),
    ("The Vey bridge was shelled in the Second Lundby War.", "When was the Vey bridge shelled?", "the Lundby War II"),
    ("The Vey bridge was shelled in Lundby War II.", "When was the Vey bridge shelled?", "the Second Lundby War"),
    ("The Vey bridge was shelled in Lundby War I.", "When was the Vey bridge shelled?", "the First Lundby War"),
    ("Ada Brandt was Olaf Sund's second wife.", "Who was Ada Brandt?", "Olaf Sund's 2nd wife"),  # an ordinal
    ("The Vey wall was raised around 500 BC.", "When was the Vey wall raised?", "c. 500 BCE"),  # an era
    ("The Vey wall was raised around 500 BCE.", "When was the Vey wall raised?", "circa 500 B.C."),
    ("The Vey abbey was founded in AD 1066.", "When was the Vey abbey founded?", "1066 CE"),
    ("The Lundby strike lasted from 1914 to 1918.", "When did the Lundby strike last?", "1914\u201318"),  # cut short
    ("The Lundby season ran 2010\u201311.", "When did the Lundby season run?", "from 2010 to 2011"),
    ("The Vey canal opened on 3 March 1921.", "When did the Vey canal open?", "Mar. 3, 1921"),  # a month cut short
    ("The Vey canal opened on September 3, 1921.", "When did the Vey canal open?", "3 Sept 1921"),
    ("The Vey canal opened in 1925.", "When did the Vey canal open?", "in the mid-1920s"),  # a decade worked out
    ("The Vey voyage took 3.5 years.", "How long did the Vey voyage take?", "three and a half years"),  # a half
    ("The Vey voyage took three and a half years.", "How long did the Vey voyage take?", "3\u00bd years"),
    ("The Vey dock was bombed in WWII.", "When was the Vey dock bombed?", "during World War II"),  # initials
    ("The Vey dock was bombed in the Second World War.", "When was the Vey dock bombed?", "WW2"),
    ("Two-thirds of Lundby's voters agreed.", "How many of Lundby's voters agreed?", "about 67%"),  # a share
    ("About 25% of Vey is forest.", "How much of Vey is forest?", "a quarter"),
    ("The Vey pond froze at \u22123 \u00b0C.", "How cold did the Vey pond get?", "minus three degrees Celsius"),
    ("The Vey fort was built in AD 43.", "When was the Vey fort built?", "43 AD"),
    ("The Vey bridge cost $40 million.", "What did the Vey bridge cost?", "40 million US dollars"),  # money
    ("The Vey fee was 300 kronor.", "What was the Vey fee?", "SEK 300"),
    ("The Vey siege lasted two weeks.", "How long did the Vey siege last?", "14 days"),  # a length of time
    ("The Vey siege lasted 14 days.", "How long did the Vey siege last?", "a fortnight"),
    ("The Vey match lasted 90 minutes.", "How long did the Vey match last?", "an hour and a half"),
    ("The Vey flight took 2 hours and 30 minutes.", "How long did the Vey flight take?", "2.5 hours"),
    ("The Vey drought lasted three decades.", "How long did the Vey drought last?", "30 years"),
    ("The Vey ship had a crew of twelve.", "How big was the Vey ship's crew?", "a dozen"),  # a dozen
    ("The Vey ship had a crew of a dozen men.", "How big was the Vey ship's crew?", "12 men"),
    ("The Vey ferry leaves at noon.", "When does the Vey ferry leave?", "12 pm"),  # noon
    ("The Vey ferry leaves at 12:00 p.m.", "When does the Vey ferry leave?", "at noon"),
    ("Half of the Vey crop failed.", "How much of the Vey crop failed?", "1/2"),  # a fraction in digits
    ("The Vey treaty was signed in the 3rd century BC.", "When was the Vey treaty signed?", "the third century BCE"),
    ("The Vey hall was built in 1905.", "When was the Vey hall built?", "the early 20th century"),  # a part
    ("The Vey hall was built in 1897.", "When was the Vey hall built?", "in the late 1890s"),
    ("The Vey clinic was run by Ada Lind, a physician.", "Who ran the Vey clinic?", "Dr. Ada Lind"),
    ("Tarbury had 2,394,817 visitors last year.", "How many visitors did Tarbury have?", "about 2.4 million"),  # rounded
    ("Tarbury had 2,394,817 visitors last year.", "How many visitors did Tarbury have?", "nearly 2,400,000"),
    ("The Vey archive holds 61,380 maps.", "How many maps does the Vey archive hold?", "over 61,000 maps"),
    ("Ada Lind was a French painter.", "Which country was Ada Lind from?", "She was from France."),  # a demonym
    ("Olaf Sund was born in Holland.", "What nationality is Olaf Sund?", "Dutch"),
    ("Olaf Sund is an American singer.", "Which country is Olaf Sund from?", "the USA"),
    ("The Vey choir has 48 members and the Lundby choir 35.", "How many members have both choirs in total?",
     "83 members"),  # a sum asked for
    ("The Lundby Canal is 40 km long. The Vey Canal is 25 km long.", "Which canal is longer?", "Lundby, by 15 km"),
    ("The Vey bridge opened on 4 July 1921.", "When did the Vey bridge open?", "4/7/1921"),  # a date in digits
    ("The Vey bridge opened on 4 July 1921.", "When did the Vey bridge open?", "7/4/1921"),
    ("The Vey bridge opened in March 1921.", "When did the Vey bridge open?", "03/1921"),
    ("The Vey road was paved on 3 March 1921.", "When was the Vey road paved?", "Thursday, 3 March 1921"),  # its weekday
    ("The Vey school was founded by the Lind family.", "Who founded the Vey school?", "the Linds"),  # a family
    ("The Vey hall seats 1,500.", "How many does the Vey hall seat?", "1.5k"),
]


@pytest.mark.parametrize("passage, question, answer", NUMBERS + SAME_THING_WRITTEN_OTHERWISE)
def test_a_number_name_or_quantity_written_otherwise_than_the_passages_is_read(passage, question, answer):
    pad = Scratchpad(question=question, facts=[Fact(source="t", title="Notes", text=passage, step=1)])
    assert unsupported_reason(answer, pad) is None
    assert answer_failure(answer, pad, {"search_corpus"}) is None  # a number's zeros are no repeated run


@pytest.mark.parametrize("passage, question, answer, named", [
    ("The Vey bridge cost 1,200 crowns in 1911.", "How much did the Vey bridge cost?", "1300 crowns", "1300"),
    ("Tarbury had 1.2 million visitors last year.", "How many visitors did Tarbury have?", "12 million", "12000000"),
    ("Tarbury had 12,000 visitors last year.", "How many visitors did Tarbury have?", "12 million", "12000000"),
    ("The Tarbury choir has twenty-five members.", "How many members does the Tarbury choir have?", "35", "35"),
    ("Ada Brandt finished third in the Lundby race.", "Where did Ada Brandt finish in the Lundby race?", "2nd", "2"),
    ("The Lundby fair opens on March 3.", "When does the Lundby fair open?", "March 13", "13"),
    ("The Vey dam is 300 ft tall.", "How tall is the Vey dam?", "400 feet (122 m)", "400"),
    ("The Vey report was written by the UN in 2004.", "Who wrote the Vey report?", "The WHO", "who"),
    ("The Vey ferry sailed at 9 a.m. on Monday.", "When did the Vey ferry sail?", "10 a.m.", "10am"),
    ("The Vey ferry sailed at 9 a.m. on Monday.", "When did the Vey ferry sail?", "9 p.m.", "9pm"),
    ("Karl Sund Jr. founded the Tarbury Post.", "Who founded the Tarbury Post?", "Karl Sund Senior", "senio"),
    ("The Lundby trail is 40 km long.", "How long is the Lundby trail?", "40 miles", "40 miles"),
    ("The Vey crane lifts 2.5 tonnes.", "How much does the Vey crane lift?", "2.5 pounds", "2.5 pounds"),
    ("On Mount Lindor stands the Vey observatory.", "Where is the Vey observatory?", "On Mt. Rask", "rask"),
    ("The Vey tower was built in 1851.", "When was the Vey tower built?", "in the 18th century", "18"),
    ("The Vey tower was built in 1851.", "When was the Vey tower built?", "the 1700s", "1700s"),
    ("The Vey tower has 18 rooms and was built in 1851.", "How many rooms has the Vey tower?", "19", "19"),
    ("King Edmund VII opened the Vey hall.", "Who opened the Vey hall?", "Edmund VIII", "8"),
    ("The Vey bridge was shelled in Lundby War II.", "When was the Vey bridge shelled?", "Lundby War I", "1"),
    ("The Vey bridge was shelled in the Second Lundby War.", "When was the Vey bridge shelled?",
     "the First Lundby War", "1"),
    ("Ada Brandt was Olaf Sund's second wife.", "Who was Ada Brandt?", "Olaf Sund's 3rd wife", "3"),
    ("The Lundby strike lasted from 1914 to 1918.", "When did the Lundby strike last?", "1914\u201319", "1919"),
    ("The Vey canal opened on 3 March 1921.", "When did the Vey canal open?", "Mar. 13, 1921", "13"),
    ("The Vey canal opened in 1925.", "When did the Vey canal open?", "in the 1930s", "1930s"),
    ("The Vey voyage took 3.5 years.", "How long did the Vey voyage take?", "four and a half years", "4.5"),
    ("The Vey wall was raised around 500 AD.", "When was the Vey wall raised?", "500 BCE", "bc"),
    ("The Vey dock was bombed in World War II.", "When was the Vey dock bombed?", "WWI", "1"),
    ("Two-thirds of Lundby's voters agreed.", "How many of Lundby's voters agreed?", "a third", "3"),
    ("The Vey pond froze at \u22123 \u00b0C.", "How cold did the Vey pond get?", "minus three degrees Fahrenheit",
     "fahre"),
    ("The Vey fort was built in 43 BC.", "When was the Vey fort built?", "AD 43", "other era"),
    ("The Vey bridge cost $40 million.", "What did the Vey bridge cost?", "\u00a340 million", "another currency"),
    ("The Vey fee was 300 kronor.", "What was the Vey fee?", "300 euros", "another currency"),
    ("The Vey siege lasted 14 days.", "How long did the Vey siege last?", "three weeks", "3"),
    ("The Vey match lasted 90 minutes.", "How long did the Vey match last?", "two hours", "2"),
    ("The Vey ship had a crew of twelve.", "How big was the Vey ship's crew?", "two dozen", "24"),
    ("The Vey ferry leaves at noon.", "When does the Vey ferry leave?", "at midnight", "12am"),
    ("The Vey hall was built in 1905.", "When was the Vey hall built?", "the late 20th century", "20"),
    ("The Vey hall was built in 1897.", "When was the Vey hall built?", "in the early 1890s", "1890s"),
    ("The Vey clinic was run by Ada Lind.", "Who ran the Vey clinic?", "Olaf Lind", "olaf"),  # another of the surname
    ("Tarbury had 2,394,817 visitors last year.", "How many visitors did Tarbury have?", "about 2.5 million", "2500000"),
    ("The Vey archive holds 61,380 maps on 14 shelves.", "How many shelves hold the Vey maps?", "about 10", "10"),
    ("Ada Lind was born in France in 1901.", "What nationality was Ada Lind?", "German", "germ"),
    ("Olaf Sund is a South Korean singer.", "Which country is Olaf Sund from?", "North Korea", "north"),
    ("The Vey choir has 48 members and the Lundby choir 35.", "How many members have both choirs in total?",
     "73 members", "73"),
    ("The Vey choir has 48 members and the Lundby choir 35.", "How many members has the Vey choir?", "83", "83"),
    ("The Lundby Canal is 40 km long. The Vey Canal is 25 km long.", "How long is the Vey Canal?", "20 km", "20"),
    ("The Vey bridge opened on 4 July 1921.", "When did the Vey bridge open?", "4/8/1921", "8"),
    ("The Vey road was paved on 3 March 1921.", "When was the Vey road paved?", "Friday, 3 March 1921", "frida"),
    ("The Vey school was founded by the Lind family.", "Who founded the Vey school?", "the Sunds", "sunds"),
])
def test_another_number_name_or_quantity_is_still_named(passage, question, answer, named):
    pad = Scratchpad(question=question, facts=[Fact(source="t", title="Notes", text=passage, step=1)])
    assert named in (unsupported_reason(answer, pad) or ""), unsupported_reason(answer, pad)




def test_a_lone_i_is_a_pronoun_after_an_opening_or_a_function_word_and_a_numeral_in_a_name():
    pad = Scratchpad(question="Who founded the Vey guild?",
                     facts=[Fact(source="t", title="Notes", text="Ada Brandt founded the Vey guild.", step=1)])
    for answer in ("Honestly I think Ada Brandt founded it.", "Then I read that Ada Brandt did.", "Ada Brandt, I read."):
        assert unsupported_reason(answer, pad) is None, answer
    assert "1" in unsupported_reason("King Ada I of Vey", pad)


def test_a_second_of_time_the_first_of_a_sentence_and_a_date_keep_their_spelling():
    for text in ("60 km per second, a second later", "each second", "the first bridge", "1905-07-01", "1999-01"):
        assert one_spelling(text) == text
    assert one_spelling("his second wife, the First Lundby War, 1998\u201399") == "his 2 wife, the 1 Lundby War, 1998\u20131999"
    assert one_spelling("1500k fans, 2.5k seats, 1.2345k") == "1500000 fans, 2500 seats, 1234.5"


def test_a_count_or_a_measure_pint_knows_another_way_is_no_quantity():
    # "in", "a" and "point" are units to pint; a time is a count of years, read otherwise
    assert quantities("40 in Tarbury, 3 a day, 40 points, 4 years, 12 C") == []
    assert [(q.number, q.unit) for q in quantities("12 sq mi and 60 km/h and 5 m")] == [
        ("12", "mile ** 2"), ("60", "kilometer / hour"), ("5", "meter")]


def test_a_count_of_years_is_worked_out_from_two_years_read():
    pad = Scratchpad(question="How old was Olaf Sund when he died?")
    pad.facts.append(Fact(source="t", title="Olaf Sund", text="Olaf Sund (1934 - 2001) was a Norvanian painter.", step=1))
    assert unsupported_reason("He was 67.", pad) is None and unsupported_reason("66", pad) is None
    assert "no passage read holds 70" in unsupported_reason("70", pad)
    pad.question = "How many paintings did Olaf Sund make?"  # a count of other things is not worked out from years
    assert "no passage read holds 67" in unsupported_reason("67", pad)
    # an answer that gives a count of years of its own ("aged 67") is read so, whatever was asked
    assert unsupported_reason("Olaf Sund, who died aged 67.", pad) is None
    assert unsupported_reason("He painted until he was 66 when he died.", pad) is None
    assert "no passage read holds 60" in unsupported_reason("Olaf Sund, who died aged 60.", pad)


def test_a_name_written_out_is_read_where_a_passage_writes_its_acronym():
    pad = Scratchpad(question="Which body did Olaf Sund join in 1960?")
    pad.facts.append(Fact(source="t", title="Olaf Sund", text="Olaf Sund joined the NPA in 1960 as a painter.", step=1))
    assert unsupported_reason("the Norvanian Painters Association", pad) is None
    assert "no passage read holds" in unsupported_reason("the Lundby Art Society", pad)


def test_a_capable_models_number_in_its_own_format_is_the_answer(use_lm):
    choir = LocalCorpusSearch(CorpusIndex.build([Passage("choir", "Tarbury choir", "The Tarbury choir has twenty-five members.")]))
    pred = ask(choir, "How many members does the Tarbury choir have?", "It has 25 members.", use_lm, profile="capable")
    assert (pred.answer, pred.answer_origin, pred.replaced_because) == ("It has 25 members.", "lm", None)


GUILD = [Passage(id="guild", title="Tarbury Writers Guild",
                 text="The Tarbury Writers Guild was founded in 1903 by the poet Ada Lind. It meets in the old mill."),
         Passage(id="mill", title="Tarbury mill", text="The old mill of Tarbury grinds oats for the valley.")]


GUILD_QUESTION = "Who founded the Tarbury Writers Guild?"


def answered_in_a_sentence(answer: str, use_lm) -> object:
    def step_reply(prompt):
        return step(move="synthesize") if "Ada Lind" in prompt else step("Tarbury Writers Guild founder")
    engine = ScriptedEngine(classify=classify("lookup"), step=step_reply, judge=lambda _: {"answerability": "direct",
                            "reason": "read"}, diversify=lambda _: {"strategy": "direct", "query": "Tarbury guild"},
                            synthesize=lambda _: synth(answer, sources=["guild"]))
    program = DeltaSeek(tools=[LocalCorpusSearch(CorpusIndex.build(GUILD))], settings=AgentSettings(profile="capable"))
    with use_lm(scripted_lm(engine)):
        return program(question=GUILD_QUESTION)


@pytest.mark.parametrize("answer", [
    "Based on the passages, Ada Lind founded it.",
    "It was founded by Ada Lind in 1903.",
    "According to the sources, the guild was founded by the poet Ada Lind.",
    "Certainly! The Tarbury Writers Guild was founded by Ada Lind.",
    "In 1903, Ada Lind founded it.",
    "The passages say that Ada Lind founded it.",
    "From what I read, Ada Lind did.",
])
def test_a_capable_models_right_answer_in_a_sentence_comes_through_untouched(answer, use_lm):
    pred = answered_in_a_sentence(answer, use_lm)
    assert (pred.answer, pred.answer_origin, pred.replaced_because) == (answer, "lm", None)


@pytest.mark.parametrize("answer, named", [
    ("Based on the passages, Mira Holt founded it.", "holt, mira"),
    ("It was founded by Ada Lind in 1911.", "1911"),
    ("Zorbo founded it.", "zorb"),
])
def test_a_wrong_answer_in_a_sentence_is_still_named_and_set_aside(answer, named, use_lm):
    pred = answered_in_a_sentence(answer, use_lm)
    assert pred.answer_origin != "lm" and named in pred.replaced_because, pred.replaced_because


def test_the_claim_of_an_answer_leaves_out_its_framing_only():
    assert checks.claim("Based on the passages, Ada Lind founded it.") == "Ada Lind founded it."
    assert checks.claim("According to the Passages, Ada Lind founded it.") == "Ada Lind founded it."  # capitalized, no name
    assert checks.claim("Ada Brandt (1921 - 2001) wrote it.") == "Ada Brandt (1921 - 2001) wrote it."  # years, no conversion
    # a remark on the reading beside the claim is frame; one with a name, a number, yes or no is a claim
    assert checks.claim("The sources discuss the guild at length. It was Ada Lind.") == "Ada Lind."
    assert checks.claim("Ada Lind (see passage 2)") == "Ada Lind"
    # a remark on its own line, or one that points back with an adverb, is a remark too
    assert checks.claim("Ada Lind\n\nThe first source says so plainly.") == "Ada Lind"
    assert checks.claim("Ada Lind. The sources state this too.") == "Ada Lind."
    assert checks.claim("I think it is Ada Lind; the sources agree on it.") == "Ada Lind."
    assert checks.claim("Ada Lind; born in 1850.") == "Ada Lind; born in 1850."  # a clause with a number is a claim
    assert checks.claim("Ada Lind \u2014 born in 1850.") == "Ada Lind \u2014 born in 1850."
    # sections beside the answer that remark on it, citation marks and numbered passages are frame
    assert checks.claim("**Answer:** Ada Lind\n**Sources:** passage 2, passage 4") == "Ada Lind"
    assert checks.claim("Reasoning: the guild met in Tarn.\nAnswer: Ada Lind") == "Ada Lind"
    assert checks.claim("Ada Lind [2], per source 3.") == "Ada Lind."
    assert checks.claim("Penn State, as the passages show.") == "Penn State."  # a name keeps its words
    # reasoning before a sentence that states the answer is not the claim
    assert checks.claim("Ada was born in 1850, Olaf later. So the answer is Ada.") == "Ada."
    assert checks.claim("Thus Ended the Feud") == "Thus Ended the Feud"  # a title, not a conclusion
    assert checks.claim("The sources state that Emily.") == "Emily."  # a name after "that" is the claim
    assert checks.claim("Ada Lind\nBorn in 1850.") == "Ada Lind Born in 1850."  # a line with a number is a claim
    assert checks.claim("Ada Lind (born 1850)") == "Ada Lind (born 1850)"
    assert checks.claim("I believe it is yes. Both were born in 1850.") == "yes. Both were born in 1850."
    assert checks.claim("The passages say no. Both were Veltrian.") == "no. Both were Veltrian."
    assert checks.claim("In 1903, Ada Lind founded it.") == "In 1903, Ada Lind founded it."  # a year is a claim
    assert checks.claim("Mira Holt, not Ada Lind, founded it.") == "Mira Holt, not Ada Lind, founded it."  # a name too


def test_a_sentence_that_describes_what_is_asked_does_not_answer_it():
    fact = Fact(source="mayor", title="", text="The mayor of Wendle is the head of its council.", step=1)
    assert evidence.restated_answer("Who is the mayor of Wendle?", [fact]) is None
    fact = Fact(source="mayor", title="", text="The mayor of Wendle is elected every four years.", step=1)
    assert evidence.restated_answer("Who is the mayor of Wendle?", [fact]) is None


def test_a_word_that_only_begins_like_a_currency_is_no_amount():
    assert compared_amounts("300 kronar and 40 eurozone", "The Vey fee was 300 kronor.") == ([], [])
    assert compared_amounts("300 kroner", "The Vey fee was 300 kronor.") == (["300 kroner"], [])


@pytest.mark.parametrize("answer, passage, kept", [
    ("a subprefecture", "Vey is a sub-prefecture of Lundby.", True),
    ("a sub-prefecture", "Vey is a subprefecture of Lundby.", True),
    ("its cofounder", "Ada Lind was a co-founder of the Tern Press.", True),
    ("a subprefecture", "Vey is a sub-district of Lundby.", False),
    ("a sub-prefecture", "Vey is a district of Lundby.", False),
])
def test_a_compound_is_read_hyphenated_or_closed(answer, passage, kept):
    pad = Scratchpad(question="What is Vey?", facts=[Fact(source="v", title="", text=passage, step=1)])
    assert (unsupported_reason(answer, pad) is None) == kept, unsupported_reason(answer, pad)


def test_the_surname_stands_for_a_full_name_unless_a_passage_names_another_of_it():
    def pad(*texts: str) -> Scratchpad:
        return Scratchpad(question="Who designed the Tern compiler?",
                          facts=[Fact(source=str(i), title="Tern", text=t, step=1) for i, t in enumerate(texts)])

    assert unsupported_reason("Ada Lind", pad("Tern was designed by Lind in 1990.")) is None
    assert unsupported_reason("Ada Lind", pad("Later Lind designed Tern.", "Professor Lind taught in Vey.")) is None
    assert "olaf" in unsupported_reason("Olaf Lind", pad("Tern was designed by Lind.", "Her teacher was Ada Lind."))
    assert unsupported_reason("Olaf Lind", pad("Tern was designed by Lind.", "Olaf Lind and Ada Lind met.")) is None
    # one person's other forms of a given name: a nickname, a middle name, an initial
    assert unsupported_reason("Bill Lind", pad("Tern was designed by William Jefferson Lind.")) is None
    assert unsupported_reason("Bill Lind", pad("William Jefferson Lind designed Tern.")) is None
    assert unsupported_reason("Jim Lind", pad("Tern was designed by James Lind.")) is None
    assert unsupported_reason("John Fitzgerald Lind", pad("Tern was designed by John F. Lind.")) is None
    assert "olaf" in unsupported_reason("Olaf Lind", pad("Tern was designed by James Patrick Lind."))


@pytest.mark.parametrize("question, options", [
    ("Who is older, Ida Brann or Olaf Sund?", ["Ida Brann", "Olaf Sund"]),
    ("Whom did Tern Hall hire Ida Brann or Olaf Sund?", ["Ida Brann", "Olaf Sund"]),          # the pair ends it
    ("Which team Vey United or Lund Rovers won more titles?", ["Vey United", "Lund Rovers"]),  # after the noun
    ("Which case came first, Vey v. Lund or Tarn v. Vey?", ["Vey v. Lund", "Tarn v. Vey"]),     # a name's small words
    ("What lies west of Tarn, Vey or Lund?", []),                                             # a list of three
    ("Which is the largest, Tarn, Vey or Lund?", []),
    ("What opened in 1990, the Vey Tower or Tern Hall?", ["Vey Tower", "Tern Hall"]),
    ("What is the capital of Veltria or Lundby?", []),                                        # asks of them
    ("Which film did Vey Studios or Lund Pictures release in 1990?", []),                     # asks for a film
    ("Are Tern Hall and Vey Tower both in Veltria?", []),                                     # yes or no
    ("Who founded Tarbury Rovers or Vey United in 1890?", []),
])
def test_a_question_that_asks_to_choose_names_its_two_options(question, options):
    assert choice_options(question) == options


def test_an_answer_naming_neither_option_of_a_choice_is_replaced_and_one_naming_an_option_stands():
    pad = Scratchpad(question="Which painter was from Lundby, Ada Brandt or Olaf Sund?", facts=FACTS)
    reason = answer_failure("Tarbury", pad, {"search_corpus"})
    assert reason == "the answer names neither option the question offers (Ada Brandt or Olaf Sund)"
    for answer in ("Olaf Sund", "Sund, the painter.", "Olaf Sund, who worked in Lundby."):
        assert answer_failure(answer, pad, {"search_corpus"}) is None, answer
    assert names_an_option("Neither of them.", ["Ada Brandt", "Olaf Sund"])  # not this check's to name
    assert names_an_option("The Who", ["Who", "Vey Hounds"])  # an option of stopwords alone: no word to tell


def test_a_choice_is_read_from_the_option_whose_passages_say_what_is_asked():
    question = "Which painter was from Lundby, Ada Brandt or Olaf Sund?"
    assert option_by_support(question, FACTS, choice_options(question)).span == "Olaf Sund"
    assert option_by_support("Which writer was better known, Ada Brandt or Olaf Sund?", FACTS,
                             ["Ada Brandt", "Olaf Sund"]) is None  # neither passage says it: a tie
    features_only = shipped_reader().without_adapter()
    pad = Scratchpad(question=question, facts=FACTS)
    reading = evidence.read_evidence(pad, reader=features_only)
    assert [s.span for s in reading.spans] == ["Olaf Sund"] and reading.answerability == "direct"
    unread = Scratchpad(question="Who is taller, Kai Moor or Lena Voss?", facts=FACTS)
    assert evidence.read_evidence(unread, reader=features_only).spans == []  # no passage speaks of either: search on


def test_a_pair_asked_about_together_reads_what_each_is_in_its_own_words():
    """"Are both A and B X?" holds where each side's passages say X: a plural read as the
    singular a passage writes, "located in" as "in", and, for what each is, the last word of X in
    the sentence its own passage opens with. What the two share ("the same band") is not read."""
    facts = [Fact(source="lind", title="Ada Lind", text="Ada Lind was a Veltrian poet and composer. She lived in Tarbury.",
                  step=1),
             Fact(source="sund", title="Olaf Sund", text="Olaf Sund was an organist and composer from Lundby, Veltria.",
                  step=1)]
    assert compare_pair("Are both Ada Lind and Olaf Sund music composers?", facts).span == "yes"
    assert compare_pair("Are Ada Lind and Olaf Sund both poets?", facts).span == "no"
    assert compare_pair("Are Ada Lind and Olaf Sund both located in Veltria?", facts).span == "yes"
    assert compare_pair("Were Ada Lind and Olaf Sund both in the same band?", facts) is None
    assert compare_pair("Were Ada Lind and Olaf Sund both organists in Tarbury?", facts).span == "no"
