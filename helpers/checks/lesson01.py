"""Checks for lesson 01, the hand trace.

Lesson 01 uses the row-vector convention throughout, as helpers.ffn and the original Transformer paper do:
z = x W1 + b1, h = relu(z), y = h W2 + b2, with W1 of shape (d, d_ff) whose column k is hidden unit k's
pattern.

Exercises 1 (hand_trace) and 3 (detector) are pencil exercises. A first failure says which part is wrong and
the likely slip, never the expected numbers or the right bias; the answer is shown after a second failed
attempt in the same session (the count lives in the kernel, so a restart starts it afresh), or at once with
`reveal=True`.

In the hand trace a part that follows correctly from the learner's own previous part (h = relu(z) of their
z) is not a new failure: it gets a neutral mark and counts as a passed case, as follow-through marks do when
a trace is marked by hand. The check still fails, because an earlier part is wrong.
"""
from __future__ import annotations

import itertools
import math
import numbers
from typing import Any

import numpy as np

from helpers.checks._core import (Case, Mistake, Report, a_kind, answer_of, check_function, close, close_float64,
                                  fmt, run, vector_problem)
from helpers.checks._verdict import failed_attempts, grader, hidden_cases, hidden_rng

__all__ = ["check_hand_trace", "check_firing_units", "check_detector"]


def _reveal_line(report: Report, exercise: str, reveal: bool, answer: str, then: str = "") -> None:
    """After a failure: the answer on request or after a second failed attempt, else how to get it."""
    if reveal:
        report.line(f"The answer, as you asked: {answer}" + (f" {then}" if then else ""))
    elif failed_attempts(exercise) >= 1:
        report.line(f"The answer, after your second try: {answer}" + (f" {then}" if then else ""))
    else:
        report.line(f"Fix that part and run the check again. If it fails again in this session (this kernel: "
                    f"a restart starts the count afresh), the check shows the answer; "
                    f"check_{exercise}({exercise}, reveal=True) shows it at any time.")


# ==========================================================================================================
# Exercise 1: trace x = [2, 3] through the 2 x 2 network of section 2 with b1 = [-1, 0] and b2 = [1, -1].
# W1's columns (the units' patterns) are [1, 1] and [1, -1]; W2 = I.
# ==========================================================================================================
TRACE_X = (2.0, 3.0)
TRACE_B1 = (-1.0, 0.0)
TRACE_B2 = (1.0, -1.0)
_COLUMN_1 = (1.0, 1.0)
_COLUMN_2 = (1.0, -1.0)


def _as_floats(value):
    """value with any other real number (a fractions.Fraction, say) inside a list or tuple turned into a
    float, so that exact pencil arithmetic is read as the numbers it holds."""
    if isinstance(value, (list, tuple)):
        return type(value)(float(v) if isinstance(v, numbers.Real)
                           and not isinstance(v, (bool, np.bool_, int, float, np.number)) else v for v in value)
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_, int, float, np.number)):
        return float(value)
    return value


def _dot(u, v):
    return sum(a * b for a, b in zip(u, v))


def _relu(v):
    return [max(0.0, t) for t in v]


def _add(u, v, sign=1.0):
    return [a + sign * b for a, b in zip(u, v)]


_TRACE_Z = [_dot(TRACE_X, _COLUMN_1) + TRACE_B1[0], _dot(TRACE_X, _COLUMN_2) + TRACE_B1[1]]
_SECTION_2 = {"z": [0.0, 2.0], "h": [0.0, 2.0], "y": [0.0, 2.0]}   # section 2's trace: x = [1, -1], no biases
_TRACE = {"z": _TRACE_Z, "h": _relu(_TRACE_Z), "y": _add(_relu(_TRACE_Z), TRACE_B2)}

# Slips in z, each a choice that can combine with the others: (name, what to do, value). The empty name is
# the right choice. A learner's z is explained by the combination with the fewest slips that reproduces it.
_Z_COLUMN_2 = [
    ("", "", _COLUMN_2),
    ("column 2 read as [1, 1], its minus sign lost",
     "Unit 2's pattern is column 2 of W1, [1, -1]: its second weight is -1, so x2 is subtracted.", (1.0, 1.0)),
    ("the minus sign of column 2 put on the x1 term",
     "In column 2, [1, -1], the -1 multiplies x2, not x1: z2 = 1·x1 + (-1)·x2 + b1_2.", (-1.0, 1.0)),
    ("the minus sign of column 2 put on both terms",
     "Only the second weight of column 2 is negative: z2 = 1·x1 + (-1)·x2 + b1_2.", (-1.0, -1.0)),
]
_Z_BIAS = [
    ("", "", TRACE_B1),
    ("b1 left out", "z = x W1 + b1: add each unit's bias to its dot product.", (0.0, 0.0)),
    ("b1 subtracted instead of added",
     "The bias is added, z_k = (x · column k) + b1_k, and b1_1 is itself negative.", tuple(-b for b in TRACE_B1)),
    ("b1's entries on the wrong units", "b1 = [-1, 0]: its first entry belongs to unit 1, its second to unit 2.",
     TRACE_B1[::-1]),
]
_Z_INPUT = [
    ("", "", TRACE_X),
    ("x1 and x2 swapped", "x = [2, 3]: x1 = 2 and x2 = 3, in that order.", TRACE_X[::-1]),
    ("section 2's token x = [1, -1] traced instead of [2, 3]",
     "This exercise traces a second token, x = [2, 3], with the new biases.", (1.0, -1.0)),
]
_Z_ORDER = [("", "", False),
            ("z1 and z2 in the wrong order", "z lists the units in order: z1 (column 1) first, then z2.", True)]


def _z_candidates():
    """(names, fixes, z) for every combination of slips in z, fewest slips first."""
    found = []
    for picks in itertools.product(*(range(len(c)) for c in (_Z_COLUMN_2, _Z_BIAS, _Z_INPUT, _Z_ORDER))):
        choice = [options[i] for options, i in zip((_Z_COLUMN_2, _Z_BIAS, _Z_INPUT, _Z_ORDER), picks)]
        (_, _, column_2), (_, _, b1), (_, _, x), (_, _, swap) = choice
        z = [_dot(x, _COLUMN_1) + b1[0], _dot(x, column_2) + b1[1]]
        z = z[::-1] if swap else z
        names = [c[0] for c in choice if c[0]]
        if names:
            # Fewest slips first; among equals, slips in column 2's signs, then in b1, then the rest.
            found.append((len(names), picks[::-1], names, [c[1] for c in choice if c[0]], z))
    return [(names, fixes, z) for *_, names, fixes, z in sorted(found, key=lambda item: item[:2])]


_Z_CANDIDATES = _z_candidates()


def _explain(value, candidates):
    """The slips (names, fixes) of the fewest-slip candidates that reproduce `value`; several are joined."""
    best = None
    matches = []
    for names, fixes, candidate in candidates:
        if best is not None and len(names) > best:
            break
        if close_float64(value, candidate):
            best = len(names)
            matches.append((names, fixes))
    if not matches:
        return None
    name = ", or ".join(dict.fromkeys(" and ".join(names) for names, _ in matches))
    fixes = " ".join(dict.fromkeys(fix for _, fixes in matches for fix in fixes))
    return name, fixes


def _h_candidates(z):
    """Slips from a pre-activation z to h: (names, fixes, h)."""
    z = [float(t) for t in z]
    slips = [
        ("ReLU not applied", "h = relu(z) = max(0, z) element by element: a negative z becomes exactly 0.", z),
        ("the absolute value taken instead of ReLU",
         "ReLU does not flip a negative z to positive: it sets it to exactly 0.", [abs(t) for t in z]),
        ("ReLU kept the negative part instead of the positive one",
         "relu(z) = max(0, z): it keeps positive numbers and turns negative ones into 0.", [min(0.0, t) for t in z]),
        ("a 0/1 'fires' flag written instead of relu(z)",
         "h holds how strongly each unit fired, max(0, z_k), not only whether it fired.",
         [1.0 if t > 0 else 0.0 for t in z]),
        ("b1 added a second time after it was already in z", "b1 belongs to z only: h = relu(z).",
         _relu(_add(z, TRACE_B1))),
        ("h1 and h2 in the wrong order", "h_k = relu(z_k): unit 1 first, then unit 2.", _relu(z)[::-1]),
    ]
    right = _relu(z)
    return [([name], [fix], h) for name, fix, h in slips if not close_float64(h, right)]


def _y_candidates(h, z):
    """Slips from h (and z) to y: (names, fixes, y)."""
    h, z = [float(t) for t in h], [float(t) for t in z]
    right = _add(h, TRACE_B2)
    slips = [
        ("ReLU applied after W2 as well",
         "y = h W2 + b2 is not clamped: the output may be negative, which is how the FFN pushes x down.",
         _relu(right)),
        ("b2 left out", "y = h W2 + b2: with W2 = I that is h + b2.", h),
        ("b2 subtracted, or its two entries swapped",
         "y = h W2 + b2 adds b2 = [1, -1] entry by entry: y1 = h1 + 1, y2 = h2 + (-1).", _add(h, TRACE_B2, -1.0)),
        ("y computed from z instead of h",
         "The second layer reads the hidden vector h = relu(z), not the pre-activation z.", _add(z, TRACE_B2)),
        ("y copied from z", "The output comes from the hidden vector: y = h W2 + b2, with W2 = I.", z),
        ("x added to the output",
         "The FFN returns h W2 + b2 alone; the block around it adds x (the residual) itself.",
         _add(_add(h, TRACE_B2), TRACE_X)),
        ("b1 used in place of b2", "The output bias is b2 = [1, -1]; b1 belongs to the first layer.",
         _add(h, TRACE_B1)),
    ]
    return [([name], [fix], y) for name, fix, y in slips if not close_float64(y, right)]


def _carried(z):
    """The whole answer that follows from a pre-activation z with no further slip."""
    z = [float(t) for t in z]
    return {"z": z, "h": _relu(z), "y": _add(_relu(z), TRACE_B2)}


# Whole answers of classic slips, (name, answer, what to do), for tools and tests that need an example (the
# check itself explains any combination of slips, part by part, with the candidates above).
_TRACE_MISTAKES = [
    ("b1 left out", _carried([5.0, -1.0]), _Z_BIAS[1][1]),
    ("the minus sign of column 2 put on the x1 term", _carried([4.0, 1.0]), _Z_COLUMN_2[2][1]),
    ("ReLU not applied", {"z": _TRACE["z"], "h": _TRACE["z"], "y": _add(_TRACE["z"], TRACE_B2)},
     "h = relu(z) = max(0, z) element by element: a negative z becomes exactly 0."),
    ("ReLU applied after W2 as well", {"z": _TRACE["z"], "h": _TRACE["h"], "y": _relu(_TRACE["y"])},
     "y = h W2 + b2 is not clamped: the output may be negative, which is how the FFN pushes x down."),
]


CARRIED = "\u2192"   # a right arrow: a step done right on numbers carried from a wrong earlier part
_TRACE_PARTS = (("z", "pre-activation z = x W1 + b1"), ("h", "hidden h = relu(z)"), ("y", "output y = h W2 + b2"))
_TRACE_FALLBACK = {   # whole sentences: a variable's name (h, y) keeps its case at the start of a hint
    "z": "Work one unit at a time: z_k = x1·W1[1][k] + x2·W1[2][k] + b1_k, the token times column k plus its "
         "bias. Check each product's sign and that each unit gets its own bias.",
    "h": "Apply ReLU to z element by element, h = relu(z): keep a positive z_k, turn a negative one into "
         "exactly 0.",
    "y": "Work out y = h W2 + b2; with W2 = I that is h + b2, entry by entry. Nothing clamps y: it may be "
         "negative.",
}


def _part_problem(value, length=2):
    """vector_problem, which also tells an int too large for a float (float() of it would raise)."""
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 2 ** 1024:
                return (f"returned a sequence whose element {i} is an int too large for a float "
                        f"({len(str(abs(v)))} digits); every entry of the trace is a small number")
    return vector_problem(value, length)


def _which_entries(part, value, expected):
    wrong = [f"{part}{k + 1}" for k, (a, b) in enumerate(zip(value, expected)) if not close_float64(a, b)]
    return " and ".join(wrong)


def pencil_answer(title: str, fn: Any, parts: tuple[str, ...], what: str,
                  array_shape: tuple[int, ...] | None = None) -> tuple[Report | None, Any]:
    """(report, the parts as a list or tuple) of a pencil exercise's answer, or (None, None) when there is none
    to grade, having said why (a stub, an error, None, or not one value per part). An array of `array_shape`
    is taken as its rows."""
    report = Report(title)
    answered, value = answer_of(report, fn)
    if not answered:
        return None, None
    keep = f"return {', '.join(parts)}"
    if value is None:
        print(f"{title}: your function returned None. Keep the last line, `{keep}`.")
        return None, None
    if array_shape is not None and isinstance(value, np.ndarray) and value.shape == array_shape:
        value = list(value)
    if not isinstance(value, (tuple, list)):
        print(f"{title}: your function returned {a_kind(value)}, {fmt(value)}, where the exercise asks for {what} "
              f"({', '.join(parts)}). Keep the line `{keep}`.")
        return None, None
    if len(value) != len(parts):
        print(f"{title}: your function returned {len(value)} values, {fmt(value)}, where the exercise asks for "
              f"{what} ({', '.join(parts)}). Keep the line `{keep}`.")
        return None, None
    return report, value


@grader
def check_hand_trace(fn, reveal: bool = False) -> bool:
    """Grade `hand_trace()`, which returns the lists z, h, y of exercise 1's trace (x = [2, 3]).

    A first failure names the wrong part and its likely slip without the expected numbers; the answer is
    shown after a second failed attempt, or with reveal=True."""
    title = "hand_trace"
    report, value = pencil_answer(title, fn, ("z", "h", "y"), "three lists", array_shape=(3, 2))
    if report is None:
        return False
    got = dict(zip("zhy", (_as_floats(v) for v in value)))
    report.header = f"checking z, h and y for x = {fmt(list(TRACE_X))}"
    valid = {}
    for part, _ in _TRACE_PARTS:
        if got[part] is not None and _part_problem(got[part]) is None:
            valid[part] = [float(v) for v in got[part]]
    # What each part should be given the learner's previous part (a slip carried forward is not a new one).
    base_z = valid.get("z", _TRACE["z"])
    base_h = valid.get("h", _TRACE["h"])
    follows = {"z": _TRACE["z"], "h": _relu(base_z), "y": _add(base_h, TRACE_B2)}
    candidates = {"z": lambda: _Z_CANDIDATES,
                  "h": lambda: _h_candidates(base_z) + (_h_candidates(_TRACE["z"]) if "z" in valid else []),
                  "y": lambda: _y_candidates(base_h, base_z)}
    failed, carried, mistake_named = [], [], False
    section_2 = all(p in valid and close_float64(valid[p], _SECTION_2[p]) for p in "zhy")
    if section_2:
        mistake_named = True   # named below, at the first failed part
    # Parts wrong on their own (not right, and not right given the learner's previous part). A slip named at the
    # first of them must explain every one: with two or more, one name cannot, so none is given (a known whole-
    # answer pattern aside, such as the three parts in another order).
    own = [p for p in "zhy" if p not in valid or not (close_float64(valid[p], _TRACE[p])
                                                      or (p != "z" and close_float64(valid[p], follows[p])))]
    reordered = (len(valid) == 3 and not all(close_float64(valid[p], _TRACE[p]) for p in "zhy")
                 and any(all(close_float64(valid[p], _TRACE[q]) for p, q in zip("zhy", order))
                         for order in itertools.permutations("zhy")))
    quiet = reordered or (len(own) > 1 and not section_2)   # each part's line says which entries are wrong
    for part, meaning in _TRACE_PARTS:
        if got[part] is None:
            report.failed(meaning, f"`{part}` is None: give {part} its two numbers before `return z, h, y`")
            failed.append(part)
            continue
        if part not in valid:
            problem = _part_problem(got[part])
            report.failed(meaning, f"`{part}` {problem.replace('returned', 'is', 1)}")
            failed.append(part)
            continue
        mine = valid[part]
        if close_float64(mine, _TRACE[part]):
            report.passed(meaning, fmt(mine))
            continue
        if part != "z" and close_float64(mine, follows[part]):
            # Right given the learner's own previous part: not a new failure (a follow-through mark).
            previous = "z" if part == "h" else "h"
            carried.append(part)
            report.line(f"{CARRIED} {meaning}: {fmt(mine)} follows correctly from your {previous}; this step is "
                        f"right, and its numbers will come right once {previous} does")
            continue
        failed.append(part)
        explained = _explain(mine, candidates[part]())
        where = _which_entries(part, mine, follows[part])
        report.failed(meaning, f"your {part} = {fmt(mine, 12)} is not right" + (f" ({where})" if where else ""))
        if quiet:
            continue
        if close(mine, follows[part], rtol=1e-5, atol=1e-5) and not mistake_named:
            mistake_named = True
            report.line(f"Likely mistake: a typo or a tiny offset in {where or part}. It is within 1e-5 of the "
                        "right number but not equal to it. Every number in this trace is exact (whole numbers "
                        "here), and relu of a negative z is exactly 0: write the numbers exactly, with no rounding "
                        "and no small offsets.")
        elif len(failed) == 1 and mistake_named:
            report.line("Likely mistake: section 2's numbers copied. These are the trace of x = [1, -1] with zero "
                        "biases; this exercise traces x = [2, 3] with b1 = [-1, 0] and b2 = [1, -1].")
        elif not mistake_named:
            mistake_named = True
            if explained:
                name, fix = explained
                report.line(f"Likely mistake: {name}. {fix}")
            else:
                report.line(f"Possibly: a slip in {part}. {_TRACE_FALLBACK[part]}")
    if reordered:
        report.line("Likely mistake: z, h and y returned in another order. Each of your three lists is one of "
                    "the trace's, but in the wrong place: return them as `return z, h, y`.")
    elif quiet:
        report.line(f"What differs: {' and '.join(own)} are each wrong on their own (neither right nor what follows "
                    "from your previous part), so no one slip explains them: fix them one at a time, starting "
                    f"with {own[0]}.")
        report.tally.problem = f"{' and '.join(own)} each wrong on their own"
    if failed:   # a carried part is never alone: the part it follows from failed
        answer = "z = {}, h = {}, y = {}.".format(*(fmt(_TRACE[p]) for p in "zhy"))
        _reveal_line(report, title, reveal, answer, "Find the first step where yours parts from it.")
    return report.finish(3, len(failed))


# ==========================================================================================================
# Exercise 2: which hidden units fire. W1 has shape (d, d_ff): column k is unit k's pattern.
# ==========================================================================================================
def _pre(x, W1, b1):
    return np.asarray(x, dtype=float) @ np.asarray(W1, dtype=float) + np.asarray(b1, dtype=float)


def _reference_firing(x, W1, b1):
    return [k for k, v in enumerate(_pre(x, W1, b1)) if v > 0]


_FIRING_MISTAKES = [
    Mistake("counting a unit whose pre-activation is exactly 0 as firing",
            "relu(0) = 0, so a unit fires only when z > 0 (not z >= 0).",
            lambda x, W1, b1: [k for k, v in enumerate(_pre(x, W1, b1)) if v >= 0]),
    Mistake("the silent units listed instead of the firing ones",
            "List the units whose pre-activation is positive: those are the ones ReLU lets through.",
            lambda x, W1, b1: [k for k, v in enumerate(_pre(x, W1, b1)) if v <= 0]),
    Mistake("counting units from 1", "Python counts from 0: the first hidden unit is unit 0.",
            lambda x, W1, b1: [k + 1 for k, v in enumerate(_pre(x, W1, b1)) if v > 0]),
    Mistake("b1 left out", "The pre-activation is x @ W1 + b1: add unit k's bias b1[k] before comparing with 0.",
            lambda x, W1, b1: [k for k, v in enumerate(np.asarray(x, float) @ np.asarray(W1, float)) if v > 0]),
    Mistake("b1 subtracted instead of added", "The pre-activation is x @ W1 + b1: the bias is added.",
            lambda x, W1, b1: [k for k, v in enumerate(np.asarray(x, float) @ np.asarray(W1, float)
                                                       - np.asarray(b1, float)) if v > 0]),
    Mistake("z rounded before the comparison with 0",
            "Compare the pre-activation itself with 0: a unit with z = 0.0004 fires, however small z is. Round "
            "only what you print.",
            lambda x, W1, b1: [k for k, v in enumerate(np.round(_pre(x, W1, b1), 2)) if v > 0]),
    Mistake("z computed in float32",
            "float32 keeps about 7 significant digits: there -1 + 2e-8 rounds to -1, so a unit whose z is 2e-8 "
            "comes out at exactly 0 and silent. Keep NumPy's default float64, e.g. np.asarray(x, dtype=float).",
            lambda x, W1, b1: [k for k, v in enumerate(np.asarray(x, np.float32) @ np.asarray(W1, np.float32)
                                                       + np.asarray(b1, np.float32)) if v > 0]),
    Mistake("d_ff taken as len(W1), which is d",
            "W1 has shape (d, d_ff): len(W1) counts its rows, one per input number. The units are its columns: "
            "there are len(b1) of them (or len(W1[0])).",
            lambda x, W1, b1: [k for k in range(len(W1)) if sum(x[i] * W1[i][k] for i in range(len(x))) + b1[k] > 0]),
]

_ARRAYS_NAME = "the inputs used as NumPy arrays, but they may arrive as lists"
_ARRAYS_FIX = ("Plain Python lists have no `@`, `.shape` or `.T`: turn each input into an array first, for "
               "example `x = np.asarray(x, dtype=float)`. Your function is right once it gets arrays.")

_ROWS_NAME = "W1 read by rows"
_ROWS_FIX = ("W1 has shape (d, d_ff) and unit k's pattern is its column k, W1[:, k]: the pre-activations are "
             "x @ W1 + b1. `W1 @ x`, `np.dot(W1, x)` or a loop over W1's rows reads it as (d_ff, d), the other "
             "convention, which only runs when d = d_ff, and then gives wrong numbers. Trying one orientation "
             "and falling back on the other, or choosing it from the shapes, goes wrong the same way: a square "
             "W1 fits both, so always compute x @ W1.")


_TINY_NAME = ("a unit with a tiny positive z left out: a threshold above 0 (such as z > 1e-6) or z rounded "
              "before the comparison")
_TINY_FIX = ("A unit fires when z > 0, however small z is: z = 1e-9 fires too. Compare z itself with 0, not "
             "with a small tolerance and not after np.round or round(); round only what you print.")


_TINY_LEFT_OUT = 1e-3    # the largest z a "threshold above 0" may leave out (the cases' tiny units sit below it)


def _threshold_above_zero(fn, cases) -> bool:
    """Whether fn gives, on every case, the units whose z exceeds some threshold of its own above 0 (or what
    rounding z first gives, which is the same), and leaves out a firing unit on at least one case."""
    left_out = False
    for case in cases:
        outcome = run(fn, case.args)
        if outcome.raised or _indices_problem(outcome.value, case) is not None:
            return False
        got = set(_as_sorted_ints(outcome.value))
        z = _pre(*case.args.values())
        firing = {k for k, v in enumerate(z) if v > 0}
        if not got <= firing:
            return False
        missing = firing - got
        if missing and got and max(z[k] for k in missing) >= min(z[k] for k in got):
            return False
        if any(z[k] >= _TINY_LEFT_OUT for k in missing):   # a unit that fires clearly left out: no tiny threshold
            return False
        left_out = left_out or bool(missing)
    return left_out


def _transposed(W1):
    """W1 transposed, in the container it came in (a NumPy array or a list of lists)."""
    if isinstance(W1, np.ndarray):
        return W1.T.copy()
    return [list(column) for column in zip(*W1)]


def _reads_w1_by_rows(fn, cases) -> bool:
    """Whether fn is right on every case once W1 is handed over transposed: it reads W1 as (d_ff, d), rows as
    patterns. A probe, so the diagnosis holds whether the learner wrote W1 @ x, np.dot(W1, x) or a loop."""
    for case in cases:
        x, W1, b1 = case.args.values()
        outcome = run(fn, {"x": x, "W1": _transposed(W1), "b1": b1})
        if outcome.raised or _indices_problem(outcome.value, case) is not None:
            return False
        if _as_sorted_ints(outcome.value) != _reference_firing(x, W1, b1):
            return False
    return True


def _rows_where_square(fn, cases) -> bool:
    """Whether fn is right on every non-square case and, on every square case where it is wrong, gives what
    reading W1 by rows gives: an answer that picks the orientation from the shapes or tries `W1 @ x` first."""
    wrong = 0
    for case in cases:
        x, W1, b1 = case.args.values()
        outcome = run(fn, case.args)
        if outcome.raised or _indices_problem(outcome.value, case) is not None:
            return False
        got = _as_sorted_ints(outcome.value)
        if got == _reference_firing(x, W1, b1):
            continue
        square = np.shape(W1)[0] == np.shape(W1)[1]
        if not square or got != _reference_firing(x, _transposed(W1), b1):
            return False
        wrong += 1
    return wrong > 0


def _needs_arrays(fn, cases) -> bool:
    """Whether fn fails on some case but is right on every case once the inputs are handed over as arrays."""
    as_arrays = [{name: np.asarray(value, dtype=float) for name, value in case.args.items()} for case in cases]
    outcomes = [run(fn, args) for args in as_arrays]
    if not all(not o.raised and _indices_problem(o.value, case) is None
               and _as_sorted_ints(o.value) == _reference_firing(*case.args.values())
               for o, case in zip(outcomes, cases)):
        return False
    return any(run(fn, case.args).raised for case in cases)


def _firing_cases():
    """Every W1 non-symmetric, so a transposed W1 cannot pass; lists and arrays both. One is square, so an
    answer that picks the orientation from the shapes (or tries W1 @ x and falls back on x @ W1) fails too."""
    from helpers.toy import B1_484, W1_484, X_ROBOT
    return [
        Case("token 'robot' in the 4 -> 8 -> 4 network (NumPy arrays)",
             {"x": X_ROBOT.copy(), "W1": W1_484.copy(), "b1": B1_484.copy()}),
        # d = 5 narrows to d_ff = 3; z = [0.0004, -0.0003, 0.41]: unit 0 barely fires, unit 1 barely misses.
        Case("a 5 -> 3 layer, two units within 0.0005 of zero (lists)",
             {"x": [0.73, -1.18, 0.26, 0.91, -0.47],
              "W1": [[0.52, -0.31, 0.88], [0.17, 0.64, -0.29], [-0.93, 0.45, 0.36],
                     [0.41, -0.22, 0.75], [0.66, 0.19, -0.58]],
              "b1": [0.0003, 1.1537, -1.6233]}),
        # z = [0, 1.5, 0] exactly, whatever order the sums run in: units 0 and 2 sit exactly at 0.
        Case("units whose pre-activation is exactly 0 (lists)",
             {"x": [1.0, 2.0], "W1": [[1.0, -1.0, 2.0], [0.5, 1.0, -1.0]], "b1": [-2.0, 0.5, 0.0]}),
        # d = d_ff = 3: W1 @ x runs too. x @ W1 + b1 = [-1.75, -2, 2.125] (unit 2 fires), while the rows
        # would give W1 @ x + b1 = [4, -0.75, -4.375] (unit 0), which no other mistake gives.
        Case("a square 3 -> 3 layer, W1 not symmetric (lists)",
             {"x": [1.0, -2.0, 0.5], "W1": [[0.5, -1.0, 2.0], [1.0, 0.5, -0.5], [-1.5, 1.0, 0.25]],
              "b1": [0.5, -0.5, -1.0]}),
        # z = [1e-9, 2e-8, -1e-9, 3e-7, 4e-5, 4e-6, 2]: x @ W1 is exact (x sums to less than 0), b1 carries the
        # tiny offsets. Every positive unit fires, however small z is: a threshold above 0 (z > 1e-6, z > 1e-4)
        # or a rounded z loses some; float32 rounds -1 + 2e-8 to -1 and loses unit 1 but keeps unit 0 (b1 alone).
        Case("units at tiny z: 1e-9, 2e-8, 3e-7, 4e-6 and 4e-5 above zero, 1e-9 below (lists)",
             {"x": [-1.0, -2.0],
              "W1": [[-1.0, -0.5, 0.25, -2.0, -0.75, -0.0, -1.0], [0.5, -0.25, -0.5, 0.75, -0.125, -1.0, -1.0]],
              "b1": [1e-9, -1.0 + 2e-8, -0.75 - 1e-9, -0.5 + 3e-7, -1.0 + 4e-5, -2.0 + 4e-6, -1.0]}),
        Case("no unit fires (lists)",
             {"x": [1.0, 1.0, -0.5], "W1": [[1.0, -1.0], [0.5, -2.0], [2.0, 0.5]], "b1": [-3.0, 0.0]}),
    ]


def _indices_problem(value, case):
    d_ff = len(case.args["b1"])
    if value is None:
        return "returned None. Did you forget the `return` statement?"
    if isinstance(value, tuple) and value and all(isinstance(v, np.ndarray) for v in value):
        return ("returned a tuple of arrays, which is what np.nonzero and np.where give (one array per axis); "
                "take its first element, [0], for the indices")
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            return (f"returned an array of shape {value.shape}; return a flat list of indices (np.argwhere gives "
                    "one row per index: np.flatnonzero gives them flat)")
        if value.dtype == bool:
            value = [bool(v) for v in value]
        elif np.issubdtype(value.dtype, np.floating) and value.size:   # np.array([]) holds no float index
            return (f"returned an array of floats ({fmt(value)}); an index must be an int, and a float cannot "
                    "index anything (W1[:, 3.0] raises IndexError): return the indices as ints")
        else:
            value = value.tolist()
    if isinstance(value, (set, frozenset)):
        value = sorted(value, key=lambda v: (isinstance(v, str), v if not isinstance(v, str) else 0))
    if hasattr(value, "__next__"):
        return "returned a generator; wrap it in list(...) so it can be read more than once"
    if not isinstance(value, (list, tuple)):
        return f"returned {a_kind(value)}; return a list of unit indices such as [0, 3, 5]"
    if any(isinstance(v, (bool, np.bool_)) for v in value):
        return ("returned True/False for every unit (a mask); return the indices where it is True, for "
                "example with np.flatnonzero(mask)")
    if any(isinstance(v, (list, tuple, np.ndarray)) for v in value):
        return "returned a list of lists; return one flat list of unit indices such as [0, 3, 5]"
    floats = [v for v in value if isinstance(v, (float, np.floating))]
    if any(not float(v).is_integer() for v in floats):
        return ("returned numbers that are not whole, such as the pre-activations or activations themselves; "
                "return the indices k of the units that fire")
    if floats:
        return (f"returned {float(floats[0])!r}, a float; an index must be an int, and a float cannot index "
                "anything (W1[:, 3.0] raises IndexError): return the indices as ints")
    if any(not isinstance(v, (int, np.integer)) for v in value):
        return "returned something that is not a list of whole numbers; return unit indices such as [0, 3, 5]"
    if len(value) == d_ff and len(value) > 1 and set(int(v) for v in value) <= {0, 1} \
            and len(set(value)) < len(value):
        return ("returned 0 or 1 for every unit (a mask); return the indices k of the units that fire, for "
                "example with np.flatnonzero(mask)")
    repeated = sorted({int(v) for v in value if list(value).count(v) > 1})
    if repeated:
        return f"returned the index {repeated[0]} more than once; list each firing unit once"
    return None


def _as_sorted_ints(value):
    if isinstance(value, np.ndarray):
        value = value.tolist()
    return sorted(int(v) for v in value)


# Hidden cases, drawn at grading time (hidden_rng: from the grading secret, or fixed for the tests), each with
# a unit that fires and one that stays silent, so that no list learned by heart and no empty list passes.
_HIDDEN_D = (5, 9)          # the narrowing layer: d from 5 to 9, d_ff from 2 to d - 1
_HIDDEN_WIDE = (2, 5, 12)   # the widening layer: d from 2 to 5, d_ff from d + 2 to 12
_HIDDEN_SQUARE = (3, 7)     # the square layer: d = d_ff from 3 to 7
_TINY_Z = (1e-8, 1e-4)      # how far from 0 the barely firing (and barely silent) units sit


def _tiny(rng) -> float:
    """A pre-activation between 1e-8 and 1e-4, spread evenly over the decades."""
    return float(10 ** rng.uniform(np.log10(_TINY_Z[0]), np.log10(_TINY_Z[1])))


def _hidden_narrowing():
    """d > d_ff, lists. x and W1 hold eighths, so x @ W1 is exact in any order of summation: unit `zero` sits
    exactly at 0 (b1 cancels its dot product) and unit `tiny` barely fires."""
    rng = hidden_rng("01 firing_units narrowing")
    d = int(rng.integers(_HIDDEN_D[0], _HIDDEN_D[1] + 1))
    d_ff = int(rng.integers(2, d))
    x, W1 = rng.integers(-16, 17, size=d) / 8, rng.integers(-16, 17, size=(d, d_ff)) / 8
    b1 = rng.normal(size=d_ff)
    zero, tiny = (int(k) for k in rng.permutation(d_ff)[:2])
    dots = x @ W1
    b1[zero], b1[tiny] = -dots[zero], -dots[tiny] + _tiny(rng)
    return Case(f"hidden: a random layer narrowing d to d_ff (d {_HIDDEN_D[0]} to {_HIDDEN_D[1]}, d_ff 2 to "
                "d - 1), a unit exactly at 0 and one barely firing (lists)",
                {"x": x.tolist(), "W1": W1.tolist(), "b1": b1.tolist()})


def _hidden_widening():
    """d < d_ff, NumPy arrays: one unit barely fires and one barely misses."""
    rng = hidden_rng("01 firing_units widening")
    low, high, most = _HIDDEN_WIDE
    d = int(rng.integers(low, high + 1))
    d_ff = int(rng.integers(d + 2, most + 1))
    x, W1, b1 = rng.normal(size=d), rng.normal(size=(d, d_ff)), rng.normal(size=d_ff)
    above, below = (int(k) for k in rng.permutation(d_ff)[:2])
    dots = x @ W1
    b1[above], b1[below] = -dots[above] + _tiny(rng), -dots[below] - _tiny(rng)
    return Case(f"hidden: a random layer widening d to d_ff (d {low} to {high}, d_ff d + 2 to {most}), a unit "
                "barely firing and one barely silent (NumPy arrays)", {"x": x, "W1": W1, "b1": b1})


def _orientations_differ(x, W1, b1) -> bool:
    """Reading a square W1 by rows gives other firing units than by columns (nor the silent ones), and some
    unit fires and some stays silent."""
    columns, rows = _reference_firing(x, W1, b1), _reference_firing(x, np.asarray(W1).T, b1)
    silent = [k for k in range(len(b1)) if k not in columns]
    return bool(columns) and bool(silent) and rows not in (columns, silent)


def _hidden_square():
    """d = d_ff, lists: redrawn (at most 100 times, so the same secret always gives the same case) until W1 read
    by rows gives other units than by columns."""
    rng = hidden_rng("01 firing_units square")
    n = int(rng.integers(_HIDDEN_SQUARE[0], _HIDDEN_SQUARE[1] + 1))
    for _ in range(100):
        x, W1, b1 = rng.normal(size=n), rng.normal(size=(n, n)), rng.normal(size=n)
        if _orientations_differ(x, W1, b1):
            break
    return Case(f"hidden: a random square layer (d = d_ff from {_HIDDEN_SQUARE[0]} to {_HIDDEN_SQUARE[1]}), W1 "
                "not symmetric (lists)", {"x": x.tolist(), "W1": W1.tolist(), "b1": b1.tolist()})


def _firing_hidden():
    return [_hidden_narrowing(), _hidden_widening(), _hidden_square()]


@grader
def check_firing_units(fn) -> bool:
    """Grade `firing_units(x, W1, b1)`: the indices of the hidden units with positive pre-activation."""
    cases = _firing_cases()
    hidden = hidden_cases(_firing_hidden)   # drawn once, while grading only: the probes judge the same cases
    judged = cases + hidden
    mistakes = list(_FIRING_MISTAKES)
    # Probes: mistakes recognised by what the learner's own function does on changed inputs, whatever its form
    # (W1 @ x, np.dot, a loop). When a probe fits, the learner's function is its own mutant.
    if callable(fn) and (_reads_w1_by_rows(fn, judged) or _rows_where_square(fn, judged)):
        mistakes.insert(0, Mistake(_ROWS_NAME, _ROWS_FIX, fn))
    elif callable(fn) and _needs_arrays(fn, judged):
        mistakes.insert(0, Mistake(_ARRAYS_NAME, _ARRAYS_FIX, fn))
    elif callable(fn) and _threshold_above_zero(fn, judged):
        mistakes.insert(0, Mistake(_TINY_NAME, _TINY_FIX, fn))
    return check_function(
        "firing_units", fn, cases, _reference_firing, _indices_problem, mistakes,
        compare=lambda got, expected: got == list(expected), normalize=_as_sorted_ints,
        fallback_hint="compute z = x @ W1 + b1 (d_ff numbers, one per column of W1), then keep each k with "
                      "z[k] > 0.", hidden=lambda: hidden)


# ==========================================================================================================
# Exercise 3: a detector that fires exactly when x1 > x2 + 1.
# ==========================================================================================================
_NEAR = (1e-3, 1e-6, 1e-9)   # how far beside the line the near points sit


def _detector_points():
    """(below, on, above) the line x1 = x2 + 1. Points on the line use x2 in sixteenths, so x2 + 1 is exact
    and not a round decimal; beside each, points 1e-3, 1e-6 and 1e-9 either side (a bias off by a millionth
    fails); and a seeded spread of points with three decimals, at least 0.05 from the line."""
    on = [(x2 + 1.0, x2) for x2 in (-2.6875, -1.3125, -0.4375, 0.1875, 0.8125, 1.5625, 2.3125)]
    below = [(x1 - eps, x2) for x1, x2 in on for eps in _NEAR]
    above = [(x1 + eps, x2) for x1, x2 in on for eps in _NEAR]
    rng = np.random.default_rng(11)
    for x1, x2 in np.round(rng.uniform(-3.0, 3.0, size=(60, 2)), 3):
        gap = x1 - x2 - 1.0
        if abs(gap) >= 0.05:
            (above if gap > 0 else below).append((float(x1), float(x2)))
    return below, on, above


_BELOW, _ON, _ABOVE = _detector_points()


def _fires(w, b, point) -> bool:
    """Whether the unit fires at `point`, for w and b scaled so that the largest of |w1|, |w2|, |b| is 1 (see
    _scaled: no product can overflow). On the line z is 0 in exact arithmetic; a floating-point remainder of
    the order of rounding (1e-12 of the terms' size) counts as 0 too."""
    x1, x2 = point
    z = w[0] * x1 + w[1] * x2 + b
    return z > 1e-12 * (abs(w[0] * x1) + abs(w[1] * x2) + abs(b))


def _number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _too_big(value) -> bool:
    """An int beyond float64's range (about 1.8e308): float() of it raises OverflowError."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and abs(int(value)) >= 2 ** 1024


def _scaled(w, b):
    """w and b divided by the largest of |w1|, |w2|, |b|: the same unit (a positive factor moves no boundary),
    with every number at most 1 in size, so that w = [1e308, -1e308], b = -1e308 computes without overflow."""
    size = max(abs(w[0]), abs(w[1]), abs(b))
    if size == 0:
        return list(w), b
    return [w[0] / size, w[1] / size], b / size


def _exact(value: float) -> str:
    """A learner's number as they wrote it, to every digit it has (-1.0000000001 stays that, never -1): the
    shortest decimal that reads back as the same float, without a trailing .0."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _two(a: float, b: float) -> tuple[str, str]:
    """a and b printed with as many digits as it takes to tell them apart (from 4 up to 17)."""
    for digits in range(4, 18):
        if f"{a:.{digits}g}" != f"{b:.{digits}g}":
            break
    digits = min(digits + 2, 17)    # two more than the first that differs, so the value itself is not rounded
    return f"{a:.{digits}g}", f"{b:.{digits}g}"


def _detector_slip(w, b):
    """(name, what to do) for a wrong (w, b), without the right bias. The tests of signs and ratios run on
    the scaled numbers (no overflow); what is quoted back to the learner is their own numbers."""
    w_own, b_own = list(w), b
    w, b = _scaled(w, b)
    w1, w2 = w
    size = abs(w1) + abs(w2)
    if size == 0:
        return ("w = [0, 0], so the unit ignores x",
                "With no pattern the unit is always on or always off, whatever the input: give x1 and x2 weights.")
    balanced = abs(w1 + w2) <= 4 * np.finfo(float).eps * size   # equal but for rounding (0.1 * 3 and 0.3)
    if w1 == 0 or w2 == 0:
        missing = "x1" if w1 == 0 else "x2"
        return (f"w ignores {missing}",
                f"The condition compares x1 with x2, so both need a weight; yours gives {missing} none.")
    if (w1 > 0) == (w2 > 0):
        return ("w's two weights with the same sign",
                "With both weights of one sign the unit responds to a sum of x1 and x2, not to how x1 compares "
                "with x2: one of them must count against the other.")
    if not balanced:
        size_1, size_2 = _two(abs(w_own[0]), abs(w_own[1]))
        return ("w's two weights of different sizes",
                f"|w1| = {size_1} and |w2| = {size_2} are not equal, so the boundary tilts away from the line "
                "x1 = x2 + 1, which changes x1 and x2 in step: the two weights need exactly the same size.")
    if w1 < 0:
        c = -w1
        if abs(b - c) <= 1e-9 * c:
            return ("the signs of w and b all flipped",
                    "Your unit fires where x1 - x2 < 1, where it should stay silent, and stays silent where "
                    "x1 - x2 > 1, where it should fire (on the line x1 - x2 = 1 both give 0). Multiply w and b "
                    "by -1.")
        return ("w points the wrong way",
                "Your pattern fires when x2 is the larger one; the unit should fire when x1 exceeds x2 by "
                "enough. Flip the signs of w, then set b again.")
    c = w1
    threshold = -b / c           # the unit fires where x1 - x2 > threshold
    if b == 0:
        return ("the bias left out (b = 0)",
                "With b = 0 the unit fires whenever x1 > x2, also in the strip where x1 - x2 is between 0 and 1. "
                "The '+ 1' of the condition belongs in the bias.")
    if abs(threshold + 1.0) <= 1e-9:
        return ("the bias with the wrong sign",
                "Your unit fires where x1 - x2 > -1. Moving the 1 of x1 > x2 + 1 across the '>' changes its "
                "sign.")
    if abs(b_own + 1.0) <= 1e-9 and abs(w_own[0] - 1.0) > 1e-9:
        return ("w and b not scaled together",
                f"You scaled w by {fmt(w_own[0])} but kept b = -1, so the unit fires where x1 - x2 > "
                f"{fmt(threshold)}. "
                "Scaling a pattern moves the boundary unless the bias is scaled by the same factor.")
    if abs(threshold - 1.0) < 1e-3:
        return ("the bias off by a hair",
                f"Your unit switches at x1 - x2 = {_two(threshold, 1.0)[0]}, next to the line but not on it: it "
                "must be silent on the line itself (z = 0 there) and fire just above it.")
    side = ("too early: it already fires where x1 - x2 > " if threshold < 1 else
            "too late: it stays silent until x1 - x2 > ")
    return ("the bias sets the wrong threshold",
            f"Your pattern points the right way; your bias makes the unit switch on {side}"
            f"{fmt(threshold)}.")


@grader
def check_detector(fn, reveal: bool = False) -> bool:
    """Grade `detector()`, which returns (w, b) for one hidden unit that fires exactly when x1 > x2 + 1.

    A first failure names the part that is wrong (the pattern or the bias) and the likely slip, not the
    right bias; the answer is shown after a second failed attempt, or with reveal=True."""
    title = "detector"
    report = Report(title)
    answered, value = answer_of(report, fn)
    if not answered:
        return False
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        print(f"{title}: expected (w, b), a pattern of two numbers and a bias, got {fmt(value)}. "
              "Keep the line `return w, b`.")
        return False
    w, b = _as_floats(value[0]), _as_floats(value[1])   # a fractions.Fraction is a number too
    if isinstance(b, np.ndarray) and b.ndim == 0:
        b = b[()]                                    # a 0-d array, e.g. from np.float64 arithmetic: one number
    huge = [name for name, v in (("w", w), ("b", b))
            if _too_big(v) or (isinstance(v, (list, tuple)) and any(_too_big(t) for t in v))]
    if huge:
        print(f"{title}: {' and '.join(huge)} {'holds' if huge == ['w'] else 'hold'} an integer too large for a "
              "float (float64 reaches about 1.8e308), so the unit's z cannot be computed. Divide w and b by the "
              "same positive number: the unit then fires at exactly the same inputs.")
        return False
    if _number(w) and vector_problem(b, 2) is None:
        print(f"{title}: got w = {fmt(w)} and b = {fmt(b)}: the order is (w, b), the pattern of two numbers "
              "first and then the bias. Keep the line `return w, b`.")
        return False
    problem = vector_problem(w, 2)
    if problem:
        print(f"{title}: w should be a flat list of two numbers, one weight for x1 and one for x2; w "
              f"{problem.replace('returned', 'is', 1)}.")
        return False
    if isinstance(b, (list, tuple, np.ndarray)) and np.size(b) == 1 and _number(np.ravel(b)[0]):
        kind = f"a NumPy array of shape {b.shape}" if isinstance(b, np.ndarray) else a_kind(b)
        print(f"{title}: b is {fmt(b)}, {kind} holding one number; the bias of one unit is a single number: "
              f"return it as a plain number (b = {fmt(np.ravel(b)[0])}, not b = [...]).")
        return False
    if not _number(b):
        print(f"{title}: b should be one number, the unit's bias; got {fmt(b)} ({type(b).__name__}).")
        return False
    if not math.isfinite(float(b)):
        print(f"{title}: b is {float(b)}; the bias must be a finite number.")
        return False
    w, b = [float(v) for v in w], float(b)
    w_scaled, b_scaled = _scaled(w, b)
    report.header = (f"testing w = [{_exact(w[0])}, {_exact(w[1])}], b = {_exact(b)} on "
                     f"{len(_BELOW) + len(_ON) + len(_ABOVE)} inputs, "
                     "on the line x1 = x2 + 1 and either side of it")
    failures = 0
    for name, points, want in (("silent below the line, where x1 < x2 + 1 (1e-3, 1e-6 and 1e-9 below it too)",
                                _BELOW, False),
                               ("on the line x1 = x2 + 1 itself: must stay silent (relu(0) = 0)", _ON, False),
                               ("fires above the line, where x1 > x2 + 1 (1e-3, 1e-6 and 1e-9 above it too)",
                                _ABOVE, True)):
        wrong = [p for p in points if _fires(w_scaled, b_scaled, p) != want]
        if not wrong:
            report.passed(name)
            continue
        failures += 1
        verb = "fires" if not want else "stays silent"
        example = ", ".join(f"{v:.12g}" for v in wrong[0])
        report.failed(name, f"it {verb} at {len(wrong)} of these {len(points)} inputs, e.g. x = [{example}]")
    if failures:
        slip = _detector_slip(w, b)
        report.line(f"Likely mistake: {slip[0]}. {slip[1]}")
        _reveal_line(report, title, reveal, "w = [1, -1] and b = -1 (or any positive multiple of both, "
                                           "such as w = [2, -2] and b = -2).")
    return report.finish(3, failures)
