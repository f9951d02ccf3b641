"""nbgrader's autograde, with the verdicts from a clean process (helpers.grading), not from the learner's kernel.

The course's nbgrader_config.py (written by tools/nbgrader_course.py) puts `CourseExecute` in place of
nbgrader's Execute step:

    c.Autograde.autograde_preprocessors = ["helpers.nbgrader_plugin.CourseExecute", ...the rest as nbgrader's]

It runs the notebook as nbgrader's Execute does, with the grader's own first and last cells around it
(helpers.grading.install and dump: removed again before anything is saved), then checks each exercise's
function, the one its test cell checked, in a fresh process with fresh hidden cases, and writes that check's
report into the test cell. A test cell whose clean check did not pass gets an error output, so nbgrader gives
it no points, whatever the learner's kernel said. Error outputs keep no traceback into the course's files or
any path of the grading machine, and a cell past its time limit says so in words.

The secret the hidden cases are drawn from: `c.CourseExecute.grading_secret`, else the environment's
FFN_GRADING_SEED, else a new one for every notebook graded.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import nbformat
from nbgrader.preprocessors import Execute
from traitlets import Float, Unicode

from helpers import grading

TEST_ID = re.compile(r"^\d+-(check_\w+)$")
_PATH = re.compile(r"(/[\w.\-]+){2,}")


def _grade_id(cell) -> str:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")


class CourseExecute(Execute):
    """nbgrader's Execute, then the clean process's verdict in every test cell (see the module docstring)."""

    grading_secret = Unicode("", help="Secret for the hidden cases; else FFN_GRADING_SEED, else a new one per "
                                      "notebook.").tag(config=True)
    check_timeout = Float(120.0, help="Seconds one exercise's check may take in the clean process.").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        tests = {i: TEST_ID.match(_grade_id(cell)).group(1) for i, cell in enumerate(nb.cells)
                 if cell.cell_type == "code" and TEST_ID.match(_grade_id(cell))}
        if not tests:
            return super().preprocess(nb, resources, km)
        checks = list(dict.fromkeys(tests.values()))
        scratch = Path(tempfile.mkdtemp(prefix="ffn-nbgrader-"))
        record, dumped = scratch / "verdicts.jsonl", scratch / "functions.pkl"
        setup = nbformat.v4.new_code_cell(grading.setup_source(str(record)))
        closing = nbformat.v4.new_code_cell(grading.dump_source(str(dumped), checks))
        self._records, self._offset, self._calls = record, 0, {}
        nb.cells.insert(0, setup)
        nb.cells.append(closing)
        # The learner's kernel inherits this process's environment: keep the secret out of it.
        secret = self.grading_secret or grading.new_secret()
        hidden = os.environ.pop(grading.SECRET_ENV, None)
        try:
            nb, resources = super().preprocess(nb, resources, km)
        finally:
            nb.cells[:] = [cell for cell in nb.cells if cell is not setup and cell is not closing]
            if hidden is not None:
                os.environ[grading.SECRET_ENV] = hidden
        try:
            self._grade(nb, tests, dumped, secret)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return nb, resources

    def on_cell_executed(self, **kwargs):
        super().on_cell_executed(**kwargs)
        records, self._offset = grading.read_new(self._records, self._offset)
        cell = kwargs.get("cell")
        for entry in records:                    # the calls this cell made: the test cell's own counts
            if "call" in entry and cell is not None:
                self._calls.setdefault(id(cell), []).append(entry)

    def _grade(self, nb, tests: dict[int, str], dumped: Path, secret: str) -> None:
        plan, findings = {}, grading.read_findings(dumped)
        for index, check in tests.items():
            made = [e for e in self._calls.get(id(nb.cells[index]), []) if e.get("check") == check]
            if made:
                plan[check] = made[-1]["call"]
        clean = grading.grade_clean(dumped, plan, secret, timeout=self.check_timeout) \
            if plan and findings is not None else {}
        learner = [cell.source for cell in nb.cells if cell.cell_type == "code"
                   and (cell.get("metadata", {}).get("nbgrader", {}).get("solution") or not _grade_id(cell))]
        tampering = grading.tampering(learner, findings, clean)
        for index, check in tests.items():
            nb.cells[index].outputs = _outputs(check, clean.get(check), tampering, findings is None)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = [_learner_facing(o, self.timeout) for o in cell.get("outputs", [])]


def _outputs(check: str, result: dict | None, tampering: list[str], no_dump: bool) -> list:
    """The test cell's outputs: the clean check's report, and an error output unless it passed."""
    exercise = check.removeprefix("check_")
    if result is None or result.get("status") == "not run":
        why = ("the notebook did not reach its end, so nothing could be graded" if no_dump else
               f"this cell's check of `{exercise}` did not run")
        text, summary = "", f"{exercise}: not graded: {why}"
    else:
        text = result.get("report") or ""
        status = result.get("status")
        if status == "pass":
            summary = ""
        elif status == "not attempted":
            summary = f"{exercise}: not attempted (the function still raises NotImplementedError)"
        else:
            summary = f"{exercise}: {result.get('passed') or 0} of {result.get('total') or 0} cases pass" \
                + (f": {result['mistake']}" if result.get("mistake") else "")
            if grading.memorised(result):
                public = result["total"] - result["hidden"]
                summary += (f" ({grading.MEMORISED}? {result.get('passed')} of the {public} public cases pass, none "
                            "of the fresh hidden ones)")
    header = "Graded in a clean process, with fresh hidden cases:\n"
    if tampering:
        header = (f"Note: this notebook {'; '.join(tampering)}. The grade comes from the course's own checks in "
                  "a clean process, which that does not reach.\n") + header
    outputs = [nbformat.v4.new_output("stream", name="stdout", text=header + text)]
    if summary:
        outputs.append(nbformat.v4.new_output("error", ename="CheckFailed", evalue=summary, traceback=[summary]))
    return outputs


def _machine_paths() -> list[str]:
    """Folders of the grading machine that feedback must not show: the course, the Python, the temp folder."""
    import sys
    folders = {str(Path(__file__).resolve().parents[1]), sys.prefix, sys.base_prefix, tempfile.gettempdir(),
               str(Path.home())}
    return sorted((f for f in folders if f and f != "/"), key=len, reverse=True)


def _learner_facing(output, timeout) -> dict:
    """An output without a traceback into the course's files or a path of the grading machine."""
    if output.get("output_type") == "stream":
        text = output.get("text", "")
        for folder in _machine_paths():
            text = text.replace(folder, "...")
        return nbformat.v4.new_output("stream", name=output.get("name", "stdout"), text=text)
    if output.get("output_type") != "error":
        return output
    if output.get("ename") in ("CellTimeoutError", "TimeoutError") or "timeout" in str(output.get("ename")).lower():
        message = f"did not finish within {timeout} s: an endless loop?"
        return nbformat.v4.new_output("error", ename="TimeLimit", evalue=message, traceback=[message])
    lines = output.get("traceback") or []
    if any(_PATH.search(re.sub(r"\x1b\[[0-9;]*m", "", line)) for line in lines):
        evalue = _PATH.sub("...", str(output.get("evalue", "")))
        return nbformat.v4.new_output("error", ename=output.get("ename", "Error"), evalue=evalue,
                                      traceback=[f"{output.get('ename', 'Error')}: {evalue}"])
    return output
