"""Checks for lesson 04, activations: gelu, silu, swiglu_ffn and swiglu_hidden."""
from __future__ import annotations

import inspect
import math
import warnings
from typing import Callable

import numpy as np
from scipy import special

from helpers.checks._core import (Case, Mistake, a_kind, array_problem, check_function, close, fmt,
                                  held_back, int_problem, run, with_tiers)
from helpers.checks._verdict import grader, hidden_rng
from helpers.ffn import gelu, gelu_tanh, relu, silu, swiglu_ffn
from helpers.params import swiglu_hidden

__all__ = ["check_gelu", "check_silu", "check_swiglu_ffn", "check_swiglu_hidden"]

SQRT2 = math.sqrt(2.0)


# --------------------------------------------------------------------------------------------------------
# Shared by the two element-wise activations
# --------------------------------------------------------------------------------------------------------
def _elementwise_problem(value, case) -> str | None:
    """Why `value` is not a finite array shaped like the input z. Neither exercise is about dtype: float32 input
    may come back as float32 or float64; only float64 input cast down to a smaller type fails (precision lost)."""
    z = case.args["z"]
    hints = {(z.size,): "Your function flattened z; keep its shape (NumPy's element-wise functions do)."}
    if z.ndim == 0 and isinstance(value, (float, np.floating)):
        value = np.asarray(value)            # NumPy's functions give a 0-d array's result as a NumPy scalar
    if z.ndim == 0 and isinstance(value, np.ndarray) and value.shape == (1,):
        return ("returned shape (1,) for a 0-d array z (one number, shape ()): an axis was added (np.atleast_1d, "
                "a list around it). Keep z's shape, (); NumPy's element-wise functions do")
    if isinstance(value, (list, tuple)):
        return (f"returned {a_kind(value)}; return a NumPy array shaped like z, {z.shape} "
                "(np.array(...) of your list, or NumPy functions that work on the whole array)")
    subclass = _subclass_problem(value)
    if subclass:
        return subclass
    if isinstance(value, np.ndarray) and value.dtype == object:
        return ("returned an object array (dtype object), as np.frompyfunc or a list of mixed things gives: "
                "return floats. NumPy's own functions on the whole array (np.exp, special.erf) give them, or "
                "np.vectorize(f, otypes=[float])")
    problem = array_problem(value, z.shape, shape_hints=hints)
    if problem is not None:
        return problem
    if z.dtype == np.float64 and value.dtype != np.float64:
        return (f"returned dtype {value.dtype} for float64 input; keep float64 (a cast to a smaller type "
                "throws away precision)")
    if np.dtype(value.dtype).itemsize < np.dtype(z.dtype).itemsize:
        return (f"returned dtype {value.dtype} for {z.dtype} input; keep at least the input's precision (a cast "
                "to a smaller type throws away digits)")
    return None


def _subclass_problem(value) -> str | None:
    """A message for an array subclass (np.matrix, a masked array): each has rules of its own."""
    if isinstance(value, np.ndarray) and type(value) is not np.ndarray:
        return (f"returned {a_kind(value)}, a subclass of the NumPy array with rules of its own; return a plain "
                "array (np.asarray(...)), as NumPy's functions on a plain array give")
    return None


def _precision_problem(value, expected, what: str, low: bool = False, at=None) -> str | None:
    """For a float64 result that agrees with the reference only to a few digits: rounding, float32 or float16
    inside, or an approximation, named; None when it agrees to float64's precision (or is simply wrong)."""
    value, expected = np.asarray(value), np.asarray(expected)
    if value.shape != expected.shape or not np.issubdtype(value.dtype, np.floating) or _agrees(value, expected):
        return None
    both64 = value.dtype == np.float64 and expected.dtype == np.float64
    given = value                                          # in its own dtype: np.round(v32, 2) is float32 too
    value, expected = value.astype(np.float64), expected.astype(np.float64)
    error = np.abs(value - expected)
    for decimals in range(0, 9):
        if (np.array_equal(np.round(given, decimals), given) and not np.array_equal(np.round(expected, decimals),
                                                                                  expected)
                and np.max(error) <= 0.5 * 10.0 ** -decimals * (1 + 1e-6) + (1e-12 if both64 else 1e-6)):
            places = "whole numbers" if decimals == 0 else f"{decimals} decimals"
            return (f"returned numbers rounded to {places}; return them as computed. Rounding belongs in printing "
                    "(f\"{y:.4f}\"), never in the result")
    if not both64 or low:
        return None                      # float32 input: float32 inside is allowed; rounding was the one slip
    for small, digits in ((np.float16, 3), (np.float32, 7)):
        with np.errstate(over="ignore"):
            cast_in = at is not None and _agrees(value, np.asarray(at(small), dtype=float))  # z cast down first
            if cast_in or np.array_equal(value.astype(small).astype(np.float64), value) and not close(
                    value, expected, rtol=1e-12, atol=0):
                return (f"returned numbers that fit in {np.dtype(small).name}, or its inputs did: part of {what} "
                        f"ran in {np.dtype(small).name} (about {digits} significant digits), float32 inside or "
                        "float16, and was cast back to float64. "
                        "Keep float64 all the way: no .astype(np.float32) or np.float32(...) inside")
    if close(value, expected, rtol=1e-6, atol=2e-6):
        return (f"returned numbers that agree with the exact {what} only to within {float(np.max(error)):.1g}, "
                "where float64 is good to about 1e-16 of each value: an approximation (of erf, of the exponential) "
                "or float32 inside. Use the exact functions on float64: scipy.special.erf or ndtr, np.exp or "
                "scipy.special.expit")
    return None


def _tight(a, b) -> bool:
    """Agreement to float64's precision. Correct ways of writing GELU, SiLU or SwiGLU agree to about 1e-14
    relative; 0.5 * z * (1 + erf(z / sqrt(2))) loses relative precision in the far left tail, where the values
    themselves are below 1e-13, hence the small absolute slack."""
    return close(a, b, rtol=1e-10, atol=1e-13)


def _agrees(value, expected) -> bool:
    """The comparison of gelu's or silu's result: float64's precision, or float32's for a float32 result or
    float32 reference (float32 input may come back as float32)."""
    if np.asarray(value).dtype == np.float64 and np.asarray(expected).dtype == np.float64:
        return _tight(value, expected)
    return close(value, expected, rtol=1e-5, atol=1e-6)


def _cases(seed: int, large: list[float]) -> list[Case]:
    """The cases of an element-wise activation of any shape: 1-D, 2-D, 3-D and 0-d, the tails (`large`, where
    a cut-off such as "0 below -6.5" or "z above 20" shows) and float32."""
    rng = np.random.default_rng(seed)
    return [
        Case("a grid of values from -4 to 4 (including 0)", {"z": np.linspace(-4.0, 4.0, 17)}),
        Case("a (T, d_ff) = (3, 5) array of pre-activations", {"z": np.round(2 * rng.normal(size=(3, 5)), 3)}),
        Case("a (B, T, d_ff) = (2, 3, 4) array: any shape, here 3-D", {"z": 2 * rng.normal(size=(2, 3, 4))}),
        Case("a 0-d array, np.array(-0.7): one number, shape ()", {"z": np.array(-0.7)}),
        Case(f"large |z| (up to ±{max(large):g})", {"z": np.array(large)}),
        Case("float32 input (a float32 or a float64 result both pass)",
             {"z": np.linspace(-3.0, 3.0, 13, dtype=np.float32)}),
    ]


def _hidden_activation(label: str, tails: tuple[float, float]):
    """The hidden cases of an element-wise activation, a builder that draws them at grading time (hidden_rng:
    fresh from the grading secret, fixed for the tests), shapes as well as numbers: an array of 1 to 3 axes, one
    number as a 0-d array, float32, and both tails, one value in each step of 1 from |z| = tails[0] to tails[1]
    (where a cut-off such as "0 below -6.5" shows), so that every cut-off in that range meets a value beyond it."""
    def build() -> list[Case]:
        rng = hidden_rng(label)
        shape = tuple(int(n) for n in rng.integers(1, 6, size=int(rng.integers(1, 4))))
        low, high = tails
        steps = np.arange(low, high, 1.0)
        tail = np.concatenate([-rng.uniform(steps, np.minimum(steps + 1, high)),
                               rng.uniform(steps, np.minimum(steps + 1, high))])
        return [Case("hidden: a random array of 1 to 3 axes, each 1 to 5 long", {"z": 2.5 * rng.normal(size=shape)}),
                Case("hidden: one random number as a 0-d array", {"z": np.array(2.5 * rng.normal())}),
                Case("hidden: a random float32 array of 2 to 12 values (a float32 or a float64 result both pass)",
                     {"z": (2.5 * rng.normal(size=int(rng.integers(2, 13)))).astype(np.float32)}),
                Case(f"hidden: random values in both tails, one in each step of 1 from |z| = {low:g} to {high:g}",
                     {"z": rng.permutation(tail)})]
    return build


# --------------------------------------------------------------------------------------------------------
# Exercise: exact GELU
# --------------------------------------------------------------------------------------------------------
def _Phi(z):
    return 0.5 * special.erfc(-np.asarray(z, dtype=float) / SQRT2)


def _density(z):
    z = np.asarray(z, dtype=float)
    return np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)


def _math_on_array(f):
    """A function of one Python number applied to a whole array: raises the TypeError a learner sees."""
    return lambda z: f(np.asarray(z))


_GELU_MISTAKES = [
    Mistake("math.erf (a function of one number) applied to a whole array",
            "math.erf takes one number at a time. scipy.special.erf (imported as `special`) works element by "
            "element on a whole array: use it in place of math.erf.",
            _math_on_array(lambda z: z * 0.5 * (1 + math.erf(z / SQRT2))),
            "In the formula that is special.erf(z / math.sqrt(2))."),
    Mistake("the tanh approximation (GPT-2's formula) where the exact GELU was asked for",
            "Use the error function: gelu(z) = z * 0.5 * (1 + erf(z / sqrt(2))). The tanh form is close "
            "(within 5e-4) but it is a different function.",
            lambda z: gelu_tanh(np.asarray(z, dtype=float))),
    Mistake("the density φ(z) used where the cumulative Φ(z) belongs",
            "φ(z) = e^(-z²/2) / sqrt(2π) is the bell curve; GELU needs Φ(z), the area under it up to z: "
            "Φ(z) = 0.5 * (1 + erf(z / sqrt(2))).",
            lambda z: np.asarray(z, dtype=float) * _density(z)),
    Mistake("the factor z is missing (that is Φ(z) alone)",
            "GELU multiplies z by Φ(z): the result is z times Phi, not Phi alone.",
            _Phi),
    Mistake("erf(z) where erf(z / sqrt(2)) belongs",
            "Φ(z) = 0.5 * (1 + erf(z / sqrt(2))): divide z by sqrt(2) inside the error function.",
            lambda z: np.asarray(z, dtype=float) * 0.5 * (1 + special.erf(np.asarray(z, dtype=float)))),
    Mistake("z multiplied by sqrt(2) inside erf instead of divided",
            "Φ(z) = 0.5 * (1 + erf(z / sqrt(2))): divide by sqrt(2), don't multiply.",
            lambda z: np.asarray(z, dtype=float) * 0.5 * (1 + special.erf(np.asarray(z, dtype=float) * SQRT2))),
    Mistake("sqrt(2) divides erf(z) instead of z inside erf",
            "The division belongs inside the error function: erf(z / sqrt(2)), not erf(z) / sqrt(2).",
            lambda z: np.asarray(z, dtype=float) * 0.5 * (1 + special.erf(np.asarray(z, dtype=float)) / SQRT2)),
    Mistake("the parentheses around 1 + erf(...) are missing",
            "z * 0.5 * 1 + erf(...) multiplies only the 1 by z / 2 and adds erf on its own. Write "
            "z * 0.5 * (1 + erf(z / sqrt(2))), with the sum in parentheses.",
            lambda z: np.asarray(z, dtype=float) * 0.5 + special.erf(np.asarray(z, dtype=float) / SQRT2)),
    Mistake("the factor 1/2 is missing",
            "Φ(z) = 0.5 * (1 + erf(z / sqrt(2))) runs from 0 to 1; without the 0.5 it runs from 0 to 2.",
            lambda z: 2 * gelu(np.asarray(z, dtype=float))),
    Mistake("1 - erf where 1 + erf belongs (that is Φ(-z))",
            "Φ(z) = 0.5 * (1 + erf(z / sqrt(2))) with a plus: large positive z should pass almost unchanged.",
            lambda z: np.asarray(z, dtype=float) * _Phi(-np.asarray(z, dtype=float))),
    Mistake("the sigmoid approximation z * sigmoid(1.702 z)",
            "That is a cheaper stand-in; the exercise asks for the exact z * Φ(z) with the error function.",
            lambda z: np.asarray(z, dtype=float) * special.expit(1.702 * np.asarray(z, dtype=float))),
    Mistake("SiLU (z * sigmoid(z)) instead of GELU",
            "GELU weights z by the normal CDF Φ(z) = 0.5 * (1 + erf(z / sqrt(2))), not by the sigmoid.",
            lambda z: silu(np.asarray(z, dtype=float))),
    Mistake("ReLU instead of GELU",
            "max(0, z) is ReLU; GELU is z * Φ(z), smooth and slightly negative for negative z.",
            lambda z: relu(np.asarray(z, dtype=float))),
]


# From 4 to 7.5: beyond about 7.3 GELU's difference from 0 is below float64's reach in the comparison, and beyond
# 6.4 its difference from z is.
_GELU_TAILS = (4.0, 7.5)


@grader
def check_gelu(fn) -> bool:
    """Grade `gelu(z)`: the exact GELU z * Φ(z), element-wise, for a NumPy array z of any shape."""
    ok = check_function(
        "gelu", fn, _cases(4, [-10.0, -7.5, -7.0, -6.0, -3.0, 3.0, 6.0, 7.0, 10.0]), gelu,
        lambda value, case: _activation_problem(value, case, gelu, "GELU"),
        _GELU_MISTAKES, compare=_agrees,
        fallback_hint=_shape_hint(fn, "compare your code with z * Phi(z), Phi(z) = 0.5 * (1 + erf(z / sqrt(2))), "
                                      "term by term: what divides z inside erf, the factor 1/2, and the final "
                                      "factor z.") if callable(fn) else "",
        hidden=_hidden_activation("gelu", _GELU_TAILS))
    return ok


# --------------------------------------------------------------------------------------------------------
# Exercise: SiLU
# --------------------------------------------------------------------------------------------------------
_SILU_MISTAKES = [
    Mistake("math.exp (a function of one number) applied to a whole array",
            "math.exp takes one number at a time; np.exp works element by element on a whole array: use it in "
            "place of math.exp.",
            _math_on_array(lambda z: z / (1 + math.exp(-z))),
            "In the formula that is z / (1 + np.exp(-z))."),
    Mistake("sigmoid alone, without the factor z",
            "1 / (1 + e^-z) is the sigmoid σ(z); SiLU multiplies it by z: z / (1 + e^-z).",
            lambda z: special.expit(np.asarray(z, dtype=float))),
    Mistake("e^z where e^-z belongs (that is z * sigmoid(-z))",
            "SiLU is z / (1 + e^-z), with a minus in the exponent: large positive z should pass almost "
            "unchanged.",
            lambda z: np.asarray(z, dtype=float) * special.expit(-np.asarray(z, dtype=float))),
    Mistake("tanh where the sigmoid belongs (that is z * tanh(z))",
            "SiLU uses the sigmoid 1 / (1 + e^-z), which runs from 0 to 1; tanh runs from -1 to 1.",
            lambda z: np.asarray(z, dtype=float) * np.tanh(np.asarray(z, dtype=float))),
    Mistake("1 - e^-z where 1 + e^-z belongs",
            "SiLU is z / (1 + e^-z), with a plus in the denominator (with a minus it divides by zero at z = 0).",
            lambda z: _quiet(lambda: np.asarray(z) / (1 - np.exp(-np.asarray(z))))),
    Mistake("the parentheses around 1 + e^-z are missing (z / 1 + e^-z)",
            "z / 1 + np.exp(-z) divides z by 1 and then adds e^-z. Put the denominator in parentheses: "
            "z / (1 + np.exp(-z)).",
            lambda z: _quiet(lambda: np.asarray(z) + np.exp(-np.asarray(z)))),
    Mistake("softplus, log(1 + e^z), instead of SiLU",
            "log(1 + e^z) is softplus, a smooth ReLU that is never negative. SiLU is z / (1 + e^-z): z times the "
            "sigmoid.",
            lambda z: _quiet(lambda: np.log(1 + np.exp(np.asarray(z))))),
    Mistake("GELU instead of SiLU",
            "Both are z times a smooth step; SiLU's step is the sigmoid 1 / (1 + e^-z), not Φ(z).",
            lambda z: gelu(np.asarray(z, dtype=float))),
    Mistake("ReLU instead of SiLU",
            "max(0, z) is ReLU; SiLU is z / (1 + e^-z), smooth and slightly negative for negative z.",
            lambda z: relu(np.asarray(z, dtype=float))),
]

# ±20.5: silu(20.5) = 20.5 - 2.5e-8 and silu(-20.5) = -2.5e-8, so a cut-off at 20 (z itself above it, 0 below
# -20) shows; beyond about ±25 the difference is at float64's rounding and no cut-off can be told.
_SILU_LARGE = [-1000.0, -100.0, -40.0, -20.5, -20.0, 20.0, 20.5, 40.0, 100.0, 1000.0]
_SILU_TAILS = (10.0, 40.0)    # the hidden tails: a cut-off shows up to about 23 (z itself) and 33 (0)


def _quiet(compute):
    """Run a mutant's NumPy arithmetic without its overflow and divide warnings (a mutant must not warn)."""
    with np.errstate(all="ignore"):
        return compute()


def _cut_off(value, z, expected, what: str) -> str | None:
    """For a float64 result that is not right: a cut-off in the tails, exactly 0 (or exactly z) where the
    activation is small but not 0 (or close to z but not equal), as np.where(z < -6.5, 0, ...) gives."""
    value, expected = np.asarray(value), np.asarray(expected)
    if value.dtype != np.float64 or z.dtype != np.float64 or value.shape != z.shape or _agrees(value, expected):
        return None
    zero = (value == 0) & (expected != 0) & (np.abs(z) > 1)
    same = (value == z) & (expected != z) & (np.abs(z) > 1)
    for mask, gives in ((zero, "exactly 0"), (same, "z itself")):
        if np.any(mask) and _agrees(value[~mask], expected[~mask]):   # right everywhere else: a cut-off
            worst = np.argmax(np.where(mask, np.abs(value - expected), -1.0))   # the clearest of them
            at, exact = float(z.flat[worst]), float(expected.flat[worst])
            shown = f"{exact:.2g}" if gives == "exactly 0" else f"z - {at - exact:.2g}"
            return (f"returned {gives} for z = {fmt(at)}, where the exact {what} is {shown}: "
                    "a cut-off in the tail (np.where(z < -6.5, 0, ...) or np.where(z > 20, z, ...)). A tiny "
                    "difference still counts: drop the cut-off. The exact formula needs none (scipy.special.ndtr "
                    "and expit do not overflow)")
    return None


_ZERO_D_HINT = ("your function fails on a 0-d array, one number of shape (). There NumPy's functions give back a "
                "NumPy scalar, and a loop over z (or over its rows) has nothing to iterate. Write it with NumPy's "
                "element-wise functions on the whole array, which work for every shape, or wrap a result in "
                "np.asarray(...).")


def _shape_hint(fn, default: str) -> str:
    """The hint to print when no known mistake matches: about 0-d arrays, if fn raises only there."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zero_d, one_d = run(fn, {"z": np.array(-0.7)}), run(fn, {"z": np.array([-0.7, 0.5])})
    return _ZERO_D_HINT if zero_d.raised and not one_d.raised else default


def _activation_problem(value, case, reference, what: str) -> str | None:
    """_elementwise_problem, then for a float64 result: a cut-off in a tail, or agreement with the reference
    only to a few digits."""
    problem = _elementwise_problem(value, case)
    if problem is None:
        z = case.args["z"]
        with np.errstate(all="ignore"):
            precision = _precision_problem(value, reference(z), what, low=z.dtype != np.float64,
                                           at=lambda small: reference(z.astype(small).astype(np.float64)))
        if precision is not None and "that fit in" in precision:
            return precision             # float32 inside also flushes the far tail to 0: that is no cut-off
        with np.errstate(all="ignore"):
            problem = _cut_off(value, z, reference(z), what)
        return problem if problem is not None else precision
    return problem


def _silu_problem(value, case) -> str | None:
    problem = _activation_problem(value, case, silu, "SiLU")
    if (problem is None or not isinstance(value, np.ndarray) or value.shape != case.args["z"].shape
            or not np.issubdtype(value.dtype, np.floating)):
        return problem                       # an object array: np.isfinite cannot even look at it
    z = case.args["z"]
    bad = ~np.isfinite(value)
    if np.any(bad & (z > 0)):
        where = fmt(float(z[bad & (z > 0)].max()))
        return (f"returned NaN or infinity for z = {where}: e^z overflows to inf there, and inf / inf is NaN. "
                "Write it with e^-z instead, z / (1 + np.exp(-z)): for large positive z that is z / 1, and for "
                "large negative z it is z / inf = 0, the right answer. scipy.special.expit(z) is a "
                "sigmoid that never overflows.")
    return problem


def _overflow_hint(fn) -> str:
    """The hint to print when no known mistake matches: about math.exp's OverflowError if that happened."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome = run(fn, {"z": np.array(_SILU_LARGE)})
    if isinstance(outcome.error, OverflowError):
        return ("math.exp(1000) is too big for a Python float, so it raises. np.exp returns inf instead (with "
                "a warning), and z / (1 + inf) = 0 is the right answer; scipy.special.expit(z) avoids both.")
    return ("compare your code with z / (1 + e^-z) term by term: the sign in the exponent, the parentheses "
            "around the denominator, and the factor z on top.")


@grader
def check_silu(fn) -> bool:
    """Grade `silu(z)`: z / (1 + e^-z), element-wise, for a NumPy array z of any shape.

    np.exp(-z) overflows to inf for very negative z with a RuntimeWarning, but z / inf = 0 is still the
    right value: such a function passes, with a note about the warning.
    """
    hint = _shape_hint(fn, _overflow_hint(fn)) if callable(fn) else ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ok = check_function(
            "silu", fn, _cases(5, _SILU_LARGE), silu, _silu_problem, _SILU_MISTAKES,
            compare=_agrees, fallback_hint=hint, hidden=_hidden_activation("silu", _SILU_TAILS))
    overflowed = any(issubclass(w.category, RuntimeWarning) and "overflow" in str(w.message) for w in caught)
    if ok and overflowed:
        print("  Note: your silu is right, but NumPy warned 'overflow encountered in exp' along the way: for "
              "z = -1000, e^-z = e^1000 is too big and becomes inf. The answer survives (z / inf = 0), so this "
              "passes. To silence it, use scipy.special.expit(z) for the sigmoid (z * expit(z)), which "
              "never overflows.")
    return ok


# --------------------------------------------------------------------------------------------------------
# Exercise: the SwiGLU FFN
# --------------------------------------------------------------------------------------------------------
def _paths(x, W_gate, W_up):
    x = np.asarray(x, dtype=float)
    return x @ np.asarray(W_gate, dtype=float), x @ np.asarray(W_up, dtype=float)


def _mutant(combine, after=lambda y: y):
    """A SwiGLU-shaped function that combines the gate and value pre-activations with `combine`; after=None
    multiplies by W_down transposed instead."""
    def fn(x, W_gate, W_up, W_down):
        g, v = _paths(x, W_gate, W_up)
        W = np.asarray(W_down, dtype=float)
        if after is None:
            return combine(g, v) @ W.T
        return after(combine(g, v) @ W)
    return fn


_COLUMN = "the matrices applied in the column-vector convention (W_gate.T @ x)"
_SWIGLU_MISTAKES = [
    Mistake("gate and value swapped: SiLU went on the value path x @ W_up instead of the gate x @ W_gate",
            "SiLU belongs on the gate path, x through W_gate; the value path, x through W_up, passes through "
            "unchanged.",
            _mutant(lambda g, v: silu(v) * g),
            "(silu(x @ W_gate) * (x @ W_up)) @ W_down."),
    Mistake("SiLU applied to both paths",
            "Only the gate path goes through SiLU; the value path x @ W_up is used as it is.",
            _mutant(lambda g, v: silu(g) * silu(v))),
    Mistake("the product is missing: only the gate path silu(x @ W_gate) reaches W_down",
            "Multiply the gate by the value path, element by element: silu(x @ W_gate) * (x @ W_up).",
            _mutant(lambda g, v: silu(g))),
    Mistake("the product is missing: only the value path x @ W_up reaches W_down",
            "Multiply the value path by the gate path (after its SiLU), element by element.",
            _mutant(lambda g, v: v)),
    Mistake("the two paths added instead of multiplied",
            "The gate scales the value: use *, element-wise, not +.",
            _mutant(lambda g, v: silu(g) + v)),
    Mistake("SiLU applied after the product instead of to the gate",
            "Apply SiLU to x @ W_gate first, then multiply: silu(x @ W_gate) * (x @ W_up).",
            _mutant(lambda g, v: silu(g * v))),
    Mistake("SiLU applied to the output, after W_down",
            "Nothing follows W_down: the output must stay signed so the block can add it back onto x. Apply "
            "SiLU to the gate path x @ W_gate.",
            _mutant(lambda g, v: g * v, after=silu)),
    Mistake("ReLU applied to the output, after W_down",
            "Nothing follows W_down: the block adds the FFN's output back onto x, and a ReLU there would stop it "
            "from ever lowering a coordinate of x. Return (silu(x @ W_gate) * (x @ W_up)) @ W_down as it is.",
            _mutant(lambda g, v: silu(g) * v, after=relu)),
    Mistake("SiLU applied again to the output, after W_down",
            "SiLU belongs on the gate path only; nothing follows W_down, whose output must stay signed so the "
            "block can add it back onto x.",
            _mutant(lambda g, v: silu(g) * v, after=silu)),
    Mistake("W_down transposed",
            "W_down is stored (d_ff, d): the hidden layer (..., d_ff) times W_down as it is gives (..., d). "
            "Drop the .T.",
            _mutant(lambda g, v: silu(g) * v, after=None)),
    Mistake(_COLUMN,
            "That works for one token but not for a sequence (T, d) or a batch. Here x holds one token per row "
            "and the matrices are stored (d, d_ff): multiply with the matrix on the right, x @ W_gate, so any "
            "number of leading dimensions works.",
            lambda x, W_gate, W_up, W_down: np.asarray(W_down).T @ (
                silu(np.asarray(W_gate).T @ np.asarray(x)) * (np.asarray(W_up).T @ np.asarray(x)))),
    Mistake("the matrices applied on the left, as stored (W_gate @ x)",
            "W_gate is stored (d, d_ff) and x holds one token per row: W_gate @ x runs only when d = d_ff, and "
            "then gives the wrong numbers (the transpose's). Multiply with the matrix on the right, x @ W_gate, "
            "and keep that one way for every input (no try/except that switches order when one fails).",
            lambda x, W_gate, W_up, W_down: np.asarray(W_down) @ (
                silu(np.asarray(W_gate) @ np.asarray(x)) * (np.asarray(W_up) @ np.asarray(x)))),
    Mistake("no SiLU at all (a plain product of the two paths)",
            "Apply SiLU to the gate path: silu(x @ W_gate) * (x @ W_up).",
            _mutant(lambda g, v: g * v)),
    Mistake("ReLU instead of SiLU on the gate",
            "SwiGLU's gate is SiLU, z / (1 + e^-z); use silu(x @ W_gate), not relu.",
            _mutant(lambda g, v: relu(g) * v)),
    Mistake("GELU instead of SiLU on the gate (that would be GeGLU)",
            "SwiGLU's gate is SiLU, z / (1 + e^-z); use silu(x @ W_gate).",
            _mutant(lambda g, v: gelu(g) * v)),
    Mistake("the sigmoid instead of SiLU on the gate (that is the original GLU)",
            "SiLU is z * sigmoid(z); the gate is silu(x @ W_gate), not sigmoid(x @ W_gate).",
            _mutant(lambda g, v: special.expit(g) * v)),
]

# Lines of the solution a first failure keeps back (issue 21): the gate's SiLU and the product of the paths.
_SWIGLU_FORMULAS = ["silu(x @ W_gate)", "silu(x @ W_gate) * (x @ W_up)"]
_SWIGLU_MISTAKES = with_tiers(_SWIGLU_MISTAKES, _SWIGLU_FORMULAS)

_D, _D_FF = 4, 6   # non-square on purpose: a transposed matrix raises instead of passing by luck


def _swiglu_weights(rng: np.random.Generator, d: int, d_ff: int) -> dict[str, np.ndarray]:
    """W_gate, W_up (d, d_ff) and W_down (d_ff, d): normal draws, so a square one is not symmetric."""
    return {"W_gate": rng.normal(size=(d, d_ff)), "W_up": rng.normal(size=(d, d_ff)),
            "W_down": rng.normal(size=(d_ff, d)) / math.sqrt(d_ff)}


def _swiglu_cases() -> list[Case]:
    rng = np.random.default_rng(6)
    W = _swiglu_weights(rng, _D, _D_FF)
    square = _swiglu_weights(rng, _D, _D)
    return [
        Case("one token, x of shape (d,) = (4,)", {"x": rng.normal(size=_D), **W}),
        Case("a sequence, x of shape (T, d) = (5, 4)", {"x": rng.normal(size=(5, _D)), **W}),
        Case("a batch, x of shape (B, T, d) = (2, 3, 4)", {"x": rng.normal(size=(2, 3, _D)), **W}),
        Case("a sequence of one token, x of shape (T, d) = (1, 4): the length-1 axis stays",
             {"x": rng.normal(size=(1, _D)), **W}),
        Case("a batch of one-token sequences, x of shape (B, T, d) = (2, 1, 4)",
             {"x": rng.normal(size=(2, 1, _D)), **W}),
        Case("one token with square weights, d = d_ff = 4 (W @ x runs here, and is wrong)",
             {"x": rng.normal(size=_D), **square}),
        Case("a sequence (T, d) = (4, 4) with square weights, d = d_ff = 4", {"x": rng.normal(size=(_D, _D)),
                                                                             **square}),
    ]


def _swiglu_hidden() -> list[Case]:
    """Drawn at grading time (hidden_rng), sizes as well as numbers: d != d_ff but in the square case."""
    rng = hidden_rng("swiglu_ffn")
    d = int(rng.integers(3, 8))
    W = _swiglu_weights(rng, d, int(rng.choice([n for n in range(4, 11) if n != d])))
    side = int(rng.integers(3, 7))
    square = _swiglu_weights(rng, side, side)
    lead = tuple(int(n) for n in rng.integers(1, 5, size=2))
    return [Case("hidden: one random token (d,), d of 3 to 7 -> d_ff of 4 to 10 (never equal)",
                 {"x": rng.normal(size=d), **W}),
            Case("hidden: a random batch (B, T, d), B and T of 1 to 4, with the same weights",
                 {"x": rng.normal(size=lead + (d,)), **W}),
            Case("hidden: a random sequence (T, d) with square weights, d = d_ff of 3 to 6, T of 2 to 6",
                 {"x": rng.normal(size=(int(rng.integers(2, 7)), side)), **square})]


def _swiglu_problem(value, case) -> str | None:
    x = np.asarray(case.args["x"])
    lead, d, d_ff = x.shape[:-1], case.args["W_down"].shape[1], case.args["W_gate"].shape[1]
    hints = {lead + (d_ff,): "That is the hidden layer's shape, (..., d_ff): multiply by W_down at the end.",
             lead: "The output has a row of d numbers per token: check the last matrix product.",
             (1,) + lead + (d,): "An extra leading axis of length 1: np.atleast_2d, x[None] or x.reshape(1, -1) "
                                 "added it. x @ W works on a single token of shape (d,) as it is and returns "
                                 "shape (d_ff,); keep x's leading shape, with no axis added"}
    squeezed = tuple(n for n in lead + (d,) if n != 1)
    if squeezed != lead + (d,):
        hints[squeezed] = ("The axes of length 1 are gone: .squeeze() or np.squeeze drops every axis of length 1, "
                           "also the token axis of a one-token sequence. Keep x's leading shape: with no axis "
                           "added (np.atleast_2d) there is none to take away, and x @ W keeps it")
    if d == d_ff:
        hints.pop(lead + (d_ff,))
    subclass = _subclass_problem(value)
    if subclass:
        return subclass
    problem = array_problem(value, lead + (d,), shape_hints=hints)
    if problem is None and x.dtype == np.float64 and value.dtype != np.float64:
        problem = (f"returned dtype {value.dtype} for float64 inputs; keep float64 (a cast to a smaller type "
                   "throws away precision)")
    if problem is None:
        with np.errstate(all="ignore"):
            problem = _precision_problem(value, swiglu_ffn(**case.args), "SwiGLU FFN")
    return problem


class _NotThisMistake(Exception):
    """Raised by a probing mutant whose probe says the learner did not make its mistake (matches nothing)."""


def _column_convention_mistake(fn) -> list[Mistake]:
    """The column-vector convention written any way (W_gate.T @ x, np.dot(W_gate.T, x), ...): it gets one token
    right and fails on a sequence, with an error that depends on how it was written. The mutant probes the
    learner's function with the sequence transposed, one token per column: if that gives the right outputs,
    one per column, the learner computes W.T @ x, and the mutant then does whatever the learner does."""
    column = _SWIGLU_MISTAKES[[m.name for m in _SWIGLU_MISTAKES].index(_COLUMN)]

    def probing(x, W_gate, W_up, W_down):
        x = np.asarray(x, dtype=float)
        if x.ndim == 1:
            return swiglu_ffn(x, W_gate, W_up, W_down)
        rows = x.reshape(-1, x.shape[-1])                      # (n, d)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            probe = run(fn, {"x": rows.T.copy(), "W_gate": W_gate, "W_up": W_up, "W_down": W_down})
        try:
            columns = np.asarray(probe.value, dtype=float)
            is_column = (not probe.raised and columns.shape == (W_down.shape[1], len(rows))
                         and close(columns.T, swiglu_ffn(rows, W_gate, W_up, W_down)))
        except (TypeError, ValueError):
            is_column = False
        if not is_column:
            raise _NotThisMistake
        return fn(x, W_gate, W_up, W_down)                     # the learner's own result or error on this case
    return [Mistake(column.name, column.fix, probing)]


@grader
def check_swiglu_ffn(fn) -> bool:
    """Grade `swiglu_ffn(x, W_gate, W_up, W_down)` = (silu(x @ W_gate) * (x @ W_up)) @ W_down."""
    mistakes = _SWIGLU_MISTAKES + (_column_convention_mistake(fn) if callable(fn) else [])
    return check_function(
        "swiglu_ffn", fn, _swiglu_cases(), swiglu_ffn, _swiglu_problem, mistakes,
        compare=_tight, hidden=_swiglu_hidden,
        fallback_hint="check each step against the formula: SiLU on x @ W_gate only, an element-wise product "
                      "with x @ W_up (both (..., d_ff)), then one product with W_down and nothing after it.")


# --------------------------------------------------------------------------------------------------------
# Exercise: the SwiGLU hidden width
# --------------------------------------------------------------------------------------------------------
def _hidden_cases() -> list[Case]:
    return [
        Case("d = 4096 (Llama 7B), multiple_of = 256", {"d": 4096, "multiple_of": 256}),
        Case("d = 4096 with the default multiple_of", {"d": 4096}),
        Case("d = 5120 (Llama 13B) with the default multiple_of", {"d": 5120}),
        Case("d = 8192 (Llama 65B), multiple_of = 256", {"d": 8192, "multiple_of": 256}),
        Case("d = 768: 8/3 · d = 2048 is already a multiple of 256", {"d": 768, "multiple_of": 256}),
        Case("d = 4096, multiple_of = 64", {"d": 4096, "multiple_of": 64}),
        Case("d = 4096, multiple_of = 100 (not a power of two)", {"d": 4096, "multiple_of": 100}),
        Case("d = 4096, multiple_of = 1 (no rounding)", {"d": 4096, "multiple_of": 1}),
        Case("d = 96: 8/3 · d = 256 exactly, already a multiple of 256 (stays 256)", {"d": 96, "multiple_of": 256}),
        Case("d = 1025, multiple_of = 1: h = 2733 stays 2733", {"d": 1025, "multiple_of": 1}),
    ]


def _truncated(d: int) -> int:
    """h = int(2 * 4 * d / 3), the width before rounding."""
    return int(2 * 4 * d / 3)


def _redrawn(draw: Callable[[], tuple[int, int]], holds: Callable[[int, int], bool],
             fallback: tuple[int, int]) -> tuple[int, int]:
    """(d, multiple_of) from draw(), drawn again (at most 50 times) until holds(d, multiple_of); else `fallback`,
    a fixed pair that has the property."""
    for _ in range(50):
        d, m = draw()
        if holds(d, m):
            return d, m
    return fallback


def _hidden_hidden() -> list[Case]:
    """Drawn at grading time (hidden_rng), each with the property its name states: h = int(8d/3) needs rounding
    (or, in the last case, is already a multiple), and in the third case h is just past a multiple, by less than
    a thousandth of it, so int(h / m + 0.999) rounds it down."""
    rng = hidden_rng("swiglu_hidden")

    def rounds(d: int, m: int) -> bool:
        return _truncated(d) % m != 0

    def past_a_multiple() -> tuple[int, int]:         # the first d whose h passes k whole multiples of m
        m, k = int(rng.integers(2048, 8193)), int(rng.integers(1, 5))
        d = 3 * k * m // 8
        while _truncated(d) <= k * m:
            d += 1
        return d, m

    def already_a_multiple() -> tuple[int, int]:      # d = 3q: h = 8q, and m one of its divisors from 8 up
        h = 8 * int(rng.integers(16, 1001))
        return 3 * h // 8, int(rng.choice([m for m in range(8, h) if h % m == 0]))

    model = _redrawn(lambda: (128 * int(rng.integers(8, 129)), 256), rounds, (6656, 256))
    wide = _redrawn(lambda: (int(rng.integers(64, 10001)), 256), rounds, (2048, 256))
    past = _redrawn(past_a_multiple, lambda d, m: 0 < _truncated(d) % m < m / 1000, (1537, 4096))
    odd = _redrawn(lambda: (int(rng.integers(100, 5001)), int(rng.choice([m for m in range(3, 100) if m & (m - 1)]))),
                   rounds, (1000, 7))
    multiple = already_a_multiple()
    return [Case("hidden: a random model width (a multiple of 128, 1,024 to 16,384) with the default multiple_of",
                 {"d": model[0]}),
            Case("hidden: a random d (64 to 10,000), multiple_of = 256", {"d": wide[0], "multiple_of": 256}),
            Case("hidden: a random d and a large multiple_of (2,048 to 8,192): h just past a multiple, by less "
                 "than a thousandth of one", {"d": past[0], "multiple_of": past[1]}),
            Case("hidden: a random d (100 to 5,000) and a multiple_of of 3 to 99 that is not a power of two",
                 {"d": odd[0], "multiple_of": odd[1]}),
            Case("hidden: a small d (1 to 99), multiple_of = 1 (no rounding)",
                 {"d": int(rng.integers(1, 100)), "multiple_of": 1}),
            Case("hidden: a random d whose h = int(8/3 · d) is already a multiple of a random multiple_of (it stays)",
                 {"d": multiple[0], "multiple_of": multiple[1]})]


_HIDDEN_MISTAKES = [
    Mistake("not rounded to a multiple at all",
            "After int(2 * 4d / 3), round UP to the next multiple of multiple_of: for d = 4096 that takes "
            "10,922 to 11,008.",
            lambda d, multiple_of=256: int(2 * 4 * d / 3)),
    Mistake("rounded down instead of up",
            "Round up instead: a fraction of a multiple still needs a whole one, so the width is never below h, "
            "the truncated two thirds of 4d.",
            lambda d, multiple_of=256: multiple_of * (int(2 * 4 * d / 3) // multiple_of)),
    Mistake("rounded to the nearest multiple instead of up",
            "Llama always rounds up, and round() goes down when the remainder is under half a multiple: for "
            "d = 8192, h = 21,845 is 85.33 multiples of 256, so round() gives 85 x 256 = 21,760, while rounding "
            "up gives the right 86 x 256 = 22,016. Use a rounding that always goes up.",
            lambda d, multiple_of=256: multiple_of * round(int(2 * 4 * d / 3) / multiple_of)),
    Mistake("one multiple too many when 8/3 · d is already a multiple",
            "Rounding up leaves a multiple unchanged: for d = 768, 2048 is already a multiple of 256 and stays "
            "2048. Whole multiples plus one more adds one too many exactly then: round up in a way that leaves "
            "an exact multiple alone.",
            lambda d, multiple_of=256: multiple_of * (int(2 * 4 * d / 3) // multiple_of + 1)),
    Mistake("8/3 · d rounded up directly, without truncating it to an int first",
            "Llama first truncates, h = int(2 * 4d / 3) (10,922 for d = 4096), and only then rounds up to "
            "a multiple. With multiple_of = 1 the two differ: 10,922 versus 10,923.",
            lambda d, multiple_of=256: multiple_of * math.ceil(8 * d / 3 / multiple_of)),
    Mistake("multiple_of ignored (always 256)",
            "Round up to the multiple_of you were given, not to 256.",
            lambda d, multiple_of=256: 256 * math.ceil(int(2 * 4 * d / 3) / 256)),
    Mistake("2/3 of d instead of 2/3 of 4d",
            "Start from the classic width 4d and take two thirds of it: int(2 * 4d / 3).",
            lambda d, multiple_of=256: multiple_of * math.ceil(int(2 * d / 3) / multiple_of)),
    Mistake("4d, the classic width, instead of 8/3 · d",
            "SwiGLU has three matrices, so it shrinks the width to 2/3 of 4d to keep the parameter count level.",
            lambda d, multiple_of=256: 4 * d),
    Mistake("4d, the classic width, rounded up, instead of 8/3 · d",
            "SwiGLU has three matrices, so it shrinks the width to 2/3 of 4d to keep the parameter count level: "
            "start from int(2 * 4d / 3).",
            lambda d, multiple_of=256: multiple_of * math.ceil(4 * d / multiple_of)),
    Mistake("Llama 7B's width, 11,008, returned for every d",
            "The function should compute the width from d and multiple_of: int(2 * 4d / 3), rounded up to a "
            "multiple of multiple_of.",
            lambda d, multiple_of=256: 11_008),
    Mistake("rounded up with a bit trick that works only when multiple_of is a power of two",
            "(h + m - 1) & -m clears the low bits, which rounds to a multiple of m only for m = 1, 2, 4, 8, ... "
            "Use arithmetic that works for any m (the check tries m = 100): divide by m, round up, multiply "
            "back.",
            lambda d, multiple_of=256: (int(2 * 4 * d / 3) + multiple_of - 1) & -multiple_of),
]


_LEFT_OUT = object()   # marks a call that leaves multiple_of out


def _default_mistakes(fn) -> list[Mistake]:
    """A mistake for the learner's own default of multiple_of, read from their function's signature. A wrong or
    missing default shows only in the cases that leave multiple_of out; each mutant below is right everywhere
    else, so it is named only when the default is the one thing wrong."""
    try:
        parameter = inspect.signature(fn).parameters.get("multiple_of")
    except (TypeError, ValueError):
        return []
    if parameter is None:
        return []
    default = parameter.default
    if default is inspect.Parameter.empty:
        def without_default(d, multiple_of=_LEFT_OUT):   # raises the learner's own TypeError when it is left out
            return fn(d) if multiple_of is _LEFT_OUT else swiglu_hidden(d, multiple_of)
        return [Mistake("multiple_of has no default value",
                        "The cases that call swiglu_hidden(d) without it fail. Give it Llama's default in the "
                        "signature: def swiglu_hidden(d, multiple_of=256).",
                        without_default)]
    if isinstance(default, int) and not isinstance(default, bool) and default == 256:
        return []
    return [Mistake(f"the default of multiple_of is {fmt(default)}, not 256",
                    "Llama's code rounds to multiples of 256 unless told otherwise: "
                    "def swiglu_hidden(d, multiple_of=256).",
                    lambda d, multiple_of=default: swiglu_hidden(d, multiple_of))]


# Lines of the answer a first failure keeps back (issue 21): the rounding up.
_HIDDEN_FORMULAS = ["math.ceil(h / m)", "-(-h // m)", "math.ceil(h / multiple_of)"]


def _width_problem(value, case) -> str | None:
    problem = int_problem(value, "the width", "wrap the result in int(...); math.ceil returns an int, np.ceil a "
                          "float", "truncate 2 * 4d / 3 with int(...) and round it up to a multiple of multiple_of")
    if problem is None and int(value).bit_length() > 100:       # never float() or str() a number this big
        return (f"returned a number about {int(value).bit_length() * 0.30103:,.0f} digits long: a power crept in. "
                "Look for ** where * was meant")
    if problem is None:
        d, m = case.args["d"], case.args.get("multiple_of", 256)
        h, value = int(2 * 4 * d / 3), int(value)
        if h % m == 0 and value == h + m:
            return held_back("swiglu_hidden", f"returned {value:,} where h = {h:,} is already a multiple of {m}: a "
                             "width that is a multiple stays as it is. Round up in a way that leaves an exact "
                             "multiple alone: math.ceil(h / m) or -(-h // m).", _HIDDEN_FORMULAS)
        if value == h - h % m and h % m and value % m == 0:
            # The cause is said only where it is this case's: a remainder under a thousandth of a multiple is
            # what int(h / m + 0.999) misses; a larger one went down by another rounding (round(), //).
            trick = (" The bit is less than a thousandth of a multiple, the size that a trick such as "
                     "int(h / m + 0.999) misses." if h % m < m / 1000 else "")
            return held_back("swiglu_hidden", f"returned {value:,}, rounded down: h = {h:,} is {h // m} multiples "
                             f"of {m} and a bit, and the bit needs a whole multiple more, {h - h % m + m:,}."
                             f"{trick} Round up always: math.ceil(h / m) or -(-h // m).", _HIDDEN_FORMULAS)
    return problem


def _keyword_multiple(fn):
    """fn called with multiple_of by keyword when it takes it only so (`def swiglu_hidden(d, *, multiple_of=256)`
    is as right as the positional form; the cases pass their arguments by position)."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return fn
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) > 1 or any(p.kind is p.VAR_POSITIONAL for p in parameters) \
            or not any(p.name == "multiple_of" and p.kind is p.KEYWORD_ONLY for p in parameters):
        return fn

    def call(d, *rest):
        return fn(d, multiple_of=rest[0]) if rest else fn(d)
    return call


@grader
def check_swiglu_hidden(fn) -> bool:
    """Grade `swiglu_hidden(d, multiple_of=256)`: int(2 * 4d / 3) rounded up to a multiple of multiple_of."""
    mistakes = (_default_mistakes(fn) if callable(fn) else []) + _HIDDEN_MISTAKES
    return check_function(
        "swiglu_hidden", _keyword_multiple(fn) if callable(fn) else fn, _hidden_cases(), swiglu_hidden,
        _width_problem, mistakes, hidden=_hidden_hidden,
        compare=lambda got, expected: got == expected,
        normalize=int,
        fallback_hint="take two thirds of 4d and truncate it to an int; then round that up to the next multiple "
                      "of multiple_of (a width that is already a multiple stays).")
