"""Lesson 07's graders: each wrong implementation gets its own diagnosis; correct ones in any style pass."""
import math

import numpy as np
import pytest
from hidden_under_secrets import SECRETS, assert_hidden_cases_are_drawn_from_the_secret, drawn

from helpers.block import layer_norm
from helpers.checks import _verdict, check_moe_forward, check_residual_block, check_route
from helpers.checks import lesson07 as L
from helpers.ffn import moe_ffn


def grade(check, fn, capsys):
    result = check(fn)
    return result, capsys.readouterr().out


def stable_softmax(row):
    top = max(row)
    exps = [math.exp(v - top) for v in row]
    return [v / sum(exps) for v in exps]


# --------------------------------------------------------------------------------------------------------
# check_route
# --------------------------------------------------------------------------------------------------------
def route_loops(logits, k):
    experts, weights = [], []
    for row in logits.tolist():
        chosen = sorted(range(len(row)), key=lambda e: -row[e])[:k]
        experts.append(chosen)
        weights.append(stable_softmax([row[e] for e in chosen]))
    return experts, weights


def route_numpy(logits, k):
    experts = np.argsort(-logits, axis=1)[:, :k]
    chosen = np.take_along_axis(logits, experts, axis=1)
    e = np.exp(chosen - chosen.max(axis=1, keepdims=True))
    return experts, e / e.sum(axis=1, keepdims=True)


def route_partition_renormalised(logits, k):
    """Unordered top k (argpartition) and the full softmax renormalised over them."""
    n_experts = logits.shape[1]
    experts = np.argpartition(-logits, k - 1, axis=1)[:, :k] if k < n_experts else np.tile(
        np.arange(n_experts), (len(logits), 1))
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    chosen = np.take_along_axis(p, experts, axis=1)
    return experts, chosen / chosen.sum(axis=1, keepdims=True)


def route_reversed_ascending(logits, k):
    """Ties go to the higher index here: also right."""
    experts = np.argsort(logits, axis=1, kind="stable")[:, ::-1][:, :k]
    chosen = np.take_along_axis(logits, experts, axis=1)
    return experts, [stable_softmax(row) for row in chosen.tolist()]


@pytest.mark.parametrize("fn", [route_loops, route_numpy, route_partition_renormalised,
                                route_reversed_ascending])
def test_route_accepts_correct_styles(fn, capsys):
    result, out = grade(check_route, fn, capsys)
    assert result, out
    assert "all 10 public cases pass" in out and "\u2718" not in out


def route_all_softmax(logits, k):
    experts = np.argsort(-logits, axis=1)[:, :k]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return experts, np.take_along_axis(p / p.sum(axis=1, keepdims=True), experts, axis=1)


def route_smallest(logits, k):
    experts = np.argsort(logits, axis=1)[:, :k]
    return experts, [stable_softmax(row) for row in np.take_along_axis(logits, experts, 1).tolist()]


def route_linear(logits, k):
    experts = np.argsort(-logits, axis=1)[:, :k]
    chosen = np.take_along_axis(logits, experts, 1)
    return experts, chosen / chosen.sum(axis=1, keepdims=True)


def route_raw(logits, k):
    experts = np.argsort(-logits, axis=1)[:, :k]
    return experts, np.take_along_axis(logits, experts, 1)


def route_axis0(logits, k):
    experts = np.argsort(-logits, axis=1)[:, :k]
    chosen = np.take_along_axis(logits, experts, 1)
    e = np.exp(chosen - chosen.max(axis=0))
    return experts, e / e.sum(axis=0)


def route_always_two(logits, k):
    return route_numpy(logits, 2)


def route_mask_by_value(logits, k):
    experts, weights = [], []
    for row in logits.tolist():
        left = list(row)
        chosen = []
        for _ in range(k):
            best = max(range(len(left)), key=lambda e: left[e])
            chosen.append(best)
            value = left[best]
            left = [-math.inf if v == value else v for v in left]
        experts.append(chosen)
        weights.append(stable_softmax([row[e] for e in chosen]))
    return experts, weights


def route_experts_sorted(logits, k):
    """The chosen experts sorted by index for tidiness; the weights stay in logit order."""
    experts = np.sort(np.argsort(-logits, axis=1)[:, :k], axis=1)
    top = -np.sort(-logits, axis=1)[:, :k]
    return experts, [stable_softmax(row) for row in top.tolist()]


def route_sort_both_ways(logits, k):
    """Experts from a descending argsort, weights from an ascending sort of the values."""
    experts = np.argsort(-logits, axis=1)[:, :k]
    top = np.sort(logits, axis=1)[:, -k:]
    e = np.exp(top - top.max(axis=1, keepdims=True))
    return experts, e / e.sum(axis=1, keepdims=True)


def route_first_columns(logits, k):
    # stable: on the tie cases NumPy's default sort may order tied experts otherwise than the stored mistake,
    # and a mistake is named only where it gives the learner's outcome on every failing case
    experts = np.argsort(-logits, axis=1, kind="stable")[:, :k]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = p / p.sum(axis=1, keepdims=True)
    return experts, p[:, :k] / p[:, :k].sum(axis=1, keepdims=True)


WRONG_ROUTES = [
    (route_first_columns, "weights taken from the first k columns"),
    (route_experts_sorted, "Likely mistake: weights not reordered with their experts"),
    (route_sort_both_ways, "Likely mistake: weights in the reverse order of their experts"),
    (route_all_softmax, "Likely mistake: softmax over all experts, not renormalised"),
    (route_smallest, "Likely mistake: the experts with the smallest logits"),
    (route_linear, "Likely mistake: weights are the chosen logits divided by their sum"),
    (route_raw, "Likely mistake: the raw logits returned as weights"),
    (route_axis0, "Likely mistake: softmax taken down the tokens (axis=0)"),
    (route_mask_by_value, "Likely mistake: an expert tied with the one just chosen is skipped"),
]


@pytest.mark.parametrize("fn, diagnosis", WRONG_ROUTES, ids=[f.__name__ for f, _ in WRONG_ROUTES])
def test_route_names_each_mistake(fn, diagnosis, capsys):
    result, out = grade(check_route, fn, capsys)
    assert not result
    assert diagnosis in out, out
    assert out.count("Likely mistake") + out.count("Possibly") == 1


def test_route_shows_the_learners_answer_as_returned(capsys):
    """The report shows the experts and weights in the order the function returned them, not re-sorted by its
    own weights (softmax over axis 0 gave [[1, 4], ...] from the learner's [[4, 1], ...]); the mistake is still
    named."""
    result, out = grade(check_route, route_axis0, capsys)
    first = next(line for line in out.splitlines() if "Mixtral's layout" in line)
    assert "got experts [[4, 1], [7, 3], [6, 7], [6, 5]] with weights [[0.1527, 0.284]," in first, first
    assert "Likely mistake: softmax taken down the tokens (axis=0)" in out and not result
    assert result.mistake.startswith("softmax taken down the tokens (axis=0)")

    def worst_first_linear(logits, k):            # a valid order (worst first), wrong weights
        experts, weights = route_linear(logits, k)
        return experts[:, ::-1], weights[:, ::-1]
    result, out = grade(check_route, worst_first_linear, capsys)
    first = next(line for line in out.splitlines() if "Mixtral's layout" in line)
    assert "got experts [[1, 4], [3, 7], [7, 6], [5, 6]]" in first, first
    assert "Likely mistake: weights are the chosen logits divided by their sum" in out


def test_route_k_ignored_is_explained_by_the_shape(capsys):
    result, out = grade(check_route, route_always_two, capsys)
    assert not result
    assert "\u2718 k = 1: the best expert alone, with weight 1: your function returned `experts` of shape " \
           "(3, 2); expected (3, 1), one row per token. You always keep 2; keep k = 1" in out


def test_route_exp_without_dividing_overflows_and_is_named(capsys):
    def exp_only(logits, k):
        experts = np.argsort(-logits, axis=1)[:, :k]
        with np.errstate(over="ignore"):
            return experts, np.exp(np.take_along_axis(logits, experts, 1))
    result, out = grade(check_route, exp_only, capsys)
    assert not result
    assert "Likely mistake: weights are exp(logit), never divided by their sum" in out
    assert "NaN or infinity in `weights`" in out


def test_route_naive_softmax_fails_only_on_large_logits(capsys):
    def naive(logits, k):
        experts = np.argsort(-logits, axis=1)[:, :k]
        with np.errstate(over="ignore", invalid="ignore"):
            e = np.exp(np.take_along_axis(logits, experts, 1))
            return experts, e / e.sum(axis=1, keepdims=True)
    result, out = grade(check_route, naive, capsys)
    assert not result
    failed = [line for line in out.splitlines() if line.startswith("  \u2718")]
    assert len(failed) == 3 and "\u2718 large logits" in failed[0], out
    assert "Subtract each row's largest chosen logit" in out


def _shifted(shift):
    """A softmax of the chosen logits shifted by something other than each row's largest chosen logit."""
    def route(logits, k):
        experts = np.argsort(-logits, axis=1)[:, :k]
        chosen = np.take_along_axis(logits, experts, 1)
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            e = np.exp(chosen - shift(logits, chosen))
            return experts, e / e.sum(axis=1, keepdims=True)
    return route


@pytest.mark.parametrize("shift", [lambda l, c: c.min(axis=1, keepdims=True),
                                   lambda l, c: c.mean(axis=1, keepdims=True),
                                   lambda l, c: l.max(),
                                   lambda l, c: l.max(axis=1, keepdims=True).max()],
                         ids=["row_min", "row_mean", "global_max", "global_max_of_rows"])
def test_route_an_unsafe_shift_fails_and_says_which_shift_is_safe(shift, capsys):
    """Every earlier case has its largest logits in each row close together, so any shift passes them; the
    spread-out rows overflow a row's minimum or mean and underflow the whole array's maximum."""
    result, out = grade(check_route, _shifted(shift), capsys)
    assert not result
    assert "Subtract each row's largest chosen logit before exp; a row's minimum or mean, or the largest logit " \
           "of the whole array, can still overflow or underflow" in out, out


def test_route_a_safe_shift_passes(capsys):
    """Any per-row shift at least the row's largest chosen logit and close to it is right: the row's largest
    logit over all experts, or the chosen maximum."""
    for shift in (lambda l, c: l.max(axis=1, keepdims=True), lambda l, c: c.max(axis=1, keepdims=True)):
        result, out = grade(check_route, _shifted(shift), capsys)
        assert result, out


def route_scipy_no_axis(logits, k):
    from scipy.special import softmax as scipy_softmax
    experts = np.argsort(-logits, axis=1)[:, :k]
    return experts, scipy_softmax(np.take_along_axis(logits, experts, 1))


def route_scipy_axis(logits, k):
    from scipy.special import softmax as scipy_softmax
    experts = np.argsort(-logits, axis=1)[:, :k]
    return experts, scipy_softmax(np.take_along_axis(logits, experts, 1), axis=-1)


def route_sigmoid(logits, k):
    experts = np.argsort(-logits, axis=1)[:, :k]
    with np.errstate(over="ignore", invalid="ignore"):
        s = 1 / (1 + np.exp(-np.take_along_axis(logits, experts, 1)))
        return experts, s / s.sum(axis=1, keepdims=True)


def route_temperature(logits, k):
    experts = np.argsort(-logits, axis=1)[:, :k]
    chosen = np.take_along_axis(logits, experts, 1) / math.sqrt(k)
    return experts, [stable_softmax(row) for row in chosen.tolist()]


def route_eps_sum(logits, k):
    experts = np.argsort(-logits, axis=1)[:, :k]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = np.take_along_axis(p / p.sum(axis=1, keepdims=True), experts, 1)
    return experts, p / (p.sum(axis=1, keepdims=True) + 1e-3)


def test_route_scipy_softmax_with_axis_passes(capsys):
    result, out = grade(check_route, route_scipy_axis, capsys)
    assert result, out


@pytest.mark.parametrize("fn, diagnosis", [
    (route_scipy_no_axis, "one softmax over the whole array (scipy.special.softmax without axis=-1)"),
    (route_sigmoid, "a sigmoid gate on each chosen logit instead of a softmax"),
    (route_temperature, "the chosen logits divided by sqrt(k)"),
    (route_eps_sum, "an eps added to the sum when renormalising"),
], ids=["scipy_no_axis", "sigmoid", "temperature", "eps_sum"])
def test_route_names_softmax_variants(fn, diagnosis, capsys):
    result, out = grade(check_route, fn, capsys)
    assert not result
    assert f"Likely mistake: {diagnosis}" in out, out


def test_route_kth_threshold_keeps_every_tied_expert(capsys):
    def threshold(logits, k):
        kth = -np.sort(-logits, axis=1)[:, k - 1:k]
        experts = [np.flatnonzero(row >= t) for row, t in zip(logits, kth)]
        return experts, [stable_softmax(row[e].tolist()) for row, e in zip(logits, experts)]
    result, out = grade(check_route, threshold, capsys)
    assert not result
    assert "\u2718 a tie for second place" in out and "keeps every tied expert" in out
    assert "\u2714 top 2 of 8 experts" in out


def test_route_ragged_rows_are_explained(capsys):
    def ragged(logits, k):
        experts = [list(range(k + (t % 2))) for t in range(len(logits))]
        return experts, [[1.0 / len(e)] * len(e) for e in experts]
    result, out = grade(check_route, ragged, capsys)
    assert not result and "rows of different lengths" in out


def test_route_same_expert_twice_is_explained(capsys):
    def by_value(logits, k):
        experts = [[int(np.flatnonzero(row == v)[0]) for v in -np.sort(-row)[:k]] for row in logits]
        return experts, [stable_softmax(row[e].tolist()) for row, e in zip(logits, experts)]
    result, out = grade(check_route, by_value, capsys)
    assert not result and "the same expert twice for token 0" in out
    assert "This token has tied logits: looking an expert up by its value" in out


def route_sorted_down_tokens(logits, k):
    """The trial learner's slip: argsort along axis 0, ranking the tokens in each expert's column."""
    experts = np.argsort(-logits, axis=0)[:, :k]
    chosen = np.take_along_axis(logits, experts, axis=-1)
    e = np.exp(chosen - chosen.max(axis=-1, keepdims=True))
    return experts, e / e.sum(axis=-1, keepdims=True)


def route_sorted_down_tokens_transposed(logits, k):
    experts = np.argsort(-logits, axis=0)[:k].T
    chosen = np.take_along_axis(logits, experts, axis=-1)
    return experts, np.exp(chosen) / np.exp(chosen).sum(axis=-1, keepdims=True)


def test_route_sorted_down_the_tokens_is_named_not_blamed_on_ties(capsys):
    result, out = grade(check_route, route_sorted_down_tokens, capsys)
    assert not result
    first = next(line for line in out.splitlines() if "\u2718" in line)
    # Mixtral's case has no ties: the message must not talk about them.
    assert "top 2 of 8 experts" in first and "tied" not in first and "sort down the tokens (axis 0)" in first, out
    assert "returned token positions as experts" in out          # k = 1: no repeat, still named
    assert "Likely mistake: experts sorted down the tokens (argsort along axis 0)" in out
    assert result.mistake.startswith("experts sorted down the tokens"), result.mistake


def test_route_sorted_down_the_tokens_and_transposed_is_named(capsys):
    result, out = grade(check_route, route_sorted_down_tokens_transposed, capsys)
    assert not result and "Likely mistake: experts sorted down the tokens (argsort along axis 0, then transposed)" in out


def test_route_same_expert_twice_without_ties_says_nothing_of_ties(capsys):
    def first_twice(logits, k):
        best = np.argmax(logits, axis=-1)
        experts = np.repeat(best[:, None], k, axis=1)             # the best expert k times
        return experts, np.full(experts.shape, 1.0 / k)
    result, out = grade(check_route, first_twice, capsys)
    first = next(line for line in out.splitlines() if "\u2718" in line)
    assert not result and "the same expert twice for token 0" in first and "tied" not in first, out


def test_a_right_answer_is_never_taken_for_a_sort_down_the_tokens():
    """A routing whose experts happen to equal the columns of a sort down the tokens is judged by its value."""
    from helpers.checks import lesson07 as L7
    from helpers.checks._core import Case
    logits = np.array([[3.0, 0.0, 0.0], [2.0, 3.0, 0.0], [1.0, 0.0, 3.0]])
    experts, weights = L7.route(logits, 1)
    assert experts.ravel().tolist() == np.argsort(-logits, axis=0)[:, :1].ravel().tolist()   # they coincide
    assert L7._route_problem((experts, weights), Case("coincide", {"logits": logits, "k": 1})) is None


def test_route_logits_instead_of_indices(capsys):
    def values(logits, k):
        top = -np.sort(-logits, axis=1)[:, :k]
        return top, [stable_softmax(row) for row in top.tolist()]
    result, out = grade(check_route, values, capsys)
    assert not result and "not whole numbers" in out


def test_route_float_indices_are_rejected(capsys):
    def filled_zeros(logits, k):
        experts, weights = route_numpy(logits, k)
        as_floats = np.zeros(experts.shape)
        as_floats[:] = experts
        return as_floats, weights
    result, out = grade(check_route, filled_zeros, capsys)
    assert not result and "returned `experts` as floats (the first is" in out, out
    assert "a float cannot index the list of experts" in result.mistake

    def float_lists(logits, k):
        experts, weights = route_numpy(logits, k)
        return [[float(e) for e in row] for row in experts], weights
    result, out = grade(check_route, float_lists, capsys)
    assert not result and "returned `experts` as floats" in out


def test_route_swapped_return_is_named(capsys):
    def swapped(logits, k):
        experts, weights = route_numpy(logits, k)
        return weights, experts
    result, out = grade(check_route, swapped, capsys)
    assert not result and "returned `weights, experts` in the opposite order" in out, out


def test_route_hidden_case_runs_when_graded(monkeypatch, capsys):
    monkeypatch.setenv("FFN_GRADING", "1")
    for fn in (route_loops, route_numpy, route_partition_renormalised, route_reversed_ascending):
        result, out = grade(check_route, fn, capsys)
        assert result and "all 12 cases pass, 2 of them hidden" in out, out
    result, out = grade(check_route, route_experts_sorted, capsys)
    assert not result and result.total == 12 and result.hidden == 2


def test_route_counting_from_one(capsys):
    def from_one(logits, k):
        experts, weights = route_numpy(logits, k)
        return experts + 1, weights
    result, out = grade(check_route, from_one, capsys)
    assert not result and "Expert indices count from 0" in out


def test_route_weights_for_every_expert(capsys):
    def every(logits, k):
        experts, weights = route_numpy(logits, k)
        full = np.zeros_like(logits)
        np.put_along_axis(full, experts, weights, axis=1)
        return experts, full
    result, out = grade(check_route, every, capsys)
    assert not result and "a weight for every expert" in out


def test_route_single_return_value(capsys):
    result, out = grade(check_route, lambda logits, k: np.argsort(-logits)[:, :k], capsys)
    assert not result and "return two arrays, `experts, weights`" in out


def test_route_changing_logits_in_place(capsys):
    def in_place(logits, k):
        experts, weights = route_numpy(logits, k)
        logits[:] = 0.0
        return experts, weights
    result, out = grade(check_route, in_place, capsys)
    assert not result and "changed its input `logits` in place" in out


@pytest.mark.parametrize("fn, message", [
    (lambda logits, k: (_ for _ in ()).throw(NotImplementedError()), "not implemented yet"),
    (lambda logits, k: None, "returned None"),
    (lambda logits, k: logits[100], "raised IndexError"),
], ids=["stub", "none", "raises"])
def test_route_stub_none_and_exception(fn, message, capsys):
    result, out = grade(check_route, fn, capsys)
    assert not result and message in out


def test_route_not_a_function(capsys):
    result, out = grade(check_route, ([[0, 1]], [[0.5, 0.5]]), capsys)
    assert not result and "expected a function" in out


def test_route_cases_have_ties_only_where_intended():
    for case in L._route_cases():
        rows = case.args["logits"].tolist()
        has_tie = any(len(set(row)) < len(row) for row in rows)
        assert has_tie == ("tie" in case.name), case.name


# --------------------------------------------------------------------------------------------------------
# check_moe_forward
# --------------------------------------------------------------------------------------------------------
def moe_per_token(x, W_router, experts, k):
    y = np.zeros_like(x)
    for t in range(len(x)):
        logits = x[t] @ W_router
        chosen = np.argsort(-logits)[:k]
        w = np.exp(logits[chosen] - logits[chosen].max())
        w /= w.sum()
        for e, weight in zip(chosen, w):
            y[t] += weight * experts[e](x[t][None, :])[0]
    return y


def moe_grouped(x, W_router, experts, k):
    logits = x @ W_router
    chosen = np.argsort(-logits, axis=1)[:, :k]
    picked = np.take_along_axis(logits, chosen, 1)
    w = np.exp(picked - picked.max(1, keepdims=True))
    w /= w.sum(1, keepdims=True)
    y = np.zeros_like(x)
    for e in range(len(experts)):
        tokens, slot = np.nonzero(chosen == e)
        if len(tokens):
            y[tokens] += w[tokens, slot][:, None] * experts[e](x[tokens])
    return y


def moe_dense_then_mask(x, W_router, experts, k):
    """Every expert on every token, then a (n, n_experts) weight matrix that is 0 off the chosen k."""
    logits = x @ W_router
    keep = np.zeros(logits.shape, dtype=bool)
    np.put_along_axis(keep, np.argsort(-logits, axis=1)[:, :k], True, axis=1)
    p = np.where(keep, np.exp(logits - logits.max(1, keepdims=True)), 0.0)
    p /= p.sum(1, keepdims=True)
    outputs = np.stack([expert(x) for expert in experts], axis=1)   # (n, n_experts, d)
    return np.einsum("ne,ned->nd", p, outputs)


def test_moe_threshold_mask_fails_only_when_a_tie_lets_k_plus_one_through(capsys):
    def threshold(x, W_router, experts, k):
        logits = x @ W_router
        kth = -np.sort(-logits, axis=1)[:, k - 1:k]
        p = np.where(logits >= kth, np.exp(logits - logits.max(1, keepdims=True)), 0.0)
        p /= p.sum(1, keepdims=True)
        return np.einsum("ne,ned->nd", p, np.stack([expert(x) for expert in experts], axis=1))
    result, out = grade(check_moe_forward, threshold, capsys)
    assert not result
    assert out.count("  \u2718") == 1 and "\u2718 two experts tied" in out


@pytest.mark.parametrize("fn", [moe_per_token, moe_grouped, moe_dense_then_mask],
                         ids=["per_token", "grouped", "dense_then_mask"])
def test_moe_accepts_correct_styles(fn, capsys):
    result, out = grade(check_moe_forward, fn, capsys)
    assert result, out
    assert "all 6 public cases pass" in out


def moe_all_softmax(x, W_router, experts, k):
    y = np.zeros_like(x)
    for t in range(len(x)):
        logits = x[t] @ W_router
        p = np.exp(logits - logits.max())
        p /= p.sum()
        for e in np.argsort(-logits)[:k]:
            y[t] += p[e] * experts[e](x[t:t + 1])[0]
    return y


def moe_smallest(x, W_router, experts, k):
    y = np.zeros_like(x)
    for t in range(len(x)):
        logits = x[t] @ W_router
        chosen = np.argsort(logits)[:k]
        w = np.exp(logits[chosen] - logits[chosen].max())
        for e, weight in zip(chosen, w / w.sum()):
            y[t] += weight * experts[e](x[t:t + 1])[0]
    return y


def _with_weights(make_weights, where="output", k_used=None):
    def fn(x, W_router, experts, k):
        kk = k if k_used is None else k_used
        y = np.zeros_like(x)
        for t in range(len(x)):
            logits = x[t] @ W_router
            chosen = np.argsort(-logits, kind="stable")[:kk]
            w = np.exp(logits[chosen] - logits[chosen].max())
            w = make_weights(w / w.sum())
            for e, weight in zip(chosen, w):
                if where == "output":
                    y[t] += weight * experts[e](x[t:t + 1])[0]
                else:
                    y[t] += experts[e](weight * x[t:t + 1])[0]
        return y
    return fn


def moe_transposed_router(x, W_router, experts, k):
    logits = x @ W_router.T                         # runs only when d == n_experts
    return moe_grouped_from_logits(x, logits, experts, k)


def moe_plus_x(x, W_router, experts, k):
    return x + moe_grouped(x, W_router, experts, k)


def moe_assigned_per_token(x, W_router, experts, k):
    y = np.zeros_like(x)
    for t in range(len(x)):
        logits = x[t] @ W_router
        chosen = np.argsort(-logits)[:k]
        w = np.exp(logits[chosen] - logits[chosen].max())
        for e, weight in zip(chosen, w / w.sum()):
            y[t] = weight * experts[e](x[t:t + 1])[0]          # = where += belongs
    return y


def moe_assigned_per_expert(x, W_router, experts, k):
    logits = x @ W_router
    chosen = np.argsort(-logits, axis=1)[:, :k]
    picked = np.take_along_axis(logits, chosen, 1)
    w = np.exp(picked - picked.max(1, keepdims=True))
    w /= w.sum(1, keepdims=True)
    y = np.zeros_like(x)
    for e in range(len(experts)):
        tokens, slot = np.nonzero(chosen == e)
        if len(tokens):
            y[tokens] = w[tokens, slot][:, None] * experts[e](x[tokens])   # = where += belongs
    return y


def moe_experts_sorted(x, W_router, experts, k):
    logits = x @ W_router
    chosen = np.sort(np.argsort(-logits, axis=1)[:, :k], axis=1)          # tidied, but weights are not
    top = -np.sort(-logits, axis=1)[:, :k]
    w = np.exp(top - top.max(1, keepdims=True))
    w /= w.sum(1, keepdims=True)
    y = np.zeros_like(x)
    for t in range(len(x)):
        for j in range(k):
            y[t] += w[t, j] * experts[chosen[t, j]](x[t:t + 1])[0]
    return y


def moe_one_dimensional_row(x, W_router, experts, k):
    from helpers.moe import route
    chosen, weights = route(x @ W_router, k)
    y = np.zeros_like(x)
    for t in range(len(x)):
        for j in range(k):
            y[t] += weights[t, j] * experts[chosen[t, j]](x[t])[0]
    return y


def moe_old_hint_followed(x, W_router, experts, k):
    """The old fallback hint, typed in as it read: `experts, weights = route(logits, k)`."""
    from helpers.moe import route
    logits = x @ W_router
    experts, weights = route(logits, k)
    y = np.zeros_like(x)
    for t in range(len(x)):
        for j in range(k):
            e = experts[t, j]
            y[t] += weights[t, j] * experts[e](x[t:t + 1])[0]
    return y


def moe_overwritten_grouped(x, W_router, experts, k):
    """The same overwrite in a loop over experts."""
    from helpers.moe import route
    experts, weights = route(x @ W_router, k)
    y = np.zeros_like(x)
    for e in range(W_router.shape[1]):
        rows, slot = np.nonzero(experts == e)
        if rows.size:
            y[rows] += weights[rows, slot, None] * experts[e](x[rows])
    return y


def moe_slot_as_expert(x, W_router, experts, k):
    from helpers.moe import route
    chosen, weights = route(x @ W_router, k)
    y = np.zeros_like(x)
    for t in range(len(x)):
        for j in range(k):
            y[t] += weights[t, j] * experts[j](x[t:t + 1])[0]          # experts[j]: the slot, not the expert
    return y


def moe_row_zero(x, W_router, experts, k):
    from helpers.moe import route
    chosen, weights = route(x @ W_router, k)
    y = np.zeros_like(x)
    for t in range(len(x)):
        for j in range(k):
            y[t] += weights[t, j] * experts[chosen[t, j]](x)[0]        # all tokens in, row 0 kept
    return y


def moe_temperature(x, W_router, experts, k):
    logits = x @ W_router
    chosen = np.argsort(-logits, axis=1)[:, :k]
    picked = np.take_along_axis(logits, chosen, 1) / math.sqrt(x.shape[1])
    w = np.exp(picked - picked.max(1, keepdims=True))
    w /= w.sum(1, keepdims=True)
    y = np.zeros_like(x)
    for t in range(len(x)):
        for j in range(k):
            y[t] += w[t, j] * experts[chosen[t, j]](x[t:t + 1])[0]
    return y


def moe_int_output(x, W_router, experts, k):
    y = np.zeros_like(x, dtype=int)
    for t, row in enumerate(moe_per_token(x, W_router, experts, k)):
        y[t] = y[t] + row
    return y


def moe_float32(x, W_router, experts, k):
    return moe_per_token(x.astype(np.float32), W_router.astype(np.float32), experts, k)


@pytest.mark.parametrize("fn, message", [
    (moe_int_output, "returned an array of int64: every weighted output was truncated to a whole number"),
    (moe_float32, "returned float32 where x is float64"),
], ids=["int", "float32"])
def test_moe_a_narrower_dtype_is_named(fn, message, capsys):
    """An int y truncates every output (mostly to 0); float32 prints the same 4 digits as the reference:
    either way the dtype is the news."""
    result, out = grade(check_moe_forward, fn, capsys)
    assert not result and message in out, out


WRONG_MOES = [
    (moe_slot_as_expert, "the slot number used as the expert"),
    (moe_row_zero, "each expert called on all of x, and row 0 kept"),
    (moe_assigned_per_token, "an expert's output assigned with `=` instead of added"),
    (moe_assigned_per_expert, "an expert's output assigned with `=` instead of added"),
    (moe_experts_sorted, "weights not reordered with their experts"),
    (_with_weights(lambda w: w[::-1]), "weights in the reverse order of their experts"),
    (moe_one_dimensional_row, "each expert called on the 1-D row x[t]"),
    (moe_old_hint_followed, "the expert functions overwritten by route's indices"),
    (moe_overwritten_grouped, "the expert functions overwritten by route's indices"),
    (moe_all_softmax, "softmax over all experts, not renormalised"),
    (moe_smallest, "the experts with the smallest logits"),
    (_with_weights(lambda w: np.full(len(w), 1 / len(w))), "averaged with equal weights"),
    (_with_weights(lambda w: np.ones(len(w))), "added without their weights"),
    (_with_weights(lambda w: w, where="input"), "applied to the expert's input instead of its output"),
    (_with_weights(lambda w: w, k_used=1), "k ignored: only the best expert"),
    (_with_weights(lambda w: w, k_used=2), "k ignored: always 2 experts"),
    (_with_weights(lambda w: np.full(len(w), w[0])), "the first choice's weight used for every chosen"),
    (moe_transposed_router, "the router read transposed"),
    (moe_plus_x, "x added to the output"),
    (_with_weights(lambda w: w / len(w)), "the weights divided by k on top of the softmax"),
    (moe_temperature, "the chosen logits divided by sqrt(d)"),
]


@pytest.mark.parametrize("fn, diagnosis", WRONG_MOES, ids=[d.split(":")[0][:30] for _, d in WRONG_MOES])
def test_moe_names_each_mistake(fn, diagnosis, capsys):
    result, out = grade(check_moe_forward, fn, capsys)
    assert not result
    verdict = [line for line in out.splitlines() if line.startswith(("  Likely mistake", "  Possibly"))]
    assert len(verdict) == 1 and diagnosis in verdict[0], out


def test_moe_overwritten_experts_get_their_own_message_with_the_learners_line(capsys):
    result, out = grade(check_moe_forward, moe_old_hint_followed, capsys)
    assert not result
    assert "raised TypeError: `experts` no longer holds the expert functions" in out, out
    assert "`y[t] += weights[t, j] * experts[e](x[t:t + 1])[0]`" in out, out
    assert result.mistake.startswith("the expert functions overwritten"), result.mistake
    assert "`chosen, weights = route(...)`" in out and "Hint:" not in out


def test_moe_fallback_hint_does_not_overwrite_experts(capsys):
    """The hint printed when no mistake is recognised must not tell the learner to rebind `experts`."""
    def odd(x, W_router, experts, k):
        return moe_grouped(x, W_router, experts, k) * 1.5
    result, out = grade(check_moe_forward, odd, capsys)
    assert not result and "Hint:" in out and "experts, weights =" not in out, out
    assert "names other than `experts`" in out


def test_moe_other_type_errors_are_not_blamed_on_experts(capsys):
    def calls_k(x, W_router, experts, k):
        return k(x)
    result, out = grade(check_moe_forward, calls_k, capsys)
    assert not result and "'int' object is not callable" in out and "no longer holds" not in out


def test_moe_hidden_case_runs_when_graded(monkeypatch, capsys):
    monkeypatch.setenv("FFN_GRADING", "1")
    for fn in (moe_per_token, moe_grouped, moe_dense_then_mask):
        result, out = grade(check_moe_forward, fn, capsys)
        assert result and "all 7 cases pass, 1 of them hidden" in out, out


def test_moe_transposed_router_runs_on_the_square_case_only(capsys):
    result, out = grade(check_moe_forward, moe_transposed_router, capsys)
    assert not result
    assert "\u2718 5 tokens, top 2 of 4 experts, d = 4: expected" in out
    assert "\u2718 6 tokens, top 2 of 8 experts, d = 3: your function raised ValueError" in out
    assert "Likely mistake: the router read transposed" in out


def moe_grouped_from_logits(x, logits, experts, k):
    chosen = np.argsort(-logits, axis=1)[:, :k]
    picked = np.take_along_axis(logits, chosen, 1)
    w = np.exp(picked - picked.max(1, keepdims=True))
    w /= w.sum(1, keepdims=True)
    y = np.zeros_like(x)
    for t in range(len(x)):
        for j in range(k):
            y[t] += w[t, j] * experts[chosen[t, j]](x[t:t + 1])[0]
    return y


def test_moe_stacked_outputs_get_a_shape_hint(capsys):
    def stacked(x, W_router, experts, k):
        chosen = np.argsort(-(x @ W_router), axis=1)[:, :k]
        return np.stack([np.stack([experts[e](x[t:t + 1])[0] for e in chosen[t]]) for t in range(len(x))])
    result, out = grade(check_moe_forward, stacked, capsys)
    assert not result and "add them up (weighted) over the k axis" in out


def test_moe_returning_the_logits_gets_a_shape_hint(capsys):
    result, out = grade(check_moe_forward, lambda x, W, experts, k: x @ W, capsys)
    assert not result and "shape of the router's logits" in out


def test_moe_changing_x_in_place(capsys):
    def in_place(x, W_router, experts, k):
        y = moe_grouped(x, W_router, experts, k)
        x *= 0
        return y
    result, out = grade(check_moe_forward, in_place, capsys)
    assert not result and "changed its input `x` in place" in out


def test_moe_masking_by_value_fails_only_the_tie_case(capsys):
    def mask_by_value(x, W_router, experts, k):
        logits = x @ W_router
        y = np.zeros_like(x)
        for t in range(len(x)):
            left, chosen = logits[t].copy(), []
            for _ in range(k):
                best = int(np.argmax(left))
                chosen.append(best)
                left[left == left[best]] = -np.inf
            w = np.exp(logits[t, chosen] - logits[t, chosen].max())
            for e, weight in zip(chosen, w / w.sum()):
                y[t] += weight * experts[e](x[t:t + 1])[0]
        return y
    result, out = grade(check_moe_forward, mask_by_value, capsys)
    assert not result
    assert out.count("  \u2718") == 1 and "\u2718 two experts tied" in out


@pytest.mark.parametrize("fn, message", [
    (lambda x, W, e, k: (_ for _ in ()).throw(NotImplementedError()), "not implemented yet"),
    (lambda x, W, e, k: None, "returned None"),
    (lambda x, W, e, k: e[99](x), "raised IndexError"),
    (lambda x, W, e, k: [[0.0] * x.shape[1]] * len(x), "returned a list"),
    (lambda x, W, e, k: np.full(x.shape, np.nan), "NaN or infinity"),
], ids=["stub", "none", "raises", "list", "nan"])
def test_moe_stub_none_exception_type_and_nan(fn, message, capsys):
    result, out = grade(check_moe_forward, fn, capsys)
    assert not result and message in out


def test_moe_cases_exercise_what_they_claim():
    cases = {c.name: c.args for c in L._moe_cases()}
    idle = cases["an expert that no token picks"]
    assert 2 not in np.argsort(-(idle["x"] @ idle["W_router"]), axis=1)[:, :2]
    tie = cases["two experts tied on every token (identical, so either may be chosen)"]
    logits = tie["x"] @ tie["W_router"]
    assert np.array_equal(logits[:, 5], logits[:, 6]) and tie["experts"][5] is tie["experts"][6]
    ranks = np.argsort(np.argsort(-logits, axis=1, kind="stable"), axis=1)
    assert np.any(ranks[:, 5] == 1)          # on some token the tied pair straddles the top-2 boundary ...
    assert np.any(ranks[:, 5] == 0)          # ... and on another both are the top 2
    for name, args in cases.items():         # no other ties anywhere
        logits = np.delete(args["x"] @ args["W_router"], 5, axis=1) if "tied" in name else \
            args["x"] @ args["W_router"]
        assert all(len(set(row)) == len(row) for row in logits.tolist()), name
    square = cases["5 tokens, top 2 of 4 experts, d = 4"]
    assert square["W_router"].shape == (4, 4) and not np.allclose(square["W_router"], square["W_router"].T)


# --------------------------------------------------------------------------------------------------------
# check_residual_block
# --------------------------------------------------------------------------------------------------------
def block_reference_style(x, ffn):
    h = layer_norm(x)
    return x + ffn(h)


def block_own_norm(x, ffn):
    mean = x.mean(axis=-1, keepdims=True)
    std = x.std(axis=-1, keepdims=True)
    return x + ffn((x - mean) / (std + 1e-6))


def block_rows_loop(x, ffn):
    flat = x.reshape(-1, x.shape[-1])
    normed = []
    for row in flat.tolist():
        m = sum(row) / len(row)
        var = sum((v - m) ** 2 for v in row) / len(row)
        normed.append([(v - m) / math.sqrt(var + 1e-5) for v in row])
    return x + ffn(np.array(normed).reshape(x.shape))


def block_eps_on_std(x, ffn):
    """eps added to the standard deviation instead of the variance (as in some textbook code)."""
    centred = x - x.mean(axis=-1, keepdims=True)
    return x + ffn(centred / (x.std(axis=-1, keepdims=True) + 1e-5))


@pytest.mark.parametrize("fn", [block_reference_style, block_own_norm, block_rows_loop, block_eps_on_std])
def test_block_accepts_correct_styles(fn, capsys):
    result, out = grade(check_residual_block, fn, capsys)
    assert result, out
    assert "all 8 public cases pass" in out


def _norm(x, axis=-1, ddof=0, center=True):
    c = x - x.mean(axis=axis, keepdims=True) if center else x
    scale = x.var(axis=axis, keepdims=True, ddof=ddof) if center else (x ** 2).mean(axis=axis, keepdims=True)
    return c / np.sqrt(scale + 1e-5)


WRONG_BLOCKS = [
    (lambda x, f: x + _norm(f(x)), "layer norm applied to the FFN's output instead of its input"),
    (lambda x, f: _norm(x + f(x)), "the norm applied after the sum"),
    (lambda x, f: f(_norm(x)), "the residual is missing"),
    (lambda x, f: x + f(x), "the FFN applied to x, not to LN(x)"),
    (lambda x, f: _norm(x) + f(_norm(x)), "the residual adds LN(x) instead of x"),
    (lambda x, f: x + f(_norm(x, axis=0)), "layer norm over axis 0 (across tokens)"),
    (lambda x, f: x + f(_norm(x, ddof=1)), "layer norm with the sample variance (ddof=1)"),
    (lambda x, f: x + f(_norm(x, center=False)), "layer norm without subtracting the mean"),
    (lambda x, f: x * f(_norm(x)), "the FFN's output multiplied onto x instead of added"),
    (lambda x, f: _norm(x) + f(x), "the norm and the FFN on swapped paths"),
    (lambda x, f: x + f((x - x.mean()) / np.sqrt(x.var() + 1e-5)), "layer norm over the whole array"),
    (lambda x, f: x + f(_norm(x, axis=1)), "layer norm over axis 1 instead of the last axis"),
    (lambda x, f: x + f(layer_norm(x, eps=1e-2)), "layer norm with eps = 1e-2 added to the variance"),
    (lambda x, f: x + f((x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-3)),
     "layer norm with eps = 1e-3 added to the variance"),
    (lambda x, f: x + f((x - x.mean(-1, keepdims=True)) / (x.std(-1, keepdims=True) + 1e-2)),
     "layer norm with eps = 1e-2 added to the standard deviation"),
    (lambda x, f: x + f(x - x.mean(axis=-1, keepdims=True)), "layer norm that only subtracts the mean"),
    (lambda x, f: x + f(f(layer_norm(x))), "the FFN applied twice"),
    (lambda x, f: x - f(layer_norm(x)), "the FFN's output subtracted from x"),
    (lambda x, f: np.add(x, x) + f(layer_norm(x)), "x added twice"),
    (lambda x, f: x + f(layer_norm(x)) / 2, "the FFN's output scaled by 1/2"),
]


@pytest.mark.parametrize("fn, diagnosis", WRONG_BLOCKS, ids=[d[:30] for _, d in WRONG_BLOCKS])
def test_block_names_each_mistake(fn, diagnosis, capsys):
    result, out = grade(check_residual_block, fn, capsys)
    assert not result
    assert f"Likely mistake: {diagnosis}" in out, out


def textbook_no_eps(x, ffn):
    """The trial learner's layer norm: right, but without eps."""
    m = x.mean(axis=-1, keepdims=True)
    return x + ffn((x - m) / x.std(axis=-1, keepdims=True))


def test_block_without_eps_fails_only_the_constant_token_and_is_named(capsys):
    with np.errstate(invalid="ignore"):
        result, out = grade(check_residual_block, textbook_no_eps, capsys)
    assert not result
    assert "1 of 8 cases failed" in out, out
    failed = [line for line in out.splitlines() if line.startswith("  \u2718")]
    assert len(failed) == 1 and "a constant token" in failed[0] and "NaN" in failed[0], out
    assert "Likely mistake: your layer norm has no eps" in out and "eps = 1e-5" in out, out


def test_block_tolerance_accepts_eps_from_0_to_1e5_and_nothing_near_a_mistake():
    """The eps-free norm moves the ordinary cases by well under the tolerance; every wrong block moves at
    least one case by far more, so loosening the tolerance for eps cannot let a mistake pass."""
    cases = [c for c in L._block_cases() if "constant" not in c.name]
    for eps in (0.0, 1e-7, 1e-6, 1e-5):
        def block(x, f, eps=eps):
            m, v = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
            return x + f((x - m) / np.sqrt(v + eps))
        for case in cases:
            x, f = case.args["x"], case.args["ffn"]
            assert L._block_close(block(x, f), L._reference_block(x, f)), (eps, case.name)
    for mistake in L._BLOCK_MISTAKES:
        if "no eps" in mistake.name:
            continue
        worst = max(float(np.max(np.abs(mistake.fn(c.args["x"], c.args["ffn"])
                                        - L._reference_block(c.args["x"], c.args["ffn"])))) for c in cases)
        # a too-large eps (1e-3) is the nearest mistake: still over 10 times the tolerance
        assert worst > (10 if "eps =" in mistake.name else 100) * 1e-3, (mistake.name, worst)


def test_block_identity_case_catches_the_wiring_but_not_where_ln_sits():
    """The seed's plumbing test: with the identity as FFN, the residual wiring mistakes show; LN applied to
    the FFN's output does not (LN(identity(x)) = identity(LN(x))), which is why the doubling case exists."""
    x = L._block_cases()[0].args["x"]
    for fn, name in WRONG_BLOCKS[1:5]:
        assert not np.allclose(fn(x, L._identity), L._reference_block(x, L._identity)), name
    ln_after = WRONG_BLOCKS[0][0]
    assert np.allclose(ln_after(x, L._identity), L._reference_block(x, L._identity))
    assert not np.allclose(ln_after(x, L._double), L._reference_block(x, L._double))


def test_block_hidden_case_runs_when_graded(monkeypatch, capsys):
    monkeypatch.setenv("FFN_GRADING", "1")
    for fn in (block_reference_style, block_own_norm, block_rows_loop, block_eps_on_std):
        result, out = grade(check_residual_block, fn, capsys)
        assert result and "all 9 cases pass, 1 of them hidden" in out, out


def test_block_fallback_hint_is_not_the_answer(capsys):
    def odd(x, ffn):
        return x + ffn(layer_norm(x)) + 0.5
    result, out = grade(check_residual_block, odd, capsys)
    assert not result and "Hint:" in out and "return x +" not in out, out


@pytest.mark.parametrize("mistake", [m for m in L._BLOCK_MISTAKES if m.later], ids=lambda m: m.name[:40])
def test_block_line_comes_only_when_the_same_mistake_is_found_again(mistake, capsys, monkeypatch):
    """A first failure names the mistake and what to change in words; the block's line, x + ffn(layer_norm(x)),
    shows only when the check finds the same mistake again (a trial learner was handed it at once)."""
    monkeypatch.setattr(_verdict, "_FAILED_ATTEMPTS", {})
    result, first = grade(check_residual_block, mistake.fn, capsys)
    assert not result and mistake.name in first
    assert "ffn(layer_norm(x))" not in first.replace("`", "") and "it shows the line to write" in first, first
    result, second = grade(check_residual_block, mistake.fn, capsys)
    assert "ffn(layer_norm(x))" in second, second


def test_block_in_place_addition_is_caught(capsys):
    def in_place(x, ffn):
        x += ffn(layer_norm(x))
        return x
    result, out = grade(check_residual_block, in_place, capsys)
    assert not result and "changed its input `x` in place" in out


@pytest.mark.parametrize("fn, message", [
    (lambda x, f: (_ for _ in ()).throw(NotImplementedError()), "not implemented yet"),
    (lambda x, f: None, "returned None"),
    (lambda x, f: f(layer_norm(x)).sum(axis=-1), "expected"),
    (lambda x, f: x + f(layer_norm(x))[:, :2], "raised ValueError"),
], ids=["stub", "none", "wrong_shape", "raises"])
def test_block_stub_none_shape_and_exception(fn, message, capsys):
    result, out = grade(check_residual_block, fn, capsys)
    assert not result and message in out


# --------------------------------------------------------------------------------------------------------
# Every mutant a grader knows is reachable: run as a learner's function, it is diagnosed as itself
# --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("check, mistakes", [(check_route, L._ROUTE_MISTAKES), (check_moe_forward, L._MOE_MISTAKES),
                                             (check_residual_block, L._BLOCK_MISTAKES)],
                         ids=["route", "moe_forward", "residual_block"])
def test_every_mutant_is_diagnosed_as_itself(check, mistakes, capsys):
    for mistake in mistakes:
        result, out = grade(check, mistake.fn, capsys)
        verdict = [line for line in out.splitlines() if line.startswith(("  Likely mistake", "  Possibly"))]
        assert not result and len(verdict) == 1 and mistake.name in verdict[0], (mistake.name, out)


# --------------------------------------------------------------------------------------------------------
# Hidden cases drawn from the grading secret: fresh each grading run, so no table of cases passes
# --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("check, builder, right, wrong", [
    (check_route, L._route_hidden, [route_loops, route_numpy, route_partition_renormalised, route_reversed_ascending],
     WRONG_ROUTES),
    (check_moe_forward, L._moe_hidden, [moe_per_token, moe_grouped, moe_dense_then_mask], WRONG_MOES),
    (check_residual_block, L._block_hidden, [block_reference_style, block_own_norm, block_rows_loop, block_eps_on_std],
     WRONG_BLOCKS),
], ids=["route", "moe_forward", "residual_block"])
def test_hidden_cases_are_drawn_from_the_grading_secret(check, builder, right, wrong, monkeypatch, capsys):
    assert_hidden_cases_are_drawn_from_the_secret(check, builder, right, wrong, monkeypatch, capsys)


@pytest.mark.parametrize("secret", SECRETS)
def test_hidden_routings_keep_their_sizes_and_have_no_ties(secret):
    """No tie (the tie cases are public, and named so), k below the number of experts, and in the large case
    a logit that overflows a naive exp (exp(709.8) is already infinite)."""
    ordinary, large = drawn(L._route_hidden, secret)
    for case in (ordinary, large):
        logits, k = case.args["logits"], case.args["k"]
        n, n_experts = logits.shape
        assert 3 <= n <= 8 and 4 <= n_experts <= 9 and 1 <= k < n_experts, (logits.shape, k)
        assert all(len(set(row)) == len(row) for row in logits.tolist()) and "tie" not in case.name
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(large.args["logits"])).any() and not np.isinf(np.exp(ordinary.args["logits"])).any()


@pytest.mark.parametrize("secret", SECRETS)
def test_hidden_moe_layer_keeps_its_sizes_and_a_clear_choice_of_experts(secret):
    """Each token's logits at least 1e-6 apart: a right answer that computes them in another order (token by
    token, say) chooses the reference's experts, whatever the secret."""
    (case,) = drawn(L._moe_hidden, secret)
    x, W_router, experts, k = case.args.values()
    (n, d), n_experts = x.shape, W_router.shape[1]
    assert 4 <= n <= 9 and 3 <= d <= 6 and 3 <= n_experts <= 8 and len(experts) == n_experts
    assert W_router.shape[0] == d and 1 <= k <= min(3, n_experts - 1)
    assert np.diff(np.sort(x @ W_router, axis=1), axis=1).min() > 1e-6


@pytest.mark.parametrize("secret", SECRETS)
def test_hidden_block_case_keeps_its_shape_and_catches_the_norm_mistakes(secret):
    """Every token's mean 1.5 to 3 away from 0, so every wrong block but the eps slips (no eps shows only on a
    constant token, a large eps on a small spread) and the norm over axis 1 of a (T, d) array (its last axis)
    is far off on the hidden case."""
    (case,) = drawn(L._block_hidden, secret)
    x, f = case.args["x"], case.args["ffn"]
    assert x.ndim in (2, 3) and 2 <= x.shape[-2] <= 5 and 3 <= x.shape[-1] <= 8, x.shape
    assert x.ndim == 2 or 1 <= x.shape[0] <= 3
    means = np.abs(x.mean(axis=-1))
    assert means.min() >= 1.5 - 1e-3 and means.max() <= 3 + 1e-3, means
    expected = L._reference_block(x, f)
    for mistake in L._BLOCK_MISTAKES:
        if "eps" in mistake.name or ("axis 1" in mistake.name and x.ndim == 2):
            continue
        assert not L._block_close(mistake.fn(x, f), expected), mistake.name
