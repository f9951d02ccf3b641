"""helpers.progress: recording that never breaks or slows a check, and the view of where a learner stands
(`make progress`, `show()` in a notebook)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from helpers import progress, progress_log
from helpers.checks import check_hand_trace
from helpers.quiz import Choice, Numeric, Option, Quiz

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import notebooks as nbtool  # noqa: E402

LEARNER_ENV = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}   # as in a learner's kernel


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A workspace, the working folder. Tests that record call learner_kernel first."""
    (tmp_path / progress.MARKER).write_text("")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def learner_kernel(monkeypatch):
    """Recording on, as in a learner's kernel (pytest sets PYTEST_CURRENT_TEST again for each test phase, so
    this runs in the test itself)."""
    monkeypatch.delenv("PYTEST_CURRENT_TEST")


def lines_of(folder):
    return (folder / progress.LOG).read_text().splitlines()


# ---- recording: never breaks, never waits, never mixes two kernels' lines ---------------------------------
APPEND = """
import sys
from helpers import progress
for i in range(int(sys.argv[2])):
    assert progress.record("check", "02", f"ffn_forward_{sys.argv[1]}", "fail", "m" * (i % 250), start=sys.argv[3])
"""


def test_two_kernels_appending_at_once_never_mix_their_lines(tmp_path):
    (tmp_path / progress.MARKER).write_text("")
    n = 400
    writers = [subprocess.Popen([sys.executable, "-c", APPEND, name, str(n), str(tmp_path)], env=LEARNER_ENV)
               for name in ("a", "b")]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    # Every line parses. (A writer that checks for a cut last line while the other's append is landing may
    # start a fresh line needlessly: an empty line, which readers skip.)
    records = [json.loads(line) for line in lines_of(tmp_path) if line.strip()]
    assert len(records) == 2 * n
    assert sorted(r["item"] for r in records) == ["ffn_forward_a"] * n + ["ffn_forward_b"] * n
    assert len(progress.entries(tmp_path)) == 2 * n


def hand_trace_b2_left_out():
    return [4, -1], [4, 0], [4, 0]


hand_trace_b2_left_out.__name__ = "hand_trace"        # the exercise's own name: a learner's answer is recorded


def test_a_log_that_cannot_be_written_does_not_break_the_check(work, capsys, monkeypatch):
    learner_kernel(monkeypatch)
    (work / progress.LOG).mkdir()                      # cannot be opened for writing, even as root
    assert not progress.record("check", "01", "hand_trace", "pass")
    assert check_hand_trace(hand_trace_b2_left_out).status == "fail"
    out = capsys.readouterr().out
    assert "b2" in out and "Not saved in your progress" in out and "is a folder" in out and "make doctor" in out


def test_a_read_only_workspace_does_not_break_the_check(work, monkeypatch, capsys):
    learner_kernel(monkeypatch)

    def read_only(path, flags, mode=0o777):          # what a read-only folder answers (root is never refused)
        raise PermissionError(13, "Permission denied", str(path))
    monkeypatch.setattr(progress_log.os, "open", read_only)
    assert not progress.record("check", "01", "hand_trace", "pass")
    assert check_hand_trace(hand_trace_b2_left_out).status == "fail"
    out = capsys.readouterr().out
    assert "b2" in out                                 # the check's report, whole
    # ... and one line saying that this check was not saved, and where to look (never an exception)
    note = [line for line in out.splitlines() if "Not saved in your progress" in line]
    assert len(note) == 1 and "read-only" in note[0] and "make doctor" in note[0], out


def test_a_read_only_log_is_told_under_a_quiz_answer_too(work, monkeypatch):
    learner_kernel(monkeypatch)

    def read_only(path, flags, mode=0o777):
        raise PermissionError(13, "Permission denied", str(path))
    monkeypatch.setattr(progress_log.os, "open", read_only)
    quiz = Quiz("99", shuffle=False, questions=[Choice("q", "Which?", [Option("a", "Right: because.", True), Option("b", "No: not b.")])])
    assert quiz.judge(1, "A") and "Not saved in your progress" in quiz.judge(1, "A").text
    widget = quiz.widget().questions[0]
    widget.input.value = "B"
    widget.check()
    assert "Not yet" in widget.feedback.value and "Not saved in your progress" in widget.feedback.value
    assert not (work / progress.LOG).exists()


def test_nothing_is_said_where_nothing_is_recorded(tmp_path, monkeypatch, capsys):
    """Outside a workspace (notebooks/, solutions/, nbval) a check's output stays as it was: no note."""
    monkeypatch.chdir(tmp_path)
    learner_kernel(monkeypatch)
    assert check_hand_trace(hand_trace_b2_left_out).status == "fail"
    assert "Not saved" not in capsys.readouterr().out
    quiz = Quiz("99", shuffle=False, questions=[Choice("q", "Which?", [Option("a", "Right: because.", True), Option("b", "No: not b.")])])
    assert "Not saved" not in quiz.judge(1, "B").text


FIFO = """
import os, sys
from helpers import progress
os.mkfifo(os.path.join(sys.argv[1], progress.LOG))      # a reader that never comes
print(progress.record("check", "01", "hand_trace", "pass", start=sys.argv[1]))
"""


def test_a_log_that_would_block_does_not_make_the_check_wait(tmp_path):
    (tmp_path / progress.MARKER).write_text("")
    done = subprocess.run([sys.executable, "-c", FIFO, str(tmp_path)], env=LEARNER_ENV, capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stdout + done.stderr


def test_a_corrupt_log_is_read_around_and_the_next_record_starts_a_fresh_line(work, monkeypatch):
    learner_kernel(monkeypatch)
    good = json.dumps({"time": "t", "kind": "check", "lesson": "01", "item": "hand_trace", "verdict": "fail",
                       "mistake": "b2 left out"})
    (work / progress.LOG).write_bytes(good.encode() + b'\n{"kind": "check", "less\x00\xff\n[1, 2]\n{"kind": "che')
    assert progress.record("check", "01", "hand_trace", "pass")
    records, skipped, problem = progress.read_log(work)
    assert [r["verdict"] for r in records] == ["fail", "pass"] and skipped == 3 and problem == ""
    assert progress.latest(work)[("01", "check", "hand_trace")]["verdict"] == "pass"
    assert "3 line(s)" in progress.report(work, "01")


def test_nothing_is_recorded_in_notebooks_or_solutions_or_under_nbval(monkeypatch):
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    for folder in ("notebooks", "solutions"):
        assert progress.workspace(ROOT / folder) is None
        assert not progress.record("check", "01", "hand_trace", "pass", start=ROOT / folder)
        assert not (ROOT / folder / progress.LOG).exists()
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "solutions/01_hand_trace.ipynb::Cell 12 (call)")   # nbval
    assert not progress.recording_allowed()


# ---- the view: make progress and show() ------------------------------------------------------------------
def demo_quiz(lesson):
    return Quiz(lesson, [
        Choice("mixing", "Does the FFN mix information between tokens?", [
            Option("Yes", "No: W1 multiplies one token's vector at a time."),
            Option("No", "Each row of x is transformed alone.", correct=True)]),
        Numeric("params", "How many weights and biases has GPT-2 small's FFN?", 4_722_432,
                why="768 x 3072 + 3072 + 3072 x 768 + 768.", wrong={4_718_592: "That leaves out both biases."}),
    ])


@pytest.fixture
def quizzes(monkeypatch):
    """Lessons 01 and 02 have a quiz of two questions (whatever helpers.quizzes holds today)."""
    import helpers.quiz
    monkeypatch.setattr(progress, "quiz_lessons", lambda: ("01", "02"))
    monkeypatch.setattr(helpers.quiz, "lesson_quiz", demo_quiz)


def test_the_course_lists_every_lesson_with_its_check_calls_in_order():
    lessons = progress.course()
    solutions = sorted((ROOT / "solutions").glob("*.ipynb"))
    assert [le.notebook for le in lessons if not le.notebook.startswith("lesson ")] == [p.name for p in solutions]
    for lesson, path in zip(lessons, solutions):
        calls = []
        for c in nbformat.read(path, as_version=4).cells:
            if c.cell_type == "code":
                calls += [m.removeprefix("check_") for m in nbtool.CHECK_CALL.findall(c.source)
                          if m.removeprefix("check_") not in calls]
        assert [i.id for i in lesson.items if i.kind == "check"] == calls and calls
        assert all(i.label.startswith("Exercise ") for i in lesson.items if i.kind == "check"), lesson.items


def test_the_table_shows_each_latest_verdict_the_named_mistake_and_done_over_total(work, quizzes, monkeypatch):
    learner_kernel(monkeypatch)
    progress.record("check", "01", "hand_trace", "fail", "b2 left out")
    progress.record("check", "01", "hand_trace", "pass")                  # the latest counts
    progress.record("check", "01", "firing_units", "fail", "units counted from 1")
    progress.record("check", "01", "detector", "not attempted")
    progress.record("quiz", "01", "mixing", "fail", "chose A")
    progress.record("quiz", "01", "mixing", "pass")
    text = progress.report(work)
    one = text.split("\n\n")[0].splitlines()
    assert one[0] == "01_hand_trace.ipynb: 2 of 5 done"
    assert one[1].split()[:2] == ["pass", "Exercise"]
    assert "fail" in one[2] and one[2].endswith("(units counted from 1)")
    assert "not implemented yet" in one[3]
    assert one[4].split()[:3] == ["pass", "Question", "1"] and "chose A" not in text
    assert one[5].split()[:4] == ["not", "run", "yet", "Question"]
    lesson02 = next(le for le in progress.course() if le.number == "02")
    core02 = [i for i in lesson02.items if not i.optional]
    extra02 = [i for i in lesson02.items if i.optional]
    assert extra02, "lesson 02's conversion exercise sits in a Going further section"
    assert f"02_pure_python.ipynb: 0 of {len(core02)} done (going further: 0 of {len(extra02)})" in text
    total = sum(not i.optional for le in progress.course() for i in le.items)
    assert f"All lessons: 2 of {total} done on the core paths." in text
    assert text.splitlines()[-1] == ("Next: 01_hand_trace.ipynb, Exercise 2 · Which units fire? "
                                     "(last time: fail: units counted from 1).")


def test_next_moves_to_the_first_lesson_with_something_left(work, quizzes, monkeypatch):
    learner_kernel(monkeypatch)
    for item in ("hand_trace", "firing_units", "detector"):
        progress.record("check", "01", item, "pass")
    for question in ("mixing", "params"):
        progress.record("quiz", "01", question, "pass")
    text = progress.report(work)
    assert "01_hand_trace.ipynb: 5 of 5 done" in text
    assert text.splitlines()[-1] == "Next: 02_pure_python.ipynb, Exercise 1 · Matrix times vector, by hand " \
                                    "(not run yet)."
    assert progress.report(work, "01").splitlines()[-1].startswith("Next: 02_pure_python.ipynb")


def test_when_everything_passes_next_says_so():
    lesson = progress.Lesson("01", "01_x.ipynb", (progress.Item("check", "f", "Exercise 1 · F"),))
    table = progress.rows([{"lesson": "01", "kind": "check", "item": "f", "verdict": "pass", "mistake": ""}],
                          [lesson])
    assert progress.next_step(table) == ("Next: nothing left on the core paths. Every exercise and question "
                                         "there passes.")


def test_an_optional_exercise_is_marked_and_never_next(tmp_path):
    nb = {"cells": [{"cell_type": "markdown", "source": "### Exercise 1 · Core"},
                    {"cell_type": "code", "source": "check_core(core)"},
                    {"cell_type": "markdown", "source": "## Going further · More (about 5 minutes)"},
                    {"cell_type": "markdown", "source": "### Exercise 2 · Extra"},
                    {"cell_type": "code", "source": "check_extra(extra)"},
                    {"cell_type": "markdown", "source": "## Recap"},
                    {"cell_type": "code", "source": "check_after(after)"}]}
    path = tmp_path / "01_x.ipynb"
    path.write_text(__import__("json").dumps(nb))
    items = progress.exercises(path)
    assert [(i.id, i.optional) for i in items] == [("core", False), ("extra", True), ("after", False)]
    assert items[1].label == "Exercise 2 · Extra (going further)"
    lesson = progress.Lesson("01", "01_x.ipynb", tuple(items))
    table = progress.rows([{"lesson": "01", "kind": "check", "item": i, "verdict": "pass", "mistake": ""}
                           for i in ("core", "after")], [lesson])
    assert progress.next_step(table).startswith("Next: nothing left on the core paths")


def test_a_check_run_in_another_lessons_notebook_still_counts():
    lesson = progress.Lesson("07", "07_x.ipynb", (progress.Item("check", "ffn_batched", "Exercise 1"),))
    [row] = progress.rows([{"lesson": "03", "kind": "check", "item": "ffn_batched", "verdict": "pass",
                            "mistake": ""}], [lesson])
    assert row.done


def test_checks_and_quiz_answers_run_in_the_workspace_show_up(work, quizzes, capsys, monkeypatch):
    learner_kernel(monkeypatch)
    def hand_trace():                                                   # the exercise's own function
        return [4, -1], [4, 0], [4, 0]
    check_hand_trace(hand_trace)                                        # the real check, recording
    demo_quiz("01").answer(2, 4_718_592)
    capsys.readouterr()
    progress.show("01")
    out = capsys.readouterr().out
    assert "01_hand_trace.ipynb: 0 of 5 done" in out and "(b2 left out)" in out
    assert "(answered 4,718,592)" in out
    assert "02_pure_python" not in out                                     # one lesson's view


def test_show_outside_a_workspace_prints_one_fixed_line(tmp_path, monkeypatch, capsys):
    for folder in (tmp_path, ROOT / "notebooks", ROOT / "solutions"):
        monkeypatch.chdir(folder)
        assert progress.show("01") is None and progress.show() is None
        assert capsys.readouterr().out == (progress.OUTSIDE + "\n") * 2
    assert progress.OUTSIDE == ("Your progress is recorded when you work in work/ (make lab opens it); run make "
                                "progress to see it.")


@pytest.mark.parametrize("lesson", ["01", 1, "1", "01_hand_trace"])
def test_show_takes_a_lesson_in_any_spelling(work, capsys, lesson):
    progress.show(lesson)
    assert capsys.readouterr().out.startswith("Nothing recorded yet")


def test_show_never_raises(work, monkeypatch, capsys):
    monkeypatch.setattr(progress, "course", lambda root=None: 1 / 0)
    progress.show("01")
    assert capsys.readouterr().out == ("Your progress could not be shown here (ZeroDivisionError); run make "
                                       "progress to see it.\n")
    progress.show("99")


def test_make_progress_before_any_work_says_so_plainly(tmp_path):
    done = subprocess.run(["make", "-s", "progress", f"WORK={tmp_path / 'work'}"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == progress.NOT_STARTED, done.stdout + done.stderr
    assert "make lab" in progress.NOT_STARTED


def test_make_progress_prints_the_table_of_a_workspace(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / progress.MARKER).write_text("")
    (work / progress.LOG).write_text(json.dumps({"time": "t", "kind": "check", "lesson": "02",
                                                 "item": "ffn_forward", "verdict": "fail",
                                                 "mistake": "one stride for both matrices"}) + "\n")
    done = subprocess.run(["make", "-s", "progress", f"WORK={work}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "02_pure_python.ipynb: 0 of" in done.stdout and "(one stride for both matrices)" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("Next: 01_hand_trace.ipynb")


def test_a_folder_that_is_not_a_workspace_is_named(tmp_path, capsys):
    assert progress.main(["--work", str(tmp_path)]) == 0
    assert "is not a workspace" in capsys.readouterr().out


def test_make_progress_names_a_lesson_jupyter_cannot_open_and_where_a_copy_is(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / progress.MARKER).write_text("")
    (work / "02_pure_python.ipynb").write_text('{"cells": [')
    kept = work / progress.BACKUPS / "20260101-120000" / "02_pure_python.ipynb"
    kept.parent.mkdir(parents=True)
    kept.write_text('{"cells": [], "metadata": {}}')
    (work / progress.BACKUPS / "20260102-090000").mkdir()
    (work / progress.BACKUPS / "20260102-090000" / "02_pure_python.ipynb").write_text("damaged too")
    done = subprocess.run(["make", "-s", "progress", f"WORK={work}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if "cannot be opened" in line]
    assert str(work / "02_pure_python.ipynb") in line and "not valid JSON" in line
    assert str(kept) in line, "the latest copy Jupyter can open, not the newer damaged one"
    assert "Your checks and quiz answers are not being saved" not in done.stdout


def test_make_progress_says_when_answers_are_not_being_saved(work, capsys):
    (work / progress.LOG).mkdir()                      # cannot be written, even by root
    assert progress.main(["--work", str(work)]) == 0
    out = capsys.readouterr().out
    assert "Your checks and quiz answers are not being saved" in out and "make doctor" in out
