"""Write the learner's notebooks/ from solutions/, the single source.

    python tools/notebooks.py generate [--force] [--rerun] [NAME ...]
                                                             write notebooks/NAME from solutions/NAME, executed
    python tools/notebooks.py execute [NAME ...]             re-execute solutions/NAME in place (stored outputs)
    python tools/notebooks.py check                          exit 1 when notebooks/ is stale
    python tools/notebooks.py metadata [NAME ...]            (re)write the nbgrader metadata only, no execution
    python tools/notebooks.py quizzes                        refresh the stored output of each lesson's quiz cell
                                                             (after an edit of helpers/quizzes/), no execution

In a solution notebook, exercise code sits between `### BEGIN SOLUTION` and `### END SOLUTION` inside a
function body. The learner's copy replaces each such block with a stub that raises NotImplementedError, so
"Run All" still reaches the last cell (every check catches it and says "not implemented yet").

Every learner copy records a hash of each cell's source in its metadata. `generate` compares a notebook
already in notebooks/ against those hashes before overwriting it: if a learner edited, added or deleted a
cell, it refuses and names the cells (by exercise title or first line); with --force it first copies the
learner's file to backups/. A learner copy whose cells already match its solution is left as it is, so that
re-running `generate` does not rewrite (and re-time) unchanged lessons; name a notebook, or pass --rerun, to
re-execute it anyway (after a change to helpers/ that alters its printed output).

The conventions card, solutions/conventions.md, is copied to notebooks/ beside the lessons that link to it.

nbgrader metadata is derived from each notebook's structure, never written by hand (see nbgrader_metadata):
`execute` and `generate` apply it to solutions/ and to the learner copies, `metadata` applies it without
executing anything, and tests/test_nbgrader.py fails when a stored notebook's metadata differs from it.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

# CHECK_CALL: a cell line that grades an exercise, `check_<exercise>(...)` at the start of a line (tools/grade.py
# records these calls; tests/test_notebooks.py requires one after every exercise). EXERCISE_HEADING: an
# exercise's title. helpers.progress defines both, as `make progress` must run without nbformat.
from helpers.progress import CHECK_CALL, EXERCISE_HEADING

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
NOTEBOOKS = ROOT / "notebooks"
BACKUPS = ROOT / "backups"

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
STUB = ["# YOUR CODE HERE", 'raise NotImplementedError("your code here")']
META_KEY = "ffn_course"
EXECUTE_TIMEOUT = 300  # seconds per cell; every notebook is meant to run in a few seconds
# The kernel's own warnings (ipykernel 7 warns that its local TCP sockets are not encrypted) would only
# bury the make output; its errors still show.
QUIET_KERNEL = ["--IPKernelApp.log_level=ERROR"]
# Files of solutions/ that the learner edition carries as they are (lessons link to them).
COPIED = ("conventions.md",)


class MarkerError(ValueError):
    """A solution cell whose markers cannot be turned into a stub."""


def strip_solutions(source: str, where: str = "cell") -> str:
    """Replace each marked block in `source` with the stub, at the block's indentation."""
    out, inside, indent = [], False, ""
    for number, line in enumerate(source.split("\n"), start=1):
        stripped = line.strip()
        if stripped == BEGIN:
            if inside:
                raise MarkerError(f"{where}, line {number}: {BEGIN} inside another block")
            indent = line[: len(line) - len(line.lstrip())]
            if not indent:
                raise MarkerError(f"{where}, line {number}: a solution block must sit inside a function body, "
                                  "or the learner's stub would stop 'Run All' at this cell")
            out.extend(indent + stub for stub in STUB)
            inside = True
        elif stripped == END:
            if not inside:
                raise MarkerError(f"{where}, line {number}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise MarkerError(f"{where}: {BEGIN} is never closed")
    return "\n".join(out)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def is_exercise(cell) -> bool:
    return cell.cell_type == "code" and BEGIN in cell.source


# ----------------------------------------------------------------------------------------------------------
# nbgrader metadata, derived from a notebook's structure
# ----------------------------------------------------------------------------------------------------------
NBGRADER_KEY = "nbgrader"
NBGRADER_SCHEMA = 3                      # nbgrader 0.9's cell metadata schema
DEFINES = re.compile(r"^def\s+(\w+)\s*\(", re.MULTILINE)
DIFFICULTY = re.compile(r"Difficulty[:*\s]*((?:[●○]\s*)+)")
GOING_FURTHER = re.compile(r"^(#{1,6})\s+(.*)$", re.MULTILINE)   # a heading; "Going further" ones are optional


def lesson_number(name: str) -> str:
    """'02' for '02_pure_python.ipynb' (the part before the first underscore)."""
    return Path(name).stem.split("_", 1)[0]


def exercise_points(cells: list, index: int) -> int:
    """Points of the exercise whose code is cells[index]: the filled dots of its **Difficulty** (1 to 3,
    in the markdown just above it); 1 where no difficulty is given."""
    for previous in reversed(cells[:index]):
        if previous.get("cell_type") == "markdown":
            match = DIFFICULTY.search(previous.get("source", ""))
            if match:
                return max(1, match.group(1).count("●"))
            if EXERCISE_HEADING.search(previous.get("source", "")):
                break                      # the exercise's own header gives no difficulty
        elif BEGIN in previous.get("source", ""):
            break                          # the previous exercise: this one has no header
    return 1


def nbgrader_metadata(nb: nbformat.NotebookNode, name: str) -> dict[str, dict]:
    """cell id -> the nbgrader metadata of that cell of solutions/`name`, derived from its structure:

    - a code cell with `### BEGIN SOLUTION` is a solution cell ("autograded answer"), grade_id NN-<function
      it defines> (02-ffn_forward);
    - a code cell with a check call line (CHECK_CALL) is an autograded test cell, grade_id NN-check_<exercise>
      (02-check_ffn_forward), worth the difficulty dots of the exercise it checks (exercise_points: the one
      that defines <exercise>, else the exercise just above), or 0 points in a "Going further" section
      (optional: its result shows in the feedback, the score is the core path's);
    - every other cell is read-only ("locked"), grade_id NN-<cell id>.
    Ids are unique across the course: NN is the lesson number; a clash gets the cell id appended.
    """
    lesson, metadata, used = lesson_number(name), {}, set()
    points = {}                              # function an exercise defines -> its points
    last_points = 1
    for index, cell in enumerate(nb.cells):
        if is_exercise(cell):
            for defined in DEFINES.findall(cell.source):
                points.setdefault(defined, exercise_points(nb.cells, index))
    further = None                           # the heading level of the Going further section we are in
    for index, cell in enumerate(nb.cells):
        meta = {"grade": False, "locked": True, "solution": False, "task": False,
                "schema_version": NBGRADER_SCHEMA}
        source = cell.get("source", "")
        heading = GOING_FURTHER.match(source.lstrip()) if cell.cell_type == "markdown" else None
        if heading:                              # a heading opens or closes a Going further section
            level = len(heading.group(1))
            if heading.group(2).strip().lower().startswith("going further"):
                further = level if further is None else min(level, further)
            elif further is not None and level <= further:
                further = None
        checks = CHECK_CALL.findall(source) if cell.cell_type == "code" else []
        if is_exercise(cell):
            defined = DEFINES.findall(source)
            grade_id = f"{lesson}-{defined[0] if defined else cell.id}"
            meta.update(locked=False, solution=True)
            last_points = exercise_points(nb.cells, index)
        elif checks:
            grade_id = f"{lesson}-{checks[0]}"
            meta.update(grade=True, points=0 if further is not None else
                        points.get(checks[0].removeprefix("check_"), last_points))
        else:
            grade_id = f"{lesson}-{cell.id}"
        if grade_id in used:
            grade_id = f"{grade_id}-{cell.id}"
        used.add(grade_id)
        meta["grade_id"] = grade_id
        metadata[cell.id] = meta
    return metadata


def apply_nbgrader(nb: nbformat.NotebookNode, name: str, solution: nbformat.NotebookNode | None = None) -> bool:
    """Give every cell of `nb` its derived nbgrader metadata (from `solution`'s structure when `nb` is a learner
    copy of it; cells the solution lacks lose theirs). Returns whether anything changed."""
    derived = nbgrader_metadata(solution if solution is not None else nb, name)
    changed = False
    for cell in nb.cells:
        wanted = derived.get(cell.get("id"))
        if cell.metadata.get(NBGRADER_KEY) != wanted:
            changed = True
            if wanted is None:
                cell.metadata.pop(NBGRADER_KEY, None)
            else:
                cell.metadata[NBGRADER_KEY] = dict(wanted)
    return changed


def nbgrader_of(nb: nbformat.NotebookNode) -> list:
    """The nbgrader metadata of every cell, in order (to compare two notebooks)."""
    return [(c.get("id"), c.metadata.get(NBGRADER_KEY)) for c in nb.cells]


def learner_version(solution: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """The learner's copy of a solution notebook: stubs for solutions, no outputs, cell hashes recorded."""
    nb = nbformat.from_dict(solution)  # a deep copy
    hashes, exercises = {}, []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            if is_exercise(cell):
                exercises.append(cell.id)
            cell.source = strip_solutions(cell.source, f"solutions/{name} cell {index + 1}")
            cell.outputs = []
            cell.execution_count = None
        hashes[cell.id] = sha(cell.source)
    nb.metadata[META_KEY] = {"generated_from": f"solutions/{name}", "cell_sha": hashes,
                             "exercise_cells": exercises}
    return nb


def first_line(source: str, limit: int = 60) -> str:
    """A cell's first non-empty line (markdown heading marks dropped), cut to `limit` characters."""
    for line in source.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= limit else line[:limit - 3] + "..."
    return "(empty)"


def describe_cell(cells: list, index: int, exercises: set[str] = frozenset()) -> str:
    """How a learner finds cell `index` in Jupyter, which shows no cell numbers: an exercise by its title
    ("the code of Exercise 2 · Which units fire?"), any other cell by its first line."""
    cell = cells[index]
    if cell.get("cell_type") == "code" and (cell.get("id") in exercises or BEGIN in cell.get("source", "")):
        for previous in reversed(cells[:index]):
            if previous.get("cell_type") == "markdown":
                heading = EXERCISE_HEADING.search(previous.get("source", ""))
                if heading:
                    return f"the code of {heading.group(1).strip()}"
        return f"the exercise cell starting `{first_line(cell.get('source', ''))}`"
    kind = "markdown" if cell.get("cell_type") == "markdown" else "code"
    return f"the {kind} cell starting `{first_line(cell.get('source', ''))}`"


def learner_changes(existing: nbformat.NotebookNode) -> list[str]:
    """What a learner changed in a generated notebook since it was written (empty when untouched)."""
    meta = existing.metadata.get(META_KEY, {})
    recorded, exercises = meta.get("cell_sha"), set(meta.get("exercise_cells", []))
    if recorded is None:
        return ["it was not written by this script (no cell hashes in its metadata)"]
    changes, seen = [], set()
    for index, cell in enumerate(existing.cells):
        seen.add(cell.get("id"))
        label = describe_cell(existing.cells, index, exercises)
        if cell.get("id") not in recorded:
            changes.append(f"{label} was added")
        elif sha(cell.source) != recorded[cell.id]:
            changes.append(f"{label} was edited")
    missing = len(set(recorded) - seen)
    if missing:
        changes.append(f"{missing} cell(s) were deleted")
    return changes


def coalesce_streams(cell: nbformat.NotebookNode) -> None:
    """Merge consecutive stdout (or stderr) chunks into one output. How the kernel splits a cell's printing
    into messages depends on timing, so without this the stored JSON would change from run to run."""
    merged = []
    for output in cell.get("outputs", []):
        previous = merged[-1] if merged else None
        if (output.output_type == "stream" and previous is not None and previous.output_type == "stream"
                and previous.name == output.name):
            previous.text += output.text
        else:
            merged.append(output)
    cell.outputs = merged


# What the kernel itself writes to stderr when the machine is busy (ipykernel's iostream), not the lesson's
# output: stored, it would make nbval fail wherever the next run is quiet.
KERNEL_NOISE = ("IOStream.flush timed out",)


def drop_kernel_noise(cell: nbformat.NotebookNode) -> None:
    """Remove the kernel's own timing warnings from a cell's stderr, and the stream if nothing else is left."""
    kept = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream" and output.name == "stderr":
            lines = output.text.splitlines(keepends=True)
            output.text = "".join(line for line in lines if line.strip() not in KERNEL_NOISE)
            if not output.text:
                continue
        kept.append(output)
    cell.outputs = kept


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def fix_widget_ids(cell: nbformat.NotebookNode) -> None:
    """Give stored widget views a fixed model id. Their models are not stored (see execute), so the random
    id pointed at nothing anyway; a fixed one keeps the JSON from changing at every run."""
    for output in cell.get("outputs", []):
        view = output.get("data", {}).get(WIDGET_VIEW)
        if view is not None:
            view["model_id"] = "not-stored"


def execute(nb: nbformat.NotebookNode, cwd: Path) -> None:
    """Run every cell in a fresh kernel of this environment, storing the outputs in `nb`."""
    # Widget state is not stored: its model ids are random (every run would rewrite the JSON), and the
    # explorer's output carries a still picture for readers without a live kernel.
    client = NotebookClient(nb, timeout=EXECUTE_TIMEOUT, kernel_name="python3", record_timing=False,
                            store_widget_state=False, resources={"metadata": {"path": str(cwd)}},
                            extra_arguments=QUIET_KERNEL)
    client.execute()
    for cell in nb.cells:
        if cell.cell_type == "code":
            coalesce_streams(cell)
            drop_kernel_noise(cell)
            fix_widget_ids(cell)


def same_sources(a: nbformat.NotebookNode, b: nbformat.NotebookNode, tags: bool = True) -> bool:
    """True when two notebooks have the same cells (type, id, source, and tags unless tags=False) and course
    metadata."""
    def shape(nb):
        return ([(c.cell_type, c.get("id"), c.source, tuple(c.metadata.get("tags", [])) if tags else ())
                 for c in nb.cells], nb.metadata.get(META_KEY))
    return shape(a) == shape(b)


def copy_tags(target: nbformat.NotebookNode, source: nbformat.NotebookNode) -> None:
    """Give each cell of `target` the tags of the same cell of `source` (same ids, in the same order)."""
    for mine, theirs in zip(target.cells, source.cells):
        if theirs.metadata.get("tags"):
            mine.metadata["tags"] = list(theirs.metadata["tags"])
        else:
            mine.metadata.pop("tags", None)


def solution_names(names: list[str]) -> list[str]:
    available = sorted(p.name for p in SOLUTIONS.glob("*.ipynb"))
    if not names:
        return available
    wanted = [n if n.endswith(".ipynb") else n + ".ipynb" for n in names]
    unknown = [n for n in wanted if n not in available]
    if unknown:
        sys.exit(f"No such solution notebook: {', '.join(unknown)} (have: {', '.join(available)})")
    return wanted


def has_outputs(nb: nbformat.NotebookNode) -> bool:
    """Whether a notebook was executed: some code cell has stored outputs."""
    return any(c.get("outputs") for c in nb.cells if c.cell_type == "code")


def copy_files() -> list[str]:
    """Copy COPIED files from solutions/ to notebooks/ where they differ; return the names copied."""
    copied = []
    for name in COPIED:
        source, target = SOLUTIONS / name, NOTEBOOKS / name
        if source.exists() and (not target.exists() or target.read_bytes() != source.read_bytes()):
            shutil.copyfile(source, target)
            copied.append(name)
    return copied


def read_solution(name: str) -> nbformat.NotebookNode:
    """solutions/`name`, its nbgrader metadata brought up to date (and written back if it was not)."""
    solution = nbformat.read(SOLUTIONS / name, as_version=4)
    if apply_nbgrader(solution, name):
        nbformat.write(solution, SOLUTIONS / name)
        print(f"metadata solutions/{name} (nbgrader)")
    return solution


def generate(names: list[str], force: bool, rerun: bool = False) -> int:
    """Write the learner copies. Without names, only the lessons whose learner copy is missing or differs
    from its solution are written (all of them with rerun); named ones are always written."""
    refused = []
    for name in copy_files():
        print(f"copied   notebooks/{name}")
    for name in solution_names(names):
        learner = learner_version(read_solution(name), name)
        target = NOTEBOOKS / name
        if target.exists():
            existing = nbformat.read(target, as_version=4)
            if (not names and not rerun and has_outputs(existing) and same_sources(learner, existing, tags=False)
                    and not same_sources(learner, existing)):
                # Only cell tags changed (slide tags, say): metadata, so nothing to re-execute.
                copy_tags(existing, learner)
                nbformat.write(existing, target)
                print(f"metadata notebooks/{name} (cell tags)")
                continue
            if not names and not rerun and same_sources(learner, existing) and has_outputs(existing):
                if nbgrader_of(existing) != nbgrader_of(learner):
                    apply_nbgrader(existing, name, learner)
                    nbformat.write(existing, target)
                    print(f"metadata notebooks/{name} (nbgrader)")
                else:
                    print(f"current  notebooks/{name}")
                continue
            changes = learner_changes(existing)
            if changes and not force:
                refused.append(name)
                print(f"REFUSED  notebooks/{name}: it was edited by hand ({'; '.join(changes)}).")
                continue
            if changes:
                BACKUPS.mkdir(exist_ok=True)
                backup = BACKUPS / f"{target.stem}.{time.strftime('%Y%m%d-%H%M%S')}.ipynb"
                shutil.copy2(target, backup)
                print(f"BACKED UP notebooks/{name} -> {backup.relative_to(ROOT)} ({'; '.join(changes)}).")
        execute(learner, NOTEBOOKS)
        nbformat.write(learner, target)
        print(f"wrote    notebooks/{name}")
    if refused:
        print("Nothing was overwritten for the notebook(s) above. notebooks/ is the course's pristine learner "
              "edition: learners work in work/ (`make lab`), where `make update` merges new editions. Move your "
              "edits there, or run `make notebooks FORCE=1` to back them up to backups/ and regenerate.")
        return 1
    return 0


def execute_solutions(names: list[str]) -> int:
    for name in solution_names(names):
        nb = nbformat.read(SOLUTIONS / name, as_version=4)
        apply_nbgrader(nb, name)
        execute(nb, SOLUTIONS)
        nbformat.write(nb, SOLUTIONS / name)
        print(f"executed solutions/{name}")
    return 0


def apply_metadata(names: list[str]) -> int:
    """Bring the nbgrader metadata of solutions/ and of the learner copies up to date, executing nothing."""
    for name in solution_names(names):
        solution = read_solution(name)
        target = NOTEBOOKS / name
        if target.exists():
            learner = nbformat.read(target, as_version=4)
            if apply_nbgrader(learner, name, solution):
                nbformat.write(learner, target)
                print(f"metadata notebooks/{name} (nbgrader)")
    return 0


def refresh_quizzes() -> int:
    """Store again what each lesson's quiz cell shows (`quiz`: its text and its folded HTML), in solutions/ and
    notebooks/, without executing the lessons: the quiz is the same on every run, so this is what `execute`
    would store, and nothing else in the notebook changes."""
    from helpers.quiz import lesson_quiz
    for folder in (SOLUTIONS, NOTEBOOKS):
        for path in sorted(folder.glob("*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            changed = False
            for cell in nb.cells:
                match = re.search(r'lesson_quiz\("(\d\d)"\)', cell.source) if cell.cell_type == "code" else None
                if not match:
                    continue
                quiz = lesson_quiz(match.group(1))
                for output in cell.get("outputs", []):
                    data = output.get("data", {})
                    if "text/html" in data and "ffn-quiz" in data["text/html"] \
                            and (data["text/html"], data.get("text/plain")) != (quiz.html(), quiz.text()):
                        data["text/html"], data["text/plain"] = quiz.html(), quiz.text()
                        changed = True
            if changed:
                nbformat.write(nb, path)
                print(f"quiz refreshed in {path.relative_to(ROOT)}")
    return 0


def stale() -> list[str]:
    """Names of learner notebooks that are missing, extra, or differ from what generate would write."""
    problems = []
    solutions = sorted(p.name for p in SOLUTIONS.glob("*.ipynb"))
    learners = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    problems += [f"notebooks/{n} is missing" for n in solutions if n not in learners]
    problems += [f"notebooks/{n} has no solutions/{n}" for n in learners if n not in solutions]
    for name in COPIED:
        source, target = SOLUTIONS / name, NOTEBOOKS / name
        if source.exists() and (not target.exists() or target.read_bytes() != source.read_bytes()):
            problems.append(f"notebooks/{name} differs from solutions/{name}")
    for name in sorted(set(solutions) & set(learners)):
        solution = nbformat.read(SOLUTIONS / name, as_version=4)
        expected = learner_version(solution, name)
        existing = nbformat.read(NOTEBOOKS / name, as_version=4)
        if not same_sources(expected, existing):
            problems.append(f"notebooks/{name} differs from what solutions/{name} generates")
        elif nbgrader_of(existing) != nbgrader_of(expected) or apply_nbgrader(solution, name):
            problems.append(f"notebooks/{name} or solutions/{name} has out-of-date nbgrader metadata")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="write notebooks/ from solutions/ (executed)")
    gen.add_argument("--force", action="store_true", help="back up learner-edited notebooks, then overwrite")
    gen.add_argument("--rerun", action="store_true", help="re-execute every learner copy, changed or not")
    gen.add_argument("names", nargs="*")
    exe = sub.add_parser("execute", help="re-execute solutions/ in place")
    exe.add_argument("names", nargs="*")
    sub.add_parser("check", help="exit 1 when notebooks/ is stale")
    meta = sub.add_parser("metadata", help="(re)write the nbgrader metadata of solutions/ and notebooks/ only")
    meta.add_argument("names", nargs="*")
    sub.add_parser("quizzes", help="refresh the stored output of each lesson's quiz cell, executing nothing")
    args = parser.parse_args(argv)
    if args.command == "generate":
        return generate(args.names, args.force, args.rerun)
    if args.command == "execute":
        return execute_solutions(args.names)
    if args.command == "metadata":
        return apply_metadata(args.names)
    if args.command == "quizzes":
        return refresh_quizzes()
    problems = stale()
    for problem in problems:
        print(problem)
    if problems:
        print("Run `make notebooks` to regenerate.")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
