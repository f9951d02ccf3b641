"""The learner's workspace, work/: made from notebooks/ by `make lab`, brought up to date by `make update`.

    python tools/workspace.py create [--work work]    make work/ the first time; copy in what it lacks
    python tools/workspace.py update [--work work]    bring the course's edition (notebooks/) into work/
    python tools/workspace.py status [--work work]    what work/ holds, and what is older than the course
    python tools/workspace.py reset LESSON [--work work]
                                                      back the lesson in work/ up, then take a fresh copy of it

notebooks/ is the learner edition as the course ships it; the learner works in work/ (git-ignored), so
`git pull` (or unpacking a newer zip of the course over the old one) never meets their changes. `create`
copies every lesson and every other file of notebooks/ (conventions.md) that work/ lacks, and never
overwrites one. `update` compares each lesson in work/ with the course's edition in notebooks/:

- a lesson missing from work/ is copied in; one already of the course's edition is left as it is;
- a lesson the learner never changed (every cell as the edition it came from) becomes the new edition;
- a lesson the learner changed is merged cell by cell, using the hash of every cell of the edition it came
  from (recorded in its metadata "ffn_course" by tools/notebooks.py):
    cells neither changed                 the learner's cell, with its outputs
    cells only the course changed         the course's new version, without outputs (run the lesson again)
    cells only the learner changed        the learner's, with its outputs
    cells both changed                    the learner's, exercise or not: never lose their text; the report
                                          says so and where the course's new version is (notebooks/NAME)
    cells the course added                the course's, without outputs
    cells the learner added               kept, after the cell they followed in the learner's file
    cells the learner deleted             stay deleted
    cells the course deleted              removed if the learner never changed them, kept if they had
  The course's order of cells is kept; the merged file records the new edition's hashes, so the next
  update compares against the edition the learner now has.
- a lesson the learner renamed or duplicated (`02_pure_python_mine.ipynb`) is the lesson its metadata names
  ("generated_from"): it is merged under its own name, and a renamed one gets no blank twin under the old name;
- before any change the old file is copied to work/.backups/<time>/ (and the copy checked, byte for byte);
- a notebook that is not valid JSON, or has no record of the edition it came from, is reported and left
  alone (the report names the latest good copy in work/.backups/), as is any notebook of the learner's own;
- another file (conventions.md) is replaced when the learner never changed it (work/.ffn-workspace records
  the hash of each copied file), and otherwise kept, with a line in the report.

`reset` (make reset LESSON=02) starts one lesson over: it copies the learner's file to work/.backups/<time>/
(checked byte for byte, as `update` does), then puts the course's edition from notebooks/ in its place. The
progress file is not touched.

It needs no git. `status` (and tools/doctor.py, which imports this module) use the standard library only.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from helpers.progress import (BACKUPS, LOG, MARKER, read_log, read_notebook_json,  # noqa: E402, F401
                              restore_advice, writable)  # (standard library only)

NOTEBOOKS = ROOT / "notebooks"
WORK = ROOT / "work"
META_KEY = "ffn_course"          # tools/notebooks.META_KEY (that module needs nbformat; this part must not)


# ----------------------------------------------------------------------------------------------------------
# Reading, with the standard library only
# ----------------------------------------------------------------------------------------------------------
def course_files(source: Path) -> list[str]:
    """The learner edition's files: every lesson and every other visible file of notebooks/."""
    return sorted(p.name for p in source.iterdir() if p.is_file() and not p.name.startswith("."))


def is_lesson(name: str) -> bool:
    return name.endswith(".ipynb")


def edition(nb: dict) -> dict | None:
    """The hash of each cell of the course edition a notebook was made from (None when not recorded)."""
    meta = nb.get("metadata", {}).get(META_KEY)
    recorded = meta.get("cell_sha") if isinstance(meta, dict) else None
    return recorded if isinstance(recorded, dict) else None


def lesson_of(nb: dict) -> str | None:
    """The course lesson a notebook was made from, as its metadata records it ("02_pure_python.ipynb"), or None."""
    meta = nb.get("metadata", {}).get(META_KEY)
    made_from = meta.get("generated_from") if isinstance(meta, dict) else None
    return Path(made_from).name if isinstance(made_from, str) and made_from.endswith(".ipynb") else None


def renamed_copies(work: Path, lessons: list[str]) -> dict[str, list[str]]:
    """Each course lesson -> the notebooks in `work` under another name whose metadata says they were made from
    it (renamed, or duplicated in JupyterLab): they are that lesson, and make update brings its changes in."""
    found: dict[str, list[str]] = {}
    for path in sorted(work.glob("*.ipynb")):
        if path.name in lessons:
            continue
        nb, _ = read_notebook_json(path)
        lesson = lesson_of(nb) if nb is not None else None
        if lesson in lessons and edition(nb) is not None:
            found.setdefault(lesson, []).append(path.name)
    return found


def file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def read_marker(work: Path) -> dict:
    """What the marker records: {"files": {name: hash as copied}}. An unreadable marker records nothing."""
    try:
        data = json.loads((work / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        data = {"files": {}}
    return data


def write_marker(work: Path, data: dict) -> None:
    data = dict(data, about="This folder is your FFN course workspace: make lab serves it, make update brings "
                            "course updates into it. This file records the files copied from notebooks/.")
    write_atomically(work / MARKER, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode())


def write_atomically(target: Path, data: bytes) -> None:
    """Write `data` to a temporary file beside `target`, then move it into place: never a half-written file."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, target)
    finally:
        if temporary.exists():
            temporary.unlink()


# ----------------------------------------------------------------------------------------------------------
# status (make doctor, make lab)
# ----------------------------------------------------------------------------------------------------------
@dataclass
class Status:
    work: Path
    exists: bool = False                     # a workspace: the folder with its marker
    folder_exists: bool = False
    lessons: list[str] = field(default_factory=list)        # course lessons present in work/
    unreadable: dict[str, str] = field(default_factory=dict)  # name -> what is wrong
    older: list[str] = field(default_factory=list)          # of an older edition than notebooks/
    untracked: list[str] = field(default_factory=list)      # no record of their edition
    missing: list[str] = field(default_factory=list)        # course lessons work/ lacks (under any name)
    renamed: dict[str, list[str]] = field(default_factory=dict)  # lesson -> its copies under other names
    records: int = 0
    skipped: int = 0
    log_problem: str = ""                    # the progress file cannot be read
    log_unwritable: str = ""                 # ... or cannot be written: checks and answers are not saved


def status(work: Path = WORK, source: Path = NOTEBOOKS) -> Status:
    state = Status(work, exists=(work / MARKER).is_file(), folder_exists=work.is_dir())
    if not state.folder_exists:
        return state
    lessons = [n for n in course_files(source) if is_lesson(n)]
    state.renamed = renamed_copies(work, lessons)
    for name in lessons:
        found = [n for n in [name] + state.renamed.get(name, []) if (work / n).exists()]
        if not found:
            state.missing.append(name)
            continue
        state.lessons.append(name)
        new, _ = read_notebook_json(source / name)
        for mine_name in found:
            mine, problem = read_notebook_json(work / mine_name)
            if mine is None:
                state.unreadable[mine_name] = problem
            elif edition(mine) is None:
                state.untracked.append(mine_name)
            elif new is not None and edition(mine) != edition(new):
                state.older.append(mine_name)
    records, state.skipped, state.log_problem = read_log(work)
    state.records = len(records)
    if not state.log_problem:
        state.log_unwritable = writable(work)
    return state


def describe_status(state: Status) -> list[str]:
    if not state.exists:
        return [f"There is no workspace in {state.work} yet: `make lab` creates it from notebooks/."]
    lines = [f"{state.work}: a workspace with {len(state.lessons)} lesson(s)."]
    for lesson, names in state.renamed.items():
        lines.append(f"{', '.join(names)}: your copy of {lesson} under another name (its metadata says which "
                     "lesson it is); `make update` brings the course's changes into it.")
    for name, problem in state.unreadable.items():
        lines.append(f"{name}: {problem}. Jupyter cannot open it either; {restore_advice(state.work, name)}.")
    if state.older:
        lines.append(f"Older than the course's edition in notebooks/: {', '.join(state.older)}. "
                     "Run `make update` to bring the changes in (your work is kept).")
    if state.missing:
        lines.append(f"Not in work/ yet: {', '.join(state.missing)} (`make lab` or `make update` copies them in).")
    if state.log_problem:
        lines.append(f"Progress: {state.log_problem}.")
    elif state.log_unwritable:
        lines.append(f"Progress: {state.log_unwritable}, so checks and quiz answers are not being saved.")
    else:
        lines.append(f"Progress: {state.records} record(s)" + (f", {state.skipped} unreadable line(s) skipped"
                                                                 if state.skipped else "") + ".")
    return lines


# ----------------------------------------------------------------------------------------------------------
# create (make lab)
# ----------------------------------------------------------------------------------------------------------
def shown(path: Path) -> str:
    """A path as the learner would type it: relative to the working folder when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def copy_in(source: Path, target: Path) -> None:
    write_atomically(target, source.read_bytes())


def create(work: Path = WORK, source: Path = NOTEBOOKS) -> list[str]:
    """Make `work` a workspace (the first time) and copy in every file of `source` it lacks. Overwrites nothing."""
    first = not (work / MARKER).is_file()
    work.mkdir(parents=True, exist_ok=True)
    marker = read_marker(work)
    copied = []
    renamed = renamed_copies(work, [n for n in course_files(source) if is_lesson(n)])
    for name in course_files(source):
        target = work / name
        if target.exists() or name in renamed:      # a lesson renamed by the learner is theirs already
            continue
        copy_in(source / name, target)
        if not is_lesson(name):
            marker["files"][name] = file_sha(target)
        copied.append(name)
    if first or copied:
        write_marker(work, marker)
    lines = []
    if first:
        lines.append(f"Created your workspace {shown(work)}: your own copy of the lessons. Work there; notebooks/ "
                     "stays as the course ships it, and `make update` brings course updates into work/.")
    elif copied:
        lines.append(f"Copied into {shown(work)}: {', '.join(copied)}.")
    lines += edited_in_notebooks(source, copied)
    lines += [f"{lesson}: not copied in, as your copy of it is {', '.join(names)} (its metadata says which lesson "
              f"it is). `make reset LESSON={lesson.split('_', 1)[0]}` puts a fresh one beside it."
              for lesson, names in renamed.items() if not (work / lesson).exists()]
    state = status(work, source)
    if state.older:
        lines.append(f"{len(state.older)} lesson(s) in {shown(work)} are older than the course's edition in notebooks/ "
                     f"({', '.join(state.older)}): run `make update` to bring the changes in, keeping your work.")
    for name, problem in state.unreadable.items():
        lines.append(f"{work / name}: {problem}; left as it is.")
    return lines


def edited_in_notebooks(source: Path, copied: list[str]) -> list[str]:
    """A learner who worked in notebooks/ before work/ existed: their edits came along into work/; say how to
    let git update notebooks/ again."""
    edited = []
    for name in copied:
        nb, _ = read_notebook_json(source / name) if is_lesson(name) else (None, "")
        recorded = edition(nb) if nb else None
        if recorded is None:
            continue
        sources = {c.get("id"): "".join(c.get("source", "")) if isinstance(c.get("source"), list)
                   else c.get("source", "") for c in nb["cells"]}
        if set(sources) != set(recorded) or any(cell_sha(s) != recorded.get(i) for i, s in sources.items()):
            edited.append(name)
    if not edited:
        return []
    return [f"Your edits in notebooks/ ({', '.join(edited)}) came along into work/: work there from now on. "
            "To let `git pull` update the course, put notebooks/ back as shipped: `git checkout -- notebooks` "
            "(after checking that work/ has your work)."]


def cell_sha(text: str) -> str:
    """tools/notebooks.sha: the hash recorded for each cell."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ----------------------------------------------------------------------------------------------------------
# update (make update)
# ----------------------------------------------------------------------------------------------------------
@dataclass
class Report:
    work: Path
    backups: Path | None = None
    lines: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    failed: bool = False

    def add(self, what: str, name: str, detail: str = "", notes: list[str] = ()) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1
        self.lines.append(f"{what:<8} {name}" + (f": {detail}" if detail else ""))
        self.lines += [f"           {note}" for note in notes]

    def text(self) -> str:
        order = ("updated", "merged", "new", "kept", "current", "PROBLEM")
        summary = ", ".join(f"{self.counts[k]} {k}" for k in order if self.counts.get(k))
        lines = [f"Bringing the course's edition in notebooks/ into {shown(self.work)}:", *self.lines,
                 f"In all: {summary or 'nothing to do'}."]
        if self.backups is not None:
            lines.append(f"Your files as they were before this update are in {shown(self.backups)}.")
        if self.counts.get("updated") or self.counts.get("merged"):
            lines.append("If JupyterLab has one of these lessons open, reload it from disk (File > Reload Notebook "
                         "from Disk) before you save it, or the old version would be saved over the update.")
        return "\n".join(lines)


class Backup:
    """A folder work/.backups/<time>/, made when the first file is backed up (by `command`: make update or
    make reset)."""

    def __init__(self, work: Path, command: str = "make update"):
        self.work, self.folder, self.command = work, None, command

    def save(self, path: Path, expected: bytes) -> Path:
        """Copy `path` into the backup folder, checking that the copy holds `expected`, the bytes the update
        read (a file saved again meanwhile, e.g. by JupyterLab, stops the update of that file)."""
        if self.folder is None:
            stamp, n = time.strftime("%Y%m%d-%H%M%S"), 1
            folder = self.work / BACKUPS / stamp
            while folder.exists():
                n += 1
                folder = self.work / BACKUPS / f"{stamp}-{n}"
            folder.mkdir(parents=True)
            self.folder = folder
        target = self.folder / path.name
        shutil.copy2(path, target)
        if target.read_bytes() != expected:
            target.unlink()
            raise OSError(f"{path.name} changed while {self.command} ran; run {self.command} again")
        return target


def update(work: Path = WORK, source: Path = NOTEBOOKS) -> Report:
    """Bring the edition in `source` into the workspace `work` (see the module's doc)."""
    report = Report(work)
    if not (work / MARKER).is_file():
        report.lines.append(f"There is no workspace in {work} yet: `make lab` creates it from notebooks/ "
                            "(nothing to update).")
        return report
    backup = Backup(work)
    marker = read_marker(work)
    names = course_files(source)
    renamed = renamed_copies(work, [n for n in names if is_lesson(n)])
    for name in names:
        # A lesson the learner renamed (its metadata says which it is) is updated under its new name, and gets
        # no fresh blank copy under the old one.
        targets = [name] if name not in renamed or (work / name).exists() else []
        for target in targets + renamed.get(name, []):
            try:
                if is_lesson(name):
                    update_lesson(work / target, source / name, backup, report)
                    if target != name:
                        report.lines.append(f"           your copy of {name}, renamed: its metadata says which "
                                            "lesson it is, so the course's changes went into it"
                                            + ("" if (work / name).exists() else
                                               f" (no fresh {name} was copied in beside it)"))
                else:
                    update_file(work / target, source / name, marker, backup, report)
            except Exception as error:            # this file is left as it was; the others carry on
                report.failed = True
                report.add("PROBLEM", target, f"left as it was ({type(error).__name__}: {error})")
    write_marker(work, marker)
    handled = set(names) | {n for copies in renamed.values() for n in copies}
    for path in sorted(work.glob("*.ipynb")):
        if path.name not in handled:
            nb, _ = read_notebook_json(path)
            if nb is not None and edition(nb) is not None:
                report.add("kept", path.name, "no longer part of the course; left as it is")
    report.backups = backup.folder
    return report


def update_file(target: Path, new: Path, marker: dict, backup: Backup, report: Report) -> None:
    name = target.name
    if not target.exists():
        copy_in(new, target)
        marker["files"][name] = file_sha(target)
        report.add("new", name, "copied in")
        return
    if target.read_bytes() == new.read_bytes():
        marker["files"][name] = file_sha(target)
        report.add("current", name)
        return
    if marker["files"].get(name) == file_sha(target):          # as copied: the learner never changed it
        saved = backup.save(target, target.read_bytes())
        copy_in(new, target)
        marker["files"][name] = file_sha(target)
        report.add("updated", name, f"the course's new version (yours was unchanged; backup {shown(saved)})")
        return
    report.add("kept", name, f"yours differs from the course's, so it stays; the course's new version is "
                             f"notebooks/{name}")


def update_lesson(target: Path, new_path: Path, backup: Backup, report: Report) -> None:
    """Bring the course's edition `new_path` of a lesson into the learner's `target`, which may carry another
    name (a lesson the learner renamed: the report says which lesson it is)."""
    name = target.name
    course_name = new_path.name
    if not target.exists():
        copy_in(new_path, target)
        report.add("new", name, "a new lesson, copied in")
        return
    original = target.read_bytes()
    mine_json, problem = read_notebook_json(target, original)
    if mine_json is None:
        report.failed = True
        report.add("PROBLEM", name, f"{problem}. Left as it is. To get it back: "
                                    f"{restore_advice(report.work, name)}")
        return
    new_json, problem = read_notebook_json(new_path)
    if new_json is None or edition(new_json) is None:
        raise ValueError(f"notebooks/{name}: {problem or 'no cell hashes in its metadata'}")
    old = edition(mine_json)
    if old is None:
        report.add("kept", name, f"it has no record of the course edition it came from, so it cannot be merged; "
                                 f"left as it is (the course's edition is notebooks/{course_name})")
        return
    if old == edition(new_json):
        report.add("current", name)
        return

    import nbformat  # from here on: .venv (make update runs there)
    mine = nbformat.reads(original.decode("utf-8"), as_version=4)
    new = nbformat.reads(new_path.read_text(encoding="utf-8"), as_version=4)
    if not learner_changed(mine):
        saved = backup.save(target, original)
        copy_in(new_path, target)
        report.add("updated", name, f"the new edition (you had not changed it; backup {shown(saved)})")
        return
    merged, notes = merge(mine, new, course_name)
    nbformat.validate(merged)
    saved = backup.save(target, original)
    text = nbformat.writes(merged)
    write_atomically(target, (text if text.endswith("\n") else text + "\n").encode("utf-8"))
    report.add("merged", name, f"your changes kept, the course's brought in (backup {shown(saved)})", notes)


def learner_changed(mine) -> bool:
    """Whether any cell differs from the edition the notebook came from (edited, added or deleted)."""
    old = mine.metadata[META_KEY]["cell_sha"]
    ids = [c.get("id") for c in mine.cells]
    return sorted(ids, key=str) != sorted(old) or any(cell_sha(c.source) != old[c.id] for c in mine.cells)


def _without_outputs(cell):
    cell = copy.deepcopy(cell)
    if cell.cell_type == "code":
        cell.outputs, cell.execution_count = [], None
    return cell


def merge(mine, new, name: str):
    """Merge the learner's notebook `mine` (of the edition its metadata records) with the course's `new`
    edition, cell by cell (see the module's doc). Returns the merged notebook and the report's notes."""
    import nbformat
    from notebooks import describe_cell   # tools/notebooks.py, beside this file
    old_sha = mine.metadata[META_KEY]["cell_sha"]
    new_meta = new.metadata[META_KEY]
    new_sha = new_meta["cell_sha"]
    exercises = set(mine.metadata[META_KEY].get("exercise_cells", [])) | set(new_meta.get("exercise_cells", []))

    # The learner's cells of the old edition, by id (a cell with no id or a repeated one counts as theirs).
    edition_cells = {}
    for cell in mine.cells:
        if cell.get("id") in old_sha and cell.get("id") not in edition_cells:
            edition_cells[cell.id] = cell

    def theirs_changed(cid):
        return cell_sha(edition_cells[cid].source) != old_sha[cid]

    notes = []          # (what, cell, where): where is "merged", "mine" or "new", the list that holds the cell
    base = []           # the course's order: each cell as taken (the learner's or the course's)
    for n in new.cells:
        cid = n.get("id")
        course_changed = new_sha.get(cid) != old_sha.get(cid)
        if cid not in old_sha:
            taken = _without_outputs(n)
            base.append(taken)
            notes.append(("new from the course", taken, "merged", ""))
        elif cid not in edition_cells:
            if course_changed:
                notes.append(("stays deleted", n, "new", "you had deleted it; the course has changed it since"))
        elif not theirs_changed(cid):
            if course_changed:
                taken = _without_outputs(n)
                notes.append(("course's new", taken, "merged", ""))
            else:
                taken = copy.deepcopy(edition_cells[cid])
                taken.metadata = {**taken.metadata, **copy.deepcopy(n.metadata)}
            base.append(taken)
        else:
            taken = copy.deepcopy(edition_cells[cid])
            base.append(taken)
            notes.append(("yours kept", taken, "merged",
                          f"the course changed it too: its new version is in notebooks/{name}" if course_changed
                          else ""))

    # The learner's own cells (added, or of the old edition but deleted by the course after they edited them)
    # go after the cell they followed in their file.
    after: dict[str | None, list] = {}
    anchor = None
    for cell in mine.cells:
        cid = cell.get("id")
        if edition_cells.get(cid) is cell:
            if cid in new_sha:
                anchor = cid
                continue
            if not theirs_changed(cid):
                notes.append(("removed", cell, "mine", "the course deleted it"))
                continue
            kept = copy.deepcopy(cell)
            after.setdefault(anchor, []).append(kept)
            notes.append(("yours kept", kept, "merged", "the course deleted it, but you had changed it"))
        else:
            kept = copy.deepcopy(cell)
            after.setdefault(anchor, []).append(kept)
            notes.append(("yours kept", kept, "merged", "a cell you added"))

    cells = list(after.get(None, []))
    for cell in base:
        cells.append(cell)
        if cell.get("id") in edition_cells and cell.get("id") in new_sha:
            cells += after.get(cell.id, [])
    unique_ids(cells, keep=base)

    merged = nbformat.from_dict({**copy.deepcopy(new), "cells": cells,
                                 "metadata": {**copy.deepcopy(mine.metadata), **copy.deepcopy(new.metadata)}})
    lists = {"merged": cells, "mine": mine.cells, "new": new.cells}
    placed = []
    for what, cell, where, why in notes:
        held = lists[where]
        index = next(i for i, c in enumerate(held) if c is cell)
        line = f"{what + ':':<21}{describe_cell(held, index, exercises)}" + (f" ({why})" if why else "")
        placed.append(((where != "merged", index if where == "merged" else 0), line))
    # In the merged notebook's order; the cells it no longer has last.
    return merged, [line for _, line in sorted(placed, key=lambda p: p[0])]


def unique_ids(cells: list, keep: list) -> None:
    """Give a fresh id to any cell without one, or whose id another cell already has. The cells in `keep`
    (the course's order) keep theirs: the new edition's hashes are recorded under them."""
    import secrets
    kept = {id(c) for c in keep}
    taken = {c.get("id") for c in keep}
    for cell in cells:
        if id(cell) in kept:
            continue
        cid = cell.get("id")
        if cid is None or cid in taken:
            while cid is None or cid in taken:
                cid = secrets.token_hex(4)
            cell["id"] = cid
        taken.add(cid)


# ----------------------------------------------------------------------------------------------------------
# reset (make reset LESSON=02)
# ----------------------------------------------------------------------------------------------------------
def lesson_named(lesson: str, source: Path = NOTEBOOKS) -> str:
    """The lesson file of notebooks/ that `lesson` names: "02", "2", "02_pure_python" or its file name.
    Raises ValueError, listing the lessons, when it names none (or more than one)."""
    lessons = [n for n in course_files(source) if is_lesson(n)]
    wanted = lesson.strip().removesuffix(".ipynb")
    if wanted.isdigit():
        wanted = f"{int(wanted):02d}"
    found = [n for n in lessons if n.removesuffix(".ipynb") == wanted or n.split("_", 1)[0] == wanted]
    if len(found) != 1:
        raise ValueError(f"no lesson {lesson!r} in {shown(source)}; say LESSON= one of "
                         + ", ".join(n.split("_", 1)[0] for n in lessons) + f" ({', '.join(lessons)})")
    return found[0]


def reset(work: Path, lesson: str, source: Path = NOTEBOOKS) -> list[str]:
    """Back `lesson` in `work` up to work/.backups/<time>/, then copy the course's edition of it from `source`
    in its place. Returns the report's lines; raises ValueError (nothing changed) when the lesson is unknown
    or `work` is no workspace, OSError when the lesson changed while it was being backed up."""
    name = lesson_named(lesson, source)
    if not (work / MARKER).is_file():
        raise ValueError(f"there is no workspace in {shown(work)} yet: `make lab` creates it from notebooks/, "
                         "with a fresh copy of every lesson")
    target = work / name
    if not target.exists():
        copy_in(source / name, target)
        return [f"{shown(target)} was not there: copied the course's edition from {shown(source / name)}."]
    original = target.read_bytes()
    fresh = (source / name).read_bytes()
    if original == fresh:
        return [f"{shown(target)} is already the course's fresh copy (nothing to back up, nothing changed)."]
    saved = Backup(work, "make reset").save(target, original)
    copy_in(source / name, target)
    return [f"Backed up your {shown(target)} to {shown(saved)} (byte for byte: open it in JupyterLab to copy "
            "anything back).",
            f"{shown(target)} is now a fresh copy from {shown(source / name)}: every exercise blank, no outputs "
            "from your runs.",
            "Your progress records (make progress) are kept. If JupyterLab has the lesson open, reload it from "
            "disk (File > Reload Notebook from Disk) before you save, or the old version would be saved over "
            "the fresh one."]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("create", "update", "status", "reset"))
    parser.add_argument("lesson", nargs="?", help="reset: the lesson to start over (02, or 02_pure_python)")
    parser.add_argument("--work", type=Path, default=WORK, help="the workspace (default: work/)")
    parser.add_argument("--source", type=Path, default=NOTEBOOKS, help="the course's learner edition")
    args = parser.parse_args(argv)
    if args.command == "create":
        for line in create(args.work, args.source):
            print(line)
        return 0
    if args.command == "reset":
        if not args.lesson:
            print("Say which lesson to reset: make reset LESSON=02 (its copy in work/ is backed up first).",
                  file=sys.stderr)
            return 2
        try:
            lines = reset(args.work, args.lesson, args.source)
        except (ValueError, OSError) as error:
            print(f"Nothing was reset: {error}.", file=sys.stderr)
            return 1
        print("\n".join(lines))
        return 0
    if args.command == "status":
        for line in describe_status(status(args.work, args.source)):
            print(line)
        return 0
    report = update(args.work, args.source)
    print(report.text())
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
