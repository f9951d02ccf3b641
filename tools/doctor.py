"""Check the course environment and say how to fix what is wrong: `make doctor`.

    python3 tools/doctor.py [--venv .venv]

Prints OK or FAIL for: the Python in .venv; every package in requirements.txt at its pinned version (the
course's direct requirements one per line, the rest together); the helpers package (importable in .venv from
any folder, installed in editable mode from this checkout); the Jupyter kernel `python3` (it must run
.venv's Python, or notebooks cannot import helpers); whether helpers.checks imports; and the learner's
workspace, work/ (whether there is one, how many lessons it holds, any that is not valid JSON, any older
than the course's edition in notebooks/, and whether the progress file can be read and written). Each FAIL is
followed by the command that fixes it. Exits 1 when anything failed.

Uses the standard library only and runs under any Python 3, so it also works when .venv is missing or
broken: it looks into .venv by running .venv's own Python.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_python import SUPPORTED, problem  # noqa: E402

REINSTALL = ".venv/bin/python -m pip install -r requirements.txt   (or delete .venv/.installed and run make lab)"
EDITABLE = ".venv/bin/python -m pip install --no-deps -e .   (run it in this folder)"
KERNEL = ".venv/bin/python -m ipykernel install --sys-prefix   (a python3 kernel inside .venv; Jupyter prefers it)"

# Run by .venv's Python, from a folder outside the checkout; prints one JSON object of facts.
PROBE = r'''
import json, sys, traceback
facts = {"version": list(sys.version_info[:3]), "prefix": sys.prefix, "executable": sys.executable}
def attempt(key, fn):
    try:
        facts[key] = fn()
    except BaseException:
        facts[key + "_error"] = traceback.format_exc(limit=2).strip().splitlines()[-1]
def installed():
    from importlib import metadata
    return {d.metadata["Name"]: d.version for d in metadata.distributions() if d.metadata["Name"]}
def helpers():
    import helpers
    from importlib import metadata
    info = {"file": helpers.__file__, "dist_version": None, "direct_url": None}
    try:
        dist = metadata.distribution("ffn-course-helpers")
        info["dist_version"] = dist.version
        info["direct_url"] = json.loads(dist.read_text("direct_url.json") or "null")
    except metadata.PackageNotFoundError:
        pass
    return info
def kernel():
    from jupyter_client.kernelspec import KernelSpecManager
    spec = KernelSpecManager().get_kernel_spec("python3")
    return {"argv": spec.argv, "dir": spec.resource_dir}
def checks():
    import helpers.checks
    return len(helpers.checks.__all__)
attempt("installed", installed)
attempt("helpers", helpers)
attempt("kernel", kernel)
attempt("checks", checks)
print(json.dumps(facts))
'''


@dataclass
class Result:
    ok: bool
    what: str
    fix: str = ""

    def __str__(self) -> str:
        line = f"{'OK  ' if self.ok else 'FAIL'}  {self.what}"
        return line if self.ok or not self.fix else f"{line}\n      fix: {self.fix}"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(path: Path) -> dict[str, tuple[str, str]]:
    """canonical name -> (name as written, version) for every `name==version` line."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = (part.strip() for part in line.split("==", 1))
            pins[canonical(name)] = (name, version)
    return pins


def read_direct(path: Path) -> list[str]:
    """Canonical names listed in requirements.in (what the course uses directly)."""
    names = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(canonical(re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0]))
    return names


def python_result(version, venv_python: str) -> Result:
    (lo_major, lo_minor), (hi_major, hi_minor) = SUPPORTED
    have = ".".join(map(str, version))
    supported = f"{lo_major}.{lo_minor} to {hi_major}.{hi_minor}"
    if problem(version) is None:  # the same rule the Makefile applies before it builds .venv
        return Result(True, f"Python {have} in {venv_python} (the course supports {supported})")
    return Result(False, f"Python {have} in {venv_python}; the course supports {supported}",
                  f"rm -rf .venv && make PYTHON=python3.{hi_minor} lab   (or another supported python3.X)")


def package_results(installed: dict[str, str], pins: dict[str, tuple[str, str]],
                    direct: list[str]) -> list[Result]:
    """One line per direct requirement, one per other mismatch, and one for all other matching pins."""
    have = {canonical(name): version for name, version in installed.items()}
    results, others_ok = [], 0
    for key, (name, wanted) in pins.items():
        got = have.get(key)
        if got == wanted:
            if key in direct:
                results.append(Result(True, f"{name} {got}"))
            else:
                others_ok += 1
        elif got is None:
            results.append(Result(False, f"{name} is not installed (requirements.txt pins {wanted})", REINSTALL))
        else:
            results.append(Result(False, f"{name} {got} is installed; requirements.txt pins {wanted}", REINSTALL))
    results.append(Result(True, f"{others_ok} more pinned packages match requirements.txt"))
    return results


def helpers_result(info: dict | None, error: str | None, root: Path = ROOT) -> Result:
    if info is None:
        return Result(False, f"helpers does not import in .venv ({error})", EDITABLE)
    location = Path(info["file"]).resolve().parent
    if location != (root / "helpers").resolve():
        return Result(False, f"helpers imports from {location}, not from this checkout ({root / 'helpers'})",
                      EDITABLE)
    direct_url = info.get("direct_url") or {}
    editable = bool(direct_url.get("dir_info", {}).get("editable"))
    url = direct_url.get("url", "")
    if not editable or url.removeprefix("file://").rstrip("/") != str(root.resolve()):
        return Result(False, "helpers is installed, but not in editable mode from this checkout "
                      f"(installed from {url or 'an unknown place'}): edits to helpers/ would not be seen",
                      EDITABLE)
    return Result(True, f"helpers {info.get('dist_version')} imports from this checkout (editable install)")


def kernel_result(spec: dict | None, error: str | None, venv_prefix: str, prefix_of) -> Result:
    """`prefix_of(executable)` returns sys.prefix of that Python, or None when it does not run."""
    if spec is None:
        return Result(False, f"no Jupyter kernel named python3 ({error})", KERNEL)
    executable = spec["argv"][0] if spec.get("argv") else ""
    # jupyter_client runs a bare `python`/`python3`/`python3.X` as the Python that starts the kernel: .venv's.
    if re.fullmatch(r"python(\d(\.\d+)?)?", executable):
        return Result(True, f"Jupyter kernel python3 runs .venv's Python (kernelspec in {spec['dir']})")
    prefix = prefix_of(executable)
    if prefix is not None and Path(prefix).resolve() == Path(venv_prefix).resolve():
        return Result(True, f"Jupyter kernel python3 runs {executable}")
    fix = KERNEL + ("; also unset JUPYTER_PATH, which puts other kernels first" if os.environ.get("JUPYTER_PATH")
                    else "")
    runs = f"runs {executable}" + (" (which does not start)" if prefix is None else f", a Python in {prefix}")
    return Result(False, f"Jupyter kernel python3 (kernelspec in {spec['dir']}) {runs}, not .venv's: "
                  "notebooks would not find helpers", fix)


def checks_result(count: int | None, error: str | None) -> Result:
    if count is None:
        return Result(False, f"helpers.checks does not import ({error})",
                      "run `.venv/bin/python -c 'import helpers.checks'` to see the whole error")
    return Result(True, f"helpers.checks imports ({count} checks)")


def _prefix_of(executable: str) -> str | None:
    try:
        done = subprocess.run([executable, "-c", "import sys; print(sys.prefix)"], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def diagnose(venv: Path, root: Path = ROOT) -> list[Result]:
    python = Path(os.path.abspath(venv)) / "bin" / "python"     # the probe runs in another folder
    if not python.exists():
        return [Result(False, f"no Python at {python}: the course environment is not built",
                       "make lab   (or make test: either builds .venv the first time)")]
    try:
        done = subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, timeout=300,
                              cwd=tempfile.gettempdir())
        facts = json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as error:
        return [Result(False, f"{python} does not run ({error})", "rm -rf .venv && make lab")]
    results = [python_result(facts["version"], str(python))]
    if "installed" in facts:
        results += package_results(facts["installed"], read_pins(root / "requirements.txt"),
                                   read_direct(root / "requirements.in"))
    else:
        results.append(Result(False, f"cannot list packages ({facts.get('installed_error')})", REINSTALL))
    results.append(helpers_result(facts.get("helpers"), facts.get("helpers_error"), root))
    results.append(kernel_result(facts.get("kernel"), facts.get("kernel_error"), facts["prefix"], _prefix_of))
    results.append(checks_result(facts.get("checks"), facts.get("checks_error")))
    return results


def workspace_results(work: Path, source: Path = ROOT / "notebooks") -> list[Result]:
    """The learner's workspace (tools/workspace.py): none yet is fine; a lesson Jupyter cannot open, lessons
    older than the course's edition, or a progress file that cannot be read each FAIL with their fix."""
    try:
        import workspace
        state = workspace.status(work, source)
    except Exception as error:   # e.g. a Python too old to import it: the checks above say so too
        return [Result(False, f"cannot look into the workspace {work} ({type(error).__name__}: {error})",
                       "run `make doctor` again once the checks above pass")]
    if not state.exists:
        if state.folder_exists:
            return [Result(False, f"{work} exists but is not a workspace (it has no {workspace.MARKER} file)",
                           "make lab   (makes it one, copying in only the lessons it lacks)")]
        return [Result(True, f"no workspace yet ({work}): `make lab` creates it from notebooks/")]
    total = len(state.lessons) + len(state.missing)
    results = [Result(True, f"workspace {work}: {len(state.lessons)} of the course's {total} lessons")]
    for lesson, names in state.renamed.items():
        results.append(Result(True, f"{', '.join(names)}: your copy of {lesson} under another name (make update "
                                    "brings the course's changes into it)"))
    for name, problem in state.unreadable.items():
        results.append(Result(False, f"{work / name}: {problem}; Jupyter cannot open it",
                              workspace.restore_advice(work, name)))
    if state.older:
        results.append(Result(False, f"{len(state.older)} lesson(s) in {work} are older than the course's "
                                     f"edition in notebooks/: {', '.join(state.older)}",
                              "make update   (brings the course's changes in, keeping your work; backs up first)"))
    log = work / workspace.LOG
    if state.log_problem:
        results.append(Result(False, f"progress file: {state.log_problem}",
                              f"move {log} aside (make progress then starts afresh)"))
    elif state.log_unwritable:
        fix = (f"chmod u+w {log} {work}   (or move {log} aside: make progress then starts afresh)"
               if "permission" in state.log_unwritable else f"move {log} aside (make progress then starts afresh)")
        results.append(Result(False, f"progress file: {state.log_unwritable}, so your checks and quiz answers "
                                     "are not being saved", fix))
    else:
        records = f"{state.records} record(s)" if state.records else "nothing recorded yet"
        results.append(Result(True, f"progress file {work / workspace.LOG}: {records}"
                              + (f" ({state.skipped} unreadable line(s) skipped)" if state.skipped else "")))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv", help="the environment to check")
    parser.add_argument("--work", type=Path, default=ROOT / "work", help="the learner's workspace to check")
    args = parser.parse_args(argv)
    print(f"Checking the course environment in {args.venv}")
    results = diagnose(args.venv) + workspace_results(args.work)
    for result in results:
        print(result)
    failed = sum(not r.ok for r in results)
    print(f"All {len(results)} checks passed." if not failed else
          f"{failed} of {len(results)} checks FAILED: run the fix under each, then `make doctor` again.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
