"""A capable model's right answer in another format than the passage's, and its reply in another
format than the signature's: does the answer pass? Hand-written passages and answers, none from a
dataset; no model is loaded (the replies are scripted):

    python docs/experiments/answer_formats.py

Prints each case, "ok" or "SET ASIDE" with the check's reason, and a count a group.
"""
import sys
from pathlib import Path

import dspy

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.scripted
from deltaseek import DeltaSeek
from deltaseek.metrics.contract import says_no_answer
from deltaseek.programs.agent.checks import answer_failure
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad
from deltaseek.programs.agent.settings import AgentSettings
from deltaseek.programs.index import CorpusIndex, Passage
from deltaseek.programs.tools import LocalCorpusSearch
from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth

SAME_VALUE = [  # (what a passage writes, the question, the same value as a capable model writes it)
    ("The bridge cost 1,200 dollars to build in 1901.", "How much did the bridge cost?", "1200 dollars"),
    ("The bridge cost 1200 dollars to build in 1901.", "How much did the bridge cost?", "$1,200"),
    ("The town had 12 million visitors last year.", "How many visitors did the town have?", "12,000,000"),
    ("The town had 1.2 million visitors last year.", "How many visitors did the town have?", "about 1,200,000"),
    ("The fair opens on the 3rd of March each year.", "When does the fair open?", "March 3"),
    ("The fair opens on March 3 each year.", "When does the fair open?", "March 3rd"),
    ("The choir has twelve members.", "How many members does the choir have?", "12"),
    ("The choir has 25 members.", "How many members does the choir have?", "twenty-five"),
    ("The choir has twenty-five members.", "How many members does the choir have?", "25 members"),
    ("She finished third in the race.", "Where did she finish in the race?", "3rd"),
    ("The poet lived to the age of 90.", "How old was the poet when she died?", "ninety"),
    ("The poet died aged ninety.", "How old was the poet when she died?", "90 years old"),
    ("The company had 4,500 employees.", "How many employees did the company have?", "4.5 thousand"),
    ("Olaf Sund (1934 - 2001) was a painter.", "How old was Olaf Sund when he died?", "He was 66 or 67."),
    ("He joined the UN in 1990 as a translator.", "Which organization did he join in 1990?", "The United Nations"),
    ("The survey was led by Mount Lindor's observatory.", "What led the survey?", "the Mt. Lindor observatory"),
    ("The tower was built in the 1800s.", "When was the tower built?", "in the 19th century"),
    ("King Edward VII opened the hall.", "Who opened the hall?", "Edward the Seventh"),
    ("The canal opened on 1 July 1905.", "When did the canal open?", "1905-07-01"),
    ("It weighs 2.5 tonnes.", "How much does it weigh?", "2,500 kg"),
]
OTHER_VALUE = [  # a wrong value: each must be set aside
    ("The bridge cost 1,200 dollars to build in 1901.", "How much did the bridge cost?", "1300 dollars"),
    ("The town had 1.2 million visitors last year.", "How many visitors did the town have?", "12 million"),
    ("The town had 12,000 visitors last year.", "How many visitors did the town have?", "12 million"),
    ("The choir has twenty-five members.", "How many members does the choir have?", "35"),
    ("She finished third in the race.", "Where did she finish in the race?", "2nd"),
    ("The fair opens on March 3 each year.", "When does the fair open?", "March 13"),
    ("Olaf Sund (1934 - 2001) was a painter.", "How old was Olaf Sund when he died?", "70"),
    ("He joined the UN in 1990 as a translator.", "Which organization did he join in 1990?", "NATO"),
]
GUILD_TEXT = "The Tarbury Writers Guild was founded in 1903 by the poet Ada Lind. It meets in the old mill."
GUILD_QUESTION = "Who founded the Tarbury Writers Guild?"
FRAMED = ["The guild was founded by **Ada Lind**.", "Ada Lind (Source: Tarbury Writers Guild)", "`Ada Lind`",
          "Ada Lind [source: guild]", "Ada Lind\n\nConfidence: high", "Ada Lind. Confidence: 90%", "1. Ada Lind",
          "## Answer\nAda Lind", "Answer: Ada Lind\nSource: [guild]", "I think it was Ada Lind, but I'm not certain.",
          "Probably Ada Lind.", "Ada Lind founded it; she was a poet.", "Who founded it? Ada Lind.",
          "Ada Lind founded the guild in 1903 in Tarbury, England."]
ABSTENTIONS = ["Nothing in the retrieved text answers this.", "Unclear from the sources.",
               "The passages make no reference to it.", "I don't have enough information to answer.",
               "This cannot be answered from the given context.", "The provided context does not specify."]
OFF_FIELDS = [  # (what the case is, the step's second reply, the synthesis) as a capable model may write them
    ("a label in capitals", None, {"answerability": "DIRECT"}), ("a label with a period", None, {"answerability": "direct."}),
    ("a word that is no label", None, {"answerability": "high"}), ("caveats as a string", None, {"caveats": "None."}),
    ("sources as a string", None, {"sources": "guild"}), ("the answer as a list", None, {"answer": ["Ada Lind"]}),
    ("the answer as an object", None, {"answer": {"name": "Ada Lind"}}),
    ("the move capitalized", {"next_move": "Synthesize"}, None), ("the move as 'finish'", {"next_move": "finish"}, None),
    ("evidence as a string", {"new_evidence": "Ada Lind founded it."}, None),
]


def check(passage: str, question: str, answer: str) -> str | None:
    pad = Scratchpad(question=question, facts=[Fact(source="t", title="Notes", text=passage, step=1)])
    return answer_failure(answer, pad, {"search_corpus", "finish", "query"})


def report(title: str, rows: list[tuple[str, str | None]], want_kept: bool) -> None:
    kept = sum(reason is None for _, reason in rows)
    print(f"\n{title}: {kept if want_kept else len(rows) - kept} of {len(rows)} as they should be")
    for text, reason in rows:
        print(("   ok        " if reason is None else "   SET ASIDE ") + repr(text) + (f"  ({reason})" if reason else ""))


def off_field_run(tool, second_step: dict | None, synthesis: dict | None) -> dspy.Prediction:
    engine = ScriptedEngine(classify=classify("lookup"),
                            step=lambda p: {**step(move="synthesize"), **(second_step or {})} if "Ada Lind" in p
                            else step("Tarbury Writers Guild founder"),
                            judge=lambda _: {"answerability": "direct", "reason": "read"},
                            diversify=lambda _: {"strategy": "direct", "query": "Tarbury guild"},
                            synthesize=lambda _: {**synth("Ada Lind", sources=["guild"]), **(synthesis or {})})
    program = DeltaSeek(tools=[tool], settings=AgentSettings(profile="capable"))
    with dspy.context(lm=scripted_lm(engine), adapter=dspy.JSONAdapter()):
        return program(question=GUILD_QUESTION)


report("The same value in another format", [(a, check(p, q, a)) for p, q, a in SAME_VALUE], want_kept=True)
report("Another value (must be set aside)", [(a, check(p, q, a)) for p, q, a in OTHER_VALUE], want_kept=False)
report("The answer in a frame", [(a, check(GUILD_TEXT, GUILD_QUESTION, a)) for a in FRAMED], want_kept=True)
print(f"\nAbstentions read: {sum(map(says_no_answer, ABSTENTIONS))} of {len(ABSTENTIONS)}")
guild = LocalCorpusSearch(CorpusIndex.build([Passage("guild", "Tarbury Writers Guild", GUILD_TEXT)]))
print("\nA reply with one field off (the model's answer 'Ada Lind' should stand, the run answered):")
for name, second_step, synthesis in OFF_FIELDS:
    pred = off_field_run(guild, second_step, synthesis)
    print(f"   {name:26} answer={pred.answer!r} origin={pred.answer_origin} stop={pred.stop_reason}"
          f" read leniently={pred.scratchpad.read_leniently}")
