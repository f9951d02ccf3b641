"""The progress file: where a learner's workspace is, and how one check or quiz answer is appended to its log.

helpers.progress shows the log (`make progress`, `progress.show("02")`); helpers.quiz and the checks append
to it through this module, which imports nothing of the course, so that helpers.progress may read the quizzes
without the two importing each other. Standard library only (tools/workspace.py and tools/doctor.py use it
under any Python 3).

Recording is a convenience, so it never raises and never waits: a read-only log, a folder in its place or
two kernels writing at once cost at most that one record. What stopped a record is said, not raised:
`append` returns it, and `not_recorded` turns it into the note a check or a quiz answer shows.
"""
from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

MARKER = ".ffn-workspace"        # the file that makes a folder a learner's workspace
LOG = ".progress.jsonl"          # one JSON object per line, appended
KINDS = ("check", "quiz")
SKIPPED = "not recorded here"    # append()'s answer outside a workspace, under tests or while grading


def workspace(start: Path | str | None = None) -> Path | None:
    """The workspace folder holding `start` (default: the working folder), or None outside any workspace."""
    here = Path(start) if start is not None else Path.cwd()
    for folder in (here, *here.parents):
        if (folder / MARKER).is_file():
            return folder
    return None


def recording_allowed() -> bool:
    """False under tests and while an instructor's tool grades: only a learner's own runs are progress."""
    env = os.environ
    return not (env.get("PYTEST_CURRENT_TEST") or env.get("NBGRADER_EXECUTION") or env.get("FFN_GRADING")
                or env.get("FFN_NO_PROGRESS"))


def _why(error: OSError, path: Path) -> str:
    if isinstance(error, PermissionError):
        return f"{path} cannot be written (permission denied: the file or its folder is read-only)"
    if isinstance(error, IsADirectoryError):
        return f"{path} is a folder, not a file"
    return f"{path} cannot be written ({error.strerror or error})"


def _open_log(path: Path, create: bool) -> int:
    # O_NONBLOCK: a FIFO (or anything else that would wait for a reader) in the log's place fails at once.
    flags = os.O_RDWR | os.O_APPEND | os.O_NONBLOCK | (os.O_CREAT if create else 0)
    return os.open(path, flags, 0o644)


def append(kind: str, lesson: str, item: str, verdict: str, mistake: str = "",
           start: Path | str | None = None) -> str:
    """Append one record to the workspace's log. Returns "" when it was written, SKIPPED when nothing is
    recorded here, or what stopped it (a phrase naming the file). Never raises, never waits."""
    path = None
    try:
        if kind not in KINDS or not recording_allowed():
            return SKIPPED
        folder = workspace(start)
        if folder is None:
            return SKIPPED
        path = folder / LOG
        line = json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "kind": kind, "lesson": str(lesson),
                           "item": str(item), "verdict": str(verdict), "mistake": str(mistake)[:300]},
                          ensure_ascii=False) + "\n"
        fd = _open_log(path, create=True)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):  # a FIFO or a device in the log's place: not a log
                return f"{path} is not a regular file"
            size = info.st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = "\n" + line               # a line cut short (a killed kernel): start a fresh one
            os.write(fd, line.encode("utf-8"))   # one write of one short line: appended whole
        finally:
            os.close(fd)
        return ""
    except OSError as error:
        return _why(error, path) if path is not None else f"the workspace cannot be found ({error})"
    except Exception as error:
        return f"{type(error).__name__}: {error}"


def record(kind: str, lesson: str, item: str, verdict: str, mistake: str = "",
           start: Path | str | None = None) -> bool:
    """Append one record to the workspace's log; True if it was written. Never raises, never waits."""
    return append(kind, lesson, item, verdict, mistake, start) == ""


def not_recorded(problem: str) -> str:
    """The note shown under a check or a quiz answer whose record could not be written ("" when it was, or
    when nothing is recorded here)."""
    if not problem or problem == SKIPPED:
        return ""
    return f"(Not saved in your progress: {problem}. `make doctor` says how to fix it.)"


def writable(folder: Path | str) -> str:
    """"" when a record could be appended to the log of the workspace `folder`, or what would stop it. Changes
    nothing: an existing log is opened for appending without writing, a missing one is not created."""
    path = Path(folder) / LOG
    try:
        if not path.exists() and not path.is_symlink():
            return "" if os.access(folder, os.W_OK) else _why(PermissionError(13, "denied"), path)
        if path.is_dir():
            return _why(IsADirectoryError(21, "is a folder"), path)
        fd = _open_log(path, create=False)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return f"{path} is not a regular file"
        finally:
            os.close(fd)
        return ""
    except OSError as error:
        return _why(error, path)


def read_log(folder: Path | str) -> tuple[list[dict[str, str]], int, str]:
    """(well-formed records oldest first, how many lines were skipped as corrupt, a problem reading the file:
    "" when it was read or does not exist yet)."""
    path = Path(folder) / LOG
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return [], 0, ""
    except OSError as error:
        return [], 0, f"{path} cannot be read ({error.strerror or error})"
    found, skipped = [], 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            skipped += 1
            continue
        if isinstance(entry, dict) and entry.get("kind") in KINDS and {"lesson", "item", "verdict"} <= entry.keys():
            found.append({key: str(entry.get(key, "")) for key in ("time", "kind", "lesson", "item", "verdict",
                                                                     "mistake")})
        else:
            skipped += 1
    return found, skipped, ""
