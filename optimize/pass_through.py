"""Does a capable model's right answer reach the user as it wrote it, in any phrasing?

The oracle (`scenario_lms.OracleEngine`: a scripted capable model that searches with the
question, then answers with the label) writes its answers in each of `PHRASINGS`, over a
labeled set's questions, in one process with one LM object per phrasing, in the set's order
and then reversed. For each phrasing the report counts:

- `kept`: of the answerable questions whose answer was in the facts read, those whose final
  answer is the model's own, word for word (origin `lm`);
- `abstention_kept`: of the unanswerable questions, those where the model's "the passages do
  not say" is the final answer;
- `order_changes`: questions whose answer or moves differ between the two orders (a run
  depends only on its inputs, so this must be 0).

    python -m deltaseek.optimize.pass_through --dataset datasets/squad2.jsonl --split test
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field

import dspy

from deltaseek.metrics.answers import normalize_answer
from deltaseek.optimize.evaluate import corpora_for
from deltaseek.optimize.run_tracking import split_examples
from deltaseek.optimize.scenario_lms import PHRASINGS, phrase, scenario_lm
from deltaseek.programs.agent.deltaseek import DeltaSeek
from deltaseek.programs.agent.run import run_question
from deltaseek.programs.index import CorpusIndex
from deltaseek.programs.tools import LocalCorpusSearch


@dataclass
class PhrasingReport:
    phrasing: str
    answer_read: int = 0
    kept: int = 0
    unanswerable: int = 0
    abstention_kept: int = 0
    order_changes: int = 0
    set_aside: list[dict] = field(default_factory=list)
    """Each answer a check set aside: the question, what the model wrote and the check's reason."""

    def row(self) -> dict:
        return {"phrasing": self.phrasing, "kept": self.kept, "answer_read": self.answer_read,
                "kept_share": round(self.kept / self.answer_read, 3) if self.answer_read else None,
                "abstention_kept": self.abstention_kept, "unanswerable": self.unanswerable,
                "abstention_kept_share": round(self.abstention_kept / self.unanswerable, 3) if self.unanswerable
                else None, "order_changes": self.order_changes}


def answer_was_read(record: dict, answers: list[str]) -> bool:
    """Whether a labeled answer (or an alias) stands in a fact the run read."""
    facts = " ".join(f"{f['title']} {f['text']}" for f in record["trajectory"]["facts"])
    read = f" {normalize_answer(facts)} "
    return any(norm and f" {norm} " in read for norm in map(normalize_answer, answers))


def moves(record: dict) -> list[tuple]:
    return [(c["tool"], c["args"].get("query"), c["executed"]) for c in record["tool_calls"]]


def measure(examples: list[dspy.Example], phrasing: str, tool) -> PhrasingReport:
    """One phrasing over the examples, one LM object for both orders."""
    lm = scenario_lm("oracle", tool.name, examples, phrasing)
    program = DeltaSeek(tools=[tool])
    report = PhrasingReport(phrasing)
    runs: dict[str, list[dict]] = {}
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
        for ordered in (examples, examples[::-1]):
            for example in ordered:
                runs.setdefault(example.question, []).append(run_question(program, example.question))
    for example in examples:
        first, second = runs[example.question]
        if (first["answer"], moves(first)) != (second["answer"], moves(second)):
            report.order_changes += 1
        answerable = example.get("answerability") != "unlikely" and bool(example.get("answer"))
        written = phrase(example.answer if answerable else "", phrasing)
        kept = first["answer_origin"] == "lm" and first["answer"] == written
        if not answerable:
            report.unanswerable += 1
            report.abstention_kept += kept
        elif answer_was_read(first, [example.answer, *(example.get("aliases") or [])]):
            report.answer_read += 1
            report.kept += kept
        else:
            continue
        if not kept:
            report.set_aside.append({"question": example.question, "written": written, "answer": first["answer"],
                                     "replaced_because": first["replaced_because"]})
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deltaseek.optimize.pass_through", description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--phrasings", default=",".join(PHRASINGS), help="comma-separated, of: " + ", ".join(PHRASINGS))
    parser.add_argument("--show", type=int, default=5, help="answers set aside to print, per phrasing")
    args = parser.parse_args(argv)
    split, examples = split_examples(args.dataset, args.split, "test", args.limit)
    tool = LocalCorpusSearch(CorpusIndex.open(corpora_for(examples) or None))
    for phrasing in args.phrasings.split(","):
        report = measure(examples, phrasing.strip(), tool)
        print(json.dumps({"dataset": args.dataset, "split": split, "questions": len(examples), **report.row()}))
        for case in report.set_aside[:args.show]:
            print("   set aside:", json.dumps(case), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
