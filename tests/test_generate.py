"""tools/notebooks.py: stubs from markers, and never overwriting a learner's work silently."""
import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import notebooks as nbtool  # noqa: E402

SOLUTION_CELL = '''def double(x):
    """Twice x."""
    ### BEGIN SOLUTION
    y = 2 * x
    return y
    ### END SOLUTION'''


def test_marked_block_becomes_a_stub_at_its_indentation():
    assert nbtool.strip_solutions(SOLUTION_CELL) == '''def double(x):
    """Twice x."""
    # YOUR CODE HERE
    raise NotImplementedError("your code here")'''


def test_stubbed_function_raises_not_implemented():
    namespace = {}
    exec(nbtool.strip_solutions(SOLUTION_CELL), namespace)
    with pytest.raises(NotImplementedError):
        namespace["double"](3)


def test_text_outside_markers_is_kept_and_two_blocks_both_stubbed():
    source = SOLUTION_CELL + "\n\n\ndef half(x):\n    ### BEGIN SOLUTION\n    return x / 2\n    ### END SOLUTION\nprint(1)"
    stubbed = nbtool.strip_solutions(source)
    assert stubbed.count("raise NotImplementedError") == 2
    assert "2 * x" not in stubbed and "x / 2" not in stubbed
    assert stubbed.endswith("print(1)")


@pytest.mark.parametrize("source, complaint", [
    ("### BEGIN SOLUTION\nx = 1\n### END SOLUTION", "inside a function body"),
    ("def f():\n    ### BEGIN SOLUTION\n    return 1", "never closed"),
    ("def f():\n    return 1\n    ### END SOLUTION", "without"),
    ("def f():\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n    ### END SOLUTION", "inside another"),
])
def test_malformed_markers_are_refused(source, complaint):
    with pytest.raises(nbtool.MarkerError, match=complaint):
        nbtool.strip_solutions(source)


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A throwaway solutions/ and notebooks/ pair; execution is skipped to keep the test fast."""
    for name in ("SOLUTIONS", "NOTEBOOKS", "BACKUPS"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        monkeypatch.setattr(nbtool, name, folder)
    monkeypatch.setattr(nbtool, "ROOT", tmp_path)
    monkeypatch.setattr(nbtool, "execute", lambda nb, cwd: None)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Lesson"), nbformat.v4.new_code_cell(SOLUTION_CELL),
                nbformat.v4.new_code_cell("check_double(double)")]
    nbformat.write(nb, tmp_path / "solutions" / "01_x.ipynb")
    assert nbtool.generate([], force=False) == 0
    return tmp_path


def learner(course):
    return nbformat.read(course / "notebooks" / "01_x.ipynb", as_version=4)


def test_generated_copy_has_the_stub_and_is_not_stale(course):
    assert "raise NotImplementedError" in learner(course).cells[1].source
    assert nbtool.stale() == []


def test_unchanged_lesson_is_left_alone_unless_named_or_rerun(course, capsys, monkeypatch):
    runs = []
    monkeypatch.setattr(nbtool, "execute", lambda nb, cwd: runs.append(1) or _store_output(nb))
    nbtool.generate(["01_x"], force=False)                       # named: written, with an output stored
    capsys.readouterr()
    before = (course / "notebooks" / "01_x.ipynb").read_bytes()
    assert nbtool.generate([], force=False) == 0
    assert "current  notebooks/01_x.ipynb" in capsys.readouterr().out and len(runs) == 1
    assert (course / "notebooks" / "01_x.ipynb").read_bytes() == before
    assert nbtool.generate([], force=False, rerun=True) == 0
    assert "wrote    notebooks/01_x.ipynb" in capsys.readouterr().out and len(runs) == 2


def _store_output(nb):
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="not implemented yet\n")]


def test_a_tags_only_change_is_carried_over_as_metadata_without_running(course, capsys, monkeypatch):
    """Slide tags added in solutions/: the learner copy gets the same tags, its outputs kept, nothing run."""
    runs = []
    monkeypatch.setattr(nbtool, "execute", lambda nb, cwd: runs.append(1) or _store_output(nb))
    nbtool.generate(["01_x"], force=False)
    before = learner(course)
    nb = nbformat.read(course / "solutions" / "01_x.ipynb", as_version=4)
    nb.cells[0].metadata["tags"] = ["slide"]
    nbformat.write(nb, course / "solutions" / "01_x.ipynb")
    assert nbtool.stale() != []                                  # a tag is part of what must match
    capsys.readouterr()
    assert nbtool.generate([], force=False) == 0
    assert "metadata notebooks/01_x.ipynb (cell tags)" in capsys.readouterr().out and len(runs) == 1
    after = learner(course)
    assert after.cells[0].metadata["tags"] == ["slide"] and after.cells[2].outputs == before.cells[2].outputs
    assert [c.source for c in after.cells] == [c.source for c in before.cells] and nbtool.stale() == []
    nb.cells[0].metadata.pop("tags")                             # and a tag removed is removed
    nbformat.write(nb, course / "solutions" / "01_x.ipynb")
    assert nbtool.generate([], force=False) == 0 and "tags" not in learner(course).cells[0].metadata
    assert len(runs) == 1 and nbtool.stale() == []


def test_changed_solution_is_regenerated(course, capsys):
    nb = nbformat.read(course / "solutions" / "01_x.ipynb", as_version=4)
    nb.cells[0].source = "# Lesson, revised"
    nbformat.write(nb, course / "solutions" / "01_x.ipynb")
    assert nbtool.generate([], force=False) == 0
    assert "wrote    notebooks/01_x.ipynb" in capsys.readouterr().out
    assert learner(course).cells[0].source == "# Lesson, revised"


def test_conventions_card_is_copied_and_drift_is_stale(course, capsys):
    (course / "solutions" / "conventions.md").write_text("# Conventions\n")
    assert nbtool.stale() == ["notebooks/conventions.md differs from solutions/conventions.md"]
    nbtool.generate([], force=False)
    assert (course / "notebooks" / "conventions.md").read_text() == "# Conventions\n"
    assert nbtool.stale() == []


def test_solution_change_makes_notebooks_stale(course):
    nb = nbformat.read(course / "solutions" / "01_x.ipynb", as_version=4)
    nb.cells[0].source = "# Lesson, revised"
    nbformat.write(nb, course / "solutions" / "01_x.ipynb")
    assert nbtool.stale() == ["notebooks/01_x.ipynb differs from what solutions/01_x.ipynb generates"]


def edit_exercise(course):
    nb = learner(course)
    nb.cells[1].source = "def double(x):\n    return x + x"
    nbformat.write(nb, course / "notebooks" / "01_x.ipynb")


def test_edited_exercise_is_refused_and_named(course, capsys):
    edit_exercise(course)
    assert nbtool.generate([], force=False) == 1
    out = capsys.readouterr().out
    assert "REFUSED  notebooks/01_x.ipynb" in out and "the exercise cell starting `def double(x):` was edited" in out
    assert "return x + x" in learner(course).cells[1].source  # the learner's work is still there


def test_added_cell_is_refused(course, capsys):
    nb = learner(course)
    nb.cells.append(nbformat.v4.new_markdown_cell("my notes"))
    nbformat.write(nb, course / "notebooks" / "01_x.ipynb")
    assert nbtool.generate([], force=False) == 1
    assert "the markdown cell starting `my notes` was added" in capsys.readouterr().out


def test_cells_are_named_by_exercise_title_or_first_line():
    cells = [nbformat.v4.new_markdown_cell("### Exercise 2 · Which units fire?\n\nWrite it."),
             nbformat.v4.new_code_cell(SOLUTION_CELL), nbformat.v4.new_code_cell("\n\nprint('hello')"),
             nbformat.v4.new_markdown_cell("## 3. A heading")]
    assert nbtool.describe_cell(cells, 1) == "the code of Exercise 2 · Which units fire?"
    assert nbtool.describe_cell(cells, 2) == "the code cell starting `print('hello')`"
    assert nbtool.describe_cell(cells, 3) == "the markdown cell starting `3. A heading`"


def test_force_backs_up_then_regenerates(course, capsys):
    edit_exercise(course)
    assert nbtool.generate([], force=True) == 0
    out = capsys.readouterr().out
    backups = list((course / "backups").glob("01_x.*.ipynb"))
    assert len(backups) == 1 and "BACKED UP notebooks/01_x.ipynb" in out
    assert "return x + x" in nbformat.read(backups[0], as_version=4).cells[1].source
    assert "raise NotImplementedError" in learner(course).cells[1].source


def test_notebook_without_hashes_is_treated_as_a_learners(course, capsys):
    nb = learner(course)
    del nb.metadata[nbtool.META_KEY]
    nbformat.write(nb, course / "notebooks" / "01_x.ipynb")
    assert nbtool.generate([], force=False) == 1
    assert "not written by this script" in capsys.readouterr().out


def test_stream_chunks_are_merged_so_stored_json_is_stable():
    cell = nbformat.v4.new_code_cell("print(1); print(2)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="a"),
                    nbformat.v4.new_output("stream", name="stdout", text="\nb\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="warn\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="c\n")]
    nbtool.coalesce_streams(cell)
    assert [(o.name, o.text) for o in cell.outputs] == [("stdout", "a\nb\n"), ("stderr", "warn\n"),
                                                         ("stdout", "c\n")]


def test_the_kernels_own_timing_warning_is_not_stored():
    """ipykernel writes "IOStream.flush timed out" to stderr on a busy machine; stored, nbval would fail on the
    next quiet run. The lesson's own stderr stays."""
    cell = nbformat.v4.new_code_cell("print(1)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="IOStream.flush timed out\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="IOStream.flush timed out\nreal warning\n")]
    nbtool.drop_kernel_noise(cell)
    assert [(o.name, o.text) for o in cell.outputs] == [("stdout", "1\n"), ("stderr", "real warning\n")]


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_no_stored_output_holds_kernel_noise(folder):
    root = Path(__file__).resolve().parent.parent / folder
    for path in sorted(root.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            for output in cell.get("outputs", []):
                text = output.get("text", "")
                assert not any(noise in text for noise in nbtool.KERNEL_NOISE), (path.name, cell.source[:60])
