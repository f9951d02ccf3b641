"""The second edition's rules for every lesson, checked on the stored notebooks (CONTRIBUTING.md explains them).

- pace: the first cell states the core path's time (at most 45 minutes, within a quarter of the latest fresh
  trial's estimate in docs/pace_trials.json, and not below three quarters of tools/pace.py's) and, when there
  are "Going further" sections, their time, held the same way; README's table says the same;
- "Going further" sections state their own time, and skipping them breaks no later cell;
- every exercise has two hints, a nudge then a concrete step;
- "Check your understanding" (3 to 6 questions from helpers.quiz) comes right before the recap;
- every lesson links the conventions card; sigma is not used as a symbol;
- every figure has a text alternative; a check cell shows its report and no `Out:` value.
"""
import ast
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import notebooks as nbtool  # noqa: E402
import pace as pacetool  # noqa: E402
from cell_names import bound_and_used  # noqa: E402

from helpers.quiz import lesson_quiz  # noqa: E402

LESSONS = sorted((ROOT / "solutions").glob("*.ipynb"))
MAX_CORE_MINUTES = 45
TOLERANCE = 0.25          # a stated time within a quarter of the estimate


def cells(path):
    return nbformat.read(path, as_version=4).cells


def headings(nb_cells):
    """(index, level, text) of every markdown heading line at the start of a cell."""
    found = []
    for i, cell in enumerate(nb_cells):
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith("#"):
            match = pacetool.HEADING.search(cell.source.lstrip())
            found.append((i, len(match.group(1)), match.group(2).strip()))
    return found


TRIALS = json.loads((ROOT / "docs" / "pace_trials.json").read_text())["lessons"]


def trial(path, part):
    """The latest fresh trial's most likely minutes for the lesson's core path or Going further."""
    record = TRIALS.get(path.name[:2])
    assert record is not None, f"{path.name}: no fresh trial recorded in docs/pace_trials.json"
    low, high, likely = record[part]
    assert low <= likely <= high
    return likely


def honest(path, what, stated, likely, estimate):
    """A stated time is what the latest trial learner needed, within a quarter, and never below three quarters
    of tools/pace.py's plain estimate (trial learners found that estimate low, not high: docs/pace.md)."""
    assert abs(stated - likely) <= TOLERANCE * likely, \
        f"{path.name}: {what} states {stated} min, the latest fresh trial {likely} (docs/pace_trials.json)"
    assert stated >= (1 - TOLERANCE) * estimate, \
        f"{path.name}: {what} states {stated} min, below tools/pace.py's estimate {estimate:.1f} by over a quarter"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_core_path_is_stated_short_and_honest(path):
    pace = pacetool.pace(path)
    assert pace.stated_core is not None, f"{path.name}: the first cell must say '**Core path:** about N minutes'"
    assert pace.stated_core <= MAX_CORE_MINUTES, f"{path.name}: core path {pace.stated_core} > 45 minutes"
    assert trial(path, "core") <= MAX_CORE_MINUTES * (1 + TOLERANCE)
    honest(path, "the core path", pace.stated_core, trial(path, "core"), pace.core)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_going_further_sections_state_their_time(path):
    pace = pacetool.pace(path)
    further = [s for s in pace.sections if s.further and s.title.lower().startswith("going further")]
    if not further:
        assert pace.stated_further is None, f"{path.name} states a Going further time but has no such section"
        return
    for section in further:
        assert section.stated, f"{path.name}: '{section.title}' must say '(about N minutes)'"
    assert pace.stated_further == sum(s.stated for s in further), \
        f"{path.name}: the first cell's Going further time is not the sum of the sections' times"
    honest(path, "Going further", pace.stated_further, trial(path, "further"), pace.further)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_each_going_further_section_says_where_the_core_path_continues(path):
    for cell in cells(path):
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith("#"):
            heading, _, body = cell.source.strip().partition("\n")
            if "Going further" in heading:
                assert body.strip().startswith("Optional"), \
                    f"{path.name}: '{heading}' should open with 'Optional: the core path continues at ...'"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_headings_start_their_cells(path):
    # tools/pace.py (and a reader skimming) sees a section where a cell starts with its heading: a heading
    # buried inside a cell would silently count a Going further section as core.
    for cell in cells(path):
        if cell.cell_type == "markdown":
            later = [line for line in cell.source.strip().splitlines()[1:] if line.startswith("## ")]
            assert not later, f"{path.name}: start a new cell at {later[0]!r}"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_skipping_going_further_breaks_no_later_cell(path):
    nb_cells = cells(path)
    flags = pacetool.further_flags(nb_cells)
    core_bound, further_only = set(), set()
    for cell, further in zip(nb_cells, flags):
        if cell.cell_type != "code":
            continue
        bound, used = bound_and_used(cell.source)
        parameters = bound_and_used(cell.source, arguments_bound=True)[0] - bound   # local to their function
        if further:
            further_only |= bound - core_bound
            continue
        needs = (used & further_only) - bound - parameters
        assert not needs, f"{path.name}: a core cell uses {sorted(needs)}, defined only in a Going further " \
                          f"section:\n{cell.source}"
        core_bound |= bound
        further_only -= bound


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_every_exercise_has_a_nudge_then_a_concrete_step(path):
    nb_cells = cells(path)
    for i, cell in enumerate(nb_cells):
        if not nbtool.is_exercise(cell):
            continue
        header = next(c.source for c in reversed(nb_cells[:i]) if c.cell_type == "markdown")
        summaries = re.findall(r"<summary>(.*?)</summary>", header)
        assert len(summaries) >= 2 and summaries[0].startswith("Hint 1") and summaries[1].startswith("Hint 2"), \
            f"{path.name}: {nbtool.describe_cell(nb_cells, i)} needs <summary>Hint 1 ...</summary> and " \
            f"<summary>Hint 2 ...</summary>, got {summaries}"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_check_your_understanding_comes_before_the_recap(path):
    nb_cells = cells(path)
    found = headings(nb_cells)
    titles = [text for _, _, text in found]
    assert "Check your understanding" in titles and "Recap" in titles, f"{path.name}: {titles}"
    quiz_at = next(i for i, _, text in found if text == "Check your understanding")
    recap_at = next(i for i, _, text in found if text == "Recap")
    assert quiz_at < recap_at, f"{path.name}: the quiz must come before the recap"
    code = [c for c in nb_cells[quiz_at:recap_at] if c.cell_type == "code"]
    lesson = path.name[:2]
    assert any(f'lesson_quiz("{lesson}")' in c.source for c in code), \
        f"{path.name}: the quiz cell must show lesson_quiz(\"{lesson}\")"
    assert 3 <= len(lesson_quiz(lesson)) <= 6


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_links_the_conventions_card_and_does_not_use_sigma(path):
    markdown = "\n".join(c.source for c in cells(path) if c.cell_type == "markdown")
    assert "](conventions.md" in markdown, f"{path.name} should link the conventions card, conventions.md"
    assert "\\sigma" not in markdown and "σ" not in markdown, \
        f"{path.name} uses sigma; write act, sigmoid or s (see the conventions card's symbols)"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_every_figure_has_a_text_alternative(path):
    for cell in cells(path):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" not in data:
                continue
            alt = output.get("metadata", {}).get("image/png", {}).get("alt", "")
            in_html = re.search(r'<img [^>]*alt="([^"]+)"', data.get("text/html", ""))
            assert alt.strip() or in_html, \
                f"{path.name}: a figure without alt text (use helpers.figures.show(fig, alt=...)):\n{cell.source}"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_check_cells_show_no_value(path):
    for cell in cells(path):
        if cell.cell_type == "code" and nbtool.CHECK_CALL.search(cell.source):
            values = [o for o in cell.outputs if o.output_type == "execute_result"]
            assert not values, f"{path.name}: a check cell shows a value (Out: ...):\n{cell.source}"


def readme_time(name):
    row = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith(f"| `{name}` |"))
    return row.rstrip(" |").rsplit("|", 1)[1].strip()


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_readme_states_the_lessons_times(path):
    pace = pacetool.pace(path)
    expected = f"{pace.stated_core} min" + (f" (+ {pace.stated_further} optional)" if pace.stated_further else "")
    assert readme_time(path.name) == expected, f"README's time for {path.name}"


def test_readme_total_is_the_sum_of_the_core_paths():
    paces = [pacetool.pace(p) for p in LESSONS]
    core = sum(p.stated_core or 0 for p in paces)
    further = sum(p.stated_further or 0 for p in paces)
    text = (ROOT / "README.md").read_text()
    hours, minutes = divmod(core, 60)
    assert f"core paths add up to {hours} h {minutes:02d} min" in text, "README's total core time"
    assert f"Going further sections add {further // 60} h {further % 60:02d} min" in text


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_the_last_cell_shows_the_learners_progress(path):
    last = cells(path)[-1]
    lesson = path.name[:2]
    # `from helpers import progress`, not `from helpers.progress import show`: the name `show` is
    # helpers.figures.show in the cells above, and re-running one of them after this cell must still work.
    assert last.cell_type == "code" and last.source == f'from helpers import progress\nprogress.show("{lesson}")', \
        f"{path.name}: the last cell should be the progress view:\n{last.source}"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_the_recap_says_what_comes_next(path):
    recap = next(c.source for c in cells(path) if c.cell_type == "markdown" and c.source.startswith("## Recap"))
    assert "**Next:**" in recap, f"{path.name}: the recap should end with a '**Next:** ...' line"



@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_a_lesson_handed_out_alone_carries_its_licence(path):
    first = next(c.source for c in cells(path) if c.cell_type == "markdown")
    assert "CC BY 4.0" in first and "MIT" in first, f"{path.name}: the first cell should name both licences"
