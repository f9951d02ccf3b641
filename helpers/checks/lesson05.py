"""Checks for lesson 05, why the nonlinearity matters."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from helpers.and_not import INPUTS, TARGET
from helpers.checks._core import (Case, Mistake, Report, a_kind, check_function, close, close_float64, fmt,
                                  not_a_function, plural, run)
from helpers.checks._verdict import current_tally, failed_attempts, grader, hidden_rng

__all__ = ["check_collapse", "check_residual_collapse", "check_detector_weights"]


def _as_float_array(value: Any) -> np.ndarray | None:
    """value as a float array, or None when it is not numbers (a string, None, ragged lists...)."""
    if value is None or isinstance(value, (str, bytes)):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # complex numbers: _element_kind names them, no warning needed
            array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return array


def _matrix_problem(value: Any, name: str, shape: tuple[int, ...], hints: dict[tuple[int, ...], str]) -> str | None:
    """Why `value` is not a finite array of `shape`, in words that name it (`W`, `b`, ...)."""
    if value is None:
        return f"returned None for `{name}`"
    if isinstance(value, np.matrix):
        return (f"returned `{name}` as an np.matrix; return a plain array (np.asarray(...)): in the rest of the "
                "course * multiplies arrays entry by entry, where for np.matrix it is the matrix product")
    array = _as_float_array(value)
    if array is None:
        return f"returned {a_kind(value)} for `{name}`, not an array of numbers"
    if array.shape != shape:
        hint = hints.get(array.shape, "")
        return f"returned `{name}` of shape {array.shape}; expected {shape}" + (f". {hint}" if hint else "")
    if not np.all(np.isfinite(array)):
        return f"returned `{name}` holding NaN or infinity"
    return None


# --------------------------------------------------------------------------------------------------------
# Exercise 1: collapse(W1, b1, W2, b2) -> (W, b) with (x W1 + b1) W2 + b2 = x W + b
# --------------------------------------------------------------------------------------------------------
def _collapse_reference(W1, b1, W2, b2):
    return W1 @ W2, b1 @ W2 + b2


# The matrix and the bias go wrong independently, so the known mistakes are each wrong W with the right b,
# each wrong b with the right W, and every pair of them (one mistake in each line of the learner's code).
# The fixes say in words what is wrong and where to look; none of them writes out W or b (that is the answer).
_W_SLIPS = [
    ("the product in the wrong order, W2 W1",
     "A row vector meets W1 first and W2 second, so the collapsed matrix multiplies them in that order; "
     "it has shape (d_in, d_out).",
     lambda W1, W2: W2 @ W1),
    ("W1 and W2 multiplied element by element",
     "`*` multiplies entry by entry; composing two layers is a matrix product (`@`).",
     lambda W1, W2: W1 * W2),
    ("W transposed (the column-vector convention)",
     "In the row-vector convention x @ W the collapsed matrix has shape (d_in, d_out); yours is its "
     "transpose, the matrix the W @ x convention would use.",
     lambda W1, W2: (W1 @ W2).T),
    ("W1 transposed before the product",
     "W1 already has the shape x @ W1 needs, (d_in, d_hidden): use it as it is. With W1.T the product runs "
     "only when W1 is square, and there it composes the wrong map.",
     lambda W1, W2: W1.T @ W2),
]
_B_SLIPS = [
    ("b1 forgotten in the combined bias",
     "b1 is added before W2, so it passes through W2 too: it belongs in the combined bias, after W2 has acted "
     "on it.",
     lambda b1, W2, b2: b2),
    ("b1 not multiplied by W2",
     "b1 travels through W2 like the rest of the hidden vector: expand (x W1 + b1) W2 and see what b1 "
     "becomes.",
     lambda b1, W2, b2: b1 + b2),
    ("b2 forgotten in the combined bias",
     "The second layer still adds b2 at the end, so the combined bias contains it too.",
     lambda b1, W2, b2: b1 @ W2),
    ("the bias in the column-vector convention, W2 b1 + b2",
     "b1 is a row here, like x: it meets W2 from the left, as x does.",
     lambda b1, W2, b2: W2 @ b1 + b2),
    ("b2 multiplied in instead of added",
     "The second layer adds b2 after W2 has acted: it shifts the output, so the combined bias adds it too. "
     "Multiplying by it scales each output coordinate instead.",
     lambda b1, W2, b2: (b1 @ W2) * b2),
]
_COLUMN_BOTH = ("the column-vector convention throughout: W = W2 W1 and b = W2 b1 + b2",
                "That is the collapse for W @ x. Here tokens are rows and meet W1 first, then W2: read both the "
                "matrix and the bias in that order (see the conventions card).")


def _collapse_mistakes() -> list[Mistake]:
    right_W = lambda W1, W2: W1 @ W2           # noqa: E731
    right_b = lambda b1, W2, b2: b1 @ W2 + b2  # noqa: E731

    def pair(w, b):
        return lambda W1, b1, W2, b2: (w(W1, W2), b(b1, W2, b2))
    mistakes = [Mistake(name, fix, pair(w, right_b)) for name, fix, w in _W_SLIPS]
    mistakes += [Mistake(name, fix, pair(right_W, b)) for name, fix, b in _B_SLIPS]
    order, column_b = _W_SLIPS[0][2], _B_SLIPS[3][2]
    mistakes.append(Mistake(*_COLUMN_BOTH, pair(order, column_b)))
    mistakes.append(Mistake(
        "b1's part of the bias added to W as well",
        "W is only the part that multiplies x. What b1 contributes after W2 does not depend on x: it belongs in "
        "the bias alone, and added to W it is multiplied by x once more.",
        lambda W1, b1, W2, b2: (W1 @ W2 + b1 @ W2, b1 @ W2 + b2)))
    for w_name, w_fix, w in _W_SLIPS:
        for b_name, b_fix, b in _B_SLIPS:
            if (w, b) != (order, column_b):
                mistakes.append(Mistake(f"{w_name}; and {b_name}", f"Two things: {w_fix} And {b_fix}", pair(w, b)))
    return mistakes


_COLLAPSE_MISTAKES = _collapse_mistakes()


def _weights(rng, *shape):
    """Weights with three decimals that are not products of small integers: an integer answer, or one rounded
    to fewer than six decimals, fails (the unrounded cases catch the rest)."""
    return np.round(rng.normal(size=shape), 3)


def _collapse_cases():
    rng = np.random.default_rng(50)
    cases = []
    for name, (d_in, d_hidden, d_out) in (("square layers, 2 -> 2 -> 2", (2, 2, 2)),
                                          ("expand then project, 3 -> 4 -> 2", (3, 4, 2)),
                                          ("in and out the same width, 2 -> 3 -> 2", (2, 3, 2)),
                                          ("one input, two outputs, 1 -> 3 -> 2", (1, 3, 2))):
        cases.append(Case(name, {"W1": _weights(rng, d_in, d_hidden), "b1": _weights(rng, d_hidden),
                                 "W2": _weights(rng, d_hidden, d_out), "b2": _weights(rng, d_out)}))
    return cases


def _collapse_hidden():
    """Drawn when the work is graded (hidden_rng: fresh from the grading secret each run), so that no table of
    cases passes: layers of random widths with unrounded weights."""
    rng = hidden_rng(56)
    d_in, d_hidden, d_out = (int(n) for n in rng.integers(1, 7, size=3))
    wide_in = int(rng.integers(2, 6))
    wide_out = 2 + (wide_in - 2 + int(rng.integers(1, 4))) % 4          # 2 to 5, never wide_in
    wide = (wide_in, int(rng.integers(7, 13)), wide_out)
    return [Case(name, {"W1": rng.normal(size=(a, h)), "b1": rng.normal(size=h),
                        "W2": rng.normal(size=(h, c)), "b2": rng.normal(size=c)})
            for name, (a, h, c) in (
                ("hidden: random layers, each width from 1 to 6, unrounded weights", (d_in, d_hidden, d_out)),
                ("hidden: a random wide hidden layer (d_hidden from 7 to 12, d_in and d_out from 2 to 5 and "
                 "not equal), unrounded weights", wide))]


class _NotThisMistake(Exception):
    """Raised by a probing mutant when the learner did not make its mistake on a case (it then matches nothing)."""


def _is_rounded(got: Any, want: Any) -> bool:
    """Whether each array in `got` is the matching array of `want`, as it is, rounded to 0-4 decimals, or cast
    to int: what a result rounded for display (or truncated by int) looks like."""
    try:
        pairs = [(np.asarray(g, dtype=float), np.asarray(w, dtype=float)) for g, w in zip(got, want)]
    except (TypeError, ValueError):
        return False
    if len(pairs) != len(want) or any(g.shape != w.shape for g, w in pairs):
        return False
    conversions = ([lambda w: w, np.trunc, np.floor, lambda w: w.astype(np.float16)]
                   + [lambda w, k=k: np.round(w, k) for k in range(5)])
    return all(any(close(g, convert(w), rtol=1e-12, atol=1e-12) for convert in conversions) for g, w in pairs)


def _rounding_mistake(fn, reference, as_tuple) -> Mistake:
    """Names a result that is the right one rounded, or cast to int (right on exact inputs, wrong on these)."""
    def probing(*args):
        outcome = run(fn, dict(enumerate(args)))
        if outcome.raised or not _is_rounded(as_tuple(outcome.value), as_tuple(reference(*args))):
            raise _NotThisMistake
        return outcome.value
    return Mistake("the numbers are rounded (or cast to int)",
                   "Return them as computed, as floats: rounding for display belongs in a print, not in the "
                   "result (and int(...) or .astype(int) drops everything after the point; float16 keeps "
                   "only about three significant digits).",
                   probing)


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
        (d_out, d_in): "That is W transposed: in the row-vector convention x @ W, the collapsed W is (d_in, d_out)"})
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
    return close_float64(W, W_ref) and close_float64(b, b_ref)


def _describe_pair(value) -> str:
    W, b = value
    return f"W = {fmt(np.asarray(W))}, b = {fmt(np.asarray(b))}"


@grader
def check_collapse(fn) -> bool:
    """Grade `collapse(W1, b1, W2, b2)`, which returns (W, b) with (x @ W1 + b1) @ W2 + b2 == x @ W + b."""
    rounded = [_rounding_mistake(fn, _collapse_reference, lambda v: tuple(v))] if callable(fn) else []
    return check_function(
        "collapse", fn, _collapse_cases(), _collapse_reference, _collapse_problem, _COLLAPSE_MISTAKES + rounded,
        compare=_pair_close, normalize=_as_pair, describe=_describe_pair, hidden=_collapse_hidden,
        fallback_hint="expand (x @ W1 + b1) @ W2 + b2 into x @ (something) + (something else) and return both.")


# --------------------------------------------------------------------------------------------------------
# Exercise 2: residual_collapse(W1, W2) -> M with x + (x W1) W2 = x M
# --------------------------------------------------------------------------------------------------------
def _residual_reference(W1, W2):
    return np.eye(W1.shape[0]) + W1 @ W2


_RESIDUAL_MISTAKES = [
    Mistake("the identity forgotten",
            "M holds only the FFN's path. The skip path adds x itself, and that is a linear map too, the one "
            "that maps every token to itself: its matrix belongs in M as well, at the size of a token.",
            lambda W1, W2: W1 @ W2),
    Mistake("1 added to every entry instead of the identity",
            "Adding the number 1 adds 1 to every entry of the matrix, which mixes every coordinate of x into "
            "every other. The skip path adds x itself: the matrix that maps x to x has ones on its diagonal "
            "only.",
            lambda W1, W2: 1.0 + W1 @ W2),
    Mistake("the skip path subtracted",
            "The block adds its input back: x + FFN(x), so M = I + W1 @ W2, with a plus.",
            lambda W1, W2: np.eye(W1.shape[0]) - W1 @ W2),
    Mistake("the product in the wrong order, W2 W1",
            "A row vector meets W1 first: x @ W1 @ W2, so M = I + W1 @ W2.",
            lambda W1, W2: np.eye(W1.shape[0]) + W2 @ W1),
    Mistake("the identity of size d_ff",
            "That identity is d_ff x d_ff, the size of the hidden layer. The skip path adds the token x itself, "
            "which has d entries, so its identity is d x d: read d from the shape of W1 on the side that meets x. "
            "(When d = d_ff, as in the square case, the two coincide.)",
            lambda W1, W2: np.eye(W1.shape[1]) + W1 @ W2),
    Mistake("the skip path sent through W2, (I + W1) W2",
            "The skip path goes around the FFN, not through it: x + (x @ W1) @ W2 = x @ (I + W1 @ W2).",
            lambda W1, W2: (np.eye(W1.shape[0]) + W1) @ W2),
    Mistake("M transposed (the column-vector convention)",
            "In the row-vector convention x @ M, M = I + W1 @ W2; its transpose belongs to the M @ x convention.",
            lambda W1, W2: (np.eye(W1.shape[0]) + W1 @ W2).T),
    Mistake("the identity sized by the smaller side of W1",
            "I is d x d, the model width: the token x has d entries, the rows of W1. In a bottleneck block "
            "(d_ff < d) the smaller size is d_ff, not d, so the identity must not be read off the smaller side.",
            lambda W1, W2: np.eye(min(W1.shape)) + W1 @ W2),
    Mistake("W1 and W2 cut down to the smaller size",
            "I is d x d, the model width, not the smaller size: keep all of W1 and W2. In a bottleneck block "
            "(d_ff < d) cutting them to d_ff x d_ff drops the token's last coordinates.",
            lambda W1, W2: np.eye(min(W1.shape)) + W1[:min(W1.shape)] @ W2[:, :min(W1.shape)]),
    Mistake("the identity counted twice (2I)",
            "The skip path adds x once: x + FFN(x). Its matrix is the identity itself, ones on the diagonal, "
            "not twice that.",
            lambda W1, W2: 2 * np.eye(W1.shape[0]) + W1 @ W2),
    Mistake("the FFN's matrix multiplied by the identity entry by entry",
            "`*` multiplies entry by entry, so multiplying by the identity that way keeps only the diagonal of "
            "the FFN's matrix. The two paths are added: M is the identity plus the FFN's whole matrix.",
            lambda W1, W2: np.eye(W1.shape[0]) * (W1 @ W2) + np.eye(W1.shape[0])),
]


def _residual_cases():
    rng = np.random.default_rng(51)
    return [
        Case("d = 2, d_ff = 2 (square)", {"W1": _weights(rng, 2, 2), "W2": _weights(rng, 2, 2)}),
        Case("d = 3, d_ff = 4 (expand, then project)", {"W1": _weights(rng, 3, 4), "W2": _weights(rng, 4, 3)}),
        Case("a branch that writes nothing (W2 = 0)", {"W1": _weights(rng, 2, 3), "W2": np.zeros((3, 2))}),
        # A bottleneck, d > d_ff: the identity's size is d, here the larger side of W1, not the smaller.
        Case("d = 4, d_ff = 2 (a bottleneck: d_ff < d)",
             {"W1": _weights(np.random.default_rng(52), 4, 2), "W2": _weights(np.random.default_rng(53), 2, 4)}),
        # Three-decimal weights make products of six decimals, which a rounding to 6 would keep: not these.
        Case("d = 3, d_ff = 5, unrounded weights",
             {"W1": np.random.default_rng(54).normal(size=(3, 5)),
              "W2": np.random.default_rng(55).normal(size=(5, 3))}),
    ]


def _residual_hidden():
    """Drawn when the work is graded (hidden_rng), unrounded: an expanding block and a bottleneck (d_ff < d,
    where the identity's size is the larger side of W1), each of random widths."""
    rng = hidden_rng(57)
    d = int(rng.integers(2, 7))
    d_ff = int(rng.integers(d + 1, 2 * d + 3))
    d_small = int(rng.integers(3, 8))
    d_ff_small = int(rng.integers(1, d_small))
    return [Case(name, {"W1": rng.normal(size=(width, units)), "W2": rng.normal(size=(units, width))})
            for name, (width, units) in (
                ("hidden: a random expanding block (d from 2 to 6, d_ff from d + 1 to 2d + 2), unrounded weights",
                 (d, d_ff)),
                ("hidden: a random bottleneck (d from 3 to 7, d_ff from 1 to d - 1), unrounded weights",
                 (d_small, d_ff_small)))]


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
    rounded = [_rounding_mistake(fn, _residual_reference, lambda v: (v,))] if callable(fn) else []
    return check_function(
        "residual_collapse", fn, _residual_cases(), _residual_reference, _residual_problem,
        _RESIDUAL_MISTAKES + rounded, hidden=_residual_hidden,
        normalize=lambda v: np.asarray(v, dtype=float),
        compare=close_float64,
        fallback_hint="write x itself as x @ I, then factor x out of x @ I + x @ W1 @ W2.")


# --------------------------------------------------------------------------------------------------------
# Exercise 3: detector_weights() -> (W1, b1, W2, b2), a ReLU FFN that is 1 on (1, 1, 0) and 0 elsewhere
# --------------------------------------------------------------------------------------------------------
_ROWS = {tuple(int(v) for v in row): i for i, row in enumerate(INPUTS)}   # (A, B, C) -> row of INPUTS


def _label(abc: tuple[int, int, int]) -> str:
    return "A={} B={} C={}".format(*abc)


def _detector_shapes(value: Any) -> tuple[list[np.ndarray] | None, str | None]:
    """The four weights as arrays shaped W1 (3, k), b1 (k,), W2 (k, 1), b2 (1,), or a message saying why not.

    Each weight may also take any layout that the forward pass relu(x @ W1 + b1) @ W2 + b2, on a batch of
    inputs, broadcasts the same way and that has the right entries: b1 a row (1, k), or a plain number when
    there is one hidden unit (k = 1); W2 flat, (k,); b2 a plain number or (1, 1). The weights must be numbers:
    strings such as '1' are refused, though NumPy could convert them.
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
        kind = _element_kind(part)
        if kind is not None:
            return None, (f"`{name}` holds {kind}, not real numbers (NumPy could convert them, but a weight is "
                          "a real number): write 1.0, not '1' or 1+0j")
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
    if b1.shape not in ((k,), (1, k), ()):
        return None, f"`b1` has shape {b1.shape}; expected ({k},), one bias for each of your {units}"
    if W2.shape not in ((k, 1), (k,)):
        return None, (f"`W2` has shape {W2.shape}; expected ({k}, 1): one weight for each of your {units} "
                      "(the rows) into the one output (the column)")
    if b2.shape not in ((1,), (), (1, 1)):
        return None, f"`b2` has shape {b2.shape}; expected (1,), the bias of the single output"
    return [W1, b1.reshape(k), W2.reshape(k, 1), b2.reshape(1)], None


def _element_kind(part: Any) -> str | None:
    """'strings' or 'complex numbers' when part holds what np.asarray(..., dtype=float) would still convert
    (text, or complex numbers with no imaginary part); else None."""
    if isinstance(part, np.ndarray):
        dtype_kind = part.dtype.kind
    else:
        try:
            dtype_kind = np.asarray(part).dtype.kind
        except (TypeError, ValueError):
            return None
    if dtype_kind in "US":
        return "strings"
    if dtype_kind == "c":
        return "complex numbers"
    if dtype_kind == "O":
        leaves = np.asarray(part, dtype=object).ravel()
        if any(isinstance(leaf, (str, bytes)) for leaf in leaves):
            return "strings"
    return None


def _value(got: float, want: float) -> str:
    """got for a verdict line: as fmt shows it, or, when that would read as the expected value although it
    is off by more than the tolerance (1 + 1e-9 shows as 1), with 12 significant figures and the gap."""
    if fmt(got) != fmt(want):
        return fmt(got)
    return f"{got:.12g} (off by {abs(got - want):.1g})"


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
    return (f"the right pattern but the wrong height: it outputs {_value(at[(1, 1, 0)], 1.0)} for A=1 B=1 C=0. "
            "Scale W2 (or the pre-activation) so that this output is exactly 1")


_ANSWER = ("One answer that works: W1 = [[1], [1], [-1]], b1 = [-1], W2 = [[1]], b2 = [0]. Its one unit reads "
           "s = A + B - C, which is 2 on (1, 1, 0) and at most 1 on the other seven inputs, and relu(s - 1) is "
           "1 at s = 2 and 0 for s <= 1.")
_HOW_TO_REVEAL = ("After your second failed attempt in this session (the count starts again when the kernel "
                  "restarts) this check shows one answer that works; to see it now, run "
                  "check_detector_weights(detector_weights, reveal=True).")


@grader
def check_detector_weights(fn, reveal: bool = False) -> bool:
    """Grade `detector_weights()`: (W1, b1, W2, b2) of a ReLU FFN, 3 inputs -> d_ff units -> 1 output, that
    outputs exactly 1 for (A, B, C) = (1, 1, 0) and exactly 0 for the other seven binary inputs.

    A design exercise: a failure names the part that is wrong and the likely slip, never the weights. One
    working answer is shown after a second failed attempt in this kernel, or at once with reveal=True."""
    title = "detector_weights"
    ok = _judge_detector(title, fn)
    attempted = ok or not current_tally().not_implemented   # a stub is no attempt: it reveals nothing
    # failed_attempts counts the failures before this call (a stub's run is none of them).
    if reveal or (not ok and attempted and failed_attempts(title) >= 1):
        print(f"  {_ANSWER}")
    elif not ok and attempted:
        print(f"  {_HOW_TO_REVEAL}")
    return ok


def _judge_detector(title: str, fn) -> bool:
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
            report.failed(_label(abc), f"expected {fmt(want)}, got {_value(got, want)}")
    if n_failed:
        report.line(f"Likely mistake: {_detector_diagnosis(out)}.")
    return report.finish(len(_ROWS), n_failed)
