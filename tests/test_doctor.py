"""tools/doctor.py: every check passes here, and each kind of FAIL is reported with its fix."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import doctor  # noqa: E402

PINS = {"numpy": ("numpy", "2.4.6"), "scipy": ("scipy", "1.17.1"), "six": ("six", "1.17.0"),
        "typing-extensions": ("typing_extensions", "4.16.0")}
EDITABLE_URL = {"url": f"file://{ROOT}", "dir_info": {"editable": True}}


def test_this_environment_passes_every_check(tmp_path):
    # As `make doctor` runs it: from the checkout, with a relative --venv; a workspace not made yet (make test
    # never reads work/).
    venv = os.path.relpath(sys.prefix, ROOT)
    done = subprocess.run([sys.executable, "tools/doctor.py", "--venv", venv, "--work", str(tmp_path / "work")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert all(line.startswith("OK  ") for line in lines[1:-1]), done.stdout
    for needed in ("Python 3.", "numpy ", "jupyterlab ", "more pinned packages", "helpers ", "kernel python3",
                   "helpers.checks imports", "no workspace yet"):
        assert any(needed in line for line in lines), f"no line about {needed!r}:\n{done.stdout}"
    assert lines[-1].startswith("All ") and lines[-1].endswith(" checks passed.")


def test_a_kernel_that_runs_another_python_fails_with_its_fix(tmp_path, monkeypatch):
    # JUPYTER_PATH comes first in Jupyter's search: a python3 kernel there that runs the system's Python.
    kernel = tmp_path / "kernels" / "python3"
    kernel.mkdir(parents=True)
    other = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else "/bin/sh"
    (kernel / "kernel.json").write_text(json.dumps({"argv": [other, "-m", "ipykernel_launcher", "-f",
                                                              "{connection_file}"],
                                                     "display_name": "Python 3", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    results = doctor.diagnose(Path(sys.prefix))
    failed = [r for r in results if not r.ok]
    assert len(failed) == 1 and "kernel python3" in failed[0].what and str(kernel) in failed[0].what
    assert "ipykernel install --sys-prefix" in failed[0].fix and "unset JUPYTER_PATH" in failed[0].fix
    assert str(failed[0]).startswith("FAIL  ") and "\n      fix: " in str(failed[0])


def test_a_missing_environment_fails_with_how_to_build_it(tmp_path, capsys):
    assert doctor.main(["--venv", str(tmp_path / "no-venv"), "--work", str(tmp_path / "work")]) == 1
    out = capsys.readouterr().out
    assert "FAIL  no Python at" in out and "fix: make lab" in out and "1 of 2 checks FAILED" in out
    assert "OK    no workspace yet" in out                   # the workspace is looked at even without .venv


@pytest.mark.parametrize("version, ok", [((3, 11, 7), True), ((3, 14, 0), True), ((3, 10, 14), False),
                                         ((3, 15, 0), False)])
def test_python_version(version, ok):
    result = doctor.python_result(version, ".venv/bin/python")
    assert result.ok == ok
    assert ok or ("3.11 to 3.14" in result.what and "make PYTHON=" in result.fix)


def test_packages_missing_or_at_another_version_fail_one_line_each():
    installed = {"numpy": "2.3.0", "six": "1.17.0", "typing-extensions": "4.16.0"}   # names as pip shows them
    results = doctor.package_results(installed, PINS, direct=["numpy", "scipy"])
    text = [str(r) for r in results]
    assert text[0].startswith("FAIL  numpy 2.3.0 is installed; requirements.txt pins 2.4.6\n      fix: ")
    assert text[1].startswith("FAIL  scipy is not installed (requirements.txt pins 1.17.1)")
    assert text[2] == "OK    2 more pinned packages match requirements.txt"   # six, typing_extensions
    assert [r.ok for r in results] == [False, False, True]


def test_direct_requirements_get_a_line_each_when_they_match():
    installed = {"numpy": "2.4.6", "scipy": "1.17.1", "six": "1.17.0", "typing_extensions": "4.16.0"}
    assert [str(r) for r in doctor.package_results(installed, PINS, direct=["numpy", "scipy"])] == [
        "OK    numpy 2.4.6", "OK    scipy 1.17.1", "OK    2 more pinned packages match requirements.txt"]


def test_pins_and_direct_requirements_are_read_from_the_real_files():
    pins = doctor.read_pins(ROOT / "requirements.txt")
    direct = doctor.read_direct(ROOT / "requirements.in")
    assert {"numpy", "jupyterlab", "ipywidgets", "nbconvert"} <= set(pins) and set(direct) <= set(pins)


@pytest.mark.parametrize("info, error, complaint", [
    (None, "ModuleNotFoundError: No module named 'helpers'", "does not import"),
    ({"file": "/elsewhere/helpers/__init__.py", "direct_url": EDITABLE_URL}, None, "not from this checkout"),
    ({"file": str(ROOT / "helpers" / "__init__.py"), "direct_url": {"url": f"file://{ROOT}", "dir_info": {}}},
     None, "not in editable mode"),
    ({"file": str(ROOT / "helpers" / "__init__.py"), "direct_url": None}, None, "not in editable mode"),
])
def test_helpers_not_importable_elsewhere_or_not_editable(info, error, complaint):
    result = doctor.helpers_result(info, error, ROOT)
    assert not result.ok and complaint in result.what and "pip install --no-deps -e ." in result.fix


def test_helpers_editable_from_this_checkout():
    info = {"file": str(ROOT / "helpers" / "__init__.py"), "direct_url": EDITABLE_URL, "dist_version": "0.1.0"}
    assert doctor.helpers_result(info, None, ROOT).ok


def test_kernel_resolution():
    spec = {"dir": "/k/python3"}
    venv = "/course/.venv"
    prefixes = {"/course/.venv/bin/python": "/course/.venv", "/usr/bin/python3": "/usr"}
    assert doctor.kernel_result({**spec, "argv": ["python", "-m", "ipykernel_launcher"]}, None, venv,
                                prefixes.get).ok
    assert doctor.kernel_result({**spec, "argv": ["/course/.venv/bin/python"]}, None, venv, prefixes.get).ok
    other = doctor.kernel_result({**spec, "argv": ["/usr/bin/python3"]}, None, venv, prefixes.get)
    assert not other.ok and "a Python in /usr" in other.what
    gone = doctor.kernel_result({**spec, "argv": ["/gone/python"]}, None, venv, prefixes.get)
    assert not gone.ok and "does not start" in gone.what
    missing = doctor.kernel_result(None, "NoSuchKernel: python3", venv, prefixes.get)
    assert not missing.ok and "NoSuchKernel" in missing.what and "ipykernel install" in missing.fix


def test_checks_that_do_not_import_fail():
    result = doctor.checks_result(None, "ImportError: cannot import name 'x'")
    assert not result.ok and "cannot import name" in result.what and "import helpers.checks" in result.fix
    assert doctor.checks_result(24, None).ok


# ---- the learner's workspace (tools/workspace.py) -------------------------------------------------------------
def workspace_lines(work):
    return [str(r) for r in doctor.workspace_results(work)]


@pytest.fixture
def work(tmp_path):
    import workspace
    work = tmp_path / "work"
    workspace.create(work)
    return work


def test_a_workspace_in_order_is_described(work):
    lessons = len(list((ROOT / "notebooks").glob("*.ipynb")))
    assert workspace_lines(work) == [f"OK    workspace {work}: {lessons} of the course's {lessons} lessons",
                                     f"OK    progress file {work / '.progress.jsonl'}: nothing recorded yet"]
    (work / ".progress.jsonl").write_text('{"kind": "check", "lesson": "01", "item": "x", "verdict": "pass"}\n'
                                          "not json\n")
    assert workspace_lines(work)[-1].endswith(": 1 record(s) (1 unreadable line(s) skipped)")


def test_a_folder_without_the_marker_is_not_a_workspace(tmp_path):
    (tmp_path / "work").mkdir()
    [line] = workspace_lines(tmp_path / "work")
    assert line.startswith("FAIL") and "not a workspace" in line and "fix: make lab" in line


def test_a_lesson_that_is_not_json_fails_with_how_to_restore_it(work):
    (work / "02_pure_python.ipynb").write_text('{"cells": [')
    failed = [r for r in doctor.workspace_results(work) if not r.ok]
    assert len(failed) == 1 and "02_pure_python.ipynb: it is not valid JSON" in failed[0].what
    assert ".backups" in failed[0].fix and "make update" in failed[0].fix and "holds no copy" in failed[0].fix
    kept = work / ".backups" / "20260101-120000" / "02_pure_python.ipynb"
    kept.parent.mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / "02_pure_python.ipynb", kept)
    [failed] = [r for r in doctor.workspace_results(work) if not r.ok]
    assert f"the latest copy that make update or make reset kept is {kept}" in failed.fix


def test_a_renamed_lesson_counts_as_there(work):
    (work / "02_pure_python.ipynb").rename(work / "02_pure_python_mine.ipynb")
    lines = workspace_lines(work)
    assert all(line.startswith("OK") for line in lines), lines
    lessons = len(list((ROOT / "notebooks").glob("*.ipynb")))
    assert f"{lessons} of the course's {lessons} lessons" in lines[0]
    assert any("02_pure_python_mine.ipynb: your copy of 02_pure_python.ipynb" in line for line in lines)


@pytest.mark.parametrize("how", ["permission", "folder"])
def test_a_progress_file_that_cannot_be_written_fails(work, monkeypatch, how):
    log = work / ".progress.jsonl"
    if how == "folder":
        log.mkdir()
        (log / "x").write_text("")
    else:
        log.write_text('{"kind": "check", "lesson": "01", "item": "x", "verdict": "pass"}\n')
        log.chmod(0o444)
        real_open = os.open

        def read_only(path, flags, mode=0o777):          # root may write a 0o444 file: answer as for a learner
            if Path(path) == log and flags & (os.O_WRONLY | os.O_RDWR):
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, flags, mode)
        monkeypatch.setattr(os, "open", read_only)
    failed = [r for r in doctor.workspace_results(work) if not r.ok]
    assert len(failed) == 1 and "progress file" in failed[0].what, [str(r) for r in failed]
    if how == "permission":
        assert "not being saved" in failed[0].what and "read-only" in failed[0].what
        assert failed[0].fix.startswith(f"chmod u+w {log}")
    else:
        assert "cannot be read" in failed[0].what or "is a folder" in failed[0].what


def test_lessons_older_than_the_course_fail_with_make_update(work):
    nb = json.loads((work / "01_hand_trace.ipynb").read_text())
    first = next(iter(nb["metadata"]["ffn_course"]["cell_sha"]))
    nb["metadata"]["ffn_course"]["cell_sha"][first] = "0" * 16            # made from an earlier edition
    (work / "01_hand_trace.ipynb").write_text(json.dumps(nb))
    failed = [r for r in doctor.workspace_results(work) if not r.ok]
    assert len(failed) == 1 and "1 lesson(s)" in failed[0].what and "01_hand_trace.ipynb" in failed[0].what
    assert failed[0].fix.startswith("make update")


def test_a_progress_file_that_cannot_be_read_fails(work):
    (work / ".progress.jsonl").mkdir()
    failed = [r for r in doctor.workspace_results(work) if not r.ok]
    assert len(failed) == 1 and "progress file" in failed[0].what and "cannot be read" in failed[0].what
