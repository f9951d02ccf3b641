"""Gradient checks by central differences (lesson 08).

A backward pass is checked against the definition of a derivative: nudge one input by eps up and down, and
(L(a + eps) - L(a - eps)) / (2 eps) approximates dL/da to within about eps^2 / 6 times L's third derivative,
plus rounding of about (float64 eps) |L| / eps. With eps = 1e-6 that is near 1e-10 for the small, smooth
losses here, so a backward pass that agrees to 1e-6 is right, and one that disagrees has a bug. Not at a
kink: where a ReLU's pre-activation is within eps of 0, the two nudges land on different slopes.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from helpers.ffn import ffn

GRADIENTS = ("dx", "dW1", "db1", "dW2", "db2")


def numerical_gradient(f: Callable[[np.ndarray], float], a: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """dF/da by central differences, one entry of a at a time; a is put back exactly as it was."""
    grad = np.zeros(np.shape(a))               # a's shape
    for index in np.ndindex(grad.shape):       # every entry, whatever a's number of dimensions
        kept = a[index]
        a[index] = kept + eps
        up = f(a)
        a[index] = kept - eps
        down = f(a)
        a[index] = kept                        # exactly as it was
        grad[index] = (up - down) / (2 * eps)
    return grad


def relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    """The largest difference over the largest entry of expected (0 when both are 0)."""
    scale = np.abs(expected).max(initial=0.0)
    diff = np.abs(np.asarray(got, dtype=float) - expected).max(initial=0.0)
    return diff / scale if scale else diff


def ffn_gradients_by_differences(numerical: Callable, x, W1, b1, W2, b2, dy, eps: float = 1e-6) -> list:
    """(dx, dW1, db1, dW2, db2) of L = sum(FFN(x) * dy), each by `numerical` (a numerical_gradient)."""
    params = [np.array(p, dtype=float) for p in (x, W1, b1, W2, b2)]   # copies: nudged one entry at a time
    grads = []
    for i in range(len(params)):
        def loss(a, i=i):
            args = list(params)
            args[i] = a
            return float(np.sum(ffn(*args) * dy))                     # dL/dy = dy
        grads.append(numerical(loss, params[i], eps))
    return grads


def _differs_from_central_differences(theirs: list, course: list, tolerance: float) -> str | None:
    """Why a learner's numerical gradients (theirs) are not central differences (course's), or None."""
    for name, got, expected in zip(GRADIENTS, theirs, course):
        try:
            got = np.asarray(got, dtype=float)
        except (TypeError, ValueError):
            return f"its {name} is not an array of numbers"
        if got.shape != expected.shape:
            return f"its {name} has shape {got.shape}, not {expected.shape}"
        if not np.all(np.isfinite(got)):
            return f"its {name} holds NaN or infinity"
        error = relative_error(got, expected)
        if not error < tolerance:
            return f"its {name} differs from central differences by a relative error of {error:.1e}"
    return None


def gradient_check(backward: Callable, numerical: Callable, x, W1, b1, W2, b2, dy, eps: float = 1e-6,
                   tolerance: float = 1e-6) -> bool:
    """Print backward's five gradients against `numerical`'s, one line each, and whether all agree.

    Meant for a learner's own two functions, so it never raises: a function that is not written yet, or
    that fails, gets a line saying so. A learner's `numerical` is first held to this module's central
    differences: while it does not give them, a disagreement would say nothing about `backward`, so the
    check says so and stops instead of blaming the backward pass.
    """
    try:
        mine = backward(x, W1, b1, W2, b2, dy)
    except NotImplementedError:
        print("ffn_backward: not implemented yet (Exercise 3); come back when it passes its check.")
        return False
    except Exception as error:                                     # noqa: BLE001 (a learner's function)
        print(f"ffn_backward raised {type(error).__name__}: {error}")
        return False
    try:
        reference = ffn_gradients_by_differences(numerical, x, W1, b1, W2, b2, dy, eps)
    except NotImplementedError:
        print("numerical_gradient: not implemented yet (Exercise 4); come back when it passes its check.")
        return False
    except Exception as error:                                     # noqa: BLE001
        print(f"numerical_gradient raised {type(error).__name__}: {error}")
        return False
    if numerical is not numerical_gradient:
        course = ffn_gradients_by_differences(numerical_gradient, x, W1, b1, W2, b2, dy, eps)
        problem = _differs_from_central_differences(reference, course, tolerance)
        if problem:
            print(f"numerical_gradient has not passed its check yet: {problem}. Until it gives central "
                  "differences, this cell cannot judge ffn_backward; run check_numerical_gradient above first.")
            return False
    if not isinstance(mine, (tuple, list)) or len(mine) != len(GRADIENTS):
        print("ffn_backward should return five gradients (dx, dW1, db1, dW2, db2).")
        return False
    ok = True
    for name, got, expected in zip(GRADIENTS, mine, reference):
        if np.shape(got) != expected.shape:
            print(f"  {name:4s} shape {np.shape(got)}, expected {expected.shape}")
            ok = False
            continue
        error = relative_error(got, expected)
        passed = error < tolerance
        ok &= passed
        print(f"  {name:4s} {expected.shape!s:8s} max relative error {error:.1e}  {'agree' if passed else 'DISAGREE'}")
    print("every gradient agrees with central differences" if ok else
          "a gradient disagrees: that one (or what it is computed from) has a bug")
    return ok
