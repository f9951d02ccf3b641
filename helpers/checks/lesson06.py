"""Checks for lesson 06, the FFN as a key-value memory.

Row-vector convention throughout (x @ W): column k of W1 is unit k's key, row k of W2 is its value.
"""
from __future__ import annotations

import ast
import contextlib
import dis
import inspect
import io
import textwrap
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from helpers import kv_memory
from helpers.checks._core import (Case, Mistake, Observed, Outcome, Report, a_kind, check_function, close,
                                  close_float64, fmt, not_a_function, plain_arrays, run, vector_problem)
from helpers.checks._verdict import failed_attempts, grader, hidden_cases, hidden_rng
from helpers.ffn import relu
from helpers.kv_memory import build_memory
from helpers.kv_memory import ffn_as_sum as _reference_sum
from helpers.kv_memory import top_units as _reference_top

__all__ = ["check_ffn_as_sum", "check_top_units", "check_store_fact"]

THETA = kv_memory.THETA   # the threshold the lesson uses; check_store_fact also tries another value


def _f(a):
    return np.asarray(a, dtype=float)


# --------------------------------------------------------------------------------------------------------
# Exercise 1: ffn_as_sum(x, W1, b1, W2, b2), the FFN as an explicit sum over hidden units
# --------------------------------------------------------------------------------------------------------
# The exercise asks for the sum of the terms h_k u_k, not the matrix product h @ W2 that hides it. The check
# hands the learner's function W2 as a _ProductWatch: the same numbers, and a record of every matrix product
# that W2 takes part in as a whole. A product that keeps one row per unit (np.diag(a) @ W2, einsum "k,kj->kj")
# still builds the terms; one that sums over the units (h @ W2, np.dot(h, W2), einsum "k,kj->j") does not.
# A copy of W2 is still all of W2: np.copy keeps the watch, and a copy that drops it (np.asarray,
# np.ascontiguousarray, np.array, W2 + 0: plain arrays) is known by its numbers when it meets the activations,
# since x, W1 and b1 come in as watches too ("flows", whole = ()), and so does what is computed from them.
# (The clean grading process has no source to read, so the watch must see these by itself: _whole_products.)
_PRODUCTS = {np.dot, np.einsum, np.tensordot, np.inner, np.vdot, np.linalg.multi_dot,
             *(getattr(np, name) for name in ("matvec", "vecmat", "vecdot") if hasattr(np, name))}


class _ProductWatch(np.ndarray):
    whole: tuple = ()                # W2's shape (d_ff, d); () on a flow (x, W1, b1 and what comes of them)
    summed: list | None = None       # the shapes of products that summed over the units
    values: np.ndarray | None = None  # W2's numbers, to know a plain copy of it
    # So that a plain array's method h.dot(W2), which no override sees, still makes its result one of these:
    # __array_finalize__ then meets a new 1-D array of d numbers made from the whole of W2.
    __array_priority__ = 100

    def __array_finalize__(self, obj):
        self.whole = getattr(obj, "whole", ())
        self.summed = getattr(obj, "summed", None)
        self.values = getattr(obj, "values", None)
        if (isinstance(obj, _ProductWatch) and obj.summed is not None and obj.whole
                and obj.shape in (obj.whole, obj.whole[::-1]) and self.base is None and self.ndim == 1
                and self.shape[0] == obj.shape[-1] and self.shape != obj.shape):
            obj.summed.append(self.shape)

    def _shapes(self) -> tuple:
        """W2's shape and its transpose's."""
        shape = self.whole or (self.values.shape if self.values is not None else ())
        return shape, shape[::-1]

    def _all_of_W2(self, operand) -> bool:
        """operand is W2 as a whole: the watch itself (or its transpose, or np.copy of it), or a plain array
        holding W2's numbers (np.asarray(W2), np.ascontiguousarray(W2), W2 + 0)."""
        if isinstance(operand, _ProductWatch):
            return bool(operand.whole) and operand.shape in (operand.whole, operand.whole[::-1])
        return self.values is not None and isinstance(operand, np.ndarray) and any(
            operand.shape == v.shape and np.array_equal(operand, v) for v in (self.values, self.values.T))

    def _note(self, operands, result):
        if self.summed is None:
            return
        if any(self._all_of_W2(o) for o in operands) and np.shape(result) not in self._shapes():
            self.summed.append(np.shape(result))

    def _flowing(self, operands, result, out=False):
        """result as a flow when a flow went into it (so that a product of the activations with a plain copy of
        W2 is seen); else, and for results written into `out`, as it is."""
        if (out or not isinstance(result, np.ndarray) or type(result) is not np.ndarray or not result.ndim
                or not any(isinstance(o, _ProductWatch) and not o.whole and o.summed is not None
                           for o in operands)):
            return result
        return _watched(result, (), self)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = "out" in kwargs
        if out:
            kwargs["out"] = _plain(kwargs["out"])
        result = getattr(ufunc, method)(*_plain(inputs), **kwargs)
        if ufunc is np.matmul and method == "__call__":
            self._note(inputs, result)
        return self._flowing(inputs, result, out)

    def __array_function__(self, func, types, args, kwargs):
        result = func(*_plain(args), **_plain(kwargs))
        flat = [a for arg in args for a in (arg if isinstance(arg, (list, tuple)) else [arg])]
        if func in _PRODUCTS:
            self._note(flat, result)
        if func is np.copy and isinstance(args[0], _ProductWatch) and self._all_of_W2(args[0]):
            return _watched(result, args[0].whole, self)            # a copy of W2 is still all of W2
        return self._flowing(flat, result, "out" in kwargs)

    def dot(self, other, out=None):
        result = np.dot(self.view(np.ndarray), _plain(other), out=_plain(out))
        self._note([self, other], result)
        return self._flowing([self, other], result, out is not None)

    def take(self, *args, **kwargs):     # a row taken out is not a product
        return self.view(np.ndarray).take(*args, **kwargs)

    def __repr__(self):        # what the learner sees when printing W2: the plain array
        return repr(self.view(np.ndarray))

    def __str__(self):
        return str(self.view(np.ndarray))


def _watched(array: np.ndarray, whole: tuple, record: _ProductWatch) -> _ProductWatch:
    """array as a _ProductWatch that writes to `record`'s list: W2 itself (whole, its shape) or a flow (())."""
    view = array.view(_ProductWatch)
    view.whole, view.summed, view.values = whole, record.summed, record.values
    return view


def _plain(value):
    """value with every _ProductWatch in it (also inside tuples, lists and dicts) as a plain array."""
    return plain_arrays(value, _ProductWatch)


# A second witness, for a function that strips the watch (W2 = np.asarray(W2), np.array(W2, dtype=float)):
# its source. A matrix product one of whose operands is all of W2 (the parameter itself, W2.T, or a name
# assigned from such an expression) sums over the units, unless it keeps one row per unit (np.diag(a) @ W2,
# an einsum whose output keeps W2's unit index). W2[k], a row, is the point of the exercise and never counts.
_PRODUCT_NAMES = {"dot", "matmul", "einsum", "tensordot", "inner", "vdot", "multi_dot", "matvec", "vecmat",
                  "vecdot"}
_COPY_NAMES = {"asarray", "array", "asanyarray", "ascontiguousarray", "asfarray", "copy", "astype", "matrix", "view",
               "float64", "float32", "transpose", "conj", "real"}


def _function_node(fn: Callable):
    """The ast node of fn's definition (a def or a lambda), or None when its source cannot be read."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None, ""
    name = getattr(fn, "__name__", "")
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node, source
    lambdas = [node for node in ast.walk(tree) if isinstance(node, ast.Lambda)]
    return (lambdas[0], source) if len(lambdas) == 1 else (None, "")


def _called_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _whole_products(fn: Callable) -> list[str]:
    """The source of each product in fn that multiplies all of its W2 parameter and sums over the units."""
    node, source = _function_node(fn)
    if node is None:
        return []
    params = [a.arg for a in node.args.posonlyargs + node.args.args]
    if len(params) < 4:
        return []
    whole = {params[3]}

    def is_whole(expr) -> bool:
        if isinstance(expr, ast.Name):
            return expr.id in whole
        if isinstance(expr, ast.Attribute) and expr.attr in ("T", "mT", "real"):
            return is_whole(expr.value)
        if isinstance(expr, ast.Call) and _called_name(expr) in _COPY_NAMES:
            func = expr.func
            method = isinstance(func, ast.Attribute) and not (isinstance(func.value, ast.Name)
                                                              and func.value.id in ("np", "numpy"))
            return any(is_whole(arg) for arg in ([func.value] if method else expr.args[:1]))
        return False

    # Names assigned from all of W2, in any order of the statements (a loop may assign after a use).
    changed = True
    while changed:
        changed = False
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assign) and is_whole(sub.value):
                for target in sub.targets:
                    if isinstance(target, ast.Name) and target.id not in whole:
                        whole.add(target.id)
                        changed = True

    def keeps_rows(other) -> bool:
        return isinstance(other, ast.Call) and _called_name(other) in ("diag", "diagflat")

    def einsum_sums(call: ast.Call) -> bool:
        spec = call.args[0] if call.args else None
        if not (isinstance(spec, ast.Constant) and isinstance(spec.value, str)):
            return False                       # not readable here: the watch judges it
        text = spec.value.replace(" ", "")
        inputs, _, output = text.partition("->")
        subscripts = inputs.split(",")
        if not _:                               # implicit mode: the indices that appear once, in order
            letters = "".join(subscripts)
            output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
        for sub_script, arg in zip(subscripts, call.args[1:]):
            if is_whole(arg) and sub_script:
                unit = sub_script[-1] if isinstance(arg, ast.Attribute) and arg.attr in ("T", "mT") \
                    else sub_script[0]
                if unit not in output:
                    return True
        return False

    found = []
    for sub in ast.walk(node):
        hit = False
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.MatMult):
            pair = (sub.left, sub.right)
            hit = any(is_whole(a) and not keeps_rows(b) for a, b in (pair, pair[::-1]))
        elif isinstance(sub, ast.Call) and _called_name(sub) in _PRODUCT_NAMES:
            name = _called_name(sub)
            if name == "einsum":
                hit = einsum_sums(sub)
            else:
                operands = list(sub.args)
                if isinstance(sub.func, ast.Attribute) and name in ("dot", "matmul") and not (
                        isinstance(sub.func.value, ast.Name) and sub.func.value.id in ("np", "numpy")):
                    operands = [sub.func.value] + operands          # h.dot(W2), W2.T.dot(h)
                if name == "multi_dot" and operands and isinstance(operands[0], (ast.List, ast.Tuple)):
                    operands = list(operands[0].elts)
                hit = any(is_whole(a) for a in operands) and not any(keeps_rows(a) for a in operands)
        if hit:
            found.append(ast.get_source_segment(source, sub) or "a product with W2")
    return found


@dataclass(eq=False)
class _SummedWithAProduct:
    """What the learner's function returned, when it took the product of W2 as a whole: the check can then
    tell a right value from a right value reached the way the exercise rules out."""
    value: Any

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.value, dtype=dtype)


def _watching(fn: Callable, in_source: bool = False) -> Callable:
    """fn, called with W2 as a _ProductWatch; its result is wrapped when a product summed over the units
    (or, with in_source, when fn's source shows one: see _whole_products)."""
    def ffn_as_sum(x, W1, b1, W2, b2):
        watched = W2.view(_ProductWatch) if isinstance(W2, np.ndarray) and W2.ndim == 2 else W2
        if isinstance(watched, _ProductWatch):
            watched.whole, watched.summed, watched.values = W2.shape, [], np.array(W2)
            x, W1, b1 = (_watched(v, (), watched) if isinstance(v, np.ndarray) else v for v in (x, W1, b1))
        value = fn(x, W1, b1, watched, b2)
        if in_source or (isinstance(watched, _ProductWatch) and watched.summed):
            return _SummedWithAProduct(_plain(value))
        return _plain(value)
    return ffn_as_sum


def _sum_with(x, W1, b1, W2, b2, key=lambda W1, k: W1[:, k], value=lambda W2, k: W2[k],
              act=lambda z, b: relu(z + b), bias_per_unit=False, out=lambda y: y, use_b2=True, n_units=None):
    """The sum over units with one step swapped for a known slip; with the defaults it is correct."""
    x, W1, b1, W2, b2 = _f(x), _f(W1), _f(b1), _f(W2), _f(b2)
    y = np.zeros(len(x))
    units = range(len(b1)) if n_units is None else n_units(x, W1)
    for k in (range(units) if isinstance(units, int) else units):
        h_k = act(float(key(W1, k) @ x), b1[k])
        y = y + h_k * value(W2, k) + (b2 if bias_per_unit else 0.0)
    return out(y + (b2 if use_b2 and not bias_per_unit else 0.0))


_WHOLE_PRODUCT_FIX = ("The numbers are right, but the exercise asks for the sum the product hides: add the "
                      "terms h_k * W2[k] one unit at a time (a loop), or build them as the rows of a (d_ff, d) "
                      "array and sum those rows.")

_SUM_MISTAKES = [
    Mistake("W2 multiplied as a whole (h @ W2), so the sum over units is never written out",
            _WHOLE_PRODUCT_FIX, lambda x, W1, b1, W2, b2: _SummedWithAProduct(_reference_sum(
                _f(x), _f(W1), _f(b1), _f(W2), _f(b2)))),
    Mistake("looped over d units instead of d_ff",
            "The layer has d_ff hidden units, one per column of W1: loop over range(W1.shape[1]) (or len(b1)). "
            "len(x) and W1.shape[0] are d, the token's width, so units d to d_ff - 1 were never added.",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, n_units=lambda x, W1: len(x))),
    Mistake("keys read from the rows of W1",
            "With x @ W1, W1 has shape (d, d_ff) and unit k's key is column k, W1[:, k] (it meets x in the "
            "dot product). Rows are keys only in the W1 @ x convention, where W1 is (d_ff, d).",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, key=lambda W, k: W[k])),
    Mistake("values read from the columns of W2",
            "W2 has shape (d_ff, d): unit k's value is row k, W2[k], a vector of d numbers.",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, value=lambda W, k: W[:, k])),
    Mistake("b2 left out", "After the sum over units, add the output bias b2 once.",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, use_b2=False)),
    Mistake("b2 added once per unit instead of once",
            "b2 belongs outside the sum: start from y = b2.copy() (or add it after the loop), not inside it.",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, bias_per_unit=True)),
    Mistake("ReLU not applied, so units that do not fire write their value with a negative weight",
            "h_k = relu(x . w_k + b1[k]): a unit whose pre-activation is negative has h_k = 0 and writes nothing.",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, act=lambda z, b: z + b)),
    Mistake("b1 left out", "The pre-activation is x . w_k + b1[k]: add unit k's bias before the ReLU.",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, act=lambda z, b: relu(z))),
    Mistake("b1 added after the ReLU", "Add b1[k] before the ReLU: h_k = relu(x . w_k + b1[k]).",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, act=lambda z, b: relu(z) + b)),
    Mistake("ReLU applied to the output as well",
            "The ReLU acts on each unit's pre-activation only; the output stays signed.",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, out=relu)),
    Mistake("a unit left out: the loop starts at 1", "range(W1.shape[1]) starts at unit 0; range(1, ...) skips it.",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, n_units=lambda x, W1: range(1, W1.shape[1]))),
    Mistake("a unit left out: the loop stops one early",
            "range(n) already stops before n: range(W1.shape[1]) visits every unit, range(W1.shape[1] - 1) "
            "misses the last.",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, n_units=lambda x, W1: W1.shape[1] - 1)),
    Mistake("the absolute value |z| used instead of relu(z)",
            "ReLU keeps a positive pre-activation and turns a negative one into 0; abs turns it positive.",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, act=lambda z, b: abs(z + b))),
    Mistake("a leaky ReLU (slope 0.01): units below zero still write a small negative multiple of their value",
            "This FFN's activation is ReLU, max(0, z): a unit whose pre-activation is negative has h_k = 0 "
            "exactly and writes nothing (a leaky ReLU keeps a small slope there).",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2,
                                                act=lambda z, b: z + b if z + b > 0 else 0.01 * (z + b))),
    Mistake("b1 subtracted instead of added",
            "The pre-activation is x . w_k + b1[k], with a plus: the bias is added (a negative b1[k] already "
            "makes it a threshold).",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, act=lambda z, b: relu(z - b))),
]



def _sum_cases():
    rng = np.random.default_rng(6)
    W1_square = np.round(rng.normal(size=(3, 3)), 1)
    W1_square[0, 1], W1_square[1, 0] = 1.2, -0.7          # clearly not symmetric
    wide = np.random.default_rng(60)                      # its own stream, so the other cases stay as they were
    x_wide = np.array([0.5, -1.0, 1.5])
    W1_wide = np.round(wide.normal(size=(3, 8)), 1)
    W2_wide = np.round(wide.normal(size=(8, 3)), 1)
    z_wide = np.array([0.6, -0.4, 1.1, 0.8, -0.7, 1.5, 0.4, 0.9])   # the pre-activations: units 1 and 4 silent
    raw = np.random.default_rng(61)                       # unrounded numbers: a rounded answer shows here
    return [
        Case("the 2 x 2 hand trace (x = [1, -1], W2 = I)",
             {"x": np.array([1.0, -1.0]), "W1": np.array([[1.0, 1.0], [1.0, -1.0]]), "b1": np.zeros(2),
              "W2": np.eye(2), "b2": np.zeros(2)}),
        Case("a 3 -> 3 -> 3 FFN (square, W1 not symmetric)",
             {"x": np.array([1.0, -0.5, 2.0]), "W1": W1_square, "b1": np.array([0.4, -0.3, 0.2]),
              "W2": np.round(rng.normal(size=(3, 3)), 1), "b2": np.array([0.5, -1.0, 0.25])}),
        Case("a 4 -> 6 -> 4 FFN",
             {"x": np.round(rng.normal(size=4), 1), "W1": np.round(rng.normal(size=(4, 6)), 1),
              "b1": np.array([0.3, -0.2, 0.5, 0.0, -0.4, 0.1]), "W2": np.round(rng.normal(size=(6, 4)), 1),
              "b2": np.array([0.1, -0.2, 0.3, -0.4])}),
        # Units with index >= d fire and write here, so a loop over range(d) instead of range(d_ff) shows.
        Case("a 3 -> 8 -> 3 FFN in which units 3 to 7 fire too",
             {"x": x_wide, "W1": W1_wide, "b1": np.round(z_wide - x_wide @ W1_wide, 2),
              "W2": W2_wide, "b2": np.array([0.2, 0.0, -0.1])}),
        Case("a 2 -> 5 -> 2 FFN in which no unit fires",
             {"x": np.array([1.0, 1.0]), "W1": -np.abs(np.round(rng.normal(size=(2, 5)), 1)) - 0.1,
              "b1": np.full(5, -0.5), "W2": np.round(rng.normal(size=(5, 2)), 1), "b2": np.array([0.7, -0.3])}),
        _barely_firing(raw),
    ]


def _barely_firing(rng, name="a 5 -> 7 -> 5 FFN with unrounded weights, one unit barely firing (h = 2e-6)",
                   d=5, d_ff=7, unit=2):
    """Unrounded weights, and one unit set to fire with h = 2e-6: an answer that skips small h shows here."""
    x, W1, b1 = rng.normal(size=d), rng.normal(size=(d, d_ff)), rng.normal(size=d_ff)
    b1[unit] = 2e-6 - x @ W1[:, unit]
    return Case(name, {"x": x, "W1": W1, "b1": b1, "W2": rng.normal(size=(d_ff, d)), "b2": rng.normal(size=d)})


def _random_ffn(rng, d, d_ff):
    return {"x": rng.normal(size=d), "W1": rng.normal(size=(d, d_ff)), "b1": rng.normal(size=d_ff),
            "W2": rng.normal(size=(d_ff, d)), "b2": rng.normal(size=d)}


def _units_past_d_write(args) -> bool:
    """At least two units with index >= d fire clearly (a loop over range(d) misses them) and at least one
    unit is silent (an answer without the ReLU shows)."""
    a = np.maximum(args["x"] @ args["W1"] + args["b1"], 0.0)
    return int(np.sum(a[len(args["x"]):] > 0.1)) >= 2 and bool(np.any(a == 0.0))


def _sum_hidden():
    """Drawn when the work is graded (hidden_rng: fresh from the grading secret each run): FFNs of random
    widths with unrounded weights, one redrawn until units past index d write and some unit is silent, the
    other with one unit barely firing."""
    rng = hidden_rng(62)
    d, d2 = int(rng.integers(3, 8)), int(rng.integers(3, 8))
    d_ff, d_ff2 = int(rng.integers(d + 2, 2 * d + 3)), int(rng.integers(d2 + 1, 11))
    for _ in range(100):                                   # almost always the first draw
        args = _random_ffn(rng, d, d_ff)
        if _units_past_d_write(args):
            break
    return [Case("hidden: a random FFN with unrounded weights (d from 3 to 7, d_ff from d + 2 to 2d + 2), units "
                 "past index d writing and some unit silent", args),
            _barely_firing(rng, "hidden: a random FFN with unrounded weights (d from 3 to 7, d_ff from d + 1 to "
                                "10), one unit barely firing (h = 2e-6)", d2, d_ff2, int(rng.integers(0, d_ff2)))]


def _rounded_to(value, expected) -> int | None:
    """The number of decimals `value` was rounded to, when it is `expected` rounded (and not just expected)."""
    value, expected = np.asarray(value, dtype=float), np.asarray(expected, dtype=float)
    if value.shape != expected.shape or close(value, expected):
        return None
    for n in range(7):
        scaled = value * 10.0 ** n
        if (np.allclose(scaled, np.round(scaled), rtol=0, atol=1e-6)
                and np.all(np.abs(value - expected) <= 0.5 * 10.0 ** -n + 1e-9)):
            return n
    return None


def _sum_problem(value, case, rule_broken=False, in_source=()):
    """What is wrong with the kind of value returned; with rule_broken (every case's value was right, by
    a product with W2 as a whole), that rule, where the value itself is fine. in_source: the products with
    all of W2 that the function's source shows (when the watch was stripped, the only witness)."""
    d, d_ff = len(case.args["x"]), len(case.args["b1"])
    if isinstance(value, _SummedWithAProduct):
        problem = _sum_problem(value.value, case)
        if problem is None and rule_broken:
            where = (f" (`{in_source[0]}`: a copy such as np.asarray(W2) is still all of W2)" if in_source
                     else " (h @ W2, np.dot or an einsum over k)")
            return (f"gives the right numbers by multiplying W2 as a whole matrix{where}; the exercise asks for "
                    "the sum over units: multiply each unit's h_k by its row of W2, W2[k], and add the terms")
        return problem
    hints = {d_ff: "That is one number per hidden unit (the activations?); the output has d numbers, "
                   "the sum of the vectors h_k u_k plus b2."} if d_ff != d else {}
    problem = vector_problem(value, d, hints)
    if problem is None:
        n = _rounded_to(value, _reference_sum(*(_f(v) for v in case.args.values())))
        if n is not None:
            return (f"returned the output rounded to {n} decimal{'s' if n != 1 else ''}; return the exact sum "
                    "and round only when you print it (the case with unrounded weights shows the difference)")
    return problem


def _sum_values(value):
    value = value.value if isinstance(value, _SummedWithAProduct) else value
    return [float(e) for e in (value.tolist() if isinstance(value, np.ndarray) else value)]


@dataclass
class _Survey:
    """What fn does on the cases, run quietly before the graded run."""
    right: bool              # every case's numbers right (whatever else is wrong)
    by_product: bool         # a product with W2 as a whole in at least one case
    mutated: list[str]       # the inputs some case changed in place

    @property
    def only_by_a_product(self) -> bool:
        """The rule, not a wrong value, is the thing to report."""
        return self.right and self.by_product


def _survey(fn, cases) -> _Survey:
    right, by_product, mutated = True, False, []
    with contextlib.redirect_stdout(io.StringIO()):
        for case in cases:
            outcome = run(fn, case.args)
            if outcome.raised:
                right = False
                continue
            value = outcome.value
            by_product = by_product or isinstance(value, _SummedWithAProduct)
            mutated += [name for name in outcome.mutated if name not in mutated]
            plain = value.value if isinstance(value, _SummedWithAProduct) else value
            if _sum_problem(plain, case) is not None or \
                    not close(_sum_values(plain), _reference_sum(*(_f(v) for v in case.args.values()))):
                right = False
    return _Survey(right, by_product, mutated)


def _in_place(names: list[str]) -> Mistake:
    """The mistake of a function whose numbers are right but which changed its inputs: named as that, not as
    a slip in the computation (its numbers match the right ones, and so would any mutant's that is right)."""
    def changes(*args):
        """The right numbers, and the inputs `names` changed in place, as the learner's function changes them."""
        y = _reference_sum(*(_f(v) for v in args))
        for name, value in zip(("x", "W1", "b1", "W2", "b2"), args):
            if name == "b2" and name in names and isinstance(value, np.ndarray):
                value[...] = y             # `y = b2; y += ...`: b2 ends as the output (as it was if no unit fires)
            elif name in names and isinstance(value, np.ndarray):
                value += 1.0
        return y

    if "b2" in names:
        return Mistake("b2 changed in place: `y = b2` makes y a second name for the caller's b2, so `y += ...` "
                       "writes into it",
                       "Start from a copy, y = b2.copy(), or add with y = y + ... (which builds a new array each "
                       "time) instead of y += .... The numbers are right; only the caller's b2 was changed.", changes)
    listed = ", ".join(f"`{name}`" for name in names)
    return Mistake(f"the input {listed} changed in place",
                   "The numbers are right, but the caller's arrays must stay as they were: compute into new "
                   "arrays (h_k * W2[k] is a new array; W2[k] *= h_k changes W2 itself).", changes)


@grader
def check_ffn_as_sum(fn) -> bool:
    """Grade `ffn_as_sum(x, W1, b1, W2, b2)`: FFN(x) for one token, as the sum of h_k u_k over units, + b2,
    without multiplying W2 as a whole."""
    if not callable(fn):
        return not_a_function("ffn_as_sum", fn)
    in_source = _whole_products(fn)
    watched, cases = _watching(fn, bool(in_source)), _sum_cases()
    survey = _survey(watched, cases)
    rule_broken = survey.only_by_a_product
    # The whole-product mistake gives the right numbers, so it would match any right numbers: offer it only
    # when a product with W2 as a whole was seen; right numbers with a changed input are named as that.
    mistakes = [m for m in _SUM_MISTAKES if survey.by_product or m is not _SUM_MISTAKES[0]]
    if survey.right and survey.mutated and not survey.by_product:
        mistakes = [_in_place(survey.mutated)] + mistakes
    return check_function(
        "ffn_as_sum", watched, cases, _reference_sum,
        lambda value, case: _sum_problem(value, case, rule_broken, in_source), mistakes,
        normalize=_sum_values, hidden=_sum_hidden,
        compare=close_float64,
        fallback_hint="print your h_k for the first failing case beside relu(x @ W1 + b1) computed in one "
                      "line; then check which slice of W2 each unit writes and that b2 is added exactly once.")


# --------------------------------------------------------------------------------------------------------
# Exercise 2: top_units(x, W1, b1, W2, k), the k units that write the most, largest first
# --------------------------------------------------------------------------------------------------------
def _rank(scores, k, ascending=False):
    order = np.argsort(_f(scores) if ascending else -_f(scores), kind="stable")
    return [int(i) for i in order[:k]]


def _acts(x, W1, b1):
    return relu(_f(x) @ _f(W1) + _f(b1))


def _sizes(x, W1, b1, W2):
    return np.linalg.norm(_acts(x, W1, b1)[:, None] * _f(W2), axis=1)


def _smallest_first(x, W1, b1, W2, k):
    # Ranked here, not by _reference_top (nor below): run as a learner's function, that calls kv.contributions.
    return _rank(_sizes(x, W1, b1, W2), k)[::-1]


_TOP_MISTAKES = [
    Mistake("sorted ascending, so these are the units that write the least",
            "Sort the sizes from largest to smallest: np.argsort(-sizes), or sorted(..., reverse=True).",
            lambda x, W1, b1, W2, k: _rank(_sizes(x, W1, b1, W2), k, True)),
    Mistake("the right units, listed smallest first",
            "Return them largest first: the first index should be the unit whose h_j u_j is longest.",
            _smallest_first),
    Mistake("ranked by the activation h_j alone",
            "A unit that fires hard can still write a short vector. Rank by the size of what it writes, "
            "||h_j u_j|| = h_j ||u_j||, with u_j = W2[j].",
            lambda x, W1, b1, W2, k: _rank(_acts(x, W1, b1), k)),
    Mistake("ranked by the length of the value ||u_j|| alone, ignoring how hard each unit fires",
            "Scale each value by its activation: the contribution is h_j u_j, and a silent unit writes nothing.",
            lambda x, W1, b1, W2, k: _rank(np.linalg.norm(_f(W2), axis=1), k)),
    Mistake("ranked by the size of the pre-activation |x . w_j + b1_j|, before the ReLU",
            "A unit with a large negative pre-activation is silenced by the ReLU and writes nothing: "
            "apply the ReLU first, h_j = relu(x . w_j + b1_j).",
            lambda x, W1, b1, W2, k: _rank(np.abs(_f(x) @ _f(W1) + _f(b1)), k)),
    Mistake("ranked by the sum of h_j u_j's coordinates instead of its length",
            "Coordinates of both signs cancel in a sum, so a long vector can sum to almost 0. The size of a "
            "vector is its length, np.linalg.norm(..., axis=1).",
            lambda x, W1, b1, W2, k: _rank((_acts(x, W1, b1)[:, None] * _f(W2)).sum(axis=1), k)),
    Mistake("keys read from the rows of W1",
            "With x @ W1, unit j's key is column j of W1 (W1 has shape (d, d_ff)): h = relu(x @ W1 + b1).",
            lambda x, W1, b1, W2, k: _rank(np.linalg.norm(relu(_f(W1) @ _f(x) + _f(b1))[:, None] * _f(W2),
                                                           axis=1), k)),
    Mistake("values read from the columns of W2",
            "Unit j's value is row j of W2 (W2 has shape (d_ff, d)), so its contribution is h[j] * W2[j].",
            lambda x, W1, b1, W2, k: _rank(np.linalg.norm(_acts(x, W1, b1)[None, :] * _f(W2), axis=0), k)),
    Mistake("norm taken over the wrong axis (axis=0): one length per output coordinate, not one per unit",
            "The contributions h_j u_j are the rows of h[:, None] * W2, shape (d_ff, d): take each row's length "
            "with np.linalg.norm(..., axis=1). axis=0 gives d numbers, so the indices ranked were coordinates.",
            lambda x, W1, b1, W2, k: _rank(np.linalg.norm(_acts(x, W1, b1)[:, None] * _f(W2), axis=0), k)),
    Mistake("the length measured with the sum of absolute values (L1), not the Euclidean norm",
            "The length of h_j u_j is its Euclidean norm, the square root of the sum of its squared "
            "coordinates: np.linalg.norm(..., axis=1) with its default ord. The sum of absolute values "
            "(ord=1) ranks a vector spread over many coordinates above a longer one that points along few.",
            lambda x, W1, b1, W2, k: _rank(np.abs(_acts(x, W1, b1)[:, None] * _f(W2)).sum(axis=1), k)),
    Mistake("the length measured with the largest coordinate (the max norm), not the Euclidean norm",
            "The length of h_j u_j is its Euclidean norm, the square root of the sum of its squared "
            "coordinates: np.linalg.norm(..., axis=1) with its default ord. The largest coordinate "
            "(ord=np.inf, or np.abs(...).max) ignores every other coordinate.",
            lambda x, W1, b1, W2, k: _rank(np.abs(_acts(x, W1, b1)[:, None] * _f(W2)).max(axis=1), k)),
    Mistake("counting units from 1", "Python counts from 0: the first hidden unit is unit 0.",
            lambda x, W1, b1, W2, k: [j + 1 for j in _rank(_sizes(x, W1, b1, W2), k)]),
    Mistake("the largest unit skipped: the slice starts at 1",
            "np.argsort(-sizes)[0] is the largest contribution itself: take the first k positions, [:k]; "
            "[1:k + 1] drops the top unit and adds the (k + 1)-th.",
            lambda x, W1, b1, W2, k: _rank(_sizes(x, W1, b1, W2), k + 1)[1:]),
    Mistake("ranked by |x . w_j + b1_j| * ||u_j||: the pre-activation's size, before the ReLU, not h_j",
            "A unit with a large negative pre-activation is silenced by the ReLU and writes nothing, however "
            "long its value: scale ||u_j|| by the activation h_j = relu(x . w_j + b1_j), not by |z_j|.",
            lambda x, W1, b1, W2, k: _rank(np.abs(_f(x) @ _f(W1) + _f(b1)) * np.linalg.norm(_f(W2), axis=1), k)),
    Mistake("b1 left out of the activations",
            "h_j = relu(x @ W1[:, j] + b1[j]): each unit's bias moves its threshold, and so which units fire "
            "and how hard.",
            lambda x, W1, b1, W2, k: _rank(np.linalg.norm(relu(_f(x) @ _f(W1))[:, None] * _f(W2), axis=1), k)),
]


def _top_case(name, rng, x, z, value_lengths, k):
    """A case with chosen pre-activations z = x @ W1 + b1 and chosen value lengths ||u_j||, so that ranking
    by the contribution, by h_j, by ||u_j|| and by |z_j| all give different units."""
    x, z, value_lengths = _f(x), _f(z), _f(value_lengths)
    W1 = np.round(rng.normal(size=(len(x), len(z))), 2)                       # (d, d_ff)
    directions = rng.normal(size=(len(z), len(x)))
    W2 = directions / np.linalg.norm(directions, axis=1, keepdims=True) * value_lengths[:, None]
    return Case(name, {"x": x, "W1": W1, "b1": z - x @ W1, "W2": W2, "k": k})


def _shaped_case(name, rng, x, z, W2, k):
    """A case with chosen pre-activations z and chosen values (the rows of W2), for values whose shapes
    matter: one along a single axis, others spread over every coordinate."""
    x = _f(x)
    W1 = np.round(rng.normal(size=(len(x), len(z))), 2)                       # (d, d_ff)
    return Case(name, {"x": x, "W1": W1, "b1": _f(z) - x @ W1, "W2": _f(W2), "k": k})


def _top_cases():
    rng = np.random.default_rng(16)
    return [
        # Square first: reading W1 by rows or W2 by columns runs here (and gives other units), while on the
        # other cases it raises. Every unit fires, so "smallest first" meets no ties among silent units.
        _top_case("a square 4 -> 4 -> 4 FFN in which every unit fires, top 2", rng,
                  [0.6, -0.4, 1.0, 0.2], [2.0, 0.5, 3.0, 1.2], [0.5, 3.0, 0.8, 1.5], 2),
        _top_case("a 3 -> 5 -> 3 FFN with one silent unit, top 2", rng,
                  [0.5, -1.0, 0.8], [1.0, 2.5, -3.0, 0.8, 1.6], [2.0, 0.6, 1.0, 1.5, 1.2], 2),
        _top_case("a 4 -> 8 -> 4 FFN with three silent units, top 3", rng,
                  [1.0, 0.3, -0.7, 0.5], [-4.0, 0.9, 2.0, -0.5, 1.5, 0.3, -1.0, 1.1],
                  [1.0, 2.5, 0.7, 2.0, 1.2, 4.0, 1.5, 0.9], 3),
        _top_case("a 3 -> 6 -> 3 FFN, top 1", rng,
                  [1.0, 0.5, -0.5], [0.5, 1.2, -2.0, 0.7, 0.2, 1.0], [1.0, 0.5, 3.0, 1.4, 2.0, 0.8], 1),
        # Lengths measured another way rank these values differently: the Euclidean norm gives units 2, 0;
        # the sum of absolute values (L1) 2, 1; the largest coordinate (max norm) 0, 3. No two activations tie,
        # so a ranking by h_j alone is the same however it breaks ties (np.argsort(a)[::-1] or argsort(-a)).
        _shaped_case("a 3 -> 6 -> 3 FFN whose values differ in shape (one along an axis, others spread), top 2",
                     np.random.default_rng(18), [0.7, -0.2, 0.4], [1.0, 0.95, 0.9, 1.1, -0.6, 0.5],
                     [[1.9, 0.0, 0.0], [1.0, -1.0, 1.0], [1.4, 1.4, 1.1], [0.0, 1.6, 0.3], [2.0, 2.0, 2.0],
                      [0.4, -0.3, 0.2]], 2),
    ]


def _top_traps(case) -> bool:
    """What the hidden case must show, whatever its draw: more units fire than k; the k + 1 longest
    contributions are clear of each other (no near-tie for a right answer to break another way); ranking by
    h_j, by ||u_j|| or by |z_j| picks other units; and the L1 length picks the same units in another order than
    largest or smallest first (so that a list sorted by the wrong length is told which pair is out of order)."""
    x, W1, b1, W2, k = (case.args[n] for n in ("x", "W1", "b1", "W2", "k"))
    z = x @ W1 + b1
    a = np.maximum(z, 0.0)
    terms = a[:, None] * W2
    sizes = np.linalg.norm(terms, axis=1)
    right = _rank(sizes, k)
    longest = np.sort(sizes)[::-1][:k + 1]
    l1 = _rank(np.abs(terms).sum(axis=1), k)
    return (int(np.sum(a > 0)) > k and bool(np.all(-np.diff(longest) > 0.05))
            and all(set(_rank(other, k)) != set(right) for other in (a, np.linalg.norm(W2, axis=1), np.abs(z)))
            and set(l1) == set(right) and l1 not in (right, right[::-1]))


def _top_hidden():
    """Drawn when the work is graded (hidden_rng): an FFN of random widths, k and silent units, redrawn until
    _top_traps holds (about one draw in ten does; k is 3 or 4, since with 2 the only other order is the reverse)."""
    rng = hidden_rng(17)
    for _ in range(1000):
        d = int(rng.integers(3, 7))
        d_ff = int(rng.integers(d + 4, 12))
        k = int(rng.integers(3, min(4, d_ff - 4) + 1))
        silent = int(rng.integers(2, d_ff - k))            # leaves at least k + 1 units firing
        z = np.concatenate([rng.uniform(-2.5, -0.2, silent), rng.uniform(0.2, 2.5, d_ff - silent)])
        rng.shuffle(z)
        case = _top_case("hidden: a random FFN with silent units (d from 3 to 6, d_ff from d + 4 to 11), the top 3 "
                         "or top 4", rng, np.round(rng.normal(size=d), 1), z,
                         rng.uniform(0.5, 3.5, d_ff), k)
        if _top_traps(case):
            break
    return [case]


def _units_problem(value, case):
    k, d_ff = case.args["k"], len(case.args["b1"])
    if value is None:
        return "returned None. Did you forget the `return` statement?"
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            return f"returned an array of shape {value.shape}; return a flat list of {k} unit indices"
        value = value.tolist()
    if isinstance(value, (set, dict)):
        return f"returned {a_kind(value)}, which has no order; return a list, largest first"
    if not isinstance(value, (list, tuple)):
        return f"returned {a_kind(value)}; return a list of {k} unit indices such as [4, 0]"
    if any(isinstance(v, (float, np.floating)) and not float(v).is_integer() for v in value):
        return ("returned numbers that are not whole, such as the sizes themselves; return the indices j "
                "of the units (np.argsort gives indices)")
    if any(isinstance(v, (float, np.floating)) for v in value):
        return (f"returned the indices as floats (the first is {float(value[0])!r}); an index must be an int, "
                "since a float "
                "cannot index anything (W2[4.0] raises IndexError). np.argsort returns ints; if you filled "
                "np.zeros(k), give it dtype=int, or build a list")
    if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) for v in value):
        return f"returned {fmt(value)}; return a list of {k} unit indices such as [4, 0]"
    if len(value) != k:
        if len(value) == d_ff:
            return (f"returned all {d_ff} units; keep only the first k = {k} of them (the k largest), "
                    "largest first")
        return f"returned {len(value)} indices; expected k = {k}"
    if len(set(int(v) for v in value)) != len(value):
        return f"returned {fmt(value)}, which lists a unit twice"
    if any(not 0 <= int(v) < d_ff for v in value):
        hint = " (did you count from 1?)" if max(int(v) for v in value) == d_ff else ""
        return f"returned {fmt(value)}; unit indices run from 0 to {d_ff - 1}{hint}"
    args = [_f(case.args[n]) for n in ("x", "W1", "b1", "W2")]
    right = _reference_top(*args, k)
    got = [int(v) for v in value]
    if sorted(got) == sorted(right) and got not in (right, right[::-1]):
        # Only the order is wrong: either no sort at all, or a sort by another key. Say which pair is out of
        # order by the true lengths, so that both learners can see it.
        sizes = _sizes(*args)
        before, after = next((i, j) for i, j in zip(got, got[1:]) if sizes[j] > sizes[i])
        return Observed(f"returned the right units in another order, {fmt(got)}: unit {before} comes before unit "
                f"{after}, though ||h_j u_j|| is {sizes[after]:.3g} for unit {after} and {sizes[before]:.3g} "
                f"for unit {before}. List them by that Euclidean length, largest first (if you sorted, check "
                "the key you sorted by; np.argpartition and sets keep no order)")
    return None


@grader
def check_top_units(fn) -> bool:
    """Grade `top_units(x, W1, b1, W2, k)`: the k units with the largest ||h_j u_j||, largest first, as ints."""
    return check_function(
        "top_units", fn, _top_cases(), _reference_top, _units_problem, _TOP_MISTAKES,
        compare=lambda got, expected: list(got) == list(expected),
        normalize=lambda v: [int(e) for e in (v.tolist() if isinstance(v, np.ndarray) else v)],
        hidden=_top_hidden,
        fallback_hint="print one size per unit, ||h_j u_j||, for the first failing case, and check that your "
                      "indices point at the largest sizes, largest first.")


# --------------------------------------------------------------------------------------------------------
# Exercise 3: store_fact(W1, b1, W2, key, value), one more unit that stores key -> value
# --------------------------------------------------------------------------------------------------------
# The text says to use the threshold kv.THETA. So that a threshold written out as 0.5 (or any other number)
# cannot pass, one case runs with kv_memory.THETA set to another value, and every case asks the new unit
# about two probe queries near its key: one whose cosine passes the threshold (the unit must write
# (cos - THETA) / (1 - THETA) times its value, as every unit built like the others does) and one just below.
OTHER_THETA = 0.3


@contextlib.contextmanager
def _threshold(theta: float):
    """kv_memory.THETA set to theta while the block runs. The learner's own names are left alone: a THETA or
    theta set outside the function (`from helpers.kv_memory import THETA`, `THETA = 0.5`, the lesson's
    `theta = kv.THETA`) keeps the value it had when that line ran, which is the slip this case shows."""
    saved = kv_memory.THETA
    kv_memory.THETA = theta
    try:
        yield
    finally:
        kv_memory.THETA = saved


def _code_objects(code):
    yield code
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            yield from _code_objects(const)


def _frozen_thresholds(fn: Any) -> list[str]:
    """The names through which fn reads the lesson's threshold as a value fixed before it runs: globals it
    reads (also inside its lambdas and comprehensions) that hold the number THETA, and parameters whose
    default is that number (theta=kv.THETA is evaluated once, when `def` runs)."""
    code, names = getattr(fn, "__code__", None), getattr(fn, "__globals__", None)
    if code is None or not isinstance(names, dict):
        return []
    found = []

    def is_theta(value):
        return (isinstance(value, (int, float, np.floating)) and not isinstance(value, (bool, np.bool_))
                and float(value) == THETA)
    for inner in _code_objects(code):
        for instruction in dis.get_instructions(inner):
            if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                name = instruction.argval
                if name in names and is_theta(names[name]) and f"`{name}`" not in found:
                    found.append(f"`{name}`")
    defaults = getattr(fn, "__defaults__", None) or ()
    params = code.co_varnames[:code.co_argcount]
    for name, value in zip(params[len(params) - len(defaults):], defaults):
        if is_theta(value):
            found.append(f"`{name}={fmt(value)}`")
    return found


def _append(W1, b1, W2, column, bias, row):
    return (np.column_stack([_f(W1), column]), np.append(_f(b1), bias), np.vstack([_f(W2), row]))


def _scale():
    return 1 / (1 - kv_memory.THETA)


# A design exercise: the learner works out the unit's scale. A first failure names the slip and the direction
# of the fix in words; the column and bias themselves are shown only after a second failed attempt in this
# kernel, or on request (check_store_fact(store_fact, reveal=True)).
_STORE_MISTAKES = [
    Mistake("key and value swapped",
            "The key goes into W1 (a new column: what the unit looks for) and the value into W2 (a new row: "
            "what it writes).",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(value) * _scale(),
                                                   -kv_memory.THETA * _scale(), _f(key))),
    Mistake("no threshold: the new unit's bias is 0, so it also fires for old keys that point partly its way",
            "Give the unit a negative bias, so that it stays silent up to cosine kv.THETA, and scale its column "
            "and bias so that it fires with h = 1 on its own key, as build_memory's units do.",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(key), 0.0, _f(value))),
    Mistake("the column scaled, but no threshold (bias 0)",
            "Without a negative bias the unit fires for every key that points partly its way, and on its own key "
            "it fires above 1. Add the threshold as a bias, scaled by the same number as the column.",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(key) * _scale(), 0.0, _f(value))),
    Mistake("the threshold with the wrong sign, so the new unit fires for every key",
            "The bias must be negative, so that weak matches fall below zero and the ReLU silences them.",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(key) * _scale(), kv_memory.THETA * _scale(),
                                                   _f(value))),
    Mistake("the unit not rescaled: on its own key it fires with h = 1 - THETA, so it writes a shortened value",
            "That is the plain unit, column key and bias -THETA. Multiply its column and its bias by the one "
            "positive number that makes h = 1 on its own key (cosine 1); the zero at cosine THETA stays where "
            "it is.",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(key), -kv_memory.THETA, _f(value))),
    Mistake("the bias not scaled like the column",
            "Multiply the bias -THETA by the same number as the column, so that the unit still switches on "
            "exactly where the cosine passes THETA.",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(key) * _scale(), -kv_memory.THETA,
                                                   _f(value))),
    Mistake("the column not scaled like the bias",
            "Multiply the column (the key) by the same number as the bias: scaled alone, the bias moves the "
            "threshold, here so far that the unit barely fires.",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(key), -kv_memory.THETA * _scale(),
                                                   _f(value))),
    Mistake("the scale worked out as 1 / THETA, which is right only when THETA = 0.5",
            "At THETA = 0.5 the numbers 1 / THETA and the right scale coincide. Work the scale out at any "
            "threshold: the unit is h = s * relu(cos - THETA), and it must be 1 where the cosine is 1.",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(key) / kv_memory.THETA, -1.0, _f(value))),
    Mistake("the threshold written as 0.5 instead of read from kv.THETA",
            f"Read the threshold from kv.THETA inside your function (theta = kv.THETA): in one case the "
            f"check sets kv.THETA to {OTHER_THETA}, and your unit kept the old 0.5.",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(key) / 0.5, -1.0, _f(value))),
]

_STORE_ANSWER = ("the new unit's column is key / (1 - THETA), its bias -THETA / (1 - THETA) and its row of W2 the "
                 "value, with THETA = kv.THETA read inside your function: then h = relu(cos - THETA) / (1 - THETA), "
                 "0 up to the threshold and 1 on the key itself.")


@dataclass
class _StoreCase:
    case: Case
    theta: float            # kv_memory.THETA while this case runs
    queries: np.ndarray     # the old keys, then the new key
    answers: np.ndarray     # what the memory must return for each: their values
    probes: np.ndarray      # (2, d): cosine `cosines` with the new key, orthogonal to everything else
    cosines: tuple


def _orthonormal(n, d, rng):
    q, _ = np.linalg.qr(rng.normal(size=(d, n)))
    return q.T                                             # (n, d), orthonormal rows


def _store_case(name, seed, d, n, theta=THETA, lean=0.3) -> _StoreCase:
    """A memory built by build_memory, with a new fact whose key leans towards one old key (by `lean`, so
    its cosine stays below theta) and away from another: enough to expose a missing or misplaced threshold.
    `seed` is an int or a Generator (a hidden case's, from hidden_rng)."""
    rng = np.random.default_rng(seed)
    basis = _orthonormal(n + 2, d, rng)
    keys = basis[:n]
    values = _orthonormal(n + 1, d, rng)
    key = basis[n] + (lean * keys[0] if n else 0) - (lean * keys[1] if n > 1 else 0)
    key = key / np.linalg.norm(key)
    W1, b1, W2 = build_memory(keys, values[:n], theta)
    perpendicular = basis[n + 1]                           # orthogonal to every key, old and new
    cosines = (theta + (1 - theta) / 4, theta - 0.1)
    probes = np.array([c * key + np.sqrt(1 - c * c) * perpendicular for c in cosines])
    return _StoreCase(Case(name, {"W1": W1, "b1": b1, "W2": W2, "key": key, "value": values[n]}), theta,
                      np.vstack([keys, key]), np.vstack([values[:n], values[n]]), probes, cosines)


def _store_cases() -> list[_StoreCase]:
    return [_store_case("add a 4th fact to a 3-fact memory (d = 6)", 1, 6, 3),
            _store_case("add a 6th fact to a 5-fact memory (d = 9)", 2, 9, 5),
            _store_case("add the first fact to an empty memory (d = 5)", 3, 5, 0),
            _store_case(f"add a 5th fact with kv.THETA set to {OTHER_THETA} (d = 8)", 4, 8, 4,
                        theta=OTHER_THETA, lean=0.15)]


def _store_hidden() -> list[_StoreCase]:
    """Drawn when the work is graded (hidden_rng): a memory of random width and size, a threshold other than
    the lesson's, and a new key that leans towards one old key by a random amount (its cosine with every old
    key stays below 0.32, under the threshold by more than 0.1)."""
    rng = hidden_rng(5)
    d = int(rng.integers(8, 15))
    n = int(rng.integers(3, d - 2))
    theta = round(float(rng.uniform(0.6, 0.8)), 2)
    return [_store_case("hidden: add a fact to a random memory (d from 8 to 14, 3 to d - 3 facts) with kv.THETA "
                        "set to a random value from 0.6 to 0.8", rng, d, n, theta=theta,
                        lean=float(rng.uniform(0.1, 0.35)))]


def _weights_problem(value, d, n):
    if value is None:
        return "returned None. Did you forget `return W1_new, b1_new, W2_new`?"
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        return f"returned {fmt(value)}; return three arrays: W1_new, b1_new, W2_new"
    try:
        W1, b1, W2 = (np.asarray(v, dtype=float) for v in value)
    except (TypeError, ValueError):
        return "returned something that is not three arrays of numbers; return W1_new, b1_new, W2_new"
    shapes = {"W1_new": (W1.shape, (d, n + 1)), "b1_new": (b1.shape, (n + 1,)), "W2_new": (W2.shape, (n + 1, d))}
    unchanged = {"W1_new": (d, n), "b1_new": (n,), "W2_new": (n, d)}
    for name, (got, want) in shapes.items():
        if got == want:
            continue
        hint = ""
        if name == "W1_new" and got == (d + 1, n):
            hint = " The key went in as a row; with x @ W1 each unit is a column of W1 (np.column_stack)."
        elif name == "W2_new" and got == (n, d + 1):
            hint = " The value went in as a column; each unit's value is a row of W2 (np.vstack)."
        elif got == unchanged[name]:
            hint = (" That is as many units as before: add a unit for the new fact instead of overwriting "
                    "an old one.")
        elif n > 1 and got in ((d, 1), (1,), (1, d)):
            hint = " That holds only the new fact: keep the old units and append one."
        return f"returned {name} of shape {got}; expected {want}.{hint}"
    if not all(np.all(np.isfinite(v)) for v in (W1, b1, W2)):
        return "returned NaN or infinity; look for a division by zero"
    return None


def _recall(weights, queries):
    W1, b1, W2 = (np.asarray(v, dtype=float) for v in weights)
    return relu(queries @ W1 + b1) @ W2                    # (n_queries, d), b2 = 0


@dataclass
class _Recalled:
    """What a memory returned for a case's queries and probes (None when its weights were malformed)."""
    queries: np.ndarray | None
    probes: np.ndarray | None


def _run_store(fn, store: _StoreCase) -> tuple[Outcome, _Recalled]:
    with _threshold(store.theta):
        outcome = run(fn, store.case.args, watch="store_fact")
    d, n = store.case.args["W1"].shape
    if outcome.raised or outcome.not_implemented or _weights_problem(outcome.value, d, n) is not None:
        return outcome, _Recalled(None, None)
    return outcome, _Recalled(_recall(outcome.value, store.queries), _recall(outcome.value, store.probes))


@grader
def check_store_fact(fn, reveal: bool = False) -> bool:
    """Grade `store_fact(W1, b1, W2, key, value)`: new weights with one more unit that stores key -> value,
    built like the others with the threshold kv.THETA. Judged by what the new memory returns for every old
    key, for the new one, and for two probe queries near the new key; one case sets kv.THETA to another
    value, so a threshold written out as a number shows.

    A design exercise: a failure names the slip in words; the unit's column and bias are shown after a
    second failed attempt in this kernel, or at once with reveal=True."""
    title = "store_fact"
    if not callable(fn):
        return not_a_function(title, fn)
    drawn = hidden_cases(_store_hidden)              # none outside grading; drawn once, for every use below
    stores = _store_cases() + drawn
    hidden = len(drawn)
    report = Report(title, f"checking {len(stores)} cases" + (f", {hidden} of them hidden" if hidden else "")
                    + ": the new fact is recalled, every old fact still is, and the new unit uses kv.THETA")
    report.tally.total = len(stores)
    results: list[tuple[Outcome, _Recalled]] = []
    failures = []
    frozen = _frozen_thresholds(fn)
    for index, store in enumerate(stores):
        outcome, recalled = _run_store(fn, store)
        if outcome.not_implemented:
            return report.not_implemented()
        d, n = store.case.args["W1"].shape
        if outcome.raised:
            message = f"your function {outcome.describe_error()}"
        elif (problem := _weights_problem(outcome.value, d, n)) is not None:
            message = f"your function {problem}"
        elif outcome.mutated:
            names = ", ".join(f"`{m}`" for m in outcome.mutated)
            message = (f"your function changed its input {names} in place; build new arrays (np.column_stack, "
                       "np.append, np.vstack) and leave the old memory as it was")
        elif outcome.references:
            message = _reference_message(outcome.references)
            report.tally.mistake = report.tally.mistake or f"calls the course's own {outcome.references[0]}"
        else:
            message = (_recall_problem(outcome.value, store.case.args, store.queries, recalled.queries,
                                       store.answers)
                       or _probe_problem(store, recalled.probes, frozen)
                       or _own_key_problem(outcome.value, store.case.args))
        results.append((outcome, recalled))
        if message is None:
            report.passed(store.case.name)
        else:
            failures.append(index)
            report.failed(store.case.name, message)
    if failures:
        # A failure that is only an input changed in place has its own message: no computation to diagnose.
        computed = [i for i in failures if not results[i][0].mutated and not results[i][0].references]
        found = _diagnose_store(results, stores, computed[0]) if computed else None
        if frozen and computed and all(stores[i].theta != THETA for i in computed):
            found = "Likely mistake", _frozen_mistake(frozen)
        if found:
            label, mistake = found
            report.line(f"{label}: {mistake.name}. {mistake.fix}")
        else:
            report.line("Hint: compare what your new unit does with what build_memory's units do: silent up "
                        "to cosine kv.THETA (read inside your function), h = 1 on its own key.")
        _reveal_store(report, reveal)
    return report.finish(len(stores), len(failures), hidden=hidden, hidden_skipped=not drawn)


def _reference_message(references: list[str]) -> str:
    """What to say when store_fact calls the course's build_memory or store_fact."""
    name = references[0]
    if "build_memory" in name:
        return (f"your function calls the course's own `{name}`, which builds the units for you: the exercise "
                "is to work out the new unit yourself, its column of W1, its bias and its row of W2")
    return f"your function calls the course's own `{name}`: the exercise is to build the unit yourself"


def _frozen_mistake(names: list[str]) -> Mistake:
    """The mistake of a threshold read from a name fixed before the function runs (a global, a default)."""
    listed = " and ".join(names)
    default = any("=" in name for name in names)
    return Mistake(
        f"the threshold read from {listed}, fixed outside your function, so it kept 0.5 when kv.THETA changed",
        ("A default value is computed once, when `def` runs" if default else
         "A name set outside your function (`from helpers.kv_memory import THETA`, `THETA = 0.5`, or the "
         "lesson's `theta = kv.THETA` cell) is a copy of the number, made once, when that line ran")
        + f", so it keeps 0.5 when the check sets kv.THETA to {OTHER_THETA}. Read kv.THETA inside your "
        "function, where it is used: theta = kv.THETA as the function's first line.",
        lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(key) / 0.5, -1.0, _f(value)))


def _own_key_problem(weights, args) -> str | None:
    """The text asks for a unit built like build_memory's: one that fires with h = 1 on its own key (and
    writes the value itself). A memory that recalls right with another unit (the value scaled instead) is not."""
    W1, b1 = _f(weights[0]), _f(weights[1])
    key = _f(args["key"]) / np.linalg.norm(_f(args["key"]))        # the memory reads unit-length queries
    a = float(np.max(np.maximum(key @ W1 + b1, 0.0)))                # the new unit, wherever it stands: the
    if abs(a - 1.0) <= 1e-6:                                         # old ones are silent on the new key
        return None
    return (f"the memory recalls the fact, but the new unit fires with h = {a:.4g} on its own key, not 1: build "
            "it like build_memory's units (h = 1 on its key), so that it writes the value itself, unscaled")


def _reveal_store(report: Report, reveal: bool) -> None:
    """After a failure: the unit on request or after a second failed attempt, else how to get it."""
    if reveal:
        report.line(f"The answer, as you asked: {_STORE_ANSWER}")
    elif failed_attempts("store_fact") >= 1:
        report.line(f"The answer, after your second try: {_STORE_ANSWER}")
    else:
        report.line("Fix that and run the check again. If it fails again in this session (this kernel: a restart "
                    "starts the count afresh), the check shows the unit's column and bias; "
                    "check_store_fact(store_fact, reveal=True) shows them at any time.")


def _new_unit(weights, args):
    """The index of the added unit when the old units are kept as they were (appended last or inserted
    first), else None."""
    W1, b1, W2 = (np.asarray(v, dtype=float) for v in weights)
    n = len(args["b1"])
    for new, old in ((n, slice(0, n)), (0, slice(1, n + 1))):
        if (np.array_equal(W1[:, old], args["W1"]) and np.array_equal(b1[old], args["b1"])
                and np.array_equal(W2[old], args["W2"])):
            return new
    return None


def _recall_problem(weights, args, queries, recalled, answers):
    """What is wrong with the new memory's outputs (rows: old keys, then the new key), or None."""
    n = len(args["b1"])
    got, want = recalled[n], answers[n]
    if not close(got, want, rtol=1e-6, atol=1e-6):
        message = f"for the new key the memory returns {fmt(got, 3)}, expected the value {fmt(want, 3)}"
        scale = float(got @ want)                           # the value has length 1
        if not np.any(np.abs(got) > 1e-12):
            return message + " (no unit fires for it)"
        if close(got, scale * want, rtol=1e-6, atol=1e-6):
            return message + f" ({scale:.3g} times the value: the new unit's activation on its key should be 1)"
        return message
    for j in range(n):
        if close(recalled[j], answers[j], rtol=1e-6, atol=1e-6):
            continue
        message = f"the new fact is recalled, but old key {j} now returns {fmt(recalled[j], 3)}, not its value"
        k = _new_unit(weights, args)
        if k is None:
            return message + "; some of the old units were changed: keep them exactly as they were"
        W1, b1, _ = (np.asarray(v, dtype=float) for v in weights)
        a = float(relu(queries[j] @ W1[:, k] + b1[k]))
        return message + f": the new unit fires for old key {j} too (h = {a:.3g}), so its threshold is too low"
    return None


def _probe_problem(store: _StoreCase, probes_out: np.ndarray, frozen: list[str] = ()) -> str | None:
    """Whether the new unit writes, for the two probes, what a unit with threshold store.theta writes."""
    value, theta = store.case.args["value"], store.theta
    for cosine, got in zip(store.cosines, probes_out):
        want = max(0.0, cosine - theta) / (1 - theta)       # times the value
        if close(got, want * value, rtol=1e-6, atol=1e-9):
            continue
        written = float(got @ value)                        # the value has length 1
        where = (f"for a query whose cosine with the new key is {cosine:.3f}, "
                 + (f"above kv.THETA = {theta:g}, the new unit should write {want:.3g} times the value, "
                    "as every unit built like the others does" if want
                    else f"below kv.THETA = {theta:g}, the new unit should write nothing"))
        if not close(got, written * value, rtol=1e-6, atol=1e-9):
            return where + f"; the memory returns {fmt(got, 3)}, which is not a multiple of the value"
        if written <= 0:
            found = f"; yours writes nothing there, so its threshold is above {cosine:.3f}"
        elif written < 1:
            found = (f"; yours writes {written:.3g} times it, as a unit with threshold "
                     f"{(cosine - written) / (1 - written):.3g} would")
        else:
            found = f"; yours writes {written:.3g} times it"
        if theta != THETA and frozen:
            found += (f". In this case the check set kv.THETA to {theta:g}, but your function reads "
                      f"{' and '.join(frozen)}, fixed before it ran, which kept {THETA:g}: read kv.THETA inside "
                      "your function")
        elif theta != THETA:
            found += (f". In this case the check set kv.THETA to {theta:g}: read kv.THETA inside your function "
                      "instead of writing its value")
        return where + found
    return None


def _diagnose_store(results, stores, first_failure):
    partial = None
    for mistake in _STORE_MISTAKES:
        agree = []
        for (outcome, recalled), store in zip(results, stores):
            theirs_outcome, theirs = _run_store(mistake.fn, store)
            if recalled.queries is None or theirs.queries is None:
                agree.append(False)
                continue
            agree.append(close(recalled.queries, theirs.queries, rtol=1e-6, atol=1e-6)
                         and close(recalled.probes, theirs.probes, rtol=1e-6, atol=1e-9))
        if all(agree):
            return "Likely mistake", mistake
        if partial is None and agree[first_failure]:
            partial = mistake
    return ("Possibly", partial) if partial else None
