"""A real nbgrader round trip for every lesson in solutions/ (`make test-nbgrader`, in .venv-hub).

For each lesson, in a course directory of its own laid out by tools/nbgrader_course.py (nbgrader_config.py,
a sqlite gradebook), nbgrader's own commands run: `generate_assignment`, then `autograde` on three
submissions made from the release (the solutions filled in; the release untouched; the solutions with one
classic mistake), then `generate_feedback`. The release must hold the same cells as `make notebooks` writes.

Each lesson is one test whose properties are subtests (so a lesson's round trip runs once, and the lessons
run two at a time). `make test` does not collect this file (nbgrader is not in .venv); under
`make test-nbgrader` (FFN_NBGRADER_TEST=1) a missing nbgrader fails instead of skipping.
"""
from __future__ import annotations

import copy
import html
import io
import os
import subprocess
import sys
import textwrap
from contextlib import redirect_stdout
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import nbgrader_course  # noqa: E402
import notebooks as nbtool  # noqa: E402

if os.environ.get("FFN_NBGRADER_TEST") != "1":
    pytest.skip("the nbgrader round trip runs under `make test-nbgrader`", allow_module_level=True)
from nbgrader.api import Gradebook  # noqa: E402  (a missing nbgrader is an error under make test-nbgrader)
from nbgrader.nbgraderformat import MetadataValidator  # noqa: E402

LESSONS = sorted(p.name for p in nbtool.SOLUTIONS.glob("*.ipynb"))
STUDENTS = ("full", "zero", "mistake")

# One classic mistake per lesson, by exercise (the function a solution cell defines): a learner's wrong
# answer, self-contained, that the exercise's check names. The named mistake itself is not written here: the
# test asks the check (see named_mistake). A new lesson adds one of its exercises.
CLASSIC_MISTAKES = {
    "rank_one_update": """
        def rank_one_update(W2, k, v_star, C):
            import numpy as np
            return W2 + np.outer(np.linalg.solve(C, k), v_star - k @ W2)
        """,
    "firing_units": """
        def firing_units(x, W1, b1):
            import numpy as np
            z = np.asarray(x) @ np.asarray(W1) + np.asarray(b1)
            return [k for k in range(len(z)) if z[k] >= 0]
        """,
    "ffn_forward": """
        def ffn_forward(x, W1, b1, W2, b2):
            D, H = len(x), len(b1)
            h = [max(0.0, sum(W1[k * D + j] * x[j] for j in range(D)) + b1[k]) for k in range(H)]
            return [sum(W2[i * D + k] * h[k] for k in range(H)) + b2[i] for i in range(D)]
        """,
    "ffn_batched": """
        def ffn_batched(x, W1, b1, W2, b2):
            import numpy as np
            return np.maximum(np.maximum(x @ W1 + b1, 0) @ W2 + b2, 0)
        """,
    "gelu": """
        def gelu(z):
            import numpy as np
            return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z ** 3)))
        """,
    "collapse": """
        def collapse(W1, b1, W2, b2):
            return W1 @ W2, b2
        """,
    "ffn_as_sum": """
        def ffn_as_sum(x, W1, b1, W2, b2):
            import numpy as np
            out = np.zeros(W2.shape[1])
            for k in range(W1.shape[1]):
                out = out + max(0.0, x @ W1[:, k] + b1[k]) * W2[k]
            return out
        """,
    "route": """
        def route(logits, k):
            import numpy as np
            logits = np.asarray(logits, dtype=float)
            top = np.argsort(-logits, axis=-1, kind="stable")[:, :k]
            e = np.exp(logits - logits.max(axis=-1, keepdims=True))
            p = e / e.sum(axis=-1, keepdims=True)
            return top, np.take_along_axis(p, top, axis=-1)
        """,
    "ffn_backward": """
        def ffn_backward(x, W1, b1, W2, b2, dy):
            import numpy as np
            z = x @ W1 + b1
            h = np.maximum(z, 0)
            dW2, db2 = h.T @ dy, dy.mean(axis=0)
            dz = (dy @ W2.T) * (z > 0)
            return dz @ W1.T, x.T @ dz, dz.mean(axis=0), dW2, db2
        """,
    "relu_backward": """
        def relu_backward(z, dh):
            return dh * (z >= 0)
        """,
}


def nbgrader(course: Path, *args: str) -> str:
    """Run one of nbgrader's commands in `course`; its output, or a failure that shows it."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("FFN_GRADING", None)
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    assert done.returncode == 0 and "[ERROR]" not in done.stdout.replace("| ERROR]", "[ERROR]"), \
        f"nbgrader {' '.join(args)} failed:\n{done.stdout[-4000:]}"
    return done.stdout


def grade_id(cell) -> str:
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


def exercise_of(cell) -> str:
    defined = nbtool.DEFINES.findall(cell.source)
    return defined[0] if defined else ""


def classic_mistake(source: nbformat.NotebookNode, lesson: str) -> tuple[str, str]:
    """(grade_id of the exercise cell, the wrong answer's source) for the lesson's classic mistake."""
    points = {grade_id(c): c.metadata.get("nbgrader", {}).get("points", 0) for c in source.cells}
    for cell in source.cells:
        # The first exercise with a classic mistake whose check carries points (an optional one costs none).
        if (nbtool.is_exercise(cell) and exercise_of(cell) in CLASSIC_MISTAKES
                and points.get(grade_id(cell).replace("-", "-check_", 1), 0) > 0):
            return grade_id(cell), textwrap.dedent(CLASSIC_MISTAKES[exercise_of(cell)]).strip()
    pytest.fail(f"{lesson}: none of its exercises has a classic mistake in CLASSIC_MISTAKES "
                f"(tests/test_nbgrader_roundtrip.py): add one")


def named_mistake(exercise: str, wrong: str, monkeypatch) -> str:
    """What the exercise's check names for the wrong answer, graded as nbgrader grades (hidden cases too)."""
    import helpers.checks as checks
    namespace: dict = {}
    exec(wrong, namespace)
    monkeypatch.setenv("FFN_GRADING", "1")
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    with redirect_stdout(io.StringIO()):
        verdict = getattr(checks, f"check_{exercise}")(namespace[exercise])
    assert verdict.status == "fail" and verdict.mistake, f"check_{exercise} does not name the classic mistake"
    return verdict.mistake.removesuffix("...")      # a long one is cut short where it is recorded


def round_trip(lesson: str, course: Path) -> dict:
    assignment = Path(lesson).stem
    nbgrader_course.write_course(course, [lesson])
    source = nbformat.read(course / "source" / assignment / lesson, as_version=4)
    nbgrader(course, "generate_assignment", assignment)
    release = nbformat.read(course / "release" / assignment / lesson, as_version=4)

    answers = {grade_id(c): c.source for c in source.cells if nbtool.is_exercise(c)}
    mistake_id, wrong = classic_mistake(source, lesson)
    submissions = {"zero": release, "full": copy.deepcopy(release)}
    for cell in submissions["full"].cells:
        if grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
    submissions["mistake"] = copy.deepcopy(submissions["full"])
    for cell in submissions["mistake"].cells:
        if grade_id(cell) == mistake_id:
            cell.source = wrong
    for student, nb in submissions.items():
        folder = course / "submitted" / student / assignment
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / lesson)
        (folder / "conventions.md").write_text("")

    nbgrader(course, "autograde", assignment)
    nbgrader(course, "generate_feedback", assignment)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        scores = {s: (gradebook.find_submission(assignment, s).score,
                      gradebook.find_submission(assignment, s).max_score) for s in STUDENTS}
        cells = {c.name: c.max_score for c in gradebook.find_notebook(assignment, assignment).grade_cells}
    return {
        "lesson": lesson, "source": source, "release": release, "scores": scores, "grade_cells": cells,
        "mistake": (mistake_id, wrong),
        "autograded": {s: nbformat.read(course / "autograded" / s / assignment / lesson, as_version=4)
                       for s in STUDENTS},
        "feedback": {s: (course / "feedback" / s / assignment / f"{assignment}.html").read_text()
                     for s in STUDENTS},
    }


def check_source_metadata_passes_nbgraders_own_validation(trip):
    MetadataValidator().validate_nb(trip["source"])   # raises on a schema error or a duplicate grade id
    MetadataValidator().validate_nb(trip["release"])


def check_every_check_is_a_grade_cell_with_the_exercises_points(trip):
    checks = [c for c in trip["source"].cells if c.cell_type == "code" and nbtool.CHECK_CALL.search(c.source)]
    assert checks and {grade_id(c) for c in checks} == set(trip["grade_cells"])
    prefix = nbtool.lesson_number(trip["lesson"])
    assert all(gid.startswith(f"{prefix}-check_") and points >= 0 for gid, points in trip["grade_cells"].items())
    assert sum(trip["grade_cells"].values()) > 0              # Going further exercises are worth 0, the rest more


def check_release_has_the_cells_make_notebooks_writes(trip):
    lesson = trip["lesson"]
    ours = nbtool.learner_version(nbformat.read(nbtool.SOLUTIONS / lesson, as_version=4), lesson)
    shipped = nbformat.read(nbtool.NOTEBOOKS / lesson, as_version=4)
    theirs = [(c.cell_type, c.source) for c in trip["release"].cells]
    assert theirs == [(c.cell_type, c.source) for c in ours.cells]
    assert theirs == [(c.cell_type, c.source) for c in shipped.cells]
    assert all(not c.get("outputs") for c in trip["release"].cells if c.cell_type == "code")


def check_solutions_filled_in_get_full_marks(trip):
    score, max_score = trip["scores"]["full"]
    assert max_score == sum(trip["grade_cells"].values()) > 0
    assert score == max_score


def check_the_untouched_release_gets_zero(trip):
    assert trip["scores"]["zero"] == (0, sum(trip["grade_cells"].values()))
    outputs = "".join(o.get("text", "") for c in trip["autograded"]["zero"].cells for o in c.get("outputs", []))
    assert "not implemented yet" in outputs


def check_a_classic_mistake_loses_exactly_its_exercises_points(trip):
    mistake_id, _ = trip["mistake"]
    check_id = mistake_id.replace("-", "-check_", 1)
    score, max_score = trip["scores"]["mistake"]
    assert 0 < score < max_score
    assert score == max_score - trip["grade_cells"][check_id]


def check_feedback_names_the_checks_mistake(trip, monkeypatch):
    mistake_id, wrong = trip["mistake"]
    mistake = named_mistake(mistake_id.split("-", 1)[1], wrong, monkeypatch)
    assert mistake in html.unescape(trip["feedback"]["mistake"])
    check_id = mistake_id.replace("-", "-check_", 1)
    test_cell = next(c for c in trip["autograded"]["mistake"].cells if grade_id(c) == check_id)
    printed = "".join(o.get("text", "") for o in test_cell.outputs)
    assert mistake in printed                                           # the check's own report ...
    assert [o.ename for o in test_cell.outputs if o.output_type == "error"] == ["CheckFailed"]  # ... then it fails


def check_hidden_cases_run_under_autograde(trip):
    """No check says 'public cases' under autograde: a check with hidden cases ran them."""
    for cell in trip["autograded"]["full"].cells:
        if nbtool.CHECK_CALL.search(cell.get("source", "")) and cell.cell_type == "code":
            text = "".join(o.get("text", "") for o in cell.get("outputs", []))
            assert "public cases" not in text, f"{grade_id(cell)}: hidden cases did not run under autograde"


ROUND_TRIP_CHECKS = [
    check_source_metadata_passes_nbgraders_own_validation,
    check_every_check_is_a_grade_cell_with_the_exercises_points,
    check_release_has_the_cells_make_notebooks_writes,
    check_solutions_filled_in_get_full_marks,
    check_the_untouched_release_gets_zero,
    check_a_classic_mistake_loses_exactly_its_exercises_points,
    check_feedback_names_the_checks_mistake,
    check_hidden_cases_run_under_autograde,
]


@pytest.mark.parametrize("lesson", LESSONS, ids=[Path(n).stem for n in LESSONS])
def test_round_trip(lesson, tmp_path, subtests, monkeypatch):
    """One round trip per lesson (the lessons run in parallel), every property a subtest of its own."""
    trip = round_trip(lesson, tmp_path)
    for check in ROUND_TRIP_CHECKS:
        with subtests.test(check.__name__.removeprefix("check_")):
            if "monkeypatch" in check.__code__.co_varnames[:check.__code__.co_argcount]:
                check(trip, monkeypatch)
            else:
                check(trip)
