"""Checks for lesson 05, why the nonlinearity matters."""
from __future__ import annotations

from typing import Any

import numpy as np

from helpers.and_not import INPUTS, TARGET
from helpers.checks._core import (Case, Mistake, Report, a_kind, check_function, close, fmt, not_a_function,
                                  plural, run)
from helpers.checks._verdict import grader

__all__ = ["check_collapse", "check_residual_collapse", "check_detector_weights"]


def _as_float_array(value: Any) -> np.ndarray | None:
    """value as a float array, or None when it is not numbers (a string, None, ragged lists...)."""
    if value is None or isinstance(value, (str, bytes)):
        return None
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return array


def _matrix_problem(value: Any, name: str, shape: tuple[int, ...], hints: dict[tuple[int, ...], str]) -> str | None:
    """Why `value` is not a finite array of `shape`, in words that name it (`W`, `b`, ...)."""
    if value is None:
        return f"`{name}` is None"
    array = _as_float_array(value)
    if array is None:
        return f"`{name}` is {a_kind(value)}, not an array of numbers"
    if array.shape != shape:
        hint = hints.get(array.shape, "")
        return f"`{name}` has shape {array.shape}; expected {shape}" + (f". {hint}" if hint else "")
    if not np.all(np.isfinite(array)):
        return f"`{name}` holds NaN or infinity"
    return None


# --------------------------------------------------------------------------------------------------------
# Exercise 1: collapse(W1, b1, W2, b2) -> (W, b) with (x W1 + b1) W2 + b2 = x W + b
# --------------------------------------------------------------------------------------------------------
def _collapse_reference(W1, b1, W2, b2):
    return W1 @ W2, b1 @ W2 + b2


_COLLAPSE_MISTAKES = [
    Mistake("b1 forgotten in the combined bias",
            "b1 is added before W2, so it goes through W2 too: the combined bias is b1 @ W2 + b2, not b2 alone.",
            lambda W1, b1, W2, b2: (W1 @ W2, b2)),
    Mistake("b1 not multiplied by W2",
            "(x W1 + b1) W2 = x W1 W2 + b1 W2: the bias b1 travels through W2 like the rest of the hidden "
            "vector. Use b = b1 @ W2 + b2.",
            lambda W1, b1, W2, b2: (W1 @ W2, b1 + b2)),
    Mistake("b2 forgotten in the combined bias",
            "The second layer still adds b2 at the end: b = b1 @ W2 + b2.",
            lambda W1, b1, W2, b2: (W1 @ W2, b1 @ W2)),
    Mistake("the product in the wrong order, W2 W1",
            "A row vector meets W1 first: x @ W1 @ W2, so W = W1 @ W2 (shape (d_in, d_out)).",
            lambda W1, b1, W2, b2: (W2 @ W1, b1 @ W2 + b2)),
    Mistake("W1 and W2 multiplied element by element",
            "`*` multiplies entry by entry; the composition of two layers is the matrix product W1 @ W2.",
            lambda W1, b1, W2, b2: (W1 * W2, b1 @ W2 + b2)),
    Mistake("W transposed (the column-vector convention)",
            "In the row-vector convention x @ W the collapsed matrix is W1 @ W2, with shape (d_in, d_out); "
            "(W1 @ W2).T belongs to the W @ x convention.",
            lambda W1, b1, W2, b2: ((W1 @ W2).T, b1 @ W2 + b2)),
]


def _collapse_cases():
    # Integer weights, so every mistake above gives a visibly different W or b.
    square = {"W1": np.array([[1.0, 2.0], [0.0, -1.0]]), "b1": np.array([1.0, -2.0]),
              "W2": np.array([[3.0, 1.0], [-1.0, 2.0]]), "b2": np.array([0.5, -1.0])}
    wide = {"W1": np.array([[1.0, 0.0, -1.0, 2.0], [0.0, 1.0, 1.0, -1.0], [2.0, -1.0, 0.0, 1.0]]),
            "b1": np.array([1.0, 0.0, -1.0, 2.0]),
            "W2": np.array([[1.0, -1.0], [2.0, 0.0], [0.0, 1.0], [-1.0, 3.0]]),
            "b2": np.array([-1.0, 0.5])}
    single = {"W1": np.array([[2.0, -1.0, 0.5]]), "b1": np.array([0.0, 1.0, -1.0]),
              "W2": np.array([[1.0, 0.0], [3.0, -1.0], [-2.0, 1.0]]), "b2": np.array([0.25, 0.0])}
    return [Case("square layers, 2 -> 2 -> 2", square),
            Case("expand then project, 3 -> 4 -> 2", wide),
            Case("one input, two outputs, 1 -> 3 -> 2", single)]


def _collapse_problem(value: Any, case: Case) -> str | None:
    W1, W2 = case.args["W1"], case.args["W2"]
    d_in, d_hidden, d_out = W1.shape[0], W1.shape[1], W2.shape[1]
    if value is None:
        return "returned None. Did you forget the `return W, b` at the end?"
    if isinstance(value, np.ndarray):
        return (f"returned one array, of shape {value.shape}; return the pair `W, b` (the matrix and the bias "
                "of the one equivalent layer), not the matrix alone")
    if not isinstance(value, (tuple, list)):
        return (f"returned {a_kind(value)}; return the pair `W, b` (the matrix and the bias of the one "
                "equivalent layer): end with `return W, b`")
    if len(value) != 2:
        return (f"returned {plural(len(value), 'value')}; return exactly two, the pair `W, b` (the matrix and "
                "the bias of the one equivalent layer)")
    W, b = value
    problem = _matrix_problem(W, "W", (d_in, d_out), {
        (d_out, d_in): "That is W transposed: in the row-vector convention x @ W, W = W1 @ W2 is (d_in, d_out)"})
    if problem:
        return problem
    return _matrix_problem(b, "b", (d_out,), {
        (d_hidden,): "That is the length of b1; b is added to the output, so it has d_out entries: b1 @ W2 + b2",
        (1, d_out): "Return b as a flat vector (shape (d_out,)), like b2",
        (d_out, 1): "Return b as a flat vector (shape (d_out,)), like b2"})


def _as_pair(value):
    W, b = value
    return np.asarray(W, dtype=float), np.asarray(b, dtype=float)


def _pair_close(got, expected) -> bool:
    try:
        (W, b), (W_ref, b_ref) = got, expected
    except (TypeError, ValueError):
        return False
    return close(W, W_ref) and close(b, b_ref)


def _describe_pair(value) -> str:
    W, b = value
    return f"W = {fmt(np.asarray(W))}, b = {fmt(np.asarray(b))}"


@grader
def check_collapse(fn) -> bool:
    """Grade `collapse(W1, b1, W2, b2)`, which returns (W, b) with (x @ W1 + b1) @ W2 + b2 == x @ W + b."""
    return check_function(
        "collapse", fn, _collapse_cases(), _collapse_reference, _collapse_problem, _COLLAPSE_MISTAKES,
        compare=_pair_close, normalize=_as_pair, describe=_describe_pair,
        fallback_hint="expand (x @ W1 + b1) @ W2 + b2 into x @ (something) + (something else) and return both.")


# --------------------------------------------------------------------------------------------------------
# Exercise 2: residual_collapse(W1, W2) -> M with x + (x W1) W2 = x M
# --------------------------------------------------------------------------------------------------------
def _residual_reference(W1, W2):
    return np.eye(W1.shape[0]) + W1 @ W2


_RESIDUAL_MISTAKES = [
    Mistake("the identity forgotten",
            "x + x W1 W2 = x I + x W1 W2: the skip path x is itself a linear map, the identity I, so "
            "M = I + W1 @ W2. Use np.eye(d) with d = W1.shape[0].",
            lambda W1, W2: W1 @ W2),
    Mistake("1 added to every entry instead of the identity",
            "`1 + W1 @ W2` adds 1 everywhere; the skip path adds x itself, which is the identity matrix: "
            "np.eye(d) + W1 @ W2.",
            lambda W1, W2: 1.0 + W1 @ W2),
    Mistake("the skip path subtracted",
            "The block adds its input back: x + FFN(x), so M = I + W1 @ W2, with a plus.",
            lambda W1, W2: np.eye(W1.shape[0]) - W1 @ W2),
    Mistake("the product in the wrong order, W2 W1",
            "A row vector meets W1 first: x @ W1 @ W2, so M = I + W1 @ W2.",
            lambda W1, W2: np.eye(W1.shape[0]) + W2 @ W1),
    Mistake("the identity of size d_ff",
            "np.eye(W1.shape[1]) is d_ff x d_ff, the size of the hidden layer. The skip path adds the token x "
            "itself, which has d entries, so the identity is d x d: M = np.eye(d) + W1 @ W2 with d = W1.shape[0]. "
            "(When d = d_ff, as in the square case, the two coincide.)",
            lambda W1, W2: np.eye(W1.shape[1]) + W1 @ W2),
    Mistake("the skip path sent through W2, (I + W1) W2",
            "The skip path goes around the FFN, not through it: x + (x @ W1) @ W2 = x @ (I + W1 @ W2).",
            lambda W1, W2: (np.eye(W1.shape[0]) + W1) @ W2),
    Mistake("M transposed (the column-vector convention)",
            "In the row-vector convention x @ M, M = I + W1 @ W2; its transpose belongs to the M @ x convention.",
            lambda W1, W2: (np.eye(W1.shape[0]) + W1 @ W2).T),
]


def _residual_cases():
    return [
        Case("d = 2, d_ff = 2 (square)", {"W1": np.array([[1.0, 2.0], [0.0, -1.0]]),
                                         "W2": np.array([[0.5, 1.0], [-1.0, 0.0]])}),
        Case("d = 3, d_ff = 4 (expand, then project)",
             {"W1": np.array([[1.0, 0.0, -1.0, 2.0], [0.0, 1.0, 1.0, -1.0], [2.0, -1.0, 0.0, 1.0]]),
              "W2": np.array([[1.0, -1.0, 0.0], [2.0, 0.0, 1.0], [0.0, 1.0, -2.0], [-1.0, 3.0, 0.5]])}),
        Case("a branch that writes nothing (W2 = 0)", {"W1": np.array([[1.0, -2.0, 0.5], [3.0, 0.0, 1.0]]),
                                                      "W2": np.zeros((3, 2))}),
    ]


def _residual_problem(value: Any, case: Case) -> str | None:
    d, d_ff = case.args["W1"].shape
    if value is None:
        return "returned None. Did you forget the `return` statement?"
    if isinstance(value, (tuple, list)) and len(value) and all(isinstance(v, np.ndarray) for v in value):
        return f"returned {len(value)} arrays; return the one matrix M = I + W1 @ W2"
    return _matrix_problem(value, "M", (d, d), {
        (d_ff, d_ff): "That is the shape of W2 @ W1 (and of np.eye(d_ff)); x has d entries, so M is (d, d)"})


@grader
def check_residual_collapse(fn) -> bool:
    """Grade `residual_collapse(W1, W2)`, which returns the matrix M with x + (x @ W1) @ W2 == x @ M."""
    return check_function(
        "residual_collapse", fn, _residual_cases(), _residual_reference, _residual_problem, _RESIDUAL_MISTAKES,
        normalize=lambda v: np.asarray(v, dtype=float),
        fallback_hint="write x itself as x @ I, then factor x out of x @ I + x @ W1 @ W2.")


# --------------------------------------------------------------------------------------------------------
# Exercise 3: detector_weights() -> (W1, b1, W2, b2), a ReLU FFN that is 1 on (1, 1, 0) and 0 elsewhere
# --------------------------------------------------------------------------------------------------------
_ROWS = {tuple(int(v) for v in row): i for i, row in enumerate(INPUTS)}   # (A, B, C) -> row of INPUTS


def _label(abc: tuple[int, int, int]) -> str:
    return "A={} B={} C={}".format(*abc)


def _detector_shapes(value: Any) -> tuple[list[np.ndarray] | None, str | None]:
    """The four weights as arrays shaped W1 (3, k), b1 (k,), W2 (k, 1), b2 (1,), or a message saying why not.

    Each weight may also take any layout that NumPy's broadcasting uses the same way and that has the right
    entries: W2 flat, (k,); b2 a plain number; and b1 a plain number when there is one hidden unit (k = 1).
    """
    if value is None:
        return None, "your function returned None. Keep the last line, `return W1, b1, W2, b2`."
    if not isinstance(value, (tuple, list)):
        return None, (f"your function returned {a_kind(value)}; expected the four weights W1, b1, W2, b2. "
                      "Keep the last line, `return W1, b1, W2, b2`.")
    if len(value) != 4:
        return None, (f"your function returned {plural(len(value), 'value')}; expected the four weights W1, b1, "
                      "W2, b2. Keep the last line, `return W1, b1, W2, b2`.")
    arrays = []
    for name, part in zip(("W1", "b1", "W2", "b2"), value):
        array = _as_float_array(part)
        if array is None:
            shown = fmt(part) if isinstance(part, (str, bytes)) else a_kind(part)
            return None, f"`{name}` is {shown}, not numbers"
        if not np.all(np.isfinite(array)):
            return None, f"`{name}` holds NaN or infinity"
        arrays.append(array)
    W1, b1, W2, b2 = arrays
    if W1.ndim != 2 or W1.shape[0] != 3:
        flipped = W1.ndim == 2 and W1.shape[1] == 3
        return None, (f"`W1` has shape {W1.shape}; expected (3, d_ff), one row per input A, B, C and one column "
                      "per hidden unit" + (" (yours looks transposed: x @ W1 needs 3 rows)" if flipped else ""))
    k = W1.shape[1]
    units = plural(k, "hidden unit")
    if b1.shape == () and k > 1:
        return None, (f"`b1` is a single number, but W1 has {plural(k, 'column')}, one per hidden unit: give "
                      f"each unit its own bias, an array of shape ({k},)")
    if b1.shape not in ((k,), ()):
        return None, f"`b1` has shape {b1.shape}; expected ({k},), one bias for each of your {units}"
    if W2.shape not in ((k, 1), (k,)):
        return None, (f"`W2` has shape {W2.shape}; expected ({k}, 1): one weight for each of your {units} "
                      "(the rows) into the one output (the column)")
    if b2.shape not in ((1,), ()):
        return None, f"`b2` has shape {b2.shape}; expected (1,), the bias of the single output"
    return [W1, b1.reshape(k), W2.reshape(k, 1), b2.reshape(1)], None


def _detector_output(W1, b1, W2, b2) -> np.ndarray:
    return (np.maximum(INPUTS @ W1 + b1, 0.0) @ W2 + b2)[:, 0]   # (8,)


def _detector_diagnosis(out: np.ndarray) -> str:
    """The one mistake that the eight outputs show, checked in an order where each step's cause comes first.

    Every input that wrongly fires is covered: (0, 0, 0) by the biases, A or B alone by the threshold, and an
    input with C = 1 either by C raising the output or, for (1, 1, 1), by C not lowering it enough.
    """
    at = {abc: float(out[i]) for abc, i in _ROWS.items()}
    fires = {abc: v > 1e-9 for abc, v in at.items()}
    if np.allclose(out, 1 - TARGET, atol=1e-9):
        return ("the signs are flipped: it answers 1 exactly where it should answer 0, like 1 minus a detector. "
                "A and B should raise the pre-activation and C lower it; W2 should be positive and b2 zero")
    if abs(at[(0, 0, 0)]) > 1e-9:
        return (f"it outputs {fmt(at[(0, 0, 0)])} with no input present (A=0 B=0 C=0). There x @ W1 is 0 and only "
                "the biases act, relu(b1) @ W2 + b2: make b1 zero or negative (it is the threshold) and b2 = 0")
    if any(v < -1e-9 for v in at.values()):
        return ("a negative output somewhere. The target is 0, not below, and a ReLU unit is never negative, "
                "so look for a negative entry of W2")
    if not any(fires.values()):
        return ("silent everywhere. The threshold is too high (b1 too negative) or W2 is zero: with "
                "A = B = 1 and C = 0 the pre-activation must be positive")
    alone = [name for name, abc in (("A", (1, 0, 0)), ("B", (0, 1, 0))) if fires[abc]]
    if alone:
        also = (" (and, since C cancels only one of them, for A and B and C too)"
                if fires[(1, 1, 1)] else "")
        return (f"it fires for {' and for '.join(n + ' alone' for n in alone)}{also}. The threshold is too low: "
                "one input must not reach it, only A and B together (make b1 more negative)")
    raised = [(a, b) for a in (0, 1) for b in (0, 1) if at[(a, b, 1)] > at[(a, b, 0)] + 1e-9]
    if raised:
        a, b = raised[0]
        return (f"C raises the output: {fmt(at[(a, b, 1)])} for {_label((a, b, 1))} but {fmt(at[(a, b, 0)])} "
                f"for {_label((a, b, 0))}. C should only ever switch the unit off: give it a negative weight")
    if fires[(1, 1, 1)]:
        return ("it fires for A and B and C. C does not switch the unit off: give C a negative weight big enough "
                "to undo A + B above the threshold")
    if not fires[(1, 1, 0)]:
        return ("it stays silent for A=1 B=1 C=0, the one input it should answer. Lower the threshold "
                "(b1 less negative) until A + B crosses it")
    return (f"the right pattern but the wrong height: it outputs {fmt(at[(1, 1, 0)])} for A=1 B=1 C=0. "
            "Scale W2 (or the pre-activation) so that this output is exactly 1")


@grader
def check_detector_weights(fn) -> bool:
    """Grade `detector_weights()`: (W1, b1, W2, b2) of a ReLU FFN, 3 inputs -> d_ff units -> 1 output, that
    outputs exactly 1 for (A, B, C) = (1, 1, 0) and exactly 0 for the other seven binary inputs."""
    title = "detector_weights"
    if not callable(fn):
        return not_a_function(title, fn)
    report = Report(title)
    outcome = run(fn, {})
    if outcome.not_implemented:
        return report.not_implemented()
    if outcome.raised:
        print(f"{title}: your function {outcome.describe_error()}")
        return False
    weights, problem = _detector_shapes(outcome.value)
    if problem:
        print(f"{title}: {problem}")
        return False
    out = _detector_output(*weights)
    report.header = (f"running relu(x @ W1 + b1) @ W2 + b2 with {plural(weights[0].shape[1], 'hidden unit')} "
                     "on all 8 inputs")
    n_failed = 0
    for abc, i in _ROWS.items():
        want, got = float(TARGET[i]), float(out[i])
        if abs(got - want) <= 1e-9:
            report.passed(f"{_label(abc)} -> {fmt(want)}")
        else:
            n_failed += 1
            report.failed(_label(abc), f"expected {fmt(want)}, got {fmt(got)}")
    if n_failed:
        report.line(f"Likely mistake: {_detector_diagnosis(out)}.")
    return report.finish(len(_ROWS), n_failed)
