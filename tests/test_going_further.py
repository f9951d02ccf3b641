"""Each "Going further" section runs on its own after the core path: a learner who finished the core path and
comes back to an optional section, or reads them in another order, gets no error and the same printed numbers.

Two kernels per lesson, every lesson (`make test-going-further`, about 90 s on two cores, so CI runs it once
and `make test` leaves it out): the core cells in order, then the Going further sections in order, and again with the sections in reverse order.
Between them every section runs both before and after each other one, so a section that uses a name another
section re-binds (x, W1, d, T ...) or defines (a function) is caught. Outputs of cells tagged
nbval-ignore-output (timings) are not compared, but they must not raise."""
import copy
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import notebooks as nbtool  # noqa: E402

LESSONS = sorted(p.name for p in (ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
GOING_FURTHER = re.compile(r"^## Going further", re.M)


def sections(nb):
    """(core cell indices, [indices of each Going further section]) for a notebook."""
    core, optional, current = [], [], None
    for i, cell in enumerate(nb.cells):
        first = cell.source.lstrip().split("\n", 1)[0] if cell.cell_type == "markdown" else ""
        if first.startswith("## "):
            current = [] if GOING_FURTHER.match(first) else None
            if current is not None:
                optional.append(current)
        (core if current is None else current).append(i)
    return core, optional


def printed(cell):
    return "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", [])
                   if o.get("output_type") != "display_data")


@pytest.mark.parametrize("order", ["forward", "reverse"])
@pytest.mark.parametrize("name", LESSONS)
def test_going_further_sections_run_after_the_core_path_in_any_order(name, order):
    stored = nbformat.read(ROOT / "solutions" / name, as_version=4)
    core, optional = sections(stored)
    assert optional, f"{name} has no Going further section"
    run = core + [i for section in (optional if order == "forward" else optional[::-1]) for i in section]
    nb = copy.deepcopy(stored)
    nb.cells = [copy.deepcopy(stored.cells[i]) for i in run]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    try:
        nbtool.execute(nb, ROOT / "solutions")
    except Exception as error:                  # nbclient's CellExecutionError names the cell and the error
        pytest.fail(f"{name}: a cell raised when run after the core path, sections {order}:\n{error}"[:3000])
    drifted = []
    for i, cell in zip(run, nb.cells):
        if cell.cell_type != "code" or i in core or "nbval-ignore-output" in cell.metadata.get("tags", []):
            continue
        if printed(cell) != printed(stored.cells[i]):
            drifted.append(f"cell {i}:\n{cell.source[:200]}\n--- stored\n{printed(stored.cells[i])}"
                           f"--- now\n{printed(cell)}")
    assert not drifted, (f"{name}: Going further output differs when run after the core path, sections {order}:\n"
                         + "\n".join(drifted))
