"""Lay out an nbgrader course directory from solutions/: `python tools/nbgrader_course.py DIR [LESSON ...]`.

Writes, for every lesson in solutions/ (or the ones named, e.g. 02_pure_python or 02):

    DIR/nbgrader_config.py                       the course's settings for nbgrader (see CONFIG below)
    DIR/source/01_hand_trace/01_hand_trace.ipynb one assignment per lesson, named like its notebook, carrying
    DIR/source/01_hand_trace/conventions.md      the nbgrader metadata tools/notebooks.py derives (and the
                                                 conventions card the lessons link to)

Then, in DIR, with nbgrader 0.9.6 installed in an environment that also has the course's `helpers` package
(`make test-nbgrader` builds one, .venv-hub):

    nbgrader generate_assignment 01_hand_trace   # release/01_hand_trace/: the learner's copy
    # ... hand it out, collect into submitted/<student>/01_hand_trace/01_hand_trace.ipynb, then
    nbgrader autograde 01_hand_trace             # runs every submission; a failed check fails its test cell
    nbgrader generate_feedback 01_hand_trace     # feedback/<student>/01_hand_trace/01_hand_trace.html

nbgrader's release cells are the same as `make notebooks` writes, because nbgrader's ClearSolutions is given
the course's own stub (tools/notebooks.STUB); tests/test_nbgrader_roundtrip.py checks it for every lesson.
An existing DIR keeps its gradebook and other assignments; the named lessons' source folders are replaced.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import nbformat

import notebooks as nbtool  # tools/notebooks.py: the stub, the lessons, the derived nbgrader metadata

COURSE_ID = "ffn-course"
EXECUTE_TIMEOUT = 120  # seconds per cell under autograde; every lesson runs in a few seconds in all

CONFIG = '''\
# nbgrader settings for the FFN course, written by tools/nbgrader_course.py (rewritten each time it runs).
c = get_config()  # noqa: F821 (nbgrader provides get_config)

c.CourseDirectory.course_id = {course_id!r}
# The gradebook is nbgrader's default: a sqlite file, gradebook.db, in this folder.

# The learner's stub is the course's own, so nbgrader's release and `make notebooks` write the same cells.
c.ClearSolutions.code_stub = {{"python": {stub!r}}}

# Autograde's Execute step is the course's: the notebook runs as nbgrader runs it, then each exercise is
# checked again in a clean process with fresh hidden cases, and that verdict is what the test cell shows and
# scores (helpers/nbgrader_plugin.py; README, "Grading: what it defends against"). The other steps are nbgrader's.
c.Autograde.autograde_preprocessors = [
    "helpers.nbgrader_plugin.CourseExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
# The hidden cases' secret: a new one for every notebook graded, unless set here (or in FFN_GRADING_SEED) to
# grade a class on the same cases. Keep this file from learners if you set it.
# c.CourseExecute.grading_secret = "..."

# A cell that runs longer is interrupted and fails (a learner's infinite loop does not stall the batch); an
# exercise's check in the clean process has the same limit.
c.Execute.timeout = {timeout}
c.CourseExecute.check_timeout = {timeout}
# ipykernel's own log (it warns that its local sockets are not encrypted) would bury nbgrader's.
c.Execute.extra_arguments = {quiet!r}
'''


def config_text() -> str:
    return CONFIG.format(course_id=COURSE_ID, stub="\n".join(nbtool.STUB), timeout=EXECUTE_TIMEOUT,
                         quiet=nbtool.QUIET_KERNEL)


def lesson_names(wanted: list[str]) -> list[str]:
    """Solution notebook names for 'NN' or 'NN_name' (all lessons when none is given)."""
    available = sorted(p.name for p in nbtool.SOLUTIONS.glob("*.ipynb"))
    if not wanted:
        return available
    names = []
    for item in wanted:
        matches = [n for n in available if n == item or Path(n).stem == item or nbtool.lesson_number(n) == item]
        if len(matches) != 1:
            sys.exit(f"No single lesson matches {item!r} (have: {', '.join(available)})")
        names.append(matches[0])
    return names


def source_notebook(name: str) -> nbformat.NotebookNode:
    """solutions/`name` with its derived nbgrader metadata (applied in memory: solutions/ is not written)."""
    nb = nbformat.read(nbtool.SOLUTIONS / name, as_version=4)
    nbtool.apply_nbgrader(nb, name)
    return nb


def write_course(course: Path, wanted: list[str] = ()) -> list[str]:
    """Write the config and the named lessons' assignments into `course`; return the assignment names."""
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(config_text())
    assignments = []
    for name in lesson_names(list(wanted)):
        assignment = Path(name).stem
        folder = course / "source" / assignment
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        nbformat.write(source_notebook(name), folder / name)
        for extra in nbtool.COPIED:
            if (nbtool.SOLUTIONS / extra).exists():
                shutil.copyfile(nbtool.SOLUTIONS / extra, folder / extra)
        assignments.append(assignment)
    return assignments


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("course", type=Path, help="the nbgrader course directory to write (created if needed)")
    parser.add_argument("lessons", nargs="*", help="lessons to include, e.g. 02 or 02_pure_python (default: all)")
    args = parser.parse_args(argv)
    for assignment in write_course(args.course, args.lessons):
        print(f"wrote {args.course / 'source' / assignment}")
    print(f"wrote {args.course / 'nbgrader_config.py'}\nNext, in {args.course}: "
          "nbgrader generate_assignment <lesson>, then autograde and generate_feedback.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
