"""Checks for lesson 08, training the FFN: relu_backward, ffn_backward, numerical_gradient, gelu_backward and
the pencil exercise backward_by_hand.

Row-vector convention: x is (T, d), W1 (d, d_ff), W2 (d_ff, d), dy (T, d). The cases avoid shapes that hide
a transpose (after lesson 01's square, symmetric trace come a square but not symmetric case and two where T,
d and d_ff all differ) and put pre-activations exactly at 0, where relu'(0) = 0 decides.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from helpers import gradcheck
from scipy import special

from helpers.checks._core import (Case, Mistake, Observed, a_kind, check_function, close, close_float64, fmt,
                                  hidden_rng, not_a_function, plural, tiered, with_tiers)
from helpers.checks._verdict import grader, held_before
from helpers.checks.lesson01 import CARRIED, _reveal_line, pencil_answer
from helpers.ffn import ffn, ffn_backward, gelu, gelu_grad, gelu_tanh_grad, silu_grad

__all__ = ["check_relu_backward", "check_ffn_backward", "check_numerical_gradient", "check_gelu_backward",
           "check_backward_by_hand"]

GRADIENTS = ("dx", "dW1", "db1", "dW2", "db2")


def _array_problem(value: Any, shape: tuple[int, ...], hints: dict) -> str | None:
    """What `value` is, when it is not a finite float array of `shape`, phrased to follow "returned"; or None.

    Lists and tuples of numbers are fine (they are converted); a mask of True/False or integers is not a
    gradient, and gets its own message.
    """
    if value is None:
        return "None"
    if isinstance(value, np.ndarray) and value.dtype.kind == "b":
        return ("an array of True/False: that is a mask, the slope relu'(z) itself, not a gradient; multiply "
                "the incoming gradient by it")
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu":
        return (f"an array of {value.dtype}; a gradient holds real numbers (an integer array from "
                "np.zeros(..., dtype=int), or a mask cast to int?)")
    if isinstance(value, (str, bytes, dict)) or callable(value):
        return f"{a_kind(value)}, not an array of numbers"
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return f"{a_kind(value)} that NumPy cannot read as an array of numbers"
    if array.shape != tuple(shape):
        hint = hints.get(array.shape, "")
        return f"an array of shape {array.shape}; expected {tuple(shape)}" + (f". {hint}" if hint else "")
    if not np.all(np.isfinite(array)):
        return "an array holding NaN or infinity"
    return None


def _as_float(value: Any) -> np.ndarray:
    return np.asarray(value, dtype=float)


# --------------------------------------------------------------------------------------------------------
# Exercise 1: relu_backward(z, dh) -> dz = dh * relu'(z), relu'(0) = 0
# --------------------------------------------------------------------------------------------------------
def _relu_backward(z, dh):
    return dh * (z > 0)


# The lines of the exercises' answers: a first failure names what is wrong without them; a second failure in
# the session may show the line (helpers.checks._core.tiered).
CHAIN_RULE = ("z = x @ W1 + b1", "h = np.maximum(z, 0)", "dW2 = h.T @ dy", "db2 = dy.sum(axis=0)", "db2 = dy.sum(0)",
              "dh = dy @ W2.T", "dz = dh * (z > 0)", "dW1 = x.T @ dz", "db1 = dz.sum(axis=0)", "db1 = dz.sum(0)",
              "dx = dz @ W1.T")


def _first_tier(text: str) -> str:
    """A message of the ffn_backward or relu_backward check as a first failure may show it: without the
    sentences that write out a line of the chain rule (those come when the check finds the same again)."""
    first, later = tiered(text, CHAIN_RULE)
    if not later or held_before("ffn_backward", later) or held_before("relu_backward", later):
        return text
    return first


_RELU_MISTAKES = [
    Mistake("relu'(0) taken as 1 (the mask z >= 0)",
            "At z = 0 exactly ReLU has a corner, and PyTorch (like this course) takes its slope there as 0: "
            "the mask is z > 0, so a unit sitting exactly at 0 passes no gradient.",
            lambda z, dh: dh * (z >= 0)),
    Mistake("the slope at z = 0 taken as 1/2",
            "np.heaviside(z, 0.5) gives 1/2 at z = 0; relu'(0) = 0 here (as in PyTorch): np.heaviside(z, 0) "
            "or simply z > 0.",
            lambda z, dh: dh * np.heaviside(z, 0.5)),
    Mistake("the mask forgotten: dh passed through unchanged",
            "ReLU's slope is 0 for z <= 0: multiply dh by the mask z > 0, so units that were off pass no "
            "gradient.",
            lambda z, dh: np.array(dh, dtype=float)),
    Mistake("relu'(z) returned without multiplying by dh",
            "The chain rule multiplies: dz = dh * relu'(z). The slope alone forgets the gradient arriving "
            "from above.",
            lambda z, dh: (z > 0) * 1.0),
    Mistake("the mask taken from dh's sign instead of z's",
            "Whether a unit passes gradient depends on whether it fired in the forward pass, z > 0, not on "
            "the sign of the gradient: dz = dh * (z > 0).",
            lambda z, dh: dh * (dh > 0)),
    Mistake("dh multiplied by z instead of by ReLU's slope",
            "relu(z) = z for z > 0, but its slope there is 1, not z: dz = dh * (z > 0).",
            lambda z, dh: dh * z),
    Mistake("dh multiplied by relu(z), the activation, instead of its slope",
            "The backward pass needs the derivative relu'(z) (1 or 0), not the value relu(z).",
            lambda z, dh: dh * np.maximum(z, 0)),
    Mistake("the mask inverted (z <= 0)",
            "Gradient flows through units that fired, z > 0; units with z <= 0 pass none.",
            lambda z, dh: dh * (z <= 0)),
    Mistake("the mask inverted (z < 0)",
            "Gradient flows through units that fired, z > 0; units with z <= 0 pass none.",
            lambda z, dh: dh * (z < 0)),
    Mistake("dh multiplied by sign(z): units that were off pass -dh instead of 0",
            "ReLU's slope is 1 for z > 0 and 0 for z <= 0, never -1: dz = dh * (z > 0).",
            lambda z, dh: dh * np.sign(z)),
    Mistake("the mask z != 0: units with negative z pass gradient too",
            "Only units that fired pass gradient: the mask is z > 0, which is 0 for negative z as well as at 0.",
            lambda z, dh: dh * (z != 0)),
    Mistake("a leaky ReLU's slope (0.01 for z <= 0)",
            "This is the plain ReLU, max(z, 0): its slope for z <= 0 is 0, not 0.01.",
            lambda z, dh: np.where(z > 0, dh, 0.01 * dh)),
]


def _relu_cases():
    rng = np.random.default_rng(801)
    z2 = np.array([[1.5, 0.0, -2.0, 0.25],
                   [-0.5, 3.0, 0.0, -1.0],
                   [0.0, -0.75, 2.0, 1.0]])                     # (T, d_ff) = (3, 4), three exact zeros
    dh2 = np.array([[-1.0, 2.0, 0.5, -0.5],
                    [1.5, -2.0, -1.0, 0.75],
                    [-0.5, 1.0, -1.5, 2.0]])                    # signs unlike z's
    z3 = np.round(rng.normal(size=(2, 3, 5)), 3)
    z3[0, 1, 2] = z3[1, 0, 4] = 0.0
    dh3 = np.round(rng.normal(size=(2, 3, 5)), 3)
    return [Case("lesson 01's trace: z = [0, 2], dh = [0.5, -1]",
                 {"z": np.array([0.0, 2.0]), "dh": np.array([0.5, -1.0])}),
            Case("3 tokens x 4 units, three pre-activations exactly 0", {"z": z2, "dh": dh2}),
            Case("every unit off (z <= 0)", {"z": np.array([[-1.0, 0.0, -0.5]]), "dh": np.array([[2.0, -1.0, 3.0]])}),
            Case("pre-activations a hair either side of 0 (±1e-8, ±1e-12), and two exactly 0",
                 {"z": np.array([[1e-8, -1e-8, 2e-3, -2e-3], [0.0, 1e-12, -1e-12, 0.5]]),
                  "dh": np.array([[1.5, -2.0, 0.5, 1.0], [2.0, -0.5, 1.5, -1.0]])}),
            Case("3 tokens x 4 units of unrounded numbers (no decimal, nor float32, holds them exactly)",
                 {"z": np.random.default_rng(805).normal(size=(3, 4)),
                  "dh": np.random.default_rng(806).normal(size=(3, 4))}),
            Case("a batch of shape (B, T, d_ff) = (2, 3, 5)", {"z": z3, "dh": dh3})]


def _random_shape(rng, ndims: tuple[int, int], sizes: tuple[int, int]) -> tuple[int, ...]:
    """A shape of ndims[0] to ndims[1] dimensions, each of sizes[0] to sizes[1] (both ends included)."""
    ndim = int(rng.integers(ndims[0], ndims[1] + 1))
    return tuple(int(n) for n in rng.integers(sizes[0], sizes[1] + 1, size=ndim))


def _with_zeros(rng, z, dh) -> dict:
    """The arguments {"z": z, "dh": dh}, with 2 entries of z set exactly to 0 (where relu'(0) = 0 decides), one
    unit that fired and one that did not (with dh > 0 there, so a mask taken from dh's sign shows), and no
    entry of dh 0: every known mistake gets the case wrong, whatever the draw."""
    z, dh = z.copy(), np.where(dh == 0, 1.0, dh)
    zero, fired, off = np.split(rng.permutation(z.size)[:4], [2, 3])
    z.flat[zero] = 0.0
    z.flat[fired] = np.maximum(np.abs(z.flat[fired]), 0.1)
    z.flat[off] = -np.maximum(np.abs(z.flat[off]), 0.1)
    dh.flat[off] = np.abs(dh.flat[off])
    return {"z": z, "dh": dh}


def _relu_hidden():
    """Drawn at grading time from the secret: the shapes and the numbers, with exact zeros in z."""
    rng = hidden_rng(801)
    batch = _random_shape(rng, (3, 4), (2, 5))
    tokens = _random_shape(rng, (2, 2), (2, 9))
    return [Case("a random batch of 3 or 4 dimensions (2 to 5 along each), some pre-activations exactly 0",
                 _with_zeros(rng, np.round(rng.normal(size=batch), 3), np.round(rng.normal(size=batch), 3))),
            Case("a random matrix (2 to 9 tokens x 2 to 9 units) of unrounded numbers, some exactly 0",
                 _with_zeros(rng, rng.normal(size=tokens), rng.normal(size=tokens)))]


def _relu_problem(value: Any, case: Case) -> str | None:
    z = case.args["z"]
    if value is None:
        return "returned None. Did you forget the `return` at the end?"
    if isinstance(value, tuple):
        return f"returned a tuple of {plural(len(value), 'value')}; return dz alone, an array shaped like z"
    problem = _array_problem(value, z.shape, {
        (): "A single number: dz has one entry per pre-activation, shaped like z (no sum)",
        (z.size,): "It is flattened; keep z's shape"})
    if problem is not None:
        return f"returned {problem}"
    return _threshold_problem(np.asarray(value, dtype=float), np.asarray(z, dtype=float),
                              np.asarray(case.args["dh"], dtype=float))


def _threshold_problem(dz, z, dh) -> str | None:
    """A mask that switches at some t other than 0 (z > 0.01, z > -1e-6): dz is dh or 0, entry by entry, and
    every kept z lies above every dropped one, but the switch is not at 0 (z exactly 0 alone is another
    mistake, relu'(0) = 1, with its own diagnosis)."""
    live = dh != 0
    if not np.any(live) or not np.all((dz[live] == dh[live]) | (dz[live] == 0)) or np.any(dz[~live] != 0):
        return None
    kept, zs = dz[live] != 0, z[live]
    if not kept.any() or kept.all() or zs[~kept].max() >= zs[kept].min():
        return None
    wrong = kept != (zs > 0)
    if not np.any(wrong & (zs != 0)):
        return None
    above = bool(np.any(wrong & (zs > 0)))
    example = zs[wrong & (zs != 0)][0]
    what = ("no gradient at z = {:.0e}, a unit that fired" if above
            else "gradient at z = {:.0e}, a unit that did not fire")
    return (f"passed {what.format(example)}: your mask switches at a threshold "
            f"{'above' if above else 'below'} 0, not at 0. relu'(z) = 1 for every z > 0, however "
            "small, and 0 for z <= 0: the mask is exactly z > 0")


@grader
def check_relu_backward(fn) -> bool:
    """Grade `relu_backward(z, dh)`: dz = dh * relu'(z), element-wise, with relu'(0) = 0."""
    return check_function(
        "relu_backward", fn, _relu_cases(), _relu_backward, _relu_problem, with_tiers(_RELU_MISTAKES, CHAIN_RULE),
        normalize=_as_float, hidden=_relu_hidden,
        compare=close_float64,
        fallback_hint="dz = dh where z > 0, and 0 where z <= 0 (z exactly 0 included).")


# --------------------------------------------------------------------------------------------------------
# Exercise 2: ffn_backward(x, W1, b1, W2, b2, dy) -> (dx, dW1, db1, dW2, db2), ReLU, x of shape (T, d)
# --------------------------------------------------------------------------------------------------------
def _backward(x, W1, b1, W2, b2, dy, slip: str = ""):
    """The chain rule, with one known slip switched on (slip names it); "" is the right answer."""
    z = x @ W1 if slip == "no b1" else x @ W1 + b1                       # (T, d_ff)
    h = np.maximum(z, 0)                                                 # (T, d_ff)
    mask = (z >= 0) if slip == "mask >= 0" else (z > 0)                  # (T, d_ff)
    if slip == "dW2 from z":
        dW2 = z.T @ dy
    elif slip == "dW2 transposed":
        dW2 = dy.T @ h
    else:
        dW2 = h.T @ dy                                                   # (d_ff, d)
    db2 = dy.sum(axis=0)                                                 # (d,)
    dh = dy @ W2 if slip == "W2 not transposed" else dy @ W2.T           # (T, d_ff)
    if slip == "no mask":
        dz = dh
    elif slip == "mask on dy":
        dz = dy * mask                                                   # runs only when d == d_ff
    elif slip == "relu of dh":
        dz = np.maximum(dh, 0)
    elif slip == "sigmoid mask":
        dz = dh / (1 + np.exp(-z))
    else:
        dz = dh * mask                                                   # (T, d_ff)
    if slip == "dW1 from dh":
        dW1 = x.T @ dh
    elif slip == "dW1 from dh * h":
        dW1 = x.T @ (dh * h)
    elif slip == "dW1 transposed":
        dW1 = dz.T @ x
    else:
        dW1 = x.T @ dz                                                   # (d, d_ff)
    db1 = dh.sum(axis=0) if slip == "db1 from dh" else dz.sum(axis=0)    # (d_ff,)
    if slip == "dx from dh":
        dx = dh @ W1.T
    elif slip == "W1 not transposed":
        dx = dz @ W1
    else:
        dx = dz @ W1.T                                                   # (T, d)
    T = len(x)
    if slip == "biases averaged":
        db1, db2 = db1 / T, db2 / T
    if slip == "db1 averaged":
        db1 = db1 / T
    if slip == "db2 averaged":
        db2 = db2 / T
    if slip == "all averaged":
        dW1, db1, dW2, db2 = dW1 / T, db1 / T, dW2 / T, db2 / T
    if slip == "layers swapped":
        return dx, dW2, db2, dW1, db1
    return dx, dW1, db1, dW2, db2


def _slip(name: str, fix: str, slip: str) -> Mistake:
    return Mistake(name, fix, partial(_backward, slip=slip))


_FFN_MISTAKES = [
    _slip("relu'(0) taken as 1 (the mask z >= 0)",
          "A unit with z exactly 0 did not fire: relu'(0) = 0, as PyTorch takes it. Use the mask z > 0 (or "
          "h > 0, the same thing), not z >= 0.", "mask >= 0"),
    _slip("ReLU's mask forgotten: dz = dh",
          "Between dh and dz comes ReLU's slope: dz = dh * (z > 0). (A mask h >= 0 is always true, so it "
          "forgets the mask too.)", "no mask"),
    _slip("the mask applied to dy instead of dh",
          "The mask belongs to the hidden units: first dh = dy @ W2.T, shape (T, d_ff), then "
          "dz = dh * (z > 0). dy has the output's shape (T, d) and only lines up with the mask when d = d_ff.",
          "mask on dy"),
    _slip("W2 not transposed in dh",
          "dy is (T, d) and W2 is (d_ff, d): dh = dy @ W2.T is (T, d_ff). Without the transpose the product "
          "only runs when d = d_ff, and then gives wrong numbers.", "W2 not transposed"),
    _slip("W1 not transposed in dx",
          "dz is (T, d_ff) and W1 is (d, d_ff): dx = dz @ W1.T is (T, d), x's shape.", "W1 not transposed"),
    _slip("dW1 transposed (dz.T @ x)",
          "A weight's gradient has the weight's shape: dW1 = x.T @ dz is (d, d_ff), like W1.", "dW1 transposed"),
    _slip("dW2 transposed (dy.T @ h)",
          "dW2 = h.T @ dy is (d_ff, d), like W2.", "dW2 transposed"),
    _slip("dW2 computed from z, the pre-activation, instead of h",
          "y = h @ W2 + b2, so W2's gradient pairs dy with what W2 multiplied, h = relu(z): dW2 = h.T @ dy.",
          "dW2 from z"),
    _slip("dW1 computed from dh, before ReLU's mask",
          "Every gradient below ReLU uses dz = dh * (z > 0): dW1 = x.T @ dz.", "dW1 from dh"),
    _slip("dx computed from dh, before ReLU's mask",
          "dx comes through ReLU too: dx = dz @ W1.T, with dz = dh * (z > 0).", "dx from dh"),
    _slip("ReLU applied to dh instead of masking it by z",
          "Whether a unit passes gradient depends on its z in the forward pass: dz = dh * (z > 0), not "
          "np.maximum(dh, 0).", "relu of dh"),
    _slip("b1 left out of the pre-activation",
          "The mask needs the same z as the forward pass: z = x @ W1 + b1.", "no b1"),
    _slip("bias gradients averaged over the tokens instead of summed",
          "Every token adds its own contribution to a shared bias: db1 = dz.sum(axis=0), db2 = dy.sum(axis=0). "
          "An average over tokens belongs in the loss (and so in dy), not here.", "biases averaged"),
    _slip("db1 averaged over the tokens instead of summed",
          "Every token adds its own contribution to the shared bias b1: db1 = dz.sum(axis=0), as db2 = "
          "dy.sum(axis=0). An average over tokens belongs in the loss (and so in dy), not here.", "db1 averaged"),
    _slip("db2 averaged over the tokens instead of summed",
          "Every token adds its own contribution to the shared bias b2: db2 = dy.sum(axis=0), as db1 = "
          "dz.sum(axis=0). An average over tokens belongs in the loss (and so in dy), not here.", "db2 averaged"),
    _slip("db1 summed from dh, before ReLU's mask",
          "b1 sits below ReLU, like W1: db1 = dz.sum(axis=0) with dz = dh * (z > 0).", "db1 from dh"),
    _slip("dW1 computed from dh * h instead of dh * (z > 0)",
          "ReLU's backward multiplies by its slope, 1 or 0 (the mask z > 0), not by its output h: "
          "dz = dh * (z > 0), dW1 = x.T @ dz.", "dW1 from dh * h"),
    _slip("a sigmoid(z) slope instead of ReLU's mask",
          "ReLU's slope is exactly 1 where z > 0 and 0 elsewhere: dz = dh * (z > 0). sigmoid(z) is the "
          "slope of softplus, a smooth cousin of ReLU, not of ReLU itself.", "sigmoid mask"),
    _slip("every weight and bias gradient divided by T",
          "The gradients of shared weights are sums over tokens (x.T @ dz sums them for you). If the loss is a "
          "mean over tokens, the 1/T is already inside dy.", "all averaged"),
    _slip("the two layers' gradients swapped in the returned tuple",
          "Return them in the order (dx, dW1, db1, dW2, db2): the first layer's pair before the second's.",
          "layers swapped"),
]


def _ffn_case(name: str, x, W1, b1, W2, b2, dy) -> Case:
    return Case(name, {k: np.array(v, dtype=float) for k, v in
                       dict(x=x, W1=W1, b1=b1, W2=W2, b2=b2, dy=dy).items()})


def _ffn_cases():
    rng = np.random.default_rng(802)
    hand = _ffn_case("lesson 01's trace as one token: x = [[1, -1]], z = [[0, 2]], dy = [[0.5, -1]]",
                     [[1, -1]], [[1, 1], [1, -1]], [0, 0], np.eye(2), [0, 0], [[0.5, -1]])
    square = _ffn_case("2 tokens, d = d_ff = 3 (square, not symmetric)",
                       [[1.0, -0.5, 2.0], [0.5, 1.5, -1.0]],
                       [[0.5, -1.0, 1.0], [2.0, 0.5, -0.5], [-1.0, 0.25, 0.5]], [0.5, -0.25, 0.0],
                       [[1.0, 0.5, -1.0], [-2.0, 1.0, 0.5], [0.25, -0.5, 1.5]], [0.1, -0.2, 0.3],
                       [[1.0, -2.0, 0.5], [-0.5, 1.0, 2.0]])
    wide = _ffn_case("T = 3, d = 2, d_ff = 4, two pre-activations exactly 0",
                     [[1.0, 2.0], [-1.0, 0.5], [0.5, -1.0]],
                     [[1.0, -1.0, 0.5, 2.0], [0.5, 1.0, -1.0, -0.5]], [0.0, -0.5, 0.0, -1.0],
                     [[1.0, -1.0], [0.5, 2.0], [-1.0, 0.5], [2.0, 1.0]], [0.1, -0.2],
                     [[1.0, -0.5], [0.5, 1.0], [-1.0, 2.0]])
    narrow = _ffn_case("T = 5, d = 3, d_ff = 2 (fewer hidden units than inputs)",
                       rng.normal(size=(5, 3)), rng.normal(size=(3, 2)), rng.normal(size=2),
                       rng.normal(size=(2, 3)), rng.normal(size=3), rng.normal(size=(5, 3)))
    return [hand, square, wide, narrow]


def _ffn_hidden():
    """Drawn at grading time from the secret: T, d and d_ff (all different, so no transpose runs unseen), the
    numbers, which hidden unit is off for every token (its bias pushes it below 0 whatever the token), and
    another that fires on at least one token (so the mask is neither all on nor all off)."""
    rng = hidden_rng(802)
    T, d, d_ff = (int(n) for n in rng.choice(np.arange(2, 8), size=3, replace=False))
    x, W1, b1 = rng.normal(size=(T, d)), rng.normal(size=(d, d_ff)), rng.normal(size=d_ff)
    off, on = (int(j) for j in rng.choice(d_ff, size=2, replace=False))
    b1[off] = -(np.abs(x) @ np.abs(W1[:, off])).max() - rng.uniform(0.5, 2.0)
    b1[on] = max(b1[on], 0.5 - x[int(rng.integers(T))] @ W1[:, on])        # and another fires on some token
    return [_ffn_case("a random FFN (T, d and d_ff all different, 2 to 7 each), one hidden unit off for every "
                      "token", x, W1, b1, rng.normal(size=(d_ff, d)), rng.normal(size=d), rng.normal(size=(T, d)))]


def _ffn_reference(x, W1, b1, W2, b2, dy):
    return tuple(ffn_backward(x, W1, b1, W2, b2, dy))


def _ffn_problem(value: Any, case: Case) -> str | None:
    x, W1 = case.args["x"], case.args["W1"]
    T, d = x.shape
    d_ff = W1.shape[1]
    shapes = dict(dx=(T, d), dW1=(d, d_ff), db1=(d_ff,), dW2=(d_ff, d), db2=(d,))
    order = "(dx, dW1, db1, dW2, db2)"
    if value is None:
        return "returned None. Did you forget the `return dx, dW1, db1, dW2, db2` at the end?"
    if isinstance(value, np.ndarray) or not isinstance(value, (tuple, list)):
        return f"returned {a_kind(value)}; return the five gradients {order} as a tuple"
    if len(value) != 5:
        four = len(value) == 4 and all(np.shape(v) == shapes[n] for v, n in zip(value, GRADIENTS[1:]))
        hint = "dx is missing: dx = dz @ W1.T, the gradient that flows on to the layer below" if four else \
            f"return exactly {order}"
        return f"returned {plural(len(value), 'value')}; expected 5. {hint}"
    got = [np.shape(v) if v is not None else None for v in value]
    if (d != d_ff and got[1] == shapes["dW2"] and got[3] == shapes["dW1"]
            and got[2] == shapes["db2"] and got[4] == shapes["db1"]):
        return (f"returned the two layers' gradients swapped: dW1 has W2's shape and dW2 has W1's. Return "
                f"{order}")
    hints = {
        "dx": {(T, d_ff): "That is dz's shape: dx = dz @ W1.T has x's shape (T, d)",
               (d,): "dx was summed over the tokens; it stays one row per token, shape (T, d)"},
        "dW1": {(d_ff, d): "That is dW1 transposed: dW1 = x.T @ dz has W1's shape (d, d_ff)",
                (T, d_ff): "That is dz's shape: dW1 = x.T @ dz sums over the tokens"},
        "db1": {(T, d_ff): "db1 was not summed over the tokens: db1 = dz.sum(axis=0), b1's shape (d_ff,)",
                (1, d_ff): "db1 was not summed over the tokens: db1 = dz.sum(axis=0), b1's shape (d_ff,)",
                (T,): "summed over the hidden units (axis=1); sum over the tokens, axis=0",
                (): "summed over everything; sum over the tokens only, axis=0"},
        "dW2": {(d, d_ff): "That is dW2 transposed; it has W2's shape (d_ff, d): dW2 = h.T @ dy",
                (T, d): "That is dy's shape: dW2 = h.T @ dy sums over the tokens"},
        "db2": {(T, d): "db2 was not summed over the tokens: db2 = dy.sum(axis=0), b2's shape (d,)",
                (1, d): "db2 was not summed over the tokens: db2 = dy.sum(axis=0), b2's shape (d,)",
                (T,): "summed over the outputs (axis=1); sum over the tokens, axis=0",
                (): "summed over everything; sum over the tokens only, axis=0"},
    }
    for name, part in zip(GRADIENTS, value):
        problem = _array_problem(part, shapes[name], hints[name])
        if problem:
            return f"returned {order} with `{name}` {problem}"
    for name, part in zip(GRADIENTS, value):
        if isinstance(part, np.ndarray) and part.dtype.kind == "f" and part.dtype.itemsize < 8:
            return (f"returned `{name}` as {part.dtype} where the inputs are float64: a cast such as "
                    ".astype(np.float32) keeps only about 7 significant digits. Compute in the inputs' dtype")
    return None


def _as_grads(value) -> tuple:
    return tuple(np.asarray(v, dtype=float) for v in value)


def _grads_close(got, expected) -> bool:
    try:
        return len(got) == len(expected) and all(close_float64(g, e) for g, e in zip(got, expected))
    except (TypeError, ValueError):
        return False


class _GradsReport:
    """describe() for the five gradients: the reference reads as what is wanted, a learner's answer as which
    gradients differ from it, with the first wrong one shown in full."""

    def __init__(self):
        self.expected = None

    def compare(self, got, expected) -> bool:
        self.expected = expected
        return _grads_close(got, expected)

    def describe(self, value) -> str:
        if value is self.expected or self.expected is None:
            return "the five gradients of the chain rule"
        wrong = [n for n, g, e in zip(GRADIENTS, value, self.expected) if not close_float64(g, e)]
        right = [n for n in GRADIENTS if n not in wrong]
        if not wrong:
            return "the five gradients"
        first = GRADIENTS.index(wrong[0])
        text = f"{', '.join(wrong)} wrong" + (f" ({', '.join(right)} right)" if right else "")
        return (f"{text}; {wrong[0]} should be {fmt(np.round(self.expected[first], 4))}, "
                f"yours is {fmt(np.round(value[first], 4))}")


@grader
def check_ffn_backward(fn) -> bool:
    """Grade `ffn_backward(x, W1, b1, W2, b2, dy)` for a ReLU FFN and x of shape (T, d):
    returns (dx, dW1, db1, dW2, db2), each shaped like what it is the gradient of."""
    grads = _GradsReport()
    return check_function(
        "ffn_backward", fn, _ffn_cases(), _ffn_reference, lambda v, c: _tiered_problem(_ffn_problem(v, c)),
        with_tiers(_FFN_MISTAKES, CHAIN_RULE),
        compare=grads.compare, normalize=_as_grads, describe=grads.describe, hidden=_ffn_hidden,
        fallback_hint=("go up the forward pass one step at a time, starting from dy: a weight's gradient pairs "
                       "what its layer read (transposed) with the gradient of what it wrote, and has the weight's "
                       "shape; a bias's gradient is that gradient summed over the tokens; between the layers, "
                       "ReLU lets gradient through only where z > 0. The lines above say which gradients are "
                       "wrong: start with the first of them.",
                       "go line by line up the forward pass: dW2 = h.T @ dy, db2 = dy.sum(0), dh = dy @ W2.T, "
                       "dz = dh * (z > 0), dW1 = x.T @ dz, db1 = dz.sum(0), dx = dz @ W1.T."))


def _tiered_problem(problem):
    """A validation message as a first failure may show it (_first_tier), keeping its kind (Observed)."""
    if problem is None:
        return None
    text = _first_tier(problem)
    return type(problem)(text) if isinstance(problem, Observed) else text


# --------------------------------------------------------------------------------------------------------
# Exercise 3: numerical_gradient(f, a, eps) -> dF/da by central differences
# --------------------------------------------------------------------------------------------------------
def _numerical_reference(f, a, eps):
    return gradcheck.numerical_gradient(f, a, eps)          # the course's central differences


def _perturbed(f, a, eps, step):
    """f(a with entry `index` moved by `step`), for every index: a helper for the mutants."""
    out = np.zeros(a.shape)
    for index in np.ndindex(a.shape):
        b = a.copy()
        b[index] += step
        out[index] = f(b)
    return out


def _not_put_back(f, a, eps):
    grad = np.zeros(a.shape)
    for index in np.ndindex(a.shape):
        a[index] += eps
        up = f(a)
        a[index] -= 2 * eps
        down = f(a)
        a[index] += eps                        # rounding leaves a tiny change behind
        grad[index] = (up - down) / (2 * eps)
    return grad


def _never_put_back(f, a, eps):
    grad = np.zeros(a.shape)
    for index in np.ndindex(a.shape):
        kept = a[index]
        a[index] = kept + eps
        up = f(a)
        a[index] = kept - eps
        grad[index] = (up - f(a)) / (2 * eps)  # the entry stays at kept - eps
    return grad


def _rows_at_once(f, a, eps):
    """Loops over the first axis only: for a matrix, a whole row moves at once."""
    grad = np.zeros(a.shape)
    for i in range(len(a)):
        b, c = a.copy(), a.copy()
        b[i] += eps
        c[i] -= eps
        grad[i] = (f(b) - f(c)) / (2 * eps)
    return grad


def _fixed_step(f, a, eps):
    """eps ignored: a small step of its own (any of 1e-4 to 1e-7 gives these numbers to 1e-7)."""
    return _numerical_reference(f, a.copy(), 1e-5)


def _relative_step(f, a, eps):
    out = np.zeros(a.shape)
    for index in np.ndindex(a.shape):
        h = eps * max(1.0, abs(float(a[index])))
        out[index] = (_nudged(f, a, index, h) - _nudged(f, a, index, -h)) / (2 * h)
    return out


def _nudged(f, a, index, step):
    b = a.copy()
    b[index] += step
    return f(b)


def _float32_copy(f, a, eps):
    a32 = a.astype(np.float32)
    out = np.zeros(a.shape)
    for index in np.ndindex(a.shape):
        out[index] = (_nudged(f, a32, index, eps) - _nudged(f, a32, index, -eps)) / (2 * eps)
    return out


def _restored_too_soon(f, a, eps):
    """a[i] put back before the second evaluation: (f(a + eps) - f(a)) / (2 eps), half a forward difference."""
    return (_perturbed(f, a, eps, eps) - f(a)) / (2 * eps)


def _reshaped_copy(f, a, eps):
    """Nudges written into a.reshape(-1), which is a copy when a is not C-contiguous: f never sees them."""
    flat = a.reshape(-1)
    out = np.zeros(flat.size)
    for j in range(flat.size):
        kept = flat[j]
        flat[j] = kept + eps
        up = f(a)
        flat[j] = kept - eps
        down = f(a)
        flat[j] = kept
        out[j] = (up - down) / (2 * eps)
    return out.reshape(a.shape)


_NUMERICAL_MISTAKES = [
    Mistake("a forward difference, (f(a + eps) - f(a)) / eps",
            "A one-sided difference is off by about eps times the second derivative; the central difference "
            "(f(a + eps) - f(a - eps)) / (2 eps) cancels that term and is off by eps^2 only.",
            lambda f, a, eps: (_perturbed(f, a, eps, eps) - f(a)) / eps),
    Mistake("divided by eps instead of 2 eps",
            "The two evaluations are 2 eps apart: divide their difference by 2 * eps.",
            lambda f, a, eps: (_perturbed(f, a, eps, eps) - _perturbed(f, a, eps, -eps)) / eps),
    Mistake("the difference taken the wrong way round",
            "The slope is (f(a + eps) - f(a - eps)) / (2 eps): the upper value first.",
            lambda f, a, eps: (_perturbed(f, a, eps, -eps) - _perturbed(f, a, eps, eps)) / (2 * eps)),
    Mistake("every entry nudged at once",
            "a + eps moves all entries together, which gives one directional slope. Nudge one entry at a "
            "time (a loop over np.ndindex(a.shape)) and fill in that entry of the gradient.",
            lambda f, a, eps: np.full(a.shape, (f(a + eps) - f(a - eps)) / (2 * eps))),
    Mistake("a loop over the first axis only: a matrix's rows nudged whole",
            "for i in range(len(a)) visits rows of a matrix, and a[i] += eps moves a whole row. Visit every "
            "entry: for index in np.ndindex(a.shape).", _rows_at_once),
    Mistake("the entry never put back: each entry left at kept - eps",
            "After the two evaluations, restore the entry: keep it first (kept = a[i]) and set it back "
            "(a[i] = kept), so that the next entry's slope is taken at a, not at a moved point.", _never_put_back),
    Mistake("the entry not put back exactly as it was",
            "a[i] += eps, then a[i] -= 2 * eps, then a[i] += eps leaves a rounding error behind, so the "
            "weights drift as you check them. Keep the old value and restore it: kept = a[i]; ...; "
            "a[i] = kept (or nudge a copy).", _not_put_back),
    Mistake("eps ignored: your slopes are not the central difference with the eps it was given",
            "With eps = 0.1 the central difference of sum(a**3) is 3 a² + eps² = 3 a² + 0.01, not the exact "
            "3 a²: use the eps argument as the step, (f(a + eps) - f(a - eps)) / (2 * eps), not a step of "
            "your own (nor a higher-order stencil).", _fixed_step),
    Mistake("the step scaled by |a_i| (eps * max(1, |a_i|)) instead of eps itself",
            "Use eps as the step for every entry: (f(a + eps) - f(a - eps)) / (2 * eps).", _relative_step),
    Mistake("a backward difference, (f(a) - f(a - eps)) / eps",
            "A one-sided difference is off by about eps times the second derivative; the central difference "
            "(f(a + eps) - f(a - eps)) / (2 eps) cancels that term.",
            lambda f, a, eps: (f(a) - _perturbed(f, a, eps, -eps)) / eps),
    Mistake("multiplied by eps instead of divided by 2 eps (`/ 2 * eps` reads as (.../ 2) * eps)",
            "Put the denominator in parentheses: without them, / 2 * eps divides by 2 and then multiplies by "
            "eps.",
            lambda f, a, eps: (_perturbed(f, a, eps, eps) - _perturbed(f, a, eps, -eps)) / 2 * eps,
            "(up - down) / (2 * eps)."),
    Mistake("the nudged entries computed in float32 (a float32 copy of a)",
            "float32 keeps about 7 digits, so a step of 1e-5 on an entry near 1 is mostly rounding. Nudge a "
            "itself (float64) or a.copy().", _float32_copy),
    Mistake("a[i] put back before the second evaluation: (f(a + eps) - f(a)) / (2 eps)",
            "Evaluate f with a[i] = kept - eps before restoring: up at kept + eps, down at kept - eps, then "
            "a[i] = kept.", _restored_too_soon),
    Mistake("your nudges did not reach a: a.reshape(-1) (or ravel) made a copy, so f(a) never changed",
            "reshape returns a view only when it can: on a transposed or Fortran-ordered a it copies, and "
            "writing into the copy leaves a as it was. Index a itself: for index in np.ndindex(a.shape): "
            "a[index] = ...", _reshaped_copy),
    Mistake("a fixed step of 1e-2 instead of eps",
            "Use the eps you are given: the error of a central difference grows like eps^2, so a large step "
            "is inaccurate.",
            lambda f, a, eps: _numerical_reference(f, a.copy(), 1e-2)),
]


def _cubic_sum(a):
    return float(np.sum(a ** 3))


def _sin_weighted(a):
    weights = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])
    return float(np.sum(np.sin(a) * weights))


def _numerical_cases():
    x = np.array([[1.0, -0.5], [0.25, 2.0], [-1.5, 0.75]])           # (T, d) = (3, 2)
    W1 = np.array([[0.5, -1.0, 1.5], [1.0, 0.5, -0.5]])               # (d, d_ff) = (2, 3)
    b1 = np.array([0.1, -0.2, 0.3])
    W2 = np.array([[1.0, -0.5], [0.5, 2.0], [-1.0, 0.25]])            # (d_ff, d)
    b2 = np.array([0.05, -0.1])
    dy = np.array([[1.0, -1.0], [0.5, 2.0], [-0.5, 1.0]])

    def ffn_loss(W):                                                    # L(W1) = sum(FFN(x) * dy)
        return float(np.sum(ffn(x, W, b1, W2, b2) * dy))

    rng = np.random.default_rng(803)
    return [Case("f(a) = sum(a**3), a vector of 4", {"f": _cubic_sum, "a": np.array([1.0, -2.0, 0.5, 3.0]),
                                                    "eps": 1e-5}),
            Case("f(a) = sum(sin(a) * C), a 2 x 3 matrix", {"f": _sin_weighted,
                                                          "a": np.array([[0.3, -1.2, 2.0], [0.7, 1.5, -0.4]]),
                                                          "eps": 1e-5}),
            Case("L(W1) = sum(FFN(x) * dy) for a 2 -> 3 -> 2 ReLU FFN", {"f": ffn_loss, "a": W1.copy(),
                                                                         "eps": 1e-6}),
            Case("a coarse eps = 0.1 on sum(a**3): the central difference is 3 a² + eps² = 3 a² + 0.01",
                 {"f": _cubic_sum, "a": np.array([1.5, -2.0, 0.5]), "eps": 0.1}),
            Case("a transposed (a view that is not C-contiguous), f(a) = sum(sin(a) * C)",
                 {"f": _sin_weighted, "a": np.array([[0.3, 0.7], [-1.2, 1.5], [2.0, -0.4]]).T, "eps": 1e-5}),
            Case("f(a) = sum(a**3), a (2, 2, 2) array (any number of dimensions)",
                 {"f": _cubic_sum, "a": np.round(rng.normal(size=(2, 2, 2)), 3), "eps": 1e-5})]


def _numerical_hidden():
    """Drawn at grading time from the secret: a's shape and numbers, and the weights C of the sine case, whose
    a is a transposed matrix (not C-contiguous, so nudges written into a.reshape(-1) never reach it)."""
    rng = hidden_rng(803)
    cube = np.round(rng.normal(size=_random_shape(rng, (1, 4), (2, 3))), 3)
    rows, cols = (int(n) for n in rng.integers(2, 5, size=2))
    C = np.round(rng.normal(size=(rows, cols)), 3)

    def sin_weighted(a):
        return float(np.sum(np.sin(a) * C))
    return [Case("f(a) = sum(a**3), a random array of 1 to 4 dimensions (2 to 3 along each)",
                 {"f": _cubic_sum, "a": cube, "eps": 1e-5}),
            Case("f(a) = sum(sin(a) * C), C random, a transposed random matrix (2 to 4 x 2 to 4: not C-contiguous)",
                 {"f": sin_weighted, "a": np.round(rng.normal(size=(cols, rows)), 3).T, "eps": 1e-5})]


@dataclass(eq=False)
class _LeftChanged:
    """What a numerical_gradient returned when it left `a` changed after it returned (an entry nudged and not
    put back exactly), with how many entries differ and by how much at most."""
    value: Any
    entries: int
    largest: float

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.value, dtype=dtype)


def _watching_a(fn):
    """fn, handed its own copy of `a`; when that copy differs afterwards, its result is wrapped in _LeftChanged.
    The exercise nudges `a` and must restore it, so "build a new array" (the general message for an input
    changed in place) would be the wrong advice."""
    def numerical_gradient(f, a, eps):
        theirs = np.array(a, copy=True)
        value = fn(f, theirs, eps)
        if theirs.shape == np.shape(a) and not np.array_equal(theirs, a):
            diff = np.abs(np.asarray(theirs, dtype=float) - np.asarray(a, dtype=float))
            return _LeftChanged(value, int(np.count_nonzero(diff)), float(diff.max()))
        return value
    return numerical_gradient


def _numerical_problem(value: Any, case: Case) -> str | None:
    a = case.args["a"]
    if isinstance(value, _LeftChanged):
        problem = _numerical_problem(value.value, case)
        if problem is not None:
            return problem
        n = value.entries
        changed = (f"changed its input `a` in place: after it returned, {n} entr{'y' if n == 1 else 'ies'} of a "
                   f"differed from what {'it was' if n == 1 else 'they were'} (by up to {value.largest:.1e}")
        if value.largest >= 0.5 * case.args["eps"]:
            return (f"{changed}, about eps itself: an entry left nudged, never put back). Nudging a is fine, but "
                    "restore each entry after its two evaluations: keep it first (kept = a[i]) and set it back "
                    "(a[i] = kept)")
        return (f"{changed}, far less than eps: a rounding error). Nudging a is fine, but put each entry back "
                "exactly: keep it first (kept = a[i]) and restore it (a[i] = kept); adding and subtracting eps "
                "again leaves a rounding error behind")
    if value is None:
        return "returned None. Did you forget to return the gradient?"
    if isinstance(value, (int, float, np.floating, np.integer)):
        return (f"returned a single number ({fmt(value)}); return an array shaped like a, one slope per entry "
                "(the gradient)")
    problem = _array_problem(value, a.shape, {
        (a.size,): f"It is flattened: return it in a's shape {a.shape} (np.zeros(a.shape), or .reshape(a.shape))",
        (a.shape[0],): "One number per row: visit every entry of a, not just its first axis (np.ndindex)"})
    return None if problem is None else f"returned {problem}"


@grader
def check_numerical_gradient(fn) -> bool:
    """Grade `numerical_gradient(f, a, eps)`: dF/da by central differences, shaped like a."""
    if not callable(fn):
        return not_a_function("numerical_gradient", fn)
    mistakes = [Mistake(m.name, m.fix, _watching_a(m.fn)) for m in _NUMERICAL_MISTAKES]
    return check_function(
        "numerical_gradient", _watching_a(fn), _numerical_cases(), _numerical_reference, _numerical_problem,
        mistakes,
        compare=lambda got, expected: close(got, expected, rtol=1e-7, atol=1e-9), normalize=_as_float,
        describe=lambda value: fmt(value, 10), hidden=_numerical_hidden,
        fallback_hint=("use the eps you are given, and for each index of a evaluate f twice, with that entry "
                       "moved up by eps and down by eps; then put the entry back exactly as it was.",
                       "use the eps you are given, and for each index of a: keep a[index], set it to kept + "
                       "eps and to kept - eps, evaluate f both times, put kept back, and store "
                       "(up - down) / (2 * eps)."))


# --------------------------------------------------------------------------------------------------------
# Going further: gelu_backward(z, dh) -> dz = dh * gelu'(z), gelu' = Phi + z phi
# --------------------------------------------------------------------------------------------------------
def _Phi(z):
    return special.ndtr(np.asarray(z, dtype=float))


def _phi(z):
    z = np.asarray(z, dtype=float)
    return np.exp(-z * z / 2) / math.sqrt(2 * math.pi)


_GELU_MISTAKES = [
    Mistake("Φ(z) alone: the product rule's second term z φ(z) forgotten",
            "GELU is a product, z times Φ(z), so its slope has two terms: Φ(z) + z φ(z).",
            lambda z, dh: dh * _Phi(z)),
    Mistake("GPT-2's tanh approximation's slope, not the exact GELU's",
            "The exercise asks for exact GELU, z Φ(z): its slope is Φ(z) + z φ(z), with Φ from the error "
            "function. The tanh form is close (within about 1e-3) but it is another function.",
            lambda z, dh: dh * gelu_tanh_grad(np.asarray(z, dtype=float))),
    Mistake("the second term subtracted: Φ(z) - z φ(z)",
            "The product rule adds: d(z Φ(z))/dz = Φ(z) + z Φ'(z) = Φ(z) + z φ(z).",
            lambda z, dh: dh * (_Phi(z) - z * _phi(z))),
    Mistake("the density and the cumulative swapped: φ(z) + z Φ(z)",
            "Φ is the cumulative (scipy.special.ndtr), φ its derivative, the bell curve: slope = Φ(z) + z φ(z).",
            lambda z, dh: dh * (_phi(z) + z * _Phi(z))),
    Mistake("the factor z left out of the second term: Φ(z) + φ(z)",
            "The product rule on z Φ(z) gives z' Φ(z) + z Φ'(z): the second term is z times φ(z), not φ(z) "
            "alone.",
            lambda z, dh: dh * (_Phi(z) + _phi(z))),
    Mistake("φ(z) without its 1/sqrt(2π)",
            "The standard normal density is φ(z) = exp(-z²/2) / sqrt(2π).",
            lambda z, dh: dh * (_Phi(z) + z * np.exp(-np.asarray(z, dtype=float) ** 2 / 2))),
    Mistake("GELU itself instead of its slope",
            "The backward pass needs the derivative gelu'(z) = Φ(z) + z φ(z), not gelu(z).",
            lambda z, dh: dh * gelu(np.asarray(z, dtype=float))),
    Mistake("gelu'(z) returned without multiplying by dh",
            "The chain rule multiplies: dz = dh * gelu'(z).",
            lambda z, dh: _Phi(z) + z * _phi(z)),   # not gelu_grad: a learner's copy of this calls no reference
    Mistake("φ(z) with exp(-z²) instead of exp(-z²/2)",
            "The standard normal density is φ(z) = exp(-z² / 2) / sqrt(2π): the exponent has the /2.",
            lambda z, dh: dh * (_Phi(z) + z * np.exp(-np.asarray(z, dtype=float) ** 2) / math.sqrt(2 * math.pi))),
    Mistake("Φ(z) from erf(z / 2) instead of erf(z / sqrt(2))",
            "Φ(z) = (1 + erf(z / sqrt(2))) / 2, or scipy.special.ndtr(z).",
            lambda z, dh: dh * (0.5 * (1 + special.erf(np.asarray(z, dtype=float) / 2)) + z * _phi(z))),
    Mistake("Φ(z) as 1 + erf(z / sqrt(2)), without the factor 1/2",
            "Φ(z) = (1 + erf(z / sqrt(2))) / 2 runs from 0 to 1; without the 1/2 it runs from 0 to 2.",
            lambda z, dh: dh * (1 + special.erf(np.asarray(z, dtype=float) / math.sqrt(2)) + z * _phi(z))),
    Mistake("φ(z) divided by sqrt(π) instead of sqrt(2π)",
            "The standard normal density is φ(z) = exp(-z² / 2) / sqrt(2π).",
            lambda z, dh: dh * (_Phi(z) + z * np.exp(-np.asarray(z, dtype=float) ** 2 / 2) / math.sqrt(math.pi))),
    Mistake("the slope of the sigmoid approximation z σ(1.702 z), not of the exact GELU",
            "The exercise asks for exact GELU, z Φ(z): its slope is Φ(z) + z φ(z). The sigmoid form is an "
            "approximation, off by up to about 2e-2.",
            lambda z, dh: dh * _sigmoid_gelu_slope(np.asarray(z, dtype=float))),
    Mistake("SiLU's slope (silu_grad), not GELU's",
            "SiLU is z σ(z); GELU is z Φ(z), with slope Φ(z) + z φ(z).",
            lambda z, dh: dh * silu_grad(np.asarray(z, dtype=float))),
    Mistake("dh applied to the second term only: Φ(z) + dh z φ(z)",
            "The chain rule multiplies the whole slope: dz = dh * (Φ(z) + z φ(z)).",
            lambda z, dh: _Phi(z) + dh * z * _phi(z)),
    Mistake("ReLU's mask instead of GELU's slope",
            "GELU is smooth: its slope is Φ(z) + z φ(z), which runs from slightly negative (below z = -0.75) "
            "to a little above 1, not just 0 or 1.",
            lambda z, dh: dh * (np.asarray(z) > 0)),
]


def _gelu_cases():
    rng = np.random.default_rng(804)
    z = np.array([-10.0, -8.0, -6.0, -3.0, -1.0, -0.75, 0.0, 0.5, 1.0, 2.0, 4.0, 8.0])
    return [Case("a grid from -10 to 8, dh = 1", {"z": z, "dh": np.ones_like(z)}),
            Case("3 tokens x 4 units, mixed dh", {"z": np.round(rng.normal(0, 2, size=(3, 4)), 3),
                                                  "dh": np.round(rng.normal(size=(3, 4)), 3)})]


def _gelu_hidden():
    """Drawn at grading time from the secret: the shape and the numbers."""
    rng = hidden_rng(804)
    shape = _random_shape(rng, (1, 4), (2, 4))
    return [Case("a random array of 1 to 4 dimensions (2 to 4 along each), mixed dh",
                 {"z": np.round(rng.normal(0, 2, size=shape), 3), "dh": np.round(rng.normal(size=shape), 3)})]


def _sigmoid_gelu_slope(z):
    with np.errstate(over="ignore"):
        s = 1 / (1 + np.exp(-1.702 * z))
    return s + 1.702 * z * s * (1 - s)


def _gelu_problem(value: Any, case: Case) -> str | None:
    """_relu_problem's shape checks, then the dtype and "close but not exact": a slope that agrees with
    gelu'(z) to 6 digits but not to 12 is a finite difference (or float32), not the formula the exercise asks."""
    problem = _relu_problem(value, case)
    if problem is not None or not isinstance(value, np.ndarray):
        return problem
    if value.dtype.kind == "f" and value.dtype.itemsize < 8:
        return (f"returned {value.dtype} where z is float64: keep z's dtype (no astype), float64 "
                "carries about 16 digits, float32 7 and float16 3")
    got = np.asarray(value, dtype=float)
    expected = _gelu_backward(case.args["z"], case.args["dh"]).view(np.ndarray)
    if not _gelu_close(got, expected) and close(got, expected, rtol=1e-6, atol=1e-9):
        worst = float(np.max(np.abs(got - expected)))
        return (f"returned slopes close to dh * gelu'(z) but not exact (off by up to {worst:.0e}): a finite "
                "difference such as (gelu(z + h) - gelu(z - h)) / (2 h), or float32 arithmetic? The "
                "exercise asks for the exact slope Φ(z) + z φ(z), which float64 gives to about 1e-15")
    return None


class _ExactSlope(np.ndarray):
    """The reference's dz, marked so that _gelu_compare holds a learner's answer to an exact formula's
    agreement, while a learner's answer and a known mistake's (written with other constants, say 0.79788456
    for sqrt(2/π)) need only agree to 6 digits to be the same mistake."""


def _gelu_close(got, expected) -> bool:
    """Agreement of an exact formula: Φ from ndtr or from erf, φ written any way, agree to about 1e-15
    relative; erf's 1 + erf(z / sqrt(2)) loses up to about 1e-16 absolute where Φ(z) is tiny (z = -6); a central
    difference is off by 1e-11 or more whatever its step."""
    return close(got, expected, rtol=1e-12, atol=1e-14)


def _gelu_compare(got, expected) -> bool:
    if isinstance(expected, _ExactSlope):
        return _gelu_close(got, expected)
    return close(got, expected, rtol=1e-6, atol=1e-9)


def _gelu_backward(z, dh):
    return (dh * gelu_grad(np.asarray(z, dtype=float))).view(_ExactSlope)


@grader
def check_gelu_backward(fn) -> bool:
    """Grade `gelu_backward(z, dh)`: dz = dh * gelu'(z) for the exact GELU, gelu'(z) = Φ(z) + z φ(z)."""
    return check_function(
        "gelu_backward", fn, _gelu_cases(), _gelu_backward, _gelu_problem, _GELU_MISTAKES,
        compare=_gelu_compare, normalize=_as_float,
        hidden=_gelu_hidden,
        fallback_hint="print your slope (dz with dh = 1) at z = 1 and compare it with the two terms of the "
                      "product rule there, Φ(1) = 0.8413 and 1 · φ(1) = 0.2420 (they add up to 1.0833): which term "
                      "is off?")



# ==========================================================================================================
# Pencil exercise: backward_by_hand() -> (dh, dz, dx) for one token through a 2 x 2 ReLU FFN, worked out by
# hand. A fixed answer, so no hidden cases (as lesson 01's hand_trace): a first failure names the wrong
# part and its likely slip, never the numbers; the answer shows after a second failure or with reveal=True.
# ==========================================================================================================
HAND_X = np.array([2.0, 1.0])
HAND_W1 = np.array([[1.0, 2.0], [-1.0, 1.0]])     # (d, d_ff): unit 0's pattern [1, -1], unit 1's [2, 1]
HAND_B1 = np.array([-1.0, -3.0])
HAND_W2 = np.array([[1.0, 2.0], [0.0, -1.0]])     # (d_ff, d): row k is what unit k writes
HAND_B2 = np.array([0.0, 0.0])
HAND_TARGET = np.array([1.0, -4.0])
_HAND_Z = HAND_X @ HAND_W1 + HAND_B1               # [0, 2]: unit 0 exactly on the corner
_HAND_H = np.maximum(_HAND_Z, 0)
_HAND_DY = _HAND_H @ HAND_W2 + HAND_B2 - HAND_TARGET   # [-1, 2]


def _hand_dz(dh):
    return dh * (_HAND_Z > 0)


_HAND = {"dh": _HAND_DY @ HAND_W2.T}
_HAND["dz"] = _hand_dz(_HAND["dh"])
_HAND["dx"] = _HAND["dz"] @ HAND_W1.T
# The worked example in Going further (lesson 01's trace, target [-0.5, 3]): numbers a learner might copy.
_WORKED = {"dh": np.array([0.5, -1.0]), "dz": np.array([0.0, -1.0]), "dx": np.array([-1.0, 1.0])}
_HAND_PARTS = (("dh", "dh = dy W2^T", (2,)), ("dz", "dz = dh * relu'(z)", (2,)), ("dx", "dx = dz W1^T", (2,)))
_HAND_FALLBACK = {
    "dh": "dh_k = sum over j of dy_j W2[k][j]: the dot product of dy with row k of W2.",
    "dz": "dz_k = dh_k where unit k fired (z_k > 0), and 0 where it did not, z_k = 0 included.",
    "dx": "dx_i = sum over k of dz_k W1[i][k]: the dot product of dz with row i of W1.",
}


def _hand_slips(part, base):
    """(name, fix, value) of classic slips in `part`, computed from the learner's own earlier parts."""
    h, dy, z = _HAND_H, _HAND_DY, _HAND_Z
    if part == "dh":
        return [("W2 not transposed in dh: dy W2 instead of dy W2^T",
                 "dh_k pairs dy with row k of W2 (what unit k wrote): dh_k = sum_j dy_j W2[k][j].", dy @ HAND_W2),
                ("dy taken as target - y, its sign flipped", "dy = y - t for L = ||y - t||² / 2.", -dy @ HAND_W2.T),
                ("W2 left out: dh = dy", "The gradient reaches the hidden units through W2: dh = dy W2^T.", dy),
                ("y used where dy belongs", "The gradient needs dy = y - t, not the output y itself.",
                 (h @ HAND_W2 + HAND_B2) @ HAND_W2.T)]
    dh = base["dh"]
    if part == "dz":
        return [("relu'(0) taken as 1 (the mask z >= 0), or the mask left out",
                 "Unit 0 sits exactly at z = 0, where relu'(0) = 0 (PyTorch's choice, and this course's): it "
                 "passes nothing back.", dh * (z >= 0)),
                ("multiplied by z (or h) instead of relu'(z)",
                 "relu'(z) is 1 where the unit fired and 0 elsewhere, whatever the size of z.", dh * z),
                ("the mask inverted: the gradient passed where the unit is off",
                 "Only units that fired (z > 0) pass the gradient back.", dh * (z <= 0)),
                ("relu'(z) written without dh", "dz = dh * relu'(z): the mask multiplies the incoming gradient.",
                 (z > 0) * 1.0)]
    dz = base["dz"]
    return [("W1 not transposed in dx: dz W1 instead of dz W1^T",
             "dx_i pairs dz with row i of W1 (input i's weights into each unit): dx_i = sum_k dz_k W1[i][k].",
             dz @ HAND_W1),
            ("W2 used in place of W1", "dx goes back through the first layer, W1: dx = dz W1^T.", dz @ HAND_W2.T),
            ("dx taken from dh, before the mask",
             "dx comes from dz, the gradient after relu'(z), not from dh.", base["dh"] @ HAND_W1.T)]


def _hand_part(value, shape):
    """(array, None) for a part of the right shape holding finite numbers, else (None, what is wrong)."""
    if value is None:
        return None, "is None"
    if isinstance(value, (str, bytes, dict)) or callable(value):
        return None, f"is {a_kind(value)}, not numbers"
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return None, f"is {a_kind(value)} that cannot be read as numbers"
    if array.shape != shape:
        return None, f"has shape {array.shape}; expected {shape}"
    if not np.all(np.isfinite(array)):
        return None, "holds NaN or infinity"
    return array, None


@grader
def check_backward_by_hand(fn, reveal: bool = False) -> bool:
    """Grade `backward_by_hand()`, which returns dh, dz and dx worked out by hand for the exercise's token.

    A part that follows correctly from the learner's own earlier part gets a neutral mark (as in lesson 01's
    hand_trace); a first failure names the wrong part and its likely slip without the numbers."""
    title = "backward_by_hand"
    report, value = pencil_answer(title, fn, ("dh", "dz", "dx"), "three answers", array_shape=(3, 2))
    if report is None:
        return False
    report.header = "checking dh, dz and dx for x = [2, 1], target t = [1, -4]"
    got = {}
    for (part, _, shape), raw in zip(_HAND_PARTS, value):
        got[part] = _hand_part(raw, shape)
    base = {p: (got[p][0] if got[p][0] is not None else _HAND[p]) for p in _HAND}
    follows = {"dh": _HAND["dh"], "dz": _hand_dz(base["dh"]), "dx": base["dz"] @ HAND_W1.T}
    copied = all(got[p][0] is not None and close_float64(got[p][0], _WORKED[p]) for p in _HAND)
    # Parts wrong on their own: not right, and not what follows from the learner's own earlier part. One name is
    # given only when it explains every one of them (a slip such as dy's sign runs through several parts);
    # otherwise what differs is said, part by part, without a name.
    own = [part for part, _, _ in _HAND_PARTS
           if got[part][1] or not (close_float64(got[part][0], _HAND[part])
                                   or (part in ("dz", "dx") and close_float64(got[part][0], follows[part])))]
    explains = [set(name for name, _, wrong in _hand_slips(part, base)
                    if got[part][1] is None and not close_float64(wrong, follows[part])
                    and close_float64(got[part][0], wrong)) for part in own]
    common = set.intersection(*explains) if explains else set()
    typo = (len(own) == 1 and got[own[0]][1] is None
            and close(got[own[0]][0], follows[own[0]], rtol=1e-5, atol=1e-5))
    quiet = not copied and len(own) > 1 and not common
    failed, named = [], False
    for part, meaning, _ in _HAND_PARTS:
        mine, problem = got[part]
        if problem:
            report.failed(meaning, f"`{part}` {problem}")
            failed.append(part)
            continue
        if close_float64(mine, _HAND[part]):
            report.passed(meaning, fmt(mine))
            continue
        if part in ("dz", "dx") and close_float64(mine, follows[part]):
            previous = "dh" if part == "dz" else "dz"
            report.line(f"{CARRIED} {meaning}: {fmt(mine)} follows correctly from your {previous}; this step is "
                        f"right, and its numbers will come right once {previous} does")
            continue
        failed.append(part)
        report.failed(meaning, f"your {part} = {fmt(mine, 12)} is not right")
        if named or quiet:
            continue
        named = True
        slip = next(((name, fix) for name, fix, wrong in _hand_slips(part, base)
                     if name in (common if len(own) > 1 else explains[own.index(part)])), None)
        if copied:
            report.line("Likely mistake: the worked example's numbers copied. Those are lesson 01's token with the "
                        "target [-0.5, 3]; this exercise has its own token, weights and target.")
        elif typo:
            report.line(f"Likely mistake: a typo or a tiny offset in {part}. It is within 1e-5 of the right "
                        "numbers but not equal to them; every number here is a whole number: write them exactly.")
        elif slip:
            report.line(f"Likely mistake: {slip[0]}. {slip[1]}")
        else:
            report.line(f"Possibly: a slip in {part}. {_HAND_FALLBACK[part]}")
    if quiet:
        report.line(f"What differs: {' and '.join(own)} are each wrong on their own (neither right nor what follows "
                    "from your earlier part), so no one slip explains them: fix them one at a time, starting "
                    f"with {own[0]}.")
        report.tally.problem = f"{' and '.join(own)} each wrong on their own"
    if failed:
        answer = "dh = {}, dz = {}, dx = {}.".format(*(fmt(_HAND[p] + 0.0) for p in _HAND))
        _reveal_line(report, title, reveal, answer, "Find the first step where yours parts from it.")
    return report.finish(len(_HAND_PARTS), len(failed))
