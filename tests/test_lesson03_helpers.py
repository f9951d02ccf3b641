"""Lesson 03's helper modules, each against an independent definition: attention_min, measure, chunking,
plot_cost."""
import math
import time
import tracemalloc

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from helpers.attention_min import attention, attention_mix  # noqa: E402
from helpers.chunking import ffn_chunked  # noqa: E402
from helpers.measure import best_times, blas_threads, one_blas_thread, peak_bytes  # noqa: E402
from helpers.plot_cost import plot_cost, plot_parameters, plot_speedup  # noqa: E402


def ffn_by_hand(x, W1, b1, W2, b2):
    """One token at a time with Python floats: the definition, written without NumPy."""
    out = []
    for token in np.asarray(x, float).tolist():
        h = [max(0.0, sum(token[i] * W1[i][j] for i in range(len(token))) + b1[j]) for j in range(len(b1))]
        out.append([sum(h[j] * W2[j][k] for j in range(len(h))) + b2[k] for k in range(len(b2))])
    return np.array(out)


def mix_by_hand(q, k, v):
    """softmax(q k^T / sqrt(d)) v, one query at a time, with math.exp."""
    d = len(q[0])
    out = []
    for query in q:
        scores = [sum(a * b for a, b in zip(query, key)) / math.sqrt(d) for key in k]
        weights = [math.exp(s - max(scores)) for s in scores]
        total = sum(weights)
        out.append([sum(w / total * value[c] for w, value in zip(weights, v)) for c in range(len(v[0]))])
    return np.array(out)


def random_ffn(rng, T, d, d_ff, dtype=np.float64):
    shapes = [(T, d), (d, d_ff), (d_ff,), (d_ff, d), (d,)]
    return [rng.normal(size=s).astype(dtype) for s in shapes]


# --------------------------------------------------------------------------------------------------------
# attention_min
# --------------------------------------------------------------------------------------------------------
def test_attention_mix_matches_a_per_query_loop():
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(6, 4)) for _ in range(3))
    assert np.allclose(attention_mix(q, k, v), mix_by_hand(q.tolist(), k.tolist(), v.tolist()), atol=1e-12)


def test_attention_mix_is_stable_and_averages_values():
    q = np.array([[1000.0, 0.0], [0.0, 0.0]])          # huge scores: a naive exp would overflow
    k = np.array([[1.0, 0.0], [0.0, 1.0]])
    v = np.array([[1.0, 2.0], [3.0, 4.0]])
    y = attention_mix(q, k, v)
    assert np.all(np.isfinite(y))
    assert np.allclose(y[0], v[0])                      # all weight on the first key
    assert np.allclose(y[1], v.mean(axis=0))            # equal scores: the plain average


def test_attention_keeps_float32_and_composes_the_projections():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(5, 4)).astype(np.float32)
    Ws = [rng.normal(size=(4, 4)).astype(np.float32) for _ in range(4)]
    y = attention(x, *Ws)
    assert y.dtype == np.float32 and y.shape == (5, 4)
    x64, W64 = x.astype(float), [W.astype(float) for W in Ws]
    expected = mix_by_hand((x64 @ W64[0]).tolist(), (x64 @ W64[1]).tolist(), (x64 @ W64[2]).tolist()) @ W64[3]
    assert np.allclose(y, expected, rtol=1e-4, atol=1e-5)


def causal_mix_by_hand(q, k, v):
    """Query t against keys 0 to t only: the same softmax over the keys it may see."""
    return np.array([mix_by_hand([q[t]], k[:t + 1], v[:t + 1])[0] for t in range(len(q))])


def test_causal_attention_mix_matches_a_per_query_loop_over_the_earlier_keys():
    rng = np.random.default_rng(3)
    q, k, v = (rng.normal(size=(6, 4)) for _ in range(3))
    got = attention_mix(q, k, v, causal=True)
    assert np.allclose(got, causal_mix_by_hand(q.tolist(), k.tolist(), v.tolist()), atol=1e-12)
    assert np.allclose(got[0], v[0])                    # the first token sees only itself
    assert not np.allclose(got, attention_mix(q, k, v))


def test_causal_attention_changes_only_the_rows_from_the_changed_token_on():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(6, 4))
    Ws = [rng.normal(size=(4, 4)) for _ in range(4)]
    x2 = x.copy()
    x2[3] += 1.0
    changed = np.abs(attention(x2, *Ws, causal=True) - attention(x, *Ws, causal=True)).max(axis=1) > 1e-9
    assert np.flatnonzero(changed).tolist() == [3, 4, 5]


def test_attention_mixes_tokens():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(6, 4))
    Ws = [rng.normal(size=(4, 4)) for _ in range(4)]
    x2 = x.copy()
    x2[3] += 1.0
    changed = np.abs(attention(x2, *Ws) - attention(x, *Ws)).max(axis=1) > 1e-9
    assert changed.all()


# --------------------------------------------------------------------------------------------------------
# measure
# --------------------------------------------------------------------------------------------------------
def test_peak_bytes_sees_numpy_arrays_and_returns_the_result():
    def allocate():
        a = np.ones(1_000_000)                          # 8,000,000 bytes
        b = np.ones(500_000)                            # 4,000,000 more while a is alive
        return float(a.sum() + b.sum())
    result, peak = peak_bytes(allocate)
    assert result == 1_500_000.0
    assert 12_000_000 <= peak < 12_200_000
    assert not tracemalloc.is_tracing()


def test_peak_bytes_leaves_tracing_on_when_it_was_on():
    tracemalloc.start()
    try:
        _, peak = peak_bytes(np.zeros, 250_000)
        assert tracemalloc.is_tracing()
        assert 2_000_000 <= peak < 2_100_000
    finally:
        tracemalloc.stop()


def test_peak_bytes_counts_only_what_the_call_allocates():
    x = np.ones(1_000_000)                              # allocated before: not counted
    _, peak = peak_bytes(lambda: x.sum())
    assert peak < 10_000


def test_best_times_runs_every_call_and_reports_per_call_times():
    counts = {"fast": 0, "slow": 0}

    def fast():
        counts["fast"] += 1

    def slow():
        # 3 ms on the wall clock, the clock best_times uses. (Spinning on time.process_time instead would be
        # flaky: it adds up every thread of the process, and BLAS threads left spinning by an earlier matrix
        # product can make 3 ms of process time pass in a fraction of that, so the sizing run repeats it.)
        counts["slow"] += 1
        end = time.perf_counter() + 0.003
        while time.perf_counter() < end:
            pass

    best = best_times({"fast": fast, "slow": slow}, repeat=3, min_run=0.002)
    assert set(best) == {"fast", "slow"}
    assert counts["slow"] == 2 + 3                      # warm-up and sizing, then one per round (slow enough)
    assert counts["fast"] > 3 * 10                      # repeated within each run to last min_run
    assert 0.003 <= best["slow"] < 0.5                  # per call (3 ms of work), with room for a busy machine
    assert 0 < best["fast"] < best["slow"]


def test_best_times_rotates_the_order_of_the_calls_every_round():
    order = []
    best_times({name: (lambda name=name: order.append(name)) for name in "abc"}, repeat=3, min_run=0.0)
    rounds = order[6:]                                  # after two calls each to warm up and size the runs
    assert rounds == list("abc") + list("bca") + list("cab")


def test_one_blas_thread_sets_one_thread_inside_and_restores_the_setting():
    before = blas_threads()
    if before is None:
        pytest.skip("NumPy's matrix library here is not OpenBLAS: one_blas_thread changes nothing")
    with one_blas_thread():
        assert blas_threads() == 1
    assert blas_threads() == before
    seen = []
    best_times({"threads": lambda: seen.append(blas_threads())}, repeat=2, min_run=0.0)
    assert set(seen) == {1} and blas_threads() == before          # best_times measures on one thread
    seen.clear()
    best_times({"threads": lambda: seen.append(blas_threads())}, repeat=2, min_run=0.0, one_thread=False)
    assert set(seen) == {before}


def test_best_times_accepts_another_clock():
    ticks = iter(range(1000))
    best = best_times({"a": lambda: None}, repeat=2, min_run=0.0, clock=lambda: float(next(ticks)))
    assert best == {"a": 1.0}


# --------------------------------------------------------------------------------------------------------
# chunking
# --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("T, chunk", [(10, 4), (12, 4), (5, 8), (7, 1), (1, 64), (130, 64)])
def test_ffn_chunked_matches_the_definition(T, chunk):
    rng = np.random.default_rng(T * 100 + chunk)
    x, W1, b1, W2, b2 = random_ffn(rng, T, 3, 7)
    expected = ffn_by_hand(x, W1.tolist(), b1.tolist(), W2.tolist(), b2.tolist())
    assert np.allclose(ffn_chunked(x, W1, b1, W2, b2, chunk), expected, atol=1e-12)


def test_ffn_chunked_keeps_float32_and_rejects_a_bad_chunk():
    rng = np.random.default_rng(3)
    x, W1, b1, W2, b2 = random_ffn(rng, 9, 4, 8, np.float32)
    assert ffn_chunked(x, W1, b1, W2, b2, 4).dtype == np.float32
    with pytest.raises(ValueError, match="positive"):
        ffn_chunked(x, W1, b1, W2, b2, 0)


def test_ffn_chunked_holds_one_chunk_of_the_hidden_layer():
    rng = np.random.default_rng(4)
    T, d, d_ff, chunk = 1024, 16, 512, 64
    x, W1, b1, W2, b2 = random_ffn(rng, T, d, d_ff)
    _, peak = peak_bytes(ffn_chunked, x, W1, b1, W2, b2, chunk)
    output, one_chunk = T * d * 8, chunk * (d_ff + d) * 8
    assert peak < output + one_chunk + 64 * 1024
    assert peak < T * d_ff * 8 / 8                      # far below the whole hidden layer


# --------------------------------------------------------------------------------------------------------
# plot_cost
# --------------------------------------------------------------------------------------------------------
def test_plots_have_titles_and_labelled_axes():
    ax = plot_speedup([8, 16], [1e-3, 4e-3], [1e-5, 2e-5])
    fig = plot_parameters(["a", "b"], [4, 400], [8, 800])
    ax_cost = plot_cost([64, 128, 256], [1e-4, 2e-4, 4e-4], [1e-5, 4e-5, 1.6e-4], 1.0, 2.0, crossover_flops=128)
    for axis in [ax, *fig.axes, ax_cost]:
        assert axis.get_title() and axis.get_ylabel()
    assert ax.get_xlabel() and ax_cost.get_xlabel()
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()] == ["a", "b"]   # categories name the bars
    # The lesson plots W1 + W2 against the four projections, weights only: no label says "parameters".
    labels = [text for axis in fig.axes for text in (axis.get_title(), axis.get_ylabel())]
    assert fig.axes[0].get_title() == "Weights per block (biases left out)", labels
    assert all("weights" in text.lower() and "parameters" not in text.lower() for text in labels), labels
    shares = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert shares == ["two thirds", "FFN", "attention"]                               # the dashed line too
    # The FFN's bar stands on the axis, so the dashed line at 2/3 is where a two-thirds share ends.
    ffn_bar = fig.axes[1].patches[0]
    assert ffn_bar.get_y() == 0 and math.isclose(ffn_bar.get_height(), 8 / 12)
    assert [line.get_ydata()[0] for line in fig.axes[1].lines] == [2 / 3]
    assert [t.get_text() for t in fig.axes[1].texts] == ["66.67%", "66.67%"]
    legend = " ".join(t.get_text() for t in ax_cost.get_legend().get_texts())
    assert "slope 2.00" in legend and "FLOP counts equal at T = 128" in legend
    assert not ax_cost.texts                            # no label drawn over the lines: the legend names the line
    plt.close("all")


def test_best_times_stops_after_its_budget():
    calls = []

    def slow():
        calls.append(1)
        time.sleep(0.02)                                # 20 ms on the wall clock, the default clock

    best_times({"slow": slow}, repeat=50, min_run=0.0, budget=0.05)
    assert 2 + 1 <= len(calls) <= 2 + 5                 # warm-up and sizing, then a few rounds, not fifty
