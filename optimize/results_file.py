"""The results file of an evaluation: a JSONL file each finished row is appended to at once,
never overwritten (refused, or continued with `--resume`), its rows tagged with a digest of the
program state that scored them so a resume keeps only that program's rows.
"""

from __future__ import annotations

import errno
import hashlib
import json
import stat
import threading
from pathlib import Path

import dspy

from deltaseek.errors import DeltaSeekError, UsageError
from deltaseek.files import unwritable_reason, write_text_atomically
from deltaseek.optimize.evaluation_report import METRICS


def numbered_rows(path: str | Path):
    """Each row of a JSONL results file with its line number (blank lines skipped); DatasetError
    naming the file and line of a row that is not JSON."""
    from deltaseek.errors import DatasetError

    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{number}: not a JSON row ({exc.msg})") from None


def refuse_overwrite(path: Path, resume: bool, name: str | None = None) -> bool:
    """Whether `path` already holds results; a UsageError (naming it as `name`) when it does and
    `resume` is off: results are never overwritten."""
    held = path.is_file() and path.stat().st_size > 0
    if held and not resume:
        raise UsageError(f"{name or path} already holds results; pass --resume to run only the examples it does not "
                         "hold, or choose another output file (results are never overwritten)")
    return held


def check_writable(path: Path, name: str | None = None) -> None:
    """A UsageError (naming `path` as `name`) when the results cannot be written there: said before
    the model loads and the first example runs, not at its first result."""
    if reason := unwritable_reason(path):
        raise UsageError(f"{name or path}: {reason}; make it writable or choose another output file")


def program_digest(program: dspy.Module) -> str:
    """A digest of the program's saved state (prompts, demos, settings, reader): each result row
    carries it, so a resume keeps only the rows of the very program it scores."""
    state = json.dumps(program.dump_state(), sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(state.encode("utf-8")).hexdigest()


class ResultsFile:
    """A JSONL file that each finished row is appended to (and flushed) at once.

    An existing non-empty file is refused unless `resume`; then its rows are read (a line cut
    short by a kill is dropped from the file) and `finished` maps each id to its last row without
    an error; given `digest`, only rows of that program state count (`other_program`: how many
    were another's, a program edited since).
    """

    def __init__(self, path: str | Path, resume: bool = False, digest: str | None = None):
        self.path = Path(path)
        self.digest = digest
        self.finished: dict[str, dict] = {}
        self.other_program = 0
        held = refuse_overwrite(self.path, resume)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if held:
            self._read_earlier()
        self.written = len(self.finished)  # rows a --resume keeps: the earlier run's, then each one appended
        self._lock = threading.Lock()

    def _read_earlier(self) -> None:
        text = self.path.read_text(encoding="utf-8", errors="replace")
        kept = []
        for line in text.split("\n"):  # not splitlines(): a row's text may hold U+2028, which it splits at
            if not line:
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # the last line of a killed run may be cut short
            kept.append(line)
            if isinstance(row, dict) and row.get("id") is not None and set(METRICS) <= set(row.get("scores") or {}):
                if self.digest is not None and row.get("program_digest") != self.digest:
                    self.other_program += 1  # the scores of another program: run again, never reported as this one's
                    self.finished.pop(str(row["id"]), None)
                elif row.get("error"):
                    self.finished.pop(str(row["id"]), None)
                else:
                    self.finished[str(row["id"])] = row
        whole = "".join(line + "\n" for line in kept)
        if whole != text:  # a fragment dropped at once: a reader of the file later finds whole rows only
            write_text_atomically(self.path, whole, mode=stat.S_IMODE(self.path.stat().st_mode))

    def append(self, row: dict) -> None:
        line = json.dumps(row, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            try:
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(line)
            except OSError as exc:  # a full disk: say which file, and that what it holds is kept
                mend = ("free some space" if exc.errno in (errno.ENOSPC, errno.EDQUOT)
                        else "make the file writable" if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS)
                        else "mend the cause")
                raise DeltaSeekError(f"{self.path}: the result of example {row.get('id')} could not be written "
                                     f"({exc.strerror or exc}); the {self.written} rows written before it are kept: "
                                     f"{mend}, then run again with --resume") from None
            self.written += 1
