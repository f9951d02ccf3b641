"""tools/grade.py on a folder of tiny synthetic submissions: passes, fails, crashes, hangs and broken files."""
import csv
import sys
from pathlib import Path

import nbformat
import pytest

from helpers.checks import lesson01

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import grade  # noqa: E402

RIGHT = "def hand_trace():\n    return {z}, {h}, {y}".format(**lesson01._TRACE)           # the answer the check wants
WRONG = "def hand_trace():\n    return {z}, {h}, {y}   # b1 left out".format(**lesson01._TRACE_MISTAKES[0][1])
STUB = 'def hand_trace():\n    raise NotImplementedError("your code here")'
IMPORT = "from helpers.checks import check_hand_trace, check_firing_units"
CHECK = "check_hand_trace(hand_trace)"
TIMEOUT = 60      # seconds per notebook, never reached in the main batch
HANG_TIMEOUT = 10  # seconds for the batch whose notebook hangs: room for the cells before it on a busy machine


def notebook(*sources, lesson="01_hand_trace"):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A synthetic lesson")]
    nb.cells += [nbformat.v4.new_code_cell(source) for source in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["ffn_course"] = {"generated_from": f"solutions/{lesson}.ipynb"}
    return nb


def write(path, nb):
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade one batch holding every case once (notebooks run two at a time to keep this quick)."""
    base = tmp_path_factory.mktemp("grading")
    solutions, submissions, out = base / "solutions", base / "submissions", base / "grades"
    # The "course": lesson 01 has two exercises, lesson 99 one (it reuses a real check).
    write(solutions / "01_hand_trace.ipynb", notebook(IMPORT, RIGHT, CHECK, "check_firing_units(firing_units)"))
    write(solutions / "99_extra.ipynb", notebook(IMPORT, RIGHT, CHECK, lesson="99_extra"))
    # alice: right on hand_trace, firing_units never attempted (stub), a second lesson passed.
    write(submissions / "alice" / "01_hand_trace.ipynb",
          notebook(IMPORT, RIGHT, CHECK, "def firing_units():\n    raise NotImplementedError",
                   "check_firing_units(firing_units)"))
    # ... and a later demonstration `ok = check_hand_trace(wrong)` that must not count against her.
    write(submissions / "alice" / "99_extra.ipynb",
          notebook(IMPORT, RIGHT, CHECK, "ok = check_hand_trace(lambda: None)", lesson="99_extra"))
    # bob: wrong answer, and a cell that raises before the checks (later cells still run).
    write(submissions / "bob" / "01_hand_trace.ipynb",
          notebook(IMPORT, "undefined_name + 1", WRONG, CHECK, "check_firing_units(None)"))
    # dave: kills the kernel; erin: not JSON; frank: deleted the check cell (one file, top level).
    write(submissions / "dave" / "01_hand_trace.ipynb", notebook(IMPORT, "import os\nos._exit(1)", RIGHT, CHECK))
    (submissions / "erin").mkdir()
    (submissions / "erin" / "01_hand_trace.ipynb").write_text('{"cells": [ this is not JSON')
    write(submissions / "frank.ipynb", notebook(IMPORT, RIGHT, "check_firing_units(lambda: 0)"))
    # gina: a stub straight from `make notebooks`; harry: an empty folder.
    write(submissions / "gina" / "01_hand_trace.ipynb", notebook(IMPORT, STUB, CHECK))
    (submissions / "harry").mkdir()
    header, rows, summary = grade.grade(submissions, out, timeout=TIMEOUT, jobs=2, solutions=solutions)
    return {"header": header, "rows": {r["learner"]: r for r in rows}, "summary": summary, "out": out}


@pytest.fixture(scope="module")
def hanging(graded, tmp_path_factory):
    """carol's notebook hangs after her first check: a batch of its own, with a short time limit."""
    base = graded["out"].parent
    submissions = tmp_path_factory.mktemp("hanging")
    carol = notebook(IMPORT, RIGHT, CHECK, "import time\ntime.sleep(600)", "check_firing_units(None)")
    # A saved output from an earlier session: it must not appear in the executed copy, as the cell never ran.
    carol.cells[-1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="all 4 cases pass. Well done!")]
    carol.cells[-1].execution_count = 7
    write(submissions / "carol" / "01_hand_trace.ipynb", carol)
    _, rows, _ = grade.grade(submissions, base / "hang-grades", timeout=HANG_TIMEOUT, solutions=base / "solutions")
    copy = nbformat.read(base / "hang-grades" / "carol" / "01_hand_trace.ipynb", as_version=4)
    rows[0]["_last_cell"] = copy.cells[-1]
    return rows[0]


def test_exercises_come_from_the_solutions_check_calls(graded):
    assert graded["header"] == ["learner", "01:hand_trace", "01:firing_units", "99:hand_trace",
                                "passed", "total", "notes"]


def test_one_row_per_learner_including_broken_and_empty_ones(graded):
    assert sorted(graded["rows"]) == ["alice", "bob", "dave", "erin", "frank", "gina", "harry"]


def test_passes_and_fails_are_the_checks_own_verdicts(graded):
    alice, gina = graded["rows"]["alice"], graded["rows"]["gina"]
    assert (alice["01:hand_trace"], alice["01:firing_units"], alice["99:hand_trace"]) == ("pass", "fail", "pass")
    assert (alice["passed"], alice["total"], alice["notes"]) == ("2", "3", "")
    assert gina["01:hand_trace"] == "fail" and gina["01:firing_units"] == "not run"
    assert gina["99:hand_trace"] == ""              # gina handed in no lesson 99: empty, not a failure


def test_a_cell_that_raises_is_noted_and_later_checks_still_run(graded):
    bob = graded["rows"]["bob"]
    assert bob["01:hand_trace"] == "fail" and bob["01:firing_units"] == "fail"
    assert bob["notes"] == "01_hand_trace.ipynb: cell 3 (undefined_name + 1) raised NameError"  # counted as in Lab


def test_a_hanging_notebook_times_out_and_keeps_what_ran_before(hanging):
    assert hanging["notes"] == f"01_hand_trace.ipynb: timed out after {HANG_TIMEOUT} s (in cell 5: import time)"
    assert hanging["01:hand_trace"] == "pass" and hanging["01:firing_units"] == "not run"


def test_a_dead_kernel_is_its_own_reason(graded):
    dave = graded["rows"]["dave"]
    assert "the kernel died (in cell 3: import os)" in dave["notes"]
    assert dave["01:hand_trace"] == "not run"


def test_invalid_json_gets_a_row_with_the_reason(graded):
    erin = graded["rows"]["erin"]
    assert "01_hand_trace.ipynb: not a valid notebook" in erin["notes"]
    assert erin["01:hand_trace"] == "not run" and erin["total"] == "2"


def test_a_top_level_file_is_a_learner_and_a_deleted_check_is_not_run(graded):
    frank = graded["rows"]["frank"]
    assert frank["01:hand_trace"] == "not run" and frank["01:firing_units"] == "fail"


def test_a_learner_folder_without_notebooks_is_reported(graded):
    assert graded["rows"]["harry"]["notes"] == "no notebooks found"


def test_csv_summary_and_executed_copies_are_written(graded):
    out = graded["out"]
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["learner"] for r in rows] == sorted(graded["rows"])
    assert (out / "summary.txt").read_text() == graded["summary"]
    assert "01:hand_trace    1 of 6" in graded["summary"]     # alice, of all but harry
    copy = nbformat.read(out / "alice" / "01_hand_trace.ipynb", as_version=4)
    assert "_ffn_grading_setup" not in "".join(c.source for c in copy.cells)   # the recorder is removed
    assert any("all 3 cases pass" in o.get("text", "") for c in copy.cells for o in c.get("outputs", []))


def test_lesson_from_file_name_then_metadata_then_the_checks_called():
    expected = {"01_hand_trace": ["check_hand_trace", "check_firing_units"], "02_pure_python": ["check_matvec"]}
    nb = notebook(lesson="02_pure_python")
    assert grade.lesson_of(Path("alice-01_hand_trace.ipynb"), nb, expected) == "01_hand_trace"
    assert grade.lesson_of(Path("homework.ipynb"), nb, expected) == "02_pure_python"
    assert grade.lesson_of(Path("homework.ipynb"), None, expected) is None
    anonymous = notebook(IMPORT, "check_firing_units(f)")
    del anonymous.metadata["ffn_course"]
    assert grade.lesson_of(Path("homework.ipynb"), anonymous, expected) == "01_hand_trace"
    del anonymous.cells[-1]
    assert grade.lesson_of(Path("homework.ipynb"), anonymous, expected) is None


def test_command_line_refuses_a_missing_folder(tmp_path, capsys):
    assert grade.main([str(tmp_path / "nowhere")]) == 2
    assert "No such folder" in capsys.readouterr().err


def test_cells_that_never_ran_keep_no_saved_outputs(hanging):
    last = hanging["_last_cell"]
    assert last.outputs == [] and last.execution_count is None
