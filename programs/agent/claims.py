"""What an answer claims, read through the sentence around it.

A capable model writes its answer in a sentence: "According to the passages, the answer is Ada
Lind.", "I believe it is no.", "Ada Lind is the answer, as the sources show." The checks
(`checks.py`) test the claim, never the frame: a lead-in clause about the passages or about
answering, a label ("Answer:"), a reporting frame ("I believe that", "The passages state that"),
"the answer is", "it is", a closing "as the passages show" or "is the answer", and the words
about the passages themselves. Each frame is a general pattern of English, written here with
hand-made examples.
"""

from __future__ import annotations

import re
from functools import cache

from deltaseek.programs.text import DIGITS_OF_NUMBER_WORDS, named_entities, stopwords

EVIDENCE_TALK = frozenset("""passage passages source sources fact facts evidence text texts document documents context
provided read found say says said state states stated mention mentions mentioned according based given search searches
show shows showed shown indicate indicates indicated suggest suggests suggested confirm confirms confirmed
retrieved""".split())
"""Words an answer uses about the passages themselves ("the passages say that", "according to the
sources"): framing, not a claim of its own to find in them."""
FRAME_WORDS = frozenset("""answer answers question correct final short response reply likely probably possibly
apparently clearly think believe conclude conclusion can could would say seems seem appears appear""".split())
"""Words a sentence uses about answering ("the correct answer is", "I believe", "it seems"): the
frame around a claim, never a claim of their own."""
_LEAD_IN = re.compile(r"^\s*([^,:;!?]{1,60})[,:;!]\s+(?=\S)")
LEAD_IN_WORDS = 6
"""A clause before the first comma this short that names nothing frames the answer ("Based on the
passages,", "Certainly!", "In short:"); a longer one, or one with a name or a number, is a claim."""
_WHICH_PASSAGE = r"(?:(?:first|second|third|fourth|fifth|last|other|same|retrieved|provided|given|top)\s+)?"
"""A word picking out which passages a sentence speaks of: "The first passage ...", "The retrieved
sources ..."."""
_ANSWER_NOUN = (r"(?:the\s+|my\s+)?(?:(?:correct|final|short|likely|best|right)\s+)?answer"
                r"(?:\s+to\s+(?:the|this|your)\s+question)?")
"""The answer named as such: "the answer", "my final answer", "the answer to the question"."""
_CONCLUDING_WORD = r"(?:so|thus|therefore|hence)"
"""A word that opens a conclusion: "So the answer is X."."""
_REPORTING = re.compile(
    rf"^\s*(?:the\s+|these\s+|those\s+)?{_WHICH_PASSAGE}(?:passages?|sources?|facts?|texts?|documents?|evidence|"
    r"searches|(?:search\s+)?results?)(?:\s+\w+){0,3}?\s+(?-i:say|says|state|states|show|shows|indicate|indicates|"
    r"suggest|suggests|mention|mentions|confirm|confirms|tell us|make clear|point to|points to)\s+(?:that\s+)?", re.I)
"""A report of what the passages say: "The passages state that X" claims X. The verb in lower case: in
"The passages point to Ohio State", "State" is a name's word."""
_FRAMES = [re.compile(p, re.I) for p in (
    r"^\s*(?:\*\*|__|[\"'“‘`])+|(?:\*\*|__|[\"'”’`])+(?=[.!]?\s*$)",  # markdown bold, quotes round the answer
    r"^\s*(?:the\s+)?(?:final\s+|short\s+|correct\s+)?answer\s*:\s*",  # a label: "Answer: ..."
    r"^\s*1[.)]\s+(?=\S)",  # the marker of a numbered list's first item: "1. Ada Lind"
    r"^\s*(?:i|we)\s+(?:can\s+|could\s+|would\s+|do\s+)?(?:say|think|believe|conclude|see|note|found|find)"
    r"\s+(?:that\s+)?",
    _REPORTING.pattern,
    rf"^\s*{_ANSWER_NOUN}\s+(?:is|was|would\s+be|must\s+be|appears\s+to\s+be|seems\s+to\s+be)\s*:?\s+",
    r"^\s*(?:it|this|that)\s+(?:is|was|would\s+be|must\s+be|appears\s+to\s+be|seems\s+to\s+be)\s+(?=\S)",
    r"(?:,|\s+[-\u2013\u2014])?\s+(?:as|according\s+to|based\s+on|per|from)\s+(?:(?:stated|shown|noted|reported|"
    r"given|mentioned|described|written|listed)\s+(?:in|by)\s+)?(?:(?:the|what|these|those)\s+(?:\w+\s+){0,3}?"
    r"(?:passages?|sources?|facts?|texts?|documents?|searches|results?)(?:\s+\w+){0,2}?"
    r"|what\s+(?:\w+\s+){0,2}?(?:found|read|retrieved|searched|saw|seen))(?=[.!]?\s*$)",
    r"\s+(?:is|was|would\s+be|as)\s+the\s+(?:(?:correct|final|right|likely)\s+)?answer(?=[.!]?\s*$)",
)]
"""Frames a sentence puts round its claim, each a general pattern of English: "Answer: X",
"I think that X", "The passages state that X", "The answer is X", "It is X", "X, as the
passages show" (or "X - as stated in the sources", "X, based on what was found"), "X is the
answer". What the frame leaves is what is checked."""
_REMARK = re.compile(r"\s*[(\[]([^()\[\]]{1,80})[)\]](?=[.!]?\s*$)")
"""A closing remark in brackets: "X (as stated in the passages)", "X [see the second source]"."""
_CERTAINTY = re.compile(r"^\s*(?:(?:confidence|certainty)(?:\s+level)?\s*[:=]?\s*(?:very\s+|fairly\s+|quite\s+)?"
                        r"(?:high|low|medium|moderate|\d{1,3}\s*%)|(?:very\s+|fairly\s+|quite\s+)?"
                        r"(?:high|low|medium|moderate)\s+(?:confidence|certainty))\s*$", re.I)
"""A remark in brackets on how sure the model is, "(confidence: high)", "(high confidence)": about the
answer, not a claim of its own."""
_NUMBERED_SOURCE = re.compile(r"\b(?:passages?|sources?|documents?|results?|facts?)\s*#?\d+", re.I)
"""A passage named by its number ("passage 2"): a pointer to what was read, not a claim."""
_ABOUT_THE_READING = re.compile(rf"^\s*(?:(?:the|these|those|my|our|no|each|every|all)\s+)?{_WHICH_PASSAGE}"
                                r"(?:(?:passages?|sources?|facts?|texts?|documents?|evidence|search(?:es)?|"
                                r"(?:search\s+)?results?|question)\b|(?:i|we)\s+"
                                r"(?:searched|read|looked|checked|found|reviewed|consulted|went)\b)", re.I)
"""A sentence whose subject is the passages, the question or the reading ("The sources ...",
"I searched ...")."""
_POINTS_BACK = re.compile(r"(?:this|that|so|it|as\s+much)(?:\s+(?-i:[a-z]+ly)|\s+too|\s+as\s+well)?\b"
                          r"(?=\s*(?:[,.;!]|$))", re.I)
"""A report's object that points back to the answer, with an adverb or none: "The sources say so.",
"The second passage states this directly.", "The passages say so too." A name after "that" is a
claim ("The sources state that Emily."): the adverb is a lower-case word."""
_CLOSING_CLAUSE = re.compile(r",\s+(?:although|though|even\s+though|but|while|since|because|as|and|yet)\s+"
                             r"([^,;]{1,80}?)(?=[.!]?\s*$)", re.I)
"""A closing clause joined to the answer, which may speak only of the passages: "Ada Lind, although
the sources mention her only briefly."."""
_ASIDE = re.compile(r"(?:\s*;|\s+[-\u2013\u2014]{1,2})\s+([^;\u2013\u2014]{1,80}?)(?=[.!]?\s*$)")
"""A closing aside after a semicolon or a dash, which may remark only on the reading: "Ada Lind;
the sources agree on it.", "Ada Lind \u2014 this is stated in the first passage."."""
_CITATIONS = re.compile(r"\s*\[\d{1,2}(?:\s*[,\u2013-]\s*\d{1,2})*\]")
"""A citation mark in square brackets, "[1]", "[2, 3]": a pointer to a passage, not a claim."""
_CONVERSION = re.compile(r"(?<=\d)(\s*\u00b0?[^\W\d]{0,12}\.?)\s*\(\s*(?:about|approximately|approx\.|roughly|around|some|~|\u2248)?"
                         r"\s*[$\u20ac\u00a3]?\d[\d,.]*\s*\u00b0?[^\W\d][^()\d]{0,15}\)")
"""A quantity converted in brackets after the quantity read: "300 feet (91 m)", "5 km (about 3.1
miles)". The claim is the quantity the passages give; the conversion is the model's arithmetic."""
_NUMBERED_PASSAGE = re.compile(r"\b(?:passages?|sources?|documents?)\s*#?\d{1,2}\b", re.I)
"""A passage named by its number in the answer's frame: "Ada Lind, according to passage 1." is
"according to the passage". Narrower than `_NUMBERED_SOURCE`, which reads a remark already
known to speak of the reading: across the whole answer, "results 3" or "fact 12" may be a claim."""
_SECTION_LABEL = re.compile(r"^\s*(?:[-*>#]+\s*)?(?:\*\*|__)?([A-Za-z][A-Za-z ]{0,24}?)(?:\*\*|__)?\s*:")
REMARK_SECTIONS = frozenset("""explanation reasoning reason reasons rationale justification source sources evidence
reference references citation citations note notes confidence support supporting context caveat caveats details
why""".split())
"""Labels of the sections that a capable model writes beside its answer ("**Explanation:** ...",
"Sources: ..."): what they say is about the answer, not the answer."""
_DETERMINER_NO = re.compile(r"\bno(?=\s+[a-z])", re.I)
""""no" before the word it qualifies ("no other passage says so") is no answer; "The passages say
no." is."""
_STATES_THE_ANSWER = re.compile(r"\b(?:answer|it|this|that)\s+(?:is|was|would\s+be|must\s+be)\s+\S", re.I)
"""A clause that goes on after "the answer is" holds the answer: "The answer is two, ..." claims two."""
_STATES_ITS_ANSWER = re.compile(rf"(?:^|[,:]\s+|\b{_CONCLUDING_WORD}\s+){_ANSWER_NOUN}\s+(?:is|would\s+be|must\s+be)\b"
                                r"|^\W*(?:(?:final|short|correct)\s+)?answer\W*:", re.I)
"""A sentence that states the answer as the answer: "So the answer is X.", "Answer: X"."""
_CONCLUDING = re.compile(rf"^\s*{_CONCLUDING_WORD}\b,?\s*(?=(?:the\s+|my\s+)?(?:\w+\s+)?answer\b|it\s+(?:is|was)\b)", re.I)
"""The conclusion's opening word before the answer it states: "So the answer is X." states "the
answer is X"; "Thus Ended the Feud" is a title."""
_OWN_CLAIMS = frozenset("yes no answer answers".split())
"""Words that make a remark a claim: "The passages say no.", "The question's answer is ..."."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'*(])|\s*\n\s*(?=[A-Z\"'*(])")
"""Where a sentence ends: after its full stop, or at a line break before a capital, as an answer
on its own line with a remark on the next ("Ada Lind\n\nThe second passage says so.")."""


READING_WORDS = frozenset("passage passages source sources fact facts evidence text texts document documents context "
                          "search searches result results retrieved provided given".split())
"""The nouns of `EVIDENCE_TALK`, for search results and the words that pick them out: what was
read, never a name in a lead-in ("According to the Retrieved Passages,")."""
ABOUT_ANSWERING = EVIDENCE_TALK | FRAME_WORDS
"""Every word a frame may hold: none of them is a claim."""
BEING = frozenset("is was are were has had have will would".split())
"""A verb that, after a word of the clause's own, makes the clause a claim ("a miller was ...")."""
ONE_WORD_LEAD_INS = frozenset("certainly sure well okay ok so thus therefore hence indeed overall briefly "
                              "essentially basically clearly".split())
"""Lone words that only frame ("Certainly!"); any other lone word may be the answer ("Paris, France")."""
SUMMING_UP = frozenset("short brief summary sum conclusion overall words results result reading information".split())
"""Words of a clause that sums up ("In short,", "In a word,"): a frame."""


@cache
def _framing_words() -> frozenset[str]:
    """Words of a lead-in that are no claim of its own: about answering, lone framing words,
    summing up, stopwords."""
    return ABOUT_ANSWERING | ONE_WORD_LEAD_INS | SUMMING_UP | stopwords()


def frames_the_answer(clause: str) -> bool:
    """Whether a clause before the first comma frames the answer rather than claims: at most
    `LEAD_IN_WORDS` words, no number and no name after its first word, no verb of being after a
    word of its own ("a miller was the answer", "Reading is ...", "Let It Be is the answer"), and words about the passages,
    about answering or about summing up ("According to the passages,", "Based on what was found,",
    "To answer the question,", "In short,"). Any other clause may be the answer itself ("its
    difficulty, as ...", "Yes, ...", "Paris, France"); of lone words only those that merely frame
    pass ("Certainly!")."""
    words = [w.lower().strip(".!?\"'") for w in clause.split()]
    # a noun for the passages capitalized ("According to the Passages,") is no name; "Penn State" is one
    names = [n for n in named_entities(" ".join(clause.split()[1:])) if n.lower() not in READING_WORDS]
    if len(words) > LEAD_IN_WORDS or re.search(r"\d", clause) or names:
        return False
    if len(words) == 1:
        return words[0] in ONE_WORD_LEAD_INS
    if {"yes", "no"} & set(words) or _STATES_THE_ANSWER.search(clause):  # "The answer is two, based on ..."
        return False
    # "Let It Be is the answer": a word of its own anywhere before the verb, though a stopword stands next to it
    framing = _framing_words()
    if any(word in BEING and any(before not in framing for before in words[:at]) for at, word in enumerate(words)):
        return False
    return any(word in ABOUT_ANSWERING or word in SUMMING_UP for word in words)


def remarks_on_the_reading(text: str) -> bool:
    """Whether a remark beside the answer (a sentence, or words in brackets) speaks only of the
    passages, the question or the reading: it holds a word about them ("(as stated in the
    retrieved passages)", "(passage 2)"), and no name, number, "yes", "no" or answer of its own."""
    text = _DETERMINER_NO.sub("none", _NUMBERED_SOURCE.sub("passage", text))
    words = {w.lower().strip(".,;:!?\"'()[]") for w in text.split()}
    if (re.search(r"\d", text) or words & _OWN_CLAIMS or words & set(DIGITS_OF_NUMBER_WORDS)
            or named_entities(" ".join(text.split()[1:]))):
        return False
    return bool(words & EVIDENCE_TALK) or bool(_ABOUT_THE_READING.match(text))


def only_about_the_reading(text: str) -> bool:
    """Whether the passages or the reader are the text's subject and it remarks only on them."""
    return bool(_ABOUT_THE_READING.match(text)) and remarks_on_the_reading(text)


def reports_a_claim(sentence: str) -> bool:
    """Whether the sentence reports what the passages say ("The passages state that the mill
    burned."), not only that they say it ("The first passage states this.")."""
    report = _REPORTING.match(sentence)
    return bool(report) and not _POINTS_BACK.match(sentence, report.end())


def without_remarks(answer: str) -> str:
    """The answer without the sentences beside it that only remark on the reading ("The passages
    discuss this directly. The answer is X." claims "The answer is X."): a sentence whose subject
    is the passages or the reader, that reports nothing ("The passages state that ..." reports a
    claim) and names nothing, or a remark's labelled section written in the same line ("X.
    Confidence: 90%"). Where a later sentence states the answer ("Looking at the passages,
    the relevant one covers this. So the answer is X."), the sentences before it are the
    reasoning that led there, and the claim is that sentence's. One sentence at least is kept,
    the claim's own."""
    parts = _SENTENCE_END.split(answer.strip())
    stating = max((i for i, part in enumerate(parts) if _STATES_ITS_ANSWER.search(part)), default=0)
    if stating:
        parts = [_CONCLUDING.sub("", parts[stating], count=1), *parts[stating + 1:]]
    kept = [part for part in parts if (reports_a_claim(part) or not only_about_the_reading(part))
            and not is_remark_section(part)] or parts
    return " ".join(kept) if stating or len(kept) < len(parts) else answer


def is_remark_section(text: str) -> bool:
    """Whether the text opens with the label of a section that remarks on the answer
    (`REMARK_SECTIONS`): "Confidence: high", "**Source:** the second passage"."""
    label = _SECTION_LABEL.match(text)
    return bool(label) and label.group(1).strip().lower() in REMARK_SECTIONS


def without_remark_sections(answer: str) -> str:
    """The answer without the labelled sections beside it that remark on it, each on its own line
    ("**Answer:** Ada Lind\n\n**Explanation:** The second passage names her." claims "**Answer:**
    Ada Lind"): a line opening with a label of `REMARK_SECTIONS` and the lines after it, up to the
    next labelled line. What is left must say something, or the answer is kept whole."""
    lines, kept, in_remark = answer.split("\n"), [], False
    for line in lines:
        if _SECTION_LABEL.match(line):
            in_remark = is_remark_section(line)
        if not in_remark:
            kept.append(line)
    left = "\n".join(kept).strip()
    return left if left and len(kept) < len(lines) else answer


def claim(answer: str) -> str:
    """What the answer asserts, without its framing: a short lead-in clause that names nothing,
    the frames of `_FRAMES` (as often as they are stacked), and the words about the passages
    themselves. "Based on the passages, the answer is Ada Lind." claims "Ada Lind."; "In 1903,
    Ada Lind founded it." keeps its year."""
    answer = _NUMBERED_PASSAGE.sub("the passage", _CITATIONS.sub("", without_remark_sections(answer)))
    answer = _CONVERSION.sub(r"\1", answer)
    if (remark := _REMARK.search(answer)) and _CERTAINTY.match(remark.group(1)):  # before a lead-in can take its colon
        answer = answer[:remark.start()] + answer[remark.end():]
    before, answer = None, without_remarks(answer)
    while before != answer:
        before = answer
        answer = _CONCLUDING.sub("", answer, count=1)
        if (lead := _LEAD_IN.match(answer)) and frames_the_answer(lead.group(1)):
            answer = answer[lead.end():]
        if (remark := _REMARK.search(answer)) and remarks_on_the_reading(remark.group(1)):
            answer = answer[:remark.start()] + answer[remark.end():]
        if (closing := _CLOSING_CLAUSE.search(answer)) and only_about_the_reading(closing.group(1)):
            answer = answer[:closing.start()] + answer[closing.end():]
        if (aside := _ASIDE.search(answer)) and remarks_on_the_reading(aside.group(1)):
            answer = answer[:aside.start()] + answer[aside.end():]
        for frame in _FRAMES:
            answer = frame.sub("", answer, count=1)
    kept: list[str] = []
    for word in answer.split():
        bare = word.lower().strip(".,;:!?\"'()[]")
        # a capitalized word after a name's word is the name's: "Ohio State", "Penn State"
        name_goes_on = word[:1].isupper() and kept and kept[-1][:1].isupper() and kept[-1].lower() not in stopwords()
        if bare not in ABOUT_ANSWERING or name_goes_on:
            kept.append(word)
    return " ".join(kept)
