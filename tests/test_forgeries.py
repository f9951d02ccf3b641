"""The one-line forgeries of the issue "Grades an instructor can trust", each handed in for lesson 02 with the
exercises left as stubs (or the reference handed in), graded by `make grade` (tools/grade.py) and by a real
`nbgrader autograde` with the course's config: each earns 0 for the exercises it forges, and make grade flags it.

Runs under `make test-nbgrader` (FFN_NBGRADER_TEST=1, in .venv-hub): nbgrader is not in .venv.
"""
from __future__ import annotations

import csv
import html
import io
import os
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import nbgrader_course  # noqa: E402
import notebooks as nbtool  # noqa: E402

if os.environ.get("FFN_NBGRADER_TEST") != "1":
    pytest.skip("the forgeries are graded under `make test-nbgrader`", allow_module_level=True)
from nbgrader.api import Gradebook  # noqa: E402

# One worker grades the class once (the fixtures are per module); the round trips share out the other.
pytestmark = pytest.mark.xdist_group("forgeries")

LESSON = "02_pure_python.ipynb"
ASSIGNMENT = "02_pure_python"
FORGED = ("matvec", "ffn_forward")          # the exercises every forgery below tries to pass

# Each forgery is a cell added right after the lesson's imports (or, for the wrapped reference and the table,
# the answer cells themselves); every other exercise is left as the stub.
FORGERIES = {
    "envpop": 'import os\nos.environ.pop("NBGRADER_EXECUTION", None)',
    "lambdas": "check_ffn_forward = check_matvec = lambda f: True",
    "patched": ("import helpers.checks as hc\n"
                "for n in [n for n in dir(hc) if n.startswith('check_')]: setattr(hc, n, lambda *a, **k: True); "
                "globals()[n] = getattr(hc, n)"),
    "verdict": ("import helpers.checks._verdict as v\n"
                "v._verdict = lambda e, l, *a: v.Verdict(e, l, 'pass', 9, 9)"),
}
WRAPPED = {"matvec": "import functools, helpers.flat\nmatvec = functools.partial(helpers.flat.matvec)",
           "ffn_forward": "import functools, helpers.flat\nffn_forward = functools.partial(helpers.flat.ffn_forward)"}


def memorised_answers(leave_out: int = 0) -> dict[str, str]:
    """The table forgery: every case the learner's own copy runs with FFN_GRADING=1 (public and hidden), answered
    from a table of the reference's outputs, zeros otherwise. Built as a cheating learner would, by running the
    checks with a function that writes the table down."""
    import helpers.checks as checks
    from helpers import flat
    answers = {}
    for exercise in FORGED:
        table, reference = {}, getattr(flat, exercise)

        def recorder(*args, _table=table, _reference=reference):
            value = _reference(*args)
            _table[repr(args)] = value
            return value
        recorder.__name__ = exercise
        os.environ["FFN_GRADING"] = "1"
        try:
            with redirect_stdout(io.StringIO()):
                getattr(checks, f"check_{exercise}")(recorder)
        finally:
            del os.environ["FFN_GRADING"]
        assert len(table) >= 5, f"{exercise}: the recorder saw too few cases to make a table"
        for key in list(table)[:leave_out]:     # a public case left out, so that it looks like a slip
            del table[key]
        answers[exercise] = (f"from fractions import Fraction\n_TABLE_{exercise} = {table!r}\n"
                             f"def {exercise}(*args):\n"
                             f"    return _TABLE_{exercise}.get(repr(args), [0.0] * len(args[-1]))")
    return answers


def submission(release: nbformat.NotebookNode, learner: str) -> nbformat.NotebookNode:
    nb = nbformat.from_dict(release)
    exercise_cells = {nbtool.DEFINES.findall(c.source)[0]: c for c in nb.cells
                      if c.metadata.get("nbgrader", {}).get("solution") and nbtool.DEFINES.findall(c.source)}
    if learner in FORGERIES:
        nb.cells.insert(2, nbformat.v4.new_code_cell(FORGERIES[learner]))
    elif learner == "wrapped":
        for exercise in FORGED:
            exercise_cells[exercise].source = WRAPPED[exercise]
    elif learner in ("table", "table-but-one"):
        for exercise, source in memorised_answers(leave_out=int(learner == "table-but-one")).items():
            exercise_cells[exercise].source = source
    elif learner == "loop":
        exercise_cells["matvec"].source = "def matvec(M, v):\n    while True:\n        pass"
    elif learner == "right":
        solutions = nbformat.read(nbtool.SOLUTIONS / LESSON, as_version=4)
        for cell in solutions.cells:
            defined = nbtool.DEFINES.findall(cell.source) if nbtool.is_exercise(cell) else []
            if defined and defined[0] in exercise_cells:
                exercise_cells[defined[0]].source = cell.source
    return nb


LEARNERS = ("right", "stub", *FORGERIES, "wrapped", "table", "table-but-one", "loop")
LIMIT = 10          # seconds a cell (and a check in the clean process) may take: the endless loop reaches it


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """An nbgrader course with lesson 02 released and every learner's submission in place."""
    course = tmp_path_factory.mktemp("forgeries")
    nbgrader_course.write_course(course, [LESSON])
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.Execute.timeout = {LIMIT}\nc.CourseExecute.check_timeout = {LIMIT}\n")
    run(course, "generate_assignment", ASSIGNMENT)
    release = nbformat.read(course / "release" / ASSIGNMENT / LESSON, as_version=4)
    for learner in LEARNERS:
        folder = course / "submitted" / learner / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(submission(release, learner), folder / LESSON)
    return course


def run(course: Path, *args: str) -> str:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("FFN_GRADING", None)
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900)
    assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stdout[-4000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def nbgrader_scores(course):
    """learner -> {check cell grade id: points} after `nbgrader autograde`."""
    run(course, "autograde", ASSIGNMENT, "--force")
    run(course, "generate_feedback", ASSIGNMENT, "--force")
    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for learner in LEARNERS:
            sub = gb.find_submission_notebook(Path(LESSON).stem, ASSIGNMENT, learner)
            scores[learner] = {g.name: g.score for g in sub.grades if "check_" in g.name}
    return scores


@pytest.fixture(scope="module")
def make_grade_rows(course, tmp_path_factory):
    """learner -> grades.csv row after `make grade` (tools/grade.py) on the same submissions."""
    out = tmp_path_factory.mktemp("grades")
    submissions = tmp_path_factory.mktemp("submissions")
    for learner in LEARNERS:
        (submissions / learner).mkdir()
        nb = nbformat.read(course / "submitted" / learner / ASSIGNMENT / LESSON, as_version=4)
        nbformat.write(nb, submissions / learner / LESSON)
    env = {k: v for k, v in os.environ.items() if k not in ("FFN_GRADING", "NBGRADER_EXECUTION")}
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "grade.py"), str(submissions), "--out", str(out),
                           "--jobs", "2", "--lessons", "02", "--quiet", "--cell-timeout", str(LIMIT)],
                          capture_output=True, text=True,
                          timeout=900, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    with open(out / "grades.csv", newline="") as f:
        return {row["learner"]: row for row in csv.DictReader(f)}


@pytest.mark.parametrize("learner", [*FORGERIES, "wrapped", "table", "table-but-one"])
def test_a_forgery_earns_nothing_in_nbgrader(nbgrader_scores, learner):
    scores = nbgrader_scores[learner]
    for exercise in FORGED:
        assert scores[f"02-check_{exercise}"] == 0, (learner, exercise, scores)


def test_the_right_answers_get_full_marks_in_nbgrader_and_the_stubs_none(nbgrader_scores):
    assert all(nbgrader_scores["right"][f"02-check_{exercise}"] > 0 for exercise in FORGED), nbgrader_scores["right"]
    assert all(score == 0 for score in nbgrader_scores["stub"].values()), nbgrader_scores["stub"]


@pytest.mark.parametrize("learner", [*FORGERIES, "wrapped", "table", "table-but-one"])
def test_a_forgery_earns_nothing_in_make_grade_and_is_flagged(make_grade_rows, learner):
    row = make_grade_rows[learner]
    for exercise in FORGED:
        assert row[f"02:{exercise}"] != "pass" and float(row[f"02:{exercise} score"]) == 0, (learner, exercise)
    flags = " ".join(row[f"02:{exercise} flags"] for exercise in FORGED)
    mistakes = " ".join(row[f"02:{exercise} mistake"] for exercise in FORGED)
    if learner in FORGERIES:
        assert "tampered with the checks" in flags, flags
    elif learner.startswith("table"):
        assert flags.count("memorised cases") == len(FORGED), flags
    else:                           # the reference, wrapped so that no frame of its own shows: refused and flagged
        assert mistakes.count("the course's reference was checked") == len(FORGED), mistakes
        assert flags.count("the course's reference, wrapped") == len(FORGED), flags


def test_make_grade_passes_the_right_answers_flagging_only_the_distinctive_copy(make_grade_rows):
    row = make_grade_rows["right"]                 # the solutions' own code, handed in
    assert all(row[f"02:{exercise}"] == "pass" for exercise in FORGED)
    assert row["02:ffn_forward flags"] == "same code as solutions/"     # distinctive: 161 syntax-tree nodes
    assert row["02:matvec flags"] == "same code as solutions/"


def test_feedback_says_why_without_a_traceback_or_a_path(course, nbgrader_scores):
    page = (course / "feedback" / "lambdas" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "rebinds check_ffn_forward" in page and "clean process" in page
    for learner in LEARNERS:
        page = (course / "feedback" / learner / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
        assert "helpers/checks" not in page and str(ROOT) not in page, learner


def test_an_endless_loop_is_told_in_words_in_both_graders(course, nbgrader_scores, make_grade_rows):
    assert nbgrader_scores["loop"]["02-check_matvec"] == 0
    page = (course / "feedback" / "loop" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert f"did not finish within {LIMIT}" in page and "an endless loop?" in page
    assert "most recent call last" not in page and "site-packages" not in page and "ipykernel" not in page
    row = make_grade_rows["loop"]
    assert row["02:matvec"] == "fail" and row["02:matvec mistake"] == f"did not finish within {LIMIT} s: an endless loop?"


def test_passing_only_the_public_cases_scores_nothing_and_the_feedback_says_why(course, nbgrader_scores):
    """The table passes every public case in the learner's kernel ("all N public cases pass", never full marks);
    graded, the fresh hidden cases fail it, and the feedback says how many cases passed and what that suggests."""
    page = html.unescape((course / "feedback" / "table" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text())
    assert "memorised cases?" in page and "fresh hidden" in page


def test_a_redefined_check_is_named_in_the_notes_not_the_error_it_caused(make_grade_rows):
    notes = make_grade_rows["lambdas"]["notes"]
    assert "tampered with the checks: rebinds check_ffn_forward; rebinds check_matvec" in notes
    assert "failed because the notebook redefines `check_ffn_forward`" in notes
    assert "raised AttributeError" not in notes
