"""A learner's progress: every check and quiz answer run in their workspace, and where they stand.

The workspace is the folder `make lab` serves, work/, marked by a file named `.ffn-workspace`. A check or
quiz answer run in a notebook there (the kernel's working folder is the notebook's) appends one line to
work/.progress.jsonl:

    {"time": "2026-11-30T14:02:11", "kind": "check", "lesson": "02", "item": "ffn_forward",
     "verdict": "fail", "mistake": "one stride for both matrices"}

Nothing is recorded anywhere else: not in notebooks/ or solutions/, not under pytest or nbval, not while an
instructor grades (nbgrader, `make grade`). Recording is a convenience, so it never raises and never waits:
a read-only folder, a corrupt line or two kernels writing at once cost at most that one line (each record
is a single append of one short line, which POSIX keeps whole).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

MARKER = ".ffn-workspace"        # the file that makes a folder a learner's workspace
LOG = ".progress.jsonl"          # one JSON object per line, appended
KINDS = ("check", "quiz")


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


def record(kind: str, lesson: str, item: str, verdict: str, mistake: str = "",
           start: Path | str | None = None) -> bool:
    """Append one record to the workspace's log; True if it was written. Never raises."""
    try:
        if kind not in KINDS or not recording_allowed():
            return False
        folder = workspace(start)
        if folder is None:
            return False
        line = json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "kind": kind, "lesson": str(lesson),
                           "item": str(item), "verdict": str(verdict), "mistake": str(mistake)[:300]},
                          ensure_ascii=False) + "\n"
        fd = os.open(folder / LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))   # one write of one short line: appended whole
        finally:
            os.close(fd)
        return True
    except Exception:
        return False


def record_check(verdict: Any, start: Path | str | None = None) -> bool:
    """Record a check's Verdict (helpers.checks._verdict.Verdict)."""
    return record("check", verdict.lesson, verdict.exercise, verdict.status, verdict.mistake, start)


def entries(folder: Path | str | None = None) -> list[dict[str, str]]:
    """Every well-formed record in the workspace's log, oldest first (corrupt lines are skipped)."""
    folder = Path(folder) if folder is not None else workspace()
    if folder is None:
        return []
    try:
        text = (folder / LOG).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("kind") in KINDS and {"lesson", "item", "verdict"} <= entry.keys():
            found.append({key: str(entry.get(key, "")) for key in ("time", "kind", "lesson", "item", "verdict",
                                                                     "mistake")})
    return found


def latest(folder: Path | str | None = None) -> dict[tuple[str, str, str], dict[str, str]]:
    """(lesson, kind, item) -> the most recent record of it."""
    return {(e["lesson"], e["kind"], e["item"]): e for e in entries(folder)}
