"""The profile an LM is run with, recorded on the LM object itself: set by whoever configured it
(`configure_lm(profile=...)`), or seen by the program (a model whose replies failed the checks is
run as the small profile from then on, for every question of the process). A profile seen for a
served model is also remembered on disk (`model_memory`), so the next processes start with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

from deltaseek.programs.lm.model_memory import (
    recall_reply_tally,
    recall_seen_profile,
    remember_reply_tally,
    remember_seen_profile,
)

ProfileName = Literal["small", "capable"]
"""`small`: a model whose replies are rarely usable beyond a query (the embedded 135M); `capable`:
a model whose answers are used as written unless a check names what is wrong with them."""
PROFILE_NAMES: tuple[str, ...] = ("small", "capable")


@dataclass(frozen=True)
class RecordedProfile:
    name: ProfileName
    seen: bool
    """True: the program saw the model's replies fail the checks; False: set when it was configured."""
    because: str = ""


def record_profile(lm, name: ProfileName, seen: bool = False, because: str = "") -> None:
    """Record on `lm` the profile it runs with; a profile that was set is never replaced by one seen."""
    if name not in PROFILE_NAMES:
        raise ValueError(f"profile {name!r}: expected one of {', '.join(PROFILE_NAMES)}")
    current = recorded_profile(lm)
    if seen and current is not None and not current.seen:
        return
    setattr(lm, "deltaseek_profile", RecordedProfile(name, seen, because))
    if seen and (served := getattr(lm, "deltaseek_served_as", None)) is not None:
        remember_seen_profile(*served, name, because)


def recorded_profile(lm) -> RecordedProfile | None:
    found = getattr(lm, "deltaseek_profile", None)
    return found if isinstance(found, RecordedProfile) else None


class ReplyTally(NamedTuple):
    runs: int
    """Runs whose profile followed the model's replies."""
    switched: int
    """Of them, those that switched to the small profile."""


def reply_tally(lm) -> ReplyTally:
    found = getattr(lm, "deltaseek_reply_tally", None)
    return found if isinstance(found, ReplyTally) else ReplyTally(0, 0)


def tally_run(lm, switched: bool) -> ReplyTally:
    """Count on `lm` a run whose profile followed the model's replies (for a served model, on disk
    too, so one process per question still adds up)."""
    before = reply_tally(lm)
    tally = ReplyTally(before.runs + 1, before.switched + switched)
    setattr(lm, "deltaseek_reply_tally", tally)
    if (served := getattr(lm, "deltaseek_served_as", None)) is not None:
        remember_reply_tally(*served, *tally)
    return tally


def recall_profile(lm, model: str, api_base: str) -> None:
    """Give `lm`, the served `model` at `api_base`, the profile seen for it and the runs counted in
    earlier processes, and let what is seen and counted from now on be remembered for the next ones."""
    if (seen := recall_seen_profile(model, api_base)) is not None and seen.name in PROFILE_NAMES:
        record_profile(lm, seen.name, seen=True, because=f"{seen.because} (seen in an earlier run)")
    if (counted := recall_reply_tally(model, api_base)) is not None:
        setattr(lm, "deltaseek_reply_tally", ReplyTally(*counted))
    # Set after the recall: a remembered profile is not written again, so it expires when it was seen.
    setattr(lm, "deltaseek_served_as", (model, api_base))
