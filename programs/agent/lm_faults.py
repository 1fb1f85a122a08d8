"""LM faults named as what they are: a call that was rate-limited, failed, or whose reply could
not be read is recorded on the run (`Scratchpad.lm_faults`), and the caveats say which call it
was and what the run did without it, instead of blaming an answer the model never gave.

A fault here is one the run goes on after; an LM that cannot be used at all still ends the run
with its own error (`raise_if_fatal`). What a reply that could not be read was turned into (a
tool call parsed from its text, say) stays in the step's record.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel

from deltaseek.programs.lm import is_fatal_lm_error

LMCall = Literal["step", "synthesis", "judge", "diversify"]
FaultKind = Literal["rate_limited", "failed", "unreadable"]

UNREADABLE_ERRORS = frozenset({"AdapterParseError"})
"""The model replied, but the reply did not parse: the call itself went through."""
RATE_LIMIT_ERRORS = frozenset({"LMRateLimitError", "RateLimitError"})

WHERE = {"synthesis": "the synthesis", "judge": "the answerability judgment", "diversify": "a query rewrite"}
WITHOUT = {"step": "no move came from the model there", "synthesis": "no answer came from the model",
           "judge": "the search went on without its judgment", "diversify": "the program wrote the query itself"}
"""What the run did without the call, said after the fault."""


class LMFault(BaseModel):
    """One LM call the run went on without."""

    call: LMCall
    step: int
    """The step the call belonged to (the synthesis: the number of steps run)."""
    error: str
    """The exception's class, e.g. LMRateLimitError."""
    status: int | None = None
    """The HTTP status when the error came from a response (429: rate-limited)."""
    message: str
    """The error's first line."""

    @property
    def kind(self) -> FaultKind:
        if self.status == 429 or self.error in RATE_LIMIT_ERRORS:
            return "rate_limited"
        return "unreadable" if self.error in UNREADABLE_ERRORS else "failed"

    def label(self) -> str:
        """The error in a few words: `LMRateLimitError (429)`."""
        return f"{self.error} ({self.status})" if self.status else self.error


def error_chain(exc: BaseException) -> list[BaseException]:
    """The exception and what caused it (DSPy wraps the provider's error), at most five deep."""
    chain: list[BaseException] = []
    while exc is not None and exc not in chain and len(chain) < 5:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return chain


def http_status(exc: BaseException) -> int | None:
    """DSPy's errors carry `status`, litellm's and httpx's `status_code`."""
    for link in error_chain(exc):
        for name in ("status", "status_code"):
            value = getattr(link, name, None)
            if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
                return value
    return None


def fault_from(call: LMCall, step: int, exc: BaseException) -> LMFault:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    error = type(exc).__name__
    return LMFault(call=call, step=step, error=error, status=http_status(exc),
                   message=(lines[0] if lines else error)[:300])


def record_lm_fault(pad, call: LMCall, exc: BaseException) -> LMFault:
    """Record on the run's scratchpad (`pad.lm_faults`) that `call` went on without the LM's reply."""
    fault = fault_from(call, pad.step, exc)
    pad.lm_faults.append(fault)
    return fault


def what_happened(fault: LMFault) -> str:
    if fault.kind == "rate_limited":
        return f"The model was rate-limited ({fault.status or 429})"
    if fault.kind == "unreadable":
        return f"The model's reply could not be read ({fault.error})"
    return f"The model call failed ({fault.label()})"


def lm_fault_caveats(pad) -> list[str]:
    """One caveat per kind of fault and call, naming both and what the run did without the call.
    A helper call's or step's reply that could not be read is left out (a small model's everyday
    junk): the step's record says what was made of it, the stop reason when such replies ended
    the search. The synthesis's is not: without it no answer came from the model."""
    groups: dict[tuple[str, LMCall], list[LMFault]] = {}
    for fault in pad.lm_faults:
        if fault.kind != "unreadable" or fault.call == "synthesis":
            groups.setdefault((what_happened(fault), fault.call), []).append(fault)
    caveats = []
    for (happened, call), faults in groups.items():
        if call == "step":
            steps = list(dict.fromkeys(f.step for f in faults))
            where = f"step {steps[0]}" if len(steps) == 1 else f"steps {', '.join(map(str, steps))}"
        else:
            where = WHERE[call] + (f" ({len(faults)} times)" if len(faults) > 1 else "")
        caveats.append(f"{happened} on {where}; {WITHOUT[call]}.")
    return caveats


def describe_faults(faults: list[dict]) -> str:
    """The faults of a run record (`lm_faults`, as JSON), most frequent first: `LMRateLimitError
    (429) on 3 calls (step, synthesis)`."""
    loaded = [LMFault.model_validate(f) for f in faults]
    counts = Counter(f.label() for f in loaded)
    parts = []
    for label, count in counts.most_common():
        calls = ", ".join(dict.fromkeys(f.call for f in loaded if f.label() == label))
        parts.append(f"{label} on {count} call{'s' if count > 1 else ''} ({calls})")
    return "; ".join(parts)


def raise_if_fatal(exc: Exception) -> None:
    """An LM that cannot be used at all (no LM configured, no key, unknown model, unreachable
    server) ends the run with its own error: answering from searches alone would look like success."""
    if is_fatal_lm_error(exc):
        raise exc
