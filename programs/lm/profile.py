"""The profile an LM is configured with, recorded on the LM object by whoever configured it
(`configure_lm(profile=...)`): a setting the caller gives, like the model string.

Nothing the program sees while it runs is written here: a reply that fails a check is handled
within its own run (`DeltaSeek.saw_junk`), so a run depends only on its inputs, and an
evaluation measures the same thing whatever the order of its questions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ProfileName = Literal["small", "capable"]
"""`small`: a model whose replies are rarely usable beyond a query (the embedded 135M); `capable`:
a model whose answers are used as written unless a check names what is wrong with them."""
PROFILE_NAMES: tuple[str, ...] = ("small", "capable")


@dataclass(frozen=True)
class RecordedProfile:
    name: ProfileName


def record_profile(lm, name: ProfileName) -> None:
    """Record on `lm` the profile its caller configured it with."""
    if name not in PROFILE_NAMES:
        raise ValueError(f"profile {name!r}: expected one of {', '.join(PROFILE_NAMES)}")
    setattr(lm, "deltaseek_profile", RecordedProfile(name))


def recorded_profile(lm) -> RecordedProfile | None:
    found = getattr(lm, "deltaseek_profile", None)
    return found if isinstance(found, RecordedProfile) else None
