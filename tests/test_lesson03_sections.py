"""Lesson 03's eight Going further sections can be skipped in any combination: each uses only names that the
core defines before it, or that it defines itself. The one exception is stated in the text: "Heads, and the
crossing measured" uses the FLOP counts of "Cost against sequence length" and says to run that one first.
(tests/test_edition2.py checks the core cells; this checks the Going further sections against each other.)"""
import builtins
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import pace  # noqa: E402
from cell_names import bound_and_used  # noqa: E402

LESSON = ROOT / "solutions" / "03_numpy_position_wise.ipynb"
NEEDS = {"Heads, and the crossing measured": "Cost against sequence length"}   # said in the section's text


def sections():
    """(title or None for the core, code cells) in notebook order; a Going further title without its prefix."""
    cells = nbformat.read(LESSON, as_version=4).cells
    found, current = [], None
    for cell, further in zip(cells, pace.further_flags(cells)):
        if cell.cell_type == "markdown" and further and cell.source.lstrip().startswith("## Going further"):
            title = cell.source.lstrip().splitlines()[0].removeprefix("## Going further · ").split(" (about")[0]
            current = (title, [])
            found.append(current)
        elif not further and (current is None or current[0] is not None):
            current = (None, [])
            found.append(current)
        if cell.cell_type == "code":
            current[1].append(cell.source)
    return found


def test_every_going_further_section_needs_only_the_core_before_it_or_what_it_says_it_needs():
    python_names = set(dir(builtins))
    core, by_title = set(), {}
    titles = [title for title, _ in sections() if title]
    assert len(titles) == 8 and set(NEEDS.values()) <= set(titles) and set(NEEDS) <= set(titles)
    for title, sources in sections():
        bound_here = set()
        for source in sources:
            bound, used = bound_and_used(source, arguments_bound=True)
            if title is not None:
                allowed = core | bound_here | bound | by_title.get(NEEDS.get(title), set())
                missing = used - allowed - python_names
                assert not missing, f"'{title}' uses {sorted(missing)}, defined only in another Going further section"
            bound_here |= bound
        if title is None:
            core |= bound_here
        else:
            by_title[title] = bound_here


def test_the_section_that_needs_another_says_so():
    text = LESSON.read_text()
    assert "This section uses the FLOP counts of the section above; run that one first." in text
