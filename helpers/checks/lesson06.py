"""Checks for lesson 06, the FFN as a key-value memory.

Row-vector convention throughout (x @ W): column k of W1 is unit k's key, row k of W2 is its value.
"""
from __future__ import annotations

import numpy as np

from helpers.checks._core import (Case, Mistake, Outcome, Report, a_kind, check_function, close, fmt,
                                  not_a_function, run, vector_problem)
from helpers.checks._verdict import grader
from helpers.ffn import relu
from helpers.kv_memory import THETA, build_memory
from helpers.kv_memory import ffn_as_sum as _reference_sum
from helpers.kv_memory import top_units as _reference_top

__all__ = ["check_ffn_as_sum", "check_top_units", "check_store_fact"]


def _f(a):
    return np.asarray(a, dtype=float)


# --------------------------------------------------------------------------------------------------------
# Exercise 1: ffn_as_sum(x, W1, b1, W2, b2), the FFN as an explicit sum over hidden units
# --------------------------------------------------------------------------------------------------------
def _sum_with(x, W1, b1, W2, b2, key=lambda W1, k: W1[:, k], value=lambda W2, k: W2[k],
              act=lambda z, b: relu(z + b), bias_per_unit=False, out=lambda y: y, use_b2=True, n_units=None):
    """The sum over units with one step swapped for a known slip; with the defaults it is correct."""
    x, W1, b1, W2, b2 = _f(x), _f(W1), _f(b1), _f(W2), _f(b2)
    y = np.zeros(len(x))
    for k in range(len(b1) if n_units is None else n_units(x, W1)):
        a_k = act(float(key(W1, k) @ x), b1[k])
        y = y + a_k * value(W2, k) + (b2 if bias_per_unit else 0.0)
    return out(y + (b2 if use_b2 and not bias_per_unit else 0.0))


_SUM_MISTAKES = [
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
            "b2 belongs outside the sum: start from y = b2 (or add it after the loop), not inside the loop.",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, bias_per_unit=True)),
    Mistake("σ (ReLU) not applied, so units that do not fire write their value with a negative weight",
            "a_k = relu(x . w_k + b1[k]): a unit whose pre-activation is negative has a_k = 0 and writes nothing.",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, act=lambda z, b: z + b)),
    Mistake("b1 left out", "The pre-activation is x . w_k + b1[k]: add unit k's bias before the ReLU.",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, act=lambda z, b: relu(z))),
    Mistake("b1 added after the ReLU", "Add b1[k] before the ReLU: a_k = relu(x . w_k + b1[k]).",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, act=lambda z, b: relu(z) + b)),
    Mistake("ReLU applied to the output as well",
            "The ReLU acts on each unit's pre-activation only; the output stays signed.",
            lambda x, W1, b1, W2, b2: _sum_with(x, W1, b1, W2, b2, out=relu)),
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
    ]


@grader
def check_ffn_as_sum(fn) -> bool:
    """Grade `ffn_as_sum(x, W1, b1, W2, b2)`: FFN(x) for one token, as the sum of a_k u_k over units, + b2."""
    def validate(value, case):
        d, d_ff = len(case.args["x"]), len(case.args["b1"])
        hints = {d_ff: "That is one number per hidden unit (the activations?); the output has d numbers, "
                       "the sum of the vectors a_k u_k plus b2."} if d_ff != d else {}
        return vector_problem(value, d, hints)

    return check_function(
        "ffn_as_sum", fn, _sum_cases(), _reference_sum, validate, _SUM_MISTAKES,
        normalize=lambda v: [float(e) for e in (v.tolist() if isinstance(v, np.ndarray) else v)],
        fallback_hint="start from y = b2; for each unit k, a_k = relu(x @ W1[:, k] + b1[k]), "
                      "then y += a_k * W2[k].")


# --------------------------------------------------------------------------------------------------------
# Exercise 2: top_units(x, W1, b1, W2, k), the k units that write the most, largest first
# --------------------------------------------------------------------------------------------------------
def _rank(scores, k, ascending=False):
    order = np.argsort(_f(scores) if ascending else -_f(scores), kind="stable")
    return [int(i) for i in order[:k]]


def _acts(x, W1, b1):
    return relu(_f(x) @ _f(W1) + _f(b1))


def _smallest_first(x, W1, b1, W2, k):
    right_units = _reference_top(_f(x), _f(W1), _f(b1), _f(W2), k)
    return right_units[::-1]


_TOP_MISTAKES = [
    Mistake("sorted ascending, so these are the units that write the least",
            "Sort the sizes from largest to smallest: np.argsort(-sizes), or sorted(..., reverse=True).",
            lambda x, W1, b1, W2, k: _rank(np.linalg.norm(_acts(x, W1, b1)[:, None] * _f(W2), axis=1), k, True)),
    Mistake("the right units, listed smallest first",
            "Return them largest first: the first index should be the unit whose a_j u_j is longest.",
            _smallest_first),
    Mistake("ranked by the activation a_j alone",
            "A unit that fires hard can still write a short vector. Rank by the size of what it writes, "
            "||a_j u_j|| = a_j ||u_j||, with u_j = W2[j].",
            lambda x, W1, b1, W2, k: _rank(_acts(x, W1, b1), k)),
    Mistake("ranked by the length of the value ||u_j|| alone, ignoring how hard each unit fires",
            "Scale each value by its activation: the contribution is a_j u_j, and a silent unit writes nothing.",
            lambda x, W1, b1, W2, k: _rank(np.linalg.norm(_f(W2), axis=1), k)),
    Mistake("ranked by the size of the pre-activation |x . w_j + b1_j|, before the ReLU",
            "A unit with a large negative pre-activation is silenced by the ReLU and writes nothing: "
            "apply the ReLU first, a_j = relu(x . w_j + b1_j).",
            lambda x, W1, b1, W2, k: _rank(np.abs(_f(x) @ _f(W1) + _f(b1)), k)),
    Mistake("keys read from the rows of W1",
            "With x @ W1, unit j's key is column j of W1 (W1 has shape (d, d_ff)): a = relu(x @ W1 + b1).",
            lambda x, W1, b1, W2, k: _rank(np.linalg.norm(relu(_f(W1) @ _f(x) + _f(b1))[:, None] * _f(W2),
                                                           axis=1), k)),
    Mistake("values read from the columns of W2",
            "Unit j's value is row j of W2 (W2 has shape (d_ff, d)), so its contribution is a[j] * W2[j].",
            lambda x, W1, b1, W2, k: _rank(np.linalg.norm(_acts(x, W1, b1)[None, :] * _f(W2), axis=0), k)),
    Mistake("norm taken over the wrong axis (axis=0): one length per output coordinate, not one per unit",
            "The contributions a_j u_j are the rows of a[:, None] * W2, shape (d_ff, d): take each row's length "
            "with np.linalg.norm(..., axis=1). axis=0 gives d numbers, so the indices ranked were coordinates.",
            lambda x, W1, b1, W2, k: _rank(np.linalg.norm(_acts(x, W1, b1)[:, None] * _f(W2), axis=0), k)),
    Mistake("counting units from 1", "Python counts from 0: the first hidden unit is unit 0.",
            lambda x, W1, b1, W2, k: [j + 1 for j in _reference_top(_f(x), _f(W1), _f(b1), _f(W2), k)]),
]


def _top_case(name, rng, x, z, value_lengths, k):
    """A case with chosen pre-activations z = x @ W1 + b1 and chosen value lengths ||u_j||, so that ranking
    by the contribution, by a_j, by ||u_j|| and by |z_j| all give different units."""
    x, z, value_lengths = _f(x), _f(z), _f(value_lengths)
    W1 = np.round(rng.normal(size=(len(x), len(z))), 2)                       # (d, d_ff)
    directions = rng.normal(size=(len(z), len(x)))
    W2 = directions / np.linalg.norm(directions, axis=1, keepdims=True) * value_lengths[:, None]
    return Case(name, {"x": x, "W1": W1, "b1": z - x @ W1, "W2": W2, "k": k})


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
    ]


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
    if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer, float, np.floating))
           for v in value):
        return f"returned {fmt(value)}; return a list of {k} unit indices such as [4, 0]"
    if len(value) != k:
        return f"returned {len(value)} indices; expected k = {k}"
    if len(set(int(v) for v in value)) != len(value):
        return f"returned {fmt(value)}, which lists a unit twice"
    if any(not 0 <= int(v) < d_ff for v in value):
        hint = " (did you count from 1?)" if max(int(v) for v in value) == d_ff else ""
        return f"returned {fmt(value)}; unit indices run from 0 to {d_ff - 1}{hint}"
    return None


@grader
def check_top_units(fn) -> bool:
    """Grade `top_units(x, W1, b1, W2, k)`: the k units with the largest ||a_j u_j||, largest first."""
    return check_function(
        "top_units", fn, _top_cases(), _reference_top, _units_problem, _TOP_MISTAKES,
        compare=lambda got, expected: list(got) == list(expected),
        normalize=lambda v: [int(e) for e in (v.tolist() if isinstance(v, np.ndarray) else v)],
        fallback_hint="a = relu(x @ W1 + b1); sizes = np.linalg.norm(a[:, None] * W2, axis=1); "
                      "return the indices of the k largest sizes, largest first.")


# --------------------------------------------------------------------------------------------------------
# Exercise 3: store_fact(W1, b1, W2, key, value), one more unit that stores key -> value
# --------------------------------------------------------------------------------------------------------
_SCALE = 1 / (1 - THETA)


def _append(W1, b1, W2, column, bias, row):
    return (np.column_stack([_f(W1), column]), np.append(_f(b1), bias), np.vstack([_f(W2), row]))


_STORE_MISTAKES = [
    Mistake("key and value swapped",
            "The key goes into W1 (a new column: what the unit looks for) and the value into W2 (a new row: "
            "what it writes).",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(value) * _SCALE, -THETA * _SCALE, _f(key))),
    Mistake("no threshold: the new unit's bias is 0, so it also fires for old keys that point partly its way",
            f"Use the column key / (1 - THETA) and the bias -THETA / (1 - THETA) = {-THETA * _SCALE:g}: the "
            f"unit then fires only for queries whose cosine with its key exceeds THETA = {THETA:g}.",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(key), 0.0, _f(value))),
    Mistake("the key scaled by 1 / (1 - THETA) but no threshold (bias 0)",
            f"Add the bias -THETA / (1 - THETA) = {-THETA * _SCALE:g}: without it the unit fires for every key "
            "that points partly its way, and on its own key it fires with a = 1 / (1 - THETA), not 1.",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(key) * _SCALE, 0.0, _f(value))),
    Mistake("the threshold with the wrong sign, so the new unit fires for every key",
            f"The bias must be negative, -THETA / (1 - THETA) = {-THETA * _SCALE:g}, so that weak matches "
            "fall below zero and the ReLU silences them.",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(key) * _SCALE, THETA * _SCALE, _f(value))),
    Mistake("the key not scaled by 1 / (1 - THETA), so the unit fires with a = 1 - THETA on its own key "
            "and writes a shortened value",
            f"Use the column key / (1 - THETA) and the bias -THETA / (1 - THETA): on its own key the unit "
            f"then has a = ({1:g} - THETA) / (1 - THETA) = 1 and writes exactly the value.",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(key), -THETA, _f(value))),
    Mistake("the bias not scaled: -THETA instead of -THETA / (1 - THETA)",
            "Scale the bias like the key: -THETA / (1 - THETA), so the unit switches on exactly where the "
            "cosine passes THETA.",
            lambda W1, b1, W2, key, value: _append(W1, b1, W2, _f(key) * _SCALE, -THETA, _f(value))),
]


def _orthonormal(n, d, rng):
    q, _ = np.linalg.qr(rng.normal(size=(d, n)))
    return q.T                                             # (n, d), orthonormal rows


def _store_cases():
    """Memories built by build_memory, each with a new fact whose key leans towards one old key (cosine 0.3,
    below THETA) and away from another (cosine -0.3): enough to expose a missing or misplaced threshold."""
    cases = []
    for name, seed, d, n in (("add a 4th fact to a 3-fact memory (d = 6)", 1, 6, 3),
                             ("add a 6th fact to a 5-fact memory (d = 9)", 2, 9, 5),
                             ("add the first fact to an empty memory (d = 5)", 3, 5, 0)):
        rng = np.random.default_rng(seed)
        basis = _orthonormal(n + 2, d, rng)
        keys = basis[:n]
        values = _orthonormal(n + 1, d, rng)
        if n:
            key = 0.3 * keys[0] - (0.3 * keys[1] if n > 1 else 0) + basis[n]
            key = key / np.linalg.norm(key)
        else:
            key = basis[0]
        W1, b1, W2 = build_memory(keys, values[:n])
        cases.append((Case(name, {"W1": W1, "b1": b1, "W2": W2, "key": key, "value": values[n]}),
                      np.vstack([keys, key]), np.vstack([values[:n], values[n]])))
    return cases


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
    return relu(queries @ W1 + b1) @ W2                    # (n + 1, d), b2 = 0


@grader
def check_store_fact(fn) -> bool:
    """Grade `store_fact(W1, b1, W2, key, value)`: new weights with one more unit that stores key -> value,
    judged by what the new memory recalls for every old key and for the new one."""
    title = "store_fact"
    cases = _store_cases()
    if not callable(fn):
        return not_a_function(title, fn)
    report = Report(title, f"checking {len(cases)} cases: the new fact is recalled and every old fact still is")
    results: list[tuple[Outcome, np.ndarray | None]] = []
    failures = []
    for index, (case, queries, answers) in enumerate(cases):
        outcome = run(fn, case.args)
        if outcome.not_implemented:
            return report.not_implemented()
        d, n = case.args["W1"].shape
        recalled = None
        if outcome.raised:
            message = f"your function {outcome.describe_error()}"
        elif (problem := _weights_problem(outcome.value, d, n)) is not None:
            message = f"your function {problem}"
        elif outcome.mutated:
            names = ", ".join(f"`{m}`" for m in outcome.mutated)
            message = (f"your function changed its input {names} in place; build new arrays (np.column_stack, "
                       "np.append, np.vstack) and leave the old memory as it was")
        else:
            recalled = _recall(outcome.value, queries)
            message = _recall_problem(outcome.value, case.args, queries, recalled, answers)
        results.append((outcome, recalled))
        if message is None:
            report.passed(case.name)
        else:
            failures.append(index)
            report.failed(case.name, message)
    if failures:
        found = _diagnose_store(results, cases, failures[0])
        if found:
            label, mistake = found
            report.line(f"{label}: {mistake.name}. {mistake.fix}")
        else:
            report.line("Hint: append the column key / (1 - THETA) to W1, the bias -THETA / (1 - THETA) to b1 "
                        "and the row value to W2.")
    return report.finish(len(cases), len(failures))


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
        return message + f": the new unit fires for old key {j} too (a = {a:.3g}), so its threshold is too low"
    return None


def _diagnose_store(results, cases, first_failure):
    partial = None
    for mistake in _STORE_MISTAKES:
        agree = []
        for (outcome, recalled), (case, queries, _) in zip(results, cases):
            theirs = run(mistake.fn, case.args)
            if recalled is None or theirs.raised:
                agree.append(False)
                continue
            agree.append(close(recalled, _recall(theirs.value, queries), rtol=1e-6, atol=1e-6))
        if all(agree):
            return "Likely mistake", mistake
        if partial is None and agree[first_failure]:
            partial = mistake
    return ("Possibly", partial) if partial else None
