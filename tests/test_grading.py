"""helpers.grading: the clean process the verdicts come from, and the reading of a notebook for forgeries.

The whole path through a kernel and nbgrader is tests/test_grade.py and tests/test_forgeries.py; here each part
is tested on its own, quickly: what scan() flags (and that no cell of the course's own notebooks is flagged),
what fingerprint() notices, and grade_clean() on functions pickled as the kernel's dump pickles them.
"""
import linecache
import pickle
import textwrap
from pathlib import Path

import cloudpickle
import nbformat
import pytest

from helpers import grading
from helpers.checks import _verdict

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("cell, finding", [
    ('import os\nos.environ.pop("NBGRADER_EXECUTION", None)', "changes os.environ"),
    ('import os\ndel os.environ["FFN_GRADING"]', "changes os.environ"),
    ("import os\nos.environ.clear()", "changes os.environ"),
    ("%env NBGRADER_EXECUTION=", "changes os.environ (%env)"),
    ("%set_env FFN_GRADING 0", "changes os.environ (%env)"),
    ("import os\nos.environ.update({'FFN_GRADING': '0'})", "changes os.environ"),
    ("check_ffn_forward = check_matvec = lambda f: True", "rebinds check_ffn_forward"),
    ("def check_matvec(fn):\n    return True", "redefines check_matvec"),
    ("from helpers.checks import check_gelu as check_silu", "rebinds check_silu"),
    ("import helpers.checks as hc\nhc.check_matvec = print", "changes hc.check_matvec"),
    ("import helpers.checks._verdict as v\nv._verdict = None", "changes v._verdict"),
    ("import helpers\nsetattr(helpers.checks, 'check_gelu', print)", "changes helpers.checks"),
    ("import numpy as np\nnp.allclose = lambda *a, **k: True", "changes np.allclose"),
    ("get_ipython().set_custom_exc((Exception,), lambda *a, **k: None)", "errors silenced (set_custom_exc)"),
    ("import sys\nsys.setprofile(None)", "the checks' watch blinded"),
])
def test_scan_names_each_one_line_forgery(cell, finding):
    assert finding in grading.scan([cell])


@pytest.mark.parametrize("cell", [
    'import os\nos.environ["OMP_NUM_THREADS"] = "1"',     # an honest setting, not a grading switch
    "%env OMP_NUM_THREADS=1",
    "%env",
    "import os\nos.environ.update(PYTHONHASHSEED='0')",
    "def check_small():\n    return True",                # a learner's own test, not one of the course's checks
    "checks = {}\nchecks['matvec'] = True",
    "checked = check_ffn_forward(ffn_forward)",
    "import numpy as np\nx = np.zeros(3)\nx[0] = 1",
    "def ffn(x):\n    return x",
    "this is not python (",
])
def test_scan_leaves_honest_cells_alone(cell):
    assert grading.scan([cell]) == []


def test_no_cell_of_the_course_is_read_as_a_forgery():
    """Every code cell of solutions/ and notebooks/, as a learner would hand it in: nothing flagged."""
    for folder in ("solutions", "notebooks"):
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
            assert grading.scan(cells) == [], path.name


def test_fingerprint_sees_a_replaced_check_or_verdict_method():
    before = grading.fingerprint()
    original = _verdict.Verdict.__bool__
    try:
        _verdict.Verdict.__bool__ = lambda self: True
        assert "helpers.checks._verdict.Verdict.__bool__" in grading.changed(before, grading.fingerprint())
    finally:
        _verdict.Verdict.__bool__ = original
    assert grading.changed(before, grading.fingerprint()) == []


# ---- grade_clean on functions pickled by value, as the kernel's dump pickles them --------------------------
def learner_function(source: str, name: str, cell: str):
    """`name` from `source` as a notebook cell defines it: in a module that cannot be imported (so cloudpickle
    copies it by value) and with its source in linecache under a name that is no file, as IPython files it."""
    filename = f"/tmp/ipykernel_0/{cell}.py"
    source = textwrap.dedent(source)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "learner_notebook"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def dump_file(tmp_path, functions: dict) -> Path:
    sources = {name: entry for name, entry in linecache.cache.items() if name.startswith("/tmp/ipykernel_0/")}
    data = {"findings": [], "sources": sources,
            "calls": {check: {1: (fn.__name__, cloudpickle.dumps(fn), "")} for check, fn in functions.items()}}
    path = tmp_path / "functions.pkl"
    path.write_bytes(pickle.dumps(data))
    for name in sources:                         # the clean process must not lean on this process's cache
        linecache.cache.pop(name, None)
    return path


RIGHT_MATVEC = '''
def matvec(M, v):
    rows = len(M) // len(v)
    return [sum(M[i * len(v) + j] * v[j] for j in range(len(v))) for i in range(rows)]
'''
FIRST_THREE_ROWS = RIGHT_MATVEC.replace("for i in range(rows)]", "for i in range(min(rows, 3))]")
LOOP = "def transpose(M, n_rows, n_cols):\n    while True:\n        pass\n"
DIES = "def gelu(z):\n    import os\n    os._exit(7)\n"
PATCHES = '''
def silu(z):
    import helpers.checks._verdict as v
    v.Verdict.__bool__ = lambda self: True
    raise NotImplementedError
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("clean")
    functions = {"check_matvec": learner_function(FIRST_THREE_ROWS, "matvec", "c1"),
                 "check_transpose": learner_function(LOOP, "transpose", "c2"),
                 "check_gelu": learner_function(DIES, "gelu", "c3"),
                 "check_silu": learner_function(PATCHES, "silu", "c4")}
    dump = dump_file(tmp, functions)
    plan = {check: 1 for check in functions} | {"check_swiglu_ffn": None}
    return grading.grade_clean(dump, plan, "a secret", timeout=15)


def test_the_hidden_cases_run_in_the_clean_process(graded):
    """Only the first three rows: every public case has three rows or fewer, a drawn hidden one more."""
    result = graded["check_matvec"]
    assert result["status"] == "fail" and result["hidden"] >= 1 and result["hidden_passed"] == 0
    assert result["passed"] == result["total"] - result["hidden"]


def test_an_endless_loop_costs_its_exercise_only(graded):
    result = graded["check_transpose"]
    assert result["status"] == "fail" and result["mistake"] == "did not finish within 15 s: an endless loop?"


def test_a_function_that_ends_the_process_costs_its_exercise_only(graded):
    assert graded["check_gelu"]["status"] == "fail"
    assert "the grading process ended while checking it (exit code 7" in graded["check_gelu"]["mistake"]
    assert graded["check_silu"]["status"] == "not attempted"         # the process was replaced and went on


def test_a_function_that_patches_the_checks_while_checked_is_caught(graded):
    assert graded["check_silu"]["findings"] == ["helpers.checks._verdict.Verdict.__bool__ was replaced while "
                                                "the check ran"]


def test_an_exercise_with_no_call_is_not_run(graded):
    assert graded["check_swiglu_ffn"]["status"] == "not run"


def test_the_clean_process_reads_the_cells_source(tmp_path):
    """Lesson 06 reads the learner's source: the clean process has it from the dump, not from this process."""
    copy_w2 = learner_function('''
        import numpy as np
        def ffn_as_sum(x, W1, b1, W2, b2):
            h = np.maximum(x @ W1 + b1, 0)
            return h @ np.copy(W2) + b2
        ''', "ffn_as_sum", "c5")
    result = grading.grade_clean(dump_file(tmp_path, {"check_ffn_as_sum": copy_w2}), {"check_ffn_as_sum": 1},
                                 "a secret", timeout=60)["check_ffn_as_sum"]
    assert result["status"] == "fail" and "whole" in result["mistake"], result


def test_a_rebinding_is_said_once():
    found = grading.tampering(["check_matvec = lambda f: True"], ["check_matvec was rebound in the notebook",
                                                                  "helpers.checks.lesson02.check_gelu was replaced"],
                              {"check_matvec": {"findings": []}})
    assert found == ["rebinds check_matvec", "helpers.checks.lesson02.check_gelu was replaced"]


def test_a_copy_of_the_reference_is_refused_however_it_was_made(capsys):
    """exec of the reference's source, or its code object in a new function: the same code, refused as a copy."""
    import inspect
    import types

    from helpers import flat
    from helpers.checks import check_ffn_forward, check_matvec
    namespace = dict(vars(flat))
    exec(inspect.getsource(flat.matvec), namespace)            # compiled again, in "<string>"
    verdict = check_matvec(namespace["matvec"])
    assert not verdict and verdict.mistake == "a copy of the course's reference was checked, not the learner's function"
    assert "a copy of the course's own `helpers.flat.matvec`" in capsys.readouterr().out
    rebuilt = types.FunctionType(flat.ffn_forward.__code__, vars(flat), "ffn_forward", flat.ffn_forward.__defaults__)
    assert not check_ffn_forward(rebuilt)

    def ffn_forward(x, W1, b1, W2, b2):                         # the copy called from the learner's own line
        return rebuilt(x, W1, b1, W2, b2)
    verdict = check_ffn_forward(ffn_forward)
    assert not verdict and verdict.mistake.startswith("calls the course's own")


def test_no_solution_is_taken_for_a_copy_of_the_reference():
    """A learner who writes what solutions/ does is never refused as a copy of the course's reference."""
    from helpers.checks._verdict import copied_from
    import helpers.block, helpers.collapse, helpers.ffn, helpers.flat, helpers.kv_memory, helpers.moe  # noqa: E401,F401  (indexed)
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code" or "### BEGIN SOLUTION" not in cell.source:
                continue
            code = compile(cell.source, f"/tmp/ipykernel_0/{path.stem}.py", "exec")
            for inner in code.co_consts:
                if hasattr(inner, "co_code"):
                    assert copied_from(inner) == "", (path.name, inner.co_name)


@pytest.mark.parametrize("result, none_fresh, memorised", [
    ({"status": "fail", "passed": 7, "total": 10, "hidden": 3, "hidden_passed": 0}, True, True),    # a table
    ({"status": "fail", "passed": 6, "total": 10, "hidden": 3, "hidden_passed": 0}, True, True),    # all but one
    ({"status": "fail", "passed": 3, "total": 10, "hidden": 3, "hidden_passed": 0}, True, False),   # a real bug
    ({"status": "fail", "passed": 8, "total": 10, "hidden": 3, "hidden_passed": 1}, False, False),
    ({"status": "fail", "passed": 5, "total": 7, "hidden": 0, "hidden_passed": 0}, False, False),   # no hidden
    ({"status": "pass", "passed": 10, "total": 10, "hidden": 3, "hidden_passed": 3}, False, False),
])
def test_no_fresh_case_passed_and_memorised(result, none_fresh, memorised):
    assert grading.no_fresh_case_passed(result) is none_fresh
    assert grading.memorised(result) is memorised
