"""Lesson 06 graders: each known wrong implementation gets its own named diagnosis; correct ones in several
styles pass; stubs, exceptions, None, wrong shapes and inputs changed in place get their own messages."""
import math

import numpy as np
import pytest

from helpers.checks import check_ffn_as_sum, check_store_fact, check_top_units
from helpers.kv_memory import THETA


def verdict(check, fn, capsys):
    ok = check(fn)
    return ok, capsys.readouterr().out


# --------------------------------------------------------------------------------------------------------
# ffn_as_sum(x, W1, b1, W2, b2)
# --------------------------------------------------------------------------------------------------------
def sum_loop(x, W1, b1, W2, b2):
    y = b2.copy()
    for k in range(W1.shape[1]):
        a = max(0.0, x @ W1[:, k] + b1[k])
        y = y + a * W2[k]
    return y


def sum_comprehension(x, W1, b1, W2, b2):
    return b2 + sum(max(0.0, float(np.dot(x, W1[:, k])) + b1[k]) * W2[k] for k in range(len(b1)))


def sum_numpy(x, W1, b1, W2, b2):
    a = np.maximum(x @ W1 + b1, 0)
    return (a[:, None] * W2).sum(axis=0) + b2


def sum_einsum(x, W1, b1, W2, b2):
    return np.einsum("k,kj->j", np.maximum(np.einsum("i,ik->k", x, W1) + b1, 0), W2) + b2


def sum_pure_python(x, W1, b1, W2, b2):
    """Nested loops over plain numbers, returning a list."""
    d, d_ff = len(x), len(b1)
    y = [float(b2[j]) for j in range(d)]
    for k in range(d_ff):
        z = sum(float(x[i]) * float(W1[i][k]) for i in range(d)) + float(b1[k])
        if z > 0:
            for j in range(d):
                y[j] += z * float(W2[k][j])
    return y


@pytest.mark.parametrize("fn", [sum_loop, sum_comprehension, sum_numpy, sum_einsum, sum_pure_python])
def test_correct_sums_pass(fn, capsys):
    ok, out = verdict(check_ffn_as_sum, fn, capsys)
    assert ok, out
    assert "all 5 cases pass" in out and "\u2718" not in out


def rows_of_W1(x, W1, b1, W2, b2):
    y = b2.copy()
    for k in range(len(b1)):
        y = y + max(0.0, W1[k] @ x + b1[k]) * W2[k]
    return y


def rows_of_W1_by_index(x, W1, b1, W2, b2):
    """The same slip written with scalar loops: raises IndexError (not ValueError) on non-square W1."""
    y = list(b2)
    for k in range(len(b1)):
        z = sum(W1[k][i] * x[i] for i in range(len(x))) + b1[k]
        y = [yj + max(0.0, z) * W2[k][j] for j, yj in enumerate(y)]
    return y


def columns_of_W2(x, W1, b1, W2, b2):
    y = b2.copy()
    for k in range(len(b1)):
        y = y + max(0.0, x @ W1[:, k] + b1[k]) * W2[:, k]
    return y


def no_b2(x, W1, b1, W2, b2):
    a = np.maximum(x @ W1 + b1, 0)
    return sum(a[k] * W2[k] for k in range(len(a))) + np.zeros_like(b2)


def b2_per_unit(x, W1, b1, W2, b2):
    y = np.zeros_like(b2)
    for k in range(len(b1)):
        y = y + max(0.0, x @ W1[:, k] + b1[k]) * W2[k] + b2
    return y


def no_relu(x, W1, b1, W2, b2):
    y = b2.copy()
    for k in range(len(b1)):
        y = y + (x @ W1[:, k] + b1[k]) * W2[k]
    return y


def no_b1(x, W1, b1, W2, b2):
    return (np.maximum(x @ W1, 0)[:, None] * W2).sum(axis=0) + b2


def b1_after_relu(x, W1, b1, W2, b2):
    return ((np.maximum(x @ W1, 0) + b1)[:, None] * W2).sum(axis=0) + b2


def relu_on_output(x, W1, b1, W2, b2):
    return np.maximum((np.maximum(x @ W1 + b1, 0)[:, None] * W2).sum(axis=0) + b2, 0)


def loop_over_d(x, W1, b1, W2, b2):
    """The trial learner's slip: range(len(x)) counts the token's d numbers, not the d_ff units."""
    y = b2.copy()
    for k in range(len(x)):
        y = y + max(0.0, x @ W1[:, k] + b1[k]) * W2[k]
    return y


def loop_over_W1_rows(x, W1, b1, W2, b2):
    """The same slip through W1.shape[0], in pure Python."""
    y = [float(v) for v in b2]
    for k in range(W1.shape[0]):
        a = max(0.0, sum(float(x[i]) * float(W1[i, k]) for i in range(len(x))) + float(b1[k]))
        y = [yj + a * float(W2[k, j]) for j, yj in enumerate(y)]
    return y


@pytest.mark.parametrize("fn, label, diagnosis", [
    (loop_over_d, "Likely mistake", "looped over d units instead of d_ff"),
    (loop_over_W1_rows, "Likely mistake", "looped over d units instead of d_ff"),
    (rows_of_W1, "Likely mistake", "keys read from the rows of W1"),
    (rows_of_W1_by_index, "Possibly", "keys read from the rows of W1"),
    (columns_of_W2, "Likely mistake", "values read from the columns of W2"),
    (no_b2, "Likely mistake", "b2 left out"),
    (b2_per_unit, "Likely mistake", "b2 added once per unit"),
    (no_relu, "Likely mistake", "(ReLU) not applied"),
    (no_b1, "Likely mistake", "b1 left out"),
    (b1_after_relu, "Likely mistake", "b1 added after the ReLU"),
    (relu_on_output, "Likely mistake", "ReLU applied to the output as well"),
])
def test_each_wrong_sum_gets_its_own_diagnosis(fn, label, diagnosis, capsys):
    ok, out = verdict(check_ffn_as_sum, fn, capsys)
    assert not ok
    assert f"{label}: " in out and diagnosis in out, out
    assert out.count("mistake:") + out.count("Possibly:") == 1, out


def test_a_case_has_units_past_index_d_that_fire_and_write():
    """Without such a case a loop over range(d) passes: in every other case the units from d on are silent
    (or the layer is square)."""
    from helpers.checks import lesson06 as L
    writers = []
    for case in L._sum_cases():
        a = case.args
        d = len(a["x"])
        contributions = np.maximum(a["x"] @ a["W1"] + a["b1"], 0)[:, None] * a["W2"]   # (d_ff, d)
        writers.append(int((np.abs(contributions[d:]).sum(axis=1) > 0.1).sum()))
    assert max(writers) >= 3, writers


def test_sum_stub_says_not_implemented(capsys):
    def stub(x, W1, b1, W2, b2):
        raise NotImplementedError("your code here")
    ok, out = verdict(check_ffn_as_sum, stub, capsys)
    assert not ok and "not implemented yet" in out and "\u2718" not in out


def test_sum_exception_none_shape_and_mutation(capsys):
    def crashes(x, W1, b1, W2, b2):
        return 1 / 0
    ok, out = verdict(check_ffn_as_sum, crashes, capsys)
    assert not ok and "raised ZeroDivisionError: division by zero" in out and "`return 1 / 0`" in out

    def returns_none(x, W1, b1, W2, b2):
        x @ W1
    ok, out = verdict(check_ffn_as_sum, returns_none, capsys)
    assert not ok and "returned None" in out

    def returns_activations(x, W1, b1, W2, b2):
        return np.maximum(x @ W1 + b1, 0)
    ok, out = verdict(check_ffn_as_sum, returns_activations, capsys)
    assert not ok and "returned 6 numbers; expected 4" in out and "one number per hidden unit" in out

    def returns_column(x, W1, b1, W2, b2):
        return sum_numpy(x, W1, b1, W2, b2)[:, None]
    ok, out = verdict(check_ffn_as_sum, returns_column, capsys)
    assert not ok and "shape (2, 1)" in out

    def adds_into_b2(x, W1, b1, W2, b2):
        b2 += (np.maximum(x @ W1 + b1, 0)[:, None] * W2).sum(axis=0)
        return b2
    ok, out = verdict(check_ffn_as_sum, adds_into_b2, capsys)
    assert not ok and "changed its input `b2` in place" in out

    ok, out = verdict(check_ffn_as_sum, sum_loop(np.ones(2), np.eye(2), np.zeros(2), np.eye(2), np.zeros(2)),
                      capsys)
    assert not ok and "expected a function" in out


def test_sum_nan_is_reported(capsys):
    def nan_out(x, W1, b1, W2, b2):
        return sum_numpy(x, W1, b1, W2, b2) * math.nan
    ok, out = verdict(check_ffn_as_sum, nan_out, capsys)
    assert not ok and "finite number" in out


# --------------------------------------------------------------------------------------------------------
# top_units(x, W1, b1, W2, k)
# --------------------------------------------------------------------------------------------------------
def top_numpy(x, W1, b1, W2, k):
    a = np.maximum(x @ W1 + b1, 0)
    return list(np.argsort(-np.linalg.norm(a[:, None] * W2, axis=1))[:k])


def top_sorted(x, W1, b1, W2, k):
    sizes = {}
    for j in range(W1.shape[1]):
        a = max(0.0, float(x @ W1[:, j]) + b1[j])
        sizes[j] = a * math.sqrt(sum(v * v for v in W2[j]))
    return sorted(sizes, key=sizes.get, reverse=True)[:k]


def top_array_reversed(x, W1, b1, W2, k):
    a = np.maximum(x @ W1 + b1, 0)
    return np.argsort(a * np.linalg.norm(W2, axis=1))[::-1][:k]          # a NumPy array, largest first


def top_heap(x, W1, b1, W2, k):
    import heapq
    a = np.maximum(x @ W1 + b1, 0)
    sizes = [float(np.linalg.norm(a[j] * W2[j])) for j in range(len(a))]
    return tuple(heapq.nlargest(k, range(len(sizes)), key=sizes.__getitem__))


@pytest.mark.parametrize("fn", [top_numpy, top_sorted, top_array_reversed, top_heap])
def test_correct_top_units_pass(fn, capsys):
    ok, out = verdict(check_top_units, fn, capsys)
    assert ok, out
    assert "all 4 cases pass" in out


def _sizes(x, W1, b1, W2):
    return np.maximum(x @ W1 + b1, 0) * np.linalg.norm(W2, axis=1)


def top_ascending(x, W1, b1, W2, k):
    return sorted(range(len(b1)), key=lambda j: _sizes(x, W1, b1, W2)[j])[:k]


def top_smallest_first(x, W1, b1, W2, k):
    return [int(j) for j in np.argsort(_sizes(x, W1, b1, W2))[-k:]]


def top_by_activation(x, W1, b1, W2, k):
    return list(np.argsort(-np.maximum(x @ W1 + b1, 0))[:k])


def top_by_value_length(x, W1, b1, W2, k):
    return list(np.argsort(-np.linalg.norm(W2, axis=1))[:k])


def top_by_pre_activation(x, W1, b1, W2, k):
    return list(np.argsort(-np.abs(x @ W1 + b1))[:k])


def top_rows_of_W1(x, W1, b1, W2, k):
    a = np.maximum(W1 @ x + b1, 0)
    return list(np.argsort(-a * np.linalg.norm(W2, axis=1))[:k])


def top_columns_of_W2(x, W1, b1, W2, k):
    a = np.maximum(x @ W1 + b1, 0)
    return list(np.argsort(-a * np.linalg.norm(W2, axis=0))[:k])


def top_norm_axis0(x, W1, b1, W2, k):
    """The trial learner's slip: the norm over axis 0 gives one length per output coordinate."""
    a = np.maximum(x @ W1 + b1, 0)
    sizes = np.linalg.norm(a[:, None] * W2, axis=0)
    return list(np.argsort(-sizes)[:k])


def top_from_one(x, W1, b1, W2, k):
    return [int(j) + 1 for j in np.argsort(-_sizes(x, W1, b1, W2))[:k]]


@pytest.mark.parametrize("fn, diagnosis", [
    (top_ascending, "sorted ascending"),
    (top_smallest_first, "the right units, listed smallest first"),
    (top_by_activation, "ranked by the activation a_j alone"),
    (top_by_value_length, "ranked by the length of the value"),
    (top_by_pre_activation, "ranked by the size of the pre-activation"),
    (top_rows_of_W1, "keys read from the rows of W1"),
    (top_columns_of_W2, "values read from the columns of W2"),
    (top_norm_axis0, "norm taken over the wrong axis"),
])
def test_each_wrong_top_units_gets_its_own_diagnosis(fn, diagnosis, capsys):
    ok, out = verdict(check_top_units, fn, capsys)
    assert not ok
    assert "Likely mistake: " + diagnosis in out, out


def test_counting_from_one_is_named(capsys):
    ok, out = verdict(check_top_units, top_from_one, capsys)
    assert not ok and ("counting units from 1" in out or "did you count from 1?" in out), out


def test_top_units_stub_exception_and_bad_returns(capsys):
    def stub(x, W1, b1, W2, k):
        raise NotImplementedError
    ok, out = verdict(check_top_units, stub, capsys)
    assert not ok and "not implemented yet" in out

    def crashes(x, W1, b1, W2, k):
        raise KeyError("unit")
    ok, out = verdict(check_top_units, crashes, capsys)
    assert not ok and "raised KeyError" in out

    def none(x, W1, b1, W2, k):
        np.argsort(x)
    ok, out = verdict(check_top_units, none, capsys)
    assert not ok and "returned None" in out

    def sizes_not_indices(x, W1, b1, W2, k):
        return sorted(_sizes(x, W1, b1, W2), reverse=True)[:k]
    ok, out = verdict(check_top_units, sizes_not_indices, capsys)
    assert not ok and "not whole" in out

    def one_too_many(x, W1, b1, W2, k):
        return top_numpy(x, W1, b1, W2, k + 1)
    ok, out = verdict(check_top_units, one_too_many, capsys)
    assert not ok and "expected k = 2" in out

    def as_a_set(x, W1, b1, W2, k):
        return set(top_numpy(x, W1, b1, W2, k))
    ok, out = verdict(check_top_units, as_a_set, capsys)
    assert not ok and "has no order" in out

    def two_dimensional(x, W1, b1, W2, k):
        return np.array(top_numpy(x, W1, b1, W2, k))[None, :]
    ok, out = verdict(check_top_units, two_dimensional, capsys)
    assert not ok and "shape (1, 2)" in out

    def sorts_in_place(x, W1, b1, W2, k):
        b1.sort()
        return top_numpy(x, W1, b1, W2, k)
    ok, out = verdict(check_top_units, sorts_in_place, capsys)
    assert not ok and "changed its input `b1` in place" in out


# --------------------------------------------------------------------------------------------------------
# store_fact(W1, b1, W2, key, value)
# --------------------------------------------------------------------------------------------------------
S = 1 / (1 - THETA)


def store_stack(W1, b1, W2, key, value):
    return np.column_stack([W1, key * S]), np.append(b1, -THETA * S), np.vstack([W2, value])


def store_concatenate(W1, b1, W2, key, value):
    return (np.concatenate([W1, (key / (1 - THETA))[:, None]], axis=1),
            np.concatenate([b1, [-THETA / (1 - THETA)]]),
            np.concatenate([W2, value[None, :]], axis=0))


def store_scale_the_value(W1, b1, W2, key, value):
    """Threshold in the key's units and the scale on the value: the same function (ReLU is homogeneous)."""
    return np.hstack([W1, key[:, None]]), np.hstack([b1, -THETA]), np.vstack([W2, value / (1 - THETA)])


def store_in_front(W1, b1, W2, key, value):
    """The new unit first: a different order of units, the same memory."""
    return np.insert(W1, 0, key * S, axis=1), np.insert(b1, 0, -THETA * S), np.insert(W2, 0, value, axis=0)


def store_higher_threshold(W1, b1, W2, key, value):
    """Any threshold between the largest cosine with an old key and 1 stores the fact."""
    theta = 0.8
    return np.column_stack([W1, key / (1 - theta)]), np.append(b1, -theta / (1 - theta)), np.vstack([W2, value])


def store_lists(W1, b1, W2, key, value):
    """Plain lists of rows, built with loops."""
    d, n = W1.shape
    W1_new = [list(W1[i]) + [key[i] * S] for i in range(d)]
    return W1_new, list(b1) + [-THETA * S], [list(row) for row in W2] + [list(value)]


@pytest.mark.parametrize("fn", [store_stack, store_concatenate, store_scale_the_value, store_in_front,
                                store_higher_threshold, store_lists])
def test_correct_store_fact_passes(fn, capsys):
    ok, out = verdict(check_store_fact, fn, capsys)
    assert ok, out
    assert "all 3 cases pass" in out


def store_swapped(W1, b1, W2, key, value):
    return np.column_stack([W1, value * S]), np.append(b1, -THETA * S), np.vstack([W2, key])


def store_no_threshold(W1, b1, W2, key, value):
    return np.column_stack([W1, key]), np.append(b1, 0.0), np.vstack([W2, value])


def store_scaled_no_threshold(W1, b1, W2, key, value):
    return np.column_stack([W1, key / (1 - THETA)]), np.append(b1, 0.0), np.vstack([W2, value])


def store_wrong_sign(W1, b1, W2, key, value):
    return np.column_stack([W1, key * S]), np.append(b1, THETA * S), np.vstack([W2, value])


def store_unscaled(W1, b1, W2, key, value):
    return np.column_stack([W1, key]), np.append(b1, -THETA), np.vstack([W2, value])


def store_bias_unscaled(W1, b1, W2, key, value):
    return np.column_stack([W1, key * S]), np.append(b1, -THETA), np.vstack([W2, value])


@pytest.mark.parametrize("fn, diagnosis, symptom", [
    (store_swapped, "key and value swapped", "for the new key"),
    (store_no_threshold, "no threshold: the new unit's bias is 0",
     "the new unit fires for old key 0 too (a = 0.276), so its threshold is too low"),
    (store_scaled_no_threshold, "the key scaled by 1 / (1 - THETA) but no threshold", "for the new key"),
    (store_wrong_sign, "the threshold with the wrong sign", "for the new key"),
    (store_unscaled, "the key not scaled by 1 / (1 - THETA)", "(0.5 times the value: the new unit's activation"),
    (store_bias_unscaled, "the bias not scaled", "for the new key"),
])
def test_each_wrong_store_fact_gets_its_own_diagnosis(fn, diagnosis, symptom, capsys):
    ok, out = verdict(check_store_fact, fn, capsys)
    assert not ok
    assert "Likely mistake: " + diagnosis in out, out
    assert symptom in out, out


def test_store_fact_shape_messages(capsys):
    def overwrite_unit_0(W1, b1, W2, key, value):
        W1, b1, W2 = W1.copy(), b1.copy(), W2.copy()
        W1[:, 0], b1[0], W2[0] = key * S, -THETA * S, value
        return W1, b1, W2
    ok, out = verdict(check_store_fact, overwrite_unit_0, capsys)
    assert not ok and "as many units as before" in out and "IndexError" in out

    def only_the_new_fact(W1, b1, W2, key, value):
        return key[:, None] * S, np.array([-THETA * S]), value[None, :]
    ok, out = verdict(check_store_fact, only_the_new_fact, capsys)
    assert not ok and "holds only the new fact" in out

    def key_as_a_row(W1, b1, W2, key, value):
        return np.vstack([W1, key[:W1.shape[1]]]), np.append(b1, -THETA * S), np.vstack([W2, value])
    ok, out = verdict(check_store_fact, key_as_a_row, capsys)
    assert not ok and "The key went in as a row" in out

    def value_as_a_column(W1, b1, W2, key, value):
        return np.column_stack([W1, key * S]), np.append(b1, -THETA * S), np.column_stack([W2, value[:len(W2)]])
    ok, out = verdict(check_store_fact, value_as_a_column, capsys)
    assert not ok and "The value went in as a column" in out


def test_store_fact_names_an_old_unit_overwritten(capsys):
    def off_by_one(W1, b1, W2, key, value):
        W2_new = np.vstack([W2, value])
        W2_new[len(W2) - 1] = value                 # meant the new row, wrote over the last old one
        return np.column_stack([W1, key * S]), np.append(b1, -THETA * S), W2_new
    ok, out = verdict(check_store_fact, off_by_one, capsys)
    assert not ok and "some of the old units were changed" in out


def test_store_fact_stub_exception_none_and_mutation(capsys):
    def stub(W1, b1, W2, key, value):
        raise NotImplementedError("your code here")
    ok, out = verdict(check_store_fact, stub, capsys)
    assert not ok and "not implemented yet" in out and "\u2718" not in out

    def crashes(W1, b1, W2, key, value):
        return np.hstack([W1, key])
    ok, out = verdict(check_store_fact, crashes, capsys)
    assert not ok and "raised ValueError" in out

    def returns_none(W1, b1, W2, key, value):
        store_stack(W1, b1, W2, key, value)
    ok, out = verdict(check_store_fact, returns_none, capsys)
    assert not ok and "returned None" in out

    def two_things(W1, b1, W2, key, value):
        return store_stack(W1, b1, W2, key, value)[:2]
    ok, out = verdict(check_store_fact, two_things, capsys)
    assert not ok and "return three arrays" in out

    def changes_b1(W1, b1, W2, key, value):
        b1 -= 0.0 * b1 + 1e-3
        return store_stack(W1, b1 + 1e-3, W2, key, value)
    ok, out = verdict(check_store_fact, changes_b1, capsys)
    assert not ok and "changed its input `b1` in place" in out

    ok, out = verdict(check_store_fact, "store_fact", capsys)
    assert not ok and "expected a function" in out


# --------------------------------------------------------------------------------------------------------
# Every mutant a grader knows is reachable: run as a learner's function, it is diagnosed as itself
# --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("check, bank", [("check_ffn_as_sum", "_SUM_MISTAKES"),
                                         ("check_top_units", "_TOP_MISTAKES")], ids=["ffn_as_sum", "top_units"])
def test_every_mutant_is_diagnosed_as_itself(check, bank, capsys):
    from helpers.checks import lesson06 as L
    for mistake in getattr(L, bank):
        ok, out = verdict(getattr(L, check), mistake.fn, capsys)
        named = [line for line in out.splitlines() if line.startswith(("  Likely mistake", "  Possibly"))]
        assert not ok and len(named) == 1 and mistake.name in named[0], (mistake.name, out)
