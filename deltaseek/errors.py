"""One error hierarchy: every problem deltaseek reports to a user is a DeltaSeekError.

The command line prints a DeltaSeekError as one line (`deltaseek: error: ...`, exit 2); from
Python, catch `DeltaSeekError` for all of them or a subclass for one kind. Each also derives
from ValueError, which is what a bad value is in Python. A problem that does not stop a command
is one `warn` line instead.
"""

from __future__ import annotations

import sys


class DeltaSeekError(ValueError):
    """Bad input or configuration; the message names what is wrong and where."""


class UsageError(DeltaSeekError):
    """A command-line option or argument that cannot be used."""


class CorpusError(DeltaSeekError):
    """A corpus file is missing or malformed; the message names the file and line."""


class DatasetError(DeltaSeekError):
    """A labeled dataset cannot be used as it is; `problems` lists each one as `file:line: ...`."""

    def __init__(self, problems: str | list[str]):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))

    def one_line(self, shown: int = 2) -> str:
        more = f" (and {len(self.problems) - shown} more problems)" if len(self.problems) > shown else ""
        return "; ".join(self.problems[:shown]) + more


class ProgramFileError(DeltaSeekError):
    """A compiled program file that cannot be loaded into this program; the message names the file."""


class LMConfigError(DeltaSeekError):
    """The user asked for a model that cannot be reached or is not known."""


class ToolConfigError(DeltaSeekError):
    """A tool that cannot be set up: an unknown `--tools` value, a path that does not exist, a bad setting."""


class IndexCacheError(DeltaSeekError):
    """The index cache folder cannot be written (a full disk, a read-only folder); the message names it."""


def warn(message: str) -> None:
    """A problem that does not stop the command: one line on standard error."""
    print("deltaseek: warning: " + " ".join(str(message).split()), file=sys.stderr)
