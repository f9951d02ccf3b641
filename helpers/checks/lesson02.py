"""Checks for lesson 02, the FFN in pure Python over flat row-major lists.

Every matrix is a flat list, row after row (W @ x convention): an n_rows x n_cols matrix M holds element
(i, j) at M[i * n_cols + j]. Each check diagnoses by mutants: the lists of mistakes below are wrong
implementations run on the same cases, and the one whose results the learner's function reproduces is named.
A wrong stride in pure Python raises IndexError for one shape and returns wrong numbers for the other; the
cases are chosen (and tests/test_lesson02_checks.py asserts) so that every mutant's pattern of results and
exceptions differs from every other mutant's and from the reference's.

The lesson asks for lists and loops only, so every check here first reads the learner's function (its
bytecode, and that of the learner's own functions it calls) and refuses NumPy with a message saying where.
"""
from __future__ import annotations

import builtins
import dis
import types

import numpy as np

from helpers import flat
from helpers.checks._core import (Case, Mistake, Report, check_function, close, fmt, is_library_file, run,
                                  vector_problem)
from helpers.checks._verdict import grader, grading

__all__ = ["check_matvec", "check_ffn_forward", "check_transpose"]


def _floats(value) -> list[float]:
    """A valid returned sequence (list, tuple or 1-D array) as a list of floats, for comparing and printing."""
    return [float(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]


def _product(M, v, n_out, at):
    """out[r] = sum over c of M[at(r, c)] * v[c], for r < n_out: a product that reads M through `at`."""
    return [sum(M[at(r, c)] * v[c] for c in range(len(v))) for r in range(n_out)]


def _running(values):
    """Running totals: what a sum gives when its accumulator is not reset for each row."""
    out, total = [], 0.0
    for value in values:
        total += value
        out.append(total)
    return out


def _sequence_problem(value, length, hints=None):
    """Why `value` is not a flat sequence of `length` finite numbers (None when it is), worded to follow
    "your function ..."."""
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, tuple, np.ndarray)):
        return (f"returned a list of {len(value)} lists, a matrix of rows; return one flat list of {length} "
                "numbers")
    problem = vector_problem(value, length, hints)
    if problem is None:
        return None
    if problem.startswith("element"):  # vector_problem's wording for a bad element
        return "returned a sequence whose " + problem
    return problem.replace("returned 1 numbers", "returned 1 number")


# --------------------------------------------------------------------------------------------------------
# The lesson's rule: lists and loops only
# --------------------------------------------------------------------------------------------------------
def _is_numpy(obj) -> bool:
    """The numpy module, one of its submodules, or a function, ufunc or class from it."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__.split(".")[0] == "numpy"
    for owner in (obj, type(obj)):
        module = getattr(owner, "__module__", None)
        if isinstance(module, str) and module.split(".")[0] == "numpy":
            return True
    return False


_LOADS = {"LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_GLOBALS"}


def numpy_uses(fn) -> list[str]:
    """Where `fn` uses NumPy, as "`np.reshape` (line 3 of ffn_forward)", reading its bytecode: the names it
    loads, the modules it imports, and the same for the learner's own functions that it calls (library code,
    such as helpers.flat, is not followed). Empty when it uses none."""
    found: list[str] = []
    seen: set = set()

    def where(code, first_line, lineno):
        return f"line {lineno - first_line + 1} of {code.co_name}" if lineno else code.co_name

    def visit(function):
        code = getattr(function, "__code__", None)
        if code is None or code in seen or is_library_file(code.co_filename):
            return
        seen.add(code)
        names = dict(function.__globals__)
        for cell_name, cell in zip(code.co_freevars, function.__closure__ or ()):
            try:
                names[cell_name] = cell.cell_contents
            except ValueError:  # a cell not filled yet
                pass
        walk(code, names, code.co_firstlineno, code)

    def walk(code, names, first_line, top):
        instructions = list(dis.get_instructions(code))
        for i, ins in enumerate(instructions):
            lineno = ins.positions.lineno if ins.positions else None
            if ins.opname == "IMPORT_NAME" and str(ins.argval).split(".")[0] == "numpy":
                found.append(f"`import {ins.argval}` ({where(top, first_line, lineno)})")
            elif ins.opname in _LOADS and isinstance(ins.argval, str):
                obj = names.get(ins.argval, getattr(builtins, ins.argval, None))
                if _is_numpy(obj):
                    text = ins.argval
                    following = instructions[i + 1] if i + 1 < len(instructions) else None
                    if following is not None and following.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                        text += f".{following.argval}"
                    found.append(f"`{text}` ({where(top, first_line, lineno)})")
                elif isinstance(obj, types.FunctionType):
                    visit(obj)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                walk(const, names, first_line, top)

    visit(fn)
    return list(dict.fromkeys(found))


def _lists_only(title: str, fn, cases, reference, validate) -> bool | None:
    """When `fn` uses NumPy: judge its numbers quietly, report them and the rule, and return False.
    None when it uses no NumPy (the ordinary check then runs)."""
    if not callable(fn):
        return None
    try:
        uses = numpy_uses(fn)
    except Exception:  # reading bytecode must never break a check
        return None
    if not uses:
        return None
    report = Report(title, f"checking {len(cases)} cases and the rule: lists and loops only")
    wrong, first = 0, ""
    for case in cases:
        outcome = run(fn, case.args)
        if outcome.not_implemented:
            return report.not_implemented()
        expected = reference(*case.args.values())
        if outcome.raised:
            problem = outcome.describe_error()
        else:
            problem = validate(outcome.value, case)
            if problem is None and not close(_floats(outcome.value), expected):
                problem = f"returned {fmt(_floats(outcome.value))}, not the expected numbers"
        if problem:
            wrong += 1
            first = first or f"the first, {case.name}: your function {problem}"
    if not wrong:
        report.passed(f"right numbers on all {len(cases)} cases")
    else:
        report.failed("the numbers", f"wrong on {wrong} of {len(cases)} cases; {first}")
    report.failed("lists and loops only", "your function uses NumPy: " + ", ".join(uses[:3])
                  + (", ..." if len(uses) > 3 else ""))
    report.line("Likely mistake: NumPy used where this lesson asks for lists and loops. The exercise is the "
                "indexing that NumPy would do for you (strides, i * n_cols + j): write it with Python lists, "
                "`range` and `[...]` only. Lesson 03 does the same with NumPy.")
    return report.finish(len(cases) + 1, wrong + 1)


# --------------------------------------------------------------------------------------------------------
# Exercise 1: matvec(M, v), the product M @ v of a flat row-major M (len(M) // len(v) rows) with v
# --------------------------------------------------------------------------------------------------------
def _matvec_case(name, rows, v):
    return Case(name, {"M": flat.flatten(rows), "v": [float(t) for t in v]})


# The first case tells every mistake below from the right answer (see FFN_CASES for why that matters).
MATVEC_CASES = [
    _matvec_case("3 x 2, more rows than columns", [[1, 2], [-1, 0.5], [3, -2]], [2, -1]),
    # Three decimals, so the products have six: an answer rounded along the way fails here.
    _matvec_case("2 x 4, more columns than rows, numbers with three decimals",
                 [[0.731, -1.204, 2.018, 0.557], [-1.962, 1.113, 0.049, 2.806]], [1.07, 2.31, -0.983, 1.645]),
    _matvec_case("2 x 2", [[2, -1], [0.5, 3]], [1, -2]),
    _matvec_case("1 x 3, one row: a dot product", [[1, 2, 3]], [4, -5, 6]),
    _matvec_case("3 x 1, one column: v[0] times the column", [[2], [-1], [0.5]], [3]),
]


def _reading(at):
    """M @ v with element (i, j) read from M[at(i, j, n_rows, n_cols)]."""
    def product(M, v):
        n_rows, n_cols = len(M) // len(v), len(v)
        return _product(M, v, n_rows, lambda i, j: at(i, j, n_rows, n_cols))
    return product


MATVEC_MISTAKES = [
    Mistake("the number of rows used as the stride",
            "Row i starts at i * n_cols, where n_cols = len(v) is the length of a row, not at i * n_rows.",
            _reading(lambda i, j, n_rows, n_cols: i * n_rows + j)),
    Mistake("M read column by column (M[j * n_rows + i])",
            "M is stored row after row: element (i, j) is M[i * n_cols + j]. M[j * n_rows + i] is the "
            "column-major layout, which reads the transpose.",
            _reading(lambda i, j, n_rows, n_cols: j * n_rows + i)),
    Mistake("the row offset i * n_cols left out, so every output uses row 0",
            "Output i is row i times v: add i * n_cols to the index, M[i * n_cols + j].",
            _reading(lambda i, j, n_rows, n_cols: j)),
    Mistake("the running sum is not reset for each row",
            "Start each output from 0: put `total = 0` inside the loop over rows, not before it.",
            lambda M, v: _running(flat.matvec(M, v))),
]


def _matvec_problem(value, case):
    n_cols = len(case.args["v"])
    n_rows = len(case.args["M"]) // n_cols
    hints = {n_cols: f"{n_cols} is the number of columns (the length of v); M @ v has one number per "
                     f"row of M, here {n_rows}"} if n_cols != n_rows else {}
    return _sequence_problem(value, n_rows, hints)


@grader
def check_matvec(fn) -> bool:
    """Grade `matvec(M, v)`: M @ v for a flat row-major M with len(v) columns and len(M) // len(v) rows."""
    refused = _lists_only("matvec", fn, MATVEC_CASES, flat.matvec, _matvec_problem)
    if refused is not None:
        return refused
    return check_function(
        "matvec", fn, MATVEC_CASES, flat.matvec, _matvec_problem, MATVEC_MISTAKES, normalize=_floats,
        fallback_hint="output i = sum over j of M[i * n_cols + j] * v[j], with n_cols = len(v) and "
                      "n_rows = len(M) // n_cols.")


# --------------------------------------------------------------------------------------------------------
# Exercise 2, the seed exercise: ffn_forward(x, W1, b1, W2, b2) = W2 @ relu(W1 @ x + b1) + b2
# W1 is H x D and W2 is D x H, flat row-major; D = len(x), H = len(b1).
# --------------------------------------------------------------------------------------------------------
def _ffn_case(name, x, W1, b1, W2, b2):
    return Case(name, {"x": x, "W1": W1, "b1": b1, "W2": W2, "b2": b2})


# Non-square cases come first. When a case fails, the diagnosis falls back to the mutants that agree with
# the learner on the first failing case; on these two every mutant differs from the reference, so a function
# that is right but fails for another reason (an input changed in place) is not misdiagnosed.
FFN_CASES = [
    _ffn_case("H > D: D = 2 expands to H = 8, like d_ff = 4 d",
              [0.5, 2.0],
              [0.1, 0.9, 1.4, 0.8, 0.7, 0.7, -1.2, -0.4, 0.5, 0.8, -1.5, -0.7, -0.2, 0.6, -0.8, 1.1],
              [-0.5, 0.8, 0.7, 0.9, 0.1, 0.2, -0.4, 0.4],
              [0.0, -0.3, 1.4, -1.5, -0.1, 0.7, -0.3, -1.2, -0.7, -0.7, 1.4, -0.9, 1.2, -0.6, 0.1, 0.3],
              [-1.0, 0.1]),
    # Three decimals, so the outputs have nine: an answer rounded anywhere along the way fails here.
    _ffn_case("H < D: D = 4 narrows to H = 3, numbers with three decimals",
              [0.553, 0.218, -0.058, -2.319],
              [0.431, -2.126, 0.91, 0.606, 0.83, 0.828, 0.299, -0.535, -0.307, 1.508, -0.582, -0.228],
              [-0.725, -0.517, -0.307],
              [0.257, -0.294, -0.355, -0.617, 0.09, -1.344, 0.052, 1.31, -0.767, -0.045, 2.817, -0.993],
              [-1.621, -0.427, 1.807, 2.035]),
    _ffn_case("square D = H = 3, not symmetric, with biases and a negative output",
              [-0.7, -0.8, 0.4],
              [-0.1, 0.2, 0.8, 1.2, 1.0, -0.5, -0.5, -0.2, 1.0], [0.8, 1.0, 0.1],
              [1.4, -0.2, -0.8, 0.7, 1.4, 0.2, -0.6, -0.2, -1.4], [0.4, 1.0, -0.3]),
    # Lesson 01's 2 x 2 trace: symmetric W1, W2 = I, zero biases, output [0, 2] >= 0. Every mistake below
    # gives the right answer here (the notebook shows it), so it comes last.
    _ffn_case("square D = H = 2, lesson 01's trace x = [1, -1]",
              [1.0, -1.0], [1.0, 1.0, 1.0, -1.0], [0.0, 0.0], [1.0, 0.0, 0.0, 1.0], [0.0, 0.0]),
]


def _random_ffn_case(name, D, H, seed):
    rng = np.random.default_rng(seed)
    return _ffn_case(name, *(rng.normal(size=n).tolist() for n in (D, H * D, H, D * H, D)))


# Run only while the work is graded (make grade, nbgrader autograde): full-precision random networks in the
# shapes at the edges, D = 1 (W2 a single row) and H = 1 (a single hidden unit), and a larger one. A function
# fitted to the public cases (their numbers or shapes) fails here.
FFN_HIDDEN = [
    _random_ffn_case("hidden: D = 1 expands to H = 7, random numbers", 1, 7, seed=101),
    _random_ffn_case("hidden: D = 6 through a single hidden unit, H = 1", 6, 1, seed=102),
    _random_ffn_case("hidden: D = 5 expands to H = 20, random numbers", 5, 20, seed=103),
]


def _strided(at1, at2):
    """The forward pass with W1[at1(i, j, D, H)] and W2[at2(k, i, D, H)] in place of the right indices."""
    def forward(x, W1, b1, W2, b2):
        D, H = len(x), len(b1)
        z = flat.add(_product(W1, x, H, lambda i, j: at1(i, j, D, H)), b1)         # (H,)
        return flat.add(_product(W2, flat.relu(z), D, lambda k, i: at2(k, i, D, H)), b2)  # (D,)
    return forward


def _identity(z):
    return list(z)


_STRIDE_FIX = ("W1 is H x D, so its row i starts at i * D; W2 is D x H, so its row k starts at k * H. "
               "Each matrix needs its own stride, the length of its rows. Square cases (H = D) cannot tell "
               "the two apart, which is why they passed.")

FFN_MISTAKES = [
    Mistake("one stride, D, used for both matrices", _STRIDE_FIX + " You used D for W2 as well.",
            _strided(lambda i, j, D, H: i * D + j, lambda k, i, D, H: k * D + i)),
    Mistake("one stride, H, used for both matrices", _STRIDE_FIX + " You used H for W1 as well.",
            _strided(lambda i, j, D, H: i * H + j, lambda k, i, D, H: k * H + i)),
    Mistake("the two strides swapped: H for W1 and D for W2",
            _STRIDE_FIX + " You used each matrix's number of rows as its stride.",
            _strided(lambda i, j, D, H: i * H + j, lambda k, i, D, H: k * D + i)),
    Mistake("W1 read transposed",
            "W1 is H x D: unit i's weights are W1[i*D : (i+1)*D], so z[i] = sum over j of W1[i*D + j] * x[j]. "
            "W1[j*H + i] reads it as D x H, the x @ W layout.",
            _strided(lambda i, j, D, H: j * H + i, lambda k, i, D, H: k * H + i)),
    Mistake("W2 read transposed",
            "W2 is D x H: output k uses row k, W2[k*H : (k+1)*H], so y[k] = sum over i of W2[k*H + i] * h[i] "
            "+ b2[k]. W2[i*D + k] reads it as H x D, the x @ W layout.",
            _strided(lambda i, j, D, H: i * D + j, lambda k, i, D, H: i * D + k)),
    Mistake("both matrices read transposed, in the x @ W layout",
            "This exercise stores W1 as H x D and W2 as D x H (the W @ x convention): element (i, j) of W1 "
            "is W1[i*D + j] and element (k, i) of W2 is W2[k*H + i].",
            _strided(lambda i, j, D, H: j * H + i, lambda k, i, D, H: i * D + k)),
    Mistake("an activation after W2",
            "ReLU belongs between the two linears only. The output W2 h + b2 must stay signed: the block "
            "adds it to x, and a clamped output could never push a coordinate of x down.",
            lambda x, W1, b1, W2, b2: flat.relu(flat.ffn_forward(x, W1, b1, W2, b2))),
    Mistake("the activation moved after W2 instead of between the linears",
            "Apply ReLU to z = W1 x + b1 (the hidden vector), and not to the output, which must stay signed.",
            lambda x, W1, b1, W2, b2: flat.relu(flat.ffn_forward(x, W1, b1, W2, b2, activation=_identity))),
    Mistake("the activation missing",
            "Apply ReLU to the hidden vector: h[i] = max(0, z[i]) before multiplying by W2.",
            lambda x, W1, b1, W2, b2: flat.ffn_forward(x, W1, b1, W2, b2, activation=_identity)),
    Mistake("b1 missing", "Add b1[i] to each hidden pre-activation: z[i] = row i of W1 . x + b1[i], then ReLU.",
            lambda x, W1, b1, W2, b2: flat.ffn_forward(x, W1, [0.0] * len(b1), W2, b2)),
    Mistake("b2 missing", "Add b2[k] to each output: y[k] = row k of W2 . h + b2[k].",
            lambda x, W1, b1, W2, b2: flat.ffn_forward(x, W1, b1, W2, [0.0] * len(b2))),
    Mistake("b1 added after the activation",
            "The bias is part of the pre-activation: h = relu(W1 x + b1), not relu(W1 x) + b1.",
            lambda x, W1, b1, W2, b2: flat.add(flat.matvec(W2, flat.add(flat.relu(flat.matvec(W1, x)), b1)),
                                               b2)),
    Mistake("the biases added inside the inner loop, once per term",
            "Add b1[i] (and b2[k]) once per row, after the loop over the row's products, not inside it.",
            lambda x, W1, b1, W2, b2: flat.ffn_forward(x, W1, [len(x) * b for b in b1], W2,
                                                       [len(b1) * b for b in b2])),
    Mistake("the running sum is not reset for each row",
            "Start each row's sum from 0: put `total = 0` inside the loop over rows, not before it.",
            lambda x, W1, b1, W2, b2: flat.add(_running(flat.matvec(
                W2, flat.relu(flat.add(_running(flat.matvec(W1, x)), b1)))), b2)),
    Mistake("x added to the output",
            "Return W2 relu(W1 x + b1) + b2 alone. The residual x + FFN(x) belongs to the block around the "
            "FFN, which adds x itself; adding it here too would count x twice.",
            lambda x, W1, b1, W2, b2: flat.add(x, flat.ffn_forward(x, W1, b1, W2, b2))),
]


def _ffn_problem(value, case):
    D, H = len(case.args["x"]), len(case.args["b1"])
    hints = {H: f"{H} is H, the hidden size: this looks like the hidden vector relu(W1 x + b1). Multiply it "
                f"by W2 and add b2 to get back to D = {D} numbers"} if H != D else {}
    return _sequence_problem(value, D, hints)


@grader
def check_ffn_forward(fn) -> bool:
    """Grade `ffn_forward(x, W1, b1, W2, b2)`: W2 @ relu(W1 @ x + b1) + b2 with flat row-major W1 (H x D) and
    W2 (D x H), D = len(x), H = len(b1), returning D numbers."""
    refused = _lists_only("ffn_forward", fn, FFN_CASES + (FFN_HIDDEN if grading() else []), flat.ffn_forward,
                          _ffn_problem)
    if refused is not None:
        return refused
    return check_function(
        "ffn_forward", fn, FFN_CASES, flat.ffn_forward, _ffn_problem, FFN_MISTAKES, normalize=_floats,
        hidden=FFN_HIDDEN,
        fallback_hint="z[i] = sum over j of W1[i*D + j] * x[j] + b1[i]; h[i] = max(0, z[i]); "
                      "y[k] = sum over i of W2[k*H + i] * h[i] + b2[k], with no ReLU on y.")


# --------------------------------------------------------------------------------------------------------
# Exercise 3: transpose(M, n_rows, n_cols), from one convention's layout to the other's
# --------------------------------------------------------------------------------------------------------
def _labelled(n_rows, n_cols):
    """A matrix whose element (i, j) reads as the two digits i+1, j+1: 11, 12, ... then 21, 22, ..."""
    return [float(10 * (i + 1) + (j + 1)) for i in range(n_rows) for j in range(n_cols)]


TRANSPOSE_CASES = [
    Case(f"{r} x {c}" + note, {"M": _labelled(r, c), "n_rows": r, "n_cols": c})
    for r, c, note in ((2, 3, ", a wide matrix"), (3, 2, ", a tall matrix"), (3, 3, ", square"),
                       (1, 4, ", one row"), (4, 1, ", one column"))
]

TRANSPOSE_MISTAKES = [
    Mistake("M returned in its original order",
            "Two slips give this: the loops the wrong way round (i outside, j inside) while reading "
            "M[i * n_cols + j], or the loops the right way round while reading M[j * n_rows + i], which is "
            "where element (i, j) goes in the output, not where it sits in M. Loop over j (the output's rows, "
            "M's columns) outside and i inside, and read M[i * n_cols + j].",
            lambda M, n_rows, n_cols: list(M)),
    Mistake("M read with the number of rows as its stride",
            "In M, row i starts at i * n_cols: element (i, j) is M[i * n_cols + j], not M[i * n_rows + j].",
            lambda M, n_rows, n_cols: [M[i * n_rows + j] for j in range(n_cols) for i in range(n_rows)]),
    Mistake("n_rows and n_cols swapped",
            "M has n_rows rows of n_cols numbers each; check the order of the two arguments and which loop "
            "runs over which.",
            lambda M, n_rows, n_cols: flat.transpose(M, n_cols, n_rows)),
]


def _transpose_problem(value, case):
    return _sequence_problem(value, case.args["n_rows"] * case.args["n_cols"])


@grader
def check_transpose(fn) -> bool:
    """Grade `transpose(M, n_rows, n_cols)`: the flat row-major n_cols x n_rows transpose of a flat row-major
    n_rows x n_cols matrix M."""
    refused = _lists_only("transpose", fn, TRANSPOSE_CASES, flat.transpose, _transpose_problem)
    if refused is not None:
        return refused
    return check_function(
        "transpose", fn, TRANSPOSE_CASES, flat.transpose, _transpose_problem, TRANSPOSE_MISTAKES,
        normalize=_floats, describe=lambda v: fmt(v, max_items=12),
        fallback_hint="element (i, j) of M is M[i * n_cols + j]; it becomes element (j, i) of the output, "
                      "at position j * n_rows + i.")
