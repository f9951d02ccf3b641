"""A learner's progress: every check and quiz answer run in their workspace, and where they stand.

The workspace is the folder `make lab` serves, work/, marked by a file named `.ffn-workspace`. A check or
quiz answer run in a notebook there (the kernel's working folder is the notebook's) appends one line to
work/.progress.jsonl:

    {"time": "2026-11-30T14:02:11", "kind": "check", "lesson": "02", "item": "ffn_forward",
     "verdict": "fail", "mistake": "one stride for both matrices"}

Nothing is recorded anywhere else: not in notebooks/ or solutions/, not under pytest or nbval, not while an
instructor grades (nbgrader, `make grade`). Recording is a convenience, so it never raises and never waits:
a read-only folder, a corrupt line or two kernels writing at once cost at most that one line (each record
is a single append of one short line, which POSIX keeps whole), and a record that could not be written is
said in a line under the check or the quiz answer. The recording half is helpers.progress_log.

Where the learner stands:

    make progress                         # every lesson: each exercise and question, its latest verdict
    from helpers import progress
    progress.show("02")                   # the same for one lesson, in a notebook cell (a recap's last cell)

The lessons and their exercises come from the check calls in solutions/, the questions from helpers.quizzes.
Outside a workspace (notebooks/, solutions/, under nbval) `show` prints one fixed line, so the stored outputs
never vary. This module uses the standard library only: tools/workspace.py and tools/doctor.py import it
under any Python 3.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The recording half lives in helpers.progress_log (helpers.quiz imports it, and this module imports the quizzes).
from helpers.progress_log import (KINDS, LOG, MARKER, SKIPPED, append, not_recorded, read_log,  # noqa: F401
                                  record, recording_allowed, workspace, writable)

ROOT = Path(__file__).resolve().parent.parent     # the course checkout (helpers is installed editable)

# What a verdict is called in the table (helpers.checks._verdict's statuses; a quiz answer is pass or fail).
SHOWN = {"pass": "pass", "fail": "fail", "not attempted": "not implemented yet"}
NOT_RUN = "not run yet"
OUTSIDE = ("Your progress is recorded when you work in work/ (make lab opens it); "
           "run make progress to see it.")
NOT_STARTED = ("You have not started yet: no work/ folder here. Run `make lab`: it creates work/, your own "
               "copy of the lessons, and opens lesson 01. Checks and quiz answers you run there are recorded, "
               "and `make progress` then shows them.")
# What a check call and an exercise's title look like in a notebook (tools/notebooks.py imports these).
CHECK_CALL = re.compile(r"^\s*(check_\w+)\(", re.MULTILINE)
EXERCISE_HEADING = re.compile(r"^#+\s*(Exercise\b.*)$", re.MULTILINE)


def record_check(verdict: Any, start: Path | str | None = None) -> bool:
    """Record a check's Verdict (helpers.checks._verdict.Verdict); True if it was written. A record that could
    not be written is said in one line under the check's report (never raised)."""
    note = not_recorded(append("check", verdict.lesson, verdict.exercise, verdict.status, verdict.mistake, start))
    if note:
        print(note)
    return not note


# ----------------------------------------------------------------------------------------------------------
# The workspace's notebooks: one Jupyter cannot open, and the copies make update and make reset keep
# ----------------------------------------------------------------------------------------------------------
BACKUPS = ".backups"             # work/.backups/<date-time>/: make update and make reset copy a file there first


def read_notebook_json(path: Path, content: bytes | None = None) -> tuple[dict | None, str]:
    """The notebook as JSON (read from `path`, or given as `content`), or None and what is wrong with it."""
    try:
        data = json.loads((path.read_bytes() if content is None else content).decode("utf-8"))
    except OSError as error:
        return None, f"it cannot be read ({error.strerror or error})"
    except (UnicodeDecodeError, ValueError) as error:
        return None, f"it is not valid JSON ({error})"
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return None, "it is JSON but not a notebook (no list of cells)"
    return data, ""


def latest_backup(work: Path, name: str) -> Path | None:
    """The most recent copy of `name` in work/.backups/ that Jupyter can open, or None."""
    # Folders are named by date and time (20261130-140211, then 20261130-140211-2 within the same second).
    def stamp(path: Path) -> tuple[list[str], int]:
        parts = path.parent.name.split("-")
        return parts[:2], int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 1
    for path in sorted(Path(work, BACKUPS).glob(f"*/{name}"), key=stamp, reverse=True):
        if read_notebook_json(path)[0] is not None:
            return path
    return None


def restore_advice(work: Path, name: str) -> str:
    """How to get a lesson Jupyter cannot open back: the latest good copy in work/.backups/, if any."""
    backup = latest_backup(work, name)
    aside = f"or move it aside (rename it to {name}.broken) and run `make update` for a fresh copy"
    if backup is not None:
        return (f"the latest copy that make update or make reset kept is {backup}: copy it over {work / name} "
                f"(or open it in JupyterLab and take what you need), {aside}")
    return f"{work / BACKUPS}/ holds no copy of it (make update and make reset keep one there first); {aside}"


def broken_notebooks(work: Path) -> dict[str, str]:
    """Each notebook in the workspace that Jupyter cannot open -> what is wrong with it."""
    found = {}
    for path in sorted(Path(work).glob("*.ipynb")):
        nb, problem = read_notebook_json(path)
        if nb is None:
            found[path.name] = problem
    return found


def entries(folder: Path | str | None = None) -> list[dict[str, str]]:
    """Every well-formed record in the workspace's log, oldest first (corrupt lines are skipped)."""
    folder = Path(folder) if folder is not None else workspace()
    if folder is None:
        return []
    return read_log(folder)[0]


def latest(folder: Path | str | None = None) -> dict[tuple[str, str, str], dict[str, str]]:
    """(lesson, kind, item) -> the most recent record of it."""
    return {(e["lesson"], e["kind"], e["item"]): e for e in entries(folder)}


# ----------------------------------------------------------------------------------------------------------
# Where the learner stands: the course's exercises and questions, each with its latest verdict
# ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Item:
    kind: str                   # "check" (an exercise) or "quiz" (a question)
    id: str                     # the exercise's name (check_<name>) or the question's id
    label: str                  # "Exercise 2 · Which units fire?", "Question 1 · Does the FFN mix ..."
    optional: bool = False      # in a "Going further" section: not counted in the core path's done / total


# A heading at the start of a markdown cell; a "Going further" one opens an optional section that runs to the
# next heading of its level or above (the rule tools/pace.py applies).
HEADING = re.compile(r"^(#{1,6})\s+(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Lesson:
    number: str                 # "01"
    notebook: str               # "01_hand_trace.ipynb" (or "lesson 01" when only its quiz is known)
    items: tuple[Item, ...]


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.replace("`", "").split())
    return text if len(text) <= limit else text[:limit - 3].rstrip() + "..."


def exercises(path: Path) -> list[Item]:
    """The exercises of a lesson notebook, in order: each check call, named by the exercise heading above it."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    found, heading, seen = [], "", set()
    further_level = None        # the heading level of the Going further section we are in, if any
    for cell in nb.get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if cell.get("cell_type") == "markdown":
            start = HEADING.match(source.lstrip())
            if start:
                level, text = len(start.group(1)), start.group(2).strip()
                if text.lower().startswith("going further"):
                    further_level = level if further_level is None else min(level, further_level)
                elif further_level is not None and level <= further_level:
                    further_level = None
            match = EXERCISE_HEADING.search(source)
            if match:
                heading = match.group(1).strip()
        elif cell.get("cell_type") == "code":
            for call in CHECK_CALL.findall(source):
                name = call.removeprefix("check_")
                if name not in seen:
                    seen.add(name)
                    label = heading or name
                    optional = further_level is not None
                    found.append(Item("check", name, label + (" (going further)" if optional else ""),
                                      optional))
    return found


def questions(number: str) -> list[Item]:
    """The quiz questions of lesson `number` (none when it has no quiz yet)."""
    from helpers.quiz import lesson_quiz
    quiz = lesson_quiz(number)
    return [Item("quiz", q.id, f"Question {n} · {_short(q.prompt)}") for n, q in enumerate(quiz.questions, 1)]


def quiz_lessons() -> tuple[str, ...]:
    try:
        from helpers.quizzes import LESSONS
        return tuple(LESSONS)
    except Exception:       # a quiz module that does not import: the exercises still show
        return ()


def course(root: Path = ROOT) -> list[Lesson]:
    """Every lesson, in order, with its exercises (from solutions/) and its quiz questions."""
    source = root / "solutions"
    if not any(source.glob("*.ipynb")):
        source = root / "notebooks"          # the learner edition has the same check calls
    notebooks = {}
    for path in sorted(source.glob("*.ipynb")):
        match = re.match(r"(\d\d)_", path.name)
        if match:
            notebooks[match.group(1)] = path
    quizzed = quiz_lessons()
    lessons = []
    for number in sorted(set(notebooks) | set(quizzed)):
        items: list[Item] = []
        if number in notebooks:
            try:
                items += exercises(notebooks[number])
            except (OSError, ValueError):
                pass
        if number in quizzed:
            try:
                items += questions(number)
            except Exception:
                pass
        name = notebooks[number].name if number in notebooks else f"lesson {number}"
        lessons.append(Lesson(number, name, tuple(items)))
    return lessons


@dataclass(frozen=True)
class Row:
    lesson: Lesson
    item: Item
    verdict: str                # "pass", "fail", "not attempted", or "" when never run
    mistake: str = ""

    @property
    def shown(self) -> str:
        return SHOWN.get(self.verdict, self.verdict) if self.verdict else NOT_RUN

    @property
    def done(self) -> bool:
        return self.verdict == "pass"


def rows(records: list[dict[str, str]], lessons: list[Lesson]) -> list[Row]:
    """One row per exercise and question, with its latest verdict. A check is looked up under its own lesson
    first, then under any lesson (a lesson may call another lesson's check)."""
    by_lesson, by_item = {}, {}
    for e in records:
        by_lesson[(e["lesson"], e["kind"], e["item"])] = e
        by_item[(e["kind"], e["item"])] = e
    found = []
    for lesson in lessons:
        for item in lesson.items:
            e = by_lesson.get((lesson.number, item.kind, item.id))
            if e is None and item.kind == "check":
                e = by_item.get((item.kind, item.id))
            found.append(Row(lesson, item, e["verdict"] if e else "", e["mistake"] if e else ""))
    return found


def next_step(table: list[Row]) -> str:
    """What to do next: the first exercise or question of a core path, lesson by lesson, that does not pass yet."""
    for row in table:
        if not row.done and not row.item.optional:
            where = f"{row.lesson.notebook}, {row.item.label}"
            if not row.verdict:
                return f"Next: {where} (not run yet)."
            said = row.shown + (f": {row.mistake}" if row.mistake else "")
            return f"Next: {where} (last time: {said})."
    return "Next: nothing left on the core paths. Every exercise and question there passes."


def report(folder: Path, lesson: str | None = None, root: Path = ROOT) -> str:
    """The progress table of the workspace `folder` (one lesson, or all), and what to do next."""
    records, skipped, problem = read_log(folder)
    lessons = course(root)
    table = rows(records, lessons)
    lines = []
    if problem:
        lines.append(f"Your progress cannot be read: {problem}.")
    elif not records:
        lines.append("Nothing recorded yet: the checks and quiz answers you run in work/ appear here.")
    if skipped:
        lines.append(f"({skipped} line(s) of {folder / LOG} could not be read and are left out.)")
    wanted = [le for le in lessons if lesson is None or le.number == lesson]
    if lesson is not None and not wanted:
        known = ", ".join(le.number for le in lessons)
        return f"There is no lesson {lesson!r} in this course (lessons: {known})."
    width = max([len(r.shown) for r in table] + [len(NOT_RUN)])
    shown = []
    for le in wanted:
        mine = [r for r in table if r.lesson is le]
        shown += mine
        if lines and lesson is None:
            lines.append("")
        core, extra = [r for r in mine if not r.item.optional], [r for r in mine if r.item.optional]
        lines.append(f"{le.notebook}: {sum(r.done for r in core)} of {len(core)} done"
                     + (f" (going further: {sum(r.done for r in extra)} of {len(extra)})" if extra else ""))
        for r in mine:
            lines.append(f"  {r.shown:<{width}}  {r.item.label}" + (f" ({r.mistake})" if r.mistake and
                                                                     not r.done else ""))
    if lesson is None:
        core = [r for r in table if not r.item.optional]
        lines += ["", f"All lessons: {sum(r.done for r in core)} of {len(core)} done on the core paths."]
    # In one lesson's view, what is left in that lesson comes first.
    left_here = any(not r.done and not r.item.optional for r in shown)
    lines.append(next_step(shown) if left_here else next_step(table))
    return "\n".join(lines)


def lesson_number(lesson: Any) -> str | None:
    """"02", 2, "2" or "02_pure_python" -> "02"; None -> None."""
    if lesson is None:
        return None
    match = re.match(r"\s*(\d+)", str(lesson))
    return f"{int(match.group(1)):02d}" if match else str(lesson)


def show(lesson: Any = None) -> None:
    """Print where the learner stands, for a notebook cell: one lesson's rows ("02"), or every lesson's.
    Outside a workspace it prints one fixed line. Never raises."""
    try:
        folder = workspace()
        if folder is None:
            print(OUTSIDE)
            return
        print(report(folder, lesson_number(lesson)))
    except Exception as error:   # progress is a convenience: a notebook cell must never fail because of it
        print(f"Your progress could not be shown here ({type(error).__name__}); run make progress to see it.")


def main(argv: list[str] | None = None) -> int:
    import argparse
    parser = argparse.ArgumentParser(description="Show your progress: `make progress`.")
    parser.add_argument("--work", type=Path, default=ROOT / "work", help="the workspace (default: work/)")
    parser.add_argument("lesson", nargs="?", help="one lesson, e.g. 02 (default: all)")
    args = parser.parse_args(argv)
    if not (args.work / MARKER).is_file():
        if args.work.is_dir():
            print(f"{args.work} is not a workspace (it has no {MARKER} file). Run `make lab`: it makes it one, "
                  "copying in the lessons it lacks and leaving the rest as they are.")
        else:
            print(NOT_STARTED)
        return 0
    try:
        print(f"Your progress in {args.work}:")
        print(report(args.work, lesson_number(args.lesson)))
        for line in workspace_warnings(args.work):
            print(line)
    except BrokenPipeError:          # `make progress | head`: the reader has seen enough
        sys.stderr.close()
    return 0


def workspace_warnings(work: Path) -> list[str]:
    """What in the workspace needs the learner's attention: a progress file that cannot be written (checks
    and answers are not being saved), a lesson Jupyter cannot open."""
    lines = []
    problem = writable(work)
    if problem:
        lines.append(f"Your checks and quiz answers are not being saved: {problem}. `make doctor` says how to fix "
                     "it.")
    for name, problem in broken_notebooks(work).items():
        lines.append(f"{work / name} cannot be opened: {problem}. Your progress above is kept (it is in {LOG}, "
                     f"not in the notebook). To get the lesson back: {restore_advice(work, name)}.")
    return lines


if __name__ == "__main__":
    sys.exit(main())
