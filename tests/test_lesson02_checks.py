"""Lesson 02: helpers.flat against independent definitions, and the three graders against banks of right and
wrong implementations written the way a learner would write them."""
import copy
import itertools
import math

import numpy as np
import pytest

from helpers import flat
from helpers.checks import check_ffn_forward, check_matvec, check_transpose, lesson02
from helpers.checks._core import run
from helpers.checks.lesson02 import (FFN_CASES, FFN_MISTAKES, MATVEC_CASES, MATVEC_MISTAKES, TRANSPOSE_CASES,
                                     TRANSPOSE_MISTAKES, _ffn_hidden, numpy_uses)
from helpers.ffn import ffn

from hidden_under_secrets import (SECRETS, assert_drawn_afresh, assert_forgery_fails_under_every_secret, graded_under,
                                  memorising_forgery, same_repr)


# ---- helpers.flat ----------------------------------------------------------------------------------------
def test_index_and_row_follow_row_major_order():
    M = [0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23]  # 3 x 4: element (i, j) is 10 i + j
    assert [flat.index(i, j, 4) for i, j in [(0, 0), (0, 3), (1, 0), (2, 1)]] == [0, 3, 4, 9]
    assert all(M[flat.index(i, j, 4)] == 10 * i + j for i in range(3) for j in range(4))
    assert flat.row(M, 1, 4) == [10, 11, 12, 13] and flat.row(M, 2, 4) == [20, 21, 22, 23]


def test_flatten_reads_nested_lists_and_arrays_row_by_row():
    assert flat.flatten([[1, 2, 3], [4, 5, 6]]) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert flat.flatten(np.arange(6).reshape(3, 2).T) == [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]


def test_matvec_by_hand():
    # [[1, 2, 3], [4, 5, 6]] @ [1, 0, -1] = [1 - 3, 4 - 6]
    assert flat.matvec([1, 2, 3, 4, 5, 6], [1, 0, -1]) == [-2, -2]
    assert flat.matvec([2, -1, 0.5], [3]) == [6, -3, 1.5]


@pytest.mark.parametrize("n_rows, n_cols", [(1, 1), (3, 2), (2, 5), (4, 4)])
def test_matvec_vecmat_and_transpose_agree_with_numpy(n_rows, n_cols):
    rng = np.random.default_rng(n_rows * 10 + n_cols)
    A = rng.normal(size=(n_rows, n_cols))
    v, u = rng.normal(size=n_cols), rng.normal(size=n_rows)
    assert np.allclose(flat.matvec(A.ravel().tolist(), v.tolist()), A @ v)
    assert np.allclose(flat.vecmat(u.tolist(), A.ravel().tolist()), u @ A)
    assert flat.transpose(A.ravel().tolist(), n_rows, n_cols) == A.T.ravel().tolist()


def test_transpose_by_hand_and_twice_is_identity():
    M = [11, 12, 13, 21, 22, 23]
    assert flat.transpose(M, 2, 3) == [11, 21, 12, 22, 13, 23]
    assert flat.transpose(flat.transpose(M, 2, 3), 3, 2) == M


def test_relu_and_add():
    assert flat.relu([-2.0, 0.0, 3.5]) == [0.0, 0.0, 3.5]
    assert flat.add([1, 2], [10, -20]) == [11, -18]


@pytest.mark.parametrize("call", [
    lambda: flat.matvec([1, 2, 3], [1, 2]),          # 3 numbers are not rows of 2
    lambda: flat.transpose([1, 2, 3], 2, 2),
    lambda: flat.add([1, 2], [1]),
    lambda: flat.ffn_forward([1, 2], [1, 2, 3], [0, 0], [1, 2, 3, 4], [0, 0]),
])
def test_inconsistent_lengths_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_ffn_forward_reproduces_the_seed_trace():
    assert flat.ffn_forward([1, -1], [1, 1, 1, -1], [0, 0], [1, 0, 0, 1], [0, 0]) == [0, 2]


def test_ffn_forward_by_hand_with_biases():
    # D = 1, H = 2: z = [2*3 + 1, -1*3 + 1] = [7, -2], h = [7, 0], y = 0.5*7 + 0 - 4 = -0.5
    assert flat.ffn_forward([3.0], [2.0, -1.0], [1.0, 1.0], [0.5, 10.0], [-4.0]) == [-0.5]


@pytest.mark.parametrize("D, H", [(2, 8), (4, 3), (3, 3), (1, 5)])
def test_ffn_forward_matches_numpy_in_the_other_convention(D, H):
    # helpers.ffn is x @ W with W1 (D, H): its transpose, flattened, is this lesson's H x D layout.
    rng = np.random.default_rng(D * 100 + H)
    x, W1, b1 = rng.normal(size=D), rng.normal(size=(D, H)), rng.normal(size=H)
    W2, b2 = rng.normal(size=(H, D)), rng.normal(size=D)
    got = flat.ffn_forward(x.tolist(), flat.flatten(W1.T), b1.tolist(), flat.flatten(W2.T), b2.tolist())
    assert np.allclose(got, ffn(x, W1, b1, W2, b2))


def test_ffn_forward_takes_another_activation():
    got = flat.ffn_forward([1.0, -1.0], [1, 1, 1, -1], [0, 0], [1, 0, 0, 1], [0, 0],
                           activation=lambda z: [math.tanh(t) for t in z])
    assert got == [0.0, math.tanh(2.0)]


def test_the_figures_have_titles_and_labelled_axes():
    import matplotlib.pyplot as plt
    from helpers.plot_flat import draw_row_major, draw_update_histograms
    for ax in (draw_row_major(3, 4),
               draw_update_histograms({"correct": [-1.0, 2.0], "clamped": [0.0, 2.0]}, title="updates")):
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
    plt.close("all")


def test_the_clamped_histogram_outline_stays_at_or_above_zero():
    # The outline of a series that never goes below 0 must not run along y = 0 left of 0, which reads as if
    # the clamped updates reached below 0.
    import matplotlib.pyplot as plt
    from helpers.plot_flat import draw_update_histograms
    rng = np.random.default_rng(0)
    correct = rng.normal(size=500)
    ax = draw_update_histograms({"correct": correct.tolist(), "clamped": np.maximum(correct, 0).tolist()},
                                title="updates")
    filled, outline = ax.patches[0], ax.patches[-1]
    assert filled.get_path().vertices[:, 0].min() < -1                 # the correct one does reach below 0
    assert outline.get_path().vertices[:, 0].min() >= 0                 # the clamped one starts at 0
    assert outline.get_path().vertices[:, 0].max() >= correct.max()
    ax = draw_update_histograms({"correct": [-1.0, 2.0], "all zero": [0.0, 0.0]}, title="one value")
    assert ax.patches[-1].get_path().vertices[:, 0].min() >= 0
    plt.close("all")


# ---- the cases themselves ------------------------------------------------------------------------------
def signature(fn, case):
    """What a function does on a case: ("raises", type) or ("returns", values)."""
    outcome = run(fn, case.args)
    if outcome.raised:
        return ("raises", type(outcome.error))
    return ("returns", [float(v) for v in outcome.value])


def scale(signed):
    """The size of a reference's outputs (at most 1), for a margin that fits a case of small numbers."""
    return min(1.0, max(abs(t) for t in signed[1]))


def differ(a, b, margin=0.05):
    if a[0] != b[0]:
        return True
    if a[0] == "raises":
        return a[1] is not b[1]
    return len(a[1]) != len(b[1]) or max(abs(p - q) for p, q in zip(a[1], b[1])) > margin


GRADERS = {
    "ffn_forward": (FFN_CASES, FFN_MISTAKES, flat.ffn_forward),
    "matvec": (MATVEC_CASES, MATVEC_MISTAKES, flat.matvec),
    "transpose": (TRANSPOSE_CASES, TRANSPOSE_MISTAKES, flat.transpose),
}


@pytest.mark.parametrize("grader", GRADERS)
def test_every_mistake_is_distinguishable_from_every_other_and_from_the_reference(grader):
    cases, mistakes, reference = GRADERS[grader]
    candidates = [("the reference", reference)] + [(m.name, m.fn) for m in mistakes]
    signatures = {name: [signature(fn, case) for case in cases] for name, fn in candidates}
    for (name_a, _), (name_b, _) in itertools.combinations(candidates, 2):
        assert any(differ(a, b) for a, b in zip(signatures[name_a], signatures[name_b])), (name_a, name_b)


# Mistakes that only a case made for them can show (a ReLU switching at 1e-3 needs pre-activations near 0,
# ints need values that are not whole): they agree with the reference on the first case, and differ on
# their own case, the last.
TARGETED = {"the elements turned into ints"}


@pytest.mark.parametrize("grader", GRADERS)
def test_on_the_first_case_every_mistake_differs_from_the_reference(grader):
    # The core falls back to mutants that agree with the learner on the first failing case; a right answer
    # that fails for another reason (an input changed in place) must then match none of them.
    cases, mistakes, reference = GRADERS[grader]
    expected = signature(reference, cases[0])
    assert all(differ(signature(m.fn, cases[0]), expected) for m in mistakes if m.name not in TARGETED)
    for m in mistakes:
        if m.name in TARGETED:
            assert differ(signature(m.fn, cases[-1]), signature(reference, cases[-1])), m.name


def test_ffn_cases_cover_both_non_square_directions_biases_and_negative_outputs():
    shapes = [(len(c.args["x"]), len(c.args["b1"])) for c in FFN_CASES]
    assert any(H > D for D, H in shapes) and any(H < D for D, H in shapes) and any(H == D for D, H in shapes)
    for case in FFN_CASES[:3]:
        x, W1, b1, W2, b2 = case.args.values()
        assert all(b != 0 for b in b1) and all(b != 0 for b in b2), case.name
        z = flat.add(flat.matvec(W1, x), b1)
        assert min(z) < -0.1 and max(z) > 0.1 and min(abs(t) for t in z) > 0.1, case.name  # ReLU matters
        y = flat.ffn_forward(*case.args.values())
        assert min(y) < -0.1, case.name                                              # the output is signed


def test_the_one_stride_mistakes_pass_square_cases_and_fail_each_non_square_one_its_own_way():
    reference = [signature(flat.ffn_forward, case) for case in FFN_CASES]
    for mistake in FFN_MISTAKES[:3]:
        got = [signature(mistake.fn, case) for case in FFN_CASES]
        square = [i for i, c in enumerate(FFN_CASES) if len(c.args["x"]) == len(c.args["b1"])]
        assert all(not differ(got[i], reference[i], margin=1e-12) for i in square), mistake.name
        assert all(differ(got[i], reference[i], margin=0.05 * scale(reference[i]))
                   for i in range(len(FFN_CASES)) if i not in square)
    raised = [[signature(m.fn, c)[0] == "raises" for c in FFN_CASES[:2]] for m in FFN_MISTAKES[:3]]
    assert raised == [[False, True], [True, False], [True, True]]  # stride D, stride H, swapped


# ---- check_ffn_forward: right answers in many styles ---------------------------------------------------
def ffn_nested_loops(x, W1, b1, W2, b2):
    D, H = len(x), len(b1)
    h = []
    for i in range(H):
        total = 0.0
        for j in range(D):
            total += W1[i * D + j] * x[j]
        h.append(max(0.0, total + b1[i]))
    y = []
    for k in range(D):
        total = 0.0
        for i in range(H):
            total += W2[k * H + i] * h[i]
        y.append(total + b2[k])
    return y


def ffn_comprehensions(x, W1, b1, W2, b2):
    D, H = len(x), len(b1)
    h = [max(0, sum(w * x_j for w, x_j in zip(W1[i * D:(i + 1) * D], x)) + b1[i]) for i in range(H)]
    return [sum(w * h_i for w, h_i in zip(W2[k * H:(k + 1) * H], h)) + b2[k] for k in range(D)]


def ffn_numpy_returning_list(x, W1, b1, W2, b2):
    x, b1, b2 = np.asarray(x), np.asarray(b1), np.asarray(b2)
    W1 = np.asarray(W1).reshape(len(b1), len(x))   # (H, D)
    W2 = np.asarray(W2).reshape(len(x), len(b1))   # (D, H)
    return (W2 @ np.maximum(W1 @ x + b1, 0) + b2).tolist()


def ffn_numpy_returning_array(x, W1, b1, W2, b2):
    D = len(x)
    h = np.maximum(np.reshape(W1, (-1, D)) @ x + b1, 0.0)
    return np.reshape(W2, (D, -1)) @ h + b2


def ffn_returning_tuple(x, W1, b1, W2, b2):
    z = flat.add(flat.matvec(W1, x), b1)
    return tuple(flat.add(flat.matvec(W2, flat.relu(z)), b2))


def ffn_via_the_x_at_w_convention(x, W1, b1, W2, b2):
    # Converts to the other convention first and uses vecmat: right, if roundabout.
    D, H = len(x), len(b1)
    h = flat.relu(flat.add(flat.vecmat(x, flat.transpose(W1, H, D)), b1))
    return flat.add(flat.vecmat(h, flat.transpose(W2, D, H)), b2)


def ffn_calling_own_matvec(x, W1, b1, W2, b2):
    # exercise 1's matvec, written with loops, called once per layer: right, and no NumPy anywhere
    h = [max(0.0, t + b) for t, b in zip(matvec_loops(W1, x), b1)]
    return [t + b for t, b in zip(matvec_loops(W2, h), b2)]


def ffn_with_math(x, W1, b1, W2, b2):
    import math
    D, H = len(x), len(b1)
    h = [max(0.0, math.fsum(W1[i * D + j] * x[j] for j in range(D)) + b1[i]) for i in range(H)]
    return [math.fsum(W2[k * H + i] * h[i] for i in range(H)) + b2[k] for k in range(D)]


@pytest.mark.parametrize("fn", [ffn_nested_loops, ffn_comprehensions, ffn_returning_tuple,
                                ffn_via_the_x_at_w_convention, ffn_calling_own_matvec, ffn_with_math])
def test_ffn_forward_accepts_correct_styles(fn, capsys):
    assert check_ffn_forward(fn)
    out = capsys.readouterr().out
    assert "all 6 public cases pass. When your work is graded, more cases run." in out and "\u2718" not in out


# ---- check_ffn_forward: wrong answers, each named ------------------------------------------------------
def loops(x, W1, b1, W2, b2, at1, at2, act=lambda t: max(0.0, t), out=lambda t: t):
    """A learner's nested loops with the index expressions and activations given as parameters."""
    D, H = len(x), len(b1)
    h = []
    for i in range(H):
        total = 0.0
        for j in range(D):
            total += W1[at1(i, j, D, H)] * x[j]
        h.append(act(total + b1[i]))
    y = []
    for k in range(D):
        total = 0.0
        for i in range(H):
            total += W2[at2(k, i, D, H)] * h[i]
        y.append(out(total + b2[k]))
    return y


def right1(i, j, D, H):
    return i * D + j


def right2(k, i, D, H):
    return k * H + i


def one_stride_d(x, W1, b1, W2, b2):
    D = len(x)
    z = [sum(W1[i * D + j] * x[j] for j in range(D)) + b1[i] for i in range(len(b1))]
    h = [max(0.0, t) for t in z]
    return [sum(W2[k * D + i] * h[i] for i in range(len(h))) + b2[k] for k in range(D)]


def one_stride_h(x, W1, b1, W2, b2):
    return loops(x, W1, b1, W2, b2, lambda i, j, D, H: i * H + j, right2)


def strides_swapped(x, W1, b1, W2, b2):
    # a helper that takes a row's length to be len(M) // len(v), the number of rows
    def matvec_rows_as_stride(M, v):
        n_rows = len(M) // len(v)
        return [sum(M[i * n_rows + j] * v[j] for j in range(len(v))) for i in range(n_rows)]
    h = [max(0.0, t + b) for t, b in zip(matvec_rows_as_stride(W1, x), b1)]
    return [t + b for t, b in zip(matvec_rows_as_stride(W2, h), b2)]


def w1_transposed(x, W1, b1, W2, b2):
    D, H = len(x), len(b1)
    h = [max(0.0, sum(W1[j * H + i] * x[j] for j in range(D)) + b1[i]) for i in range(H)]   # W1 read as D x H
    return [sum(W2[k * H + i] * h[i] for i in range(H)) + b2[k] for k in range(D)]


def w2_transposed(x, W1, b1, W2, b2):
    return loops(x, W1, b1, W2, b2, right1, lambda k, i, D, H: i * D + k)


def both_transposed(x, W1, b1, W2, b2):
    # the x @ W convention: x @ W1 with W1 of shape (D, H), then h @ W2 with W2 of shape (H, D)
    h = flat.relu(flat.add(flat.vecmat(x, W1), b1))
    return flat.add(flat.vecmat(h, W2), b2)


def relu_after_w2_too(x, W1, b1, W2, b2):
    return loops(x, W1, b1, W2, b2, right1, right2, out=lambda t: max(0.0, t))


def relu_only_after_w2(x, W1, b1, W2, b2):
    return loops(x, W1, b1, W2, b2, right1, right2, act=lambda t: t, out=lambda t: max(0.0, t))


def no_relu(x, W1, b1, W2, b2):
    return loops(x, W1, b1, W2, b2, right1, right2, act=lambda t: t)


def no_b1(x, W1, b1, W2, b2):
    return ffn_nested_loops(x, W1, [0] * len(b1), W2, b2)


def no_b2(x, W1, b1, W2, b2):
    D, H = len(x), len(b1)
    h = [max(0, sum(W1[i * D + j] * x[j] for j in range(D)) + b1[i]) for i in range(H)]
    return [sum(W2[k * H + i] * h[i] for i in range(H)) for k in range(D)]


def b1_after_relu(x, W1, b1, W2, b2):
    D, H = len(x), len(b1)
    h = [max(0, sum(W1[i * D + j] * x[j] for j in range(D))) + b1[i] for i in range(H)]
    return [sum(W2[k * H + i] * h[i] for i in range(H)) + b2[k] for k in range(D)]


def biases_in_inner_loop(x, W1, b1, W2, b2):
    D, H = len(x), len(b1)
    h = []
    for i in range(H):
        total = 0.0
        for j in range(D):
            total += W1[i * D + j] * x[j] + b1[i]
        h.append(max(0.0, total))
    y = []
    for k in range(D):
        total = 0.0
        for i in range(H):
            total += W2[k * H + i] * h[i] + b2[k]
        y.append(total)
    return y


def sum_not_reset(x, W1, b1, W2, b2):
    D, H = len(x), len(b1)
    h, total = [], 0.0
    for i in range(H):
        for j in range(D):
            total += W1[i * D + j] * x[j]
        h.append(max(0.0, total + b1[i]))
    y, total = [], 0.0
    for k in range(D):
        for i in range(H):
            total += W2[k * H + i] * h[i]
        y.append(total + b2[k])
    return y


def adds_the_residual(x, W1, b1, W2, b2):
    y = ffn_nested_loops(x, W1, b1, W2, b2)
    return [x_k + y_k for x_k, y_k in zip(x, y)]         # x + FFN(x): the block's job, not the FFN's


WRONG_FFNS = [
    (one_stride_d, "one stride, D, used for both matrices"),
    (one_stride_h, "one stride, H, used for both matrices"),
    (strides_swapped, "the two strides swapped"),
    (w1_transposed, "W1 read transposed"),
    (w2_transposed, "W2 read transposed"),
    (both_transposed, "both matrices read transposed"),
    (relu_after_w2_too, "an activation after W2"),
    (relu_only_after_w2, "the activation moved after W2"),
    (no_relu, "the activation missing"),
    (no_b1, "b1 missing"),
    (no_b2, "b2 missing"),
    (b1_after_relu, "b1 added after the activation"),
    (biases_in_inner_loop, "the biases added inside the inner loop"),
    (sum_not_reset, "the running sum is not reset for each row"),
    (adds_the_residual, "x added to the output"),
]


def test_the_bank_names_every_mistake_once():
    names = [m.name for m in FFN_MISTAKES]
    assert len(WRONG_FFNS) >= 12
    for _, named in WRONG_FFNS:
        assert sum(name.startswith(named) for name in names) == 1, named


@pytest.mark.parametrize("fn, named", WRONG_FFNS, ids=[fn.__name__ for fn, _ in WRONG_FFNS])
def test_ffn_forward_names_the_mistake(fn, named, capsys):
    assert not check_ffn_forward(fn)
    out = capsys.readouterr().out
    assert f"Likely mistake: {named}" in out, out
    assert out.count("Likely mistake") == 1 and "Possibly" not in out


def test_a_wrong_stride_that_crashes_shows_the_learners_line(capsys):
    assert not check_ffn_forward(one_stride_d)
    out = capsys.readouterr().out
    assert ("raised IndexError: list index out of range (line 5 of one_stride_d: "
            "`return [sum(W2[k * D + i]") in out
    assert out.count("\u2714") == 2  # both square cases pass: the trap


def test_ffn_forward_with_no_known_mistake_shows_expected_and_got(capsys, monkeypatch):
    from helpers.checks import _verdict
    monkeypatch.setattr(_verdict, "_FAILED_ATTEMPTS", {})
    assert not check_ffn_forward(lambda x, W1, b1, W2, b2: [1.0] * len(x))
    out = capsys.readouterr().out
    assert "expected [-1.545, 3.485], got [1, 1]" in out and "Hint: z[i] = sum over j" not in out
    assert "If the same failure comes back, the check shows the line to write." in out
    assert not check_ffn_forward(lambda x, W1, b1, W2, b2: [1.0] * len(x))   # the same failure again
    assert "Hint: z[i] = sum over j" in capsys.readouterr().out


# ---- check_ffn_forward: bad returns and crashes --------------------------------------------------------
def stub(x, W1, b1, W2, b2):
    # YOUR CODE HERE
    raise NotImplementedError("your code here")


def returns_hidden(x, W1, b1, W2, b2):
    D, H = len(x), len(b1)
    return [max(0.0, sum(W1[i * D + j] * x[j] for j in range(D)) + b1[i]) for i in range(H)]


def forgets_return(x, W1, b1, W2, b2):
    flat.ffn_forward(x, W1, b1, W2, b2)


def divides_by_zero(x, W1, b1, W2, b2):
    scale = 1 / (len(x) - len(x))
    return [scale]


def changes_x(x, W1, b1, W2, b2):
    y = flat.ffn_forward(x, W1, b1, W2, b2)
    x.clear()
    return y


def changes_b1(x, W1, b1, W2, b2):
    for i in range(len(b1)):
        b1[i] = max(0.0, b1[i])  # "tidies" the biases in place
    return ffn_nested_loops(x, W1, b1, W2, b2)


@pytest.mark.parametrize("fn, message", [
    (returns_hidden, "this is the hidden vector relu(W1 x + b1)"),
    (forgets_return, "returned None. Did you forget the `return` statement"),
    (divides_by_zero, "raised ZeroDivisionError: division by zero (line 2 of divides_by_zero: "
                      "`scale = 1 / (len(x) - len(x))`)"),
    (lambda *args: "0.5, 2.0", "returned a string ('0.5, 2.0'); return a list of 2 numbers"),
    (lambda *args: 3.0, "returned a single number (3); return a list of 2 numbers"),
    (lambda *args: {"y": 1}, "returned a dict"),
    (lambda x, *args: [float("nan")] * len(x), "element 0 is nan; every output should be a finite number"),
    (lambda x, *args: [1.0, math.inf] + [0.0] * (len(x) - 2), "element 1 is inf"),
    (lambda *args: [[v] for v in flat.ffn_forward(*args)], "returned a list of 2 lists"),
    (lambda *args: np.array(flat.ffn_forward(*args))[:, None], "returned an array of shape (2, 1)"),
    (lambda *args: (v for v in flat.ffn_forward(*args)), "returned a generator"),
    (changes_x, "changed its input `x` in place"),
    (changes_b1, "changed its input `b1` in place"),
])
def test_ffn_forward_bad_returns_get_their_own_message(fn, message, capsys):
    assert not check_ffn_forward(fn)
    out = capsys.readouterr().out
    assert message in out, out
    assert "Traceback" not in out


@pytest.mark.parametrize("fn, message", [
    (stub, "ffn_forward: not implemented yet"),
    (ffn_nested_loops([1.0], [1.0], [0.0], [1.0], [0.0]), "expected a function"),
])
def test_ffn_forward_stub_and_non_function(fn, message, capsys):
    assert not check_ffn_forward(fn)
    out = capsys.readouterr().out
    assert message in out and "\u2718" not in out


def test_a_right_answer_that_mutates_its_input_is_not_misdiagnosed(capsys):
    assert not check_ffn_forward(changes_x)
    out = capsys.readouterr().out
    assert "Likely mistake" not in out and "Possibly" not in out


def test_the_checks_leave_their_cases_untouched():
    before = copy.deepcopy([c.args for c in FFN_CASES])
    check_ffn_forward(changes_x)
    check_ffn_forward(changes_b1)
    assert [c.args for c in FFN_CASES] == before


# ---- check_matvec ---------------------------------------------------------------------------------------
def matvec_loops(M, v):
    n_cols = len(v)
    out = []
    for i in range(len(M) // n_cols):
        total = 0
        for j in range(n_cols):
            total += M[i * n_cols + j] * v[j]
        out.append(total)
    return out


def matvec_rows_sliced(M, v):
    n = len(v)
    rows = [M[start:start + n] for start in range(0, len(M), n)]
    return tuple(sum(a * b for a, b in zip(r, v)) for r in rows)


def matvec_numpy(M, v):
    return np.reshape(M, (-1, len(v))) @ np.asarray(v)


@pytest.mark.parametrize("fn", [matvec_loops, matvec_rows_sliced])
def test_matvec_accepts_correct_styles(fn, capsys):
    assert check_matvec(fn), capsys.readouterr().out


def matvec_stride_rows(M, v):
    n_rows = len(M) // len(v)
    return [sum(M[i * n_rows + j] * v[j] for j in range(len(v))) for i in range(n_rows)]


def matvec_column_major(M, v):
    n_rows = len(M) // len(v)
    return [sum(M[j * n_rows + i] * v[j] for j in range(len(v))) for i in range(n_rows)]


def matvec_no_offset(M, v):
    return [sum(M[j] * v[j] for j in range(len(v))) for _ in range(len(M) // len(v))]


def matvec_not_reset(M, v):
    out, total = [], 0.0
    for i in range(len(M) // len(v)):
        for j in range(len(v)):
            total += M[i * len(v) + j] * v[j]
        out.append(total)
    return out


def matvec_rows_from_v(M, v):
    """A trial learner's: n_rows = len(v), right for a square M only (too few outputs for a tall M, an
    IndexError for a wide one)."""
    n_rows = len(v)
    n_cols = len(v)
    out = []
    for i in range(n_rows):
        total = 0.0
        for j in range(n_cols):
            total += M[i * n_cols + j] * v[j]
        out.append(total)
    return out


WRONG_MATVECS = [
    (matvec_stride_rows, "the number of rows used as the stride"),
    (matvec_column_major, "M read column by column"),
    (matvec_no_offset, "the row offset i * n_cols left out"),
    (matvec_not_reset, "the running sum is not reset for each row"),
    (matvec_rows_from_v, "the number of rows taken as len(v), as if M were square"),
]


@pytest.mark.parametrize("fn, named", WRONG_MATVECS)
def test_matvec_names_the_mistake(fn, named, capsys):
    assert not check_matvec(fn)
    out = capsys.readouterr().out
    assert f"Likely mistake: {named}" in out, out


@pytest.mark.parametrize("fn, message", [
    (lambda M, v: [sum(M[i * len(v) + j] * v[j] for i in range(len(M) // len(v))) for j in range(len(v))],
     "returned 2 numbers; expected 3. 2 is the number of columns"),
    (lambda M, v: None, "returned None"),
    (lambda M, v: sum(M), "returned a single number"),
    (lambda M, v: [M[0] / 0.0], "raised ZeroDivisionError"),
])
def test_matvec_bad_returns(fn, message, capsys):
    assert not check_matvec(fn)
    assert message in capsys.readouterr().out


def test_matvec_stub_and_a_single_number_for_one_row(capsys):
    def matvec(M, v):
        raise NotImplementedError("your code here")
    assert not check_matvec(matvec)
    assert "matvec: not implemented yet" in capsys.readouterr().out
    check_matvec(lambda M, v: [0.0])  # one number for every case: right length only for the 1 x 3 case
    assert "returned 1 number; expected 3" in capsys.readouterr().out


# ---- check_transpose ------------------------------------------------------------------------------------
def transpose_loops(M, n_rows, n_cols):
    out = []
    for j in range(n_cols):
        for i in range(n_rows):
            out.append(M[i * n_cols + j])
    return out


def transpose_preallocated(M, n_rows, n_cols):
    out = [0.0] * (n_rows * n_cols)
    for i in range(n_rows):
        for j in range(n_cols):
            out[j * n_rows + i] = M[i * n_cols + j]
    return out


def transpose_numpy(M, n_rows, n_cols):
    return np.reshape(M, (n_rows, n_cols)).T.ravel()


def transpose_slicing(M, n_rows, n_cols):
    return tuple(value for j in range(n_cols) for value in M[j::n_cols])


@pytest.mark.parametrize("fn", [transpose_loops, transpose_preallocated, transpose_slicing])
def test_transpose_accepts_correct_styles(fn, capsys):
    assert check_transpose(fn), capsys.readouterr().out


def transpose_loops_swapped(M, n_rows, n_cols):
    return [M[i * n_cols + j] for i in range(n_rows) for j in range(n_cols)]


def transpose_reads_the_output_position(M, n_rows, n_cols):
    out = []
    for j in range(n_cols):                  # the right loop order ...
        for i in range(n_rows):
            out.append(M[j * n_rows + i])    # ... but M read where element (i, j) goes in the output
    return out


def transpose_wrong_stride(M, n_rows, n_cols):
    return [M[i * n_rows + j] for j in range(n_cols) for i in range(n_rows)]


def transpose_arguments_swapped(M, n_rows, n_cols):
    return transpose_loops(M, n_cols, n_rows)


WRONG_TRANSPOSES = [
    (transpose_loops_swapped, "M returned in its original order"),
    (transpose_reads_the_output_position, "M returned in its original order"),
    (transpose_wrong_stride, "M read with the number of rows as its stride"),
    (transpose_arguments_swapped, "n_rows and n_cols swapped"),
]


@pytest.mark.parametrize("fn, named", WRONG_TRANSPOSES)
def test_transpose_names_the_mistake(fn, named, capsys):
    assert not check_transpose(fn)
    out = capsys.readouterr().out
    assert f"Likely mistake: {named}" in out, out


def test_the_original_order_diagnosis_names_both_slips_that_give_it(monkeypatch, capsys):
    from helpers.checks import _verdict
    for fn in (transpose_loops_swapped, transpose_reads_the_output_position):
        monkeypatch.setattr(_verdict, "_FAILED_ATTEMPTS", {})
        assert not check_transpose(fn)
        out = capsys.readouterr().out
        assert "the two loops nested the wrong way round" in out, out
        assert "where an element goes in the output instead of where it sits in M" in out, out
        assert "two loops in the wrong order" not in out


def test_the_original_order_shows_the_loop_order_and_the_read_only_when_found_again(monkeypatch, capsys):
    """A trial learner's first failure (the loops swapped) read "Loop over j ... outside and i inside, and read
    M[i * n_cols + j]": the whole answer. The first time it says what is wrong and where, in words."""
    from helpers.checks import _verdict
    monkeypatch.setattr(_verdict, "_FAILED_ATTEMPTS", {})
    line = "Loop over j (the output's rows, M's columns) outside and i inside, and read M[i * n_cols + j]."
    assert not check_transpose(transpose_loops_swapped)
    first = capsys.readouterr().out
    assert "M returned in its original order" in first and line not in first, first
    assert "M[i * n_cols + j]" not in first.split("Likely mistake:")[1], first
    assert "If the check finds this again, it shows the line to write." in first, first
    assert not check_transpose(transpose_loops_swapped)
    assert line in capsys.readouterr().out


@pytest.mark.parametrize("fn, message", [
    (lambda M, r, c: [list(M[j::c]) for j in range(c)], "returned a list of 3 lists, a matrix of rows"),
    (lambda M, r, c: np.reshape(M, (r, c)).T, "returned an array of shape (3, 2)"),
    (lambda M, r, c: M[:-1], "returned 5 numbers; expected 6"),
    (lambda M, r, c: M.reverse(), "returned None"),
])
def test_transpose_bad_returns(fn, message, capsys):
    assert not check_transpose(fn)
    assert message in capsys.readouterr().out


def test_transpose_that_sorts_in_place_is_told(capsys):
    def transpose(M, n_rows, n_cols):
        M.sort(key=lambda value: value % 10)   # sorts by column, which happens to give the transpose
        return M
    assert not check_transpose(transpose)
    assert "changed its input `M` in place" in capsys.readouterr().out


# ---- the lesson's rule: lists and loops only -------------------------------------------------------------
def matvec_numpy_helper(M, v):
    return (np.array(M).reshape(-1, len(v)) @ np.asarray(v)).tolist()


def ffn_via_a_numpy_helper(x, W1, b1, W2, b2):
    # loops here, but the helper it calls uses NumPy
    h = [max(0.0, t + b) for t, b in zip(matvec_numpy_helper(W1, x), b1)]
    return [t + b for t, b in zip(matvec_numpy_helper(W2, h), b2)]


def ffn_importing_numpy_inside(x, W1, b1, W2, b2):
    import numpy
    D, H = len(x), len(b1)
    h = numpy.maximum(numpy.reshape(W1, (H, D)) @ x + b1, 0.0)
    return list(numpy.reshape(W2, (D, H)) @ h + b2)


from numpy import maximum as np_maximum  # noqa: E402  (a learner's `from numpy import ...`)


def ffn_with_a_numpy_function(x, W1, b1, W2, b2):
    D, H = len(x), len(b1)
    h = [np_maximum(0.0, sum(W1[i * D + j] * x[j] for j in range(D)) + b1[i]) for i in range(H)]
    return [float(sum(W2[k * H + i] * h[i] for i in range(H)) + b2[k]) for k in range(D)]


@pytest.mark.parametrize("check, fn, where", [
    (check_ffn_forward, ffn_numpy_returning_list, "`np.asarray` (line 2 of ffn_numpy_returning_list)"),
    (check_ffn_forward, ffn_numpy_returning_array, "`np.reshape` (line 3 of ffn_numpy_returning_array)"),
    (check_ffn_forward, ffn_via_a_numpy_helper, "`np.array` (line 2 of matvec_numpy_helper)"),
    (check_ffn_forward, ffn_importing_numpy_inside, "`import numpy` (line 2 of ffn_importing_numpy_inside)"),
    (check_ffn_forward, ffn_with_a_numpy_function, "`np_maximum` (line 3 of ffn_with_a_numpy_function)"),
    (check_matvec, matvec_numpy, "`np.reshape` (line 2 of matvec_numpy)"),
    (check_transpose, transpose_numpy, "`np.reshape` (line 2 of transpose_numpy)"),
])
def test_numpy_is_refused_with_where_it_was_used(check, fn, where, capsys):
    verdict = check(fn)
    out = capsys.readouterr().out
    assert not verdict and where in out, out
    assert "Likely mistake: NumPy used where this lesson asks for lists and loops" in out
    assert "right numbers on all" in out                      # these are right apart from the rule
    assert verdict.mistake == "NumPy used where this lesson asks for lists and loops"
    assert verdict.passed == verdict.total - 1


def test_numpy_with_wrong_numbers_says_both(capsys):
    def transpose(M, n_rows, n_cols):
        return np.reshape(M, (n_rows, n_cols)).ravel().tolist()     # NumPy, and not transposed either
    assert not check_transpose(transpose)
    out = capsys.readouterr().out
    assert "wrong on 5 of 7 cases; the first, 2 x 3, a wide matrix: your function returned [11, 12, 13, 21, 22, 23]" \
        in out and "uses NumPy" in out


def test_reading_the_bytecode_finds_no_numpy_in_plain_loops():
    from helpers.checks.lesson02 import numpy_uses
    for fn in (ffn_nested_loops, ffn_comprehensions, ffn_calling_own_matvec, ffn_with_math, flat.ffn_forward,
               matvec_loops, transpose_slicing, one_stride_d, strides_swapped):
        assert numpy_uses(fn) == [], fn.__name__


def test_a_numpy_stub_is_still_not_implemented(capsys):
    def ffn_forward(x, W1, b1, W2, b2):
        z = np.zeros(len(b1))
        raise NotImplementedError("your code here")
    verdict = check_ffn_forward(ffn_forward)
    assert verdict.status == "not attempted" and "not implemented yet" in capsys.readouterr().out


# ---- inputs that are not too kind ------------------------------------------------------------------------
def test_an_answer_rounded_to_three_decimals_fails(capsys):
    def ffn_rounded(x, W1, b1, W2, b2):
        return [round(v, 3) for v in ffn_nested_loops(x, W1, b1, W2, b2)]
    assert not check_ffn_forward(ffn_rounded)
    out = capsys.readouterr().out
    assert "\u2718 H < D: D = 4 narrows to H = 3, numbers with three decimals" in out

    def matvec_rounded(M, v):
        return [round(t, 2) for t in matvec_loops(M, v)]
    assert not check_matvec(matvec_rounded)
    assert "\u2718 2 x 4, more columns than rows, numbers with three decimals" in capsys.readouterr().out


# ---- hidden cases: they run only while the work is graded ------------------------------------------------
# The public cases' answers, learned by heart (worked out here, outside the function the check watches).
PUBLIC_ANSWERS = [(case.args["x"], flat.ffn_forward(**case.args)) for case in FFN_CASES]


def fitted_to_the_public_cases(x, W1, b1, W2, b2):
    # A function that learned the public cases by heart (or special-cases their shapes) passes them all.
    for known_x, answer in PUBLIC_ANSWERS:
        if known_x == list(x):
            return list(answer)
    return [0.0] * len(x)


def test_hidden_cases_do_not_run_for_a_learner(capsys, monkeypatch):
    monkeypatch.delenv("FFN_GRADING", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    verdict = check_ffn_forward(fitted_to_the_public_cases)
    out = capsys.readouterr().out
    assert verdict and verdict.total == 6 and "all 6 public cases pass" in out and "hidden" not in out


def test_hidden_cases_run_when_graded_and_catch_a_fitted_answer(capsys, monkeypatch):
    monkeypatch.setenv("FFN_GRADING", "1")
    verdict = check_ffn_forward(fitted_to_the_public_cases)
    out = capsys.readouterr().out
    assert not verdict and verdict.total == 9 and verdict.hidden == 3 and verdict.passed == 6
    assert "checking 9 cases, 3 of them hidden" in out and "\u2718 hidden: D = 1 expands to a random H" in out
    assert check_ffn_forward(ffn_nested_loops)
    assert "all 9 cases pass, 3 of them hidden ones" in capsys.readouterr().out
    shapes = {(len(c.args["x"]), len(c.args["b1"])) for c in _ffn_hidden()}
    assert any(D == 1 for D, _ in shapes) and any(H == 1 for _, H in shapes)


def test_hidden_cases_count_in_the_numpy_refusal_when_graded(capsys, monkeypatch):
    monkeypatch.setenv("FFN_GRADING", "1")
    verdict = check_ffn_forward(ffn_numpy_returning_list)
    assert not verdict and verdict.total == 10 and "right numbers on all 9 cases" in capsys.readouterr().out


# Under a grading secret, as the clean grading process runs: the hidden cases are drawn afresh.
CHECKS = {"ffn_forward": (check_ffn_forward, flat.ffn_forward, FFN_CASES),
          "matvec": (check_matvec, flat.matvec, MATVEC_CASES),
          "transpose": (check_transpose, flat.transpose, TRANSPOSE_CASES)}


@pytest.mark.parametrize("exercise", CHECKS)
def test_a_memorised_table_passes_the_fixed_cases_but_fails_every_secret(exercise, capsys):
    check, reference, public = CHECKS[exercise]
    # A table of every input recorded from a run with FFN_GRADING=1 (lists and loops only), None otherwise.
    forgery = memorising_forgery(check, reference, answer_afterwards=True, same=same_repr)
    assert_forgery_fails_under_every_secret(check, forgery, capsys, n_public=len(public), n_hidden=3)


RIGHT_ANSWERS = {"ffn_forward": ["ffn_nested_loops", "ffn_comprehensions", "ffn_returning_tuple",
                                 "ffn_via_the_x_at_w_convention", "ffn_calling_own_matvec", "ffn_with_math"],
                 "matvec": ["matvec_loops", "matvec_rows_sliced", "matvec_with_a_class_and_defaults",
                            "matvec_with_math", "matvec_summing_backwards", "matvec_with_the_courses_row"],
                 "transpose": ["transpose_loops", "transpose_preallocated", "transpose_slicing"]}


@pytest.mark.parametrize("secret", SECRETS)
def test_under_a_secret_right_answers_pass_and_the_banks_still_fail(secret, capsys):
    # The answers take turns, each under one of the secrets (the three together cover the banks), so that
    # every secret sees several styles of each exercise and the test stays quick.
    turn = slice(SECRETS.index(secret), None, len(SECRETS))
    with graded_under(secret):
        for exercise, names in RIGHT_ANSWERS.items():
            for name in names[turn]:
                verdict = CHECKS[exercise][0](globals()[name])
                out = capsys.readouterr().out
                assert verdict and verdict.hidden == 3 and "3 of them hidden ones" in out, (name, out)
        named = ([(check_ffn_forward, fn, f"Likely mistake: {m}") for fn, m in WRONG_FFNS]
                 + [(check_matvec, fn, f"Likely mistake: {m}") for fn, m in WRONG_MATVECS]
                 + [(check_transpose, fn, f"Likely mistake: {m}") for fn, m in WRONG_TRANSPOSES])
        unnamed = [(check, fn, "") for check, fn in wrong_bank() if all(fn is not g for _, g, _ in named)]
        for check, fn, message in (named + unnamed)[turn]:
            verdict = check(fn)
            out = capsys.readouterr().out
            assert not verdict and message in out, out


def matvec_first_three_rows(M, v):
    # Right for every public case (none has more than 3 rows), and only the first 3 rows of a taller matrix.
    return matvec_loops(M, v)[:3]


def test_an_answer_for_three_rows_at_most_passes_in_public_and_fails_every_grading(capsys, monkeypatch):
    monkeypatch.delenv("FFN_GRADING", raising=False)
    assert check_matvec(matvec_first_three_rows) and "all 7 public cases pass" in capsys.readouterr().out
    for secret in (None, *SECRETS):
        with graded_under(secret):
            verdict = check_matvec(matvec_first_three_rows)
        out = capsys.readouterr().out
        assert not verdict and verdict.passed == len(MATVEC_CASES) and "returned 3 numbers; expected" in out, out


@pytest.mark.parametrize("exercise, build", [("ffn_forward", "_ffn_hidden"), ("matvec", "_matvec_hidden"),
                                             ("transpose", "_transpose_hidden")])
def test_hidden_cases_differ_between_secrets_and_not_within_one(exercise, build):
    assert_drawn_afresh(getattr(lesson02, build))


def shape(case):
    """(rows, columns) of a matvec or transpose case."""
    if "v" in case.args:
        return len(case.args["M"]) // len(case.args["v"]), len(case.args["v"])
    return case.args["n_rows"], case.args["n_cols"]


@pytest.mark.parametrize("secret", (None, *SECRETS))
def test_hidden_matrices_have_the_shapes_their_names_say_and_more_than_three_rows(secret):
    with graded_under(secret):
        cases = lesson02._matvec_hidden() + lesson02._transpose_hidden()
    for case in cases:
        rows, cols = shape(case)
        assert rows > 3 and len(case.args["M"]) == rows * cols, case.name
        assert all(not float(t).is_integer() for t in case.args["M"]), case.name      # not labels, not whole
        if "tall" in case.name:
            assert 4 <= rows <= 9 and cols < rows
        elif "wide" in case.name:
            assert 4 <= rows <= 6 and rows < cols <= 9
        else:
            assert "large" in case.name and 10 <= rows <= 16 and 6 <= cols <= 12
    assert sum(rows > max(shape(c)[0] for c in MATVEC_CASES) for rows, _ in map(shape, cases)) == len(cases)


@pytest.mark.parametrize("exercise, build", [("ffn_forward", "_ffn_hidden"), ("matvec", "_matvec_hidden"),
                                             ("transpose", "_transpose_hidden")])
def test_hidden_cases_are_not_built_outside_grading(exercise, build, monkeypatch, capsys):
    monkeypatch.delenv("FFN_GRADING", raising=False)
    monkeypatch.setattr(lesson02, build, lambda: pytest.fail("hidden cases built outside grading"))
    fn = globals()[RIGHT_ANSWERS[exercise][0]]
    assert CHECKS[exercise][0](fn) and "public cases pass" in capsys.readouterr().out


def ffn_calling_the_reference(x, W1, b1, W2, b2):
    return flat.ffn_forward(x, W1, b1, W2, b2)          # the course's reference, not the learner's own loops


def ffn_calling_the_reference_by_another_name(x, W1, b1, W2, b2):
    from helpers.flat import ffn_forward as reference
    return list(reference(x, W1, b1, W2, b2))


def matvec_calling_the_reference(M, v):
    return flat.matvec(M, v)


def transpose_calling_the_reference(M, n_rows, n_cols):
    return flat.transpose(M, n_rows, n_cols)


@pytest.mark.parametrize("check, fn, name", [
    (check_ffn_forward, ffn_calling_the_reference, "ffn_forward"),
    (check_ffn_forward, ffn_calling_the_reference_by_another_name, "ffn_forward"),
    (check_matvec, matvec_calling_the_reference, "matvec"),
    (check_transpose, transpose_calling_the_reference, "transpose"),
])
def test_calling_the_courses_reference_does_not_pass(check, fn, name, capsys):
    verdict = check(fn)
    out = capsys.readouterr().out
    assert not verdict, out
    assert f"calls the course's own `helpers.flat.{name}`" in out
    assert verdict.mistake and "calls the course's own" in verdict.mistake


def wrong_bank():
    """(check, wrong answer) for every wrong answer of the three banks that the public cases reject."""
    wrong = [(check_ffn_forward, fn) for fn, _ in WRONG_FFNS]
    wrong += [(check_ffn_forward, fn) for fn in (returns_hidden, forgets_return, divides_by_zero, changes_x,
                                                 changes_b1, ffn_numpy_returning_list, ffn_via_a_numpy_helper,
                                                 ffn_calling_the_reference, ffn_calling_the_reference_by_another_name)]
    wrong += [(check_matvec, fn) for fn in (matvec_stride_rows, matvec_column_major, matvec_no_offset,
                                            matvec_not_reset, matvec_numpy, lambda M, v: None)]
    wrong += [(check_transpose, fn) for fn in (transpose_loops_swapped, transpose_reads_the_output_position,
                                               transpose_wrong_stride, transpose_arguments_swapped,
                                               transpose_numpy, lambda M, r, c: M[:-1])]
    return wrong


def test_at_least_nine_in_ten_rejections_name_the_mistake_or_the_problem(capsys):
    verdicts = [check(fn) for check, fn in wrong_bank()]
    capsys.readouterr()
    assert not any(verdicts)                                   # no wrong answer accepted
    generic = [v.mistake for v in verdicts if not v.mistake or ("expected" in v.mistake and ", got" in v.mistake)]
    assert len(generic) <= 0.1 * len(verdicts), generic


@pytest.mark.parametrize("check, reference", [(check_ffn_forward, flat.ffn_forward), (check_matvec, flat.matvec),
                                              (check_transpose, flat.transpose)])
def test_the_courses_own_function_handed_to_the_check_is_refused(check, reference, capsys):
    # What happens when the learner's cell failed to define the function and the name means the reference.
    verdict = check(reference)
    assert not verdict and "this is the course's own" in capsys.readouterr().out


# ---- the rule, whatever route NumPy takes -----------------------------------------------------------------
import importlib as _importlib  # noqa: E402  (a learner's imports, at the top of their notebook)
from importlib import import_module as _import_module  # noqa: E402

import helpers.ffn as _course_ffn  # noqa: E402


def matvec_numpy_default(M, v, _np=np):
    return _np.asarray(M).reshape(-1, len(v)).dot(v).tolist()


def matvec_numpy_kwdefault(M, v, *, reshape=np.reshape):
    return (reshape(M, (-1, len(v))) @ v).tolist()


def matvec_dunder_import(M, v):
    numpy = __import__("numpy")
    return numpy.asarray(M).reshape(-1, len(v)).dot(v).tolist()


def matvec_importlib(M, v):
    numpy = _importlib.import_module("numpy")
    return list(numpy.asarray(M).reshape(-1, len(v)) @ numpy.asarray(v))


def matvec_import_module(M, v):
    return list(_import_module("num" + "py").reshape(M, (-1, len(v))) @ v)


def matvec_module_attribute(M, v):
    return _course_ffn.np.asarray(M).reshape(-1, len(v)).dot(v).tolist()


def matvec_imported_attribute(M, v):
    from helpers.ffn import np as hidden
    return hidden.asarray(M).reshape(-1, len(v)).dot(v).tolist()


class _Linear:
    def __init__(self, M, n):
        self.W = np.asarray(M).reshape(-1, n)

    def __call__(self, v):
        return list(self.W @ np.asarray(v))


def matvec_through_a_class(M, v):
    return _Linear(M, len(v))(v)


def matvec_through_sys_modules(M, v):
    import sys
    return getattr(sys.modules["num" + "py"], "asarray")(M).reshape(-1, len(v)).dot(v).tolist()


@pytest.mark.parametrize("fn, where", [
    (matvec_numpy_default, "`_np=...`, a default argument holding NumPy"),
    (matvec_numpy_kwdefault, "`reshape=...`, a default argument holding NumPy"),
    (matvec_dunder_import, "`__import__`, an import at run time (line 2 of matvec_dunder_import)"),
    (matvec_importlib, "`_importlib.import_module`, an import at run time (line 2 of matvec_importlib)"),
    (matvec_import_module, "`_import_module`, an import at run time (line 2 of matvec_import_module)"),
    (matvec_module_attribute, "`_course_ffn.np` (line 2 of matvec_module_attribute)"),
    (matvec_imported_attribute, "`np` (line 2 of matvec_imported_attribute)"),
    (matvec_through_a_class, "`np.asarray` (line 2 of __init__)"),
    (matvec_through_sys_modules, "(line 3 of matvec_through_sys_modules)"),   # seen only when it runs
])
def test_numpy_by_any_route_is_refused_with_where(fn, where, capsys):
    verdict = check_matvec(fn)
    out = capsys.readouterr().out
    assert not verdict and "lists and loops only: your function uses NumPy" in out and where in out, out
    assert verdict.mistake == "NumPy used where this lesson asks for lists and loops"


class _LoopsOnly:
    """A learner's own class without NumPy: its methods are read, and nothing is found."""
    def __init__(self, n):
        self.n = n

    def row(self, M, i):
        return M[i * self.n:(i + 1) * self.n]


def matvec_with_a_class_and_defaults(M, v, start=0.0, *, scale=1):
    rows = _LoopsOnly(len(v))
    return [scale * sum((a * b for a, b in zip(rows.row(M, i), v)), start) for i in range(len(M) // len(v))]


def matvec_with_math(M, v):
    import math
    n = len(v)
    return [math.fsum(M[i * n + j] * v[j] for j in range(n)) for i in range(len(M) // n)]


def matvec_summing_backwards(M, v):
    n, out = len(v), []
    for i in range(len(M) // n):
        total = 0.0
        for j in reversed(range(n)):       # another order of the same sum: equal to about 1e-16
            total += M[i * n + j] * v[j]
        out.append(total)
    return out


def matvec_with_the_courses_row(M, v):
    return [sum(a * b for a, b in zip(flat.row(M, i, len(v)), v)) for i in range(len(M) // len(v))]


@pytest.mark.parametrize("fn", [matvec_with_a_class_and_defaults, matvec_with_math, matvec_summing_backwards,
                                matvec_with_the_courses_row, matvec_loops, matvec_rows_sliced])
def test_loops_only_answers_in_many_styles_pass_and_show_no_numpy(fn, capsys):
    from helpers.checks.lesson02 import _numpy_calls, numpy_uses
    assert numpy_uses(fn) == [] and all(_numpy_calls(fn, case.args) == [] for case in MATVEC_CASES)
    assert check_matvec(fn), capsys.readouterr().out


# ---- rounding and precision: the comparison is tight enough to see them, and names them -------------------
def matvec_rounded_to(k):
    def matvec(M, v):
        return [round(t, k) for t in matvec_loops(M, v)]
    return matvec


def matvec_float32(M, v):
    import struct
    f32 = lambda t: struct.unpack("f", struct.pack("f", t))[0]  # noqa: E731
    return [f32(t) for t in matvec_loops(M, v)]


@pytest.mark.parametrize("k", [3, 5, 6, 8])
def test_a_rounded_matvec_fails_and_is_called_rounded(k, capsys):
    verdict = check_matvec(matvec_rounded_to(k))
    out = capsys.readouterr().out
    assert not verdict and f"Likely mistake: the output rounded to {k} decimal places" in out, out
    assert "\u2718 2 x 3, fractions with endless decimals" in out


@pytest.mark.parametrize("k", [10, 11])
def test_a_matvec_rounded_to_many_decimals_fails_on_the_small_numbers(k, capsys):
    verdict = check_matvec(matvec_rounded_to(k))
    out = capsys.readouterr().out
    assert not verdict and f"Likely mistake: the output rounded to {k} decimal places" in out, out
    assert "\u2718 2 x 2 with v ~ 1e-4: small outputs with many digits" in out


@pytest.mark.parametrize("k", [5, 6, 7, 10, 11])
def test_a_rounded_ffn_forward_fails_and_is_called_rounded(k, capsys):
    verdict = check_ffn_forward(lambda *args: [round(t, k) for t in ffn_nested_loops(*args)])
    out = capsys.readouterr().out
    assert not verdict and f"Likely mistake: the output rounded to {k} decimal places" in out, out


def pre(case):
    a = case.args
    D, H = len(a["x"]), len(a["b1"])
    return [sum(a["W1"][i * D + j] * a["x"][j] for j in range(D)) + a["b1"][i] for i in range(H)]


@pytest.mark.parametrize("secret", (None, *SECRETS))
def test_the_single_hidden_unit_of_the_hidden_case_fires_and_relu_matters_in_the_others(secret):
    with graded_under(secret):
        one_d, single, large = _ffn_hidden()
    assert [len(one_d.args["x"]), len(single.args["b1"])] == [1, 1]
    assert 5 <= len(one_d.args["b1"]) <= 9 and 4 <= len(single.args["x"]) <= 8
    assert 4 <= len(large.args["x"]) <= 7 and 12 <= len(large.args["b1"]) <= 24
    assert pre(single)[0] >= 0.5                                   # the single unit fires, clearly
    for case in (one_d, large):                                    # a unit clearly on, and one clearly off
        assert max(pre(case)) >= 0.5 and min(pre(case)) <= -0.5, case.name
    assert any(min(pre(c)) < 0 for c in FFN_CASES)


@pytest.mark.parametrize("fn", [
    lambda x, W1, b1, W2, b2: ffn_nested_loops(x, W1, b1 if len(b1) > 1 else [0.0], W2, b2),   # b1 skipped, H = 1
    lambda x, W1, b1, W2, b2: ffn_nested_loops(x, W1, b1, W2, b2 if len(x) > 1 else [0.0]),   # b2 skipped, D = 1
])
def test_hidden_cases_catch_a_bias_skipped_at_an_edge_shape(fn, capsys):
    assert check_ffn_forward(fn)                                  # the public cases have no such shape
    for secret in (None, *SECRETS):
        with graded_under(secret):
            verdict = check_ffn_forward(fn)
        out = capsys.readouterr().out
        assert not verdict and verdict.passed == verdict.total - 1 == len(FFN_CASES) + 2, out


def test_a_transpose_through_float32_fails_and_is_told(capsys):
    import struct
    def transpose_float32(M, n_rows, n_cols):
        return [struct.unpack("f", struct.pack("f", M[i * n_cols + j]))[0]
                for j in range(n_cols) for i in range(n_rows)]
    assert not check_transpose(transpose_float32)
    out = capsys.readouterr().out
    assert "\u2718 3 x 2 of 0.1, 1/3, -2.7" in out and "float32" in out, out
    assert "Likely mistake: numbers right to only about 7 significant digits" in out, out


def test_single_precision_is_told_as_lost_digits(capsys):
    assert not check_matvec(matvec_float32)
    out = capsys.readouterr().out
    assert "Likely mistake: numbers right to only about 7 significant digits" in out and "float32" in out, out


# ---- ReLU switches exactly at 0 -------------------------------------------------------------------------------
@pytest.mark.parametrize("threshold", [3e-2, 1e-2, 1e-3, 1e-6, 1e-9])
def test_a_relu_threshold_above_zero_fails_and_is_named(threshold, capsys):
    def ffn_threshold(x, W1, b1, W2, b2):
        D, H = len(x), len(b1)
        h = []
        for i in range(H):
            t = sum(W1[i * D + j] * x[j] for j in range(D)) + b1[i]
            h.append(t if t > threshold else 0.0)
        return [sum(W2[k * H + i] * h[i] for i in range(H)) + b2[k] for k in range(D)]
    verdict = check_ffn_forward(ffn_threshold)
    out = capsys.readouterr().out
    assert not verdict and "\u2718 pre-activations of 2e-6, -2e-6 and 1e-10" in out, out
    assert "Likely mistake: ReLU's switch not exactly at 0" in out, out


@pytest.mark.parametrize("slope", [0.01, 0.1])
def test_a_leaky_relu_fails_and_is_named(slope, capsys):
    verdict = check_ffn_forward(lambda *args: loops(*args, right1, right2, act=lambda t: max(slope * t, t)))
    out = capsys.readouterr().out
    assert not verdict and f"Likely mistake: a leaky ReLU, max({slope} z, z)" in out, out


def test_the_tiny_case_sits_where_it_says():
    case = FFN_CASES[-1]
    z = flat.add(flat.matvec(case.args["W1"], case.args["x"]), case.args["b1"])
    assert sorted(abs(t) for t in z)[:3] == [1e-10, 2e-6, 2e-6] and min(z) < 0


# ---- the course's own helpers inside the exercises ------------------------------------------------------------
def ffn_from_the_flat_helpers(x, W1, b1, W2, b2):
    # Exercise 2's hint allows calling a matvec per layer; the course's flat.matvec is that matvec.
    return flat.add(flat.matvec(W2, flat.relu(flat.add(flat.matvec(W1, x), b1))), b2)


def test_ffn_forward_may_build_on_the_flat_helpers_but_not_call_flat_ffn_forward(capsys):
    assert check_ffn_forward(ffn_from_the_flat_helpers), capsys.readouterr().out
    assert not check_ffn_forward(ffn_calling_the_reference)
    assert "calls the course's own `helpers.flat.ffn_forward`" in capsys.readouterr().out


def matvec_through_vecmat(M, v):
    n = len(v)
    return flat.vecmat(v, flat.transpose(M, len(M) // n, n))


def test_matvec_through_the_courses_vecmat_does_not_pass(capsys, monkeypatch):
    # NEEDS helpers/checks/_core.py: COURSE_VERSIONS["matvec"] = ("vecmat",). Until that entry lands the test
    # adds it itself; once it has, the setitem changes nothing.
    from helpers.checks import _core
    monkeypatch.setitem(_core.COURSE_VERSIONS, "matvec", ("vecmat",))
    verdict = check_matvec(matvec_through_vecmat)
    out = capsys.readouterr().out
    assert not verdict and "calls the course's own `helpers.flat.vecmat`" in out, out
    assert check_matvec(matvec_with_the_courses_row)       # flat.row, the lesson's own helper, is fine


# ---- transpose: values that are not labels, and a new list --------------------------------------------------
def transpose_alias_for_vectors(M, n_rows, n_cols):
    if n_rows == 1 or n_cols == 1:
        return M                        # the same numbers in the same order, but the very same list
    return transpose_loops(M, n_rows, n_cols)


def test_returning_M_itself_is_told(capsys):
    verdict = check_transpose(transpose_alias_for_vectors)
    out = capsys.readouterr().out
    assert not verdict and "\u2718 1 x 4, one row: your function returned M itself" in out, out
    assert "Return a new list, e.g. list(M)" in out
    assert check_transpose(lambda M, r, c: list(M) if 1 in (r, c) else transpose_loops(M, r, c))


@pytest.mark.parametrize("fn, named", [
    (lambda M, r, c: [int(t) for t in transpose_loops(M, r, c)], "Likely mistake: the elements turned into ints"),
    (lambda M, r, c: sorted(M, key=lambda t: (t % 10, t // 10)), "\u2718 2 x 4 of fractions and negatives"),
])
def test_values_that_are_not_labels_catch_what_labels_let_pass(fn, named, capsys):
    verdict = check_transpose(fn)
    out = capsys.readouterr().out
    assert not verdict and named in out, out


def transpose_off_by_one(M, n_rows, n_cols):
    # the last row copied as it is: on a 2 x 3 matrix this happens to be M in its original order
    return [M[i * n_cols + j] for j in range(n_cols) for i in range(n_rows - 1)] + M[(n_rows - 1) * n_cols:]


def test_a_mistake_that_fits_one_failing_case_by_chance_is_not_offered(capsys):
    assert not check_transpose(transpose_off_by_one)
    out = capsys.readouterr().out
    assert "M returned in its original order" not in out and "Possibly" not in out, out
    assert "Hint: element (i, j) of M is M[i * n_cols + j]" in out


def test_huge_ints_returned_are_told_not_raised(capsys):
    verdict = check_matvec(lambda M, v: [10 ** 400] * (len(M) // len(v)))
    assert not verdict and "too large for a float" in capsys.readouterr().out


# A scratch cell's NumPy array under the same name as an argument is not the learner's NumPy use: a
# comprehension (its own code object in Python 3.11) reads the argument, not the global.
v = np.array([1.0, -1.0])
x = np.array([0.5, 2.0])
h = np.array([3.0])


def matvec_comprehension_over_argument(M, v):
    n = len(v)
    return [sum(M[i * n + j] * v[j] for j in range(n)) for i in range(len(M) // n)]


def matvec_lambda_over_argument(M, v):
    n = len(v)
    dot = lambda row: sum(a * b for a, b in zip(row, v))              # noqa: E731
    return [dot(M[i * n:(i + 1) * n]) for i in range(len(M) // n)]


def matvec_inner_def_over_argument(M, v):
    def row_times_v(i):
        return sum(M[i * len(v) + j] * v[j] for j in range(len(v)))
    return [row_times_v(i) for i in range(len(M) // len(v))]


@pytest.mark.parametrize("fn", [matvec_comprehension_over_argument, matvec_lambda_over_argument,
                                matvec_inner_def_over_argument])
def test_an_argument_read_in_a_comprehension_is_not_the_global_of_its_name(fn, capsys):
    assert numpy_uses(fn) == []
    ok = check_matvec(fn)
    out = capsys.readouterr().out
    assert ok, out


def matvec_comprehension_over_the_global(M, n_cols):
    return [float(np.dot(M[i * n_cols:(i + 1) * n_cols], v)) for i in range(len(M) // n_cols)]


def test_a_global_read_in_a_comprehension_is_still_seen():
    assert any("`np.dot`" in use for use in numpy_uses(matvec_comprehension_over_the_global))


def test_every_ffn_case_states_whether_it_is_square():
    """Section 5, the square trap, says: pass on both square cases, fail on every non-square one. The output
    shows it only if every case's name says its shape."""
    for case in FFN_CASES:
        D, H = len(case.args["x"]), len(case.args["b1"])
        said = "square D = H" if D == H else f"H {'>' if H > D else '<'} D"
        assert said in case.name, case.name


def test_rows_taken_as_len_v_is_named_on_a_report_that_says_no_more_than_it_saw(capsys):
    """A trial learner's n_rows = len(v) (some cases too short, some IndexError) was told "What differs, in the
    failing cases that returned numbers shaped right", though none was shaped right. Now the slip is named, and
    every case's own line says what came back."""
    assert not check_matvec(matvec_rows_from_v)
    out = capsys.readouterr().out
    assert "Likely mistake: the number of rows taken as len(v), as if M were square" in out, out
    assert "shaped right" not in out and "What differs" not in out, out
    assert "returned 2 numbers; expected 3" in out and "raised IndexError" in out, out


def test_w1_transposed_shows_the_sum_only_after_a_second_failure(monkeypatch, capsys):
    from helpers.checks import _verdict
    monkeypatch.setattr(_verdict, "_FAILED_ATTEMPTS", {})
    mistake = next(m for m in FFN_MISTAKES if m.name == "W1 read transposed")
    check_ffn_forward(mistake.fn)
    first = capsys.readouterr().out
    assert "W1 read transposed" in first and "sum over j of W1[i*D + j]" not in first, first
    check_ffn_forward(mistake.fn)
    assert "sum over j of W1[i*D + j]" in capsys.readouterr().out
