"""What the metrics read from a gold example and from a prediction, read defensively.

The prediction contract (from `DeltaSeek`): `answer: str`, `answerability` (direct /
proxy_only / unlikely), `stop_reason: str` and `tool_calls: list[dict]`, each call
`{"tool", "args": {"query"}, "status", "result_count", "executed", "blocked_reason"}`.
A crashed or partial prediction may lack any of them (or be None); the metrics score it
0 and never raise.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from typing import Any, Callable

from deltaseek.signatures import ANSWERABILITY, STOP_REASONS, StopReason

logger = logging.getLogger(__name__)


def field_of(obj: Any, name: str, default: Any = None) -> Any:
    """`obj.name` or `obj[name]`, or `default` when it is absent or reading it fails."""
    if obj is None:
        return default
    try:
        if isinstance(obj, dict):
            return obj.get(name, default)
        return getattr(obj, name, default)
    except Exception:  # a broken object is a missing field, not a crash of the metric
        return default


@dataclass(frozen=True)
class Gold:
    """What a labeled example expects."""

    answers: tuple[str, ...]
    """The answer and its aliases, non-empty ones only."""
    answerability: str

    @property
    def expects_abstention(self) -> bool:
        return self.answerability == "unlikely"


def read_gold(example: Any) -> Gold:
    answer = field_of(example, "answer")
    aliases = field_of(example, "aliases") or []
    if isinstance(aliases, str):
        aliases = [aliases]
    answers = tuple(a.strip() for a in [answer, *aliases] if isinstance(a, str) and a.strip())
    label = field_of(example, "answerability")
    if label not in ANSWERABILITY:
        label = "direct" if answers else "unlikely"
    return Gold(answers, label)


@dataclass(frozen=True)
class Outcome:
    """What a prediction says; None marks a field the prediction lacks."""

    answer: str | None
    answerability: str | None
    stop_reason: StopReason | None
    tool_calls: list[dict] | None

    @property
    def crashed(self) -> bool:
        """No answer at all: the program raised, or returned something that is not a prediction."""
        return self.answer is None


def read_outcome(pred: Any) -> Outcome:
    answer = field_of(pred, "answer")
    label = field_of(pred, "answerability")
    stop = field_of(pred, "stop_reason")
    calls = field_of(pred, "tool_calls")
    return Outcome(
        answer=answer if isinstance(answer, str) else None,
        answerability=label if label in ANSWERABILITY else None,
        stop_reason=stop if stop in STOP_REASONS else None,
        tool_calls=[c for c in calls if isinstance(c, dict)] if isinstance(calls, (list, tuple)) else None,
    )


ABSTENTION_PATTERNS = [re.compile(p, re.IGNORECASE) for p in (
    r"\bno (relevant |reliable |public |publicly available |such )?"
    r"(information|info|data|details|records?|results?|answers?|evidence|mentions?|references?|sources?)\b",
    r"\b(could|can|ca|was|were|is|are)(n['\u2019]?t| ?not)\b.{0,40}?\b(find|found|determine|determined|locate|"
    r"located|answer|answered|identify|identified|verify|verified|confirm|confirmed|establish|established)\b",
    r"\bunable to (find|determine|locate|answer|identify|verify|confirm|establish)\b",
    r"\b(do|does)(n['\u2019]t| not) know\b",
    r"\bnot (be )?(found|determined|known)\b",
    r"\b(unknown|unanswerable)\b",
    r"\b(insufficient|not enough|(do|does|did)(n['\u2019]t| not) have (enough|sufficient)) (information|info|data|details|evidence|context)\b",
    r"\b(do|does|did)(n['\u2019]t| not) (say|state|mention|give|tell|specify)\b",
    r"\b(passages?|sources?|texts?|documents?|results?|context|information)( provided| given| found)? "
    r"(do|does|did)(n['\u2019]t| not) (contain|include|provide|cover|address|answer|hold|name|discuss)\b",
    r"\bnot (stated|mentioned|given|specified|said|provided|addressed)\b",
    r"\bnot ((available|present|included|contained) )?(in|among|within|from) (the|these|those|any) (\w+ ){0,2}"
    r"(passages?|sources?|texts?|documents?|results?|context)\b",
    r"\b(none of the (\w+ ){0,2}(passages|sources|texts|documents|results)|nothing in the (\w+ ){0,2}"
    r"(passages?|sources?|texts?|documents?|results?|context))\b",
    r"\bunclear (from|in) (the|these|those|what) (\w+ ){0,2}(passages?|sources?|texts?|documents?|results?|context|found|read)\b",
    r"\b(is|are) silent (on|about)\b",
    r"\b(passages?|sources?|texts?|documents?|results?|context|information)( provided| given| found)? (is|are|was|were) "
    r"(insufficient|not sufficient|not enough)\b",
    r"\binsufficient (to|for) (answer|determine|tell|say|know)\b",
    r"\b(is|are|was|were)(n['\u2019]t| not) (covered|addressed|discussed|mentioned|answered) (by|in) (any of )?"
    r"(the|these|those) (\w+ ){0,2}(passages?|sources?|texts?|documents?|results?|context)\b",
    r"\b(not |im)possible to (tell|say|determine|know|answer)\b",
    r"^\W*n/a\W*$",
)]
"""How an answer declines, each a general pattern of English with a hand-written example: "No
information was found", "I could not find it", "The passages do not contain the answer", "This
is not provided", "It is not in the sources", "None of the passages answer it", "Nothing in the
sources says", "The information provided does not answer this", "The sources are silent on this", "It is impossible to tell", "Not enough
information", "I don't have enough information", "It is not available in these sources", "Nothing in
the text answers this", "The passages make no reference to it", "Unclear from the sources", "The passages are insufficient", "That isn't covered by any of the
passages", "N/A". A verb that
may be a claim of its own ("does not contain") declines only with the passages as its subject."""


_MARKUP = re.compile(r"\*\*|__|`|^\s*>\s*", re.M)
"""Markdown a capable model writes round its words: "**Nothing** in the passages", "> Not stated"."""


def says_no_answer(answer: str) -> bool:
    """The answer text declines: it says no information was found or it cannot be determined."""
    answer = _MARKUP.sub("", answer)
    return not answer.strip() or any(p.search(answer) for p in ABSTENTION_PATTERNS)


def abstains(pred: Any) -> bool:
    """The prediction does not assert an answer: answerability "unlikely", or an answer that declines.

    A crashed prediction (no answer) does not abstain: it failed.
    """
    outcome = pred if isinstance(pred, Outcome) else read_outcome(pred)
    if outcome.crashed:
        return False
    return outcome.answerability == "unlikely" or says_no_answer(outcome.answer)


def never_raises(zero: Callable[[BaseException], Any] = lambda exc: 0.0):
    """Turn any exception inside a metric into a zero score (logged), so evaluation keeps going."""

    def decorate(metric):
        @functools.wraps(metric)
        def guarded(*args, **kwargs):
            try:
                return metric(*args, **kwargs)
            except Exception as exc:
                logger.warning("metric %s failed on a prediction; scoring 0: %r", metric.__name__, exc)
                return zero(exc)
        return guarded

    return decorate
