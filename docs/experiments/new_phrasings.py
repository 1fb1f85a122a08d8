"""Hand-written phrasings a capable model may write, none of them in `scenario_lms.PHRASINGS`:
does the oracle's right answer (and its abstention) pass the checks in each? Run over the seed
set and MuSiQue in one process, in both orders (`pass_through.measure`):

    python docs/experiments/new_phrasings.py [NAME ...] [--sets seed_set musique hotpotqa]   # every phrasing by default

Prints one JSON row a phrasing and the first answers set aside.
"""
import argparse, json, time
from deltaseek.bundled import labeled_set
from deltaseek.optimize import scenario_lms
from deltaseek.optimize.evaluate import corpora_for, load_dataset
from deltaseek.optimize.pass_through import measure
from deltaseek.programs.index import CorpusIndex, bundled_corpora
from deltaseek.programs.tools import LocalCorpusSearch

NEW = {
    "bold": ("**{answer}**", "**Not stated.** The passages do not say."),
    "quoted": ('The answer is "{answer}".', "I could not find this in the passages."),
    "based_on": ("Based on the search results, {answer}.", "Based on the search results, I don't know."),
    "colon_label": ("The answer is: {answer}", "I don't know."),
    "md_explained": ("**Answer:** {answer}\n\n**Explanation:** The passages state this directly.",
                     "**Answer:** Not stated\n\n**Explanation:** None of the passages mention this."),
    "final": ("Final answer: {answer}", "Final answer: cannot be determined from the given passages."),
    "from_retrieved": ("From the retrieved passages, {answer} is the answer to this question.",
                       "The provided passages do not contain this information."),
    "dash_source": ("{answer} \u2014 this is stated in the first passage.", "Unknown."),
    "sure": ("Sure! The answer is {answer}.", "I'm sorry, but the passages don't say."),
    "its": ("It's {answer}.", "N/A"),
    "per_passage": ("{answer}, according to passage 1.", "There is not enough information to answer."),
    "indicates": ("The information provided indicates {answer}.", "The information provided does not answer this."),
    "bullet": ("- {answer}", "- Not found in the passages"),
    "would_be": ("According to the search results, the answer would be {answer}.",
                 "According to the search results, there is no answer to this."),
    "short_source": ("Short answer: {answer}. (Source: passage 2)", "Short answer: unknown."),
    "sources_line": ("{answer}\n\nSources: passage 1, passage 3", "No relevant sources found."),
    "cited": ("{answer} [1][3]", "The passages do not say [2]."),
    "reasoned": ("Looking at the passages, the relevant one covers this topic. Therefore, the answer is {answer}.",
                 "After checking all the passages, I can't find this."),
    "summed_up": ("To summarize: {answer}.", "To summarize: the passages don't cover this."),
    # a third batch, written on 2026-12-06 after the two above had been fixed for
    "json_like": ('{{"answer": "{answer}"}}', '{{"answer": null, "reason": "not in the passages"}}'),
    "id_say": ("I'd say {answer}.", "I'd say the passages don't tell us."),
    "bold_is_what": ("**{answer}** is what the passages say.", "**Nothing** in the passages answers this."),
    "in_short": ("In short, {answer}.", "In short, it cannot be determined from these passages."),
    "confidence_note": ("{answer} (confidence: high)", "Cannot be determined (confidence: low)."),
    "shouted": ("ANSWER: {answer}", "ANSWER: INSUFFICIENT INFORMATION"),
    "blockquote": ("> {answer}", "> The passages are insufficient to answer this."),
    "code": ("`{answer}`", "`unknown`"),
    "to_your_question": ("The answer to your question is {answer}.", "I'm unable to find this information."),
    "that_would_be": ("That would be {answer}.", "That isn't covered by any of the passages."),
    "response_reasoning": ("Response: {answer}\nReasoning: a passage names it directly.",
                           "Response: no answer\nReasoning: none of the passages mention it."),
    "numbered": ("1. {answer}", "1. Not mentioned in the passages."),
    "checked": ("Answer: {answer} \u2705", "Answer: \u274c not found"),
    "the_passages_point": ("The passages point to {answer} as the answer.",
                           "The passages don't contain enough information to answer this question."),
}
scenario_lms.PHRASINGS.update(NEW)
parser = argparse.ArgumentParser()
parser.add_argument("names", nargs="*", help="phrasings to run (default: every one above)")
parser.add_argument("--sets", nargs="+", default=["seed_set", "musique"],
                    help="bundled labeled sets to ask (HotpotQA: its train and dev questions only)")
args = parser.parse_args()
questions = [ex for name in args.sets for ex in load_dataset(str(labeled_set(name))).examples
             if name != "hotpotqa" or ex.get("split") in ("train", "dev")]
corpora = dict.fromkeys(map(str, [*bundled_corpora(), *corpora_for(questions)]))  # the default corpus, and any other set's
tool = LocalCorpusSearch(CorpusIndex.open(list(corpora)))
for name in (args.names or NEW):
    started = time.perf_counter()
    report = measure(questions, name, tool)
    print(json.dumps({**report.row(), "seconds": round(time.perf_counter() - started, 1)}), flush=True)
    for case in report.set_aside[:6]:
        print("   set aside:", json.dumps(case)[:400], flush=True)
