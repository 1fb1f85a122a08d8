"""The oracle's right answer with its number written in another format than the labeled answer's:
does it still pass the checks? For each question of a labeled set whose answer holds a number,
the answer is rewritten by one general rule (a number in words as digits, thousands separators
dropped or added, a date as ISO 8601), and the scripted capable model (`OracleEngine`, bare
phrasing) answers with it; the count is of questions whose labeled answer the checks kept as
the model's, and of those, whose rewritten answer they kept too:

    python docs/experiments/number_formats.py DATASET [--split train] [--limit N]
"""
import argparse, calendar, json, re
import dspy
from text_to_num import alpha2digit
from deltaseek.optimize.evaluate import corpora_for
from deltaseek.programs.text import in_digits
from deltaseek.optimize.run_tracking import split_examples
from deltaseek.optimize.scenario_lms import OracleEngine
from deltaseek.programs.agent.deltaseek import DeltaSeek
from deltaseek.programs.agent.run import run_question
from deltaseek.programs.index import CorpusIndex
from deltaseek.programs.tools import LocalCorpusSearch

MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2}) (" + "|".join(MONTHS) + r"),? (\d{4})\b", re.I)
_MONTH_DAY_YEAR = re.compile(r"\b(" + "|".join(MONTHS) + r") (\d{1,2}),? (\d{4})\b", re.I)


def rewritten(answer: str) -> tuple[str, str] | None:
    """The answer with its number in another format, and the rule's name; None when no rule applies."""
    if m := _DAY_MONTH_YEAR.search(answer):
        return answer[:m.start()] + f"{m[3]}-{MONTHS[m[2].lower()]:02d}-{int(m[1]):02d}" + answer[m.end():], "date as ISO"
    if m := _MONTH_DAY_YEAR.search(answer):
        return answer[:m.start()] + f"{m[3]}-{MONTHS[m[1].lower()]:02d}-{int(m[2]):02d}" + answer[m.end():], "date as ISO"
    if re.search(r"\d,\d{3}", answer):
        return re.sub(r"(?<=\d),(?=\d{3})", "", answer), "separators dropped"
    if m := re.search(r"\b\d{5,}\b", answer):
        return answer[:m.start()] + f"{int(m[0]):,}" + answer[m.end():], "separators added"
    if m := re.search(r"\b(\d+(?:\.\d+)?) (thousand|million|billion)\b", answer):
        return answer[:m.start()] + f"{int(in_digits(m[0])):,}" + answer[m.end():], "scale multiplied out"
    digits = alpha2digit(answer, "en")
    if digits != answer:
        return digits, "words as digits"
    return None


def kept_by_the_checks(examples, labels, tool) -> dict[str, bool]:
    lm = dspy.LM("scenario/oracle", engine=OracleEngine(tool.name, labels), cache=False, num_retries=0)
    program = DeltaSeek(tools=[tool])
    kept = {}
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
        for example in examples:
            record = run_question(program, example.question)
            kept[example.question] = record["answer_origin"] == "lm" and record["answer"] == labels[example.question][0]
    return kept


parser = argparse.ArgumentParser()
parser.add_argument("dataset")
parser.add_argument("--split", default="train")
parser.add_argument("--limit", type=int)
args = parser.parse_args()
_, examples = split_examples(args.dataset, args.split, "test", None)
examples = [e for e in examples if e.get("answer") and rewritten(e.answer)][:args.limit]
tool = LocalCorpusSearch(CorpusIndex.open(corpora_for(examples) or None))
as_labeled = kept_by_the_checks(examples, {e.question: (e.answer, "direct") for e in examples}, tool)
as_rewritten = kept_by_the_checks(examples, {e.question: (rewritten(e.answer)[0], "direct") for e in examples}, tool)
by_rule: dict[str, list[int]] = {}
for e in examples:
    if as_labeled[e.question]:
        counts = by_rule.setdefault(rewritten(e.answer)[1], [0, 0])
        counts[0] += 1
        counts[1] += as_rewritten[e.question]
        if not as_rewritten[e.question]:
            print("   set aside:", json.dumps({"labeled": e.answer, "written": rewritten(e.answer)[0]}))
print(json.dumps({"dataset": args.dataset, "split": args.split, "with_a_number": len(examples),
                  "kept_as_labeled": sum(as_labeled.values()),
                  "kept_rewritten_of_those": {rule: f"{k} of {n}" for rule, (n, k) in by_rule.items()}}))
