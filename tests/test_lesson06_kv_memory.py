"""helpers.kv_memory against independent definitions: per-element loops over plain numbers, the W @ x
convention written out by hand, hand-computed memories, and the properties the lesson states."""
import math

import numpy as np
import pytest

from helpers import kv_memory as kv
from helpers.ffn import ffn, relu


def loop_ffn_row(x, W1, b1, W2, b2):
    """x @ W convention, every multiply-add spelled out on Python floats."""
    d, d_ff = len(x), len(b1)
    h = [max(0.0, sum(float(x[i]) * float(W1[i][k]) for i in range(d)) + float(b1[k])) for k in range(d_ff)]
    return [sum(h[k] * float(W2[k][j]) for k in range(d_ff)) + float(b2[j]) for j in range(d)]


def loop_ffn_column(x, W1c, b1, W2c, b2):
    """W @ x convention (W1c is (d_ff, d), W2c is (d, d_ff)): output[i] = row_i . input + b_i at each layer."""
    d, d_ff = len(x), len(b1)
    h = [max(0.0, sum(float(W1c[k][i]) * float(x[i]) for i in range(d)) + float(b1[k])) for k in range(d_ff)]
    return [sum(float(W2c[j][k]) * h[k] for k in range(d_ff)) + float(b2[j]) for j in range(d)]


def random_ffn(seed, d, d_ff):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=d), rng.normal(size=(d, d_ff)), rng.normal(size=d_ff), rng.normal(size=(d_ff, d)),
            rng.normal(size=d))


SHAPES = [(2, 2), (3, 5), (5, 3), (4, 16), (16, 64)]


@pytest.mark.parametrize("d, d_ff", SHAPES)
def test_sum_over_units_equals_the_matrix_form_in_both_conventions(d, d_ff):
    x, W1, b1, W2, b2 = random_ffn(d * 100 + d_ff, d, d_ff)
    expected = loop_ffn_row(x, W1, b1, W2, b2)
    assert np.allclose(kv.ffn_as_sum(x, W1, b1, W2, b2), expected, rtol=1e-12, atol=1e-12)
    assert np.allclose(ffn(x, W1, b1, W2, b2), expected, rtol=1e-12, atol=1e-12)
    # The W @ x convention stores the same numbers transposed: keys are rows of W1.T, values columns of W2.T.
    assert np.allclose(loop_ffn_column(x, W1.T, b1, W2.T, b2), expected, rtol=1e-12, atol=1e-12)
    by_rows_and_columns = b2 + sum(relu(W1.T[k] @ x + b1[k]) * W2.T[:, k] for k in range(d_ff))
    assert np.allclose(by_rows_and_columns, expected, rtol=1e-12, atol=1e-12)


def test_the_transpose_bug_is_visible_only_off_the_diagonal():
    """Reading keys from the rows of W1 (x @ W convention) gives a different output on a non-symmetric square
    W1, and cannot even run when d != d_ff."""
    x, W1, b1, W2, b2 = random_ffn(3, 3, 3)
    wrong = b2 + sum(relu(W1[k] @ x + b1[k]) * W2[k] for k in range(3))
    assert not np.allclose(wrong, loop_ffn_row(x, W1, b1, W2, b2))
    x, W1, b1, W2, b2 = random_ffn(4, 3, 5)
    with pytest.raises(ValueError):
        W1[0] @ x


def test_hand_trace_as_a_sum():
    x, W1 = np.array([1.0, -1.0]), np.array([[1.0, 1.0], [1.0, -1.0]])
    C = kv.contributions(x, W1, np.zeros(2), np.eye(2))
    assert C.tolist() == [[0.0, 0.0], [0.0, 2.0]]          # unit 0 silent; unit 1 fires with a = 2
    assert kv.ffn_as_sum(x, W1, np.zeros(2), np.eye(2), np.zeros(2)).tolist() == [0.0, 2.0]


def test_contributions_by_hand():
    x = np.array([1.0, 2.0])
    W1 = np.array([[1.0, -1.0, 0.5], [1.0, 0.0, 0.5]])      # z = [3, -1, 1.5] + b1
    b1 = np.array([0.0, 0.5, -0.5])                         # z = [3, -0.5, 1]
    W2 = np.array([[1.0, 0.0], [5.0, 5.0], [0.0, -2.0]])
    C = kv.contributions(x, W1, b1, W2)
    assert C.tolist() == [[3.0, 0.0], [0.0, 0.0], [0.0, -2.0]]
    assert kv.top_units(x, W1, b1, W2, 2) == [0, 2]         # lengths 3, 0, 2
    assert kv.rebuild(x, W1, b1, W2, np.array([1.0, 1.0]), [2]).tolist() == [1.0, -1.0]
    assert kv.rebuild(x, W1, b1, W2, np.array([1.0, 1.0]), []).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("seed", range(5))
def test_top_units_against_a_sort_of_python_floats(seed):
    x, W1, b1, W2, b2 = random_ffn(seed, 4, 12)
    lengths = []
    for k in range(12):
        a = max(0.0, sum(x[i] * W1[i][k] for i in range(4)) + b1[k])
        lengths.append(math.sqrt(sum((a * W2[k][j]) ** 2 for j in range(4))))
    expected = sorted(range(12), key=lambda k: -lengths[k])
    n_firing = sum(v > 0 for v in lengths)
    assert kv.top_units(x, W1, b1, W2, n_firing) == expected[:n_firing]
    # Rebuilding from every firing unit is exact; silent units add nothing.
    full = loop_ffn_row(x, W1, b1, W2, b2)
    assert np.allclose(kv.rebuild(x, W1, b1, W2, b2, expected[:n_firing]), full, rtol=1e-12, atol=1e-12)


def lesson_memory():
    rng = np.random.default_rng(0)                          # the lesson's draw: 8 facts in d = 32
    keys, values = kv.unit_vectors(8, 32, rng), kv.unit_vectors(8, 32, rng)
    return keys, values


def test_unit_vectors_have_length_one():
    v = kv.unit_vectors(5, 7, np.random.default_rng(1))
    assert v.shape == (5, 7)
    assert np.allclose([math.sqrt(sum(e * e for e in row)) for row in v], 1.0)


def test_each_unit_fires_with_one_on_its_key_and_zero_below_the_threshold():
    keys, values = lesson_memory()
    W1, b1, W2 = kv.build_memory(keys, values)
    for i, q in enumerate(keys):
        for k in range(len(keys)):
            cos = float(np.dot(q, keys[k]))                 # unit vectors: the dot product is the cosine
            expected = max(0.0, cos - kv.THETA) / (1 - kv.THETA)
            assert math.isclose(relu(q @ W1[:, k] + b1[k]), expected, abs_tol=1e-12)
            assert (k == i) == (expected > 0)               # every cross-cosine is below THETA
    assert np.allclose(kv.recall(keys, W1, b1, W2), values, atol=1e-12)
    assert kv.decode(kv.recall(keys, W1, b1, W2), values).tolist() == list(range(8))
    assert kv.accuracy(W1, b1, W2, keys, values) == 1.0


def test_decode_by_hand():
    values = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    outputs = np.array([[0.9, 0.2], [0.1, 0.5], [-3.0, 0.1], [0.0, 0.0], [0.5, 0.5], [0.5, 0.5 + 1e-13]])
    # Row 4 is equally near values 0 and 1 (a tie goes to 0, even with rounding noise in row 5); row 3 is zero.
    assert kv.decode(outputs, values).tolist() == [0, 1, 2, -1, 0, 0]


def test_store_fact_adds_one_unit_and_keeps_the_old_facts():
    keys, values = lesson_memory()
    W1, b1, W2 = kv.build_memory(keys[:5], values[:5])
    before = [a.copy() for a in (W1, b1, W2)]
    W1_new, b1_new, W2_new = kv.store_fact(W1, b1, W2, keys[5], values[5])
    assert (W1_new.shape, b1_new.shape, W2_new.shape) == ((32, 6), (6,), (6, 32))
    assert all(np.array_equal(a, b) for a, b in zip(before, (W1, b1, W2)))       # inputs untouched
    assert np.array_equal(W1_new[:, :5], W1) and np.array_equal(W2_new[:5], W2)  # old units unchanged
    assert np.allclose(kv.recall(keys[:6], W1_new, b1_new, W2_new), values[:6], atol=1e-12)
    # The same as building all six at once.
    assert all(np.allclose(a, b) for a, b in zip((W1_new, b1_new, W2_new), kv.build_memory(keys[:6], values[:6])))


def test_two_facts_on_one_unit_decode_to_the_same_capital():
    keys, values = lesson_memory()
    W1, b1, W2, stored = kv.share_unit(keys, values, 0, 7)
    assert W1.shape == (32, 7) and stored[0] == [0, 7] and stored[1:] == [[k] for k in range(1, 7)]
    A = relu(keys @ W1 + b1)
    assert np.flatnonzero(A[0]).tolist() == [0] and np.flatnonzero(A[7]).tolist() == [0]
    assert 0 < A[0, 0] < 1 and math.isclose(A[0, 0], A[7, 0], rel_tol=1e-12)
    answers = kv.decode(kv.recall(keys, W1, b1, W2), values)
    assert answers[0] == answers[7] == 0                    # tied, and the tie goes to the first capital
    assert answers[1:7].tolist() == list(range(1, 7))
    assert kv.accuracy(W1, b1, W2, keys, values) == 7 / 8


def test_fitted_memory_is_exact_up_to_as_many_facts_as_units():
    rng = np.random.default_rng(3)
    keys, values = kv.unit_vectors(6, 32, rng), kv.unit_vectors(6, 32, rng)
    W1, b1, W2 = kv.fit_memory(keys, values, 8, rng)
    assert (W1.shape, b1.shape, W2.shape) == ((32, 8), (8,), (8, 32))
    assert np.allclose(kv.recall(keys, W1, b1, W2), values, atol=1e-9)
    keys, values = kv.unit_vectors(20, 32, rng), kv.unit_vectors(20, 32, rng)
    W1, b1, W2 = kv.fit_memory(keys, values, 8, rng)
    outputs = kv.recall(keys, W1, b1, W2)
    assert np.linalg.matrix_rank(outputs) <= 8              # every output is a mix of the 8 rows of W2
    assert not np.allclose(outputs, values, atol=1e-3)


def test_capacity_sweep_is_deterministic_and_falls_past_the_number_of_units():
    counts = [4, 8, 12, 24, 40]
    fitted, one_per_unit = kv.capacity_sweep(8, counts, d=32, n_draws=5, seed=0)
    again = kv.capacity_sweep(8, counts, d=32, n_draws=5, seed=0)
    assert np.array_equal(fitted, again[0]) and np.array_equal(one_per_unit, again[1])
    assert fitted[0] == fitted[1] == 1.0 and one_per_unit[0] == one_per_unit[1] == 1.0
    assert fitted[-1] < fitted[2] < 1.0
    # With one unit per fact, the facts after the 8th fire nothing and get no answer: exactly 8 / N.
    assert np.allclose(one_per_unit[2:], [8 / n for n in counts[2:]])
    assert np.all(fitted >= one_per_unit)


def test_capacity_plot_names_the_memories_as_the_table_does():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from helpers.plot_memory import plot_capacity
    ax = plot_capacity([2, 4, 8], [1.0, 1.0, 0.9], [1.0, 1.0, 1.0], 4, "title")
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels[0] == "shared units, fitted values", labels
    plt.close(ax.figure)
