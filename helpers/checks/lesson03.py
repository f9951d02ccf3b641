"""Checks for lesson 03: the batched FFN in NumPy (no Python loop over the tokens), running it in chunks, and
counting its parameters."""
from __future__ import annotations

import copy
import inspect
import io
import sys
import warnings
from contextlib import redirect_stdout
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from helpers.checks._core import (Case, Mistake, Observed, a_kind, array_problem, check_function, close, fmt,
                                  held_back, int_problem, is_library_file, not_a_function, plain_arrays, plural,
                                  run, with_tiers)
from helpers.checks._verdict import grader, hidden_cases, hidden_rng
from helpers.ffn import ffn, relu
from helpers.measure import peak_bytes

__all__ = ["check_ffn_batched", "check_count_ffn_params", "check_ffn_chunked"]


def _dyadic(rng: np.random.Generator, shape: tuple[int, ...], step: float, dtype=np.float64) -> np.ndarray:
    """Small multiples of `step` (a power of two): every sum and product in a small FFN is then exact in
    float32 and float64 alike, so any correct order of operations gives exactly the same numbers."""
    return (rng.integers(-4, 5, size=shape) * step).astype(dtype)


def _ffn_case(name: str, seed: int, T: int, d: int, d_ff: int, dtype=np.float64) -> Case:
    rng = np.random.default_rng(seed)
    return Case(name, {"x": _dyadic(rng, (T, d), 0.5, dtype), "W1": _dyadic(rng, (d, d_ff), 0.25, dtype),
                       "b1": _dyadic(rng, (d_ff,), 0.25, dtype), "W2": _dyadic(rng, (d_ff, d), 0.25, dtype),
                       "b2": _dyadic(rng, (d,), 0.25, dtype)})


def _ffn_array_problem(value: Any, case: Case, extra_hints: dict | None = None) -> str | None:
    """array_problem for an FFN's output (T, d), with hints for the shapes and dtypes that slips produce."""
    x, W1 = case.args["x"], case.args["W1"]
    (T, d), d_ff = x.shape, W1.shape[1]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, np.ndarray) for v in value):
        return (f"returned {a_kind(value)} of {len(value)} arrays; stack the rows into one (T, d) "
                "array, for example with np.stack(rows) or np.concatenate(chunks)")
    hints = {(T, d_ff): "That is the hidden layer's shape: the second matrix W2 was not applied",
             (d,): "One row for the whole sequence: something reduced over the tokens, for example np.max(h, 0) "
                   "(the largest value in each column) where np.maximum(h, 0) (element by element) was meant",
             **(extra_hints or {})}
    if T != d:
        hints[(d, T)] = "That is the output transposed: keep one token per row, shape (T, d)"
    if isinstance(value, np.ndarray) and type(value) is not np.ndarray:
        return (f"returned {a_kind(value)} (a subclass of the NumPy array, with rules of its own: np.matrix makes * "
                "a matrix product); return a plain array, np.asarray(...), as x @ W1 gives")
    problem = array_problem(value, (T, d), shape_hints=hints)
    if problem is None and T == d and T > 1 and _agrees(value.T, ffn(x, W1, case.args["b1"], case.args["W2"],
                                                                     case.args["b2"])) \
            and not _agrees(value, ffn(x, W1, case.args["b1"], case.args["W2"], case.args["b2"])):
        problem = ("returned the output transposed, (d, T) where (T, d) was asked: here T = d, so the shape "
                   "looks right. Keep one token per row; do not transpose the result")
    if problem is None and value.dtype != x.dtype:
        problem = f"returned dtype {value.dtype} from {x.dtype} inputs; the output should keep the inputs' dtype"
        if x.dtype == np.float32 and value.dtype == np.float64:
            problem += (". Something upcast to float64: np.zeros((T, d)) and np.empty((T, d)) are float64 unless "
                        "you pass dtype=x.dtype, and so is an array built from Python floats")
    return problem


def _agrees(value: Any, expected: np.ndarray) -> bool:
    """Agreement to the precision of the inputs' dtype: any correct order of operations agrees this well, and
    an answer that rounds, or computes part of the way in float32 from float64 inputs, does not."""
    tight = np.dtype(expected.dtype) == np.float64
    return close(value, expected, rtol=1e-9 if tight else 1e-5, atol=1e-12 if tight else 1e-6)


def _precision_problem(value: np.ndarray, expected: np.ndarray) -> str | None:
    """A message when the results differ from the FFN's only as rounded numbers, or numbers computed in float32
    from float64 inputs, would."""
    if value.shape != expected.shape or _agrees(value, expected):
        return None
    for decimals in range(0, 9):
        if (np.array_equal(np.round(value, decimals), value)
                and not np.array_equal(np.round(expected, decimals), expected)
                and np.max(np.abs(value - expected)) <= 0.5 * 10.0 ** -decimals * (1 + 1e-6) + 1e-6):
            places = "whole numbers" if decimals == 0 else plural(decimals, "decimal")
            return (f"returned numbers rounded to {places}; return them as computed. Rounding belongs "
                    "in printing (f\"{y:.4f}\", np.round for display only), never in the result")
    error = float(np.max(np.abs(value - expected)) / max(float(np.max(np.abs(expected))), 1e-300))
    if expected.dtype == np.float64 and error < 1e-4:
        return (f"returned numbers that agree with the FFN's only to about {-np.log10(error):.0f} significant "
                "digits, where float64 gives about 15: part of the computation ran in lower precision (float32 "
                "or float16). Keep the inputs' dtype all the way; do not convert x or the weights")
    return None


def _describe_rows(value: Any) -> str:
    """A (T, d) array as its shape, first row and last row: a slip in the last chunk shows in the last row."""
    if not isinstance(value, np.ndarray) or value.ndim != 2 or value.shape[0] < 2:
        return fmt(value)
    return f"shape {value.shape}, first row {fmt(value[0])}, last row {fmt(value[-1])}"


# --------------------------------------------------------------------------------------------------------
# Exercise 1: ffn_batched(x, W1, b1, W2, b2) for x of shape (T, d), row-vector convention, no loop over tokens.
# --------------------------------------------------------------------------------------------------------
def _reference_batched(x, W1, b1, W2, b2):
    return ffn(x, W1, b1, W2, b2)


def _python_max(x, W1, b1, W2, b2):
    return max(0, x @ W1 + b1) @ W2 + b2         # Python's max compares whole arrays: it raises


_BATCHED_MISTAKES = [
    Mistake("weights used transposed, in the W @ x layout",
            "Here W1 is (d, d_ff) and a token is a row, so the first step is x @ W1 (not x @ W1.T or W1 @ x). "
            "With d != d_ff the transposed product cannot even run; a square case hides it.",
            lambda x, W1, b1, W2, b2: relu(x @ W1.T + b1) @ W2.T + b2),
    Mistake("ReLU applied after W2 as well",
            "The nonlinearity goes only between the two linear maps. The output must stay signed: it is added "
            "back onto x, and a clamped output could never push a coordinate down.",
            lambda x, W1, b1, W2, b2: relu(relu(x @ W1 + b1) @ W2 + b2)),
    Mistake("ReLU moved to after W2 (none between the two matrices)",
            "Apply relu to the hidden layer, h = relu(x @ W1 + b1), and leave the output h @ W2 + b2 unclamped.",
            lambda x, W1, b1, W2, b2: relu((x @ W1 + b1) @ W2 + b2)),
    Mistake("ReLU applied before adding b1",
            "The bias is part of the pre-activation: relu(x @ W1 + b1), not relu(x @ W1) + b1.",
            lambda x, W1, b1, W2, b2: (relu(x @ W1) + b1) @ W2 + b2),
    Mistake("no activation at all",
            "Without relu the two matrices collapse into one linear map; apply relu to x @ W1 + b1.",
            lambda x, W1, b1, W2, b2: (x @ W1 + b1) @ W2 + b2),
    Mistake("both biases left out", "Add b1 to x @ W1 (before relu) and b2 to h @ W2.",
            lambda x, W1, b1, W2, b2: relu(x @ W1) @ W2),
    Mistake("b1 left out", "Add b1 to x @ W1 before relu: each hidden unit has its own bias.",
            lambda x, W1, b1, W2, b2: relu(x @ W1) @ W2 + b2),
    Mistake("b2 left out", "Add b2 to h @ W2: the output has a bias too.",
            lambda x, W1, b1, W2, b2: relu(x @ W1 + b1) @ W2),
    Mistake("x added to the output",
            "Return relu(x @ W1 + b1) @ W2 + b2 alone. The residual x + FFN(x) belongs to the block around the "
            "FFN, which adds x itself; adding it here too would count x twice.",
            lambda x, W1, b1, W2, b2: x + relu(x @ W1 + b1) @ W2 + b2),
    Mistake("Python's max() used on an array",
            "max(0, z) (like `z if z > 0 else 0`) asks whether a whole array is larger than 0, which has no "
            "single answer, so NumPy raises. Lesson 02's max(0.0, z) worked on one number; for arrays use "
            "np.maximum(z, 0) or relu(z), which compare element by element.",
            _python_max),
]


def _random_case(name: str, seed: int | np.random.Generator, T: int, d: int, d_ff: int, dtype=np.float64) -> Case:
    """Normal draws: numbers with many digits, so an answer that rounds, or computes in lower precision,
    cannot agree by luck (the dyadic cases above are exact in any order of operations). `seed` may be a
    Generator (a hidden case's, from hidden_rng), which draws on from where it is."""
    rng = np.random.default_rng(seed)
    shapes = {"x": (T, d), "W1": (d, d_ff), "b1": (d_ff,), "W2": (d_ff, d), "b2": (d,)}
    return Case(name, {k: rng.normal(size=shape).astype(dtype) for k, shape in shapes.items()})


def _batched_cases() -> list[Case]:
    return [
        _ffn_case("3 tokens, d = 2 -> d_ff = 5", 0, T=3, d=2, d_ff=5),
        _ffn_case("4 tokens, d = d_ff = 3 (square: a transpose does not crash here)", 14, T=4, d=3, d_ff=3),
        _ffn_case("6 tokens in float32, d = 4 -> d_ff = 8 (float32 in, float32 out)", 5, T=6, d=4, d_ff=8,
                  dtype=np.float32),
        _ffn_case("a single token as a (1, d) array, d = 3 -> d_ff = 6", 9, T=1, d=3, d_ff=6),
        _random_case("4 tokens, d = 4 -> d_ff = 6 (T = d: a transposed output has the right shape)", 34, T=4,
                     d=4, d_ff=6),
        _random_case("5 tokens of random numbers, d = 4 -> d_ff = 7", 31, T=5, d=4, d_ff=7),
    ]


# Hidden cases are drawn when the work is graded (hidden_rng: fresh from the grading secret, fixed for the tests),
# their sizes as well as their numbers, so that no table of the cases a learner can run answers them.
def _sizes(rng: np.random.Generator, d: tuple[int, int], d_ff: tuple[int, int]) -> tuple[int, int]:
    """d and d_ff drawn from the ranges (both ends included), never equal: a transposed weight cannot run."""
    d = int(rng.integers(d[0], d[1] + 1))
    widths = [n for n in range(d_ff[0], d_ff[1] + 1) if n != d]
    return d, int(rng.choice(widths))


def _relu_matters(case: Case) -> bool:
    """Pre-activations on both sides of 0 and some negative outputs: leaving relu out, or clamping the output
    too, changes the numbers."""
    x, W1, b1, W2, b2 = (case.args[k] for k in ("x", "W1", "b1", "W2", "b2"))
    z = x @ W1 + b1
    return bool((z > 0).any() and (z < 0).any() and (ffn(x, W1, b1, W2, b2) < 0).any())


def _drawn_case(name: str, rng: np.random.Generator, T: int, d: int, d_ff: int, dtype=np.float64,
                chunk: int | None = None) -> Case:
    """A hidden case of random numbers, drawn again (at most 20 times) until relu matters in it."""
    for _ in range(20):
        case = _random_case(name, rng, T, d, d_ff, dtype)
        if _relu_matters(case):
            break
    if chunk is not None:
        case.args["chunk"] = chunk
    return case


def _batched_hidden() -> list[Case]:
    rng = hidden_rng(32)
    T, (d, d_ff) = int(rng.integers(5, 13)), _sizes(rng, (3, 6), (7, 12))
    single = _drawn_case("hidden: random float32 numbers, 5 to 12 tokens, d of 3 to 6 -> d_ff of 7 to 12", rng,
                         T, d, d_ff, np.float32)
    T, (d, d_ff) = int(rng.integers(2, 13)), _sizes(rng, (2, 8), (2, 16))
    return [single, _drawn_case("hidden: random numbers, 2 to 12 tokens, d of 2 to 8 -> d_ff of 2 to 16 (never "
                                "equal)", rng, T, d, d_ff)]


def python_steps(fn: Callable, args: tuple) -> int | None:
    """How many Python-level steps a call makes in code outside the libraries: lines run and functions
    called (including NumPy's). None when the call raises. A loop over tokens makes this grow with T."""
    count = 0

    def on_call(frame, event, arg):  # sys.settrace: called for every Python function entered
        nonlocal count
        if is_library_file(frame.f_code.co_filename):
            return None
        return on_line

    def on_line(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return on_line

    def on_profile(frame, event, arg):  # sys.setprofile: Python and C function calls
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    old_trace, old_profile = sys.gettrace(), sys.getprofile()
    sys.settrace(on_call)
    sys.setprofile(on_profile)
    try:
        fn(*args)
    except Exception:
        return None
    finally:
        sys.setprofile(old_profile)
        sys.settrace(old_trace)
    return count


LOOP_PROBE_T = 33  # tokens in the second of the two calls that count Python steps


def _token_loop(fn: Callable) -> tuple[int, int] | None:
    """(steps for 1 token, steps for LOOP_PROBE_T tokens) when fn runs Python code once per token, else None.
    This finds loops the recording W1 cannot see (a loop over h's rows after one x @ W1, or W1 copied)."""
    small = _ffn_case("", 7, T=1, d=4, d_ff=8)
    big = _ffn_case("", 7, T=LOOP_PROBE_T, d=4, d_ff=8)
    with redirect_stdout(io.StringIO()):  # a probe: what the function prints shows once, in the cases
        steps = [python_steps(fn, tuple(case.args.values())) for case in (small, big)]
    if None in steps or steps[1] - steps[0] < LOOP_PROBE_T - 1:
        return None
    return steps[0], steps[1]


NO_LOOP_RULE = ("The exercise asks for no Python loop over the tokens: x @ W1 multiplies every row of x at once, "
                "and so do the bias, relu and the second product. (A for loop, a comprehension, map and "
                "np.apply_along_axis all run Python once per token.)")


def _watched_batched(fn: Callable) -> Callable:
    """fn called with a recording W1 (see _TokenCounter): the value and the tokens in each product with W1."""
    def call(x, W1, b1, W2, b2):
        xw, W1w, W2w, products, outputs = _watch(x, W1, W2)
        value = fn(xw, W1w, b1, W2w, b2)
        return _Measured(_plain(value), 0, products, outputs)
    return call


def _batched_problem(measured: "_Measured", case: Case, loop: tuple[int, int] | None,
                     explained: set) -> str | None:
    """What is wrong with a result of ffn_batched: its kind, shape or dtype; then, for the right numbers, a
    Python loop over the tokens (the products with W1 it made, or Python steps that grow with T)."""
    value = measured.value
    problem = _ffn_array_problem(value, case)
    if problem:
        return problem
    expected = _reference_batched(**case.args)
    if not _agrees(value, expected):
        return _precision_problem(value, expected)  # else wrong numbers: the comparison and mistakes say more
    T = case.args["x"].shape[0]
    products = measured.tokens   # none seen (x, W1, W2 all converted first): the Python steps still show a loop
    if T > 1 and products and min(products) < T:
        pieces = "one token each" if set(products) == {1} else f"of {fmt(products, max_items=10)} tokens"
        what = (f"gives the right numbers but runs a Python loop over the tokens "
                f"({plural(len(products), 'product')} with {'W1' if measured.products else 'W2'}, {pieces}, "
                f"for {T} tokens)")
    elif T > 1 and loop:
        what = (f"gives the right numbers but runs a Python loop over the tokens "
                f"({loop[0]} Python steps for 1 token, {loop[1]} for {LOOP_PROBE_T})")
    else:
        return None
    if "loop" in explained:
        return f"{what} (see above)"
    explained.add("loop")
    return f"{what}. {NO_LOOP_RULE}"


@grader
def check_ffn_batched(fn) -> bool:
    """Grade `ffn_batched(x, W1, b1, W2, b2)`: relu(x @ W1 + b1) @ W2 + b2 for x of shape (T, d), computed for
    all T tokens at once (a loop over the tokens gives the right numbers but fails, as the exercise says)."""
    if not callable(fn):
        return not_a_function("ffn_batched", fn)
    loop = _token_loop(fn)
    explained: set = set()
    return check_function(
        "ffn_batched", _watched_batched(fn), _batched_cases(), _reference_batched,
        lambda measured, case: _batched_problem(measured, case, loop, explained),
        [Mistake(m.name, m.fix, _watched_batched(m.fn)) for m in _BATCHED_MISTAKES],
        compare=_agrees, normalize=lambda measured: measured.value, describe=_describe_rows,
        fallback_hint="compute the hidden layer's pre-activations first (x times W1, plus b1) and check that "
                      "their shape is (T, d_ff); then apply the activation, and the second matrix with its bias.",
        hidden=_batched_hidden)


# --------------------------------------------------------------------------------------------------------
# count_ffn_params(d, d_ff, bias=True) (Exercise 3 in the notebook).
# --------------------------------------------------------------------------------------------------------
def _reference_count(d, d_ff, bias=True):
    return d * d_ff + d_ff + d_ff * d + d if bias else 2 * d * d_ff


_COUNT_MISTAKES = [
    Mistake("the biases forgotten",
            "With bias=True add b1 (one number per hidden unit, d_ff) and b2 (one per output, d).",
            lambda d, d_ff, bias=True: 2 * d * d_ff),
    Mistake("biases counted even when bias=False",
            "Count b1 and b2 only when bias is True; with bias=False the FFN is just the two matrices.",
            lambda d, d_ff, bias=True: 2 * d * d_ff + d_ff + d),
    Mistake("only one matrix counted (W1 and b1)",
            "The FFN has two matrices: W1 (d x d_ff) expands and W2 (d_ff x d) projects back.",
            lambda d, d_ff, bias=True: d * d_ff + (d_ff if bias else 0)),
    Mistake("only one weight matrix counted",
            "W1 (d x d_ff) and W2 (d_ff x d) each hold d * d_ff weights: count both.",
            lambda d, d_ff, bias=True: d * d_ff + (d + d_ff if bias else 0)),
    Mistake("both biases given the hidden width d_ff",
            "b1 has d_ff numbers (one per hidden unit) but b2 has d (one per output coordinate).",
            lambda d, d_ff, bias=True: 2 * d * d_ff + (2 * d_ff if bias else 0)),
    Mistake("both biases given the model width d",
            "b1 has d_ff numbers (one per hidden unit), b2 has d (one per output coordinate).",
            lambda d, d_ff, bias=True: 2 * d * d_ff + (2 * d if bias else 0)),
    Mistake("only b1 counted of the two biases",
            "The second layer has a bias too: b2, one number per output coordinate (d of them).",
            lambda d, d_ff, bias=True: 2 * d * d_ff + (d_ff if bias else 0)),
    Mistake("only b2 counted of the two biases",
            "The first layer has a bias too: b1, one number per hidden unit (d_ff of them).",
            lambda d, d_ff, bias=True: 2 * d * d_ff + (d if bias else 0)),
    Mistake("bias=True and bias=False swapped",
            "Count b1 and b2 when bias is True and leave them out when it is False; the test reads the other way "
            "round (look for `if not bias` or a swapped if/else).",
            lambda d, d_ff, bias=True: 2 * d * d_ff + (0 if bias else d + d_ff)),
    Mistake("each bias counted twice",
            "b1 has d_ff numbers and b2 has d: that is d_ff + d for both together, once.",
            lambda d, d_ff, bias=True: 2 * d * d_ff + (2 * (d + d_ff) if bias else 0)),
    Mistake("attention's four d x d projections counted too",
            "Count the FFN alone: W1, b1, W2 and b2. Attention's projections (4 * d * d) are the other half of "
            "the block, counted separately after this exercise.",
            lambda d, d_ff, bias=True: 2 * d * d_ff + 4 * d * d + (d + d_ff if bias else 0)),
    Mistake("d_ff assumed to be 4 * d",
            "Use the d_ff you are given: many models have d_ff = 4d, but not all (Llama's SwiGLU FFN uses 2/3 of "
            "4d, about 8/3 d).",
            lambda d, d_ff, bias=True: 8 * d * d + (5 * d if bias else 0)),
    Mistake("W1 counted as d x d and W2 as d_ff x d_ff",
            "W1 maps d numbers to d_ff numbers, so it is d x d_ff; W2 is d_ff x d.",
            lambda d, d_ff, bias=True: d * d + d_ff * d_ff + (d + d_ff if bias else 0)),
]


def _count_cases() -> list[Case]:
    return [
        Case("GPT-2 small, d = 768 -> d_ff = 3072, with biases", {"d": 768, "d_ff": 3072, "bias": True}),
        Case("the original Transformer base, 512 -> 2048, with biases (its FFN has b1 and b2)",
             {"d": 512, "d_ff": 2048, "bias": True}),
        Case("no biases (bias=False), 640 -> 1728", {"d": 640, "d_ff": 1728, "bias": False}),
        Case("a small FFN, 3 -> 5, with biases", {"d": 3, "d_ff": 5, "bias": True}),
        Case("a small FFN, 3 -> 5, bias=False", {"d": 3, "d_ff": 5, "bias": False}),
        Case("bias left at its default (True), 6 -> 10", {"d": 6, "d_ff": 10}),
        Case("a narrow hidden layer, 10 -> 7, with biases", {"d": 10, "d_ff": 7, "bias": True}),
        Case("d = 640 again, with another width, 640 -> 2240 (3.5 d, not 4d), bias=False (the count follows "
             "d_ff too)", {"d": 640, "d_ff": 2240, "bias": False}),
        Case("a very wide FFN, 8192 -> 131072 (d_ff = 16 d), with biases: 2 * d * d_ff = 2**31, too big for "
             "32-bit integers", {"d": 8192, "d_ff": 131072, "bias": True}),
        # 1,208,119,297: odd and above 2**24, so float32 cannot hold it (its neighbours there are 128 apart).
        Case("an odd count above 2**24, 12289 -> 49152, with biases: float32 cannot hold it",
             {"d": 12289, "d_ff": 49152, "bias": True}),
    ]


def _count_hidden() -> list[Case]:
    """Drawn at grading time (see _batched_hidden); d_ff is never d or 4d, and the last count is odd and above
    2**31, as the public case 12289 -> 49152 is: neither int32 nor float32 holds it."""
    rng = hidden_rng("count_ffn_params")

    def width(d: int, low: int, high: int) -> int:      # from low to high, both included, never d or 4d
        d_ff = int(rng.integers(low, high + 1))
        return d_ff + 1 if d_ff in (d, 4 * d) else d_ff

    d1, d2, d3, d4 = (int(rng.integers(low, high + 1)) for low, high in ((256, 8192), (10, 2000), (16, 4096),
                                                                          (12289, 16384)))
    wide = width(d4, 8 * d4, 16 * d4 - 1)
    return [Case("hidden: a random model's widths without biases (d of 256 to 8,192, d_ff of 2d to 6d, not 4d)",
                 {"d": d1, "d_ff": width(d1, 2 * d1, 6 * d1), "bias": False}),
            Case("hidden: random widths with biases (d of 10 to 2,000, d_ff of d/2 to 8d, not d or 4d)",
                 {"d": d2, "d_ff": width(d2, d2 // 2, 8 * d2), "bias": True}),
            Case("hidden: random widths with bias left at its default (d of 16 to 4,096, d_ff of 2d to 6d)",
                 {"d": d3, "d_ff": width(d3, 2 * d3, 6 * d3)}),
            Case("hidden: random very wide widths with biases (d of 12,289 to 16,384, d_ff of 8d to 16d): an odd "
                 "count above 2**31, which neither int32 nor float32 holds",
                 {"d": d4, "d_ff": wide + (d4 + wide + 1) % 2, "bias": True})]


def _count_problem(value: Any, case: Case) -> str | None:
    problem = int_problem(value, "the number of parameters", "use // rather than /, or int(...)",
                          "a parameter count is an int")
    if problem is not None:
        return problem
    value = int(value)
    expected = _reference_count(**case.args)
    if value.bit_length() > 100:                         # never float() or str() a number this big
        return (f"returned a number about {value.bit_length() * 0.30103:,.0f} digits long: a power crept in. "
                "Look for ** where * was meant (d ** d_ff raises d to the power d_ff)")
    if value != expected and (value - expected) % 2 ** 32 == 0:
        return (f"returned {value:,} where the count is {expected:,}: that is the count wrapped around at 2**32, "
                "the overflow of 32-bit integers (np.int32 holds at most 2,147,483,647). Compute with Python's "
                "int, which never overflows: plain d * d_ff, no np.int32")
    if value != expected and float(np.float32(expected)) != expected and float(np.float32(value)) == value \
            and abs(value - expected) <= float(np.spacing(np.float32(expected))):
        return (f"returned {value:,} where the count is {expected:,}: float32 (or float) arithmetic lost the last "
                "digits. float32 holds whole numbers exactly only up to 2**24 = 16,777,216. Use ints: plain "
                "d * d_ff in Python, no np.float32 or float(...) along the way")
    for other in _count_cases() + hidden_cases(_count_hidden):   # the hidden ones only while grading
        d, d_ff = other.args["d"], other.args["d_ff"]
        if (d, d_ff) != (case.args["d"], case.args["d_ff"]) and d == case.args["d"] \
                and value != expected and value == _reference_count(**other.args):
            return (f"returned {value:,}, the count for d_ff = {d_ff:,} (another case with the same d = {d}), "
                    f"not for d_ff = {case.args['d_ff']:,}: the result does not follow d_ff. A result kept from "
                    "an earlier call (a cache or a global keyed on d alone) gives this; compute it from both "
                    "sizes every time")
    return None


def _by_keyword(fn: Callable, name: str, index: int) -> Callable:
    """fn called with its argument `name` by keyword when the function takes it only so (after a `*`): cases pass
    their arguments by position, and `def f(d, d_ff, *, bias=True)` is just as right."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return fn
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) > index or any(p.kind is p.VAR_POSITIONAL for p in parameters) \
            or not any(p.name == name and p.kind is p.KEYWORD_ONLY for p in parameters):
        return fn

    def call(*args):
        return fn(*args[:index], **({name: args[index]} if len(args) > index else {}))
    call.__signature__ = inspect.signature(fn)
    return call


def _bias_signature_problem(fn: Callable) -> str | None:
    """Why fn cannot be called both as count_ffn_params(d, d_ff, bias) and as count_ffn_params(d, d_ff), or
    why its default for bias is not the True the exercise asks for."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a built-in without a signature: let the cases find out
        return None
    keyword = any(p.name == "bias" and p.kind is p.KEYWORD_ONLY for p in signature.parameters.values())
    try:
        signature.bind(768, 3072, bias=False) if keyword else signature.bind(768, 3072, False)
    except TypeError:
        return ("your function takes no third argument, `bias`, so it cannot be asked for the count without "
                "biases. Start it with `def count_ffn_params(d, d_ff, bias=True):` and leave b1 and b2 out of "
                "the count when bias is False.")
    try:
        signature.bind(768, 3072, bias=False)
    except TypeError:
        third = list(signature.bind(768, 3072, False).arguments)[2:3]
        named = f"named `{third[0]}`" if third else "not named `bias`"
        return (f"your third argument is {named}, so count_ffn_params(d, d_ff, bias=False) fails: the lesson calls "
                "it by that name later. Call it `bias`: `def count_ffn_params(d, d_ff, bias=True):`.")
    try:
        signature.bind(768, 3072)
    except TypeError:
        return ("your `bias` argument has no default, so count_ffn_params(d, d_ff) cannot be called. Give it "
                "the default True: `def count_ffn_params(d, d_ff, bias=True):`.")
    if keyword:
        parameter = signature.parameters["bias"]
    else:
        third = list(signature.bind(768, 3072, False).arguments)[2:3]
        parameter = signature.parameters[third[0]] if third else None
    if parameter is not None and parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD,
                                                    parameter.KEYWORD_ONLY):
        default = parameter.default
        if default is not True and not (type(default) is int and default == 1):
            return (f"your `{parameter.name}` argument defaults to {fmt(default)}, so count_ffn_params(d, d_ff) "
                    "does not count the biases. The exercise's default is True (an FFN has biases unless told "
                    "otherwise): `def count_ffn_params(d, d_ff, bias=True):`.")
    return None


def _ignores_sizes(fn: Callable, cases: list[Case]) -> list | None:
    """The values fn returns when they do not change with d and d_ff (only with bias, if at all): one model's
    numbers typed in, or the arguments overwritten by fixed sizes. None otherwise."""
    with redirect_stdout(io.StringIO()):  # a probe: what the function prints shows once, in the cases below
        outcomes = [run(fn, case.args) for case in cases]
    if any(o.raised for o in outcomes):
        return None
    by_bias: dict[bool, set] = {}
    for case, outcome in zip(cases, outcomes):
        value = outcome.value
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            return None  # None, a string, a tuple: the validation says what is wrong with its kind
        # an int stays an int: float() of a huge one (d ** d_ff) raises OverflowError
        by_bias.setdefault(bool(case.args.get("bias", True)), set()).add(
            int(value) if isinstance(value, (int, np.integer)) else float(value))
    if all(len(values) == 1 for values in by_bias.values()):
        values = {v for values in by_bias.values() for v in values}
        if any(isinstance(v, int) and v.bit_length() > 100 for v in values):
            return None  # a huge number: the cases say what is wrong with it (a ** where * was meant)
        return sorted(values, reverse=True)
    return None


@grader
def check_count_ffn_params(fn) -> bool:
    """Grade `count_ffn_params(d, d_ff, bias=True)`: the number of parameters in W1, b1, W2 and b2."""
    if not callable(fn):
        return not_a_function("count_ffn_params", fn)
    problem = _bias_signature_problem(fn)
    if problem:
        print(f"count_ffn_params: {problem}")
        return False
    fn = _by_keyword(fn, "bias", 2)
    cases = _count_cases()
    fixed = _ignores_sizes(fn, cases)
    if fixed is not None:
        shown = " or ".join(f"{int(v):,}" if isinstance(v, int) or float(v).is_integer() else fmt(v)
                            for v in fixed)
        print(f"count_ffn_params: your function returns {shown} whatever d and d_ff are: it counts one model's "
              "sizes, not the ones it is given. Compute the count from the arguments d and d_ff (and do not "
              "overwrite them inside the function), so that one function answers for every model.")
        return False
    return check_function(
        "count_ffn_params", fn, cases, _reference_count, _count_problem, _COUNT_MISTAKES,
        compare=lambda got, expected: got == expected, normalize=int, describe=lambda n: f"{n:,}",
        fallback_hint="list the four arrays with their shapes, W1 (d, d_ff), b1 (d_ff,), W2 (d_ff, d), "
                      "b2 (d,), and add up their sizes; leave the biases out when bias is False.",
        hidden=_count_hidden)


# --------------------------------------------------------------------------------------------------------
# ffn_chunked(x, W1, b1, W2, b2, chunk) (Exercise 2 in the notebook): the same numbers, `chunk` tokens at
# a time.
# --------------------------------------------------------------------------------------------------------
MEMORY_T = 512  # tokens in the case that measures memory


class _TokenCounter(np.ndarray):
    """x, W1 and W2 as the checks hand them to ffn_batched and ffn_chunked: the same numbers, and a record of
    every matrix product they take part in (@, np.matmul, np.dot, .dot, np.einsum, ...). A product of W1, or
    of (a slice of) x, that makes hidden rows, (rows, d_ff) or (d_ff, rows), has size / d_ff tokens: it is
    noted in `products`; a product of W2 that makes output rows is noted in `outputs`. So converting W1 to a
    plain array (np.asarray(W1), W1 * 1) still leaves x's chunks to be seen. Slices and views share the
    record; x's slices (x[s:s + chunk], np.array_split(x, ...), x.astype, x * 1) stay watched; products come
    back as ordinary arrays."""

    products: list | None = None         # tokens in each product that makes hidden rows, in order
    outputs: list | None = None          # tokens in each product with W2 that makes output rows
    d_ff: int = 1
    weight_shape: tuple = ()             # W1's shape (d, d_ff): only products of W1 or W1.T count
    role: str = "W1"                     # "x", "W1" or "W2": which input this array is (a view of)

    def __array_finalize__(self, obj):
        for name in ("products", "outputs", "d_ff", "weight_shape", "role"):
            setattr(self, name, getattr(obj, name, getattr(_TokenCounter, name)))

    def _record(self, result, operands=None):
        shape = np.shape(result)
        if self.products is None or not shape:
            return
        watched = [a for a in (operands if operands is not None else (self,)) if isinstance(a, _TokenCounter)]
        d, d_ff = self.weight_shape if len(self.weight_shape) == 2 else (0, self.d_ff)
        weights = (self.weight_shape, self.weight_shape[::-1])
        first = any((a.role == "W1" and a.shape in weights) or (a.role == "x" and a.ndim in (1, 2)
                                                                 and d in a.shape) for a in watched)
        second = any(a.role == "W2" and a.shape in weights[::-1] for a in watched)
        if first and d_ff in (shape[0], shape[-1]):
            self.products.append(np.size(result) // d_ff)
        elif second and d in (shape[0], shape[-1]) and self.outputs is not None:
            self.outputs.append(np.size(result) // d)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "out" in kwargs:
            kwargs["out"] = _plain(kwargs["out"])
        result = getattr(ufunc, method)(*_plain(inputs), **kwargs)
        if ufunc is np.matmul and method == "__call__":
            self._record(result, _flat(inputs))
        elif (method == "__call__" and isinstance(result, np.ndarray) and type(result) is np.ndarray
              and "out" not in kwargs):
            # x * 1, x + 0, np.multiply(x, 1.0): a copy of x is still x, watched like it
            source = next((a for a in inputs if isinstance(a, _TokenCounter) and a.role == "x"
                           and a.shape == result.shape), None)
            if source is not None:
                result = result.view(_TokenCounter)
                result.__array_finalize__(source)
        return result

    def __array_function__(self, func, types, args, kwargs):
        if func in _PRODUCTS:
            result = func(*_plain(args), **_plain(kwargs))
            self._record(result, _flat((args, kwargs)))
            return result
        if any(isinstance(a, _TokenCounter) and a.role == "x" for a in _flat(args)):
            return super().__array_function__(func, types, args, kwargs)  # x's slices stay watched
        return func(*_plain(args), **_plain(kwargs))

    def dot(self, other, out=None):
        result = np.dot(self.view(np.ndarray), _plain(other), out=_plain(out))
        self._record(result, [self, other])
        return result

    def __repr__(self):  # what the learner would see printing W1: the plain array
        return repr(self.view(np.ndarray))

    def __str__(self):
        return str(self.view(np.ndarray))


def _flat(value) -> list:
    """The arrays in value, also inside tuples, lists and dicts (the operands of a call)."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _flat(v)]
    if isinstance(value, dict):
        return [a for v in value.values() for a in _flat(v)]
    return []


def _watch(x, W1, W2) -> tuple[np.ndarray, np.ndarray, np.ndarray, list, list]:
    """x, W1 and W2 viewed as recording arrays that share one record: (x, W1, W2, products, outputs)."""
    products, outputs = [], []
    views = []
    for array, role in ((x, "x"), (W1, "W1"), (W2, "W2")):
        view = np.asarray(array).view(_TokenCounter)
        view.products, view.outputs, view.d_ff, view.weight_shape, view.role = (products, outputs, W1.shape[1],
                                                                                W1.shape, role)
        views.append(view)
    return (*views, products, outputs)


_PRODUCTS = {np.dot, np.einsum, np.tensordot, np.inner, np.linalg.multi_dot}


def _plain(value):
    """value with every _TokenCounter in it (also inside tuples, lists and dicts) turned into a plain array."""
    return plain_arrays(value, _TokenCounter)


@dataclass
class _Measured:
    """What the learner's function returned, the most memory it held at once, and the number of tokens in
    each product it took with W1 (empty when it never multiplied by W1 in a way the check can see)."""
    value: Any
    peak: int
    products: list
    outputs: list = None    # tokens in each product with W2 (seen when W1 and x were both converted)

    @property
    def tokens(self) -> list:
        """The tokens in each product the check saw: with W1 or x's slices if any, else with W2."""
        return self.products or self.outputs or []

    def __array__(self, dtype=None, copy=None):
        """The returned value as an array, so that two malformed results (a 3-D stack of chunks) compare."""
        return np.asarray(self.value, dtype=dtype)


def _measured(fn: Callable) -> Callable:
    def call(x, W1, b1, W2, b2, chunk):
        xw, W1w, W2w, products, outputs = _watch(x, W1, W2)
        value, peak = peak_bytes(fn, xw, W1w, b1, W2w, b2, chunk)
        return _Measured(_plain(value), peak, products, outputs)
    return call


def _reference_chunked(x, W1, b1, W2, b2, chunk):
    return ffn(x, W1, b1, W2, b2)


def _chunked_case(name: str, seed: int, T: int, chunk: int, d: int = 3, d_ff: int = 6,
                  dtype=np.float64) -> Case:
    case = _ffn_case(name, seed, T, d, d_ff, dtype)
    case.args["chunk"] = chunk
    return case


def _chunked_cases() -> list[Case]:
    return [
        _chunked_case("10 tokens in chunks of 4 (the last chunk has 2 tokens)", 21, T=10, chunk=4),
        _chunked_case("12 tokens in chunks of 4 (no partial chunk)", 22, T=12, chunk=4),
        _chunked_case("5 tokens in chunks of 8 (one chunk, shorter than chunk)", 23, T=5, chunk=8),
        _chunked_case("7 tokens in chunks of 4 (two chunks, fewer tokens than two full ones)", 28, T=7, chunk=4),
        _chunked_case("7 tokens in chunks of 1", 24, T=7, chunk=1),
        _chunked_case("9 tokens in float32, chunks of 4 (float32 in, float32 out)", 25, T=9, chunk=4,
                      dtype=np.float32),
        _random_chunked_case("11 tokens of random numbers in chunks of 3", 27, T=11, chunk=3, d=3, d_ff=7),
        _chunked_case("300 tokens in chunks of 100 (a chunk larger than 64)", 29, T=300, chunk=100),
        _chunked_case(f"{MEMORY_T} tokens in chunks of 64, d = 16 -> d_ff = 256 (memory measured)", 26,
                      T=MEMORY_T, chunk=64, d=16, d_ff=256),
    ]


def _random_chunked_case(name: str, seed: int, T: int, chunk: int, d: int, d_ff: int, dtype=np.float64) -> Case:
    case = _random_case(name, seed, T, d, d_ff, dtype)
    case.args["chunk"] = chunk
    return case


def _chunked_hidden() -> list[Case]:
    """Drawn at grading time (see _batched_hidden): a shorter last chunk, chunks that divide the tokens, and one
    chunk longer than the sequence, each by construction."""
    rng = hidden_rng(33)
    chunk = int(rng.integers(3, 10))
    T = chunk * int(rng.integers(2, 7)) + int(rng.integers(1, chunk))
    partial = _drawn_case("hidden: random float32 numbers, d of 2 to 5 -> d_ff of 6 to 10, in chunks of 3 to 9: "
                          "two to six full chunks and a shorter last one", rng, T, *_sizes(rng, (2, 5), (6, 10)),
                          dtype=np.float32, chunk=chunk)
    chunk = int(rng.integers(2, 9))
    T = chunk * int(rng.integers(2, 6))
    whole = _drawn_case("hidden: random numbers, d of 2 to 5 -> d_ff of 2 to 10 (never equal), in chunks of 2 to "
                        "8: two to five full chunks, no partial one", rng, T, *_sizes(rng, (2, 5), (2, 10)),
                        chunk=chunk)
    T = int(rng.integers(2, 8))
    chunk = int(rng.integers(T + 1, 3 * T + 1))
    return [partial, whole, _drawn_case("hidden: random numbers, 2 to 7 tokens in one chunk longer than the "
                                        "sequence", rng, T, *_sizes(rng, (2, 5), (2, 10)), chunk=chunk)]


def _chunking_problem(products: list, T: int, chunk: int, explained: set | None = None
                      ) -> tuple[str, str, str] | None:
    """(kind, what happened, why and the fix) when the products with W1 did not take the tokens `chunk` at a
    time, each token once; None when they did, or when the check could not see them. `explained` holds the
    kinds named on earlier cases: where two slips give the same chunks (np.array_split(x, 4) and steps of 2
    both cut 7 tokens into 2, 2, 2, 1), the one already named is kept."""
    if not products or None in products or sum(products) < T:
        return None  # W1 used in a way the check cannot follow (np.asarray(W1), W1.dot): nothing to judge
    expected = [chunk] * (T // chunk) + ([T % chunk] if T % chunk else [])
    if sorted(products) == sorted(expected):
        return None
    if products == [chunk] * -(-T // chunk):
        return None   # the last chunk padded to chunk tokens (and the padding cut off after): chunk per product
    ran = (f"gives the right numbers, but its products with W1 took {fmt(products, max_items=10)} tokens "
           f"where chunk = {chunk} asks for {fmt(expected, max_items=10)}")
    if len(products) == 1:
        return "whole", ran, (f"all {T} tokens went through at once, so the hidden layer of the whole sequence "
                              "existed at once. Whatever T is, call the FFN on one slice x[s:s + chunk] at a time, "
                              "inside the loop, with no shortcut that sends a short sequence through whole; and "
                              "step by the argument chunk, not by a number typed in (64 is only this lesson's "
                              "example)")
    windows = [sorted(min(chunk, T - s) for s in range(T)), [chunk] * (T - chunk + 1)]  # start at every token
    if sorted(products) in windows:
        return "overlap", ran, (f"the windows overlap. The loop starts a window at every token (range(0, T) or "
                                f"range(T)), so each token is computed up to {chunk} times: {sum(products)} token "
                                f"rows for {T} tokens. Step by chunk: for s in range(0, T, chunk)")
    if sum(products) > T:
        return "repeat", ran, (f"{sum(products)} token rows for {T} tokens, so some tokens were computed more "
                               "than once. Each token belongs to one chunk, x[s:s + chunk] for s in range(0, T, "
                               "chunk)")
    size = max(products)
    capped = 1 < size < chunk and sorted(products) == sorted([size] * (T // size) + ([T % size] if T % size else []))
    if len(products) == chunk and max(products) - min(products) <= 1 \
            and not (capped and explained is not None and "capped" in explained):
        return "split", ran, ("np.array_split(x, chunk) cuts x into chunk pieces, not into pieces of chunk "
                              "tokens. Give it the places to cut, np.array_split(x, range(chunk, T, chunk)), or "
                              "take x[s:s + chunk] for s in range(0, T, chunk)")
    if set(products) == {1}:
        return "tokens", ran, ("one token at a time, whatever chunk is. The numbers are right, but every "
                               "product is a single row, the slow case that chunks of tens of tokens exist to "
                               "avoid. Take chunk tokens per step: x[s:s + chunk] for s in range(0, T, chunk)")
    if len(products) == -(-T // chunk) and max(products) - min(products) <= 1:
        return "even", ran, ("as many chunks as chunk asks for, but of even sizes: np.array_split(x, n) shares "
                             "the tokens out as evenly as it can. Every chunk but the last must hold chunk tokens: "
                             "np.array_split(x, range(chunk, T, chunk)), or x[s:s + chunk] for s in "
                             "range(0, T, chunk)")
    if capped:
        return "capped", ran, (f"chunks of {size} tokens although chunk = {chunk}: the size of a chunk is not "
                               "the argument as given, but capped (chunk = min(chunk, 64)), halved or replaced by "
                               "a number typed in. Use chunk itself: x[s:s + chunk] for s in range(0, T, chunk)")
    return "sizes", ran, ("every chunk should hold chunk tokens, and the last one what is left over: "
                          "x[s:s + chunk] for s in range(0, T, chunk)")


PROBE_T, PROBE_CHUNKS = 2048, (8, 256)   # the memory probe: chunks of 256 tokens hold 32 times the rows of 8


def _memory_by_chunk(fn: Callable) -> tuple[int, int] | None:
    """The peak bytes fn holds for PROBE_T tokens (d = 4 -> d_ff = 1024) with each chunk size of PROBE_CHUNKS,
    on plain arrays; None when it fails there. The second witness of the chunking, for a function whose
    products the recording arrays cannot see (x, W1 and W2 all converted to new arrays first)."""
    case = _ffn_case("", 41, T=PROBE_T, d=4, d_ff=1024)
    peaks = []
    for chunk in PROBE_CHUNKS:
        args = copy.deepcopy(case.args)
        try:
            with redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _, peak = peak_bytes(fn, *args.values(), chunk)
        except Exception:
            return None
        peaks.append(peak)
    return peaks[0], peaks[1]


def _unseen_chunks(probe: Callable[[], tuple[int, int] | None], explained: set | None) -> str | None:
    """For right numbers made with no product the check could see: whether the memory the function holds
    grows with chunk, as chunks of chunk tokens make it (None: nothing wrong to report)."""
    peaks = probe()
    if peaks is None or peaks[1] >= 4 * peaks[0]:
        return None
    small, large = PROBE_CHUNKS
    what = (f"gives the right numbers, but the memory it holds does not follow chunk: {PROBE_T} tokens took "
            f"{peaks[0] / 1024:,.0f} KiB at once with chunk = {small} and {peaks[1] / 1024:,.0f} KiB with chunk = "
            f"{large}, where chunks of {large} tokens hold {large // small} times the hidden rows")
    if explained is not None and "memory" in explained:
        return f"{what} (see above)"
    if explained is not None:
        explained.add("memory")
    return (f"{what}. (x, W1 and W2 were all turned into new arrays first, so the check measured memory "
            "instead of counting products.) Take chunk tokens per step, the argument, not a number typed in: "
            "x[s:s + chunk] for s in range(0, T, chunk)")


def _chunked_problem(measured: _Measured, case: Case, explained: set | None = None,
                     probe: Callable[[], tuple[int, int] | None] = lambda: None) -> str | None:
    """What is wrong with a result of ffn_chunked: its kind or shape; then, for the right numbers, how the
    tokens were chunked (each kind explained in full the first time, `explained` remembers); then memory."""
    x, chunk = case.args["x"], case.args["chunk"]
    T, d_ff = x.shape[0], case.args["W1"].shape[1]
    hints = {}
    if T % chunk == 0 and T > chunk:
        hints[(T // chunk, chunk, x.shape[1])] = ("That is one block per chunk, stacked along a new first axis: "
                                                  "np.array(chunks) or np.stack(chunks) adds an axis. Join the "
                                                  "chunks' rows end to end with np.concatenate(chunks)")
    if T <= chunk:
        hints[(1, T, x.shape[1])] = ("That is the one chunk inside an extra first axis: np.array([...]) or "
                                     "np.stack adds an axis. Join the chunks' rows with np.concatenate(chunks)")
    if T % chunk and T > chunk:
        left = T % chunk
        missing = f"The last {left} tokens are" if left > 1 else "The last token is"
        hints[(T - left, x.shape[1])] = (f"{missing} missing: the last, shorter chunk was dropped. "
                                         "range(0, T, chunk) starts a chunk at every multiple of chunk, and "
                                         "x[s:s + chunk] stops at the end by itself")
    value = measured.value
    unwritten = _unwritten_rows(value, case)
    if unwritten:
        return unwritten
    problem = _ffn_array_problem(value, case, hints)
    if problem and isinstance(value, np.ndarray) and value.ndim == 2 and value.shape[1] == x.shape[1] \
            and value.shape not in hints:
        if value.shape[0] > T:
            problem += (f". That is {value.shape[0]} rows for {T} tokens: some tokens were computed more than "
                        "once, so the slices overlap. Make the step of the loop and the length of the slice "
                        "the same: x[s:s + chunk] for s in range(0, T, chunk)")
        elif value.shape[0] < T:
            problem += (f". That is {value.shape[0]} rows for {T} tokens: some tokens were skipped. Take every "
                        "chunk, x[s:s + chunk] for s in range(0, T, chunk)")
    if problem:
        return problem
    expected = _reference_chunked(**case.args)
    if not _agrees(value, expected):
        return _precision_problem(value, expected) or _wrong_rows(value, expected, chunk)
    found = _chunking_problem(measured.tokens, T, chunk, explained) if measured.tokens else None
    if not measured.tokens and (unseen := _unseen_chunks(probe, explained)):
        return unseen
    if found:
        kind, ran, why = found
        if explained is not None and kind in explained:
            return f"{ran} (see above)"
        if explained is not None:
            explained.add(kind)
        return f"{ran}: {why}"
    whole = T * d_ff * x.itemsize  # bytes of the whole (T, d_ff) hidden layer
    if T >= MEMORY_T and measured.peak > 0.75 * whole:  # a chunk's hidden rows are 1/8 of it; some slack
        return (f"gives the right numbers but held {measured.peak / 1024:,.0f} KiB at once, about as much as the "
                f"whole (T, d_ff) hidden layer ({whole / 1024:,.0f} KiB). Call the FFN on one slice "
                "x[s:s + chunk] at a time, inside the loop, and keep only its output")
    return None


def _written_at(x_starts: list[int], y_starts: list[int], expected: np.ndarray, chunk: int,
                broadcast: bool) -> np.ndarray | None:
    """The output of a loop that computes the chunk of x starting at x_starts[i] and writes it into y from row
    y_starts[i], rows never written left as NaN; None where such a loop raises. With `broadcast`, it writes
    `y[a:a + chunk] = out` (NumPy then needs the same number of rows, or one row); else `y[a:a + len(out)]`."""
    T = expected.shape[0]
    y = np.full(expected.shape, np.nan)
    for a, s in zip(y_starts, x_starts):
        out = expected[s:s + chunk]
        rows = y[a:a + (chunk if broadcast else len(out))]
        if len(rows) != len(out) and not (broadcast and len(out) == 1):
            return None
        rows[...] = out
    return y if T else None


def _misplaced_chunks(value: np.ndarray, expected: np.ndarray, chunk: int) -> str | None:
    """Which of two index slips with the chunk number i in place of the chunk's first token s = i * chunk
    reproduces `value` (where a row was never written, any numbers will do): writing y[i:i + chunk], or
    reading x[i:i + chunk]. A specific message, or None."""
    T = expected.shape[0]
    starts = list(range(0, T, chunk))
    numbers = list(range(len(starts)))
    if chunk == 1 or len(starts) < 2:
        return None                                   # i and s are the same: neither slip can show
    for broadcast in (True, False):
        y = _written_at(starts, numbers, expected, chunk, broadcast)
        if y is not None:
            written = ~np.isnan(y).any(axis=1)
            if _agrees(value[written], y[written].astype(expected.dtype)):
                never = int(np.sum(~written))
                return ("wrote each chunk's outputs into y from row i, the chunk's number, instead of from its "
                        "first token s = i * chunk: the chunks overwrite each other's rows"
                        + (f", and the last {plural(never, 'row')} of y are never written" if never else "")
                        + ". Each output row belongs at its token's place: y[s:s + chunk] = "
                          "ffn(x[s:s + chunk], ...)")
    rows = [min(chunk, T - s) for s in starts]       # y[s:s + chunk], filled from x[i:i + chunk]
    y = np.full(expected.shape, np.nan)
    for i, (s, n) in enumerate(zip(starts, rows)):
        out = expected[i:i + chunk]
        if len(out) != n:
            return None
        y[s:s + n] = out
    if _agrees(value, y.astype(expected.dtype)):
        return ("read each chunk from x[i:i + chunk], starting at the chunk's number i instead of at its first "
                "token s = i * chunk, so most rows hold the outputs of other tokens. Slice x and y alike: "
                "y[s:s + chunk] = ffn(x[s:s + chunk], ...)")
    return None


def _unwritten_rows(value: Any, case: Case) -> str | None:
    """For a (T, d) result holding NaN or infinity: the chunk number used for the first token, or rows never
    written (np.empty leaves whatever was in memory), rather than a blind 'division by zero?'."""
    x, chunk = case.args["x"], case.args["chunk"]
    expected = _reference_chunked(**case.args)
    if (not isinstance(value, np.ndarray) or value.shape != expected.shape
            or not np.issubdtype(value.dtype, np.floating) or np.isfinite(value).all()):
        return None
    misplaced = _misplaced_chunks(value, expected, chunk)
    if misplaced:
        return misplaced
    bad = ~np.isfinite(value).all(axis=1)
    if _agrees(value[~bad], expected[~bad]):
        rows = np.flatnonzero(bad).tolist()
        return (f"left {plural(len(rows), 'row')} of {x.shape[0]} ({fmt(rows, max_items=8)}) holding NaN or "
                "infinity while every other row is right: those rows were never written (np.empty leaves "
                "whatever was in memory). Write every chunk's outputs, the last, shorter chunk's too")
    return None


def _wrong_rows(value: np.ndarray, expected: np.ndarray, chunk: int) -> str:
    """Which output rows (tokens) differ, and in which chunks: a slip in chunking shows as wrong rows at the
    same places in every chunk, or in the last one; chunk numbers used as token positions are named."""
    T = expected.shape[0]
    misplaced = _misplaced_chunks(value, expected, chunk)
    if misplaced:
        return misplaced
    bad = [t for t in range(T) if not _agrees(value[t], expected[t])]
    chunks = sorted({t // chunk for t in bad})
    n_chunks = -(-T // chunk)
    if len(chunks) == n_chunks:
        spread = "in every chunk" if n_chunks > 1 else "in the one chunk"
    elif len(chunks) == 1:
        c = chunks[0]
        last = ", the last one," if c == n_chunks - 1 else ""
        spread = (f"all in chunk {c}{last} of the {n_chunks} chunks (rows {c * chunk} to "
                  f"{min(T, (c + 1) * chunk) - 1})")
    else:
        spread = f"in chunks {', '.join(map(str, chunks[:-1]))} and {chunks[-1]} of the {n_chunks}"
    positions = sorted({t % chunk for t in bad})
    if len(chunks) > 1 and len(positions) == 1 and chunk > 1:
        p = positions[0]
        spread += f", at the same place in each: row {p} of its chunk" + (" (its last)" if p == chunk - 1 else "")
    where = (f"all {T} rows" if len(bad) == T else
             f"{len(bad)} of the {T} rows (rows {fmt(bad, max_items=8)}), {spread}")
    first = bad[0]
    if expected.shape[1] <= 8:
        return Observed(f"returned wrong numbers in {where}. Row {first} should be {fmt(expected[first])}, got "
                        f"{fmt(value[first])}")
    column = next(c for c in range(expected.shape[1]) if not _agrees(value[first, c], expected[first, c]))
    return Observed(f"returned wrong numbers in {where}. Row {first}, column {column} should be "
                    f"{fmt(expected[first, column])}, got {fmt(value[first, column])}")


def _chunks_leaving_zeros(x, W1, b1, W2, b2, chunk):
    y = np.zeros((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for i in range(x.shape[0] // chunk):                          # full chunks only
        y[i * chunk:(i + 1) * chunk] = ffn(x[i * chunk:(i + 1) * chunk], W1, b1, W2, b2)
    return y


def _chunks_from_index(x, W1, b1, W2, b2, chunk):
    y = np.zeros((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for i, s in enumerate(range(0, x.shape[0], chunk)):
        y[s:s + chunk] = ffn(x[i:i + chunk], W1, b1, W2, b2)     # x sliced from i, not from s
    return y


def _chunks_written_at_index(x, W1, b1, W2, b2, chunk):
    y = np.zeros((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for i, s in enumerate(range(0, x.shape[0], chunk)):
        y[i:i + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2)     # y written from i, not from s
    return y


def _chunks_written_at_index_no_broadcast(x, W1, b1, W2, b2, chunk):
    y = np.zeros((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for i, s in enumerate(range(0, x.shape[0], chunk)):
        out = ffn(x[s:s + chunk], W1, b1, W2, b2)
        y[i:i + len(out)] = out                                   # y written from i, not from s
    return y


def _chunks_stacked(x, W1, b1, W2, b2, chunk):
    return np.array([ffn(x[s:s + chunk], W1, b1, W2, b2) for s in range(0, x.shape[0], chunk)])


def _chunks_np_stack(x, W1, b1, W2, b2, chunk):
    return np.stack([ffn(x[s:s + chunk], W1, b1, W2, b2) for s in range(0, x.shape[0], chunk)])


_CHUNKED_MISTAKES = [
    Mistake("the last, shorter chunk never computed (its rows left as the output array began: zeros after "
            "np.zeros, leftover memory after np.empty)",
            "range(T // chunk) chunks stop before the leftover tokens: the last chunk, shorter than the others, "
            "is never computed. The loop over the starts must reach it too.",
            _chunks_leaving_zeros,
            "Loop with `for s in range(0, T, chunk)` and take x[s:s + chunk]: the last slice is simply shorter."),
    Mistake("the outputs written to y[i:i + chunk], from the chunk number i instead of its first token s",
            "Chunk i holds tokens s = i * chunk to s + chunk - 1, and their outputs belong in the same rows: "
            "y[s:s + chunk] = ffn(x[s:s + chunk], ...). From row i the chunks overwrite each other, and NumPy "
            "cannot fit a shorter last chunk into chunk rows (could not broadcast).",
            _chunks_written_at_index),
    Mistake("the outputs written to y[i:i + len(out)], from the chunk number i instead of its first token s",
            "Chunk i holds tokens s = i * chunk to s + chunk - 1, and their outputs belong in the same rows: "
            "y[s:s + chunk] = ffn(x[s:s + chunk], ...). From row i the chunks overwrite each other.",
            _chunks_written_at_index_no_broadcast),
    Mistake("slices of x started at the chunk number i instead of at i * chunk",
            "Chunk i covers tokens i * chunk up to (i + 1) * chunk; or loop over the starts directly, "
            "`for s in range(0, T, chunk)`, and slice x and y alike.",
            _chunks_from_index),
    Mistake("chunks joined with np.array instead of np.concatenate",
            "np.array(list_of_chunks) stacks the chunks along a new first axis, (chunks, chunk, d), and fails "
            "outright when the last chunk is shorter. np.concatenate(list_of_chunks) puts their rows end to end: "
            "(T, d).",
            _chunks_stacked),
    Mistake("chunks joined with np.stack instead of np.concatenate",
            "np.stack(list_of_chunks) stacks the chunks along a new first axis, (chunks, chunk, d), and needs "
            "them all the same size, so it fails when the last chunk is shorter. np.concatenate(list_of_chunks) "
            "puts their rows end to end: (T, d).",
            _chunks_np_stack),
]


# Lines of the solution a first failure keeps back (issue 21): the loop over the starts and the slice written.
_CHUNKED_FORMULAS = ["range(0, T, chunk)", "y[s:s + chunk] = ffn(x[s:s + chunk]"]


@grader
def check_ffn_chunked(fn) -> bool:
    """Grade `ffn_chunked(x, W1, b1, W2, b2, chunk)`: ffn's numbers, computed `chunk` tokens at a time."""
    if not callable(fn):
        return not_a_function("ffn_chunked", fn)
    explained: set = set()  # kinds of chunking slip already explained in full, for this check only
    probed: list = []

    def probe():  # the memory probe runs once, and only for a function whose products were not seen
        if not probed:
            probed.append(_memory_by_chunk(fn))
        return probed[0]
    return check_function(
        "ffn_chunked", _measured(fn), _chunked_cases(), _reference_chunked,
        lambda measured, case: held_back("ffn_chunked", _chunked_problem(measured, case, explained, probe),
                                         _CHUNKED_FORMULAS),
        [Mistake(m.name, m.fix, _measured(m.fn), m.later)                      # judged like the learner's
         for m in with_tiers(_CHUNKED_MISTAKES, _CHUNKED_FORMULAS)],
        compare=_agrees, normalize=lambda measured: measured.value, describe=_describe_rows,
        fallback_hint="print the shape of each chunk's input and output inside your loop: every input "
                      "should be x[s:s + chunk] for the starts s = 0, chunk, 2 * chunk, ..., and every output "
                      "row should land at the same place in y as its token in x.",
        hidden=_chunked_hidden)
