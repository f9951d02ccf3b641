"""Checks for lesson 01, the hand trace."""
from __future__ import annotations

import numpy as np

from helpers.checks._core import (Case, Mistake, Report, a_kind, answer_of, check_function, close, fmt,
                                  vector_problem)
from helpers.checks._verdict import grader

__all__ = ["check_hand_trace", "check_firing_units", "check_detector"]

# Exercise 1: trace x = [2, 3] through the 2 x 2 network with b1 = [-1, 0], W2 = I and b2 = [1, -1].
TRACE_X = [2.0, 3.0]
TRACE_B1 = [-1.0, 0.0]
TRACE_B2 = [1.0, -1.0]
_TRACE = {"z": [4.0, -1.0], "h": [4.0, 0.0], "y": [5.0, -1.0]}
# What known slips give, part by part (z, h, y), with what to do about each. A slip is named when it explains
# every part that is wrong; the order matters where two slips give the same wrong part.
_TRACE_MISTAKES = [
    ("b1 left out", {"z": [5.0, -1.0], "h": [5.0, 0.0], "y": [6.0, -1.0]},
     "z = W1 x + b1: add b1 = [-1, 0] to the two dot products."),
    ("ReLU not applied", {"z": [4.0, -1.0], "h": [4.0, -1.0], "y": [5.0, -2.0]},
     "h = relu(z) = max(0, z) element by element: a negative z becomes exactly 0."),
    ("ReLU applied after W2 as well", {"z": [4.0, -1.0], "h": [4.0, 0.0], "y": [5.0, 0.0]},
     "y = W2 h + b2 is not clamped: the output may be negative, which is how the FFN pushes x down."),
    ("b2 left out", {"z": [4.0, -1.0], "h": [4.0, 0.0], "y": [4.0, 0.0]},
     "y = W2 h + b2: with W2 = I that is h + [1, -1]."),
    ("y copied from z", {"z": [4.0, -1.0], "h": [4.0, 0.0], "y": [4.0, -1.0]},
     "The output comes from the hidden vector: y = W2 h + b2 = h + [1, -1]."),
    ("the second row read as [-1, 1]", {"z": [4.0, 1.0], "h": [4.0, 1.0], "y": [5.0, 0.0]},
     "Row 2 of W1 is [1, -1]: z2 = 1*2 + (-1)*3 + 0 = -1."),
]


@grader
def check_hand_trace(fn) -> bool:
    """Grade `hand_trace()`, which returns the numbers z, h, y of the exercise-1 trace."""
    title = "hand_trace"
    report = Report(title)
    answered, value = answer_of(report, fn)
    if not answered:
        return False
    if value is None:
        print(f"{title}: your function returned None. Keep the last line, `return z, h, y`.")
        return False
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        print(f"{title}: expected three lists (z, h, y), got {fmt(value)}. Keep the line `return z, h, y`.")
        return False
    got = dict(zip("zhy", value))
    report.header = f"checking z, h and y for x = {fmt(TRACE_X)}"
    failed, wrong_values = [], False
    for part, meaning in (("z", "pre-activation z = W1 x + b1"), ("h", "hidden h = relu(z)"),
                          ("y", "output y = W2 h + b2")):
        if got[part] is None:
            report.failed(meaning, f"`{part}` is None: give {part} its two numbers before `return z, h, y`")
            failed.append(part)
            continue
        problem = vector_problem(got[part], 2)
        if problem:
            report.failed(meaning, f"`{part}` {problem.replace('returned', 'is', 1)}")
            failed.append(part)
        elif close(got[part], _TRACE[part]):
            report.passed(meaning, fmt([float(v) for v in got[part]]))
        else:
            report.failed(meaning, f"expected {fmt(_TRACE[part])}, got {fmt([float(v) for v in got[part]])}")
            failed.append(part)
            wrong_values = True
    if wrong_values:
        for name, wrong, fix in _TRACE_MISTAKES:
            if all(vector_problem(got[p], 2) is None and close(got[p], wrong[p]) for p in failed):
                report.line(f"Likely mistake: {name}. {fix}")
                break
        else:
            report.line("Hint: work one unit at a time: z_k = (row k of W1) . x + b1_k, then h_k = max(0, z_k).")
    return report.finish(3, len(failed))


# Exercise 2: which hidden units fire. W1 is (d, d_ff): column k is unit k's pattern.
def _reference_firing(x, W1, b1):
    z = np.asarray(x, dtype=float) @ np.asarray(W1, dtype=float) + np.asarray(b1, dtype=float)
    return [k for k in range(len(z)) if z[k] > 0]


def _pre(x, W1, b1):
    return np.asarray(x, dtype=float) @ np.asarray(W1, dtype=float) + np.asarray(b1, dtype=float)


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
    Mistake("W1 read by rows", "W1 has shape (d, d_ff); unit k's pattern is column k, W1[:, k], not row k.",
            lambda x, W1, b1: [k for k in range(len(b1))
                               if float(np.dot(np.asarray(W1, float)[k], x)) + b1[k] > 0]),
]


def _firing_cases():
    from helpers.toy import B1_484, W1_484, X_ROBOT
    rng = np.random.default_rng(1)
    W_square = np.round(rng.normal(size=(3, 3)), 1)
    x_square = np.array([1.0, -0.5, 0.5])
    b_square = -np.round(x_square @ W_square, 1) + np.array([0.3, -0.4, 0.2])
    return [
        Case("token 'robot' in the 4 -> 8 -> 4 network", {"x": X_ROBOT.tolist(), "W1": W1_484.tolist(),
                                                         "b1": B1_484.tolist()}),
        Case("a 3 -> 3 network (non-symmetric W1)", {"x": x_square.tolist(), "W1": W_square.tolist(),
                                                     "b1": b_square.tolist()}),
        # z = [0, 1.5, 0] exactly, whatever order the sums run in: units 0 and 2 sit exactly at 0.
        Case("units whose pre-activation is exactly 0", {"x": [1.0, 2.0], "W1": [[1.0, -1.0, 2.0],
                                                                              [0.5, 1.0, -1.0]],
                                                         "b1": [-2.0, 0.5, 0.0]}),
        Case("no unit fires", {"x": [1.0, 1.0], "W1": [[1.0, -1.0], [1.0, -1.0]], "b1": [-5.0, 0.0]}),
    ]


def _indices_problem(value, case):
    if value is None:
        return "returned None. Did you forget the `return` statement?"
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        return f"returned {a_kind(value)}; return a list of unit indices such as [0, 3, 5]"
    if any(isinstance(v, (bool, np.bool_)) for v in value):
        return ("returned True/False for every unit (a mask); return the indices where it is True, for "
                "example np.flatnonzero(mask).tolist()")
    if any(isinstance(v, float) and not float(v).is_integer() for v in value):
        return ("returned numbers that are not whole, such as the activations themselves; return the "
                "indices k of the units that fire")
    if any(not isinstance(v, (int, np.integer, float)) or isinstance(v, bool) for v in value):
        return "returned something that is not a list of whole numbers; return unit indices such as [0, 3, 5]"
    return None


def _as_sorted_ints(value):
    return sorted(int(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value))


@grader
def check_firing_units(fn) -> bool:
    """Grade `firing_units(x, W1, b1)`: the indices of the hidden units with positive pre-activation."""
    return check_function(
        "firing_units", fn, _firing_cases(), _reference_firing, _indices_problem, _FIRING_MISTAKES,
        compare=lambda got, expected: got == list(expected), normalize=_as_sorted_ints,
        fallback_hint="compute z = x @ W1 + b1 (d_ff numbers), then keep each k with z[k] > 0.")


# Exercise 3: a detector that fires exactly when x1 > x2 + 1.
_GRID = [(a, b) for a in np.arange(-3.0, 3.01, 0.5) for b in np.arange(-3.0, 3.01, 0.5)
         if abs(a - b - 1.0) >= 0.25]  # points on the boundary itself are not judged


@grader
def check_detector(fn) -> bool:
    """Grade `detector()`, which returns (w, b) for one hidden unit that fires exactly when x1 > x2 + 1."""
    title = "detector"
    report = Report(title)
    answered, value = answer_of(report, fn)
    if not answered:
        return False
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        print(f"{title}: expected (w, b), a pattern of two numbers and a bias, got {fmt(value)}. "
              "Keep the line `return w, b`.")
        return False
    w, b = value
    problem = vector_problem(w, 2)
    if problem or not isinstance(b, (int, float, np.integer, np.floating)) or isinstance(b, bool):
        print(f"{title}: w should be two numbers and b one number; got w = {fmt(w)}, b = {fmt(b)}.")
        return False
    w, b = [float(v) for v in w], float(b)
    fires = {p: w[0] * p[0] + w[1] * p[1] + b > 0 for p in _GRID}
    wanted = {p: p[0] > p[1] + 1 for p in _GRID}
    false_alarms = [p for p in _GRID if fires[p] and not wanted[p]]
    misses = [p for p in _GRID if wanted[p] and not fires[p]]
    report.header = f"testing w = {fmt(w)}, b = {fmt(b)} on {len(_GRID)} inputs"
    if not false_alarms:
        report.passed("silent whenever x1 <= x2 + 1")
    else:
        report.failed("silent whenever x1 <= x2 + 1",
                      f"it fires for {len(false_alarms)} such inputs, e.g. x = {fmt(list(false_alarms[0]))}")
    if not misses:
        report.passed("fires whenever x1 > x2 + 1")
    else:
        report.failed("fires whenever x1 > x2 + 1",
                      f"it stays silent for {len(misses)} such inputs, e.g. x = {fmt(list(misses[0]))}")
    if false_alarms and misses and len(false_alarms) + len(misses) == len(_GRID):
        report.line("Likely mistake: the signs are flipped, so it fires exactly when it should not. "
                    "Multiply w and b by -1.")
    elif (false_alarms or misses) and w[0] > 0 and abs(w[0] + w[1]) < 1e-9:
        report.line(f"Likely mistake: the bias. The pattern w points the right way; with w = {fmt(w)} the "
                    f"unit should switch on where x1 - x2 = 1, so b = {fmt(-w[0])}.")
    elif false_alarms or misses:
        report.line("Hint: z = w1*x1 + w2*x2 + b > 0 must mean x1 - x2 - 1 > 0. Try w = [1, -1] and solve for b.")
    return report.finish(2, bool(false_alarms) + bool(misses))
