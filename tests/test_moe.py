"""helpers.ffn.moe_ffn (and helpers.moe, helpers.block) against independent, per-token definitions."""
import math

import numpy as np
import pytest

from helpers.block import average_tokens, layer_norm, residual_block
from helpers.ffn import moe_ffn, softmax
from helpers.moe import (balance_loss, expert_capacity, expert_load, make_experts, over_capacity, route)


# --------------------------------------------------------------------------------------------------------
# Independent references: one token at a time, Python sorting and math.exp
# --------------------------------------------------------------------------------------------------------
def loop_route(logit_row, k):
    """The k best experts of one token (ties to the lower index) and the softmax of their logits."""
    order = sorted(range(len(logit_row)), key=lambda e: (-float(logit_row[e]), e))[:k]
    top = max(float(logit_row[e]) for e in order)
    exps = [math.exp(float(logit_row[e]) - top) for e in order]
    return order, [v / sum(exps) for v in exps]


def loop_moe(x, W_router, experts, k):
    """Per-token loop: route each token, run its experts on it alone, add the weighted outputs."""
    y = np.zeros(x.shape, dtype=float)
    for t in range(x.shape[0]):
        logit_row = [sum(float(x[t, i]) * float(W_router[i, e]) for i in range(x.shape[1]))
                     for e in range(W_router.shape[1])]
        chosen, weights = loop_route(logit_row, k)
        for e, w in zip(chosen, weights):
            y[t] += w * experts[e](x[t:t + 1])[0]
    return y


class Counting:
    """Wraps an expert and records the number of rows of every call."""

    def __init__(self, expert):
        self.expert, self.calls = expert, []

    def __call__(self, rows):
        self.calls.append(rows.shape[0])
        return self.expert(rows)


def probes(n_experts, d):
    """Expert e ignores its input and writes 1 in coordinate e: the layer's output row is then the
    token's routing weights, scattered onto the experts (0 for experts not chosen). Needs d >= n_experts."""
    def probe(e):
        return lambda rows: np.tile(np.eye(d)[e], (rows.shape[0], 1))
    return [probe(e) for e in range(n_experts)]


def setup(seed=0, n=12, d=5, n_experts=6, d_ff=7):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    W_router = rng.standard_normal((d, n_experts))
    return x, W_router, make_experts(rng, n_experts, d, d_ff)


# --------------------------------------------------------------------------------------------------------
# moe_ffn
# --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_moe_matches_a_per_token_loop(k):
    x, W_router, experts = setup(seed=k)
    np.testing.assert_allclose(moe_ffn(x, W_router, experts, k=k), loop_moe(x, W_router, experts, k),
                               rtol=1e-12, atol=1e-12)


def test_default_k_is_two():
    x, W_router, experts = setup()
    np.testing.assert_allclose(moe_ffn(x, W_router, experts), loop_moe(x, W_router, experts, 2), atol=1e-12)


def test_each_expert_runs_once_on_all_its_tokens():
    x, W_router, experts = setup(n=40, n_experts=5)
    counting = [Counting(e) for e in experts]
    moe_ffn(x, W_router, counting, k=2)
    chosen = [loop_route(row, 2)[0] for row in x @ W_router]
    for e, wrapper in enumerate(counting):
        routed = sum(e in c for c in chosen)
        assert wrapper.calls == ([routed] if routed else []), (e, wrapper.calls, routed)
    assert sum(sum(w.calls) for w in counting) == 40 * 2  # every token reaches exactly k experts


def test_an_expert_that_no_token_picks_is_not_called():
    x, W_router, experts = setup(n=10, n_experts=4)
    x = np.abs(x) + 1.0                      # every coordinate positive ...
    W_router[:, :3] = np.abs(W_router[:, :3])
    W_router[:, 3] = -1.0                    # ... so expert 3's logit is always the lowest (negative)
    counting = [Counting(e) for e in experts]
    y = moe_ffn(x, W_router, counting, k=3)
    assert counting[3].calls == []
    assert [c.calls for c in counting[:3]] == [[10], [10], [10]]
    np.testing.assert_allclose(y, loop_moe(x, W_router, experts, 3), atol=1e-12)


def test_k_equal_to_n_experts_is_the_full_softmax_mixture():
    x, W_router, experts = setup(n_experts=4)
    p = softmax(x @ W_router)                                    # (n, 4) over every expert
    mixture = sum(p[:, [e]] * expert(x) for e, expert in enumerate(experts))
    np.testing.assert_allclose(moe_ffn(x, W_router, experts, k=4), mixture, rtol=1e-12, atol=1e-12)


def test_k_equal_to_one_is_the_best_expert_alone():
    x, W_router, experts = setup()
    best = np.argmax(x @ W_router, axis=1)
    expected = np.stack([experts[e](x[t:t + 1])[0] for t, e in enumerate(best)])
    np.testing.assert_allclose(moe_ffn(x, W_router, experts, k=1), expected, rtol=1e-12, atol=1e-12)


def test_weights_are_the_full_softmax_renormalised_over_the_chosen_k():
    rng = np.random.default_rng(3)
    n_experts, d = 6, 6
    x = rng.standard_normal((20, d))
    W_router = rng.standard_normal((d, n_experts))
    weights_out = moe_ffn(x, W_router, probes(n_experts, d), k=2)   # (20, 6) weights scattered
    p = softmax(x @ W_router)
    for t in range(20):
        top2 = np.argsort(p[t])[-2:]
        expected = np.zeros(n_experts)
        expected[top2] = p[t, top2] / p[t, top2].sum()
        np.testing.assert_allclose(weights_out[t], expected, rtol=1e-12, atol=1e-15)
        # and equal to the softmax of the two chosen logits, by hand: 1 / (1 + e^(second - best))
        second, best = (x @ W_router)[t, top2]
        assert math.isclose(weights_out[t, top2[1]], 1 / (1 + math.exp(second - best)), rel_tol=1e-12)


def test_ties_go_to_the_lower_expert_index():
    d, n_experts = 5, 5
    x = np.array([[1.0, 2.0, 0.5, -1.0, 0.0], [0.3, -0.2, 1.0, 2.0, 1.0]])
    W_router = np.zeros((d, n_experts))
    W_router[:, 0] = [1.0, 1.0, 1.0, 1.0, 1.0]
    W_router[:, 1] = [0.1, 0.2, 0.3, 0.4, 0.5]
    W_router[:, 3] = W_router[:, 1]              # experts 1 and 3: identical logits, bit for bit
    W_router[:, 4] = -5.0
    logits = x @ W_router
    assert logits[0, 1] == logits[0, 3] and logits[1, 1] == logits[1, 3]
    # Token 0: logits 2.5, 0.35, 0, 0.35, -12.5; the second place is a tie between 1 and 3 -> 1.
    # Token 1: logits 4.1, 2.05, 0, 2.05, -20.5; same tie.
    out = moe_ffn(x, W_router, probes(n_experts, d), k=2)
    assert np.all(out[:, 3] == 0) and np.all(out[:, 1] > 0) and np.all(out[:, 0] > out[:, 1])
    # A tie for first place with k = 2: both tied experts are chosen, with weight 1/2 each.
    out = moe_ffn(x[:1], W_router[:, [1, 3, 2]], probes(3, d), k=2)
    np.testing.assert_array_equal(out[0, :3], [0.5, 0.5, 0.0])


def test_all_logits_equal_picks_the_first_k_with_equal_weights():
    out = moe_ffn(np.ones((3, 4)), np.zeros((4, 4)), probes(4, 4), k=3)
    np.testing.assert_allclose(out, np.tile([1 / 3, 1 / 3, 1 / 3, 0], (3, 1)), rtol=1e-15)


@pytest.mark.parametrize("k", [0, -1, 5, 100])
def test_k_out_of_range_raises_value_error(k):
    x, W_router, experts = setup(n_experts=4)
    with pytest.raises(ValueError, match="between 1 and the number of experts"):
        moe_ffn(x, W_router, experts, k=k)


@pytest.mark.parametrize("k", [2.0, 1.5, "2", True, None])
def test_k_that_is_not_an_integer_raises_type_error(k):
    x, W_router, experts = setup(n_experts=4)
    with pytest.raises(TypeError, match="k must be an integer"):
        moe_ffn(x, W_router, experts, k=k)


def test_numpy_integer_k_is_accepted():
    x, W_router, experts = setup(n_experts=4)
    np.testing.assert_array_equal(moe_ffn(x, W_router, experts, k=np.int64(2)), moe_ffn(x, W_router, experts))


def test_float32_in_float32_out():
    x, W_router, experts = setup()
    x32, W32 = x.astype(np.float32), W_router.astype(np.float32)
    experts32 = make_experts(np.random.default_rng(1), len(experts), 5, 7, dtype=np.float32)
    y = moe_ffn(x32, W32, experts32)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, loop_moe(x32, W32, experts32, 2), rtol=1e-4, atol=1e-5)
    assert moe_ffn(x32, W_router, experts32).dtype == np.float32   # a float64 router does not upcast y


def test_leading_dimensions_are_tokens():
    x, W_router, experts = setup(n=12)
    batched = moe_ffn(x.reshape(3, 4, 5), W_router, experts)
    assert batched.shape == (3, 4, 5)
    np.testing.assert_allclose(batched.reshape(12, 5), moe_ffn(x, W_router, experts), rtol=1e-15)


def test_no_tokens_gives_an_empty_output_and_calls_no_expert():
    _, W_router, experts = setup()
    counting = [Counting(e) for e in experts]
    y = moe_ffn(np.zeros((0, 5)), W_router, counting)
    assert y.shape == (0, 5) and all(c.calls == [] for c in counting)


def test_an_expert_returning_the_wrong_shape_is_named():
    x, W_router, experts = setup(n_experts=3)
    experts[1] = lambda rows: rows[:, :2]
    with pytest.raises(ValueError, match="expert 1 mapped"):
        moe_ffn(x, W_router, experts, k=3)


def test_inputs_are_not_changed():
    x, W_router, experts = setup()
    x0, W0 = x.copy(), W_router.copy()
    moe_ffn(x, W_router, experts)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(W_router, W0)


def test_each_token_is_independent_of_the_others():
    x, W_router, experts = setup(n=8)
    y = moe_ffn(x, W_router, experts)
    x2 = x.copy()
    x2[5] = 10.0
    y2 = moe_ffn(x2, W_router, experts)
    np.testing.assert_array_equal(np.delete(y2, 5, axis=0), np.delete(y, 5, axis=0))
    assert not np.allclose(y2[5], y[5])


# --------------------------------------------------------------------------------------------------------
# helpers.moe: route and the load bookkeeping
# --------------------------------------------------------------------------------------------------------
def test_route_matches_the_loop_and_moe_ffn():
    rng = np.random.default_rng(5)
    x, W_router = rng.standard_normal((15, 8)), rng.standard_normal((8, 8))
    logits = x @ W_router
    for k in (1, 2, 8):
        experts, weights = route(logits, k)
        for t in range(15):
            chosen, w = loop_route(logits[t], k)
            assert experts[t].tolist() == chosen
            np.testing.assert_allclose(weights[t], w, rtol=1e-12)
        scattered = np.zeros((15, 8))
        np.put_along_axis(scattered, experts, weights, axis=1)
        np.testing.assert_allclose(moe_ffn(x, W_router, probes(8, 8), k=k), scattered, rtol=1e-15)


def test_route_is_stable_for_huge_logits():
    experts, weights = route(np.array([[1000.0, 999.0, -1000.0]]), 2)
    assert experts.tolist() == [[0, 1]]
    np.testing.assert_allclose(weights, [[1 / (1 + math.exp(-1)), 1 / (1 + math.exp(1))]], rtol=1e-12)


def test_expert_load_counts_choices():
    np.testing.assert_array_equal(expert_load(np.array([[0, 2], [2, 1], [2, 0]]), 4), [2, 1, 3, 0])


def test_expert_capacity():
    assert expert_capacity(100, 8, 2, factor=1.0) == 25
    assert expert_capacity(100, 8, 2) == 32     # ceil(1.25 * 25) = ceil(31.25)


def test_over_capacity_is_first_come_first_served():
    experts = np.array([[0, 1], [0, 2], [1, 0], [0, 1]])
    # expert 0 arrivals: token 0, 1, 2, 3; expert 1: token 0, 2, 3. Capacity 2 drops the third onward.
    expected = [[False, False], [False, False], [False, True], [True, True]]
    np.testing.assert_array_equal(over_capacity(experts, 3, capacity=2), expected)
    assert not over_capacity(experts, 3, capacity=4).any()


def test_balance_loss_is_one_when_even_and_larger_when_skewed():
    even_logits = np.zeros((4, 4))
    even_choice = np.array([[0, 1], [2, 3], [0, 1], [2, 3]])
    assert math.isclose(balance_loss(even_logits, even_choice), 1.0)
    skewed_logits = np.tile([5.0, 4.0, 0.0, 0.0], (4, 1))
    skewed_choice = np.tile([0, 1], (4, 1))
    p = np.exp([5.0, 4.0, 0.0, 0.0]) / np.exp([5.0, 4.0, 0.0, 0.0]).sum()
    assert math.isclose(balance_loss(skewed_logits, skewed_choice), 4 * (0.5 * p[0] + 0.5 * p[1]))


# --------------------------------------------------------------------------------------------------------
# helpers.block
# --------------------------------------------------------------------------------------------------------
def test_layer_norm_by_hand():
    x = np.array([[1.0, 2.0, 3.0, 6.0]])         # mean 3, population variance (4 + 1 + 0 + 9) / 4 = 3.5
    expected = [(v - 3.0) / math.sqrt(3.5 + 1e-5) for v in (1.0, 2.0, 3.0, 6.0)]
    np.testing.assert_allclose(layer_norm(x)[0], expected, rtol=1e-12)


def test_layer_norm_keeps_float32_and_handles_a_constant_token():
    y = layer_norm(np.full((2, 3), 7.0, dtype=np.float32))
    assert y.dtype == np.float32 and np.all(y == 0)


def test_residual_block_with_identity_and_zero():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 6)) * 3 + 1
    np.testing.assert_allclose(residual_block(x, lambda h: h), x + layer_norm(x), rtol=1e-15)
    np.testing.assert_array_equal(residual_block(x, np.zeros_like), x)


def test_average_tokens_by_hand():
    x = np.array([[2.0, 0.0], [4.0, 2.0], [0.0, 4.0]])
    np.testing.assert_allclose(average_tokens(x), [[2.0, 0.0], [3.0, 1.0], [2.0, 2.0]], rtol=1e-15)
    assert average_tokens(x.astype(np.float32)).dtype == np.float32


def test_load_plot_keys_every_colour_it_draws():
    """Each bar is split at the capacity: only the part above it is the dropped part, drawn red and hatched
    (so it does not rest on colour alone), and every colour and line has an entry in the figure's key."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from helpers.plot_moe import plot_expert_load
    loads = {"even": np.array([10, 11, 9, 10]), "crowded": np.array([2, 25, 10, 3])}
    fig = plot_expert_load(loads, capacity=13, even=10.0)
    labels = [text.get_text() for legend in fig.legends for text in legend.get_texts()]
    assert any("beyond its capacity: dropped" in label for label in labels), labels
    assert any("the expert takes" in label for label in labels), labels
    assert "even share (10)" in labels and "expert capacity (13)" in labels, labels
    red = matplotlib.colors.to_rgba("tab:red")
    red_bars = [bar for ax in fig.axes for bar in ax.patches if bar.get_facecolor() == red]
    assert [(int(bar.get_y()), int(bar.get_height())) for bar in red_bars] == [(13, 12)], \
        "only the part of the bar above the capacity is red: 25 - 13 = 12 dropped choices"
    assert all(bar.get_hatch() for bar in red_bars), "the dropped part is hatched as well as red"
    blue = matplotlib.colors.to_rgba("tab:blue")
    tops = [int(bar.get_height()) for ax in fig.axes for bar in ax.patches if bar.get_facecolor() == blue]
    assert tops == [10, 11, 9, 10, 2, 13, 10, 3], tops
    plt.close(fig)
