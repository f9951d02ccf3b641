"""Checks for lesson 03: the batched FFN in NumPy, counting its parameters, and running it in chunks."""
from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from helpers.checks._core import (Case, Mistake, a_kind, array_problem, check_function, close, fmt,
                                  int_problem, is_library_file, not_a_function)
from helpers.checks._verdict import grader
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
    problem = array_problem(value, (T, d), shape_hints=hints)
    if problem is None and value.dtype != x.dtype:
        problem = f"returned dtype {value.dtype} from {x.dtype} inputs; the output should keep the inputs' dtype"
        if x.dtype == np.float32 and value.dtype == np.float64:
            problem += (". Something upcast to float64: np.zeros((T, d)) and np.empty((T, d)) are float64 unless "
                        "you pass dtype=x.dtype, and so is an array built from Python floats")
    return problem


def _describe_rows(value: Any) -> str:
    """A (T, d) array as its shape, first row and last row: a slip in the last chunk shows in the last row."""
    if not isinstance(value, np.ndarray) or value.ndim != 2 or value.shape[0] < 2:
        return fmt(value)
    return f"shape {value.shape}, first row {fmt(value[0])}, last row {fmt(value[-1])}"


# --------------------------------------------------------------------------------------------------------
# Exercise 1: ffn_batched(x, W1, b1, W2, b2) for x of shape (T, d), row-vector convention.
# --------------------------------------------------------------------------------------------------------
def _reference_batched(x, W1, b1, W2, b2):
    return ffn(x, W1, b1, W2, b2)


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
]


def _batched_cases() -> list[Case]:
    return [
        _ffn_case("3 tokens, d = 2 -> d_ff = 5", 0, T=3, d=2, d_ff=5),
        _ffn_case("4 tokens, d = d_ff = 3 (square: a transpose does not crash here)", 14, T=4, d=3, d_ff=3),
        _ffn_case("6 tokens in float32, d = 4 -> d_ff = 8 (float32 in, float32 out)", 5, T=6, d=4, d_ff=8,
                  dtype=np.float32),
        _ffn_case("a single token as a (1, d) array, d = 3 -> d_ff = 6", 9, T=1, d=3, d_ff=6),
    ]


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


def _per_token_note(fn: Callable) -> str | None:
    """A note when fn runs Python code once per token (correct, but slow at real sizes)."""
    small, big = _ffn_case("", 7, T=1, d=4, d_ff=8), _ffn_case("", 7, T=33, d=4, d_ff=8)
    steps = [python_steps(fn, tuple(case.args.values())) for case in (small, big)]
    if None in steps or steps[1] - steps[0] < 32:
        return None
    return (f"Note: correct, but your function runs Python code for every token ({steps[0]} Python steps "
            f"for 1 token, {steps[1]} for 33). Try x @ W1 on the whole (T, d) array: one matmul does every "
            "token at once, and section 1 showed how much faster that is.")


@grader
def check_ffn_batched(fn) -> bool:
    """Grade `ffn_batched(x, W1, b1, W2, b2)`: relu(x @ W1 + b1) @ W2 + b2 for x of shape (T, d)."""
    if not callable(fn):
        return not_a_function("ffn_batched", fn)
    ok = check_function(
        "ffn_batched", fn, _batched_cases(), _reference_batched, _ffn_array_problem, _BATCHED_MISTAKES,
        describe=_describe_rows,
        fallback_hint="write it as three lines: h = x @ W1 + b1  # (T, d_ff), then h = relu(h), then "
                      "return h @ W2 + b2  # (T, d).")
    if ok:
        note = _per_token_note(fn)
        if note:
            print(f"  {note}")
    return ok


# --------------------------------------------------------------------------------------------------------
# Exercise 2: count_ffn_params(d, d_ff, bias=True).
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
    Mistake("d_ff assumed to be 4 * d",
            "Use the d_ff you are given: many models have d_ff = 4d, but not all (SwiGLU models use about 8/3 d).",
            lambda d, d_ff, bias=True: 8 * d * d + (5 * d if bias else 0)),
    Mistake("W1 counted as d x d and W2 as d_ff x d_ff",
            "W1 maps d numbers to d_ff numbers, so it is d x d_ff; W2 is d_ff x d.",
            lambda d, d_ff, bias=True: d * d + d_ff * d_ff + (d + d_ff if bias else 0)),
]


def _count_cases() -> list[Case]:
    return [
        Case("GPT-2 small, d = 768 -> d_ff = 3072, with biases", {"d": 768, "d_ff": 3072, "bias": True}),
        Case("the original Transformer base, 512 -> 2048, bias=False", {"d": 512, "d_ff": 2048, "bias": False}),
        Case("a small FFN, 3 -> 5, with biases", {"d": 3, "d_ff": 5, "bias": True}),
        Case("a small FFN, 3 -> 5, bias=False", {"d": 3, "d_ff": 5, "bias": False}),
        Case("bias left at its default (True), 4 -> 16", {"d": 4, "d_ff": 16}),
        Case("a narrow hidden layer, 10 -> 7, with biases", {"d": 10, "d_ff": 7, "bias": True}),
    ]


def _count_problem(value: Any, case: Case) -> str | None:
    return int_problem(value, "the number of parameters", "use // rather than /, or int(...)",
                       "a parameter count is an int")


def _bias_signature_problem(fn: Callable) -> str | None:
    """Why fn cannot be called both as count_ffn_params(d, d_ff, bias) and as count_ffn_params(d, d_ff)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a built-in without a signature: let the cases find out
        return None
    try:
        signature.bind(768, 3072, False)
    except TypeError:
        return ("your function takes no third argument, `bias`, so it cannot be asked for the count without "
                "biases. Start it with `def count_ffn_params(d, d_ff, bias=True):` and leave b1 and b2 out of "
                "the count when bias is False.")
    try:
        signature.bind(768, 3072)
    except TypeError:
        return ("your `bias` argument has no default, so count_ffn_params(d, d_ff) cannot be called. Give it "
                "the default True: `def count_ffn_params(d, d_ff, bias=True):`.")
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
    return check_function(
        "count_ffn_params", fn, _count_cases(), _reference_count, _count_problem, _COUNT_MISTAKES,
        compare=lambda got, expected: got == expected, normalize=int, describe=lambda n: f"{n:,}",
        fallback_hint="list the four arrays with their shapes, W1 (d, d_ff), b1 (d_ff,), W2 (d_ff, d), "
                      "b2 (d,), and add up their sizes; leave the biases out when bias is False.")


# --------------------------------------------------------------------------------------------------------
# Exercise 3: ffn_chunked(x, W1, b1, W2, b2, chunk): the same numbers, `chunk` tokens at a time.
# --------------------------------------------------------------------------------------------------------
MEMORY_T = 512  # tokens in the case that measures memory


class _TokenCounter(np.ndarray):
    """W1 as the check hands it to ffn_chunked: the same numbers, and a record of every matrix product it
    takes part in (@, np.matmul, np.dot, W1.dot, np.einsum, ...). A product of W1 with a chunk makes that
    chunk's hidden rows, (rows, d_ff) or (d_ff, rows), so its size divided by d_ff is the number of tokens
    in the chunk. Views of W1 (W1.T, copies) share the record; products come back as ordinary arrays."""

    products: list | None = None         # tokens in each product, in order
    d_ff: int = 1
    weight_shape: tuple = ()             # W1's shape (d, d_ff): only products of W1 or W1.T count

    def __array_finalize__(self, obj):
        for name in ("products", "d_ff", "weight_shape"):
            setattr(self, name, getattr(obj, name, getattr(_TokenCounter, name)))

    def _record(self, result):
        shape = np.shape(result)
        if (self.products is None or self.shape not in (self.weight_shape, self.weight_shape[::-1])
                or not shape or self.d_ff not in (shape[0], shape[-1])):
            return  # not W1 itself, or not a product that makes hidden rows
        self.products.append(np.size(result) // self.d_ff)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "out" in kwargs:
            kwargs["out"] = _plain(kwargs["out"])
        result = getattr(ufunc, method)(*_plain(inputs), **kwargs)
        if ufunc is np.matmul and method == "__call__":
            self._record(result)
        return result

    def __array_function__(self, func, types, args, kwargs):
        result = func(*_plain(args), **_plain(kwargs))
        if func in _PRODUCTS:
            self._record(result)
        return result

    def dot(self, other, out=None):
        result = np.dot(self.view(np.ndarray), _plain(other), out=_plain(out))
        self._record(result)
        return result

    def __repr__(self):  # what the learner would see printing W1: the plain array
        return repr(self.view(np.ndarray))

    def __str__(self):
        return str(self.view(np.ndarray))


_PRODUCTS = {np.dot, np.einsum, np.tensordot, np.inner, np.linalg.multi_dot}


def _plain(value):
    """value with every _TokenCounter in it (also inside tuples, lists and dicts) turned into a plain array."""
    if isinstance(value, _TokenCounter):
        return value.view(np.ndarray)
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass
class _Measured:
    """What the learner's function returned, the most memory it held at once, and the number of tokens in
    each product it took with W1 (empty when it never multiplied by W1 in a way the check can see)."""
    value: Any
    peak: int
    products: list


def _measured(fn: Callable) -> Callable:
    def call(x, W1, b1, W2, b2, chunk):
        watched = W1.view(_TokenCounter)
        watched.products, watched.d_ff, watched.weight_shape = [], W1.shape[1], W1.shape
        value, peak = peak_bytes(fn, x, watched, b1, W2, b2, chunk)
        return _Measured(value, peak, watched.products)
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
        _chunked_case("7 tokens in chunks of 1", 24, T=7, chunk=1),
        _chunked_case("9 tokens in float32, chunks of 4 (float32 in, float32 out)", 25, T=9, chunk=4,
                      dtype=np.float32),
        _chunked_case(f"{MEMORY_T} tokens in chunks of 64, d = 16 -> d_ff = 256 (memory measured)", 26,
                      T=MEMORY_T, chunk=64, d=16, d_ff=256),
    ]


def _chunking_problem(products: list, T: int, chunk: int) -> tuple[str, str, str] | None:
    """(kind, what happened, why and the fix) when the products with W1 did not take the tokens `chunk` at a
    time, each token once; None when they did, or when the check could not see them."""
    if not products or None in products or sum(products) < T:
        return None  # W1 used in a way the check cannot follow (np.asarray(W1), W1.dot): nothing to judge
    expected = [chunk] * (T // chunk) + ([T % chunk] if T % chunk else [])
    if sorted(products) == sorted(expected):
        return None
    ran = (f"gives the right numbers, but its products with W1 took {fmt(products, max_items=10)} tokens "
           f"where chunk = {chunk} asks for {fmt(expected, max_items=10)}")
    if len(products) == 1:
        return "whole", ran, (f"all {T} tokens went through at once, so the hidden layer of the whole sequence "
                              "existed at once. Call the FFN on one slice x[s:s + chunk] at a time, inside the loop")
    windows = [sorted(min(chunk, T - s) for s in range(T)), [chunk] * (T - chunk + 1)]  # start at every token
    if sorted(products) in windows:
        return "overlap", ran, (f"the windows overlap. The loop starts a window at every token (range(0, T) or "
                                f"range(T)), so each token is computed up to {chunk} times: {sum(products)} token "
                                f"rows for {T} tokens. Step by chunk: for s in range(0, T, chunk)")
    if sum(products) > T:
        return "repeat", ran, (f"{sum(products)} token rows for {T} tokens, so some tokens were computed more "
                               "than once. Each token belongs to one chunk, x[s:s + chunk] for s in range(0, T, "
                               "chunk)")
    if len(products) == chunk and max(products) - min(products) <= 1:
        return "split", ran, ("np.array_split(x, chunk) cuts x into chunk pieces, not into pieces of chunk "
                              "tokens. Give it the places to cut, np.array_split(x, range(chunk, T, chunk)), or "
                              "take x[s:s + chunk] for s in range(0, T, chunk)")
    if set(products) == {1}:
        return "tokens", ran, ("one token at a time, whatever chunk is. The numbers are right, but every "
                               "product is a single row, the slow case that chunks of tens of tokens exist to "
                               "avoid. Take chunk tokens per step: x[s:s + chunk] for s in range(0, T, chunk)")
    return "sizes", ran, ("every chunk should hold chunk tokens, and the last one what is left over: "
                          "x[s:s + chunk] for s in range(0, T, chunk)")


def _chunked_problem(measured: _Measured, case: Case, explained: set | None = None) -> str | None:
    """What is wrong with a result of ffn_chunked: its kind or shape; then, for the right numbers, how the
    tokens were chunked (each kind explained in full the first time, `explained` remembers); then memory."""
    x, chunk = case.args["x"], case.args["chunk"]
    T, d_ff = x.shape[0], case.args["W1"].shape[1]
    hints = {}
    if T % chunk and T > chunk:
        left = T % chunk
        missing = f"The last {left} tokens are" if left > 1 else "The last token is"
        hints[(T - left, x.shape[1])] = (f"{missing} missing: the last, shorter chunk was dropped. "
                                         "range(0, T, chunk) starts a chunk at every multiple of chunk, and "
                                         "x[s:s + chunk] stops at the end by itself")
    value = measured.value
    problem = _ffn_array_problem(value, case, hints)
    if problem or not close(value, _reference_chunked(**case.args)):
        return problem  # wrong numbers: the comparison and the known mistakes say more
    found = _chunking_problem(measured.products, T, chunk)
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


def _chunks_leaving_zeros(x, W1, b1, W2, b2, chunk):
    y = np.zeros((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for i in range(x.shape[0] // chunk):                          # full chunks only
        y[i * chunk:(i + 1) * chunk] = ffn(x[i * chunk:(i + 1) * chunk], W1, b1, W2, b2)
    return y


def _chunks_from_index(x, W1, b1, W2, b2, chunk):
    y = np.zeros((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for i, s in enumerate(range(0, x.shape[0], chunk)):
        rows = y[s:s + chunk]
        rows[:] = ffn(x[i:i + chunk], W1, b1, W2, b2)[:len(rows)]  # x sliced from i, not from s
    return y


_CHUNKED_MISTAKES = [
    Mistake("the last, shorter chunk never computed (its rows left at zero)",
            "Loop with `for s in range(0, T, chunk)` and take x[s:s + chunk]: the last slice is simply shorter. "
            "range(T // chunk) chunks stop before the leftover tokens.",
            _chunks_leaving_zeros),
    Mistake("slices started at the chunk number i instead of at i * chunk",
            "Chunk i covers tokens i * chunk up to (i + 1) * chunk; or loop over the starts directly, "
            "`for s in range(0, T, chunk)`.",
            _chunks_from_index),
]


@grader
def check_ffn_chunked(fn) -> bool:
    """Grade `ffn_chunked(x, W1, b1, W2, b2, chunk)`: ffn's numbers, computed `chunk` tokens at a time."""
    if not callable(fn):
        return not_a_function("ffn_chunked", fn)
    explained: set = set()  # kinds of chunking slip already explained in full, for this check only
    return check_function(
        "ffn_chunked", _measured(fn), _chunked_cases(), _reference_chunked,
        lambda measured, case: _chunked_problem(measured, case, explained),
        [Mistake(m.name, m.fix, _measured(m.fn)) for m in _CHUNKED_MISTAKES],  # judged like the learner's
        normalize=lambda measured: measured.value, describe=_describe_rows,
        fallback_hint="make y = np.empty((T, d), dtype=x.dtype), then for s in range(0, T, chunk): "
                      "y[s:s + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2).")
