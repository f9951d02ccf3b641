"""How fast `make grade` marks a class: seconds per notebook with one and with two notebooks at a time.

    make bench-grade                                   # or: .venv/bin/python benchmarks/grade_bench.py
    .venv/bin/python benchmarks/grade_bench.py --learners 4 --jobs 1   # a smoke run

The class is generated, deterministically (seed 0), from the course itself: each of --learners learners hands
in every lesson of solutions/ as `make notebooks` writes it, with each exercise filled in with the solution
(60 %), left as the stub (25 %) or given a slip (15 %: the solution with its last line dropped, which fails
or raises). So the notebooks run the lessons' own cells, figures and timings included, as real ones would.

For each --jobs value (default 1 and 2) the whole class is graded once by tools/grade.py, into a scratch
folder, and the wall-clock seconds are reported: in all, per notebook, and notebooks a minute; and, from the
same run, the seconds spent in the clean process that the verdicts come from (helpers.grading), as a ratio of
grading to the kernel run alone. The two runs
are timed one after the other on the same class; on a shared machine, other work slows both, so run it on a
quiet one, and read the JOBS=2 speed-up against this machine's cores (printed). Not part of `make test`.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import grade  # noqa: E402
import notebooks as nbtool  # noqa: E402


def filled(source: str) -> str:
    """A solution cell as a learner who solved it would hand it in: the markers gone."""
    return "\n".join(line for line in source.split("\n") if line.strip() not in (nbtool.BEGIN, nbtool.END))


def slip(source: str) -> str:
    """The solution with the last line of its marked block dropped: usually a missing return or a step."""
    lines = source.split("\n")
    begin = next(i for i, line in enumerate(lines) if line.strip() == nbtool.BEGIN)
    end = next(i for i, line in enumerate(lines) if line.strip() == nbtool.END)
    body = [i for i in range(begin + 1, end) if lines[i].strip()]
    if len(body) > 1:
        del lines[body[-1]]
    return filled("\n".join(lines))


def make_class(folder: Path, learners: int, seed: int = 0) -> int:
    """Write the generated class into `folder`; return the number of notebooks."""
    rng = random.Random(seed)
    lessons = sorted(nbtool.SOLUTIONS.glob("*.ipynb"))
    count = 0
    for k in range(1, learners + 1):
        for path in lessons:
            solution = nbformat.read(path, as_version=4)
            learner = nbtool.learner_version(solution, path.name)
            answers = {c.id: c.source for c in solution.cells if nbtool.is_exercise(c)}
            for cell in learner.cells:
                if cell.id in answers:
                    roll = rng.random()
                    if roll < 0.60:
                        cell.source = filled(answers[cell.id])
                    elif roll < 0.85:
                        pass                                   # the stub
                    else:
                        cell.source = slip(answers[cell.id])
            target = folder / f"learner{k:03d}" / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(learner, target)
            count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", type=int, default=40, help="learners in the class (default: 40)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="JOBS values to time (default: 1 2)")
    parser.add_argument("--keep", type=Path, help="grade into this folder and keep it (default: a scratch one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ffn-grade-bench-") as scratch:
        base = args.keep or Path(scratch)
        submissions = base / "class"
        notebooks = make_class(submissions, args.learners)
        print(f"Class: {args.learners} learners x {notebooks // max(args.learners, 1)} lessons = {notebooks} "
              f"notebooks; machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
        results = []
        for jobs in args.jobs:
            started = time.perf_counter()
            _, rows, _ = grade.grade(submissions, base / f"grades-jobs{jobs}", jobs=jobs, progress=False)
            seconds = time.perf_counter() - started
            results.append((jobs, seconds))
            passed = sum(int(r["passed"]) for r in rows)
            model = json.loads((base / f"grades-jobs{jobs}" / "grades.json").read_text())
            busy, clean = model["seconds"], model["clean_seconds"]
            print(f"JOBS={jobs}: {seconds:7.1f} s in all, {seconds / notebooks:5.2f} s per notebook, "
                  f"{60 * notebooks / seconds:5.1f} notebooks a minute ({passed} exercises passed)")
            # The same run, side by side: the notebooks' time with and without the clean process (its own
            # process, and the closing cell that copies the functions out of the kernel).
            print(f"  of which the clean process: {clean:.1f} s of {busy:.1f} s graded; grading costs "
                  f"{busy / max(busy - clean, 1e-9):.2f} times what the kernel run alone does")
        if len(results) > 1:
            (j0, s0), (j1, s1) = results[0], results[-1]
            print(f"JOBS={j1} against JOBS={j0}: {s0 / s1:.2f} times as fast")
    return 0


if __name__ == "__main__":
    sys.exit(main())
