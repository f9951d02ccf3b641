"""Checks for lesson 07: routing weights, the mixture-of-experts forward pass, and the residual wrapper."""
from __future__ import annotations

import functools
import traceback
from typing import Any, Callable, NamedTuple

import numpy as np

from helpers.block import LN_EPS, layer_norm
from helpers.checks._core import (Case, Mistake, array_problem, check_function, close, close_float64, fmt,
                                  hidden_rng, not_a_function, with_tiers)
from helpers.checks._verdict import grader
from helpers.ffn import ffn, softmax
from helpers.moe import make_experts, route

__all__ = ["check_route", "check_moe_forward", "check_residual_block"]


def _quiet(fn):
    """A mutant run without NumPy's overflow warnings (some wrong softmaxes overflow on purpose)."""
    @functools.wraps(fn)
    def wrapper(*args):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return fn(*args)
    return wrapper


def _rows(value, max_rows: int = 3) -> str:
    """The first few token rows of an array, e.g. "[[0.1, -2], [1.5, 0], ... (5 tokens)]"."""
    flat = np.asarray(value, dtype=float).reshape(-1, np.shape(value)[-1])
    shown = ", ".join(fmt(row.tolist()) for row in flat[:max_rows])
    return f"[{shown}, ... ({flat.shape[0]} tokens)]" if flat.shape[0] > max_rows else f"[{shown}]"


# --------------------------------------------------------------------------------------------------------
# Exercise 1: route(logits, k) -> (experts, weights)
# --------------------------------------------------------------------------------------------------------
class _Routing(NamedTuple):
    """The reference answer, with the logits kept so that any choice among tied experts can be accepted."""
    experts: np.ndarray   # (n, k) best first
    weights: np.ndarray   # (n, k)
    logits: np.ndarray    # (n, n_experts)


def _reference_route(logits, k):
    experts, weights = route(np.asarray(logits, dtype=float), k)
    return _Routing(experts, weights, np.asarray(logits, dtype=float))


def _top(logits, k, order):
    """Experts sorted by `order` (a key array, smaller first) and the softmax of their logits."""
    experts = np.argsort(order, axis=-1, kind="stable")[:, :k]
    return experts, np.take_along_axis(logits, experts, axis=-1)


def _route_all_softmax(logits, k):
    experts, _ = _top(logits, k, -logits)
    return experts, np.take_along_axis(softmax(logits), experts, axis=-1)


def _route_smallest(logits, k):
    experts, chosen = _top(logits, k, logits)
    return experts, softmax(chosen)


def _route_linear(logits, k):
    experts, chosen = _top(logits, k, -logits)
    return experts, chosen / chosen.sum(axis=-1, keepdims=True)


def _route_exp_only(logits, k):
    experts, chosen = _top(logits, k, -logits)
    return experts, np.exp(chosen)


def _route_raw(logits, k):
    return _top(logits, k, -logits)


def _route_axis0(logits, k):
    experts, chosen = _top(logits, k, -logits)
    return experts, softmax(chosen, axis=0)


def _route_experts_sorted(logits, k):
    """The k experts listed by index (np.sort), their weights left in logit order: pairs split."""
    experts, chosen = _top(logits, k, -logits)
    return np.sort(experts, axis=-1), softmax(chosen)


def _route_weights_ascending(logits, k):
    """Experts best first, weights from an ascending sort of the same logits: the pairs reversed."""
    experts, chosen = _top(logits, k, -logits)
    return experts, softmax(chosen)[:, ::-1]


def _route_first_columns(logits, k):
    """Right experts, but the weights are the probabilities of experts 0..k-1 (p[:, :k]), renormalised."""
    experts, _ = _top(logits, k, -logits)
    p = softmax(logits)[:, :k]
    return experts, p / p.sum(axis=-1, keepdims=True)


def _route_sorted_down_tokens(logits, k):
    """argsort along axis 0: each column ranks the tokens, so the "experts" are token positions."""
    experts = np.argsort(-logits, axis=0)[:, :k]
    return experts, softmax(np.take_along_axis(logits, experts, axis=-1))


def _route_sorted_down_tokens_transposed(logits, k):
    """The same slip, with the first k rows of the token ranking transposed: (n_experts, k), not (n, k)."""
    experts = np.argsort(-logits, axis=0)[:k].T
    return experts, softmax(np.take_along_axis(logits, experts, axis=-1))


def _sorted_down_tokens(logits, experts) -> bool:
    """Whether `experts` (n, k) are the first k columns of an argsort of the logits down the tokens (axis 0),
    with either tie-break: the slip of sorting along the wrong axis."""
    n, k = experts.shape
    if logits.shape[1] < k:
        return False
    return any(np.array_equal(experts, np.argsort(-logits, axis=0, kind=kind)[:, :k])
               for kind in ("quicksort", "stable"))


def _route_mask_by_value(logits, k):
    """Pick the best, then hide every expert whose logit equals it (a tied expert is skipped too)."""
    masked = logits.copy()
    experts = []
    for _ in range(k):
        best = np.argmax(masked, axis=-1)                                     # (n,)
        experts.append(best)
        masked[masked == masked[np.arange(len(best)), best][:, None]] = -np.inf
    experts = np.stack(experts, axis=-1)
    return experts, softmax(np.take_along_axis(logits, experts, axis=-1))


def _route_whole_array(logits, k):
    """scipy.special.softmax without axis: one softmax over every token's chosen logits together."""
    experts, chosen = _top(logits, k, -logits)
    e = np.exp(chosen - chosen.max())
    return experts, e / e.sum()


def _route_sigmoid(logits, k):
    """A sigmoid gate on each chosen logit, renormalised over the k."""
    experts, chosen = _top(logits, k, -logits)
    s = 1 / (1 + np.exp(-chosen))
    return experts, s / s.sum(axis=-1, keepdims=True)


def _route_temperature(logits, k):
    """The chosen logits divided by sqrt(k) before the softmax, as if they were attention scores."""
    experts, chosen = _top(logits, k, -logits)
    return experts, softmax(chosen / np.sqrt(k))


def _route_eps_in_sum(logits, k):
    """The chosen probabilities renormalised with an eps added to their sum."""
    experts, _ = _top(logits, k, -logits)
    p = np.take_along_axis(softmax(logits), experts, axis=-1)
    return experts, p / (p.sum(axis=-1, keepdims=True) + 1e-3)


_ROUTE_MISTAKES = [Mistake(name, fix, _quiet(fn)) for name, fix, fn in [
    ("softmax over all experts, not renormalised over the chosen k",
     "Take the softmax of the k chosen logits only (the same as dividing the chosen probabilities by their "
     "sum), so each token's k weights add up to 1.", _route_all_softmax),
    ("the experts with the smallest logits",
     "Sort in decreasing order, largest logit first, so that the first k positions are the k largest.",
     _route_smallest),
    ("weights are the chosen logits divided by their sum, with no exponential",
     "Softmax exponentiates first: w = exp(l - max) / sum(exp(l - max)) over the k chosen logits l.",
     _route_linear),
    ("weights are exp(logit), never divided by their sum",
     "Divide by each row's sum so that every token's k weights add up to 1.", _route_exp_only),
    ("the raw logits returned as weights",
     "Turn the k chosen logits into weights with a softmax.", _route_raw),
    ("experts sorted down the tokens (argsort along axis 0) instead of across each token's experts (axis=-1)",
     "np.argsort(-logits, axis=0) ranks the tokens within each expert's column, so its entries are token "
     "positions, not experts. Sort each row, one token's logits: np.argsort(-logits, axis=-1)[:, :k].",
     _route_sorted_down_tokens),
    ("experts sorted down the tokens (argsort along axis 0, then transposed) instead of across each token's "
     "experts (axis=-1)",
     "np.argsort(-logits, axis=0) ranks the tokens within each expert's column; its first k rows, transposed, "
     "have one row per expert, not per token. Sort each token's row: np.argsort(-logits, axis=-1)[:, :k].",
     _route_sorted_down_tokens_transposed),
    ("softmax taken down the tokens (axis=0) instead of across each token's experts",
     "Normalise each row: softmax along axis=-1, over one token's k chosen logits.", _route_axis0),
    ("weights not reordered with their experts: the experts were sorted by index, the weights were not",
     "Weight j must belong to expert j. Keep the experts in the order of their logits (best first), or "
     "reorder the weights with the same permutation: np.take_along_axis(logits, experts, axis=-1) picks "
     "each chosen expert's own logit.", _route_experts_sorted),
    ("weights in the reverse order of their experts (one sorted up, the other down)",
     "Sort once: take the experts' positions with np.argsort(-logits), then their own logits with "
     "np.take_along_axis, so weight j belongs to expert j.", _route_weights_ascending),
    ("weights taken from the first k columns (experts 0 to k - 1), not from the chosen experts",
     "Pick each token's chosen logits with np.take_along_axis(logits, experts, axis=-1); p[:, :k] are the "
     "probabilities of experts 0 to k - 1, whichever were chosen.", _route_first_columns),
    ("one softmax over the whole array (scipy.special.softmax without axis=-1): all tokens' weights together "
     "sum to 1, not each token's",
     "Normalise each token's k weights on their own: scipy.special.softmax(chosen, axis=-1), or "
     "exp(c - c.max(axis=-1, keepdims=True)) divided by its sum along axis=-1.", _route_whole_array),
    ("a sigmoid gate on each chosen logit instead of a softmax",
     "Mixtral's weights are the softmax of the k chosen logits: exp(l - max) / sum(exp(l - max)). "
     "Renormalised sigmoids also sum to 1 but are other numbers.", _route_sigmoid),
    ("the chosen logits divided by sqrt(k) (a temperature) before the softmax",
     "The router's weights are the plain softmax of the chosen logits; the 1/sqrt(d) scaling belongs to "
     "attention scores, not here.", _route_temperature),
    ("an eps added to the sum when renormalising: each token's weights no longer sum to 1",
     "Divide by the sum itself; it is never 0 (each chosen probability is positive, and the shifted largest "
     "logit gives exp(0) = 1).", _route_eps_in_sum),
    ("an expert tied with the one just chosen is skipped (masked by value, not by index)",
     "Two experts with equal logits are both eligible. Hide the chosen expert by its index "
     "(masked[row, e] = -inf for that one e), not every entry equal to its logit.", _route_mask_by_value),
]]


def _route_cases():
    rng = np.random.default_rng(1)
    eight = np.round(rng.normal(size=(4, 8)), 2)              # no ties, checked in the tests
    five = np.round(rng.normal(size=(3, 5)), 2)
    four = np.array([[0.4, -1.2, 2.0, 0.9], [1.5, 0.3, -0.6, 0.2]])
    return [
        Case("top 2 of 8 experts for 4 tokens (Mixtral's layout)", {"logits": eight, "k": 2}),
        Case("k = 1: the best expert alone, with weight 1", {"logits": five, "k": 1}),
        Case("top 3 of 5 experts", {"logits": five, "k": 3}),
        Case("k = n_experts: every expert, weights = the full softmax", {"logits": four, "k": 4}),
        Case("all logits negative", {"logits": np.array([[-1.0, -3.0, -0.5, -2.0], [-4.0, -2.0, -2.5, -1.0]]),
                                     "k": 2}),
        Case("a tie for second place (either tied expert is right)",
             {"logits": np.array([[2.0, 1.0, 1.0, 0.0], [0.5, -1.0, 0.5, 3.0]]), "k": 2}),
        Case("a tie for first place (both tied experts, weight 1/2 each)",
             {"logits": np.array([[1.0, 3.0, 3.0, 0.0], [-2.0, 0.0, 0.5, 0.5]]), "k": 2}),
        Case("large logits (a naive exp overflows)",
             {"logits": np.array([[1000.0, 999.0, 0.0, -1000.0], [-1000.0, 1000.0, 998.0, 0.0]]), "k": 2}),
        # Only each row's largest chosen logit is a safe shift: a row's minimum or mean overflows exp on the
        # first row (k = 4), the largest logit of the whole array underflows the second row to 0 / 0.
        Case("logits far apart, every expert (k = n_experts)", {"logits": _SPREAD, "k": 4}),
        Case("a token whose logits are all very negative", {"logits": _SPREAD, "k": 2}),
    ]


_SPREAD = np.array([[1000.0, 999.0, 0.0, -1000.0], [-1000.0, -1001.0, -1500.0, -2000.0]])


def _redrawn(draw: Callable[[], Any], ok: Callable[[Any], bool], tries: int = 100):
    """draw() again until ok(what it drew): a hidden case keeps the property its name or the check relies on,
    whatever the grading secret (a bounded loop, and the same draws for the same generator)."""
    for _ in range(tries):
        value = draw()
        if ok(value):
            return value
    raise RuntimeError(f"no draw in {tries} has the property asked")


def _apart(logits, gap: float = 0.0) -> bool:
    """Whether no two logits of a token (a row) are equal, or within `gap` of each other."""
    return bool(np.all(np.diff(np.sort(logits, axis=-1), axis=-1) > gap))


def _route_hidden():
    """Drawn at grading time from the secret: the sizes and k as well as the logits, no two of a token's equal
    (the tie cases are public, and named as such)."""
    rng = hidden_rng(3)
    cases = []
    for name, scale, ok in [
            ("a random routing: 3 to 8 tokens, the top k of 4 to 9 experts (k below the number of experts)", 1.0,
             _apart),
            ("random large logits, some above 800 (a naive exp overflows): 3 to 8 tokens, the top k of 4 to 9 "
             "experts", 500.0, lambda logits: _apart(logits) and logits.max() > 800)]:
        n, n_experts = int(rng.integers(3, 9)), int(rng.integers(4, 10))
        k = int(rng.integers(1, n_experts))
        logits = _redrawn(lambda: np.round(rng.normal(size=(n, n_experts)), 3) * scale, ok)
        cases.append(Case(name, {"logits": logits, "k": k}))
    return cases


class _Sorted(tuple):
    """(experts, weights) with each row ordered best first, for comparing; `returned` keeps the pair in the
    order the learner's function returned it, for showing."""
    returned: tuple


def _as_routing(value):
    """(experts, weights) as an int array and a float array, each row ordered best first (by weight, then
    by index), so that two answers that list the same choices in another order compare equal. The report
    shows the pair as returned (`.returned`), never this reordering."""
    experts = np.asarray(value[0]).astype(int)
    weights = np.asarray(value[1], dtype=float)
    order = np.lexsort((experts, -weights), axis=-1)
    result = _Sorted((np.take_along_axis(experts, order, -1), np.take_along_axis(weights, order, -1)))
    result.returned = (experts, weights)
    return result


def _route_problem(value, case):
    logits, k = case.args["logits"], case.args["k"]
    n, n_experts = logits.shape
    if value is None:
        return "returned None. Did you forget `return experts, weights` at the end?"
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        return f"returned {fmt(value)}; return two arrays, `experts, weights`, each of shape ({n}, k)"
    parts = {}
    for name, part in zip(("experts", "weights"), value):
        if part is None:
            return f"returned None as `{name}`; return both arrays, `experts, weights`"
        try:
            parts[name] = np.asarray(part, dtype=float)
        except (TypeError, ValueError):
            return (f"returned `{name}` with rows of different lengths. With tied logits, a test like "
                    "`logits >= kth_largest` keeps every tied expert; take exactly k per token")
        shape = parts[name].shape
        if shape != (n, k):
            hint = ""
            if shape == (n, n_experts):
                hint = (" You kept every expert; keep the k with the largest logits." if name == "experts" else
                        " You returned a weight for every expert; return only the k chosen experts' weights.")
            elif shape == (k, n):
                hint = " Your array is transposed: one row per token, one column per chosen expert."
            elif len(shape) == 2 and shape[0] == n and shape[1] == 2:
                hint = f" You always keep 2; keep k = {k}, the argument, per token."
            elif len(shape) == 2 and shape[0] == n and shape[1] > k and "tie" in case.name:
                hint = (" You kept more than k per token. With tied logits, a test like `logits >= kth_largest` "
                        "keeps every tied expert; take exactly k.")
            return f"returned `{name}` of shape {shape}; expected ({n}, {k}), one row per token.{hint}"
    experts, weights = parts["experts"], parts["weights"]
    raw = np.asarray(value[0])
    whole_weights = np.all(np.isfinite(weights)) and np.all(weights == np.round(weights))
    if (np.all(np.isfinite(experts)) and np.any(experts != np.round(experts)) and whole_weights
            and np.allclose(experts.sum(axis=-1), 1.0)):
        return ("returned `weights, experts` in the opposite order: the first array holds the weights (each row "
                "sums to 1), the second the indices. Return `experts, weights`")
    if not np.all(np.isfinite(experts)) or np.any(experts != np.round(experts)):
        return ("returned `experts` that are not whole numbers; they should be expert indices such as "
                "[[3, 0], ...]. Did you return the chosen logits instead of their positions?")
    if raw.dtype.kind == "f" or (raw.dtype == object and any(isinstance(e, (float, np.floating))
                                                               for e in raw.ravel())):
        return ("returned `experts` as floats (the first is " + repr(float(experts.flat[0])) + "); expert "
                "indices must be ints, since a float cannot index the list of experts (experts[3.0] raises "
                "TypeError). np.argsort returns ints; if you filled np.zeros, give it dtype=int")
    if experts.min() < 0 or experts.max() >= n_experts:
        bad = experts.max() if experts.max() >= n_experts else experts.min()
        hint = " Expert indices count from 0." if bad == n_experts else ""
        return (f"returned expert index {fmt(bad)}, out of range for {n_experts} experts "
                f"(0 to {n_experts - 1}).{hint}")
    chosen = experts.astype(int)
    for t, row in enumerate(chosen):
        if len(set(row.tolist())) < k:
            message = (f"returned the same expert twice for token {t} ({fmt(row.tolist())}); its k experts must "
                       "be different")
            if _sorted_down_tokens(logits, chosen):
                return message + (". These are the positions of a sort down the tokens (axis 0): sort each "
                                  "token's row instead, along axis=-1")
            twice = next(e for e in row.tolist() if row.tolist().count(e) > 1)
            if np.sum(logits[t] == logits[t, twice]) > 1:
                return message + (". This token has tied logits: looking an expert up by its value (np.where, "
                                  ".index) finds the same one twice; keep positions, not values")
            return message
    best = -np.sort(-logits, axis=-1)[:, :k]                                  # (n, k) the k largest
    right = np.array_equal(-np.sort(-np.take_along_axis(logits, chosen, axis=-1), axis=-1), best)
    if n > 1 and not right and _sorted_down_tokens(logits, chosen):
        return ("returned token positions as experts: the sort ran down the tokens (axis 0), ranking the "
                "tokens within each expert's column. Sort each token's row instead, along axis=-1")
    if not np.all(np.isfinite(weights)) or np.any(weights.sum(axis=-1) == 0):
        what = "NaN or infinity" if not np.all(np.isfinite(weights)) else "a row of zeros"
        return (f"returned {what} in `weights`: exp overflowed (or underflowed to 0, and 0 / 0 is NaN). "
                "Subtract each row's largest chosen logit before exp; a row's minimum or mean, or the largest "
                "logit of the whole array, can still overflow or underflow. A softmax does not change when a "
                "row's logits all shift by the same amount")
    return None


def _route_close(got, expected) -> bool:
    """got: a normalised (experts, weights). expected: the reference (any tie-break accepted) or a mutant's
    raw output (compared exactly, after the same normalisation)."""
    if isinstance(expected, _Routing):
        experts, weights = got
        logits, k = expected.logits, expected.experts.shape[1]
        picked = np.take_along_axis(logits, experts, axis=-1)                 # (n, k) their logits
        best = -np.sort(-logits, axis=-1)[:, :k]                              # (n, k) the k largest
        return (np.array_equal(-np.sort(-picked, axis=-1), best)
                and close_float64(weights, softmax(picked)))
    try:
        other = _as_routing(expected)
    except Exception:
        return False
    return np.array_equal(got[0], other[0]) and close(got[1], other[1], rtol=1e-6, atol=1e-9)


def _describe_routing(value) -> str:
    if isinstance(value, _Routing):
        experts, weights = value.experts, value.weights
    else:
        experts, weights = value.returned if isinstance(value, _Sorted) else value
    return f"experts {fmt(experts.tolist())} with weights {fmt(np.round(weights, 4).tolist())}"


@grader
def check_route(fn) -> bool:
    """Grade `route(logits, k)`: each token's k experts with the largest logits, and the softmax of those k
    logits as their weights. Any order of a token's k choices is accepted, and any choice among tied experts."""
    return check_function(
        "route", fn, _route_cases(), _reference_route, _route_problem, _ROUTE_MISTAKES,
        compare=_route_close, normalize=_as_routing, describe=_describe_routing, hidden=_route_hidden,
        fallback_hint="for each token (row), take the k largest logits, then weights = exp(l - max) / sum over "
                      "those k only. Print route(np.array([[2.0, 0.0, 1.0]]), 2): experts [0, 2], weights "
                      "[0.7311, 0.2689].")


# --------------------------------------------------------------------------------------------------------
# Exercise 2: moe_forward(x, W_router, experts, k) -> (n, d)
# --------------------------------------------------------------------------------------------------------
def _reference_moe(x, W_router, experts, k):
    """A per-token loop: independent of helpers.ffn.moe_ffn's grouping by expert."""
    chosen, weights = route(x @ W_router, k)
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        for e, w in zip(chosen[t], weights[t]):
            y[t] += w * experts[e](x[t:t + 1])[0]
    return y


def _mix(x, experts, chosen, weights, where="output"):
    """Sum of each token's chosen experts, weighted on the expert's output (or, wrongly, on its input)."""
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        for e, w in zip(chosen[t], weights[t]):
            y[t] += w * experts[e](x[t:t + 1])[0] if where == "output" else experts[e](w * x[t:t + 1])[0]
    return y


def _moe_assigned_per_token(x, W_router, experts, k):
    """y[t] = ... instead of y[t] += ...: each token keeps only its last choice's weighted output."""
    chosen, weights = route(x @ W_router, k)
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        for e, w in zip(chosen[t], weights[t]):
            y[t] = w * experts[e](x[t:t + 1])[0]
    return y


def _moe_assigned_per_expert(x, W_router, experts, k):
    """y[rows] = ... in a loop over experts: each token keeps only its highest-numbered expert's output."""
    chosen, weights = route(x @ W_router, k)
    y = np.zeros_like(x)
    for e, expert in enumerate(experts):
        rows, slot = np.nonzero(chosen == e)
        if rows.size:
            y[rows] = weights[rows, slot, None] * expert(x[rows])
    return y


def _moe_experts_sorted(x, W_router, experts, k):
    chosen, weights = route(x @ W_router, k)
    return _mix(x, experts, np.sort(chosen, axis=-1), weights)


def _moe_weights_reversed(x, W_router, experts, k):
    chosen, weights = route(x @ W_router, k)
    return _mix(x, experts, chosen, weights[:, ::-1])


def _moe_one_dimensional_row(x, W_router, experts, k):
    """expert(x[t])[0]: on a 1-D row the expert returns (d,), and [0] keeps only its first coordinate."""
    chosen, weights = route(x @ W_router, k)
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        for e, w in zip(chosen[t], weights[t]):
            y[t] += w * experts[e](x[t])[0]
    return y


# A learner who writes `experts, weights = route(...)` replaces the list of expert functions with route's
# array of indices, and then calls an element of that array: a TypeError ("'numpy.ndarray' object is not
# callable") or an IndexError, depending on the numbers. The check runs every function through _guarded,
# which looks at the learner's own frame when it raises and, if `experts` (the third argument) now holds an
# array, says so in the exception's message, with the learner's line kept.
_OVERWRITTEN = ("`experts` no longer holds the expert functions when your function calls one: an assignment "
                "such as `experts, weights = route(...)` replaced the list of experts with route's array of "
                "indices. Give route's arrays other names, `chosen, weights = route(...)`, and keep `experts` "
                "for the functions")


def _overwrote_experts(error: BaseException, fn: Callable, experts: Any) -> bool:
    code = getattr(fn, "__code__", None)
    if code is None or code.co_argcount < 3:
        return False
    name = code.co_varnames[2]
    for frame, _ in traceback.walk_tb(error.__traceback__):
        if frame.f_code is code:
            now = frame.f_locals.get(name)
            return now is not experts and isinstance(now, np.ndarray)
    return False


def _guarded(fn: Callable) -> Callable:
    def moe_forward(x, W_router, experts, k):
        try:
            return fn(x, W_router, experts, k)
        except Exception as error:
            if _overwrote_experts(error, fn, experts):
                raise TypeError(_OVERWRITTEN).with_traceback(error.__traceback__) from None
            raise
    return moe_forward


def _moe_overwrites_experts(x, W_router, experts, k):
    experts, weights = route(x @ W_router, k)
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        for j in range(k):
            e = experts[t, j]
            y[t] += weights[t, j] * experts[e](x[t:t + 1])[0]
    return y


def _moe_slot_as_expert(x, W_router, experts, k):
    """experts[j] where experts[chosen[t, j]] belongs: the slot number used as the expert's index."""
    chosen, weights = route(x @ W_router, k)
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        for j in range(k):
            y[t] += weights[t, j] * experts[j](x[t:t + 1])[0]
    return y


def _moe_row_zero(x, W_router, experts, k):
    """experts[e](x)[0]: every token gets what the expert wrote for token 0."""
    chosen, weights = route(x @ W_router, k)
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        for e, w in zip(chosen[t], weights[t]):
            y[t] += w * experts[e](x)[0]
    return y


def _moe_all_softmax(x, W_router, experts, k):
    logits = x @ W_router
    chosen, _ = route(logits, k)
    return _mix(x, experts, chosen, np.take_along_axis(softmax(logits), chosen, axis=-1))


def _moe_smallest(x, W_router, experts, k):
    chosen, weights = route(-(x @ W_router), k)
    return _mix(x, experts, chosen, softmax(np.take_along_axis(x @ W_router, chosen, axis=-1)))


def _moe_average(x, W_router, experts, k):
    chosen, weights = route(x @ W_router, k)
    return _mix(x, experts, chosen, np.full(weights.shape, 1 / k))


def _moe_unweighted(x, W_router, experts, k):
    chosen, weights = route(x @ W_router, k)
    return _mix(x, experts, chosen, np.ones(weights.shape))


def _moe_weight_on_input(x, W_router, experts, k):
    chosen, weights = route(x @ W_router, k)
    return _mix(x, experts, chosen, weights, where="input")


def _moe_k1(x, W_router, experts, k):
    return _reference_moe(x, W_router, experts, 1)


def _moe_k2(x, W_router, experts, k):
    return _reference_moe(x, W_router, experts, 2)


def _moe_first_weight(x, W_router, experts, k):
    chosen, weights = route(x @ W_router, k)
    return _mix(x, experts, chosen, np.repeat(weights[:, :1], k, axis=1))


def _moe_router_transposed(x, W_router, experts, k):
    chosen, weights = route(x @ W_router.T, k)
    return _mix(x, experts, chosen, weights)


def _moe_weights_over_k(x, W_router, experts, k):
    chosen, weights = route(x @ W_router, k)
    return _mix(x, experts, chosen, weights / k)


def _moe_temperature(x, W_router, experts, k):
    """The chosen logits divided by sqrt(d) before their softmax, as if they were attention scores."""
    logits = x @ W_router
    chosen, _ = route(logits, k)
    return _mix(x, experts, chosen, softmax(np.take_along_axis(logits, chosen, axis=-1) / np.sqrt(x.shape[1])))


def _moe_plus_x(x, W_router, experts, k):
    return x + _reference_moe(x, W_router, experts, k)


_MOE_MISTAKES = [
    Mistake("the expert functions overwritten by route's indices (`experts, weights = route(...)`)",
            "Name route's arrays `chosen, weights`; `experts` must keep the list of expert functions that "
            "the layer calls.", _guarded(_moe_overwrites_experts)),
    Mistake("an expert's output assigned with `=` instead of added with `+=`",
            "Each token's output is the sum of its k weighted expert outputs: y[t] += ..., so the second "
            "expert adds to the first instead of replacing it.", _moe_assigned_per_token),
    Mistake("an expert's output assigned with `=` instead of added with `+=`",
            "A token chosen by two experts gets rows from both: y[rows] += ..., so the later expert adds to "
            "what the earlier one wrote instead of replacing it.", _moe_assigned_per_expert),
    Mistake("weights not reordered with their experts: the experts were sorted by index, the weights were not",
            "Weight j of a token belongs to its expert j: use route's two arrays as they come, or reorder both "
            "with the same permutation.", _moe_experts_sorted),
    Mistake("weights in the reverse order of their experts",
            "Weight j of a token belongs to its expert j (route returns both best first): weights[t, j] "
            "multiplies the output of expert chosen[t, j].", _moe_weights_reversed),
    Mistake("the slot number used as the expert (experts[j] instead of experts[chosen[t, j]])",
            "j counts a token's choices, 0 to k - 1; the expert in slot j is chosen[t, j]. Call "
            "experts[chosen[t, j]] and weight it by weights[t, j].", _moe_slot_as_expert),
    Mistake("each expert called on all of x, and row 0 kept: every token gets token 0's output",
            "Call the expert on the token itself, experts[e](x[t:t+1])[0], or on all its tokens at once and "
            "keep each row with its token.", _moe_row_zero),
    Mistake("each expert called on the 1-D row x[t], then [0] taken: every coordinate gets the first one",
            "Called on a 1-D row, an expert returns a 1-D row, and [0] picks its first number. Keep the row 2-D "
            "with x[t:t+1] (then [0] takes the one row out), or drop the [0].", _moe_one_dimensional_row),
    Mistake("weights from a softmax over all experts, not renormalised over the chosen k",
            "Take the softmax of the k chosen logits only, so each token's weights add up to 1.",
            _moe_all_softmax),
    Mistake("the experts with the smallest logits", "Choose the k largest logits: route(x @ W_router, k).",
            _moe_smallest),
    Mistake("the k outputs averaged with equal weights",
            "Weight each expert's output by its routing weight, the softmax of the chosen logits.", _moe_average),
    Mistake("the k outputs added without their weights",
            "Multiply each expert's output by its routing weight before adding.", _moe_unweighted),
    Mistake("the weight applied to the expert's input instead of its output",
            "An expert is nonlinear, so expert(w * x) is not w * expert(x): weight the output.",
            _moe_weight_on_input),
    Mistake("the weights divided by k on top of the softmax",
            "The softmax of the k chosen logits already sums to 1 per token: weight each output by weights[t, j] "
            "as route returns it.", _moe_weights_over_k),
    Mistake("the chosen logits divided by sqrt(d) (a temperature) before the softmax",
            "The weights are the plain softmax of the chosen logits, route(x @ W_router, k); the 1/sqrt(d) "
            "scaling belongs to attention scores.", _moe_temperature),
    Mistake("k ignored: only the best expert", "Use all k chosen experts of each token.", _moe_k1),
    Mistake("k ignored: always 2 experts", "Use the argument k rather than 2.", _moe_k2),
    Mistake("the first choice's weight used for every chosen expert",
            "Expert j of a token gets weights[t, j], its own weight.", _moe_first_weight),
    Mistake("the router read transposed (x @ W_router.T)",
            "W_router has shape (d, n_experts), so the logits are x @ W_router, shape (n, n_experts). The "
            "square case (d = n_experts) runs either way; only the values give the transpose away.",
            _moe_router_transposed),
    Mistake("x added to the output (that is the residual block's job)",
            "The MoE layer returns only the weighted expert outputs; the block adds x around it.", _moe_plus_x),
]


def _moe_cases():
    rng = np.random.default_rng(11)
    square_x = np.round(rng.normal(size=(5, 4)), 2)
    square_router = np.round(rng.normal(size=(4, 4)), 2)
    square_experts = make_experts(rng, 4, 4, 6)
    x8 = np.round(rng.normal(size=(6, 3)), 2)
    router8 = np.round(rng.normal(size=(3, 8)), 2)
    experts8 = make_experts(rng, 8, 3, 5)
    idle_x = square_x.copy()
    idle_x[:, 3] = 1.0                                                 # a feature that is 1 on every token
    idle_router = square_router.copy()
    idle_router[:, 2] = [0.0, 0.0, 0.0, -50.0]                         # so expert 2's logit is always -50
    tie_router = router8.copy()
    tie_router[:, 5] = tie_router[:, 6]                                # experts 5 and 6: identical logits ...
    tie_experts = list(experts8)
    tie_experts[5] = tie_experts[6]                                    # ... and identical functions
    return [
        Case("5 tokens, top 2 of 4 experts, d = 4", {"x": square_x, "W_router": square_router,
                                                    "experts": square_experts, "k": 2}),
        Case("6 tokens, top 2 of 8 experts, d = 3", {"x": x8, "W_router": router8, "experts": experts8, "k": 2}),
        Case("k = 1: each token to its best expert", {"x": x8, "W_router": router8, "experts": experts8, "k": 1}),
        Case("k = 3 of 4", {"x": square_x, "W_router": square_router, "experts": square_experts, "k": 3}),
        Case("an expert that no token picks", {"x": idle_x, "W_router": idle_router,
                                               "experts": square_experts, "k": 2}),
        Case("two experts tied on every token (identical, so either may be chosen)",
             {"x": x8, "W_router": tie_router, "experts": tie_experts, "k": 2}),
    ]


def _moe_problem(value, case):
    n, d = case.args["x"].shape
    k, n_experts = case.args["k"], case.args["W_router"].shape[1]
    hints = {(n, k, d): "You kept each token's k expert outputs apart; add them up (weighted) over the k axis.",
             (n, n_experts): "That is the shape of the router's logits; the layer returns one d-vector per token.",
             (n, k): "That is the shape of the routing weights; the layer returns one d-vector per token.",
             (d,): "You returned one vector; return one row per token."}
    problem = array_problem(value, (n, d), shape_hints=hints)
    if problem is None and value.dtype.kind in "iub":
        return (f"returned an array of {value.dtype}: every weighted output was truncated to a whole number when "
                "it was stored. Start from np.zeros_like(x) (x's float dtype), not np.zeros_like(x, dtype=int) "
                "or an int array")
    if problem is None and value.dtype.itemsize < 8 and value.dtype.kind == "f":
        return (f"returned {value.dtype} where x is float64: a cast such as x.astype(np.float32) keeps only "
                "about 7 significant digits. Keep x's dtype: np.zeros_like(x) and no astype")
    return problem


def _moe_hidden():
    """Drawn at grading time from the secret: the sizes, k, x, the router and the experts. No two of a token's
    logits lie within 1e-6 of each other, so that every right answer chooses the reference's experts (the tie
    case, with identical experts, is public)."""
    rng = hidden_rng(12)
    n, d, n_experts, d_ff = (int(rng.integers(lo, hi)) for lo, hi in [(4, 10), (3, 7), (3, 9), (4, 9)])
    k = int(rng.integers(1, min(3, n_experts - 1) + 1))
    x, W_router = _redrawn(lambda: (np.round(rng.normal(size=(n, d)), 3),
                                    np.round(rng.normal(size=(d, n_experts)), 3)),
                           lambda drawn: _apart(drawn[0] @ drawn[1], 1e-6))
    return [Case("a random layer: 4 to 9 tokens, d from 3 to 6, the top k (1 to 3) of 3 to 8 experts",
                 {"x": x, "W_router": W_router, "experts": make_experts(rng, n_experts, d, d_ff), "k": k})]


@grader
def check_moe_forward(fn) -> bool:
    """Grade `moe_forward(x, W_router, experts, k)`: route each token to its top k experts and add their
    outputs weighted by the softmax of the chosen logits."""
    if not callable(fn):
        return not_a_function("moe_forward", fn)
    return check_function(
        "moe_forward", _guarded(fn), _moe_cases(), _reference_moe, _moe_problem, _MOE_MISTAKES,
        compare=close_float64, describe=_rows,
        hidden=_moe_hidden,
        fallback_hint="take one failing token: print its k chosen experts and their weights from route, work "
                      "out the weighted sum of those experts' outputs on that token by hand, and compare it "
                      "with your row. (Give route's arrays names other than `experts`, which holds the "
                      "functions.)")


# --------------------------------------------------------------------------------------------------------
# Exercise 3: residual_block(x, ffn) -> x + ffn(layer_norm(x))
# --------------------------------------------------------------------------------------------------------
def _reference_block(x, ffn_fn):
    return x + ffn_fn(layer_norm(x))


def _norm_ddof1(x):
    return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, ddof=1, keepdims=True) + 1e-5)


def _norm_rms(x):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-5)


def _norm_axis0(x):
    return (x - x.mean(axis=0, keepdims=True)) / np.sqrt(x.var(axis=0, keepdims=True) + 1e-5)


_EPS = f"{LN_EPS:.0e}".replace("e-0", "e-")  # "1e-5"


def _norm_no_eps(x):
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 / 0 on a constant token: NaN, without a warning
        return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True))


def _norm_whole(x):
    """One mean and variance for the whole array: every token normalised with the same numbers."""
    return (x - x.mean()) / np.sqrt(x.var() + LN_EPS)


def _norm_axis1(x):
    """Axis 1 is the features of a (T, d) array, but the tokens of a (B, T, d) batch."""
    return (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + LN_EPS)


def _norm_eps(eps, on_std=False):
    def norm(x):
        centred = x - x.mean(axis=-1, keepdims=True)
        if on_std:
            return centred / (x.std(axis=-1, keepdims=True) + eps)
        return centred / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    return norm


def _centred(x):
    return x - x.mean(axis=-1, keepdims=True)


def _eps_mistake(eps, on_std):
    where = "added to the standard deviation" if on_std else "added to the variance"
    shown = f"{eps:.0e}".replace("e-0", "e-")
    return Mistake(f"layer norm with eps = {shown} {where}, not {_EPS}",
                   f"eps only guards against dividing by 0; {shown} is large enough to shrink tokens with a small "
                   f"spread. Use the imported layer_norm (eps = {_EPS} on the variance).",
                   lambda x, f: x + f(_norm_eps(eps, on_std)(x)))


_BLOCK_MISTAKES = [
    Mistake("your layer norm has no eps, so a constant token (variance 0) divides 0 by 0",
            f"Use the imported layer_norm, which adds eps = {_EPS} to the variance: (x - mean) / "
            f"np.sqrt(var + {_EPS}). Without eps your block is right on every other case.",
            lambda x, f: x + f(_norm_no_eps(x))),
    Mistake("layer norm applied to the FFN's output instead of its input (x + LN(FFN(x)))",
            "Normalise what goes into the FFN, not what comes out of it; x itself is added back as it is. "
            "The block is x + ffn(layer_norm(x)).",
            lambda x, f: x + layer_norm(f(x))),
    Mistake("the norm and the FFN on swapped paths: LN(x) + FFN(x)",
            "The FFN reads the normalised copy and the residual carries x itself. The block is x + ffn(layer_norm(x)).",
            lambda x, f: layer_norm(x) + f(x)),
    Mistake("the norm applied after the sum, LN(x + FFN(x)) (the original Transformer's post-LN order)",
            "This block is pre-LN, as in GPT-2, Llama and Mixtral: only the FFN's input is normalised, and x "
            "itself is added back unnormalised. The block is x + ffn(layer_norm(x)).", lambda x, f: layer_norm(x + f(x))),
    Mistake("the residual is missing (FFN(LN(x)) alone)",
            "Add x itself back onto what the FFN returns. The block is x + ffn(layer_norm(x)).",
            lambda x, f: f(layer_norm(x))),
    Mistake("the FFN applied to x, not to LN(x)",
            "The FFN reads the normalised copy of x, not x. The call is ffn(layer_norm(x)).",
            lambda x, f: x + f(x)),
    Mistake("the residual adds LN(x) instead of x", "Add the original x, not its normalised copy: "
            "the FFN reads layer_norm(x), and its output is added onto x itself.",
            lambda x, f: layer_norm(x) + f(layer_norm(x))),
    Mistake("layer norm over axis 0 (across tokens) instead of each token's own features",
            "Normalise each token on its own: mean and variance over the last axis, axis=-1.",
            lambda x, f: x + f(_norm_axis0(x))),
    Mistake("layer norm over the whole array (x.mean() and x.var() with no axis) instead of each token's "
            "own features",
            "Every token is normalised on its own: mean and variance over its features, axis=-1 with "
            "keepdims=True, or the imported layer_norm.", lambda x, f: x + f(_norm_whole(x))),
    Mistake("layer norm over axis 1 instead of the last axis",
            "On a (T, d) array axis 1 is the features, but on a (B, T, d) batch it is the tokens: normalise over "
            "axis=-1, which is the features whatever the shape.", lambda x, f: x + f(_norm_axis1(x))),
    *[_eps_mistake(eps, on_std) for eps in (1e-2, 1e-3) for on_std in (False, True)],
    Mistake("layer norm that only subtracts the mean, without dividing by the standard deviation",
            "LN also rescales each token to unit variance: (x - mean) / sqrt(var + eps), the imported "
            "layer_norm.", lambda x, f: x + f(_centred(x))),
    Mistake("the FFN applied twice (ffn(ffn(LN(x))))",
            "The block calls the sublayer once, on the normalised copy of x. The block is x + ffn(layer_norm(x)).",
            lambda x, f: x + f(f(layer_norm(x)))),
    Mistake("the FFN's output subtracted from x (x - FFN(LN(x)))",
            "The residual connection adds the sublayer's output to x. The block is x + ffn(layer_norm(x)).",
            lambda x, f: x - f(layer_norm(x))),
    Mistake("x added twice (2 x + FFN(LN(x)))",
            "The residual adds x once. The block is x + ffn(layer_norm(x)).", lambda x, f: 2 * x + f(layer_norm(x))),
    Mistake("the FFN's output scaled by 1/2",
            "The residual adds the sublayer's output as it is, unscaled. The block is x + ffn(layer_norm(x)).",
            lambda x, f: x + 0.5 * f(layer_norm(x))),
    Mistake("layer norm with the sample variance (ddof=1)",
            "LayerNorm divides by the population variance, x.var(axis=-1), which is ddof=0.",
            lambda x, f: x + f(_norm_ddof1(x))),
    Mistake("the FFN's output multiplied onto x instead of added (x * FFN(LN(x)))",
            "The residual connection adds: the block's output is x plus what the sublayer computes.",
            lambda x, f: x * f(layer_norm(x))),
    Mistake("layer norm without subtracting the mean (that is RMSNorm)",
            "Subtract each token's mean before dividing by its standard deviation.",
            lambda x, f: x + f(_norm_rms(x))),
]
# Lines of the solution a first failure keeps back (issue 21): the block itself and the FFN's call on the norm.
_BLOCK_FORMULAS = ["x + ffn(layer_norm(x))", "ffn(layer_norm(x))"]
_BLOCK_MISTAKES = with_tiers(_BLOCK_MISTAKES, _BLOCK_FORMULAS)


def _identity(h):
    return h


def _zero(h):
    return np.zeros_like(h)


def _double(h):
    return 2.0 * h


def _block_cases():
    rng = np.random.default_rng(5)
    x = np.round(rng.normal(loc=1.0, scale=3.0, size=(3, 4)), 2)
    W1, b1 = np.round(rng.normal(size=(4, 8)), 2), np.round(rng.normal(size=8), 2)
    W2, b2 = np.round(rng.normal(size=(8, 4)), 2), np.round(rng.normal(size=4), 2)

    def relu_ffn(h):  # a closure, not functools.partial: a deep copy of a function is the function itself
        return ffn(h, W1, b1, W2, b2)
    x6 = np.round(rng.normal(loc=-0.5, scale=2.0, size=(5, 6)), 2)
    swiglu = make_experts(rng, 1, 6, 10)[0]
    batch = np.round(rng.normal(loc=2.0, size=(2, 3, 4)), 2)
    return [
        Case("identity FFN, the plumbing test: x + LN(x)", {"x": x, "ffn": _identity}),
        Case("an FFN that outputs 0: the block passes x through", {"x": x, "ffn": _zero}),
        Case("an FFN that doubles its input: x + 2 LN(x)", {"x": x, "ffn": _double}),
        Case("a ReLU FFN (4 -> 8 -> 4) on 3 tokens", {"x": x, "ffn": relu_ffn}),
        Case("a SwiGLU FFN (6 -> 10 -> 6) on 5 tokens", {"x": x6, "ffn": swiglu}),
        Case("one token with large values (LN rescales it)", {"x": np.array([[100.0, 102.0, 98.0, 104.0]]),
                                                             "ffn": relu_ffn}),
        Case("a batch of shape (2, 3, 4)", {"x": batch, "ffn": relu_ffn}),
        # The reason layer_norm has an eps: a token whose features are all equal has variance 0.
        Case("a constant token (all features equal: variance 0)", {"x": np.full((1, 4), 3.0), "ffn": relu_ffn}),
    ]


def _block_close(got, expected) -> bool:
    """Agreement up to the layer norm's eps: a norm with any eps from 0 to 1e-5 (added to the variance, or
    to the standard deviation) moves these outputs by at most about 3e-4, while the nearest wrong block
    (the sample variance) moves them by more than 0.1."""
    return close(got, expected, rtol=1e-4, atol=1e-3)


def _block_hidden():
    """Drawn at grading time from the secret: the shape ((T, d) or a batch (B, T, d)), x, and the sublayer's
    weights. Each token's mean is 1.5 to 3 away from 0 (by construction: centred noise plus a centre of its
    own), so a norm that does not subtract the mean is far off, and the tokens' means differ, so one mean for
    the whole array is too."""
    rng = hidden_rng(9)
    shape = (*(int(v) for v in rng.integers(1, 4, size=int(rng.integers(0, 2)))), int(rng.integers(2, 6)),
             int(rng.integers(3, 9)))
    noise = rng.normal(scale=rng.uniform(2.0, 5.0), size=shape)
    centres = rng.choice([-1.0, 1.0], size=shape[:-1] + (1,)) * rng.uniform(1.5, 3.0, size=shape[:-1] + (1,))
    x = np.round(noise - noise.mean(axis=-1, keepdims=True) + centres, 3)
    W = np.round(rng.normal(size=(shape[-1], shape[-1])), 3)

    def tanh_ffn(h):
        return np.tanh(h @ W)
    return [Case("a tanh sublayer (d -> d) on random off-centre tokens: (T, d) or a batch (B, T, d) of 1 to 3, "
                 "2 to 5 tokens, d from 3 to 8", {"x": x, "ffn": tanh_ffn})]


@grader
def check_residual_block(fn) -> bool:
    """Grade `residual_block(x, ffn)`: x + ffn(layer_norm(x)), the FFN half of a pre-LN block."""
    return check_function(
        "residual_block", fn, _block_cases(), _reference_block,
        lambda value, case: array_problem(value, case.args["x"].shape),
        _BLOCK_MISTAKES, compare=_block_close,
        describe=_rows, hidden=_block_hidden,
        fallback_hint="run your block with the identity as ffn (lambda h: h) on a small x and compare with "
                      "x + layer_norm(x) by hand: which of the three pieces (what the FFN reads, what it "
                      "returns, what that is added to) differs?")
