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
import copy
import dis
import math
import sys
import types

import numpy as np

from helpers import flat
from helpers.checks._core import (Case, Mistake, Observed, Report, _agree, check_function, close_float64, fmt,
                                  is_library_file, run, vector_problem)
from helpers.checks._verdict import grader, hidden_cases, hidden_rng

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
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):   # float() of an int beyond float64's range raises OverflowError
            if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 2 ** 1024:
                return (f"returned a sequence whose element {i} is an int too large for a float "
                        f"({len(str(abs(v)))} digits); look for a runaway product or sum")
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
# Names that reach NumPy without `import numpy` or `np.` in sight: a dynamic import, or the `np` that another
# module (helpers.ffn, say) holds as an attribute. A loops-only answer has no use for any of them.
_DYNAMIC_IMPORTS = {"__import__", "importlib", "import_module"}
_NUMPY_ATTRIBUTES = {"np", "numpy"}


def _learner_class_functions(cls) -> list:
    """The functions a learner's own class defines (methods, static and class methods, properties)."""
    found = []
    for value in vars(cls).values():
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        elif isinstance(value, property):
            found += [f for f in (value.fget, value.fset) if f is not None]
            continue
        if isinstance(value, types.FunctionType):
            found.append(value)
    return found


def numpy_uses(fn) -> list[str]:
    """Where `fn` uses NumPy, as "`np.reshape` (line 3 of ffn_forward)", reading its bytecode: the names it
    loads, the modules it imports, its default arguments, a dynamic import (`__import__`, importlib), an
    attribute named np or numpy (`helpers.ffn.np`), and the same for the learner's own functions and classes
    that it uses (library code, such as helpers.flat, is not followed). Empty when it uses none."""
    found: list[str] = []
    seen: set = set()

    def where(code, first_line, lineno):
        return f"line {lineno - first_line + 1} of {code.co_name}" if lineno else code.co_name

    def visit(function):
        code = getattr(function, "__code__", None)
        if code is None or code in seen or is_library_file(code.co_filename):
            return
        seen.add(code)
        defaults = list(getattr(function, "__defaults__", None) or ())
        names_with_defaults = code.co_varnames[code.co_argcount - len(defaults):code.co_argcount]
        kwdefaults = getattr(function, "__kwdefaults__", None) or {}
        for name, value in [*zip(names_with_defaults, defaults), *kwdefaults.items()]:
            if _is_numpy(value):
                found.append(f"`{name}=...`, a default argument holding NumPy ({where(code, code.co_firstlineno, 0)})")
        names = dict(function.__globals__)
        for cell_name, cell in zip(code.co_freevars, function.__closure__ or ()):
            try:
                names[cell_name] = cell.cell_contents
            except ValueError:  # a cell not filled yet
                pass
        walk(code, names, code.co_firstlineno, code)

    def walk(code, names, first_line, top, enclosing=frozenset()):
        # A name a nested block (a comprehension, a lambda, an inner def) reads from the function around it is
        # that function's local, an argument perhaps: never the global of the same name (a scratch cell's
        # `v = np.array(...)` says nothing about the learner's v).
        enclosing = enclosing | set(code.co_varnames) | set(code.co_cellvars)
        instructions = list(dis.get_instructions(code))
        for i, ins in enumerate(instructions):
            lineno = ins.positions.lineno if ins.positions else None
            if ins.opname == "IMPORT_NAME" and str(ins.argval).split(".")[0] in ("numpy", "importlib"):
                found.append(f"`import {ins.argval}` ({where(top, first_line, lineno)})")
            elif ins.opname in ("IMPORT_FROM", "LOAD_ATTR", "LOAD_METHOD") and ins.argval in _NUMPY_ATTRIBUTES:
                owner = instructions[i - 1].argval if i else None
                text = f"{owner}.{ins.argval}" if isinstance(owner, str) and owner.isidentifier() else ins.argval
                found.append(f"`{text}` ({where(top, first_line, lineno)})")
            elif ins.opname in _LOADS and isinstance(ins.argval, str):
                if ins.opname in ("LOAD_DEREF", "LOAD_CLASSDEREF") and ins.argval in enclosing:
                    continue                            # a local of this block or of one around it
                obj = names.get(ins.argval, getattr(builtins, ins.argval, None))
                dynamic = ins.argval in _DYNAMIC_IMPORTS or _is_dynamic_import(obj)
                if dynamic or _is_numpy(obj):
                    text = ins.argval
                    following = instructions[i + 1] if i + 1 < len(instructions) else None
                    if following is not None and following.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                        text += f".{following.argval}"
                    found.append(f"`{text}`" + (", an import at run time" if dynamic else "")
                                 + f" ({where(top, first_line, lineno)})")
                elif isinstance(obj, types.FunctionType):
                    visit(obj)
                elif isinstance(obj, types.MethodType) and isinstance(obj.__func__, types.FunctionType):
                    visit(obj.__func__)
                elif isinstance(obj, type):             # visit() skips the library's own classes
                    for method in _learner_class_functions(obj):
                        visit(method)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                walk(const, names, first_line, top, enclosing)

    visit(fn)
    return list(dict.fromkeys(found))


def _is_dynamic_import(obj) -> bool:
    """importlib (under any name), one of its functions, or the builtin __import__."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__.split(".")[0] == "importlib"
    if obj is builtins.__import__:
        return True
    module = getattr(obj, "__module__", None)
    return callable(obj) and isinstance(module, str) and module.split(".")[0] == "importlib"


def _numpy_calls(fn, args) -> list[str]:
    """Where `fn`, run on `args`, calls NumPy from the learner's own code: whatever route the bytecode hides
    (getattr, sys.modules, an object built elsewhere), a call into NumPy from a learner's line is seen here.
    Calls that the course library makes for its own purposes are not counted."""
    found: list[str] = []

    def place(frame):
        code = frame.f_code
        return f"line {frame.f_lineno - code.co_firstlineno + 1} of {code.co_name}"

    def learner(frame):
        return frame is not None and not is_library_file(frame.f_code.co_filename)

    def profile(frame, event, arg):
        if event == "c_call" and learner(frame) and (_is_numpy(arg) or _is_numpy(getattr(arg, "__self__", None))):
            found.append(f"`{getattr(arg, '__name__', 'a NumPy function')}` ({place(frame)})")
        elif event == "call" and frame.f_globals.get("__name__", "").split(".")[0] == "numpy" \
                and learner(frame.f_back):
            found.append(f"`{frame.f_code.co_name}` ({place(frame.f_back)})")

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        fn(*copy.deepcopy(list(args.values())))
    except BaseException as error:  # the learner's code may raise anything; only KeyboardInterrupt goes on
        if isinstance(error, KeyboardInterrupt):
            raise
    finally:
        sys.setprofile(previous)
    return list(dict.fromkeys(found))


def _lists_only(title: str, fn, cases, reference, validate) -> bool | None:
    """When `fn` uses NumPy: judge its numbers quietly, report them and the rule, and return False.
    None when it uses no NumPy (the ordinary check then runs)."""
    if not callable(fn):
        return None
    try:
        uses = numpy_uses(fn)
    except Exception:  # reading bytecode must never break a check
        uses = []
    if not uses:   # what the bytecode hides, a run shows: a call into NumPy from the learner's own lines
        for case in cases:
            uses += [use for use in _numpy_calls(fn, case.args) if use not in uses]
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
            if problem is None and not close_float64(_floats(outcome.value), expected):
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
# Diagnoses shared by the three checks
# --------------------------------------------------------------------------------------------------------
_ROUNDED_FIX = ("Return the numbers as they come out of the sums: rounding belongs to printing only "
                "(f\"{value:.3f}\"), not to the value a function returns, which the next computation reads.")
_PRECISION_FIX = ("Your numbers agree with the reference to about {digits} significant digits, not to the 15 "
                  "or so that Python floats carry: something along the way loses precision, such as a partial "
                  "result rounded, a value stored in single precision (float32, array('f'), struct 'f'), or a "
                  "small number treated as 0. Keep every value a Python float from start to end.")


def _outputs(fn, cases, validate):
    """fn's valid results on the cases as lists of floats (None where it raised or returned something else)."""
    results = []
    for case in cases:
        outcome = run(fn, case.args)
        ok = not outcome.raised and not outcome.mutated and validate(outcome.value, case) is None
        results.append(_floats(outcome.value) if ok else None)
    return results


def _precision_mistakes(fn, cases, reference, validate, variants=()) -> tuple[list[Mistake], list[Mistake]]:
    """Probes of fn's own outputs: (mistakes to try first, mistakes to try last). `variants` are
    (name, fix, function) for a family of mistakes with a parameter (a ReLU threshold of 1e-6 or of 1e-2):
    one that reproduces fn on every case is named. An answer that equals the reference rounded to k decimals
    on every case is named as such; one that only agrees to a few digits on every case it gets wrong is told
    so. When a probe fits, the learner's function is its own mutant."""
    if not callable(fn):
        return [], []
    got = _outputs(fn, cases, validate)
    if any(g is None for g in got):
        return [], []
    expected = [reference(*copy.deepcopy(case.args).values()) for case in cases]
    if all(close_float64(g, e) for g, e in zip(got, expected)):
        return [], []
    for name, fix, variant in variants:
        try:
            if all(close_float64(g, variant(*copy.deepcopy(case.args).values())) for g, case in zip(got, cases)):
                return [Mistake(name, fix, fn)], []
        except Exception:  # a variant that cannot run on a case fits nothing
            continue
    for k in range(0, 13):   # the case of small numbers tells up to 11 decimals from none
        if all(close_float64(g, [round(t, k) for t in e]) for g, e in zip(got, expected)):
            return [Mistake(f"the output rounded to {k} decimal places", _ROUNDED_FIX, fn)], []
    errors = [max((abs(a - b) / max(abs(b), 1e-3) for a, b in zip(g, e)), default=0.0)
              for g, e in zip(got, expected) if len(g) == len(e)]
    if len(errors) == len(got) and 0 < max(errors) < 1e-3:
        digits = max(1, int(-math.log10(max(errors))))
        return [], [Mistake(f"numbers right to only about {digits} significant digits",
                            _PRECISION_FIX.format(digits=digits), fn)]
    return [], []


def _plausible(fn, cases, reference, mistakes, validate, normalize=_floats, compare=close_float64) -> list[Mistake]:
    """The mistakes worth naming for fn: those that reproduce its outcome on every case, or on more than half
    of the cases it gets wrong. One that happens to agree on a single failing case (an off-by-one that leaves
    a 2 x 3 matrix in its original order, say) is not offered as a "Possibly"."""
    if not callable(fn):
        return list(mistakes)
    outcomes, failing = [], []
    for index, case in enumerate(cases):
        outcome = run(fn, case.args)
        normalized = None
        if not outcome.raised and validate(outcome.value, case) is None:
            normalized = normalize(outcome.value)
        outcomes.append((outcome, normalized))
        expected = reference(*copy.deepcopy(case.args).values())
        if outcome.raised or normalized is None or outcome.mutated or not compare(normalized, expected):
            failing.append(index)
    kept = []
    for mistake in mistakes:
        agree = [_agree(o, n, run(mistake.fn, case.args), case, validate, normalize, compare)
                 for (o, n), case in zip(outcomes, cases)]
        if all(agree) or (failing and 2 * sum(agree[i] for i in failing) > len(failing)):
            kept.append(mistake)
    return kept


def _check(title, fn, cases, reference, validate, mistakes, fallback_hint, hidden, describe=fmt,
           variants=(), wrap=lambda fn: fn) -> bool:
    """The rule (lists and loops only), then check_function with this lesson's tight comparison, the precision
    probes and only plausible mistakes. `hidden` builds the hidden cases: they are drawn once, while grading
    only, so that the rule, the probes and the cases judged all see the same ones. `wrap` turns the learner's
    function into the one judged (the rule reads the learner's own code)."""
    drawn = hidden_cases(hidden)
    judged = list(cases) + drawn
    refused = _lists_only(title, fn, judged, reference, validate)
    if refused is not None:
        return refused
    fn = wrap(fn) if callable(fn) else fn
    first, last = _precision_mistakes(fn, judged, reference, validate, variants)
    mistakes = first + _plausible(fn, judged, reference, mistakes, validate) + last
    return check_function(title, fn, cases, reference, validate, mistakes, compare=close_float64, normalize=_floats,
                          describe=describe, fallback_hint=fallback_hint, hidden=lambda: drawn)


def _random_shape(rng, rows, cols):
    """(n_rows, n_cols) drawn from the ranges `rows` and `cols` (inclusive); a range is a pair of ints, or a
    function of n_rows that gives one (more columns than rows, say)."""
    n_rows = int(rng.integers(rows[0], rows[1] + 1))
    low, high = cols(n_rows) if callable(cols) else cols
    return n_rows, int(rng.integers(low, high + 1))


# The kinds of shape the hidden cases of matvec and transpose draw: (what the case name says, rows, columns).
# Every one has 4 rows or more, more than any public matvec case has (3), so that an answer that handles only
# the public cases' sizes (the first 3 rows, say) fails.
_HIDDEN_SHAPES = [
    ("a random tall matrix (more rows than columns, 4 to 9 rows)", (4, 9), lambda r: (2, r - 1)),
    ("a random wide matrix (more columns than rows, 4 to 6 rows and up to 9 columns)", (4, 6), lambda r: (r + 1, 9)),
    ("a random large matrix (10 to 16 rows, 6 to 12 columns)", (10, 16), (6, 12)),
]


def _random_matrices(label, make):
    """One case per kind of _HIDDEN_SHAPES: make(name, rng, n_rows, n_cols), which draws full-precision random
    numbers from rng, hidden_rng of the exercise's label and the kind."""
    cases = []
    for kind, (name, rows, cols) in enumerate(_HIDDEN_SHAPES):
        rng = hidden_rng(f"02 {label} {kind}")
        cases.append(make(f"hidden: {name}", rng, *_random_shape(rng, rows, cols)))
    return cases


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
    # Fractions such as 1/3 and 2/7 have no end to their decimals: an answer rounded to any number of decimals,
    # or computed in float32, is off in the 7th digit or earlier.
    # Small products (v ~ 1e-4) with many digits: an output rounded to 10 or 11 decimals is off by more than
    # the comparison allows.
    _matvec_case("2 x 2 with v ~ 1e-4: small outputs with many digits",
                 [[0.731, -1.204], [2.018, 0.557]], [0.000137913, -0.000219477]),
    _matvec_case("2 x 3, fractions with endless decimals (1/3, -2/7, ...)",
                 [[1 / 3, -2 / 7, 3 / 11], [-5 / 13, 7 / 17, 1 / 19]], [2 / 3, 3 / 7, -5 / 9]),
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
    # n_rows = len(v): right for a square M only; a tall M gets too few outputs, a wide one an IndexError.
    Mistake("the number of rows taken as len(v), as if M were square",
            "len(v) is the number of columns, the length of one row. The number of rows is how many such rows "
            "the flat list holds, len(M) // len(v), and the result has one number per row. The two agree only "
            "for a square M, which is why the 2 x 2 cases passed: a tall M gets too few outputs, and a wide one "
            "runs past the end of the list.",
            lambda M, v: _product(M, v, len(v), lambda i, j: i * len(v) + j)),
]


def _matvec_problem(value, case):
    n_cols = len(case.args["v"])
    n_rows = len(case.args["M"]) // n_cols
    hints = {n_cols: f"{n_cols} is the number of columns (the length of v); M @ v has one number per "
                     f"row of M, here {n_rows}"} if n_cols != n_rows else {}
    return _sequence_problem(value, n_rows, hints)


def _matvec_hidden():
    """Run only while the work is graded: random matrices with more rows (up to 16) than any public case."""
    return _random_matrices("matvec", lambda name, rng, r, c: Case(name, {"M": rng.normal(size=r * c).tolist(),
                                                                          "v": rng.normal(size=c).tolist()}))


@grader
def check_matvec(fn) -> bool:
    """Grade `matvec(M, v)`: M @ v for a flat row-major M with len(v) columns and len(M) // len(v) rows."""
    return _check(
        "matvec", fn, MATVEC_CASES, flat.matvec, _matvec_problem, MATVEC_MISTAKES, hidden=_matvec_hidden,
        fallback_hint="output i = sum over j of M[i * n_cols + j] * v[j]: a row has len(v) numbers, and M "
                      "holds as many rows as len(v) goes into len(M).")


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
    # Lesson 01's 2 x 2 trace: symmetric W1, W2 = I, zero biases, output [0, 2] >= 0. Every mistake below but
    # adding x gives the right answer here (the notebook shows it), so it comes after the others.
    _ffn_case("square D = H = 2, lesson 01's trace x = [1, -1]",
              [1.0, -1.0], [1.0, 1.0, 1.0, -1.0], [0.0, 0.0], [1.0, 0.0, 0.0, 1.0], [0.0, 0.0]),
    # Small numbers (x ~ 1e-4, outputs ~ 5e-4 and 1.6e-4) with many digits: an output rounded to 10 or even
    # 11 decimals is off by more than the comparison allows. Unit 2 is silent (z = -3.9e-4).
    _ffn_case("small numbers, H > D (D = 2, H = 3): x ~ 1e-4, outputs ~ 1e-4 with many digits",
              [0.000137, -0.000219], [0.731, -1.204, 2.018, 0.557, -1.962, 1.113],
              [0.00041237, -0.00005213, 0.00012349], [0.843, -1.517, 0.262, -0.379, 1.046, 2.205],
              [-0.00003117, 0.00002689]),
    # z = [2e-6, -2e-6, 0.75, 1e-10] (W1 x is exactly 0 for the tiny ones, the biases set them): one unit barely
    # on and one barely off with large weights after them, so that a ReLU whose switch is not exactly at 0
    # (t > 1e-3, a leak of 0.01, abs) moves y[0] by 0.001 to 0.1; and y[1] = 0.5 h[0] + h[3] = 1e-6 + 1e-10,
    # so that a threshold anywhere from 1e-10 up shows too.
    _ffn_case("pre-activations of 2e-6, -2e-6 and 1e-10, H > D (D = 2, H = 4): ReLU switches exactly at 0",
              [1.0, -0.5], [0.5, 1.0, 0.25, 0.5, 1.0, -1.0, 1.0, 2.0], [2e-6, -2e-6, -0.75, 1e-10],
              [5e4, 5e4, -1.0, 0.0, 0.5, 0.0, 0.0, 1.0], [0.25, 0.0]),
]


def _pre_activations(case):
    """z = W1 x + b1 of an ffn_forward case."""
    x, W1, b1 = case.args["x"], case.args["W1"], case.args["b1"]
    return flat.add(flat.matvec(W1, x), b1)


def _random_ffn_case(name, rng, D, H):
    """A full-precision random network, redrawn (at most 100 times, so the same secret always gives the same
    case) until ReLU matters: some unit fires, by at least 0.5, and with H > 1 some unit stays silent, by at
    least 0.5 (for H = 1 the other cases hold the silent units)."""
    for _ in range(100):
        case = _ffn_case(name, *(rng.normal(size=n).tolist() for n in (D, H * D, H, D * H, D)))
        z = _pre_activations(case)
        if max(z) >= 0.5 and (H == 1 or min(z) <= -0.5):
            break
    return case


def _ffn_hidden():
    """Run only while the work is graded (make grade, nbgrader autograde): full-precision random networks in
    the shapes at the edges, D = 1 (W2 a single row) and H = 1 (a single hidden unit, that fires, so that
    W2, b1 and the unit itself all count), and a larger one. A function fitted to the public cases (their
    numbers or shapes) fails here. The labels are the seeds of the fixed cases these replace."""
    shapes = [("hidden: D = 1 expands to a random H (5 to 9), random numbers", 101, (1, 1), (5, 9)),
              ("hidden: a random D (4 to 8) through a single hidden unit that fires, H = 1", 105, (4, 8), (1, 1)),
              ("hidden: a random D (4 to 7) expands to a random H (12 to 24), random numbers", 103, (4, 7), (12, 24))]
    cases = []
    for name, label, D, H in shapes:
        rng = hidden_rng(label)
        cases.append(_random_ffn_case(name, rng, *_random_shape(rng, D, H)))
    return cases


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
            "W1 is H x D, stored row by row: unit i's weights are row i, the D numbers from W1[i*D] on. "
            "W1[j*H + i] reads it as D x H, the x @ W layout.",
            _strided(lambda i, j, D, H: j * H + i, lambda k, i, D, H: k * H + i),
            "So z[i] = sum over j of W1[i*D + j] * x[j]."),
    Mistake("W2 read transposed",
            "W2 is D x H, stored row by row: output k uses row k, the H numbers from W2[k*H] on. "
            "W2[i*D + k] reads it as H x D, the x @ W layout.",
            _strided(lambda i, j, D, H: i * D + j, lambda k, i, D, H: i * D + k),
            "So y[k] = sum over i of W2[k*H + i] * h[i] + b2[k]."),
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


def _switching_at(threshold):
    return lambda x, W1, b1, W2, b2: flat.ffn_forward(
        x, W1, b1, W2, b2, activation=lambda z: [t if t > threshold else 0.0 for t in z])


def _leaking(slope):
    return lambda x, W1, b1, W2, b2: flat.ffn_forward(
        x, W1, b1, W2, b2, activation=lambda z: [max(slope * t, t) for t in z])


_THRESHOLD_FIX = ("relu(z) = max(0, z): every positive z passes, however small (2e-6 and 1e-10 in the last "
                  "case), and every negative one becomes exactly 0. A threshold such as `z > 1e-6` drops the "
                  "units that sit just above 0.")
# Activations a little off ReLU, each with its parameter: the learner's function is compared with each.
FFN_VARIANTS = (
    [("ReLU's switch not exactly at 0", _THRESHOLD_FIX, _switching_at(c))
     for c in (1e-12, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 3e-2, 0.1)]
    + [(f"a leaky ReLU, max({a} z, z), in place of ReLU",
        "This lesson's ReLU is max(0, z): a negative pre-activation becomes exactly 0, not a small multiple "
        "of itself.", _leaking(a)) for a in (0.01, 0.02, 0.05, 0.1, 0.2, 0.3)])


def _ffn_problem(value, case):
    D, H = len(case.args["x"]), len(case.args["b1"])
    x, W1, b1 = case.args["x"], case.args["W1"], case.args["b1"]
    hidden = [max(0.0, b1[i] + sum(W1[i * D + j] * x[j] for j in range(D))) for i in range(H)]
    try:
        is_hidden = H != D and len(value) == H and close_float64([float(v) for v in value], hidden)
    except (TypeError, ValueError, OverflowError):
        is_hidden = False
    if is_hidden:   # checked, not guessed from the length: the words state what the value is
        return Observed(_sequence_problem(value, D, {H: (
            f"{H} is H, the hidden size: this is the hidden vector relu(W1 x + b1). Multiply it by W2 and add "
            f"b2 to get back to D = {D} numbers")}))
    return _sequence_problem(value, D)


@grader
def check_ffn_forward(fn) -> bool:
    """Grade `ffn_forward(x, W1, b1, W2, b2)`: W2 @ relu(W1 @ x + b1) + b2 with flat row-major W1 (H x D) and
    W2 (D x H), D = len(x), H = len(b1), returning D numbers."""
    return _check(
        "ffn_forward", fn, FFN_CASES, flat.ffn_forward, _ffn_problem, FFN_MISTAKES, hidden=_ffn_hidden,
        variants=FFN_VARIANTS,
        fallback_hint=("go through the three steps in order, each matrix with its own row length: the "
                       "pre-activations from W1 (H x D) and b1, ReLU on them only, then the output from W2 (D x H) "
                       "and b2, with no ReLU on it.",
                       "z[i] = sum over j of W1[i*D + j] * x[j] + b1[i]; h[i] = max(0, z[i]); "
                       "y[k] = sum over i of W2[k*H + i] * h[i] + b2[k], with no ReLU on y."))


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
] + [
    # Not labels: fractions and negatives, so that sorting the values, or turning them into ints, cannot
    # pass by luck as it can with 11, 12, ... 33.
    Case("2 x 4 of fractions and negatives, not labels",
         {"M": [0.5, -1.25, 3.75, 2.0, -0.125, 1.5, -2.5, 0.0625], "n_rows": 2, "n_cols": 4}),
    # Numbers that binary floats hold only approximately (0.1, 1/3, -2.7): a transpose copies them bit for bit,
    # and a trip through float32 (array('f'), struct 'f', np.float32) or rounding changes them.
    Case("3 x 2 of 0.1, 1/3, -2.7 and the like, which float32 cannot hold exactly",
         {"M": [0.1, 1 / 3, -2.7, 2 / 7, -0.7, 1.1], "n_rows": 3, "n_cols": 2}),
]

TRANSPOSE_MISTAKES = [
    Mistake("M returned in its original order",
            "Your output lists M's numbers row after row, as M holds them; the transpose lists them column after "
            "column, since row j of the output is column j of M. Two slips give this: the two loops nested the "
            "wrong way round for the index you read, or reading M at the position where an element goes in the "
            "output instead of where it sits in M. Look at which loop is outside and which index you read.",
            lambda M, n_rows, n_cols: list(M),
            "Loop over j (the output's rows, M's columns) outside and i inside, and read M[i * n_cols + j]."),
    Mistake("M read with the number of rows as its stride",
            "In M, row i starts at i * n_cols: element (i, j) is M[i * n_cols + j], not M[i * n_rows + j].",
            lambda M, n_rows, n_cols: [M[i * n_rows + j] for j in range(n_cols) for i in range(n_rows)]),
    Mistake("n_rows and n_cols swapped",
            "M has n_rows rows of n_cols numbers each; check the order of the two arguments and which loop "
            "runs over which.",
            lambda M, n_rows, n_cols: flat.transpose(M, n_cols, n_rows)),
    Mistake("the elements turned into ints",
            "A transpose only moves numbers: copy each M[i * n_cols + j] as it is, without int(...), which "
            "cuts 0.5 to 0 and -1.25 to -1.",
            lambda M, n_rows, n_cols: [int(t) for t in flat.transpose(M, n_rows, n_cols)]),
]


class _InputItself(list):
    """What a transpose returned when it was its input list M itself (a second name, not a copy)."""


def _new_list(fn):
    """fn, except that a result that is the very list M it was given comes back marked as _InputItself."""
    def transpose(M, n_rows, n_cols):
        before = list(M) if isinstance(M, list) else None
        out = fn(M, n_rows, n_cols)
        # M changed in place as well: the core's message about that comes first, so no mark then
        return _InputItself(out) if out is M and before == list(M) else out
    return transpose


def _transpose_problem(value, case):
    if isinstance(value, _InputItself):
        return ("returned M itself, the very list it was given, not a new one. For one row or one column the "
                "numbers are already in transposed order, but the caller's M and your result are then one "
                "list: changing either changes both. Return a new list, e.g. list(M), or build it with the "
                "loops")
    return _sequence_problem(value, case.args["n_rows"] * case.args["n_cols"])


def _transpose_hidden():
    """Run only while the work is graded: random matrices of full-precision numbers (never labels, never whole),
    in shapes beyond the public cases'."""
    return _random_matrices("transpose", lambda name, rng, r, c: Case(
        name, {"M": rng.normal(size=r * c).tolist(), "n_rows": r, "n_cols": c}))


@grader
def check_transpose(fn) -> bool:
    """Grade `transpose(M, n_rows, n_cols)`: the flat row-major n_cols x n_rows transpose of a flat row-major
    n_rows x n_cols matrix M."""
    return _check(
        "transpose", fn, TRANSPOSE_CASES, flat.transpose, _transpose_problem, TRANSPOSE_MISTAKES,
        hidden=_transpose_hidden, wrap=_new_list, describe=lambda v: fmt(v, max_items=12),
        fallback_hint="element (i, j) of M is M[i * n_cols + j]; it becomes element (j, i) of the output, "
                      "at position j * n_rows + i.")
