"""nbgrader metadata: derived from each notebook's structure by tools/notebooks.py, stored in solutions/ and
the learner copies, and the course's nbgrader settings (tools/nbgrader_course.py). The real round trip
through nbgrader's commands is tests/test_nbgrader_roundtrip.py (`make test-nbgrader`)."""
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import nbgrader_course  # noqa: E402
import notebooks as nbtool  # noqa: E402

LESSONS = sorted(p.name for p in nbtool.SOLUTIONS.glob("*.ipynb"))
SCHEMA_KEYS = {"schema_version", "grade", "locked", "solution", "task", "grade_id", "points"}


def read(folder: Path, name: str) -> nbformat.NotebookNode:
    return nbformat.read(folder / name, as_version=4)


@pytest.mark.parametrize("name", LESSONS)
def test_stored_metadata_is_the_derived_one(name):
    """Run `python tools/notebooks.py metadata` (or make solutions / make notebooks) when this fails."""
    solution = read(nbtool.SOLUTIONS, name)
    derived = nbtool.nbgrader_metadata(solution, name)
    stored = {c.id: c.metadata.get("nbgrader") for c in solution.cells}
    assert stored == derived, f"solutions/{name}: run `python tools/notebooks.py metadata`"
    learner = read(nbtool.NOTEBOOKS, name)
    assert {c.id: c.metadata.get("nbgrader") for c in learner.cells} == derived, \
        f"notebooks/{name}: run `python tools/notebooks.py metadata`"


@pytest.mark.parametrize("name", LESSONS)
def test_exercises_are_solution_cells_checks_are_graded_and_the_rest_locked(name):
    nb = read(nbtool.SOLUTIONS, name)
    lesson = nbtool.lesson_number(name)
    kinds = {"solution": 0, "test": 0}
    for cell in nb.cells:
        meta = cell.metadata["nbgrader"]
        assert set(meta) <= SCHEMA_KEYS and meta["schema_version"] == 3 and meta["grade_id"].startswith(lesson)
        if nbtool.is_exercise(cell):
            kinds["solution"] += 1
            assert (meta["solution"], meta["grade"], meta["locked"]) == (True, False, False)
            assert meta["grade_id"] == f"{lesson}-{nbtool.DEFINES.findall(cell.source)[0]}"
        elif cell.cell_type == "code" and nbtool.CHECK_CALL.search(cell.source):
            kinds["test"] += 1
            assert (meta["solution"], meta["grade"], meta["locked"]) == (False, True, True)
            assert meta["grade_id"] == f"{lesson}-{nbtool.CHECK_CALL.findall(cell.source)[0]}"
            assert meta["points"] in (0, 1, 2, 3)          # 0: an optional exercise (Going further)
        else:
            assert (meta["solution"], meta["grade"], meta["locked"]) == (False, False, True)
            assert "points" not in meta
    assert kinds["solution"] == kinds["test"] > 0


def test_grade_ids_are_unique_across_the_course():
    ids = [c.metadata["nbgrader"]["grade_id"] for name in LESSONS for c in read(nbtool.SOLUTIONS, name).cells]
    assert len(ids) == len(set(ids))
    assert all(nbtool.re.fullmatch(r"[a-zA-Z0-9_\-]+", i) for i in ids)   # nbgrader's schema pattern


def exercise_notebook(difficulty: str, extra_code_before_exercise: bool = False) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    header = "### Exercise 1 · Double\n\n" + (f"**Difficulty:** {difficulty} · **Importance:** ● ● ●"
                                               if difficulty else "No difficulty given.")
    nb.cells = [nbformat.v4.new_markdown_cell(header)]
    if extra_code_before_exercise:
        nb.cells.append(nbformat.v4.new_code_cell("x = 3"))
    nb.cells += [nbformat.v4.new_code_cell("def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n"
                                           "    ### END SOLUTION"),
                 nbformat.v4.new_code_cell("check_double(double)"),
                 nbformat.v4.new_code_cell("ok = check_double(lambda x: x)   # a demonstration, not graded")]
    return nb


@pytest.mark.parametrize("difficulty, points", [("● ○ ○", 1), ("● ● ○", 2), ("●●●", 3), ("", 1)])
def test_a_check_is_worth_its_exercises_difficulty_dots(difficulty, points):
    nb = exercise_notebook(difficulty)
    meta = nbtool.nbgrader_metadata(nb, "42_x.ipynb")
    check, demo = meta[nb.cells[2].id], meta[nb.cells[3].id]
    assert (check["grade_id"], check["points"]) == ("42-check_double", points)
    assert not demo["grade"] and demo["locked"]        # `ok = check_x(...)` is no check line
    assert meta[nb.cells[1].id]["grade_id"] == "42-double"


def test_an_exercise_in_a_going_further_section_is_worth_no_points():
    nb = exercise_notebook("● ● ○")
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("## Going further · Something extra (about 5 minutes)"))
    nb.cells += [nbformat.v4.new_markdown_cell("## Recap"), nbformat.v4.new_code_cell("check_double(double)")]
    meta = nbtool.nbgrader_metadata(nb, "42_x.ipynb")
    assert (meta[nb.cells[3].id]["grade"], meta[nb.cells[3].id]["points"]) == (True, 0)
    assert meta[nb.cells[-1].id]["points"] == 2                         # after the section: counted again


def test_difficulty_is_read_past_code_between_header_and_exercise():
    nb = exercise_notebook("● ● ●", extra_code_before_exercise=True)
    assert nbtool.nbgrader_metadata(nb, "42_x.ipynb")[nb.cells[3].id]["points"] == 3


def test_clashing_ids_get_the_cell_id_appended():
    nb = exercise_notebook("● ○ ○")
    nb.cells.append(nbformat.v4.new_code_cell("check_double(double)   # run again"))
    meta = nbtool.nbgrader_metadata(nb, "42_x.ipynb")
    assert meta[nb.cells[-1].id]["grade_id"] == f"42-check_double-{nb.cells[-1].id}"


def test_apply_adds_changes_and_removes_metadata_and_says_so():
    nb = exercise_notebook("● ○ ○")
    assert nbtool.apply_nbgrader(nb, "42_x.ipynb") is True
    assert nbtool.apply_nbgrader(nb, "42_x.ipynb") is False          # already current
    nb.cells[2].metadata["nbgrader"]["points"] = 5                     # a hand edit is put right
    assert nbtool.apply_nbgrader(nb, "42_x.ipynb") and nb.cells[2].metadata["nbgrader"]["points"] == 1
    learner = nbtool.learner_version(nb, "42_x.ipynb")
    learner.cells.append(nbformat.v4.new_code_cell("# a learner's cell"))
    learner.cells[-1].metadata["nbgrader"] = {"grade": True}
    nbtool.apply_nbgrader(learner, "42_x.ipynb", nb)                   # from the solution's structure
    assert [c.metadata.get("nbgrader") for c in learner.cells[:-1]] == [c.metadata["nbgrader"] for c in nb.cells]
    assert "nbgrader" not in learner.cells[-1].metadata


@pytest.fixture
def course(tmp_path, monkeypatch):
    for name in ("SOLUTIONS", "NOTEBOOKS", "BACKUPS"):
        (tmp_path / name.lower()).mkdir()
        monkeypatch.setattr(nbtool, name, tmp_path / name.lower())
    monkeypatch.setattr(nbtool, "execute", lambda nb, cwd: nb.cells[1].outputs.append(
        nbformat.v4.new_output("stream", name="stdout", text="ran\n")))
    nbformat.write(exercise_notebook("● ● ○"), tmp_path / "solutions" / "42_x.ipynb")
    return tmp_path


def test_generate_and_execute_apply_the_metadata(course, capsys):
    assert nbtool.generate([], force=False) == 0
    assert "metadata solutions/42_x.ipynb (nbgrader)" in capsys.readouterr().out
    solution, learner = read(course / "solutions", "42_x.ipynb"), read(course / "notebooks", "42_x.ipynb")
    assert solution.cells[2].metadata["nbgrader"]["points"] == 2
    assert nbtool.nbgrader_of(learner) == nbtool.nbgrader_of(solution)
    assert nbtool.stale() == []
    del solution.cells[2].metadata["nbgrader"]
    nbformat.write(solution, course / "solutions" / "42_x.ipynb")
    assert nbtool.stale() == ["notebooks/42_x.ipynb or solutions/42_x.ipynb has out-of-date nbgrader metadata"]
    assert nbtool.execute_solutions([]) == 0
    assert read(course / "solutions", "42_x.ipynb").cells[2].metadata["nbgrader"]["grade"] is True


def test_metadata_command_updates_learner_copies_without_executing_them(course, capsys, monkeypatch):
    assert nbtool.generate([], force=False) == 0
    learner = read(course / "notebooks", "42_x.ipynb")
    for cell in learner.cells:
        cell.metadata.pop("nbgrader")
    nbformat.write(learner, course / "notebooks" / "42_x.ipynb")
    monkeypatch.setattr(nbtool, "execute", lambda nb, cwd: pytest.fail("metadata must not execute"))
    capsys.readouterr()
    assert nbtool.main(["metadata"]) == 0
    assert capsys.readouterr().out == "metadata notebooks/42_x.ipynb (nbgrader)\n"
    again = read(course / "notebooks", "42_x.ipynb")
    assert again.cells[1].outputs and again.cells[2].metadata["nbgrader"]["grade"] is True


def test_course_config_gives_nbgrader_the_courses_stub():
    from traitlets.config import Config           # what nbgrader's get_config() returns
    config = Config()
    exec(nbgrader_course.config_text(), {"get_config": lambda: config})
    assert config.ClearSolutions.code_stub == {"python": "\n".join(nbtool.STUB)}
    assert config.Execute.extra_arguments == nbtool.QUIET_KERNEL
    assert config.CourseDirectory.course_id == nbgrader_course.COURSE_ID


def test_course_directory_holds_one_assignment_per_lesson_with_derived_metadata(tmp_path):
    assert nbgrader_course.write_course(tmp_path, ["02"]) == ["02_pure_python"]
    nb = read(tmp_path / "source" / "02_pure_python", "02_pure_python.ipynb")
    assert nbtool.nbgrader_of(nb) == nbtool.nbgrader_of(read(nbtool.SOLUTIONS, "02_pure_python.ipynb"))
    assert (tmp_path / "source" / "02_pure_python" / "conventions.md").exists()
    assert (tmp_path / "nbgrader_config.py").read_text() == nbgrader_course.config_text()
    with pytest.raises(SystemExit):
        nbgrader_course.write_course(tmp_path, ["99"])
