"""Rules every notebook follows, checked on the stored files (nbval checks that they still run the same)."""
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import notebooks as nbtool  # noqa: E402  (tools/ is a folder of scripts, not a package)

SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
CHECK_CALL = nbtool.CHECK_CALL


def code_cells(path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def text_of(cell):
    parts = []
    for output in cell.outputs:
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def test_there_are_notebooks():
    assert SOLUTIONS, "solutions/ holds no notebooks"


def test_learner_notebooks_are_generated_from_solutions():
    problems = nbtool.stale()
    assert not problems, "notebooks/ is stale; run `make notebooks`:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_name_is_numbered(path):
    assert re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", path.name), path.name


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_no_cell_relies_on_a_trailing_semicolon(path):
    # nbval runs cells without storing history, so IPython cannot see the ';' and shows the value anyway:
    # the stored output and nbval's output would then differ. End plotting cells with plt.show() instead.
    for cell in code_cells(path):
        lines = [line for line in cell.source.rstrip().split("\n") if line.strip()]
        assert not lines or not lines[-1].rstrip().endswith(";"), f"{path.name}: {lines[-1]!r}"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_no_path_tricks_installs_or_downloads(path):
    for cell in code_cells(path):
        for banned in ("sys.path", "!pip", "%pip", "os.chdir", "urlopen", "requests.get"):
            assert banned not in cell.source, f"{path.name}: {banned!r} in\n{cell.source}"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_every_exercise_has_a_header_and_a_check(path):
    nb = nbformat.read(path, as_version=4)
    exercises = [i for i, c in enumerate(nb.cells) if nbtool.is_exercise(c)]
    for i in exercises:
        before = "\n".join(c.source for c in nb.cells[max(0, i - 3):i] if c.cell_type == "markdown")
        for needed in ("Difficulty", "Time box", "<details>"):
            assert needed in before, f"{path.name}: the exercise in cell {i + 1} needs {needed!r} in its header"
        after = [c for c in nb.cells[i + 1:i + 3] if c.cell_type == "code"]
        assert any(CHECK_CALL.search(c.source) for c in after), \
            f"{path.name}: the exercise in cell {i + 1} is not followed by a check_...() call"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_solution_checks_all_pass(path):
    for cell in code_cells(path):
        if CHECK_CALL.search(cell.source):
            text = text_of(cell)
            assert "pass" in text and "\u2718" not in text and "not implemented" not in text, \
                f"{path.name}: a check does not pass in the stored solution:\n{cell.source}\n{text}"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_fresh_learner_notebook_says_not_implemented_at_each_check(path):
    learner = ROOT / "notebooks" / path.name
    for cell in code_cells(learner):
        if CHECK_CALL.search(cell.source):
            assert "not implemented yet" in text_of(cell), f"{learner.name}:\n{cell.source}\n{text_of(cell)}"
        assert all(o.output_type != "error" for o in cell.outputs), f"{learner.name}: error in\n{cell.source}"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_readme_lists_the_notebook_with_its_summary(path):
    # The summary in the notebook's metadata (shown by `make html`) is README's "what you do" column.
    summary = nbformat.read(path, as_version=4).metadata.get("ffn_course", {}).get("summary")
    assert summary, f"{path.name} has no metadata.ffn_course.summary"
    rows = [line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith(f"| `{path.name}` |")]
    assert rows, f"README.md does not list {path.name}"
    assert rows[0].startswith(f"| `{path.name}` | {summary} | "), f"README's row for {path.name} differs from its summary"
