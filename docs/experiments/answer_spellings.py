"""A capable model's right answer spelt otherwise than the passage spells it: accents, dashes and
quotes, British and American spelling, "&" and "and", initials with and without dots, an acronym
that spells a stopword, a time of day, an abbreviation in a name, a quantity in another unit.
Does it pass, and is another name or quantity still set aside? Hand-written passages and
answers, none from a dataset; no model is loaded:

    python docs/experiments/answer_spellings.py

Prints each case, "ok" or "SET ASIDE" with the check's reason, and a count a group.
"""
from deltaseek.programs.agent.checks import answer_failure
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad

SAME = [  # (what a passage writes, the question, the same thing as a capable model writes it)
    ("The café was opened by José Márquez in 1921.", "Who opened the café?", "Jose Marquez"),
    ("The cafe was opened by Jose Marquez in 1921.", "Who opened the cafe?", "José Márquez"),
    ("The war lasted from 1914–1918.", "When did the war last?", "1914-1918"),
    ("The war lasted from 1914-1918.", "When did the war last?", "1914 to 1918"),
    ("The shop is called O’Brien’s Books.", "What is the shop called?", "O'Brien's Books"),
    ("The hall has a theatre and a small library.", "What does the hall have?", "a theater and a small library"),
    ("The walls were painted in a bright colour.", "What was the colour of the walls?", "a bright color"),
    ("Unemployment fell to 7 per cent.", "What did unemployment fall to?", "7%"),
    ("It is a well-known landmark.", "What is it?", "a well known landmark"),
    ("The firm Barr & Sons built the mill.", "Who built the mill?", "Barr and Sons"),
    ("The church of St. Aldric stands by the river.", "Which church stands by the river?", "Saint Aldric"),
    ("He moved to the United States in 1950.", "Where did he move in 1950?", "the U.S."),
    ("He moved to the U.S. in 1950.", "Where did he move in 1950?", "the US"),
    ("He moved to the US in 1950.", "Where did he move in 1950?", "the U.S."),
    ("The report was written by the WHO in 2004.", "Who wrote the report?", "The WHO"),
    ("The report was written by the World Health Organization.", "Who wrote the report?", "WHO"),
    ("The prize went to the Nordvik co-operative.", "Who won the prize?", "the Nordvik cooperative"),
    ("The ship sailed at 9 a.m. on Monday.", "When did the ship sail?", "9am Monday"),
    ("The ship sailed at 9am on Monday.", "When did the ship sail?", "9 a.m."),
    ("The ship sailed at 9:00 AM on Monday.", "When did the ship sail?", "9 a.m."),
    ("Karl Sund Jr. founded the paper.", "Who founded the paper?", "Karl Sund Junior"),
    ("The team were the Tarbury Rovers F.C.", "What was the team?", "Tarbury Rovers FC"),
    ("The observatory stands on Mount Lindor.", "Where is the observatory?", "On Mt. Lindor"),
    ("The river is 40 km long.", "How long is the river?", "40 kilometres"),
    ("It weighs 2.5 tonnes.", "How much does it weigh?", "2,500 kg"),
    ("The river is 40 km long.", "How long is the river?", "about 25 miles"),
    ("The tower is 300 feet tall.", "How tall is the tower?", "about 91 metres"),
    ("The lake freezes at about -5 °C in winter.", "How cold does the lake get?", "23 °F"),
    ("The lake freezes at about -5 °C in winter.", "How cold does the lake get?", "−5 °C"),
    ("The train runs at 60 km/h.", "How fast is the train?", "60 kilometres per hour"),
]
OTHER = [  # another name, time or quantity: each must be set aside
    ("The café was opened by José Márquez in 1921.", "Who opened the café?", "Jose Martinez"),
    ("The war lasted from 1914–1918.", "When did the war last?", "1914-1919"),
    ("Unemployment fell to 7 per cent.", "What did unemployment fall to?", "17%"),
    ("The firm Barr & Sons built the mill.", "Who built the mill?", "Barr and Daughters"),
    ("The report was written by the UN in 2004.", "Who wrote the report?", "The WHO"),
    ("The ship sailed at 9 a.m. on Monday.", "When did the ship sail?", "10 a.m."),
    ("Karl Sund Jr. founded the paper.", "Who founded the paper?", "Karl Sund Senior"),
    ("The observatory stands on Mount Lindor.", "Where is the observatory?", "On Mt. Rask"),
    ("The river is 40 km long.", "How long is the river?", "40 miles"),
    ("It weighs 2.5 tonnes.", "How much does it weigh?", "2.5 pounds"),
    ("The tower is 300 feet tall.", "How tall is the tower?", "about 300 metres"),
]


def check(passage: str, question: str, answer: str) -> str | None:
    pad = Scratchpad(question=question, facts=[Fact(source="t", title="Notes", text=passage, step=1)])
    return answer_failure(answer, pad, {"search_corpus", "finish", "query"})


for title, cases, want_kept in (("The same thing spelt otherwise", SAME, True),
                                ("Another name, time or quantity (must be set aside)", OTHER, False)):
    rows = [(answer, check(passage, question, answer)) for passage, question, answer in cases]
    right = sum((reason is None) == want_kept for _, reason in rows)
    print(f"\n{title}: {right} of {len(rows)} as they should be")
    for answer, reason in rows:
        print(("   ok        " if reason is None else "   SET ASIDE ") + repr(answer) + (f"  ({reason})" if reason else ""))
