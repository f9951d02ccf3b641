"""Lesson 06 graders against banks of learner answers: each wrong one is rejected with its own named mistake
or a specific message; right ones in several styles pass; stubs, exceptions, None, wrong shapes and inputs
changed in place get their own messages."""
import math

import numpy as np
import pytest
from hidden_under_secrets import (SECRETS, assert_banks_pass_and_fail_under_secrets, assert_drawn_afresh,
                                  assert_forgery_fails_under_every_secret, graded_under, memorising_forgery)

from helpers import kv_memory as kv
from helpers.checks import _verdict, check_ffn_as_sum, check_store_fact, check_top_units
from helpers.checks import lesson06 as L


@pytest.fixture(autouse=True)
def fresh_attempts(monkeypatch):
    """Each test starts as a kernel would: no failed attempt yet (store_fact reveals after the second)."""
    monkeypatch.setattr(_verdict, "_FAILED_ATTEMPTS", {})


def verdict(check, fn, capsys):
    ok = check(fn)
    return ok, capsys.readouterr().out


def named(out):
    """The "Likely mistake" / "Possibly" lines of a report."""
    return [line for line in out.splitlines() if line.startswith(("  Likely mistake", "  Possibly"))]


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


def sum_einsum_terms(x, W1, b1, W2, b2):
    """The terms as rows with einsum (no sum over k inside the product), then summed."""
    a = np.maximum(np.einsum("i,ik->k", x, W1) + b1, 0)
    return np.einsum("k,kj->kj", a, W2).sum(axis=0) + b2


def sum_diag(x, W1, b1, W2, b2):
    """diag(a) @ W2 keeps one row per unit: the terms, summed afterwards."""
    return (np.diag(np.maximum(x @ W1 + b1, 0)) @ W2).sum(axis=0) + b2


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


def sum_np_sum_of_list(x, W1, b1, W2, b2):
    terms = [max(0.0, x @ W1[:, k] + b1[k]) * W2[k] for k in range(W1.shape[1])]
    return np.sum(terms, axis=0) + b2


def sum_rows_taken(x, W1, b1, W2, b2):
    """Rows taken out with take and fancy indexing: still the terms, one per unit."""
    units = list(range(W1.shape[1]))
    a = np.maximum(x @ W1 + b1, 0)
    return b2 + (a[units, None] * W2[units]).sum(axis=0) + 0 * W2.take(0, axis=0)


def sum_converted_then_rows(x, W1, b1, W2, b2):
    """Every input converted first (which strips the watch): the source shows only rows W2[k]."""
    x, W1, b1, W2, b2 = (np.array(v, dtype=float) for v in (x, W1, b1, W2, b2))
    y = b2.copy()
    for k in range(W1.shape[1]):
        y = y + max(0.0, x @ W1[:, k] + b1[k]) * W2[k]
    return y


def sum_converted_then_diag(x, W1, b1, W2, b2):
    """W2 converted, then diag(a) @ W2 and an einsum that keeps the unit index: the terms, as rows."""
    V = np.asarray(W2)
    a = np.maximum(np.asarray(x) @ W1 + b1, 0)
    rows = np.diag(a) @ V + 0 * np.einsum("k,kj->kj", a, V)
    return rows.sum(axis=0) + b2


def sum_converted_rows_dotted(x, W1, b1, W2, b2):
    """A product with one row at a time, W2[k] (never all of W2)."""
    M = np.asarray(W2, dtype=float)
    return b2 + sum(np.dot(max(0.0, x @ W1[:, k] + b1[k]), M[k]) for k in range(len(b1)))


RIGHT_SUMS = [sum_rows_taken, sum_loop, sum_comprehension, sum_numpy, sum_einsum_terms, sum_diag, sum_pure_python,
              sum_np_sum_of_list, sum_converted_then_rows, sum_converted_then_diag, sum_converted_rows_dotted]


@pytest.mark.parametrize("fn", RIGHT_SUMS)
def test_correct_sums_pass(fn, capsys):
    ok, out = verdict(check_ffn_as_sum, fn, capsys)
    assert ok, out
    assert "all 6 public cases pass" in out and "\u2718" not in out


def test_correct_sums_pass_the_hidden_case_when_graded(monkeypatch, capsys):
    monkeypatch.setenv("FFN_GRADING", "1")
    for fn in RIGHT_SUMS:
        ok, out = verdict(check_ffn_as_sum, fn, capsys)
        assert ok and "all 8 cases pass, 2 of them hidden" in out, out


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


def matmul_whole(x, W1, b1, W2, b2):
    """The rule the text states: no product with W2 as a whole."""
    return np.maximum(x @ W1 + b1, 0) @ W2 + b2


def dot_whole(x, W1, b1, W2, b2):
    return np.dot(np.maximum(np.dot(x, W1) + b1, 0), W2) + b2


def einsum_contracting(x, W1, b1, W2, b2):
    return np.einsum("k,kj->j", np.maximum(x @ W1 + b1, 0), W2) + b2


def dot_method(x, W1, b1, W2, b2):
    """The plain array's own method, which no NumPy override sees."""
    return np.maximum(x @ W1 + b1, 0).dot(W2) + b2


def transposed_product(x, W1, b1, W2, b2):
    return W2.T @ np.maximum(W1.T @ x + b1, 0) + b2


def copy_product(x, W1, b1, W2, b2):
    """A trial learner's way past the watch: a copy of W2 is still all of W2."""
    h = np.maximum(x @ W1 + b1, 0)
    return h @ np.copy(W2) + b2


def contiguous_product(x, W1, b1, W2, b2):
    h = np.maximum(x @ W1 + b1, 0)
    return h @ np.ascontiguousarray(W2) + b2


def rounded_4(x, W1, b1, W2, b2):
    return np.round(sum_numpy(x, W1, b1, W2, b2), 4)


def rounded_2(x, W1, b1, W2, b2):
    return [round(float(v), 2) for v in sum_loop(x, W1, b1, W2, b2)]


def skip_first_unit(x, W1, b1, W2, b2):
    y = b2.copy()
    for k in range(1, W1.shape[1]):
        y = y + max(0.0, x @ W1[:, k] + b1[k]) * W2[k]
    return y


def skip_last_unit(x, W1, b1, W2, b2):
    y = b2.copy()
    for k in range(W1.shape[1] - 1):
        y = y + max(0.0, x @ W1[:, k] + b1[k]) * W2[k]
    return y


def abs_activation(x, W1, b1, W2, b2):
    return b2 + sum(abs(x @ W1[:, k] + b1[k]) * W2[k] for k in range(W1.shape[1]))


WRONG_SUMS = [
    (skip_first_unit, "Likely mistake", "a unit left out: the loop starts at 1"),
    (skip_last_unit, "Likely mistake", "a unit left out: the loop stops one early"),
    (abs_activation, "Likely mistake", "the absolute value |z| used instead of relu(z)"),
    (loop_over_d, "Likely mistake", "looped over d units instead of d_ff"),
    (loop_over_W1_rows, "Likely mistake", "looped over d units instead of d_ff"),
    (rows_of_W1, "Likely mistake", "keys read from the rows of W1"),
    # An IndexError where reading W1 by rows with NumPy raises a matmul error: not the same failure, so no name
    (rows_of_W1_by_index, None, ""),
    (columns_of_W2, "Likely mistake", "values read from the columns of W2"),
    (no_b2, "Likely mistake", "b2 left out"),
    (b2_per_unit, "Likely mistake", "b2 added once per unit"),
    (no_relu, "Likely mistake", "ReLU not applied"),
    (no_b1, "Likely mistake", "b1 left out"),
    (b1_after_relu, "Likely mistake", "b1 added after the ReLU"),
    (relu_on_output, "Likely mistake", "ReLU applied to the output as well"),
    (matmul_whole, "Likely mistake", "W2 multiplied as a whole (h @ W2)"),
    (dot_whole, "Likely mistake", "W2 multiplied as a whole (h @ W2)"),
    (einsum_contracting, "Likely mistake", "W2 multiplied as a whole (h @ W2)"),
    (transposed_product, "Likely mistake", "W2 multiplied as a whole (h @ W2)"),
    (dot_method, "Likely mistake", "W2 multiplied as a whole (h @ W2)"),
    (copy_product, "Likely mistake", "W2 multiplied as a whole (h @ W2)"),
    (contiguous_product, "Likely mistake", "W2 multiplied as a whole (h @ W2)"),
]


@pytest.mark.parametrize("fn, label, diagnosis", WRONG_SUMS, ids=[f.__name__ for f, _, _ in WRONG_SUMS])
def test_each_wrong_sum_gets_its_own_diagnosis(fn, label, diagnosis, capsys):
    ok, out = verdict(check_ffn_as_sum, fn, capsys)
    assert not ok
    lines = named(out)
    if label is None:
        assert not lines and "What differs" in out, out
        return
    assert len(lines) == 1 and lines[0].startswith(f"  {label}: ") and diagnosis in lines[0], out


def test_the_whole_product_gets_a_case_message_that_names_it(capsys):
    ok, out = verdict(check_ffn_as_sum, matmul_whole, capsys)
    assert "gives the right numbers by multiplying W2 as a whole matrix" in out
    assert ok.mistake.startswith("W2 multiplied as a whole"), ok.mistake


def product_after_asarray(x, W1, b1, W2, b2):
    W2 = np.asarray(W2)
    return np.maximum(x @ W1 + b1, 0) @ W2 + b2


def product_after_converting_every_input(x, W1, b1, W2, b2):
    x, W1, b1, W2, b2 = (np.array(v, dtype=float) for v in (x, W1, b1, W2, b2))
    return np.maximum(x @ W1 + b1, 0) @ W2 + b2


def product_of_a_renamed_copy(x, W1, b1, W2, b2):
    M = np.array(W2)
    V = M.copy()
    return np.maximum(x @ W1 + b1, 0).dot(V) + b2


def einsum_over_units_after_astype(x, W1, b1, W2, b2):
    a = np.maximum(x @ W1 + b1, 0)
    return np.einsum("k,kj->j", a, W2.astype(float)) + b2


def transposed_matmul_after_copy(x, W1, b1, W2, b2):
    V = np.copy(W2)
    return np.matmul(V.T, np.maximum(x @ W1 + b1, 0)) + b2


@pytest.mark.parametrize("fn, shown", [
    (product_after_asarray, "`np.maximum(x @ W1 + b1, 0) @ W2`"),
    (product_after_converting_every_input, "`np.maximum(x @ W1 + b1, 0) @ W2`"),
    (product_of_a_renamed_copy, "`np.maximum(x @ W1 + b1, 0).dot(V)`"),
    (einsum_over_units_after_astype, "`np.einsum(\"k,kj->j\", a, W2.astype(float))`"),
    (transposed_matmul_after_copy, "`np.matmul(V.T, np.maximum(x @ W1 + b1, 0))`"),
])
def test_a_whole_product_after_stripping_the_watch_is_seen_in_the_source(fn, shown, capsys):
    """np.asarray(W2) or np.array(W2) hands back a plain array the watch cannot follow; the source still shows
    the product with all of W2, and the message quotes it."""
    ok, out = verdict(check_ffn_as_sum, fn, capsys)
    assert not ok, out
    assert f"gives the right numbers by multiplying W2 as a whole matrix ({shown}: a copy such as np.asarray(W2) " \
           "is still all of W2); the exercise asks for the sum over units: multiply each unit's h_k by its row of " \
           "W2, W2[k], and add the terms" in out, out
    assert "Likely mistake: W2 multiplied as a whole (h @ W2)" in out


def test_a_function_without_source_is_judged_by_the_watch_alone(capsys):
    fn = eval("lambda x, W1, b1, W2, b2: np.maximum(x @ W1 + b1, 0) @ np.asarray(W2) + b2", {"np": np})
    assert L._whole_products(fn) == []              # no source to read: nothing is claimed from it
    assert L._whole_products(sum_loop) == [] and L._whole_products(product_after_asarray)


@pytest.mark.parametrize("product", ["np.copy(W2)", "np.ascontiguousarray(W2)", "np.asarray(W2)", "np.array(W2)",
                                     "np.asfortranarray(W2)", "(W2 + 0)", "W2.copy()", "np.copy(W2).T.T"])
def test_a_whole_product_with_a_copy_of_w2_is_seen_without_the_source(product, capsys):
    """The clean grading process loads the learner's function without its source (cloudpickle), so the watch
    alone must see a copy of W2 multiplied whole: np.copy keeps the watch, and a plain copy meets the
    activations, which come from x, W1 and b1 (watched too), and is known by its numbers."""
    for h in ("np.maximum(x @ W1 + b1, 0)", "np.maximum(np.asarray(x) @ W1 + b1, 0)"):
        fn = eval(f"lambda x, W1, b1, W2, b2: {h} @ {product} + b2", {"np": np})
        assert L._whole_products(fn) == []                  # no source: the watch is the only witness
        ok, out = verdict(check_ffn_as_sum, fn, capsys)
        assert not ok and "Likely mistake: W2 multiplied as a whole (h @ W2)" in out, out
        assert "gives the right numbers by multiplying W2 as a whole matrix (h @ W2, np.dot or an einsum" in out


def test_the_watch_on_x_w1_and_b1_is_invisible_to_right_answers():
    """x, W1 and b1 come in as flows: what is computed from them prints and compares as plain arrays, and a
    product of them with a copy of W2 that keeps one row per unit (np.diag) is no whole product."""
    W2 = np.arange(6.0).reshape(3, 2).view(L._ProductWatch)
    W2.whole, W2.summed, W2.values = (3, 2), [], np.arange(6.0).reshape(3, 2)
    a = L._watched(np.array([1.0, 0.0, 2.0]), (), W2)
    assert repr(a * 2) == repr(np.array([2.0, 0.0, 4.0])) and float(a @ a) == 5.0
    assert type(np.diag(a) @ np.asarray(W2)) is L._ProductWatch and W2.summed == []
    assert np.array_equal(a @ np.asarray(W2), [8.0, 11.0]) and W2.summed == [(2,)]


def product_through_a_view(x, W1, b1, W2, b2):
    return np.maximum(x @ W1 + b1, 0) @ W2.view(np.ndarray) + b2


def product_by_vecmat(x, W1, b1, W2, b2):
    return np.vecmat(np.maximum(x @ W1 + b1, 0), W2) + b2


def product_by_matvec(x, W1, b1, W2, b2):
    return np.matvec(W2.T, np.maximum(x @ W1 + b1, 0)) + b2


@pytest.mark.parametrize("fn", [product_through_a_view, product_by_vecmat, product_by_matvec])
def test_a_whole_product_by_a_view_or_numpy_2s_matvec_is_seen(fn, capsys):
    ok, out = verdict(check_ffn_as_sum, fn, capsys)
    assert not ok and "multiplying W2 as a whole matrix" in out, out


def sum_skipping_small_units(x, W1, b1, W2, b2):
    y = b2.copy()
    for k in range(W1.shape[1]):
        a = max(0.0, x @ W1[:, k] + b1[k])
        if a > 1e-3:                                     # "too small to matter": but it is part of the sum
            y = y + a * W2[k]
    return y


def test_skipping_units_that_barely_fire_is_wrong(capsys):
    ok, out = verdict(check_ffn_as_sum, sum_skipping_small_units, capsys)
    assert not ok and "✘ a 5 -> 7 -> 5 FFN with unrounded weights, one unit barely firing (h = 2e-6)" in out, out
    assert "✔ a 5 -> 7 -> 5 FFN with unrounded weights, one unit barely firing" in verdict(
        check_ffn_as_sum, sum_loop, capsys)[1]


def sum_by_contributions(x, W1, b1, W2, b2):
    return kv.contributions(x, W1, b1, W2).sum(axis=0) + b2


def sum_by_rebuild(x, W1, b1, W2, b2):
    return kv.rebuild(x, W1, b1, W2, b2, range(len(b1)))


@pytest.mark.parametrize("fn, name", [(sum_by_contributions, "helpers.kv_memory.contributions"),
                                      (sum_by_rebuild, "helpers.kv_memory.rebuild`")])
def test_the_references_introduced_after_the_exercise_are_refused(fn, name, capsys):
    """kv.contributions and kv.rebuild come after Exercise 1, as "the references": they compute its sum."""
    ok, out = verdict(check_ffn_as_sum, fn, capsys)
    assert not ok and "calls the course's own `helpers.kv_memory." in out and name in out, out


def test_whole_product_with_a_slip_is_named_by_the_slip(capsys):
    def product_without_b2(x, W1, b1, W2, b2):
        return np.maximum(x @ W1 + b1, 0) @ W2
    ok, out = verdict(check_ffn_as_sum, product_without_b2, capsys)
    assert not ok and "Likely mistake: b2 left out" in out, out


@pytest.mark.parametrize("fn, decimals", [(rounded_4, 4), (rounded_2, 2)])
def test_a_rounded_output_is_named(fn, decimals, capsys):
    ok, out = verdict(check_ffn_as_sum, fn, capsys)
    assert not ok and f"returned the output rounded to {decimals} decimals" in out, out
    assert f"rounded to {decimals} decimals" in ok.mistake


def test_rounding_to_4_decimals_shows_only_on_the_unrounded_case(capsys):
    ok, out = verdict(check_ffn_as_sum, rounded_4, capsys)
    failed = [line for line in out.splitlines() if line.startswith("  \u2718")]
    assert len(failed) == 1 and "unrounded weights" in failed[0], out


def test_b2_aliased_and_changed_in_place(capsys):
    def aliased(x, W1, b1, W2, b2):
        y = b2                                      # no copy: y += ... changes b2 itself
        for k in range(W1.shape[1]):
            y += max(0.0, x @ W1[:, k] + b1[k]) * W2[k]
        return y
    ok, out = verdict(check_ffn_as_sum, aliased, capsys)
    assert not ok and "changed its input `b2` in place" in out
    # Its numbers are right: the summary names the aliasing, never a slip in the computation (the trial
    # learner's report: "W2 multiplied as a whole" for a loop over the units).
    lines = named(out)
    assert len(lines) == 1 and lines[0].startswith("  Likely mistake: b2 changed in place"), out
    assert "W2 multiplied as a whole" not in out
    assert ok.mistake.startswith("b2 changed in place"), ok.mistake


def test_a_value_scaled_in_place_is_named_as_a_changed_input(capsys):
    def scaled_in_place(x, W1, b1, W2, b2):
        for k in range(W1.shape[1]):
            W2[k] *= max(0.0, x @ W1[:, k] + b1[k])     # each value scaled where it is stored
        return W2.sum(axis=0) + b2
    ok, out = verdict(check_ffn_as_sum, scaled_in_place, capsys)
    assert not ok and "changed its input `W2` in place" in out
    lines = named(out)
    assert len(lines) == 1 and "the input `W2` changed in place" in lines[0], out


def test_b2_aliased_with_another_slip_is_named_by_the_slip(capsys):
    def aliased_without_relu(x, W1, b1, W2, b2):
        y = b2
        for k in range(W1.shape[1]):
            y += (x @ W1[:, k] + b1[k]) * W2[k]
        return y
    ok, out = verdict(check_ffn_as_sum, aliased_without_relu, capsys)
    assert not ok and "changed its input `b2` in place" in out
    lines = named(out)
    assert len(lines) == 1 and "ReLU not applied" in lines[0], out


def test_aliased_b2_with_the_whole_product_is_named_by_the_rule(capsys):
    def aliased_product(x, W1, b1, W2, b2):
        y = b2
        y += np.maximum(x @ W1 + b1, 0) @ W2
        return y
    ok, out = verdict(check_ffn_as_sum, aliased_product, capsys)
    assert not ok and named(out)[0].startswith("  Likely mistake: W2 multiplied as a whole"), out


def test_a_case_has_units_past_index_d_that_fire_and_write():
    """Without such a case a loop over range(d) passes: in every other case the units from d on are silent
    (or the layer is square)."""
    writers = []
    for case in L._sum_cases():
        a = case.args
        d = len(a["x"])
        contributions = np.maximum(a["x"] @ a["W1"] + a["b1"], 0)[:, None] * a["W2"]   # (d_ff, d)
        writers.append(int((np.abs(contributions[d:]).sum(axis=1) > 0.1).sum()))
    assert max(writers) >= 3, writers


def test_the_product_watch_is_invisible_to_right_answers():
    """W2 as the check hands it prints as the plain array, and products with its rows are plain arrays."""
    W2 = np.arange(6.0).reshape(3, 2).view(L._ProductWatch)
    W2.whole, W2.summed = (3, 2), []
    assert repr(W2) == repr(np.arange(6.0).reshape(3, 2))
    assert type(W2[0] * 2.0) is np.ndarray and type(np.ones(3) @ W2) is np.ndarray
    assert W2.summed == [(2,)]


def test_sum_stub_says_not_implemented(capsys):
    def stub(x, W1, b1, W2, b2):
        raise NotImplementedError("your code here")
    ok, out = verdict(check_ffn_as_sum, stub, capsys)
    assert not ok and "not implemented yet" in out and "\u2718" not in out
    assert ok.status == "not attempted"


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


def top_squared_lengths(x, W1, b1, W2, k):
    """Squared lengths rank the units the same way."""
    C = np.maximum(x @ W1 + b1, 0)[:, None] * W2
    return [int(j) for j in np.argsort((C ** 2).sum(axis=1))[::-1][:k]]


def top_norm_ord2(x, W1, b1, W2, k):
    """The Euclidean norm asked for by name (ord=2 on a vector)."""
    C = np.maximum(x @ W1 + b1, 0)[:, None] * W2
    return [int(j) for j in np.argsort(-np.array([np.linalg.norm(row, ord=2) for row in C]))[:k]]


RIGHT_TOPS = [top_numpy, top_sorted, top_array_reversed, top_heap, top_squared_lengths, top_norm_ord2]


def top_skips_the_largest(x, W1, b1, W2, k):
    sizes = np.linalg.norm(np.maximum(x @ W1 + b1, 0)[:, None] * W2, axis=1)
    return [int(j) for j in np.argsort(-sizes)[1:k + 1]]


def top_by_abs_preactivation_times_length(x, W1, b1, W2, k):
    z = x @ W1 + b1
    return [int(j) for j in np.argsort(-(np.abs(z) * np.linalg.norm(W2, axis=1)))[:k]]


def sum_leaky(x, W1, b1, W2, b2):
    y = b2.copy()
    for k in range(len(b1)):
        z = x @ W1[:, k] + b1[k]
        y = y + (z if z > 0 else 0.01 * z) * W2[k]
    return y


def sum_bias_subtracted(x, W1, b1, W2, b2):
    y = b2.copy()
    for k in range(len(b1)):
        y = y + max(0.0, x @ W1[:, k] - b1[k]) * W2[k]
    return y


@pytest.mark.parametrize("check, fn, diagnosis", [
    (check_top_units, top_skips_the_largest, "Likely mistake: the largest unit skipped: the slice starts at 1"),
    (check_top_units, top_by_abs_preactivation_times_length,
     "Likely mistake: ranked by |x . w_j + b1_j| * ||u_j||: the pre-activation's size, before the ReLU"),
    (check_ffn_as_sum, sum_leaky, "Likely mistake: a leaky ReLU (slope 0.01)"),
    (check_ffn_as_sum, sum_bias_subtracted, "Likely mistake: b1 subtracted instead of added"),
])
def test_more_slips_are_named(check, fn, diagnosis, capsys):
    ok, out = verdict(check, fn, capsys)
    assert not ok and diagnosis in out and len(named(out)) == 1, out


def test_top_units_by_the_contributions_reference_is_refused(capsys):
    """kv.contributions is introduced after Exercise 2 as one of "the references" (with kv.top_units): it
    computes the terms h_j u_j that the exercise asks for."""
    def top_units(x, W1, b1, W2, k):
        sizes = np.linalg.norm(kv.contributions(x, W1, b1, W2), axis=1)
        return [int(j) for j in np.argsort(-sizes)[:k]]
    ok, out = verdict(check_top_units, top_units, capsys)
    assert not ok and "calls the course's own `helpers.kv_memory.contributions`" in out, out


@pytest.mark.parametrize("fn", RIGHT_TOPS)
def test_correct_top_units_pass(fn, capsys):
    ok, out = verdict(check_top_units, fn, capsys)
    assert ok, out
    assert "all 5 public cases pass" in out


def test_correct_top_units_pass_the_hidden_case_when_graded(monkeypatch, capsys):
    monkeypatch.setenv("FFN_GRADING", "1")
    for fn in RIGHT_TOPS:
        ok, out = verdict(check_top_units, fn, capsys)
        assert ok and "all 6 cases pass, 1 of them hidden" in out, out


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


def top_by_signed_sum(x, W1, b1, W2, k):
    C = np.maximum(x @ W1 + b1, 0)[:, None] * W2
    return list(np.argsort(-C.sum(axis=1))[:k])


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


def top_l1(x, W1, b1, W2, k):
    """The trial learner's slip: the length as the sum of absolute values (L1)."""
    a = np.maximum(x @ W1 + b1, 0)
    return list(np.argsort(-(a * np.abs(W2).sum(axis=1)))[:k])


def top_l1_ord(x, W1, b1, W2, k):
    """The same, asked of np.linalg.norm with ord=1."""
    C = np.maximum(x @ W1 + b1, 0)[:, None] * W2
    return [int(j) for j in np.argsort(-np.linalg.norm(C, ord=1, axis=1))[:k]]


def top_max_norm(x, W1, b1, W2, k):
    """The length as the largest coordinate (ord=np.inf)."""
    C = np.maximum(x @ W1 + b1, 0)[:, None] * W2
    return [int(j) for j in np.argsort(-np.linalg.norm(C, ord=np.inf, axis=1))[:k]]


def top_from_one(x, W1, b1, W2, k):
    return [int(j) + 1 for j in np.argsort(-_sizes(x, W1, b1, W2))[:k]]


@pytest.mark.parametrize("fn, diagnosis", [
    (top_ascending, "sorted ascending"),
    (top_smallest_first, "the right units, listed smallest first"),
    (top_by_activation, "ranked by the activation h_j alone"),
    (top_by_value_length, "ranked by the length of the value"),
    (top_by_pre_activation, "ranked by the size of the pre-activation"),
    (top_by_signed_sum, "ranked by the sum of h_j u_j's coordinates"),
    (top_rows_of_W1, "keys read from the rows of W1"),
    (top_columns_of_W2, "values read from the columns of W2"),
    (top_norm_axis0, "norm taken over the wrong axis"),
    (top_l1, "the length measured with the sum of absolute values (L1), not the Euclidean norm"),
    (top_l1_ord, "the length measured with the sum of absolute values (L1), not the Euclidean norm"),
    (top_max_norm, "the length measured with the largest coordinate (the max norm), not the Euclidean norm"),
])
def test_each_wrong_top_units_gets_its_own_diagnosis(fn, diagnosis, capsys):
    ok, out = verdict(check_top_units, fn, capsys)
    assert not ok
    assert "Likely mistake: " + diagnosis in out, out


def test_counting_from_one_is_named(capsys):
    ok, out = verdict(check_top_units, top_from_one, capsys)
    assert not ok and ("counting units from 1" in out or "did you count from 1?" in out), out


def top_filled_zeros(x, W1, b1, W2, k):
    """Indices written into np.zeros(k), which holds floats."""
    order = np.argsort(-_sizes(x, W1, b1, W2))
    chosen = np.zeros(k)
    for i in range(k):
        chosen[i] = order[i]
    return chosen


def top_as_float_list(x, W1, b1, W2, k):
    return [float(j) for j in np.argsort(-_sizes(x, W1, b1, W2))[:k]]


def top_every_unit(x, W1, b1, W2, k):
    return list(np.argsort(-_sizes(x, W1, b1, W2)))


def top_one_too_many(x, W1, b1, W2, k):
    return top_numpy(x, W1, b1, W2, k + 1)


def top_sizes_not_indices(x, W1, b1, W2, k):
    return sorted(_sizes(x, W1, b1, W2), reverse=True)[:k]


def top_argpartition(x, W1, b1, W2, k):
    """The k largest, found without sorting them."""
    return [int(j) for j in np.argpartition(-_sizes(x, W1, b1, W2), k - 1)[:k]]


def test_the_right_units_in_another_order_are_named(capsys):
    import random

    def shuffled(x, W1, b1, W2, k):
        units = top_numpy(x, W1, b1, W2, k)
        if k > 2:
            units = [units[1], units[0]] + units[2:]
        return units
    ok, out = verdict(check_top_units, shuffled, capsys)
    assert not ok and "returned the right units in another order" in out, out
    assert "unit 4 comes before unit 1, though ||h_j u_j|| is 2.25 for unit 1 and 1.8 for unit 4" in out, out
    ok, out = verdict(check_top_units, top_argpartition, capsys)
    assert ok or "another order" in out or "smallest first" in out, out


def test_a_list_sorted_by_another_length_is_not_told_to_sort(capsys):
    """On the hidden case the L1 ranking picks the right units in another order: the message says which pair
    is out of order by the Euclidean length, not only "list them largest first" (the list was sorted)."""
    for value in (None, *SECRETS):
        with graded_under(value):
            ok, out = verdict(check_top_units, top_l1, capsys)
        hidden = next(line for line in out.splitlines() if "hidden: " in line)
        assert not ok and "the right units in another order" in hidden and "comes before unit" in hidden, out
        assert "check the key you sorted by" in hidden
        assert "Likely mistake: the length measured with the sum of absolute values (L1)" in out


def test_the_shaped_case_tells_the_euclidean_length_from_l1_and_max():
    case = L._top_cases()[-1]
    args = [case.args[n] for n in ("x", "W1", "b1", "W2")]
    C = np.maximum(args[0] @ args[1] + args[2], 0)[:, None] * args[3]
    assert kv.top_units(*args, 2) == [2, 0]
    assert list(np.argsort(-np.abs(C).sum(axis=1))[:2]) == [2, 1]
    assert list(np.argsort(-np.abs(C).max(axis=1))[:2]) == [0, 3]
    lengths = np.sort(np.linalg.norm(C, axis=1))[::-1]
    assert lengths[1] - lengths[2] > 0.05                 # the top 2 are clear of the third


@pytest.mark.parametrize("fn, message", [
    (top_filled_zeros, "returned the indices as floats"),
    (top_as_float_list, "returned the indices as floats"),
    (top_every_unit, "returned all 4 units; keep only the first k = 2"),
    (top_one_too_many, "returned 3 indices; expected k = 2"),
    (top_sizes_not_indices, "not whole"),
])
def test_indices_of_the_wrong_kind_or_number_are_rejected(fn, message, capsys):
    """Float indices cannot index anything: they are rejected even when their values are right."""
    ok, out = verdict(check_top_units, fn, capsys)
    assert not ok and message in out, out
    assert message.split(";")[0] in ok.mistake or message in out


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
# store_fact(W1, b1, W2, key, value): right answers read kv.THETA when they run
# --------------------------------------------------------------------------------------------------------
def store_stack(W1, b1, W2, key, value):
    theta = kv.THETA
    return (np.column_stack([W1, key / (1 - theta)]), np.append(b1, -theta / (1 - theta)),
            np.vstack([W2, value]))


def store_concatenate(W1, b1, W2, key, value):
    s = 1 / (1 - kv.THETA)
    return (np.concatenate([W1, (key * s)[:, None]], axis=1),
            np.concatenate([b1, [-kv.THETA * s]]),
            np.concatenate([W2, value[None, :]], axis=0))


def store_scale_the_value(W1, b1, W2, key, value):
    """Threshold in the key's units and the scale on the value: the same contribution (ReLU is homogeneous)."""
    return np.hstack([W1, key[:, None]]), np.hstack([b1, -kv.THETA]), np.vstack([W2, value / (1 - kv.THETA)])


def store_in_front(W1, b1, W2, key, value):
    """The new unit first: a different order of units, the same memory."""
    s = 1 / (1 - kv.THETA)
    return np.insert(W1, 0, key * s, axis=1), np.insert(b1, 0, -kv.THETA * s), np.insert(W2, 0, value, axis=0)


def store_lists(W1, b1, W2, key, value):
    """Plain lists of rows, built with loops."""
    s = 1 / (1 - kv.THETA)
    d, n = W1.shape
    W1_new = [list(W1[i]) + [key[i] * s] for i in range(d)]
    return W1_new, list(b1) + [-kv.THETA * s], [list(row) for row in W2] + [list(value)]


def store_theta_in_a_helper(W1, b1, W2, key, value):
    """kv.THETA read at call time inside a lambda: as good as reading it in the body."""
    scale = lambda: 1 / (1 - kv.THETA)          # noqa: E731
    return (np.column_stack([W1, key * scale()]), np.append(b1, -kv.THETA * scale()), np.vstack([W2, value]))


def store_with_reference(W1, b1, W2, key, value):
    return kv.store_fact(W1, b1, W2, key, value)


def store_with_build_memory(W1, b1, W2, key, value):
    """build_memory builds the new unit: the design work skipped."""
    w, b, u = kv.build_memory(key[None], value[None])
    return np.hstack([W1, w]), np.concatenate([b1, b]), np.vstack([W2, u])


def store_with_imported_build_memory(W1, b1, W2, key, value):
    from helpers.kv_memory import build_memory
    w, b, u = build_memory(key[None], value[None], kv.THETA)
    return np.column_stack([W1, w]), np.append(b1, b), np.vstack([W2, u])


RIGHT_STORES = [store_stack, store_concatenate, store_in_front, store_lists, store_theta_in_a_helper]


@pytest.mark.parametrize("fn, words", [
    (store_scale_the_value, "the new unit fires with h = 0.5 on its own key, not 1"),
    (store_with_reference, "calls the course's own `helpers.kv_memory.store_fact`"),
    (store_with_build_memory, "calls the course's own `helpers.kv_memory.build_memory`, which builds the "
                              "units for you: the exercise is to work out the new unit yourself"),
    (store_with_imported_build_memory, "calls the course's own `helpers.kv_memory.build_memory`"),
])
def test_store_fact_that_recalls_right_but_not_as_the_text_asks_is_named(fn, words, capsys):
    # Scaling the value instead of the unit recalls every fact, but the text asks for a unit that fires with
    # a = 1 on its own key and writes the value itself; calling the course's store_fact builds nothing.
    ok, out = verdict(check_store_fact, fn, capsys)
    assert not ok and words in out, out


@pytest.mark.parametrize("fn", RIGHT_STORES)
def test_correct_store_fact_passes(fn, capsys):
    ok, out = verdict(check_store_fact, fn, capsys)
    assert ok, out
    assert "all 4 public cases pass" in out
    assert kv.THETA == 0.5                           # the check puts the constant back


def test_correct_store_fact_passes_the_hidden_case_when_graded(monkeypatch, capsys):
    monkeypatch.setenv("FFN_GRADING", "1")
    for fn in RIGHT_STORES:
        ok, out = verdict(check_store_fact, fn, capsys)
        assert ok and "all 5 cases pass, 1 of them hidden" in out, out


def store_swapped(W1, b1, W2, key, value):
    s = 1 / (1 - kv.THETA)
    return np.column_stack([W1, value * s]), np.append(b1, -kv.THETA * s), np.vstack([W2, key])


def store_no_threshold(W1, b1, W2, key, value):
    return np.column_stack([W1, key]), np.append(b1, 0.0), np.vstack([W2, value])


def store_scaled_no_threshold(W1, b1, W2, key, value):
    return np.column_stack([W1, key / (1 - kv.THETA)]), np.append(b1, 0.0), np.vstack([W2, value])


def store_wrong_sign(W1, b1, W2, key, value):
    s = 1 / (1 - kv.THETA)
    return np.column_stack([W1, key * s]), np.append(b1, kv.THETA * s), np.vstack([W2, value])


def store_unscaled(W1, b1, W2, key, value):
    return np.column_stack([W1, key]), np.append(b1, -kv.THETA), np.vstack([W2, value])


def store_bias_unscaled(W1, b1, W2, key, value):
    s = 1 / (1 - kv.THETA)
    return np.column_stack([W1, key * s]), np.append(b1, -kv.THETA), np.vstack([W2, value])


def store_column_unscaled(W1, b1, W2, key, value):
    """Only the bias scaled: the threshold moves to cosine THETA / (1 - THETA) = 1, and the unit never fires."""
    return np.column_stack([W1, key]), np.append(b1, -kv.THETA / (1 - kv.THETA)), np.vstack([W2, value])


def store_inverse_theta(W1, b1, W2, key, value):
    """The scale worked out from the printed numbers as 1 / THETA (2 at THETA = 0.5, like 1 / (1 - THETA))."""
    return np.column_stack([W1, key / kv.THETA]), np.append(b1, -1.0), np.vstack([W2, value])


def store_written_out(W1, b1, W2, key, value):
    """The threshold typed in as its printed value, 0.5."""
    return np.column_stack([W1, key / 0.5]), np.append(b1, -0.5 / 0.5), np.vstack([W2, value])


def store_frozen_default(W1, b1, W2, key, value, theta=kv.THETA):
    """kv.THETA read once, when the function was defined: the same slip."""
    return np.column_stack([W1, key / (1 - theta)]), np.append(b1, -theta / (1 - theta)), np.vstack([W2, value])


@pytest.mark.parametrize("fn, diagnosis, symptom", [
    (store_swapped, "key and value swapped", "for the new key"),
    (store_no_threshold, "no threshold: the new unit's bias is 0",
     "the new unit fires for old key 0 too (h = 0.276), so its threshold is too low"),
    (store_scaled_no_threshold, "the column scaled, but no threshold (bias 0)", "for the new key"),
    (store_wrong_sign, "the threshold with the wrong sign", "for the new key"),
    (store_unscaled, "the unit not rescaled: on its own key it fires with h = 1 - THETA",
     "(0.5 times the value: the new unit's activation"),
    (store_bias_unscaled, "the bias not scaled like the column", "for the new key"),
    (store_column_unscaled, "the column not scaled like the bias", "(no unit fires for it)"),
    (store_inverse_theta, "the scale worked out as 1 / THETA, which is right only when THETA = 0.5",
     "(2.33 times the value: the new unit's activation on its key should be 1)"),
    (store_written_out, "the threshold written as 0.5 instead of read from kv.THETA",
     "In this case the check set kv.THETA to 0.3: read kv.THETA inside your function"),
    (store_frozen_default, "the threshold read from `theta=0.5`, fixed outside your function, so it kept 0.5 "
                           "when kv.THETA changed. A default value is computed once, when `def` runs",
     "yours writes nothing there, so its threshold is above 0.475"),
])
def test_each_wrong_store_fact_gets_its_own_diagnosis(fn, diagnosis, symptom, capsys):
    ok, out = verdict(check_store_fact, fn, capsys)
    assert not ok
    assert "Likely mistake: " + diagnosis in out, out
    assert symptom in out, out
    assert kv.THETA == 0.5


def learner(source):
    """The function a notebook cell defines, with the lesson's imports, in its own namespace."""
    names = {"__name__": "__main__"}
    exec("import numpy as np\nfrom helpers import kv_memory as kv\n" + source, names)
    return names["store_fact"]


BODY = ("def store_fact(W1, b1, W2, key, value):\n"
        "    s = 1 / (1 - {t})\n"
        "    return np.column_stack([W1, key * s]), np.append(b1, -{t} * s), np.vstack([W2, value])\n")


@pytest.mark.parametrize("setup, name", [
    ("from helpers.kv_memory import THETA\n", "THETA"),
    ("THETA = 0.5\n", "THETA"),
    ("theta = kv.THETA                                   # 0.5\n", "theta"),
])
def test_a_threshold_set_outside_the_function_is_named(setup, name, capsys):
    """A global THETA or theta (imported, typed in, or the lesson's earlier cell) is a copy made once: the
    check leaves it alone, so it fails the case that changes kv.THETA, and says why."""
    fn = learner(setup + BODY.format(t=name))
    ok, out = verdict(check_store_fact, fn, capsys)
    assert not ok and "1 of 4 cases failed" in out, out
    assert (f"Likely mistake: the threshold read from `{name}`, fixed outside your function, so it kept 0.5 when "
            "kv.THETA changed") in out, out
    assert "is a copy of the number, made once, when that line ran" in out
    assert "Read kv.THETA inside your function" in out
    assert f"your function reads `{name}`, fixed before it ran, which kept 0.5" in out
    assert fn.__globals__[name] == 0.5 and kv.THETA == 0.5     # the check patched nothing of the learner's


def test_a_global_threshold_with_another_slip_is_named_by_the_slip(capsys):
    fn = learner("THETA = 0.5\ndef store_fact(W1, b1, W2, key, value):\n"
                 "    return np.column_stack([W1, key]), np.append(b1, -THETA), np.vstack([W2, value])\n")
    ok, out = verdict(check_store_fact, fn, capsys)
    assert not ok and "the unit not rescaled" in out and "fixed outside your function" not in out, out


def test_a_global_that_is_not_the_threshold_is_not_blamed(capsys):
    fn = learner("HALF = 0.25\ndef store_fact(W1, b1, W2, key, value):\n"
                 "    t = kv.THETA\n"
                 "    return np.column_stack([W1, key / (1 - t)]), np.append(b1, -t / (1 - t)), "
                 "np.vstack([W2, value + 0 * HALF])\n")
    ok, out = verdict(check_store_fact, fn, capsys)
    assert ok, out


FORMULAS = ("/ (1 - THETA)", "/(1 - THETA)", "/ (1 - theta)", "1 - kv.THETA)")


@pytest.mark.parametrize("fn", [store_unscaled, store_no_threshold, store_scaled_no_threshold, store_bias_unscaled,
                                store_column_unscaled, store_inverse_theta, store_wrong_sign])
def test_store_fact_first_failure_names_the_slip_without_the_formula(fn, capsys):
    """A design exercise: the first failure says what is wrong and which way to go, never the unit's column
    and bias; it says how to see them."""
    ok, out = verdict(check_store_fact, fn, capsys)
    assert not ok and "Likely mistake:" in out
    assert not any(formula in out for formula in FORMULAS), out
    assert "If it fails again in this session" in out and "check_store_fact(store_fact, reveal=True)" in out


def test_store_fact_reveals_the_unit_after_a_second_failure_or_on_request(capsys):
    ok, out = verdict(check_store_fact, store_unscaled, capsys)
    assert not ok and "The answer" not in out
    ok, out = verdict(check_store_fact, store_bias_unscaled, capsys)
    assert not ok and "The answer, after your second try: the new unit's column is key / (1 - THETA), its bias " \
                      "-THETA / (1 - THETA)" in out, out
    _verdict._FAILED_ATTEMPTS.clear()
    ok = check_store_fact(store_unscaled, reveal=True)
    out = capsys.readouterr().out
    assert not ok and "The answer, as you asked: the new unit's column is key / (1 - THETA)" in out
    ok, out = verdict(check_store_fact, store_stack, capsys)            # the revealed unit passes
    assert ok and "The answer" not in out


def test_a_threshold_other_than_theta_is_named_by_the_threshold_it_behaves_like(capsys):
    def store_higher_threshold(W1, b1, W2, key, value):
        theta = 0.8                          # stores every fact here, but is not the threshold the text asks
        return (np.column_stack([W1, key / (1 - theta)]), np.append(b1, -theta / (1 - theta)),
                np.vstack([W2, value]))
    ok, out = verdict(check_store_fact, store_higher_threshold, capsys)
    assert not ok and "4 of 4 cases failed" in out, out
    assert "above kv.THETA = 0.5, the new unit should write 0.25 times the value" in out
    assert "yours writes nothing there, so its threshold is above 0.625" in out

    def store_lower_threshold(W1, b1, W2, key, value):
        theta = 0.4
        return (np.column_stack([W1, key / (1 - theta)]), np.append(b1, -theta / (1 - theta)),
                np.vstack([W2, value]))
    ok, out = verdict(check_store_fact, store_lower_threshold, capsys)
    assert not ok and "as a unit with threshold 0.4 would" in out, out


def test_value_written_twice_as_long_is_named(capsys):
    def doubled(W1, b1, W2, key, value):
        s = 1 / (1 - kv.THETA)
        return np.column_stack([W1, key * s]), np.append(b1, -kv.THETA * s), np.vstack([W2, value * s])
    ok, out = verdict(check_store_fact, doubled, capsys)
    assert not ok and "(2 times the value: the new unit's activation on its key should be 1)" in out, out


def test_store_fact_shape_messages(capsys):
    s = 1 / (1 - kv.THETA)

    def overwrite_unit_0(W1, b1, W2, key, value):
        W1, b1, W2 = W1.copy(), b1.copy(), W2.copy()
        W1[:, 0], b1[0], W2[0] = key * s, -kv.THETA * s, value
        return W1, b1, W2
    ok, out = verdict(check_store_fact, overwrite_unit_0, capsys)
    assert not ok and "as many units as before" in out and "IndexError" in out

    def only_the_new_fact(W1, b1, W2, key, value):
        return key[:, None] * s, np.array([-kv.THETA * s]), value[None, :]
    ok, out = verdict(check_store_fact, only_the_new_fact, capsys)
    assert not ok and "holds only the new fact" in out

    def key_as_a_row(W1, b1, W2, key, value):
        return np.vstack([W1, key[:W1.shape[1]]]), np.append(b1, -kv.THETA * s), np.vstack([W2, value])
    ok, out = verdict(check_store_fact, key_as_a_row, capsys)
    assert not ok and "The key went in as a row" in out

    def value_as_a_column(W1, b1, W2, key, value):
        return (np.column_stack([W1, key * s]), np.append(b1, -kv.THETA * s),
                np.column_stack([W2, value[:len(W2)]]))
    ok, out = verdict(check_store_fact, value_as_a_column, capsys)
    assert not ok and "The value went in as a column" in out


def test_store_fact_names_an_old_unit_overwritten(capsys):
    def off_by_one(W1, b1, W2, key, value):
        s = 1 / (1 - kv.THETA)
        W2_new = np.vstack([W2, value])
        W2_new[len(W2) - 1] = value                 # meant the new row, wrote over the last old one
        return np.column_stack([W1, key * s]), np.append(b1, -kv.THETA * s), W2_new
    ok, out = verdict(check_store_fact, off_by_one, capsys)
    assert not ok and "some of the old units were changed" in out


def test_store_fact_stub_exception_none_and_mutation(capsys):
    def stub(W1, b1, W2, key, value):
        raise NotImplementedError("your code here")
    ok, out = verdict(check_store_fact, stub, capsys)
    assert not ok and "not implemented yet" in out and "\u2718" not in out
    assert ok.status == "not attempted" and kv.THETA == 0.5

    def crashes(W1, b1, W2, key, value):
        return np.hstack([W1, key])
    ok, out = verdict(check_store_fact, crashes, capsys)
    assert not ok and "raised ValueError" in out and kv.THETA == 0.5

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


def test_store_cases_keep_old_keys_below_the_threshold_and_probes_orthogonal_to_them():
    drawn = []
    for value in (None, *SECRETS):
        with graded_under(value):
            drawn += L._store_hidden()
    for store in L._store_cases() + drawn:
        keys, new = store.queries[:-1], store.queries[-1]
        assert np.all(keys @ new < store.theta - 0.1)                     # the new key is a fair new fact
        assert np.allclose(store.probes @ new, store.cosines)
        assert np.all(np.abs(store.probes @ keys.T) < store.theta)        # old units stay silent for probes
    for store in drawn:                                                   # a threshold other than the lesson's
        d, n = store.case.args["W1"].shape
        assert 0.6 <= store.theta <= 0.8 and 8 <= d <= 14 and 3 <= n <= d - 3, (store.theta, d, n)


# --------------------------------------------------------------------------------------------------------
# Every mutant a grader knows is reachable: run as a learner's function, it is diagnosed as itself
# --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("check, bank", [("check_ffn_as_sum", "_SUM_MISTAKES"), ("check_top_units", "_TOP_MISTAKES"),
                                         ("check_store_fact", "_STORE_MISTAKES")],
                         ids=["ffn_as_sum", "top_units", "store_fact"])
def test_every_mutant_is_diagnosed_as_itself(check, bank, capsys):
    for mistake in getattr(L, bank):
        ok, out = verdict(getattr(L, check), mistake.fn, capsys)
        lines = named(out)
        assert not ok and len(lines) == 1 and mistake.name in lines[0], (mistake.name, out)


def test_store_fact_right_but_changing_key_in_place_gets_no_wrong_diagnosis(capsys):
    def store_fact(W1, b1, W2, key, value):
        key *= 1 / (1 - kv.THETA)                       # the right scale, but written into the caller's key
        return np.column_stack([W1, key]), np.append(b1, -kv.THETA / (1 - kv.THETA)), np.vstack([W2, value])
    ok, out = verdict(check_store_fact, store_fact, capsys)
    assert not ok and "changed its input `key` in place" in out
    assert "Likely mistake" not in out and "Possibly" not in out, out


def test_top_units_with_b1_left_out_is_named(capsys):
    def top_units(x, W1, b1, W2, k):
        a = np.maximum(np.asarray(x) @ np.asarray(W1), 0)
        sizes = np.linalg.norm(a[:, None] * np.asarray(W2), axis=1)
        return [int(j) for j in np.argsort(-sizes, kind="stable")[:k]]
    ok, out = verdict(check_top_units, top_units, capsys)
    assert not ok and "b1 left out of the activations" in out, out


# --------------------------------------------------------------------------------------------------------
# Hidden cases: drawn at grading time from the grading secret, so no table of cases passes
# --------------------------------------------------------------------------------------------------------
WRONG_STORES = [(fn, diagnosis) for fn, diagnosis, _ in
                 next(m for m in test_each_wrong_store_fact_gets_its_own_diagnosis.pytestmark
                      if m.name == "parametrize").args[1]]
WRONG_TOPS = next(m for m in test_each_wrong_top_units_gets_its_own_diagnosis.pytestmark
                  if m.name == "parametrize").args[1]
HIDDEN = {"ffn_as_sum": (check_ffn_as_sum, lambda: L._sum_hidden(), RIGHT_SUMS,
                         [(fn, diagnosis) for fn, _, diagnosis in WRONG_SUMS], 6),
          # (not the signed sum: on the hidden case its silent units tie at 0, and NumPy's unstable argsort orders
          # them otherwise than the stored mistake's stable one, so no mistake gives its outcome on every case)
          "top_units": (check_top_units, lambda: L._top_hidden(), RIGHT_TOPS,
                        [(fn, words) for fn, words in WRONG_TOPS if fn is not top_by_signed_sum], 5),
          "store_fact": (check_store_fact, lambda: [s.case for s in L._store_hidden()], RIGHT_STORES, WRONG_STORES,
                         4)}
ANSWERS = {"ffn_as_sum": lambda x, W1, b1, W2, b2: sum_loop(x, W1, b1, W2, b2), "top_units": top_numpy,
           "store_fact": store_stack}


@pytest.mark.parametrize("exercise", HIDDEN)
def test_under_each_secret_right_answers_pass_and_wrong_ones_are_still_named(exercise, capsys):
    assert_banks_pass_and_fail_under_secrets(*HIDDEN[exercise], capsys, shown=lambda out: "\n".join(named(out)))
    assert kv.THETA == 0.5


@pytest.mark.parametrize("exercise", HIDDEN)
def test_a_table_of_the_cases_the_learners_copy_runs_fails_under_every_secret(exercise, capsys):
    check, _, _, _, n_public = HIDDEN[exercise]
    forgery = memorising_forgery(check, ANSWERS[exercise])
    assert_forgery_fails_under_every_secret(check, forgery, capsys, n_public=n_public)


@pytest.mark.parametrize("exercise", HIDDEN)
def test_hidden_cases_are_drawn_afresh_for_each_secret_and_the_same_twice_under_one(exercise):
    assert_drawn_afresh(HIDDEN[exercise][1])


def test_the_hidden_cases_keep_their_properties_under_every_secret():
    """What the fixed hidden cases had by their seeds, the drawn ones have by construction or by redrawing."""
    for value in (None, *SECRETS):
        with graded_under(value):
            (writing, barely), (top,) = L._sum_hidden(), L._top_hidden()
        d, d_ff = writing.args["W1"].shape
        assert 3 <= d <= 7 and d + 2 <= d_ff <= 2 * d + 2 and L._units_past_d_write(writing.args)
        a = np.maximum(barely.args["x"] @ barely.args["W1"] + barely.args["b1"], 0)
        assert np.sum((a > 0) & (a < 1e-5)) == 1 and np.isclose(a[(a > 0) & (a < 1e-5)][0], 2e-6, rtol=1e-6)
        assert L._top_traps(top) and top.args["k"] in (3, 4)
        assert np.sum(np.maximum(top.args["x"] @ top.args["W1"] + top.args["b1"], 0) == 0) >= 2   # silent units
