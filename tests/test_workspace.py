"""tools/workspace.py: work/ is made from notebooks/ without overwriting, and `make update` brings a new edition
of the course in without losing a character of the learner's work."""
import copy
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import notebooks as nbtool  # noqa: E402
import workspace  # noqa: E402

from helpers import progress  # noqa: E402

DOUBLE = '''def double(x):
    """Twice x."""
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION'''
HALF = '''def half(x):
    """Half of x."""
    ### BEGIN SOLUTION
    return x / 2
    ### END SOLUTION'''
EDITION_1 = [
    ("intro", "markdown", "# Lesson 01 · Tiny\n\nThe FFN, in one line."),
    ("ex1-md", "markdown", "### Exercise 1 · Double it\n\nWrite `double`."),
    ("ex1", "code", DOUBLE),
    ("check1", "code", "check_double(double)"),
    ("ex2-md", "markdown", "### Exercise 2 · Half it\n\nWrite `half`."),
    ("ex2", "code", HALF),
    ("check2", "code", "check_half(half)"),
    ("notes", "markdown", "## Recap\n\nDouble, then half."),
    ("end", "code", "print('done')"),
]
MY_DOUBLE = "def double(x):\n    return x + x   # mine"
MY_HALF = "def half(x):\n    return x * 0.5   # mine"


def solution(cells):
    nb = nbformat.v4.new_notebook()
    for cid, kind, source in cells:
        cell = (nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell)(source)
        cell.id = cid
        nb.cells.append(cell)
    return nb


def publish(folder: Path, cells, name="01_tiny.ipynb", output=None):
    """Write the learner edition of a solution made of `cells` to folder/name, as `make notebooks` would
    (with a stored output in every code cell, as notebooks/ carries)."""
    nb = nbtool.learner_version(solution(cells), name)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=output or f"[{cell.id} ran]\n")]
            cell.execution_count = 1
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / name)
    return nb


def edited(cells, **changes):
    """`cells` with some sources replaced (id=new source) or removed (id=None)."""
    out = []
    for cid, kind, source in cells:
        key = cid.replace("-", "_")
        if key in changes:
            if changes[key] is None:
                continue
            source = changes[key]
        out.append((cid, kind, source))
    return out


def inserted(cells, after_id, cell):
    out = list(cells)
    index = next(i for i, c in enumerate(out) if c[0] == after_id)
    out.insert(index + 1, cell)
    return out


@pytest.fixture
def course(tmp_path):
    source, work = tmp_path / "notebooks", tmp_path / "work"
    publish(source, EDITION_1)
    (source / "conventions.md").write_text("# Conventions\n\nRow vectors: x @ W.\n")
    workspace.create(work, source)
    return source, work


def read(path):
    return nbformat.read(path, as_version=4)


def cell(nb, cid):
    return next(c for c in nb.cells if c.get("id") == cid)


def learner_edits(path, **sources):
    nb = read(path)
    for cid, source in sources.items():
        c = cell(nb, cid.replace("_", "-"))
        c.source = source
        if c.cell_type == "code":
            c.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"my output of {c.id}\n")]
    nbformat.write(nb, path)
    return nb


def snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_the_metadata_key_is_that_of_tools_notebooks():
    assert workspace.META_KEY == nbtool.META_KEY


# ---- make lab: create --------------------------------------------------------------------------------------
def test_create_copies_the_learner_edition_and_marks_the_workspace(course):
    source, work = course
    assert (work / "01_tiny.ipynb").read_bytes() == (source / "01_tiny.ipynb").read_bytes()
    assert (work / "conventions.md").read_bytes() == (source / "conventions.md").read_bytes()
    assert progress.workspace(work) == work and progress.workspace(work / "sub") == work
    assert workspace.read_marker(work)["files"] == {"conventions.md": workspace.file_sha(work / "conventions.md")}


def test_create_never_overwrites_and_copies_only_what_is_missing(course):
    source, work = course
    learner_edits(work / "01_tiny.ipynb", ex1=MY_DOUBLE)
    (work / "conventions.md").write_text("my notes\n")
    mine = snapshot(work)
    publish(source, edited(EDITION_1, intro="# Lesson 01, revised"))           # a newer edition arrived
    publish(source, EDITION_1, name="02_more.ipynb")                            # and a new lesson
    lines = workspace.create(work, source)
    after = snapshot(work)
    assert after.pop(Path("02_more.ipynb")) == (source / "02_more.ipynb").read_bytes()
    assert after == {**mine, Path(progress.MARKER): after[Path(progress.MARKER)]}
    assert any("older than the course's edition" in line and "make update" in line for line in lines), lines


def test_create_says_so_when_the_learner_had_worked_in_notebooks(tmp_path):
    source, work = tmp_path / "notebooks", tmp_path / "work"
    publish(source, EDITION_1)
    learner_edits(source / "01_tiny.ipynb", ex1=MY_DOUBLE)                     # their work, in notebooks/
    lines = workspace.create(work, source)
    assert MY_DOUBLE in read(work / "01_tiny.ipynb").cells[2].source
    assert any("git checkout -- notebooks" in line for line in lines), lines


# ---- make update: whole files -----------------------------------------------------------------------------
def test_a_current_workspace_is_left_alone_and_nothing_is_backed_up(course):
    source, work = course
    learner_edits(work / "01_tiny.ipynb", ex1=MY_DOUBLE)
    before = snapshot(work)
    report = workspace.update(work, source)
    assert snapshot(work) == before and report.backups is None
    assert "current  01_tiny.ipynb" in report.text() and "current  conventions.md" in report.text()


def test_a_lesson_the_learner_never_changed_becomes_the_new_edition(course):
    source, work = course
    old = (work / "01_tiny.ipynb").read_bytes()
    nb = read(work / "01_tiny.ipynb")                   # run, not changed: outputs and counts differ
    cell(nb, "check1").outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran again\n")]
    nbformat.write(nb, work / "01_tiny.ipynb")
    ran = (work / "01_tiny.ipynb").read_bytes()
    publish(source, edited(EDITION_1, intro="# Lesson 01 · Tiny, revised"))
    report = workspace.update(work, source)
    assert (work / "01_tiny.ipynb").read_bytes() == (source / "01_tiny.ipynb").read_bytes()
    assert (report.backups / "01_tiny.ipynb").read_bytes() == ran != old
    assert "updated  01_tiny.ipynb" in report.text() and str(report.backups) in report.text()


def test_a_new_lesson_is_copied_in(course):
    source, work = course
    publish(source, EDITION_1, name="02_more.ipynb")
    report = workspace.update(work, source)
    assert (work / "02_more.ipynb").read_bytes() == (source / "02_more.ipynb").read_bytes()
    assert "new      02_more.ipynb" in report.text() and report.backups is None


@pytest.mark.parametrize("content, complaint", [
    (b'{"cells": [', "not valid JSON"),
    (b"\xff\xfe not text", "not valid JSON"),
    (b'{"metadata": {}}', "not a notebook"),
])
def test_a_notebook_that_is_not_valid_json_is_reported_and_left_alone(course, content, complaint, capsys):
    source, work = course
    (work / "01_tiny.ipynb").write_bytes(content)
    publish(source, edited(EDITION_1, intro="# revised"))
    publish(source, EDITION_1, name="02_more.ipynb")
    assert workspace.main(["update", "--work", str(work), "--source", str(source)]) == 1
    out = capsys.readouterr().out
    assert (work / "01_tiny.ipynb").read_bytes() == content
    assert f"PROBLEM  01_tiny.ipynb: it is {complaint}" in out or complaint in out.split("PROBLEM")[1], out
    assert (work / "02_more.ipynb").exists(), "the other lessons are still updated"


def test_a_notebook_without_a_record_of_its_edition_is_left_alone(course):
    source, work = course
    nb = read(work / "01_tiny.ipynb")
    del nb.metadata["ffn_course"]
    nbformat.write(nb, work / "01_tiny.ipynb")
    before = (work / "01_tiny.ipynb").read_bytes()
    publish(source, edited(EDITION_1, intro="# revised"))
    report = workspace.update(work, source)
    assert (work / "01_tiny.ipynb").read_bytes() == before
    assert "kept     01_tiny.ipynb: it has no record of the course edition" in report.text()


def test_the_learners_own_notebooks_are_not_touched(course):
    source, work = course
    (work / "scratch.ipynb").write_text("my own, not even JSON")
    publish(source, edited(EDITION_1, intro="# revised"))
    report = workspace.update(work, source)
    assert (work / "scratch.ipynb").read_text() == "my own, not even JSON" and "scratch" not in report.text()


def test_other_files_are_replaced_only_when_the_learner_never_changed_them(course):
    source, work = course
    (source / "conventions.md").write_text("# Conventions, second edition\n")
    report = workspace.update(work, source)
    assert (work / "conventions.md").read_text() == "# Conventions, second edition\n"
    assert (report.backups / "conventions.md").read_text() == "# Conventions\n\nRow vectors: x @ W.\n"
    (work / "conventions.md").write_text("# Conventions, with my notes\n")
    (source / "conventions.md").write_text("# Conventions, third edition\n")
    report = workspace.update(work, source)
    assert (work / "conventions.md").read_text() == "# Conventions, with my notes\n"
    assert "kept     conventions.md: yours differs" in report.text()
    (work / "conventions.md").unlink()
    workspace.update(work, source)
    assert (work / "conventions.md").read_text() == "# Conventions, third edition\n"


# ---- a lesson the learner renamed or duplicated: its metadata says which lesson it is ------------------------
def test_a_renamed_lesson_is_merged_under_its_new_name_and_gets_no_blank_twin(course, capsys):
    source, work = course
    learner_edits(work / "01_tiny.ipynb", ex1=MY_DOUBLE)
    (work / "01_tiny.ipynb").rename(work / "01_tiny_mine.ipynb")
    before = (work / "01_tiny_mine.ipynb").read_bytes()
    publish(source, edited(EDITION_1, ex1_md="### Exercise 1 · Double it\n\nWrite `double`. Hint: 2 * x."))
    report = workspace.update(work, source)
    text = report.text()
    nb = read(work / "01_tiny_mine.ipynb")
    assert cell(nb, "ex1").source == MY_DOUBLE                               # their work, kept
    assert cell(nb, "ex1-md").source.endswith("Hint: 2 * x.")                # the course's change, brought in
    assert (report.backups / "01_tiny_mine.ipynb").read_bytes() == before    # backed up first, byte for byte
    assert not (work / "01_tiny.ipynb").exists(), "no fresh blank copy beside the learner's renamed one"
    assert "merged   01_tiny_mine.ipynb" in text and "your copy of 01_tiny.ipynb, renamed" in text
    assert "no longer part of the course" not in text and "new      01_tiny.ipynb" not in text
    # make lab does not make a blank twin either, and says why; status counts the lesson as there
    lines = workspace.create(work, source)
    assert not (work / "01_tiny.ipynb").exists()
    assert any("01_tiny.ipynb: not copied in, as your copy of it is 01_tiny_mine.ipynb" in line for line in lines)
    state = workspace.status(work, source)
    assert state.lessons == ["01_tiny.ipynb"] and state.missing == [] and state.older == []
    assert state.renamed == {"01_tiny.ipynb": ["01_tiny_mine.ipynb"]}
    assert "current  01_tiny_mine.ipynb" in workspace.update(work, source).text()


def test_a_duplicated_lesson_is_updated_beside_the_original(course):
    source, work = course
    learner_edits(work / "01_tiny.ipynb", ex1=MY_DOUBLE)
    shutil.copy(work / "01_tiny.ipynb", work / "01_tiny-Copy1.ipynb")            # JupyterLab's Duplicate
    learner_edits(work / "01_tiny-Copy1.ipynb", ex2=MY_HALF)
    publish(source, edited(EDITION_1, notes="## Recap\n\nDouble, then half: x again."))
    text = workspace.update(work, source).text()
    original, copied = read(work / "01_tiny.ipynb"), read(work / "01_tiny-Copy1.ipynb")
    assert cell(original, "ex1").source == MY_DOUBLE and cell(copied, "ex2").source == MY_HALF
    assert cell(original, "notes").source.endswith("x again.") and cell(copied, "notes").source.endswith("x again.")
    assert "merged   01_tiny.ipynb" in text and "merged   01_tiny-Copy1.ipynb" in text
    assert "your copy of 01_tiny.ipynb, renamed" in text and "no fresh" not in text


def test_a_notebook_made_from_a_lesson_the_course_dropped_is_still_no_longer_part_of_it(course):
    source, work = course
    publish(work, EDITION_1, name="09_gone.ipynb")
    assert "kept     09_gone.ipynb: no longer part of the course" in workspace.update(work, source).text()


def test_a_corrupt_lesson_points_at_the_latest_good_backup(course, capsys):
    source, work = course
    learner_edits(work / "01_tiny.ipynb", ex1=MY_DOUBLE)
    publish(source, edited(EDITION_1, intro="# revised"))
    backups = workspace.update(work, source).backups                        # a good copy is kept there
    (work / "01_tiny.ipynb").write_text('{"cells": [')                       # then the file is damaged
    publish(source, edited(EDITION_1, intro="# revised again"))
    assert workspace.main(["update", "--work", str(work), "--source", str(source)]) == 1
    out = capsys.readouterr().out
    problem = out.split("PROBLEM")[1]
    assert "not valid JSON" in problem and str(backups / "01_tiny.ipynb") in problem, out
    assert (work / "01_tiny.ipynb").read_text() == '{"cells": ['          # left as it is
    shutil.rmtree(work / ".backups")
    workspace.main(["update", "--work", str(work), "--source", str(source)])
    out = capsys.readouterr().out
    assert f"{work / '.backups'}/ holds no copy of it" in out and "run `make update` for a fresh copy" in out


def test_no_workspace_no_update(tmp_path):
    publish(tmp_path / "notebooks", EDITION_1)
    report = workspace.update(tmp_path / "work", tmp_path / "notebooks")
    assert "make lab" in report.text() and not (tmp_path / "work").exists()


# ---- make update: a lesson both changed, merged cell by cell -----------------------------------------------
EDITION_2 = inserted(edited(EDITION_1,
                            intro="# Lesson 01 · Tiny\n\nThe FFN, in one line (fixed).",     # both change it
                            ex1_md="### Exercise 1 · Double it\n\nWrite `double`. Hint: 2 * x.",
                            ex2=HALF.replace("Half of x.", "Half of x, as a float."),       # both change it
                            notes="## Recap\n\nDouble, then half: x again.",                 # learner deleted it
                            end=None),                                                       # course deletes it
                     "check2", ("new-cell", "code", "print('new in edition 2')"))


@pytest.fixture
def merged(course):
    """The learner edits edition 1; the course publishes edition 2; make update."""
    source, work = course
    path = work / "01_tiny.ipynb"
    nb = learner_edits(path, ex1=MY_DOUBLE, ex2=MY_HALF, intro="# Lesson 01 · Tiny\n\nThe FFN. (My note: per token.)")
    cell(nb, "check1").outputs = [nbformat.v4.new_output("stream", name="stdout", text="double: pass\n")]
    mine = nbformat.v4.new_code_cell("print(double(21))  # my experiment")
    mine.id = "mine-1"
    nb.cells.insert(4, mine)                                        # after check1
    nb.cells = [c for c in nb.cells if c.id != "notes"]             # deleted
    nbformat.write(nb, path)
    before = path.read_bytes()
    publish(source, EDITION_2)
    report = workspace.update(work, source)
    return source, work, read(path), report, before


def test_merge_keeps_every_learner_change_and_brings_every_course_change(merged):
    source, work, nb, report, before = merged
    assert [c.id for c in nb.cells] == ["intro", "ex1-md", "ex1", "check1", "mine-1", "ex2-md", "ex2", "check2",
                                        "new-cell"]
    assert cell(nb, "ex1").source == MY_DOUBLE                       # exercise edited: theirs
    assert cell(nb, "ex1").outputs[0].text == "my output of ex1\n"  # with its outputs
    assert cell(nb, "check1").outputs[0].text == "double: pass\n"   # a cell neither changed keeps its outputs
    assert cell(nb, "ex1-md").source.endswith("Hint: 2 * x.")        # untouched: the course's new version
    assert cell(nb, "mine-1").source.startswith("print(double(21))")  # added: after the cell it followed
    assert cell(nb, "ex2").source == MY_HALF                         # both changed an exercise: theirs
    assert "My note: per token" in cell(nb, "intro").source          # both changed prose: theirs
    assert cell(nb, "new-cell").outputs == [] and cell(nb, "new-cell").execution_count is None
    assert "notes" not in [c.id for c in nb.cells]                   # they deleted it: stays deleted
    assert "end" not in [c.id for c in nb.cells]                     # the course deleted it, untouched: gone
    assert nb.metadata["ffn_course"] == read(source / "01_tiny.ipynb").metadata["ffn_course"]
    assert (report.backups / "01_tiny.ipynb").read_bytes() == before


def test_merge_report_names_cells_by_exercise_title_or_first_line(merged):
    text = merged[3].text()
    assert "merged   01_tiny.ipynb" in text
    for line in [
        "yours kept:          the code of Exercise 1 · Double it",
        "yours kept:          the code of Exercise 2 · Half it (the course changed it too: its new version is in "
        "notebooks/01_tiny.ipynb)",
        "yours kept:          the markdown cell starting `Lesson 01 · Tiny` (the course changed it too",
        "yours kept:          the code cell starting `print(double(21))  # my experiment` (a cell you added)",
        "course's new:        the markdown cell starting `Exercise 1 · Double it`",
        "new from the course: the code cell starting `print('new in edition 2')`",
        "removed:             the code cell starting `print('done')` (the course deleted it)",
        "stays deleted:       the markdown cell starting `Recap` (you had deleted it; the course has changed it",
    ]:
        assert line in text, f"{line!r} not in\n{text}"
    assert "In all: 1 merged, 1 current." in text


def test_after_a_merge_the_next_update_works_again(merged):
    source, work, nb, report, _ = merged
    assert "current  01_tiny.ipynb" in workspace.update(work, source).text()     # nothing new: nothing done
    edition_3 = edited(EDITION_2, check1="check_double(double)  # edition 3",
                       ex1_md="### Exercise 1 · Double it\n\nWrite `double`. Hint: x + x.")
    publish(source, edition_3)
    text = workspace.update(work, source).text()
    nb = read(work / "01_tiny.ipynb")
    assert cell(nb, "ex1").source == MY_DOUBLE and cell(nb, "ex2").source == MY_HALF
    assert cell(nb, "check1").source.endswith("# edition 3") and cell(nb, "ex1-md").source.endswith("x + x.")
    assert [c.id for c in nb.cells][3:5] == ["check1", "mine-1"]
    assert "changed it too" not in text, "the conflicts were reported once, at the merge that met them"


def test_a_cell_the_course_deleted_but_the_learner_changed_is_kept_in_place(course):
    source, work = course
    learner_edits(work / "01_tiny.ipynb", notes="## Recap\n\nMy own summary.")
    publish(source, edited(EDITION_1, notes=None))
    text = workspace.update(work, source).text()
    nb = read(work / "01_tiny.ipynb")
    assert [c.id for c in nb.cells][-3:] == ["check2", "notes", "end"]
    assert cell(nb, "notes").source == "## Recap\n\nMy own summary."
    assert "the course deleted it, but you had changed it" in text


def test_a_cell_added_at_the_top_stays_at_the_top_and_a_clashing_id_is_renamed(course):
    source, work = course
    nb = read(work / "01_tiny.ipynb")
    top, clash = nbformat.v4.new_markdown_cell("My plan for today"), nbformat.v4.new_code_cell("x = 1  # mine")
    top.id, clash.id = "mine-top", "new-cell"                        # the id the course's new cell will have
    nb.cells.insert(0, top)
    nb.cells.append(clash)
    nbformat.write(nb, work / "01_tiny.ipynb")
    publish(source, EDITION_2)
    workspace.update(work, source)
    nb = read(work / "01_tiny.ipynb")
    assert nb.cells[0].source == "My plan for today"
    ids = [c.id for c in nb.cells]
    assert len(set(ids)) == len(ids)
    assert cell(nb, "new-cell").source == "print('new in edition 2')"
    assert nb.cells[-1].source == "x = 1  # mine" and nb.cells[-1].id != "new-cell"


def test_merging_never_loses_learner_text_whatever_both_sides_did():
    """Random edits, additions and deletions on both sides: every cell the learner wrote or changed is in the
    merged notebook with its text, every course change to a cell they left alone is there, and the learner's
    deletions stay deleted."""
    rng = random.Random(12)
    for trial in range(150):
        n = rng.randint(1, 8)
        base = [(f"c{i}", rng.choice(["code", "markdown"]), f"cell {i}") for i in range(n)]
        if rng.random() < 0.5:                                            # one exercise cell
            k = rng.randrange(n)
            base[k] = (base[k][0], "code", "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION")
        mine = nbtool.learner_version(solution(base), "01_x.ipynb")
        course_cells = []
        for cid, kind, src in base:
            roll = rng.random()
            if roll < 0.2:
                continue                                                  # the course deletes it
            course_cells.append((cid, kind, src + "\n# changed by the course" if roll < 0.5 else src))
            if rng.random() < 0.2:
                course_cells.append((f"new{trial}-{cid}", "code", f"new after {cid}"))
        new = nbtool.learner_version(solution(course_cells), "01_x.ipynb")
        learner_cells, expect_mine, deleted, follows = [], [], set(), {}
        for c in mine.cells:
            roll = rng.random()
            if roll < 0.15:
                deleted.add(c.id)
                continue
            c = copy.deepcopy(c)
            if roll < 0.5:
                c.source += f" (mine {trial})"
                expect_mine.append(c.source)
            learner_cells.append(c)
            if rng.random() < 0.2:
                added = nbformat.v4.new_code_cell(f"added by me after {c.id}")
                follows[added.source] = c.source
                learner_cells.append(added)
                expect_mine.append(added.source)
        mine.cells = learner_cells
        merged, notes = workspace.merge(mine, new, "01_x.ipynb")
        nbformat.validate(merged)
        sources = [c.source for c in merged.cells]
        for text in expect_mine:
            assert sources.count(text) == 1, (trial, text, sources)     # every word they wrote, once
        for text, previous in follows.items():
            if previous in sources:                                     # still there: they stay after it
                assert sources.index(text) > sources.index(previous), (trial, text, sources)
        old_sha = mine.metadata["ffn_course"]["cell_sha"]
        kept_by_id = {c.id: c for c in merged.cells}
        for c in new.cells:
            if c.id in deleted:
                assert c.id not in kept_by_id, (trial, c.id)
            elif c.id not in old_sha:
                assert kept_by_id[c.id].source == c.source                  # the course's new cell
            else:
                learner_cell = next(x for x in learner_cells if x.id == c.id)
                if nbtool.sha(learner_cell.source) == old_sha[c.id]:
                    assert kept_by_id[c.id].source == c.source              # untouched: the course's version
        assert [c.id for c in merged.cells if c.id in {x.id for x in new.cells}] == \
            [c.id for c in new.cells if c.id not in deleted], trial       # the course's order


# ---- the round trip, with git -------------------------------------------------------------------------------
def git(folder, *args):
    return subprocess.run(["git", "-c", "user.name=course", "-c", "user.email=course@example.org", *args],
                          cwd=folder, check=True, capture_output=True, text=True)


def test_round_trip_edit_in_work_pull_a_course_change_make_update(tmp_path):
    """The real lesson 01: a learner fills in exercise 1 in work/; upstream the course changes the lesson's
    introduction and adds a cell; `git pull` and `tools/workspace.py update` (what `make update` runs) bring
    the change in and keep the learner's code, and the backup holds their file byte for byte."""
    upstream, clone = tmp_path / "upstream", tmp_path / "clone"
    for part in ("tools/workspace.py", "tools/notebooks.py", "helpers/__init__.py", "helpers/progress.py",
                 "notebooks/01_hand_trace.ipynb", "notebooks/conventions.md"):
        (upstream / part).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / part, upstream / part)
    (upstream / ".gitignore").write_text("work/\n")
    git(upstream, "init", "-q", "-b", "main")
    git(upstream, "add", ".")
    git(upstream, "commit", "-q", "-m", "edition 1")
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    run = [sys.executable, "tools/workspace.py"]
    subprocess.run([*run, "create"], cwd=clone, check=True, capture_output=True)

    # The learner fills in exercise 1 with the solution's code.
    lesson = clone / "work" / "01_hand_trace.ipynb"
    nb = read(lesson)
    exercise = nb.metadata["ffn_course"]["exercise_cells"][0]
    solved = cell(read(ROOT / "solutions" / "01_hand_trace.ipynb"), exercise).source
    cell(nb, exercise).source = solved
    nbformat.write(nb, lesson)
    theirs = lesson.read_bytes()

    # Upstream, the course changes the introduction and adds a cell after it.
    sol = read(ROOT / "solutions" / "01_hand_trace.ipynb")
    intro = sol.cells[0].id
    sol.cells[0].source += "\n\nA sentence added in the second edition."
    added = nbformat.v4.new_markdown_cell("A cell new in the second edition.")
    added.id = "edition2-added"
    sol.cells.insert(1, added)
    nbformat.write(nbtool.learner_version(sol, "01_hand_trace.ipynb"), upstream / "notebooks/01_hand_trace.ipynb")
    git(upstream, "commit", "-q", "-am", "edition 2")

    git(clone, "pull", "-q")                                       # no "local changes would be overwritten"
    done = subprocess.run([*run, "update"], cwd=clone, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    nb = read(lesson)
    assert cell(nb, exercise).source == solved                     # the learner's edit
    assert cell(nb, intro).source.endswith("A sentence added in the second edition.")   # the course's change
    assert [c.id for c in nb.cells][1] == "edition2-added"
    assert "merged   01_hand_trace.ipynb" in done.stdout and "yours kept:          the code of Exercise 1" \
        in done.stdout, done.stdout
    [backup] = (clone / "work" / workspace.BACKUPS).glob("*/01_hand_trace.ipynb")
    assert backup.read_bytes() == theirs
    assert git(clone, "status", "--porcelain").stdout == ""         # work/ is ignored; nothing tracked changed


def test_two_updates_in_the_same_second_keep_both_backups(course, monkeypatch):
    source, work = course
    monkeypatch.setattr(workspace.time, "strftime", lambda fmt: "20260101-000000")
    publish(source, edited(EDITION_1, intro="# two"))
    first = workspace.update(work, source).backups
    publish(source, edited(EDITION_1, intro="# three"))
    second = workspace.update(work, source).backups
    assert first != second and (first / "01_tiny.ipynb").exists() and (second / "01_tiny.ipynb").exists()
    assert read(first / "01_tiny.ipynb").cells[0].source != read(second / "01_tiny.ipynb").cells[0].source


def test_a_failed_merge_leaves_the_file_as_it_was(course, monkeypatch):
    source, work = course
    learner_edits(work / "01_tiny.ipynb", ex1=MY_DOUBLE)
    before = (work / "01_tiny.ipynb").read_bytes()
    publish(source, EDITION_2)
    monkeypatch.setattr(workspace, "merge", lambda *a: (_ for _ in ()).throw(RuntimeError("boom")))
    report = workspace.update(work, source)
    assert report.failed and "PROBLEM  01_tiny.ipynb: left as it was (RuntimeError: boom)" in report.text()
    assert (work / "01_tiny.ipynb").read_bytes() == before


# ---- status (make doctor, make lab) and the Makefile ----------------------------------------------------------
def test_status_counts_lessons_and_names_the_unreadable_and_the_older(course):
    source, work = course
    publish(source, EDITION_1, name="02_more.ipynb")
    publish(work, EDITION_1, name="02_more.ipynb")
    publish(source, EDITION_1, name="03_third.ipynb")
    (work / "01_tiny.ipynb").write_text("{")
    publish(source, edited(EDITION_1, intro="# revised"), name="02_more.ipynb")
    state = workspace.status(work, source)
    assert state.exists and state.lessons == ["01_tiny.ipynb", "02_more.ipynb"]
    assert list(state.unreadable) == ["01_tiny.ipynb"] and state.older == ["02_more.ipynb"]
    assert state.missing == ["03_third.ipynb"]
    assert workspace.status(work.parent / "none", source).exists is False


def test_make_lab_serves_work_and_creates_it_first_and_make_test_never_reads_it():
    lab = subprocess.run(["make", "-n", "lab"], cwd=ROOT, capture_output=True, text=True).stdout
    create = lab.index("tools/workspace.py create --work work")
    assert create < lab.index("jupyter lab") and "--ServerApp.root_dir=work " in lab
    assert "--ServerApp.ip=127.0.0.1" in lab and "/lab/tree/01_hand_trace.ipynb" in lab
    update = subprocess.run(["make", "-n", "update"], cwd=ROOT, capture_output=True, text=True).stdout
    assert "tools/workspace.py update --work work" in update and "git" not in update.split()
    for target in ("test", "unit", "nbval"):
        recipe = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True).stdout
        assert "work" not in recipe.split(), recipe
    assert "work/" in (ROOT / ".gitignore").read_text().splitlines()
    testpaths = json.dumps(__import__("tomllib").loads((ROOT / "pyproject.toml").read_text())
                           ["tool"]["pytest"]["ini_options"]["testpaths"])
    assert "work" not in testpaths


def test_a_lesson_saved_again_while_update_runs_is_left_alone(course, monkeypatch):
    """JupyterLab may save the lesson between make update's read and its write: that file is not touched."""
    source, work = course
    learner_edits(work / "01_tiny.ipynb", ex1=MY_DOUBLE)
    publish(source, EDITION_2)
    real_merge = workspace.merge

    def merge_while_saving(mine, new, name):
        learner_edits(work / "01_tiny.ipynb", ex1=MY_DOUBLE + "\n# saved meanwhile")
        return real_merge(mine, new, name)
    monkeypatch.setattr(workspace, "merge", merge_while_saving)
    report = workspace.update(work, source)
    assert report.failed and "changed while make update ran" in report.text()
    assert cell(read(work / "01_tiny.ipynb"), "ex1").source.endswith("# saved meanwhile")
    assert not list((work / workspace.BACKUPS).glob("*/01_tiny.ipynb")), "no backup of a file left alone"


# ---- make reset LESSON=NN: one lesson started over ------------------------------------------------------------
def test_reset_backs_the_lesson_up_byte_for_byte_then_takes_a_fresh_copy(course):
    source, work = course
    learner_edits(work / "01_tiny.ipynb", ex1=MY_DOUBLE)
    (work / "conventions.md").write_text("my notes\n")
    theirs = (work / "01_tiny.ipynb").read_bytes()
    lines = workspace.reset(work, "01", source)
    assert (work / "01_tiny.ipynb").read_bytes() == (source / "01_tiny.ipynb").read_bytes()
    [backup] = (work / workspace.BACKUPS).glob("*/01_tiny.ipynb")
    assert backup.read_bytes() == theirs
    assert (work / "conventions.md").read_text() == "my notes\n"          # only the lesson named
    assert any(str(backup) in line or str(backup.relative_to(work.parent)) in line for line in lines), lines
    assert "Reload Notebook from Disk" in "\n".join(lines)


def test_reset_names_a_lesson_by_number_or_name_and_refuses_an_unknown_one(course):
    source, work = course
    publish(source, EDITION_1, name="02_more.ipynb")
    assert workspace.lesson_named("2", source) == workspace.lesson_named("02_more", source) == "02_more.ipynb"
    assert workspace.lesson_named("01_tiny.ipynb", source) == "01_tiny.ipynb"
    before = snapshot(work)
    with pytest.raises(ValueError, match=r"no lesson '09'.*01, 02"):
        workspace.reset(work, "09", source)
    assert snapshot(work) == before and not (work / workspace.BACKUPS).exists()


def test_reset_of_a_lesson_missing_or_untouched_backs_nothing_up(course):
    source, work = course
    assert "already the course's fresh copy" in workspace.reset(work, "01", source)[0]
    (work / "01_tiny.ipynb").unlink()
    assert "was not there" in workspace.reset(work, "01", source)[0]
    assert (work / "01_tiny.ipynb").read_bytes() == (source / "01_tiny.ipynb").read_bytes()
    assert not (work / workspace.BACKUPS).exists()
    with pytest.raises(ValueError, match="make lab"):
        workspace.reset(work.parent / "nowhere", "01", source)


def test_two_resets_keep_both_backups(course, monkeypatch):
    source, work = course
    monkeypatch.setattr(workspace.time, "strftime", lambda fmt: "20260101-000000")
    learner_edits(work / "01_tiny.ipynb", ex1=MY_DOUBLE)
    workspace.reset(work, "01", source)
    learner_edits(work / "01_tiny.ipynb", ex1=MY_DOUBLE + "  # second try")
    workspace.reset(work, "01", source)
    backups = sorted((work / workspace.BACKUPS).glob("*/01_tiny.ipynb"))
    assert [b.parent.name for b in backups] == ["20260101-000000", "20260101-000000-2"]
    assert cell(read(backups[1]), "ex1").source.endswith("# second try")


def test_make_reset_refuses_without_lesson_and_resets_with_it(tmp_path):
    """`make reset` without LESSON changes nothing; with it, the command line says what was backed up where."""
    work = tmp_path / "work"
    workspace.create(work)
    lesson = work / "02_pure_python.ipynb"
    lesson.write_text(lesson.read_text().replace("Lesson 02", "Lesson 02 (my notes)", 1))
    theirs, before = lesson.read_bytes(), snapshot(work)
    refused = subprocess.run(["make", "-s", "reset", f"WORK={work}"], cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode != 0 and "make reset LESSON=02" in refused.stdout + refused.stderr
    assert snapshot(work) == before
    done = subprocess.run(["make", "-s", "reset", "LESSON=02", f"WORK={work}"], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    [backup] = (work / workspace.BACKUPS).glob("*/02_pure_python.ipynb")
    assert backup.read_bytes() == theirs and f"to {backup}" in done.stdout, done.stdout
    assert lesson.read_bytes() == (ROOT / "notebooks" / "02_pure_python.ipynb").read_bytes()
    unknown = subprocess.run(["make", "-s", "reset", "LESSON=42", f"WORK={work}"], cwd=ROOT, capture_output=True,
                             text=True)
    assert unknown.returncode != 0 and "Nothing was reset: no lesson '42'" in unknown.stderr


# ---- make lab / make update after a newer zip: .venv is rebuilt only when its pins change ---------------------
FAKE_PYTHON = """#!/bin/sh
# .venv's Python, faked: pip "installs" by writing a line, and fails as without a network when OFFLINE is set.
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
  [ -n "$OFFLINE" ] && { echo "pip: no network" >&2; exit 1; }
  echo "$@" >> "$(dirname "$0")/../../pip.log"
fi
exit 0
"""


@pytest.fixture
def checkout(tmp_path):
    """The Makefile and what .venv is built from, in a folder of their own, with a fake .venv/bin/python."""
    for name in ("Makefile", "pyproject.toml", "tools/check_python.py", "tools/ipython_kernel_config.py",
                 "tools/install_stamp.py", "tools/doctor.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "requirements.txt").write_text("numpy==2.4.6\nsix==1.17.0\n")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return tmp_path


def build(folder, **env):
    done = subprocess.run(["make", "-s", ".venv/.installed", f"PYTHON={sys.executable}"], cwd=folder,
                          capture_output=True, text=True, timeout=120, env={**__import__("os").environ, **env})
    log = folder / "pip.log"
    installs = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return done, installs


def newer(folder, seconds=100):
    """Every file newer than .venv's stamp, as after unpacking a newer zip over the folder."""
    import os
    import time
    later = time.time() + seconds
    for path in folder.rglob("*"):
        if path.is_file() and not any(part.startswith(".venv") for part in path.parts):
            os.utime(path, (later, later))


def test_newer_files_with_the_same_pins_reinstall_nothing_and_need_no_network(checkout):
    done, installs = build(checkout)
    assert done.returncode == 0 and any("-r requirements.txt" in line for line in installs), done.stderr
    newer(checkout)
    done, installs = build(checkout, OFFLINE="1")
    assert done.returncode == 0 and installs == [], done.stdout + done.stderr
    (checkout / "requirements.txt").write_text("numpy==2.4.7\nsix==1.17.0\n")     # the pins change
    done, installs = build(checkout)
    assert done.returncode == 0 and any("-r requirements.txt" in line for line in installs)
    (checkout / "requirements.txt").write_text("numpy==2.4.8\nsix==1.17.0\n")
    done, _ = build(checkout, OFFLINE="1")                   # changed pins without a network: said plainly
    assert done.returncode != 0 and "Could not install the packages pinned in requirements.txt" in done.stdout
    done, installs = build(checkout)                          # and tried again once online
    assert done.returncode == 0 and installs


@pytest.mark.parametrize("numpy, reinstalled", [("2.4.6", False), ("2.3.0", True)])
def test_a_venv_built_before_the_hash_was_kept_is_adopted_when_its_pins_are_installed(checkout, numpy,
                                                                                        reinstalled):
    site = checkout / ".venv" / "lib" / "python3.12" / "site-packages"
    for name, version in (("numpy", numpy), ("six", "1.17.0")):
        (site / f"{name}-{version}.dist-info").mkdir(parents=True)
        (site / f"{name}-{version}.dist-info" / "METADATA").write_text(f"Name: {name}\nVersion: {version}\n\n")
    (checkout / ".venv" / ".installed").touch()
    newer(checkout)
    done, installs = build(checkout, **({} if reinstalled else {"OFFLINE": "1"}))
    assert done.returncode == 0, done.stdout + done.stderr
    assert bool(installs) == reinstalled


def test_the_class_environment_is_rebuilt_by_its_pins_contents_too(checkout):
    """.venv-hub (make hub, make test-hub, make test-nbgrader) follows the same rule as .venv: newer files with
    the same pins reinstall nothing; a change to nbgrader's or the hub's pins reinstalls."""
    for name in ("requirements-nbgrader.txt", "requirements-hub.txt"):
        (checkout / name).write_text("six==1.17.0\n")
    python = checkout / ".venv-hub" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)

    def build_hub(**env):
        done = subprocess.run(["make", "-s", ".venv-hub/.installed", f"PYTHON={sys.executable}"], cwd=checkout,
                              capture_output=True, text=True, timeout=120, env={**__import__("os").environ, **env})
        log = checkout / "pip.log"
        installs = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        return done, installs

    done, installs = build_hub()
    assert done.returncode == 0 and any("requirements-hub.txt" in line for line in installs), done.stderr
    newer(checkout)
    done, installs = build_hub(OFFLINE="1")
    assert done.returncode == 0 and installs == [], done.stdout + done.stderr
    (checkout / "requirements-hub.txt").write_text("six==1.17.0\njupyterhub==5.4.3\n")
    done, installs = build_hub()
    assert done.returncode == 0 and installs, done.stdout + done.stderr
