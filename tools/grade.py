"""Grade a folder of learners' notebooks: `make grade SUBMISSIONS=path/` (or `python tools/grade.py path/`).

Who is who: each subfolder of SUBMISSIONS is one learner (named after the folder) and holds that learner's
notebooks, named as in notebooks/ (`alice/01_hand_trace.ipynb`, `alice/02_pure_python.ipynb`, ...). A
notebook directly in SUBMISSIONS is a learner of its own, named after the file (`bob.ipynb`). Which lesson
a notebook is comes from its file name (`01_hand_trace` in it) or, failing that, from the metadata that
`make notebooks` writes into every learner copy.

What runs: every notebook is executed top to bottom in a fresh kernel of this environment, in a scratch
folder, with a time limit for all its cells together (--timeout, default 120 s; starting the kernel has a
minute of its own). A cell that raises does not stop
the run (it is noted and later cells still run). Before the learner's first cell the grader wraps every
`check_<exercise>` in helpers.checks so that each call records its True/False verdict: the verdicts are the
checks' own, recorded however the learner's notebook calls them. The exercises expected of a lesson are the
lines that start with `check_<exercise>(` in solutions/<lesson>.ipynb; an exercise's verdict is that of the
first call from such a line (a later `ok = check_x(buggy)` demonstration does not count), or else the first
call at all. A notebook whose name and metadata do not say its lesson is matched by the checks it calls.

What it writes (into --out, default grades/, git-ignored):
    grades.csv      one row per learner; one column per exercise: pass, fail, or "not run" (the check never
                    ran: the cell was deleted, or the notebook crashed or timed out first); empty where the
                    learner handed in no notebook for that lesson; then passed/total and notes
    summary.txt     pass counts per exercise and every learner whose notebook had a problem (also printed)
    LEARNER/NAME    the executed copy of each notebook, to look at what went wrong
A notebook that is not valid JSON, crashes its kernel or runs out of time gets its reason in the notes and
does not stop the batch. Learners' code runs with your permissions: grade work from people you trust, or
run this inside a container.
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import tempfile
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from notebooks import CHECK_CALL, QUIET_KERNEL  # tools/notebooks.py: a check call; a quiet kernel

ROOT = Path(__file__).resolve().parent.parent
PASS, FAIL, NOT_RUN, ABSENT = "pass", "fail", "not run", ""

# Runs before the learner's first cell: every check records its verdict, one JSON line per call.
RECORDER = '''\
def _ffn_grading_setup(record_path):
    import functools, json, re
    from importlib import import_module
    import helpers.checks as checks
    cell = {"source": ""}
    get_ipython().events.register("pre_run_cell", lambda info: cell.update(source=info.raw_cell))
    def recording(name, check):
        @functools.wraps(check)
        def recorded(*args, **kwargs):
            verdict = False
            try:
                verdict = check(*args, **kwargs)
                return verdict
            finally:
                own = re.search(rf"^\\s*{name}\\(", cell["source"], re.MULTILINE) is not None
                with open(record_path, "a") as record:
                    record.write(json.dumps({"check": name, "passed": bool(verdict), "own_cell": own}) + "\\n")
        return recorded
    for module_name in checks.LESSON_MODULES:
        module = import_module(f"helpers.checks.{module_name}")
        for name in module.__all__:
            if name.startswith("check_"):
                wrapped = recording(name, getattr(module, name))
                setattr(module, name, wrapped)
                setattr(checks, name, wrapped)
_ffn_grading_setup(RECORD_PATH)
del _ffn_grading_setup
'''


def expected_exercises(solutions: Path = ROOT / "solutions") -> dict[str, list[str]]:
    """lesson stem -> the check names its solution calls, in order (check_hand_trace, ...)."""
    lessons = {}
    for path in sorted(solutions.glob("*.ipynb")):
        names = []
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                names += [n for n in CHECK_CALL.findall(cell.source) if n not in names]
        lessons[path.stem] = names
    return lessons


def column(lesson: str, check: str) -> str:
    """CSV column of an exercise: '01:hand_trace' for check_hand_trace in 01_hand_trace."""
    return f"{lesson.split('_', 1)[0]}:{check.removeprefix('check_')}"


@dataclass
class Result:
    """What grading one notebook found."""
    learner: str
    path: str                                   # as shown in the notes: relative to the learner's folder
    lesson: str | None = None
    verdicts: dict[str, bool] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


def find_submissions(folder: Path) -> dict[str, list[Path]]:
    """learner -> notebooks, by the rule in the module docstring (empty list: a folder with none)."""
    learners: dict[str, list[Path]] = {}
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            learners[entry.name] = sorted(p for p in entry.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        elif entry.suffix == ".ipynb":
            learners.setdefault(entry.stem, []).append(entry)
    return learners


def lesson_of(path: Path, nb: nbformat.NotebookNode | None, expected: dict[str, list[str]]) -> str | None:
    """The lesson a notebook is: by its file name, its metadata, or else the checks it calls."""
    for lesson in sorted(expected, key=len, reverse=True):
        if lesson in path.name:
            return lesson
    if nb is None:
        return None
    source = Path(str(nb.metadata.get("ffn_course", {}).get("generated_from", ""))).stem
    if source in expected:
        return source
    called = {n for c in nb.cells if c.cell_type == "code" for n in CHECK_CALL.findall(c.source)}
    overlap = {lesson: len(called & set(checks)) for lesson, checks in expected.items()}
    best = max(overlap, key=overlap.get, default=None)
    return best if best and overlap[best] else None


def _first_line(cell) -> str:
    """A cell's first line of code, to say which cell a note is about (Jupyter shows no cell numbers)."""
    lines = [line.strip() for line in cell.get("source", "").splitlines() if line.strip()]
    first = lines[0] if lines else "(empty)"
    return first if len(first) <= 50 else first[:47] + "..."


def grade_notebook(learner: str, path: Path, submissions: Path, out: Path, expected: dict[str, list[str]],
                   timeout: float) -> Result:
    """Execute one notebook with the recorder in front; never raises."""
    relative = path.relative_to(submissions)
    result = Result(learner, str(Path(*relative.parts[1:]) if len(relative.parts) > 1 else relative))
    started = time.monotonic()
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as error:                   # not JSON, or JSON that is no notebook
        result.lesson = lesson_of(path, None, expected)
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        result.problems.append(f"not a valid notebook ({message[:160]})")
        return result
    result.lesson = lesson_of(path, nb, expected)
    for cell in nb.cells:                        # the learner's saved outputs must not pass for this run's
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    if result.lesson is None:
        result.problems.append("could not tell which lesson this is (name it like notebooks/NN_name.ipynb)")
    with tempfile.TemporaryDirectory(prefix="ffn-grade-") as scratch:
        record = Path(scratch) / "verdicts.jsonl"
        nb.cells.insert(0, nbformat.v4.new_code_cell(RECORDER.replace("RECORD_PATH", repr(str(record)))))
        running = {"cell": 0, "deadline": None}  # the cell being run (0 is the recorder); when time is up

        def time_left(cell) -> int:              # the clock starts with the first cell, once the kernel is up
            if running["deadline"] is None:
                running["deadline"] = time.monotonic() + timeout
            return max(1, round(running["deadline"] - time.monotonic()))

        client = NotebookClient(nb, kernel_name="python3", allow_errors=True, record_timing=False,
                                startup_timeout=60, store_widget_state=False, timeout_func=time_left,
                                on_cell_start=lambda cell, cell_index: running.update(cell=cell_index),
                                resources={"metadata": {"path": scratch}}, extra_arguments=QUIET_KERNEL)
        try:
            client.execute()
        except CellTimeoutError:
            result.problems.append(f"timed out after {timeout:g} s (in cell {running['cell']}: "
                                   f"{_first_line(nb.cells[running['cell']])})")
            nb.cells[running["cell"]].outputs = [o for o in nb.cells[running["cell"]].get("outputs", [])
                                                 if o.get("ename") != "KeyboardInterrupt"]  # from the stop
        except DeadKernelError:
            result.problems.append(f"the kernel died (in cell {running['cell']}: "
                                   f"{_first_line(nb.cells[running['cell']])})")
        except Exception as error:
            result.problems.append(f"could not run: {type(error).__name__}: {str(error)[:160]}")
        calls = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
        for call in sorted(calls, key=lambda c: not c["own_cell"]):   # stable: own-cell calls first, in order
            result.verdicts.setdefault(call["check"], call["passed"])
    setup = nb.cells.pop(0)
    for output in setup.get("outputs", []):
        if output.get("output_type") == "error":
            result.problems.append(f"the grader's setup failed: {output.get('ename')}: {output.get('evalue')}")
    for number, cell in enumerate(nb.cells, start=1):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                result.problems.append(f"cell {number} ({_first_line(cell)}) raised {output.get('ename')}")
    copy = out / learner / result.path
    copy.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, copy)
    result.seconds = time.monotonic() - started
    return result


def _grade_task(args) -> Result:
    return grade_notebook(*args)


def grade(submissions: Path, out: Path, timeout: float = 120, jobs: int = 1,
          solutions: Path = ROOT / "solutions") -> tuple[list[str], list[dict[str, str]], str]:
    """Grade every notebook in `submissions`; write grades.csv and summary.txt to `out`.

    Returns the CSV's columns, its rows and the summary text.
    """
    expected = expected_exercises(solutions)
    learners = find_submissions(submissions)
    out.mkdir(parents=True, exist_ok=True)
    tasks = [(learner, path, submissions, out, expected, timeout)
             for learner, paths in learners.items() for path in paths]
    if jobs > 1 and len(tasks) > 1:
        # spawn, not fork: forking a process that already runs threads (Jupyter's clients) can deadlock
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(_grade_task, tasks))
    else:
        results = [_grade_task(task) for task in tasks]

    lessons = sorted({r.lesson for r in results if r.lesson})
    columns = [column(lesson, check) for lesson in lessons for check in expected[lesson]]
    header = ["learner", *columns, "passed", "total", "notes"]
    rows = []
    for learner, paths in learners.items():
        mine = [r for r in results if r.learner == learner]
        row = {name: ABSENT for name in columns}
        notes = [] if paths else ["no notebooks found"]
        for r in mine:
            notes += [f"{r.path}: {p}" for p in r.problems]
            if r.lesson is None:
                continue
            for check in expected[r.lesson]:
                key = column(r.lesson, check)
                verdict = PASS if r.verdicts.get(check) else FAIL if check in r.verdicts else NOT_RUN
                if row[key] != PASS:                        # two copies of one lesson: the better counts
                    row[key] = verdict
        submitted = [key for key in columns if row[key] != ABSENT]
        row.update(learner=learner, passed=str(sum(row[k] == PASS for k in submitted)),
                   total=str(len(submitted)), notes="; ".join(notes))
        rows.append(row)

    with open(out / "grades.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    summary = _summary(rows, columns, results, submissions, out, timeout)
    (out / "summary.txt").write_text(summary)
    return header, rows, summary


def _summary(rows, columns, results, submissions, out, timeout) -> str:
    lines = [f"Graded {len(rows)} learner(s), {len(results)} notebook(s) from {submissions} "
             f"(time limit {timeout:g} s per notebook). CSV: {out / 'grades.csv'}", ""]
    if columns:
        width = max(len(c) for c in columns)
        lines.append(f"{'exercise':<{width}}  passed")
        for name in columns:
            handed_in = [r for r in rows if r[name] != ABSENT]
            passed = sum(r[name] == PASS for r in handed_in)
            lines.append(f"{name:<{width}}  {passed} of {len(handed_in)}")
        lines.append("")
    problems = [(r["learner"], r["notes"]) for r in rows if r["notes"]]
    lines.append(f"Learners with a problem to look at: {len(problems)}")
    lines += [f"  {learner}: {notes}" for learner, notes in problems]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path, help="folder of learners' notebooks")
    parser.add_argument("--out", type=Path, default=ROOT / "grades", help="where to write (default: grades/)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per notebook (default: 120)")
    parser.add_argument("--jobs", type=int, default=1, help="notebooks graded at once (default: 1)")
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        print(f"No such folder: {args.submissions}", file=sys.stderr)
        return 2
    _, _, summary = grade(args.submissions, args.out, args.timeout, args.jobs)
    print(summary, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
