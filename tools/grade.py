"""Grade a class's notebooks: `make grade SUBMISSIONS=path/` (or `python tools/grade.py path/`).

Who is who: each subfolder of SUBMISSIONS is one learner (named after the folder) and holds that learner's
notebooks, named as in notebooks/ (`alice/01_hand_trace.ipynb`, `alice/02_pure_python.ipynb`, ...). A
notebook directly in SUBMISSIONS named <learner>_<NN_lesson>.ipynb or <learner>-<NN_lesson>.ipynb (a flat
export from a learning platform: `alice_01_hand_trace.ipynb`, `alice_02_pure_python.ipynb`) belongs to that
learner, and the summary lists the learners so grouped; any other notebook there is a learner of its own,
named after the file (`bob.ipynb`). Which lesson a notebook is comes from its file name (`01_hand_trace` in
it), else from the metadata `make notebooks` writes into every learner copy, else from the checks it calls.

What runs: each notebook runs top to bottom in a fresh kernel of this environment, in a scratch folder, with
the public cases only. Every cell has a time limit (--cell-timeout, 60 s): a cell that runs longer is
interrupted and the next cell runs. A cell that kills the kernel, or will not stop when interrupted, is
skipped: a fresh kernel re-runs the cells before it (their checks are not counted again) and carries on after
it. The notebook as a whole has a budget too (--timeout, 600 s). So a hang or a crash in one exercise does not
cost the others.

What counts: the grader's own first cell (helpers.grading.install) records every call of a `check_<exercise>`
and the function it was given. The learner's LAST call of a check counts, whichever cell makes it (a fix
written in a new cell below a failing check counts); calls from the course's own cells other than that
exercise's check cell do not (lesson 02 shows a check failing on purpose, `passed = check_ffn_forward(
ffn_one_stride)`: no attempt of the learner's). The grader's last cell copies those functions out of the
kernel, and each is checked again in a clean process with hidden cases drawn from a secret of this run
(helpers.grading.grade_clean): that verdict is the one that counts, and the executed copy's check cell shows
its report. What the learner's cells did to the checks (helpers.grading.scan, and what changed in the kernel)
is flagged. README, "Grading: what it defends against".

One verdict per exercise and learner, the same columns and denominators for everyone:
    pass            every case passed (hidden ones included)
    fail            with the score (cases passed / cases) and the mistake the check named
    not attempted   the function still raises NotImplementedError (the stub)
    not run         the notebook was handed in but the check never ran (deleted, or the notebook stopped)
    not handed in   no notebook for that lesson
Flags, not verdicts: an exercise whose function is the reference solution's code (the same syntax tree as in
solutions/, comments and docstrings aside), or that uses something from `helpers` the solution does not (the
course's reference, imported or called), is flagged; the instructor decides. (The course's own function handed
to a check is not flagged: the check fails it, saying so.)
Notes: per notebook, the first cell that raised (with the exception's message; the count of later errors,
which it usually causes, is given, not each), every cell interrupted or skipped, an unreadable file.

What it writes (into --out, default grades/, git-ignored; tools/grade_report.py makes the files):
    grades.csv      one row per learner: per exercise its verdict, score, mistake and flags; then passed,
                    exercises, score (out of exercises), lessons handed in, notes
    verdicts.csv    the same, one row per learner and exercise (for a spreadsheet's pivot table)
    report.html     the class report: per lesson a bar chart of pass rates, a table of verdicts, the most
                    common named mistakes with counts; then flags and learners with problems
    summary.txt     the report in plain text (also printed): each lesson's commonest named mistakes
    grades.json     everything above, for `merge`
    LEARNER/NAME    the executed copy of each notebook, to look at what went wrong

A class too big for one machine: `--shard i/n` grades learner k (alphabetical, from 1) when
(k - 1) mod n == i - 1, into its own --out; `python tools/grade.py merge DIR ... --out grades` combines the
shards' grades.json into one set of files (array jobs on a cluster, or a CI matrix, share the work); it exits
with status 1 when a shard is missing (after writing what it could merge).

Learners' code runs with your permissions: grade work from people you trust, or inside a container.
"""
from __future__ import annotations

import argparse
import ast
import logging
import multiprocessing
import os
import re
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from grade_report import (FAIL, FORMAT, NOT_ATTEMPTED, NOT_HANDED_IN, NOT_RUN, PASS, VERDICTS,  # noqa: F401
                          column, merge, merge_problems, merged_model, write_outputs)
from notebooks import CHECK_CALL, META_KEY, QUIET_KERNEL, describe_cell

from helpers import grading   # the clean process that the verdicts come from
from helpers.checks._core import COURSE_VERSIONS   # course functions that compute an exercise under another name
from helpers import progress  # which exercises are optional (in a "Going further" section)

ROOT = Path(__file__).resolve().parent.parent
RANK = {PASS: 0, FAIL: 1, NOT_ATTEMPTED: 2, NOT_RUN: 3, NOT_HANDED_IN: 4}   # two copies: the better counts
CELL_TIMEOUT, NOTEBOOK_TIMEOUT = 60, 600
# Seconds an interrupted kernel has to answer again before it is replaced (tests shorten it).
PROBE_TIMEOUT = float(os.environ.get("FFN_GRADE_PROBE_TIMEOUT", "10"))
SETUP_TIMEOUT = 120       # the grader's own first cell (it imports the checks) is not held to the cell limit
MAX_RESTARTS = 3          # kernels a notebook may use up (each death or stuck cell costs one)
TIMEOUT_ENAME = "TimeLimit"     # nbclient's reply for a cell past its limit (never stored)
# Marks a record the grader made itself (a check cell that killed or hung the kernel): no JSON line the kernel
# writes can carry it, so a line a learner's cell appends to the record file is never taken for one.
GRADER = object()
GRADER_ENAME = "GraderNote"     # the grader's own note in a cell it stopped or skipped



# ----------------------------------------------------------------------------------------------------------
# The course: what each lesson's solution says
# ----------------------------------------------------------------------------------------------------------
@dataclass
class Lesson:
    name: str                                    # "02_pure_python"
    checks: list[str]                            # check_matvec, ... in order
    course_cells: dict[str, set[str]]            # stripped source of each code cell -> checks it owns
    solutions: dict[str, str]                    # exercise -> its function's normalised syntax tree
    allowed: dict[str, set[str]]                 # exercise -> what from helpers the solution's function uses
    optional: list[str] = field(default_factory=list)   # checks in a "Going further" section
    title: str = ""                                     # the notebook's own title (its first # heading)
    distinctive: set[str] = field(default_factory=set)  # exercises whose solution an independent answer rarely
                                                        # matches: only there is "same code as solutions/" a flag


def normalised(source: str, name: str) -> str | None:
    """The syntax tree of function `name` in `source`, docstrings dropped (comments never reach it)."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            for inner in ast.walk(node):
                body = getattr(inner, "body", None)
                if (isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body
                        and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                        and isinstance(body[0].value.value, str)):
                    inner.body = body[1:] or [ast.Pass()]
            return ast.dump(node)
    return None


def _helpers_key(dotted: str) -> str:
    """The name the recorder gives a helpers object (module.qualname), found by importing it."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            obj = getattr(obj, attribute, None)
        if obj is None:
            return dotted
        if hasattr(obj, "__qualname__") and getattr(obj, "__module__", None):
            return f"{obj.__module__}.{obj.__qualname__}"
        return getattr(obj, "__name__", dotted) if cut == len(parts) else dotted
    return dotted


def _helpers_names(cells: list) -> dict[str, str]:
    """Names a notebook binds to helpers by its imports: local name -> dotted path."""
    names = {}
    for cell in cells:
        try:
            tree = ast.parse(cell.source)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "helpers":
                for alias in node.names:
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "helpers":
                        names[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else "helpers"
    return names


def _uses(function: ast.AST, names: dict[str, str]) -> set[str]:
    """What from helpers a function's syntax tree names, through the notebook's imports or its own."""
    used = set()
    local = dict(names)
    for node in ast.walk(function):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            local.update(_helpers_names([nbformat.v4.new_code_cell(ast.unparse(node))]))
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in local:
            used.add(f"{local[node.value.id]}.{node.attr}")
        if isinstance(node, ast.Name) and node.id in local:
            used.add(local[node.id])
    keys = {_helpers_key(u) for u in used}
    return keys | {k.rsplit(".", 1)[0] for k in keys if "." in k} | {u for u in used}


# The course's own versions of every exercise, by name: never allowed as "shown by the lesson".
REFERENCES = {name.removeprefix("check_") for name in import_module("helpers.checks").__all__} \
    | {version for versions in COURSE_VERSIONS.values() for version in versions}


def load_lesson(path: Path) -> Lesson:
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    checks, course_cells, solutions, allowed = [], {}, {}, {}
    names = _helpers_names(code)
    for cell in code:
        owned = CHECK_CALL.findall(cell.source)
        checks += [n for n in owned if n not in checks]
        course_cells.setdefault(cell.source.strip(), set()).update(owned)
    for check in checks:
        exercise = check.removeprefix("check_")
        for cell in code:
            if "### BEGIN SOLUTION" not in cell.source:
                continue
            tree = normalised(cell.source, exercise)
            if tree is not None:
                solutions[exercise] = tree
                function = next(n for n in ast.walk(ast.parse(cell.source))
                                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == exercise)
                allowed[exercise] = _uses(function, names)
                break
    # What the lesson itself shows from helpers (flat.row, flat.index, ...) a learner may use too; the course's
    # versions of the lesson's exercises stay flagged (the exercise is to write them).
    shown = set()
    for cell in code:
        try:
            shown |= _uses(ast.parse(cell.source), names)
        except (SyntaxError, ValueError):
            continue
    shown = {key for key in shown if key.rsplit(".", 1)[-1] not in REFERENCES and key.count(".") > 1
             and not key.startswith("helpers.checks")}
    shown |= {key.rsplit(".", 1)[0] for key in shown}
    allowed = {exercise: uses | shown for exercise, uses in allowed.items()}
    optional = [f"check_{item.id}" for item in progress.exercises(path) if item.optional]
    distinctive = {exercise for exercise, tree in solutions.items()
                   if is_distinctive(tree) and exercise not in SPELLED_OUT}
    heading = next((line[2:].strip() for c in nb.cells if c.cell_type == "markdown"
                    for line in c.source.splitlines() if line.startswith("# ")), "")
    title = re.sub(r"^Lesson \d+\s*[:·.-]\s*", "", heading)
    return Lesson(path.stem, checks, course_cells, solutions, allowed, optional, title=title, distinctive=distinctive)


# A solution of at least this many syntax-tree nodes (docstring left out) is distinctive: independent answers
# rarely share it node for node. Natural one-liners (relu_backward, count_ffn_params, a batched FFN) and answers
# that are numbers (hand_trace, detector) stay under it; tests/test_grade.py checks the course's banks of right
# answers against it.
COPY_MIN_NODES = 80
# ... except where the lesson spells the solution out, line for line, so that a learner who follows it writes the
# same tree: lesson 08's hint for ffn_backward lists its seven lines.
SPELLED_OUT = {"ffn_backward"}


def is_distinctive(tree: str) -> bool:
    """Whether a solution's normalised syntax tree (normalised()) is big, and not only numbers, so that an
    answer with the same tree was most likely copied."""
    node = eval(tree, vars(ast))                 # ast.dump's text is the expression that builds the tree
    nodes = list(ast.walk(node))
    numbers = sum(isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) for n in nodes)
    return len(nodes) >= COPY_MIN_NODES and numbers < len(nodes) / 4


def load_course(solutions: Path = ROOT / "solutions", lessons: list[str] | None = None) -> dict[str, Lesson]:
    """lesson stem -> Lesson, for every lesson in `solutions` (or those whose number or name is listed)."""
    course = {}
    for path in sorted(solutions.glob("*.ipynb")):
        if lessons and not any(path.stem == w or path.stem.split("_", 1)[0] == w for w in lessons):
            continue
        course[path.stem] = load_lesson(path)
    return course


def expected_exercises(solutions: Path = ROOT / "solutions") -> dict[str, list[str]]:
    """lesson stem -> the check names its solution calls, in order (check_hand_trace, ...)."""
    return {name: lesson.checks for name, lesson in load_course(solutions).items()}


# ----------------------------------------------------------------------------------------------------------
# Finding the learners and their lessons
# ----------------------------------------------------------------------------------------------------------
# A notebook directly in the submissions folder named <learner>_<NN_lesson>... or <learner>-<NN_lesson>...
FLAT_NAME = re.compile(r"^(?P<learner>.+?)[_-](?P<lesson>\d{2}_[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*)(?![A-Za-z0-9])")


def flat_learner(name: str) -> str | None:
    """The learner of a top-level notebook named like `alice_01_hand_trace.ipynb` (None for `bob.ipynb`)."""
    match = FLAT_NAME.match(Path(name).stem)
    return match.group("learner") if match else None


def find_submissions(folder: Path) -> dict[str, list[Path]]:
    """learner -> notebooks, by the rule in the module docstring (empty list: a folder with none)."""
    learners: dict[str, list[Path]] = {}
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            learners.setdefault(entry.name, []).extend(
                sorted(p for p in entry.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts))
        elif entry.suffix == ".ipynb":
            learners.setdefault(flat_learner(entry.name) or entry.stem, []).append(entry)
    return {learner: sorted(paths) for learner, paths in learners.items()}


def grouped_by_name(learners: dict[str, list[Path]], folder: Path) -> dict[str, list[str]]:
    """The learners whose top-level notebooks were grouped by their names: learner -> file names."""
    grouped = {learner: [p.name for p in paths if p.parent == folder and flat_learner(p.name) == learner]
               for learner, paths in learners.items()}
    return {learner: names for learner, names in grouped.items() if names}


def shard_of(learners: dict[str, list[Path]], shard: tuple[int, int] | None) -> dict[str, list[Path]]:
    """The learners of shard i of n: the k-th learner in alphabetical order (from 1) when (k-1) mod n == i-1."""
    if shard is None:
        return learners
    i, n = shard
    return {name: learners[name] for k, name in enumerate(sorted(learners)) if k % n == i - 1}


def parse_shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a shard is i/n, e.g. 2/4 (got {text!r})") from None
    if not 1 <= i <= n:
        raise argparse.ArgumentTypeError(f"shard {text}: i must be between 1 and n")
    return i, n


def lesson_of(path: Path, nb: nbformat.NotebookNode | None, expected: dict[str, list[str]]) -> str | None:
    """The lesson a notebook is: by its file name, its metadata, or else the checks it calls."""
    for lesson in sorted(expected, key=len, reverse=True):
        if lesson in path.name:
            return lesson
    if nb is None:
        return None
    source = Path(str(nb.metadata.get(META_KEY, {}).get("generated_from", ""))).stem
    if source in expected:
        return source
    called = {n for c in nb.cells if c.cell_type == "code" for n in CHECK_CALL.findall(c.source)}
    overlap = {lesson: len(called & set(checks)) for lesson, checks in expected.items()}
    best = max(overlap, key=overlap.get, default=None)
    return best if best and overlap[best] else None


# ----------------------------------------------------------------------------------------------------------
# Running one notebook
# ----------------------------------------------------------------------------------------------------------
class _Client(NotebookClient):
    """nbclient's client, remembering whether the cell it just ran hit its time limit."""
    timed_out = False

    async def _async_handle_timeout(self, timeout, cell=None):
        self.timed_out = True
        return await super()._async_handle_timeout(timeout, cell)


_QUIET = logging.getLogger("ffn.grade.kernel")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


def kernel_env() -> dict[str, str]:
    """The learner's kernel's environment: no grading switch and no secret (the hidden cases run in the clean
    process only), nbgrader's switch off, one BLAS thread each (several notebooks run at once) unless set."""
    env = dict(os.environ)
    for name in ("NBGRADER_EXECUTION", "NBGRADER_VALIDATING", "PYTEST_CURRENT_TEST", "FFN_GRADING",
                 grading.SECRET_ENV):
        env.pop(name, None)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(name, "1")
    return env


@dataclass
class Run:
    """What executing a notebook showed, cell by cell."""
    records: list[tuple[int, dict]] = field(default_factory=list)   # (cell index, a check call's record)
    interrupted: list[int] = field(default_factory=list)            # cells stopped at their time limit
    skipped: list[tuple[int, str]] = field(default_factory=list)    # cells skipped: (index, why)
    not_reached: int = 0                                            # cells never run (out of time/kernels)
    setup_error: str = ""
    out_of_time: bool = False
    closing_seconds: float = 0.0                                    # the grader's closing cell (the dump)


def _death_cause(client: NotebookClient, log: Path) -> str:
    code = None
    try:
        code = client.km.provisioner.process.poll()
    except Exception:
        pass
    lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()] \
        if log.exists() else []
    fatal = next((line for line in lines if line.startswith(("Fatal Python error", "MemoryError"))), "")
    if code is not None and code < 0:
        names = {9: "SIGKILL, often the system running out of memory", 11: "SIGSEGV, a segmentation fault",
                 6: "SIGABRT"}
        return f"killed by signal {-code}" + (f" ({names[-code]})" if -code in names else "")
    if code is not None:
        return f"exit code {code}" + (f": {fatal}" if fatal else "")
    return fatal or "no reason given"


class RecordFile:
    """The recorder's output, read as it grows: each read returns the calls recorded since the last one."""

    def __init__(self, path: Path):
        self.path, self.offset = path, 0

    def read(self) -> list[dict]:
        records, self.offset = grading.read_new(self.path, self.offset)   # a line being written waits
        return records


def run_notebook(nb: nbformat.NotebookNode, scratch: Path, cell_timeout: float, budget: float,
                 last: nbformat.NotebookNode | None = None) -> Run:
    """Execute nb (whose cell 0 is the recorder) cell by cell, by the rules in the module docstring: a cell
    past its time limit is interrupted; one that kills the kernel or will not stop is skipped, and a new
    kernel re-runs the cells before it (their records are dropped) and goes on after it."""
    run = Run()
    records = RecordFile(scratch / "verdicts.jsonl")
    log = scratch / "kernel-stderr.log"
    clock = {"deadline": None, "limit": cell_timeout}
    code_cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip()]
    skip: set[int] = set()
    start, kernels = 0, 0
    while True:
        kernels += 1
        go_on_from = _one_kernel(nb, code_cells, start, skip, clock, run, records, log, cell_timeout, budget,
                                 scratch, last)
        records.read()                           # whatever a dying kernel still wrote is not counted
        if go_on_from is None:
            return run
        if kernels > MAX_RESTARTS:
            run.not_reached = len([i for i in code_cells[go_on_from:] if i not in skip])
            return run
        start = go_on_from


def _one_kernel(nb, code_cells, start, skip, clock, run, records, log, cell_timeout, budget, scratch, last=None):
    """In a new kernel, re-run code_cells[:start] (not skipped) silently, then run the rest, then `last` (the
    grader's own closing cell, outside the notebook's clock). Returns the position a next kernel must go on
    from, or None when the notebook is done."""
    def time_left(cell) -> int:                 # the notebook's clock starts once its first kernel is up
        if clock["deadline"] is None:
            clock["deadline"] = time.monotonic() + budget
        return max(1, round(min(clock["limit"], clock["deadline"] - time.monotonic())))

    client = _Client(nb, kernel_name="python3", allow_errors=True, record_timing=False, startup_timeout=60,
                     store_widget_state=False, interrupt_on_timeout=True, timeout_func=time_left,
                     shutdown_kernel="immediate", log=_QUIET,
                     error_on_timeout={"ename": TIMEOUT_ENAME, "evalue": "", "traceback": []},
                     resources={"metadata": {"path": str(scratch)}}, extra_arguments=QUIET_KERNEL)
    replay = [i for i in code_cells[:start] if i not in skip]
    saved = {i: (nb.cells[i].get("outputs", []), nb.cells[i].get("execution_count")) for i in replay}
    with open(log, "a") as stderr:
        try:
            with client.setup_kernel(env=kernel_env(), stderr=stderr):
                for index in replay:
                    outcome, why = _execute(client, nb.cells[index], index, clock, cell_timeout, log)
                    if outcome in ("died", "stuck"):
                        skip.add(index)
                        run.skipped.append((index, f"{why} when the cells above it were re-run"))
                        return start
                records.read()                   # calls made while re-running were counted the first time
                for position in range(start, len(code_cells)):
                    index = code_cells[position]
                    if index in skip:
                        continue
                    if clock["deadline"] is not None and time.monotonic() >= clock["deadline"]:
                        run.out_of_time = True
                        run.not_reached = len([i for i in code_cells[position:] if i not in skip])
                        run.closing_seconds = _close(client, last, clock)
                        return None
                    cell = nb.cells[index]
                    outcome, why = _execute(client, cell, index, clock, cell_timeout, log)
                    new = records.read()
                    run.records += [(index, r) for r in new]
                    if outcome == "interrupted":
                        run.interrupted.append(index)
                    elif outcome in ("died", "stuck"):
                        status = "crashed" if outcome == "died" else "interrupted"
                        run.records += [(index, {"check": c, "status": status, "by": GRADER})
                                        for c in CHECK_CALL.findall(cell.source)
                                        if not any(r.get("check") == c for r in new)]
                        skip.add(index)
                        run.skipped.append((index, why))
                        return position + 1
                run.closing_seconds = _close(client, last, clock)
                return None
        except Exception as error:               # the kernel would not start, or nbclient itself failed
            run.setup_error = f"{type(error).__name__}: {str(error)[:160]}"
            return None
        finally:
            for i, (outputs, count) in saved.items():   # a re-run cell shows its first run's outputs
                nb.cells[i].outputs, nb.cells[i].execution_count = outputs, count


def _close(client: "_Client", cell: nbformat.NotebookNode | None, clock: dict) -> float:
    """Run the grader's closing cell (helpers.grading.dump) in the kernel, with its own time limit; its seconds."""
    if cell is None:
        return 0.0
    started = time.monotonic()
    clock["deadline"], clock["limit"] = None, SETUP_TIMEOUT
    client.timed_out = False
    try:
        client.execute_cell(cell, 0, store_history=False)
    except Exception:                            # no dump: the notebook's exercises are not run
        pass
    return time.monotonic() - started


def _execute(client: "_Client", cell, index: int, clock: dict, cell_timeout: float, log: Path) -> tuple[str, str]:
    """Run one cell: ("ok" | "interrupted" | "stuck" | "died", why)."""
    clock["limit"] = max(cell_timeout, SETUP_TIMEOUT) if index == 0 else cell_timeout
    client.timed_out = False
    try:
        client.execute_cell(cell, index, store_history=True)
    except DeadKernelError:
        why = f"the kernel died ({_death_cause(client, log)})"
        cell.outputs = list(cell.get("outputs", [])) + [_grader_error(f"{why}; the grader skipped this cell")]
        return "died", why
    if not client.timed_out:
        return "ok", ""
    cell.outputs = list(cell.get("outputs", [])) + [
        _grader_error(f"stopped after {clock['limit']:g} s, this cell's time limit")]
    if _probe(client, clock):
        return "interrupted", f"ran past {clock['limit']:g} s and was interrupted"
    return "stuck", f"ran past {clock['limit']:g} s and did not stop when interrupted"


def _probe(client: _Client, clock: dict) -> bool:
    """After an interrupt: does the kernel answer again within PROBE_TIMEOUT seconds?"""
    limit, client.interrupt_on_timeout, client.timed_out = clock["limit"], False, False
    clock["limit"] = PROBE_TIMEOUT
    try:
        client.execute_cell(nbformat.v4.new_code_cell("pass"), 0, store_history=False)
        return not client.timed_out
    except (CellTimeoutError, DeadKernelError):
        return False
    finally:
        clock["limit"], client.interrupt_on_timeout, client.timed_out = limit, True, False


def _grader_error(message: str) -> nbformat.NotebookNode:
    """The note the grader leaves in a cell it stopped or skipped (the executed copy shows it)."""
    return nbformat.v4.new_output("error", ename=GRADER_ENAME, evalue=message, traceback=[f"[grader] {message}"])


# ----------------------------------------------------------------------------------------------------------
# Grading one notebook
# ----------------------------------------------------------------------------------------------------------
@dataclass
class Result:
    """What grading one notebook found."""
    learner: str
    path: str                                    # as shown in the notes: relative to the learner's folder
    lesson: str | None = None
    attempts: dict[str, dict] = field(default_factory=dict)   # check name -> the call that counts
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    clean_seconds: float = 0.0                   # of which the clean process's, with the closing cell


def counts(lesson: Lesson | None, source: str, check: str) -> bool:
    """Whether a call of `check` from a cell with `source` is the learner's: any cell but the course's own
    cells other than that exercise's check cell."""
    if lesson is None:
        return True
    owned = lesson.course_cells.get(source.strip())
    return owned is None or check in owned


def _error_note(cells: list, index: int, exercises: set[str], output: dict) -> str:
    message = str(output.get("evalue", "")).strip().splitlines()
    text = f"{output.get('ename')}" + (f": {message[0][:160]}" if message and message[0] else "")
    return f"{describe_cell(cells, index, exercises)} raised {text}"


def grade_notebook(learner: str, path: Path, submissions: Path, out: Path, course: dict[str, Lesson],
                   cell_timeout: float = CELL_TIMEOUT, timeout: float = NOTEBOOK_TIMEOUT,
                   known: dict[str, list[str]] | None = None, secret: str | None = None) -> Result:
    """Execute one notebook between the grader's own cells, then check its exercises in a clean process (see
    the module docstring); never raises.
    `course` holds the lessons graded; `known`, every lesson of the course (to recognise the others)."""
    secret = secret or grading.new_secret()
    relative = path.relative_to(submissions)
    result = Result(learner, str(Path(*relative.parts[1:]) if len(relative.parts) > 1 else relative))
    started = time.monotonic()
    expected = known or {name: lesson.checks for name, lesson in course.items()}
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as error:                   # not JSON (a truncated file), or JSON that is no notebook
        result.lesson = lesson_of(path, None, expected)
        message = " ".join(str(error).split()) or type(error).__name__
        result.problems.append(f"not a valid notebook ({message[:120]})")
        return result
    result.lesson = lesson_of(path, nb, expected)
    if result.lesson is None:
        result.problems.append("could not tell which lesson this is (name it like notebooks/NN_name.ipynb)")
        return result
    if result.lesson not in course:
        result.problems.append(f"not graded: lesson {result.lesson} is not among the lessons set")
        result.lesson = None
        return result
    lesson = course[result.lesson]
    for cell in nb.cells:                        # the learner's saved outputs must not pass for this run's
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    with tempfile.TemporaryDirectory(prefix="ffn-grade-") as scratch:
        record, dumped = Path(scratch) / "verdicts.jsonl", Path(scratch) / "functions.pkl"
        nb.cells.insert(0, nbformat.v4.new_code_cell(grading.setup_source(str(record))))
        closing = nbformat.v4.new_code_cell(grading.dump_source(str(dumped), lesson.checks))
        run = run_notebook(nb, Path(scratch), cell_timeout, timeout, last=closing)
        setup = nb.cells.pop(0)
        cells = nb.cells
        exercises = set(nb.metadata.get(META_KEY, {}).get("exercise_cells", []))
        if run.setup_error:
            result.problems.append(f"could not run: {run.setup_error}")
        for output in setup.get("outputs", []) + closing.get("outputs", []):
            if output.get("output_type") == "error":
                result.problems.append(f"the grader's own cell failed: {output.get('ename')}: {output.get('evalue')}")

        # In the order the calls were made, the last one counts: the last check of the learner's own function
        # (named like the exercise, defined by the learner). A check of another function (an experiment, or the
        # course's reference) counts only when the exercise's own function was never checked, with a note.
        own, other = {}, {}
        for index, entry in run.records:
            check = entry.get("check", "")
            if check in lesson.checks and counts(lesson, cells[index - 1].source, check):
                (own if entry.get("own", True) else other)[check] = (index - 1, entry)
        for check, (index, entry) in other.items():
            if check not in own:
                own[check] = (index, entry)
                exercise = check.removeprefix("check_")
                result.problems.append(f"{check} was only ever given `{entry.get('fn') or '?'}`, not the learner's "
                                       f"own `{exercise}`: that function is graded")
        # The verdict that counts: the function of that call, checked again in a clean process.
        findings = grading.read_findings(dumped)
        plan = {check: entry["call"] for check, (_, entry) in own.items() if "call" in entry}
        clean_started = time.monotonic()
        clean = grading.grade_clean(dumped, plan, secret, timeout=cell_timeout) if plan and findings is not None \
            else {}
        result.clean_seconds = time.monotonic() - clean_started + run.closing_seconds
    if findings is None and own:
        result.problems.append("the notebook never reached the grader's closing cell, so no exercise could be "
                               "checked in a clean process")
    learner_cells = [c.source for c in cells if c.cell_type == "code" and c.source.strip()
                     and c.source.strip() not in lesson.course_cells]
    tampering = grading.tampering(learner_cells, findings, clean)
    if tampering:
        result.problems.append(f"{grading.TAMPERED}: " + "; ".join(tampering) + " (the grades come from a clean run "
                               "of the course's checks, which these changes do not reach)")
    for check, (index, entry) in own.items():
        if findings is None and "call" in entry:
            continue                                 # nothing to grade it with: not run
        attempt = _attempt(entry, clean.get(check), lesson, cell_timeout, tampering)
        result.attempts[check] = attempt
        if check in clean and 0 <= index < len(cells):
            cells[index].outputs = [nbformat.v4.new_output(
                "stream", name="stdout", text="[grader] checked again in a clean process, with fresh hidden "
                f"cases; this counts:\n{clean[check].get('report') or attempt['mistake']}\n")]

    for check in lesson.checks:                  # a check the learner's notebook never let run: flagged too
        if check not in result.attempts and tampering:
            result.attempts[check] = {"verdict": NOT_RUN, "passed": None, "total": None, "score": 0.0,
                                      "mistake": "", "detail": "", "named": False,
                                      "flags": [f"{grading.TAMPERED}: " + "; ".join(tampering[:3])]}
    for index in run.interrupted:
        result.problems.append(f"{describe_cell(cells, index - 1, exercises)} ran past {cell_timeout:g} s and "
                               "was interrupted; the cells after it still ran")
    for index, why in run.skipped:
        result.problems.append(f"{describe_cell(cells, index - 1, exercises)}: {why}; "
                               "the grader skipped it and ran the rest")
    if run.out_of_time:
        result.problems.append(f"the notebook used up its {timeout:g} s: {run.not_reached} cell(s) did not run")
    elif run.not_reached:
        result.problems.append(f"{run.not_reached} cell(s) did not run (the kernel kept dying)")
    errors = [(i, o) for i, c in enumerate(cells) for o in c.get("outputs", [])
              if o.get("output_type") == "error" and o.get("ename") not in (GRADER_ENAME, "KeyboardInterrupt")]
    if errors:
        first, output = errors[0]
        later = len({i for i, _ in errors[1:] if i != first})
        rebound = [t.split()[-1] for t in tampering if t.startswith(("rebinds check_", "redefines check_"))]
        rebound = [name for name in rebound if name in cells[first].source]
        note = _error_note(cells, first, exercises, output)
        if rebound:
            note = (f"{describe_cell(cells, first, exercises)} failed because the notebook redefines `{rebound[0]}` "
                    f"({output.get('ename')}); the exercise is graded by the course's own check in a clean run")
        result.problems.append(note
                               + (f" (and {later} later cell(s) raised errors, probably because of it)"
                                  if later else ""))
    copy = out / learner / result.path
    copy.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, copy)
    result.seconds = time.monotonic() - started
    return result


def _attempt(entry: dict, clean: dict | None, lesson: Lesson, cell_timeout: float,
             tampering: list[str] = ()) -> dict:
    """The exercise's verdict: the clean process's check of the function of the call that counts (`clean`), or,
    where the kernel died or hung in that call, what the kernel's record says. Flags beside it."""
    exercise = entry["check"].removeprefix("check_")
    if clean is None and entry.get("by") is not GRADER:
        # A record with no clean check behind it: the kernel's word alone, which the learner's code can write.
        entry = {**entry, "status": NOT_RUN, "passed": None, "total": None, "mistake": "", "detail": ""}
    source = clean or entry
    status = source.get("status")
    passed, total = source.get("passed"), source.get("total")
    mistake, detail = str(source.get("mistake") or ""), str(source.get("detail") or "")
    named = status == FAIL and not (clean or {}).get("timed_out")   # else the grader says what happened
    if status == "interrupted":
        status, mistake, named = FAIL, f"did not finish within {cell_timeout:g} s: an endless loop?", False
    elif status == "crashed":
        status, mistake, named = FAIL, "the kernel died while it was checked", False
    elif status == "error":
        status, mistake, named = FAIL, f"the check stopped: {entry.get('error', 'an error')}", False
    elif status not in (PASS, FAIL, NOT_ATTEMPTED, NOT_RUN):
        status = FAIL
    if status == PASS:
        score = 1.0
    else:
        score = passed / total if status == FAIL and isinstance(passed, int) and total else 0.0
    flags = []
    if clean and grading.no_fresh_case_passed(clean):
        score = 0.0                              # the public cases earn nothing either (a table passes them)
        if grading.memorised(clean):
            hidden = clean["hidden"]
            flags.append(f"{grading.MEMORISED}: passes {passed} of the {(total or 0) - hidden} public cases and "
                         f"none of the {hidden} fresh hidden ones")
    if entry.get("wrapped"):
        flags.append(f"the course's reference, wrapped ({entry['wrapped']}), handed in as the answer")
    if tampering:
        flags.append(f"{grading.TAMPERED}: " + "; ".join(tampering[:3]) + ("; ..." if len(tampering) > 3 else ""))
    # What from helpers the function names (read in the kernel) or ran (seen in the clean process).
    source_code = entry.get("source") or ""
    helpers = set(entry.get("helpers") or []) | set((clean or {}).get("used") or [])
    helpers |= {name.rsplit(".", 1)[0] for name in helpers if name.count(".") > 1}
    # The course's own function handed to the check is refused, a fail whose mistake says so: no flag as well
    # (after a syntax error in the exercise cell, "uses helpers.ffn.gelu" would read like copying).
    if status not in (NOT_ATTEMPTED, NOT_RUN) and not (status == FAIL and entry.get("course")):
        learner_tree = normalised(source_code, entry.get("fn") or exercise) if source_code else None
        if learner_tree is not None and learner_tree == lesson.solutions.get(exercise) \
                and exercise in lesson.distinctive:
            flags.append("same code as solutions/")
        if not source_code and callable_entry(entry):
            flags.append("no source in the notebook: made with exec, or copied at run time")
        extra = sorted(set(helpers) - lesson.allowed.get(exercise, set()))
        extra = [e for e in extra if not any(other.startswith(e + ".") for other in extra)]  # the most specific
        if extra:
            flags.append("uses " + ", ".join(extra) + " (the solution does not)")
    return {"verdict": status, "passed": passed if isinstance(passed, int) else None,
            "total": total if isinstance(total, int) else None, "score": round(score, 4),
            "mistake": mistake if status == FAIL else "", "detail": detail if status == FAIL else "",
            "named": named and bool(mistake), "flags": flags}


def callable_entry(entry: dict) -> bool:
    """Whether a record describes a function the kernel described (a record the grader made itself has none)."""
    return "fn" in entry and entry.get("by") is not GRADER


def _grade_task(args) -> Result:
    return grade_notebook(*args)


# ----------------------------------------------------------------------------------------------------------
# The class: rows, files, report
# ----------------------------------------------------------------------------------------------------------
class Progress:
    """A progress bar on stderr: redrawn in place on a terminal, a line every 10 % elsewhere (CI logs)."""

    def __init__(self, total: int, stream=None, enabled: bool = True):
        self.total, self.done, self.started = total, 0, time.monotonic()
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = self.enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.last_tenth = 0

    def step(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.started
        each = elapsed / self.done
        left = each * (self.total - self.done)
        width = 30
        bar = "#" * round(width * self.done / self.total)
        text = (f"grading [{bar:<{width}}] {self.done}/{self.total} notebooks, {each:.1f} s each, "
                + (f"about {_duration(left)} left" if self.done < self.total else f"done in {_duration(elapsed)}"))
        if self.tty:
            self.stream.write("\r" + text + ("\n" if self.done == self.total else ""))
        elif self.done * 10 // self.total > self.last_tenth:
            self.last_tenth = self.done * 10 // self.total
            self.stream.write(text + "\n")
        self.stream.flush()


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def build_model(course: dict[str, Lesson], learners: dict[str, list[Path]], results: list[Result],
                settings: dict) -> dict:
    """The class's grades as plain data (what grades.json holds and `merge` combines)."""
    columns = [column(name, check) for name, lesson in course.items() for check in lesson.checks]
    model = {"format": FORMAT, "lessons": {name: lesson.checks for name, lesson in course.items()},
             "titles": {name: lesson.title for name, lesson in course.items()},
             "optional": [column(name, c) for name, lesson in course.items() for c in lesson.optional],
             "settings": settings, "learners": {}, "notebooks": len(results),
             "seconds": round(sum(r.seconds for r in results), 1),
             "clean_seconds": round(sum(r.clean_seconds for r in results), 1)}
    for learner, paths in learners.items():
        mine = [r for r in results if r.learner == learner]
        exercises = {c: {"verdict": NOT_HANDED_IN, "passed": None, "total": None, "score": 0.0, "mistake": "",
                         "flags": [], "notebook": ""} for c in columns}
        notes = [] if paths else ["no notebooks found"]
        handed_in = set()
        per_lesson: dict[str, int] = {}
        for r in mine:
            notes += [f"{r.path}: {p}" for p in r.problems]
            if r.lesson is None or r.lesson not in course:
                continue
            handed_in.add(r.lesson)
            per_lesson[r.lesson] = per_lesson.get(r.lesson, 0) + 1
            for check in course[r.lesson].checks:
                key = column(r.lesson, check)
                attempt = r.attempts.get(check) or {"verdict": NOT_RUN, "passed": None, "total": None,
                                                    "score": 0.0, "mistake": "", "flags": []}
                current = exercises[key]
                if (RANK[attempt["verdict"]], -attempt["score"]) < (RANK[current["verdict"]], -current["score"]):
                    exercises[key] = {**attempt, "notebook": r.path}
        notes += [f"{count} notebooks for lesson {lesson}: each exercise's better verdict counts"
                  for lesson, count in sorted(per_lesson.items()) if count > 1]
        model["learners"][learner] = {"exercises": exercises, "notes": notes, "handed_in": sorted(handed_in)}
    return model


def grade(submissions: Path, out: Path, cell_timeout: float = CELL_TIMEOUT, timeout: float = NOTEBOOK_TIMEOUT,
          jobs: int = 1, solutions: Path = ROOT / "solutions", shard: tuple[int, int] | None = None,
          lessons: list[str] | None = None, progress: bool = True):
    """Grade the notebooks in `submissions` (or one shard of its learners); write the files to `out`.

    Returns grades.csv's header, its rows and the summary text.
    """
    known = load_course(solutions)
    course = load_course(solutions, lessons)
    if not course:
        raise SystemExit(f"No lessons {' '.join(lessons or [])} in {solutions}")
    learners = shard_of(find_submissions(submissions), shard)
    out.mkdir(parents=True, exist_ok=True)
    secret = grading.new_secret()                # one per run (or the instructor's FFN_GRADING_SEED)
    tasks = [(learner, path, submissions, out, course, cell_timeout, timeout,
              {name: lesson.checks for name, lesson in known.items()}, secret)
             for learner, paths in learners.items() for path in paths]
    bar = Progress(len(tasks), enabled=progress)
    results = []
    if jobs > 1 and len(tasks) > 1:
        # spawn, not fork: forking a process that already runs threads (Jupyter's clients) can deadlock
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            for future in as_completed([pool.submit(_grade_task, task) for task in tasks]):
                results.append(future.result())
                bar.step()
    else:
        for task in tasks:
            results.append(_grade_task(task))
            bar.step()
    settings = {"submissions": str(submissions), "cell_timeout": cell_timeout, "timeout": timeout,
                "shard": list(shard) if shard else None, "jobs": jobs,
                "grouped": grouped_by_name(learners, submissions),
                "hidden cases": f"drawn from {'the instructor' + chr(39) + 's' if os.environ.get(grading.SECRET_ENV) else 'a new'}"
                                f" secret (id {grading.secret_id(secret)})"}
    return write_outputs(build_model(course, learners, results, settings), out)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["merge"]:
        parser = argparse.ArgumentParser(prog="grade.py merge", description="Combine shards' grades into one set.")
        parser.add_argument("folders", type=Path, nargs="+", help="the shards' --out folders")
        parser.add_argument("--out", type=Path, default=ROOT / "grades", help="where to write (default: grades/)")
        args = parser.parse_args(argv[1:])
        readable = [f for f in args.folders if (f / "grades.json").exists()]
        if not readable:
            print(f"No grades.json in {', '.join(map(str, args.folders))}", file=sys.stderr)
            return 2
        model = merged_model(readable, [f for f in args.folders if f not in readable])
        _, _, summary = write_outputs(model, args.out)
        print(summary, end="")
        problems = merge_problems(model["settings"])
        for problem in problems:              # on stderr too, and a failing status, so that CI notices
            print(f"grade.py merge: incomplete: {problem} (what could be merged is in {args.out})",
                  file=sys.stderr)
        return 1 if problems else 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path, help="folder of learners' notebooks")
    parser.add_argument("--out", type=Path, default=ROOT / "grades", help="where to write (default: grades/)")
    parser.add_argument("--cell-timeout", type=float, default=CELL_TIMEOUT,
                        help=f"seconds per cell before it is interrupted (default: {CELL_TIMEOUT})")
    parser.add_argument("--timeout", type=float, default=NOTEBOOK_TIMEOUT,
                        help=f"seconds per notebook in all (default: {NOTEBOOK_TIMEOUT})")
    parser.add_argument("--jobs", type=int, default=1, help="notebooks graded at once (default: 1)")
    parser.add_argument("--shard", type=parse_shard, help="grade only shard i of n of the learners, e.g. 2/4")
    parser.add_argument("--lessons", nargs="*", help="the lessons set, by number or name (default: all)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--solutions", type=Path, default=ROOT / "solutions", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        print(f"No such folder: {args.submissions}", file=sys.stderr)
        return 2
    _, _, summary = grade(args.submissions, args.out, args.cell_timeout, args.timeout, args.jobs,
                          solutions=args.solutions, shard=args.shard, lessons=args.lessons,
                          progress=not args.quiet)
    print(summary, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
