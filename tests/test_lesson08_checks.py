"""Lesson 08's graders against banks of right and wrong answers.

Every wrong answer must be rejected with its own named mistake ("Likely mistake: ...") or a specific problem
(a message that says what is wrong with the returned value); every right one, in whatever style, must pass.
"""
import math

import numpy as np
import pytest
from hidden_under_secrets import SECRETS, assert_hidden_cases_are_drawn_from_the_secret, drawn
from scipy import special, stats

from helpers.checks import check_ffn_backward, check_gelu_backward, check_numerical_gradient, check_relu_backward
from helpers.checks import lesson08 as L8
from helpers.checks._verdict import GRADING_ENV


def stub(*args):
    raise NotImplementedError("your code here")


def named(out, text):
    """The output names this mistake, once, as the likely one."""
    return f"Likely mistake: {text}" in out and out.count("Likely mistake:") == 1


# ---- exercise 1: relu_backward(z, dh) -> dz ---------------------------------------------------------------
def relu_backward_numpy(z, dh):
    return dh * (z > 0)


def relu_backward_where(z, dh):
    return np.where(z > 0, dh, 0.0)


def relu_backward_copy_and_zero(z, dh):
    dz = dh.copy()
    dz[z <= 0] = 0
    return dz


def relu_backward_loop(z, dh):
    dz = np.zeros_like(dh, dtype=float)
    for index in np.ndindex(z.shape):
        dz[index] = dh[index] if z[index] > 0 else 0.0
    return dz


def relu_backward_heaviside(z, dh):
    return dh * np.heaviside(z, 0)


@pytest.mark.parametrize("fn", [relu_backward_numpy, relu_backward_where, relu_backward_copy_and_zero,
                                relu_backward_loop, relu_backward_heaviside])
def test_relu_backward_accepts_right_answers(fn, capsys):
    assert check_relu_backward(fn), capsys.readouterr().out


@pytest.mark.parametrize("fn", [relu_backward_numpy, relu_backward_loop])
def test_relu_backward_right_answers_pass_the_hidden_cases_too(fn, capsys, monkeypatch):
    monkeypatch.setenv(GRADING_ENV, "1")
    verdict = check_relu_backward(fn)
    assert verdict and verdict.hidden == 2 and "2 of them hidden" in capsys.readouterr().out


RELU_MISTAKES = [
    (lambda z, dh: dh * (z >= 0), "relu'(0) taken as 1 (the mask z >= 0)"),
    (lambda z, dh: dh * np.heaviside(z, 0.5), "the slope at z = 0 taken as 1/2"),
    (lambda z, dh: dh * np.heaviside(z, 1), "relu'(0) taken as 1 (the mask z >= 0)"),
    (lambda z, dh: dh + 0.0, "the mask forgotten: dh passed through unchanged"),
    (lambda z, dh: np.where(z > 0, 1.0, 0.0), "relu'(z) returned without multiplying by dh"),
    (lambda z, dh: np.maximum(dh, 0), "the mask taken from dh's sign instead of z's"),
    (lambda z, dh: dh * z, "dh multiplied by z instead of by ReLU's slope"),
    (lambda z, dh: dh * np.maximum(z, 0), "dh multiplied by relu(z), the activation, instead of its slope"),
    (lambda z, dh: dh * (z < 0), "the mask inverted (z < 0)"),
    (lambda z, dh: np.where(z <= 0, dh, 0.0), "the mask inverted (z <= 0)"),
]


@pytest.mark.parametrize("fn, name", RELU_MISTAKES)
def test_relu_backward_names_the_mistake(fn, name, capsys):
    assert not check_relu_backward(fn)
    out = capsys.readouterr().out
    assert named(out, name), out


@pytest.mark.parametrize("fn, message", [
    (lambda z, dh: z > 0, "an array of True/False: that is a mask"),
    (lambda z, dh: (z > 0).astype(int) * dh.astype(int), "an array of int64"),
    (lambda z, dh: None, "returned None"),
    (lambda z, dh: float(np.sum(dh * (z > 0))), "A single number"),
    (lambda z, dh: (dh * (z > 0)).ravel(), "It is flattened"),
    (lambda z, dh: (dh * (z > 0), z), "returned a tuple of 2 values; return dz alone"),
    (lambda z, dh: "dz", "returned a str"),
    (lambda z, dh: np.where(z > 0, dh, np.nan), "NaN or infinity"),
    (lambda z, dh: 1 / 0, "raised ZeroDivisionError"),
    ("relu_backward", "expected a function"),
])
def test_relu_backward_bad_returns_get_specific_messages(fn, message, capsys):
    assert not check_relu_backward(fn)
    assert message in capsys.readouterr().out


def test_relu_backward_that_zeroes_dh_in_place_is_told(capsys):
    def in_place(z, dh):
        dh[z <= 0] = 0
        return dh
    assert not check_relu_backward(in_place)
    assert "changed its input `dh` in place" in capsys.readouterr().out


def test_relu_backward_stub_says_not_implemented(capsys):
    verdict = check_relu_backward(stub)
    out = capsys.readouterr().out
    assert not verdict and verdict.status == "not attempted"
    assert "not implemented yet" in out and "\u2718" not in out


def test_relu_backward_verdict_records_the_named_mistake(capsys):
    verdict = check_relu_backward(lambda z, dh: dh * (z >= 0))
    assert verdict.status == "fail" and verdict.mistake == "relu'(0) taken as 1 (the mask z >= 0)"


# ---- exercise 2: ffn_backward(x, W1, b1, W2, b2, dy) -> (dx, dW1, db1, dW2, db2) ----------------------------
def backward_numpy(x, W1, b1, W2, b2, dy):
    z = x @ W1 + b1
    h = np.maximum(z, 0)
    dW2 = h.T @ dy
    db2 = dy.sum(axis=0)
    dh = dy @ W2.T
    dz = dh * (z > 0)
    dW1 = x.T @ dz
    db1 = dz.sum(axis=0)
    dx = dz @ W1.T
    return dx, dW1, db1, dW2, db2


def backward_per_token(x, W1, b1, W2, b2, dy):
    """One token at a time, adding outer products into the shared gradients; the mask from h."""
    dW1, db1 = np.zeros_like(W1), np.zeros_like(b1)
    dW2, db2 = np.zeros_like(W2), np.zeros_like(b2)
    dx = np.zeros_like(x)
    for t in range(len(x)):
        h = np.maximum(x[t] @ W1 + b1, 0)
        dW2 += np.outer(h, dy[t])
        db2 += dy[t]
        dz = (W2 @ dy[t]) * (h > 0)
        dW1 += np.outer(x[t], dz)
        db1 += dz
        dx[t] = W1 @ dz
    return dx, dW1, db1, dW2, db2


def backward_einsum(x, W1, b1, W2, b2, dy):
    z = np.einsum("ti,ik->tk", x, W1) + b1
    dz = np.einsum("tj,kj->tk", dy, W2) * np.heaviside(z, 0)
    return [np.einsum("tk,ik->ti", dz, W1), np.einsum("ti,tk->ik", x, dz), np.einsum("tk->k", dz),
            np.einsum("tk,tj->kj", np.maximum(z, 0), dy), np.einsum("tj->j", dy)]


def backward_lists(x, W1, b1, W2, b2, dy):
    """Plain Python loops over lists: lists of lists come back, which the check accepts."""
    x, W1, b1, W2, dy = (np.asarray(a).tolist() for a in (x, W1, b1, W2, dy))
    T, d, d_ff, d_out = len(x), len(W1), len(b1), len(W2[0])
    z = [[sum(x[t][i] * W1[i][k] for i in range(d)) + b1[k] for k in range(d_ff)] for t in range(T)]
    h = [[max(v, 0.0) for v in row] for row in z]
    dh = [[sum(dy[t][j] * W2[k][j] for j in range(d_out)) for k in range(d_ff)] for t in range(T)]
    dz = [[dh[t][k] if z[t][k] > 0 else 0.0 for k in range(d_ff)] for t in range(T)]
    dW2 = [[sum(h[t][k] * dy[t][j] for t in range(T)) for j in range(d_out)] for k in range(d_ff)]
    db2 = [sum(dy[t][j] for t in range(T)) for j in range(d_out)]
    dW1 = [[sum(x[t][i] * dz[t][k] for t in range(T)) for k in range(d_ff)] for i in range(d)]
    db1 = [sum(dz[t][k] for t in range(T)) for k in range(d_ff)]
    dx = [[sum(dz[t][k] * W1[i][k] for k in range(d_ff)) for i in range(d)] for t in range(T)]
    return dx, dW1, db1, dW2, db2


@pytest.mark.parametrize("fn", [backward_numpy, backward_per_token, backward_einsum, backward_lists])
def test_ffn_backward_accepts_right_answers(fn, capsys, monkeypatch):
    assert check_ffn_backward(fn), capsys.readouterr().out
    monkeypatch.setenv(GRADING_ENV, "1")
    assert check_ffn_backward(fn).hidden == 1


def with_slip(**change):
    """backward_numpy with one line changed: each keyword replaces one step (a function of the locals)."""
    def backward(x, W1, b1, W2, b2, dy):
        v = dict(x=x, W1=W1, b1=b1, W2=W2, b2=b2, dy=dy)
        steps = [("z", lambda v: v["x"] @ v["W1"] + v["b1"]), ("h", lambda v: np.maximum(v["z"], 0)),
                 ("dW2", lambda v: v["h"].T @ v["dy"]), ("db2", lambda v: v["dy"].sum(axis=0)),
                 ("dh", lambda v: v["dy"] @ v["W2"].T), ("dz", lambda v: v["dh"] * (v["z"] > 0)),
                 ("dW1", lambda v: v["x"].T @ v["dz"]), ("db1", lambda v: v["dz"].sum(axis=0)),
                 ("dx", lambda v: v["dz"] @ v["W1"].T)]
        for name, step in steps:
            v[name] = change.get(name, step)(v)
        return v["dx"], v["dW1"], v["db1"], v["dW2"], v["db2"]
    return backward


FFN_MISTAKES = [
    (with_slip(dz=lambda v: v["dh"] * (v["z"] >= 0)), "relu'(0) taken as 1 (the mask z >= 0)"),
    (with_slip(dz=lambda v: v["dh"] * (v["h"] >= 0)), "ReLU's mask forgotten: dz = dh"),
    (with_slip(dz=lambda v: v["dh"]), "ReLU's mask forgotten: dz = dh"),
    (with_slip(dz=lambda v: v["dy"] * (v["z"] > 0)), "the mask applied to dy instead of dh"),
    (with_slip(dh=lambda v: v["dy"] @ v["W2"]), "W2 not transposed in dh"),
    (with_slip(dx=lambda v: v["dz"] @ v["W1"]), "W1 not transposed in dx"),
    (with_slip(dW2=lambda v: v["z"].T @ v["dy"]), "dW2 computed from z, the pre-activation, instead of h"),
    (with_slip(dW1=lambda v: v["x"].T @ v["dh"]), "dW1 computed from dh, before ReLU's mask"),
    (with_slip(dx=lambda v: v["dh"] @ v["W1"].T), "dx computed from dh, before ReLU's mask"),
    (with_slip(dz=lambda v: np.maximum(v["dh"], 0)), "ReLU applied to dh instead of masking it by z"),
    (with_slip(z=lambda v: v["x"] @ v["W1"]), "b1 left out of the pre-activation"),
    (with_slip(db1=lambda v: v["dz"].mean(axis=0), db2=lambda v: v["dy"].mean(axis=0)),
     "bias gradients averaged over the tokens instead of summed"),
    (with_slip(dW1=lambda v: v["x"].T @ v["dz"] / len(v["x"]), db1=lambda v: v["dz"].mean(axis=0),
               dW2=lambda v: v["h"].T @ v["dy"] / len(v["x"]), db2=lambda v: v["dy"].mean(axis=0)),
     "every weight and bias gradient divided by T"),
]


@pytest.mark.parametrize("fn, name", FFN_MISTAKES)
def test_ffn_backward_names_the_mistake(fn, name, capsys):
    assert not check_ffn_backward(fn)
    out = capsys.readouterr().out
    assert named(out, name), out


@pytest.mark.parametrize("fn, messages", [
    (with_slip(dW1=lambda v: v["dz"].T @ v["x"]),
     ["`dW1` an array of shape (4, 2); expected (2, 4). That is dW1 transposed", "Likely mistake: dW1 transposed"]),
    (with_slip(dW2=lambda v: v["dy"].T @ v["h"]),
     ["`dW2` an array of shape (2, 4); expected (4, 2). That is dW2 transposed", "Likely mistake: dW2 transposed"]),
    (with_slip(db1=lambda v: v["dz"]), ["`db1` an array of shape (1, 2); expected (2,). db1 was not summed over"]),
    (with_slip(db2=lambda v: v["dy"]), ["db2 was not summed over the tokens"]),
    (with_slip(db1=lambda v: v["dz"].sum(axis=1)), ["summed over the hidden units (axis=1)"]),
    (with_slip(dx=lambda v: v["dz"].sum(axis=0) @ v["W1"].T), ["dx was summed over the tokens"]),
    (lambda x, W1, b1, W2, b2, dy: backward_numpy(x, W1, b1, W2, b2, dy)[1:], ["returned 4 values; expected 5. dx is missing"]),
    (lambda x, W1, b1, W2, b2, dy: backward_numpy(x, W1, b1, W2, b2, dy)[:3], ["returned 3 values; expected 5"]),
    (lambda *args: (lambda g: (g[0], g[3], g[4], g[1], g[2]))(backward_numpy(*args)),
     ["the two layers' gradients swapped in the returned tuple"]),
    (lambda *args: (None,) + tuple(backward_numpy(*args)[1:]), ["with `dx` None"]),
    (lambda *args: {"dx": 0}, ["returned a dict; return the five gradients"]),
    (lambda *args: backward_numpy(*args)[1], ["returned a ndarray; return the five gradients"]),
    (lambda *args: None, ["returned None. Did you forget the `return dx, dW1, db1, dW2, db2`"]),
    (lambda *args: tuple(g.astype(int) for g in backward_numpy(*args)), ["an array of int64"]),
    (lambda *args: tuple(g * np.nan for g in backward_numpy(*args)), ["NaN or infinity"]),
    (lambda *args: 1 / 0, ["raised ZeroDivisionError"]),
])
def test_ffn_backward_bad_returns_get_specific_messages(fn, messages, capsys):
    assert not check_ffn_backward(fn)
    out = capsys.readouterr().out
    for message in messages:
        assert message in out, out


def test_ffn_backward_swapped_layers_in_a_non_square_case_is_told_by_shape(capsys):
    swapped = (lambda *args: (lambda g: (g[0], g[3], g[4], g[1], g[2]))(backward_numpy(*args)))
    assert not check_ffn_backward(swapped)
    assert "returned the two layers' gradients swapped: dW1 has W2's shape" in capsys.readouterr().out


def test_ffn_backward_that_averages_dy_in_place_is_told(capsys):
    def in_place(x, W1, b1, W2, b2, dy):
        dy /= len(x)                                      # "the loss is a mean": but dy is the caller's array
        return backward_numpy(x, W1, b1, W2, b2, dy)
    assert not check_ffn_backward(in_place)
    assert "changed its input `dy` in place" in capsys.readouterr().out


def test_ffn_backward_wrong_values_say_which_gradients_are_wrong(capsys):
    assert not check_ffn_backward(with_slip(db2=lambda v: v["dy"].sum(axis=0) + 1.0))
    out = capsys.readouterr().out
    assert "got db2 wrong (dx, dW1, db1, dW2 right); db2 should be" in out


def test_ffn_backward_stub_says_not_implemented(capsys):
    assert check_ffn_backward(stub).status == "not attempted"
    assert "not implemented yet" in capsys.readouterr().out


# ---- exercise 3: numerical_gradient(f, a, eps) ---------------------------------------------------------------
def numerical_ndindex(f, a, eps):
    grad = np.zeros(a.shape)
    for index in np.ndindex(a.shape):
        kept = a[index]
        a[index] = kept + eps
        up = f(a)
        a[index] = kept - eps
        down = f(a)
        a[index] = kept
        grad[index] = (up - down) / (2 * eps)
    return grad


def numerical_copies(f, a, eps):
    """Nudges copies, never a itself; a flat loop over the entries."""
    grad = np.zeros(a.size)
    for i in range(a.size):
        step = np.zeros(a.size)
        step[i] = eps
        step = step.reshape(a.shape)
        grad[i] = (f(a + step) - f(a - step)) / (2 * eps)
    return grad.reshape(a.shape)


def numerical_nditer(f, a, eps):
    grad = np.zeros_like(a, dtype=float)
    it = np.nditer(a, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        b = a.copy()
        b[i] += eps
        c = a.copy()
        c[i] -= eps
        grad[i] = (f(b) - f(c)) / (2 * eps)
    return grad


@pytest.mark.parametrize("fn", [numerical_ndindex, numerical_copies, numerical_nditer])
def test_numerical_gradient_accepts_right_answers(fn, capsys, monkeypatch):
    assert check_numerical_gradient(fn), capsys.readouterr().out
    monkeypatch.setenv(GRADING_ENV, "1")
    assert check_numerical_gradient(fn)


def forward_difference(f, a, eps):
    grad = np.zeros(a.shape)
    for i in np.ndindex(a.shape):
        b = a.copy()
        b[i] += eps
        grad[i] = (f(b) - f(a)) / eps
    return grad


def not_put_back(f, a, eps):
    grad = np.zeros(a.shape)
    for i in np.ndindex(a.shape):
        a[i] += eps
        up = f(a)
        a[i] -= 2 * eps
        down = f(a)
        a[i] += eps
        grad[i] = (up - down) / (2 * eps)
    return grad


def rows_only(f, a, eps):
    grad = np.zeros(a.shape)
    for i in range(a.shape[0]):
        b, c = a.copy(), a.copy()
        b[i] += eps
        c[i] -= eps
        grad[i] = (f(b) - f(c)) / (2 * eps)
    return grad


NUMERICAL_MISTAKES = [
    (forward_difference, "a forward difference, (f(a + eps) - f(a)) / eps"),
    (lambda f, a, eps: 2 * numerical_copies(f, a, eps), "divided by eps instead of 2 eps"),
    (lambda f, a, eps: -numerical_copies(f, a, eps), "the difference taken the wrong way round"),
    (lambda f, a, eps: np.full(a.shape, (f(a + eps) - f(a - eps)) / (2 * eps)), "every entry nudged at once"),
    (rows_only, "a loop over the first axis only: a matrix's rows nudged whole"),
    (not_put_back, "the entry not put back exactly as it was"),
    (lambda f, a, eps: numerical_copies(f, a, 1e-2), "a fixed step of 1e-2 instead of eps"),
]


@pytest.mark.parametrize("fn, name", NUMERICAL_MISTAKES)
def test_numerical_gradient_names_the_mistake(fn, name, capsys):
    assert not check_numerical_gradient(fn)
    out = capsys.readouterr().out
    assert named(out, name), out


@pytest.mark.parametrize("fn, message", [
    (lambda f, a, eps: numerical_copies(f, a, eps).ravel(), "It is flattened: return it in a's shape"),
    (lambda f, a, eps: (f(a + eps) - f(a - eps)) / (2 * eps), "returned a single number"),
    (lambda f, a, eps: None, "returned None"),
    (lambda f, a, eps: [0.0], "an array of shape (1,)"),
    (lambda f, a, eps: numerical_copies(f, a, eps) > 0, "an array of True/False"),
    (lambda f, a, eps: numerical_copies(f, a, eps) * np.nan, "NaN or infinity"),
    (lambda f, a, eps: numerical_copies(f, a, 0.1), "Hint: use the eps you are given, and for each index of a"),
    (lambda f, a, eps: f(a, eps), "raised TypeError"),
])
def test_numerical_gradient_bad_returns_get_specific_messages(fn, message, capsys):
    assert not check_numerical_gradient(fn)
    assert message in capsys.readouterr().out


def test_numerical_gradient_not_put_back_is_told_it_changed_a(capsys):
    assert not check_numerical_gradient(not_put_back)
    out = capsys.readouterr().out
    assert "changed its input `a` in place" in out and "kept = a[i]" in out
    # The exercise nudges a and restores it: the advice is to put the entry back, not to build a new array.
    assert "put each entry back exactly" in out and "build a new list or array" not in out, out
    assert "differed from what" in out


def test_numerical_gradient_that_never_restores_is_told_to_put_entries_back(capsys):
    def never_restored(f, a, eps):
        grad = np.zeros(a.shape)
        for i in np.ndindex(a.shape):
            a[i] += eps
            up = f(a)
            a[i] -= 2 * eps
            grad[i] = (up - f(a)) / (2 * eps)              # a[i] left eps below where it was
        return grad
    assert not check_numerical_gradient(never_restored)
    out = capsys.readouterr().out
    assert "changed its input `a` in place" in out and "about eps itself: an entry left nudged" in out, out
    assert "Likely mistake: the entry never put back" in out and "rounding error" not in out, out


def test_numerical_gradient_restored_by_arithmetic_is_told_of_rounding_not_of_a_missing_restore(capsys):
    def restored_by_arithmetic(f, a, eps):
        grad = np.zeros(a.shape)
        for i in np.ndindex(a.shape):
            a[i] += eps
            up = f(a)
            a[i] -= 2 * eps
            down = f(a)
            a[i] += eps                                    # back, but for a rounding error
            grad[i] = (up - down) / (2 * eps)
        return grad
    assert not check_numerical_gradient(restored_by_arithmetic)
    out = capsys.readouterr().out
    assert "far less than eps: a rounding error" in out and "Likely mistake: the entry not put back exactly" in out
    assert "never put back" not in out, out


def test_numerical_gradient_on_a_copy_passes(capsys):
    def on_a_copy(f, a, eps):
        a = a.copy()                                       # nudging its own copy leaves the caller's a alone
        grad = np.zeros(a.shape)
        for i in np.ndindex(a.shape):
            kept = a[i]
            a[i] = kept + eps
            up = f(a)
            a[i] = kept - eps
            grad[i] = (up - f(a)) / (2 * eps)
        return grad                                        # its copy is left changed: not the caller's problem
    assert check_numerical_gradient(on_a_copy), capsys.readouterr().out


# ---- going further: gelu_backward(z, dh) -------------------------------------------------------------------
def gelu_backward_scipy(z, dh):
    return dh * (special.ndtr(z) + z * np.exp(-z ** 2 / 2) / np.sqrt(2 * np.pi))


def gelu_backward_erf_loop(z, dh):
    dz = np.empty(z.shape)
    for i in np.ndindex(z.shape):
        v = float(z[i])
        cdf = 0.5 * math.erfc(-v / math.sqrt(2))
        dz[i] = dh[i] * (cdf + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi))
    return dz


def gelu_backward_stats(z, dh):
    return dh * (stats.norm.cdf(z) + z * stats.norm.pdf(z))


@pytest.mark.parametrize("fn", [gelu_backward_scipy, gelu_backward_erf_loop, gelu_backward_stats])
def test_gelu_backward_accepts_right_answers(fn, capsys, monkeypatch):
    assert check_gelu_backward(fn), capsys.readouterr().out
    monkeypatch.setenv(GRADING_ENV, "1")
    assert check_gelu_backward(fn).hidden == 1


GELU_MISTAKES = [
    (lambda z, dh: dh * special.ndtr(z), "Φ(z) alone: the product rule's second term z φ(z) forgotten"),
    (lambda z, dh: dh * (0.5 * (1 + np.tanh(0.7978845608 * (z + 0.044715 * z ** 3)))
                         + 0.5 * z * (1 - np.tanh(0.7978845608 * (z + 0.044715 * z ** 3)) ** 2)
                         * 0.7978845608 * (1 + 3 * 0.044715 * z ** 2)),
     "GPT-2's tanh approximation's slope, not the exact GELU's"),
    (lambda z, dh: dh * (special.ndtr(z) - z * stats.norm.pdf(z)), "the second term subtracted"),
    (lambda z, dh: dh * (stats.norm.pdf(z) + z * special.ndtr(z)), "the density and the cumulative swapped"),
    (lambda z, dh: dh * (special.ndtr(z) + z * np.exp(-z ** 2 / 2)), "φ(z) without its 1/sqrt(2π)"),
    (lambda z, dh: dh * (special.ndtr(z) + np.exp(-z ** 2 / 2) / np.sqrt(2 * np.pi)),
     "the factor z left out of the second term: Φ(z) + φ(z)"),
    (lambda z, dh: dh * z * special.ndtr(z), "GELU itself instead of its slope"),
    (lambda z, dh: special.ndtr(z) + z * stats.norm.pdf(z), "gelu'(z) returned without multiplying by dh"),
    (lambda z, dh: dh * (z > 0), "ReLU's mask instead of GELU's slope"),
]


@pytest.mark.parametrize("fn, name", GELU_MISTAKES)
def test_gelu_backward_names_the_mistake(fn, name, capsys):
    assert not check_gelu_backward(fn)
    out = capsys.readouterr().out
    assert named(out, name), out


@pytest.mark.parametrize("fn, message", [
    (lambda z, dh: None, "returned None"),
    (lambda z, dh: gelu_backward_scipy(z, dh).ravel(), "It is flattened"),
    (lambda z, dh: gelu_backward_scipy(z, dh) > 0, "True/False"),
    (stub, "not implemented yet"),
])
def test_gelu_backward_bad_returns_get_specific_messages(fn, message, capsys):
    assert not check_gelu_backward(fn)
    assert message in capsys.readouterr().out


def test_gelu_backward_hint_is_not_the_whole_answer(capsys):
    """A slip no mistake reproduces gets a hint that points at the two terms, never the code of the answer."""
    def half_slope(z, dh):
        return dh * (special.ndtr(z) + z * stats.norm.pdf(z)) / 2
    assert not check_gelu_backward(half_slope)
    out = capsys.readouterr().out
    assert "Hint: print your slope" in out and "1.0833" in out and "1 · φ(1) = 0.2420" in out, out
    assert "np.exp" not in out and "exp(-z" not in out and "ndtr" not in out, out


# ---- what a hostile bank found: wrong answers that passed or were only "expected / got" --------------------
MORE_RELU_MISTAKES = [
    (lambda z, dh: dh * np.sign(z), "dh multiplied by sign(z)"),
    (lambda z, dh: dh * (z != 0), "the mask z != 0"),
    (lambda z, dh: np.where(z > 0, dh, 0.01 * dh), "a leaky ReLU's slope (0.01 for z <= 0)"),
]


@pytest.mark.parametrize("fn, name", MORE_RELU_MISTAKES, ids=["sign", "nonzero", "leaky"])
def test_relu_backward_names_more_mistakes(fn, name, capsys):
    assert not check_relu_backward(fn)
    out = capsys.readouterr().out
    assert named(out, name), out


@pytest.mark.parametrize("threshold, message", [
    (0.01, "passed no gradient at z = 1e-08, a unit that fired: your mask switches at a threshold above 0"),
    (1e-6, "passed no gradient at z = 1e-08, a unit that fired: your mask switches at a threshold above 0"),
    # below 0, the mask also passes gradient at z = 0, which fails the cases with z = 0 exactly: no one cause
    # fits every failing case, so none is named, and the report says what differs
    (-1e-6, "What differs:"),
])
def test_relu_backward_a_threshold_not_at_0_fails_and_is_named(threshold, message, capsys):
    """Every other case keeps its positive z at 0.019 or more (its negative ones at -0.006 or less) or puts z
    exactly on 0: only the hair's-breadth case tells z > 0.01 from z > 0. (A threshold below 0 also passes
    gradient at z = 0 and fails more cases.)"""
    assert not check_relu_backward(lambda z, dh: dh * (z > threshold))
    out = capsys.readouterr().out
    assert message in out and (threshold < 0 or "1 of 6 cases failed" in out), out


def test_relu_backward_the_mask_z_ge_0_is_not_called_a_threshold(capsys):
    assert not check_relu_backward(lambda z, dh: dh * (z >= 0))
    out = capsys.readouterr().out
    assert "threshold" not in out and named(out, "relu'(0) taken as 1 (the mask z >= 0)"), out


MORE_FFN_MISTAKES = [
    (with_slip(db1=lambda v: v["dz"].mean(axis=0)), "db1 averaged over the tokens instead of summed"),
    (with_slip(db2=lambda v: v["dy"].mean(axis=0)), "db2 averaged over the tokens instead of summed"),
    (with_slip(db1=lambda v: v["dh"].sum(axis=0)), "db1 summed from dh, before ReLU's mask"),
    (with_slip(dW1=lambda v: v["x"].T @ (v["dh"] * v["h"])), "dW1 computed from dh * h instead of dh * (z > 0)"),
    (with_slip(dz=lambda v: v["dh"] / (1 + np.exp(-v["z"]))), "a sigmoid(z) slope instead of ReLU's mask"),
]


@pytest.mark.parametrize("fn, name", MORE_FFN_MISTAKES,
                         ids=["db1_mean", "db2_mean", "db1_from_dh", "dW1_dh_h", "sigmoid"])
def test_ffn_backward_names_more_mistakes(fn, name, capsys):
    assert not check_ffn_backward(fn)
    out = capsys.readouterr().out
    assert named(out, name), out


def test_ffn_backward_float32_inside_is_named(capsys):
    def float32(x, W1, b1, W2, b2, dy):
        return backward_numpy(*(a.astype(np.float32) for a in (x, W1, b1, W2, b2, dy)))
    assert not check_ffn_backward(float32)
    out = capsys.readouterr().out
    assert "returned `dx` as float32 where the inputs are float64" in out, out


def numerical_fixed_step(step):
    def numerical_gradient(f, a, eps):
        return numerical_ndindex(f, a, step)
    return numerical_gradient


def numerical_relative_step(f, a, eps):
    grad = np.zeros(a.shape)
    for i in np.ndindex(a.shape):
        h = eps * max(1.0, abs(a[i]))
        b, c = a.copy(), a.copy()
        b[i] += h
        c[i] -= h
        grad[i] = (f(b) - f(c)) / (2 * h)
    return grad


def numerical_five_point(f, a, eps):
    grad = np.zeros(a.shape)
    for i in np.ndindex(a.shape):
        values = []
        for s in (2, 1, -1, -2):
            b = a.copy()
            b[i] += s * eps
            values.append(f(b))
        grad[i] = (-values[0] + 8 * values[1] - 8 * values[2] + values[3]) / (12 * eps)
    return grad


def numerical_reshape(f, a, eps):
    flat = a.reshape(-1)
    grad = np.zeros(flat.size)
    for j in range(flat.size):
        kept = flat[j]
        flat[j] = kept + eps
        up = f(a)
        flat[j] = kept - eps
        down = f(a)
        flat[j] = kept
        grad[j] = (up - down) / (2 * eps)
    return grad.reshape(a.shape)


def numerical_backward(f, a, eps):
    grad, f0 = np.zeros(a.shape), f(a)
    for i in np.ndindex(a.shape):
        b = a.copy()
        b[i] -= eps
        grad[i] = (f0 - f(b)) / eps
    return grad


def numerical_precedence(f, a, eps):
    grad = np.zeros(a.shape)
    for i in np.ndindex(a.shape):
        b, c = a.copy(), a.copy()
        b[i] += eps
        c[i] -= eps
        grad[i] = (f(b) - f(c)) / 2 * eps
    return grad


def numerical_float32(f, a, eps):
    a32, grad = a.astype(np.float32), np.zeros(a.shape)
    for i in np.ndindex(a.shape):
        b, c = a32.copy(), a32.copy()
        b[i] += eps
        c[i] -= eps
        grad[i] = (f(b) - f(c)) / (2 * eps)
    return grad


def numerical_restored_too_soon(f, a, eps):
    grad = np.zeros(a.shape)
    for i in np.ndindex(a.shape):
        kept = a[i]
        a[i] = kept + eps
        up = f(a)
        a[i] = kept
        grad[i] = (up - f(a)) / (2 * eps)
    return grad


MORE_NUMERICAL_MISTAKES = [
    (numerical_fixed_step(1e-6), "eps ignored: your slopes are not the central difference with the eps it was given"),
    (numerical_fixed_step(1e-4), None),
    (numerical_five_point, "eps ignored: your slopes are not the central difference with the eps it was given"),
    (numerical_relative_step, "the step scaled by |a_i|"),
    (numerical_reshape, "your nudges did not reach a: a.reshape(-1) (or ravel) made a copy"),
    (numerical_backward, "a backward difference, (f(a) - f(a - eps)) / eps"),
    (numerical_precedence, "multiplied by eps instead of divided by 2 eps"),
    (numerical_float32, "the nudged entries computed in float32"),
    (numerical_restored_too_soon, "a[i] put back before the second evaluation"),
]


@pytest.mark.parametrize("fn, name", MORE_NUMERICAL_MISTAKES,
                         ids=["step_1e-6", "step_1e-4", "five_point", "relative", "reshape", "backward", "precedence",
                              "float32", "restored_too_soon"])
def test_numerical_gradient_names_more_mistakes(fn, name, capsys):
    assert not check_numerical_gradient(fn)
    out = capsys.readouterr().out
    # A step of 1e-4 for eps = 1e-5 is the eps slip on the coarse case, and agrees with no mutant elsewhere: a
    # mistake is named only where it gives the learner's outcome on every failing case, so none is.
    if name is None:
        assert "Likely mistake" not in out and "Possibly" not in out and "What differs:" in out, out
        return
    assert named(out, name) or f"Possibly: {name}" in out, out


def test_numerical_gradient_coarse_eps_case_is_3a2_plus_eps2():
    """The coarse case's expected slopes are the central difference's own, 3 a² + eps², not the exact 3 a²."""
    case = next(c for c in L8._numerical_cases() if "coarse" in c.name)
    a, eps = case.args["a"], case.args["eps"]
    expected = L8._numerical_reference(case.args["f"], a.copy(), eps)
    assert np.allclose(expected, 3 * a ** 2 + eps ** 2, rtol=1e-12) and np.any(np.abs(a) > 1)
    assert not np.allclose(expected, 3 * a ** 2, rtol=1e-7)
    contiguous = next(c for c in L8._numerical_cases() if "transposed" in c.name)
    assert not contiguous.args["a"].flags["C_CONTIGUOUS"]


def gelu_finite_difference(h):
    from helpers.ffn import gelu

    def gelu_backward(z, dh):
        return dh * (gelu(z + h) - gelu(z - h)) / (2 * h)
    return gelu_backward


@pytest.mark.parametrize("h", [1e-4, 1e-5, 1e-6, 1e-7])
def test_gelu_backward_a_finite_difference_is_close_but_not_exact(h, capsys):
    assert not check_gelu_backward(gelu_finite_difference(h))
    out = capsys.readouterr().out
    assert "close to dh * gelu'(z) but not exact" in out and "a finite difference" in out, out


def test_gelu_backward_erf_and_ndtr_styles_agree_to_the_tight_tolerance(capsys):
    def erf_style(z, dh):
        return dh * (0.5 * (1 + special.erf(z / np.sqrt(2))) + z * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi))

    def vectorized(z, dh):
        cdf = np.vectorize(lambda v: 0.5 * (1 + math.erf(v / math.sqrt(2))))
        return dh * (cdf(z) + z * np.exp(-z ** 2 / 2) / math.sqrt(2 * math.pi))
    for fn in (erf_style, vectorized):
        assert check_gelu_backward(fn), capsys.readouterr().out


MORE_GELU_MISTAKES = [
    (lambda z, dh: dh * (special.ndtr(z) + z * np.exp(-z ** 2) / np.sqrt(2 * np.pi)), "φ(z) with exp(-z²)"),
    (lambda z, dh: dh * (0.5 * (1 + special.erf(z / 2)) + z * stats.norm.pdf(z)), "Φ(z) from erf(z / 2)"),
    (lambda z, dh: dh * (1 + special.erf(z / np.sqrt(2)) + z * stats.norm.pdf(z)),
     "Φ(z) as 1 + erf(z / sqrt(2)), without the factor 1/2"),
    (lambda z, dh: dh * (special.ndtr(z) + z * np.exp(-z ** 2 / 2) / np.sqrt(np.pi)), "φ(z) divided by sqrt(π)"),
    (lambda z, dh: dh * (1 / (1 + np.exp(-1.702 * z)) + 1.702 * z * np.exp(-1.702 * z) / (1 + np.exp(-1.702 * z)) ** 2),
     "the slope of the sigmoid approximation"),
    (lambda z, dh: dh * (1 / (1 + np.exp(-z))) * (1 + z * (1 - 1 / (1 + np.exp(-z)))), "SiLU's slope (silu_grad)"),
    (lambda z, dh: special.ndtr(z) + dh * z * stats.norm.pdf(z), "dh applied to the second term only"),
]


@pytest.mark.parametrize("fn, name", MORE_GELU_MISTAKES,
                         ids=["phi_no_half", "erf_z_over_2", "no_half_erf", "sqrt_pi", "sigmoid", "silu",
                              "dh_one_term"])
def test_gelu_backward_names_more_mistakes(fn, name, capsys):
    with np.errstate(over="ignore"):
        assert not check_gelu_backward(fn)
    out = capsys.readouterr().out
    assert named(out, name), out


def test_gelu_backward_float32_is_named(capsys):
    assert not check_gelu_backward(lambda z, dh: gelu_backward_scipy(z, dh).astype(np.float32))
    assert "returned float32 where z is float64" in capsys.readouterr().out


def numerical_gradient_two_dimensions_only(f, a, eps=1e-6):
    """Written for vectors and matrices: np.atleast_2d and a double loop, not any number of dimensions."""
    A = np.atleast_2d(a)
    grad = np.zeros_like(A, dtype=float)
    for r in range(A.shape[0]):
        for c in range(A.shape[1]):
            keep = A[r, c]
            A[r, c] = keep + eps
            up = f(a)
            A[r, c] = keep - eps
            down = f(a)
            A[r, c] = keep
            grad[r, c] = (up - down) / (2 * eps)
    return grad.reshape(a.shape)


def gelu_backward_clipped(z, dh):
    from scipy.special import ndtr
    z = np.clip(z, -6, 6)                                                # "the tails are flat anyway"
    return dh * (ndtr(z) + z * np.exp(-z ** 2 / 2) / np.sqrt(2 * np.pi))


def relu_backward_two_dimensions_only(z, dh):
    """Written for tokens x units: a double loop over rows and columns, not any number of dimensions."""
    Z, D = np.atleast_2d(z), np.atleast_2d(dh)
    dz = np.zeros(D.shape)
    for t in range(Z.shape[0]):
        for j in range(Z.shape[1]):
            dz[t, j] = D[t, j] if Z[t, j] > 0 else 0.0
    return dz.reshape(np.shape(z))


@pytest.mark.parametrize("check, fn", [(check_numerical_gradient, numerical_gradient_two_dimensions_only),
                                       (check_gelu_backward, gelu_backward_clipped),
                                       (check_relu_backward, relu_backward_two_dimensions_only)])
def test_answers_right_only_on_the_easy_inputs_fail_in_public(check, fn, capsys, monkeypatch):
    monkeypatch.delenv("FFN_GRADING", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    ok = check(fn)
    out = capsys.readouterr().out
    assert not ok and "✘" in out, out


def test_relu_backward_in_float32_fails_in_public(capsys, monkeypatch):
    monkeypatch.delenv("FFN_GRADING", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert not check_relu_backward(lambda z, dh: (dh * (z > 0)).astype(np.float32))
    out = capsys.readouterr().out
    assert "✘ 3 tokens x 4 units of unrounded numbers" in out and "float32" in out, out


def test_ffn_backward_a_gradient_off_in_its_seventh_digit_fails(capsys):
    def ffn_backward(x, W1, b1, W2, b2, dy):
        z = x @ W1 + b1
        dz = (dy @ W2.T) * (z > 0)
        return dz @ W1.T, x.T @ dz, dz.sum(0), np.maximum(z, 0).T @ dy, dy.sum(0) * (1 + 1e-7)
    assert not check_ffn_backward(ffn_backward)
    assert "db2" in capsys.readouterr().out


# ---- hidden cases drawn from the grading secret ------------------------------------------------------------
@pytest.mark.parametrize("check, builder, right, wrong", [
    (check_relu_backward, L8._relu_hidden, [relu_backward_numpy, relu_backward_where, relu_backward_copy_and_zero,
                                            relu_backward_loop, relu_backward_heaviside],
     RELU_MISTAKES + MORE_RELU_MISTAKES),
    (check_ffn_backward, L8._ffn_hidden, [backward_numpy, backward_per_token, backward_einsum, backward_lists],
     FFN_MISTAKES + MORE_FFN_MISTAKES),
    (check_numerical_gradient, L8._numerical_hidden, [numerical_ndindex, numerical_copies, numerical_nditer],
     NUMERICAL_MISTAKES + MORE_NUMERICAL_MISTAKES),
    (check_gelu_backward, L8._gelu_hidden, [gelu_backward_scipy, gelu_backward_erf_loop, gelu_backward_stats],
     GELU_MISTAKES + MORE_GELU_MISTAKES),
], ids=["relu_backward", "ffn_backward", "numerical_gradient", "gelu_backward"])
def test_hidden_cases_are_drawn_from_the_grading_secret(check, builder, right, wrong, monkeypatch, capsys):
    with np.errstate(over="ignore"):
        assert_hidden_cases_are_drawn_from_the_secret(check, builder, right, wrong, monkeypatch, capsys)


@pytest.mark.parametrize("secret", SECRETS)
def test_hidden_relu_cases_have_exact_zeros_and_every_mask_mistake_fails_them(secret):
    """Each hidden case has z exactly 0 where dh is not 0 (relu'(0) = 0 decides there), a unit that fired and
    one that did not with dh > 0, and the batch 3 or 4 dimensions: every known relu_backward mistake gets
    each hidden case wrong."""
    batch, matrix = drawn(L8._relu_hidden, secret)
    assert batch.args["z"].ndim in (3, 4) and all(2 <= n <= 5 for n in batch.args["z"].shape)
    assert matrix.args["z"].ndim == 2 and all(2 <= n <= 9 for n in matrix.args["z"].shape)
    for case in (batch, matrix):
        z, dh = case.args["z"], case.args["dh"]
        assert z.shape == dh.shape and np.count_nonzero(z == 0) >= 2 and np.all(dh != 0)
        assert np.any(z > 0) and np.any((z < 0) & (dh > 0))
        expected = L8._relu_backward(z, dh)
        for mistake in L8._RELU_MISTAKES:
            assert not np.allclose(mistake.fn(z, dh), expected), (mistake.name, case.name)


@pytest.mark.parametrize("secret", SECRETS)
def test_hidden_ffn_case_has_three_different_sizes_and_a_unit_off_for_every_token(secret):
    (case,) = drawn(L8._ffn_hidden, secret)
    x, W1, b1 = case.args["x"], case.args["W1"], case.args["b1"]
    (T, d), d_ff = x.shape, W1.shape[1]
    assert len({T, d, d_ff}) == 3 and all(2 <= n <= 7 for n in (T, d, d_ff))
    fired = (x @ W1 + b1) > 0
    assert (~fired.any(axis=0)).sum() >= 1 and fired.any()          # a unit off for every token; others fire


@pytest.mark.parametrize("secret", SECRETS)
def test_hidden_numerical_cases_keep_their_shapes(secret):
    """The sine case's a is a transposed matrix: nudges written into a.reshape(-1) are lost on it."""
    cube, sine = drawn(L8._numerical_hidden, secret)
    assert 1 <= cube.args["a"].ndim <= 4 and all(2 <= n <= 3 for n in cube.args["a"].shape)
    a = sine.args["a"]
    assert a.ndim == 2 and all(2 <= n <= 4 for n in a.shape) and not a.flags["C_CONTIGUOUS"]
    assert not np.allclose(L8._reshaped_copy(sine.args["f"], a, 1e-5),                # its nudges miss a
                           L8._numerical_reference(sine.args["f"], a.copy(), 1e-5))


@pytest.mark.parametrize("secret", SECRETS)
def test_hidden_gelu_case_keeps_its_shape(secret):
    (case,) = drawn(L8._gelu_hidden, secret)
    assert 1 <= case.args["z"].ndim <= 4 and all(2 <= n <= 4 for n in case.args["z"].shape)
    assert case.args["z"].shape == case.args["dh"].shape


# ---- the pencil exercise: backward_by_hand() -> (dh, dz, dx) ------------------------------------------------
# A fixed answer worked out by hand, so no hidden cases (as lesson 01's hand_trace): a first failure names the
# part and the slip, never the numbers; the answer shows after a second failure or with reveal=True.
from fractions import Fraction

from helpers.checks import _verdict, check_backward_by_hand

RIGHT_BY_HAND = ([3, -2], [0, -2], [-4, -2])


@pytest.fixture
def first_attempt(monkeypatch):
    monkeypatch.setattr(_verdict, "_FAILED_ATTEMPTS", {})


def by_hand_with_numpy():
    x, W1, b1 = np.array([2.0, 1.0]), np.array([[1.0, 2.0], [-1.0, 1.0]]), np.array([-1.0, -3.0])
    W2, t = np.array([[1.0, 2.0], [0.0, -1.0]]), np.array([1.0, -4.0])
    z = x @ W1 + b1
    dy = np.maximum(z, 0) @ W2 - t
    dh = dy @ W2.T
    dz = dh * (z > 0)
    return dh, dz, dz @ W1.T


@pytest.mark.parametrize("fn", [
    lambda: RIGHT_BY_HAND,
    lambda: [(3.0, -2.0), np.array([-0.0, -2.0]), [-4.0, -2.0]],
    lambda: ([Fraction(3), Fraction(-2)], [0, -2], [-4, -2]),
    lambda: np.array([[3, -2], [0, -2], [-4, -2]]),
    by_hand_with_numpy,
])
def test_backward_by_hand_accepts_right_answers(fn, capsys, first_attempt):
    assert check_backward_by_hand(fn)
    assert "all 3 cases pass" in capsys.readouterr().out


# (answer, the slip it makes, named by the check)
WRONG_BY_HAND = [
    (([-3, 2], [0, 2], [4, 2]), "dy taken as target - y, its sign flipped"),
    (([-4, 2], [0, 2], [4, 2]), "y used where dy belongs"),
    (([-1, -4], [0, -4], [-8, -4]), "W2 not transposed in dh"),
    (([-1, 2], [0, 2], [4, 2]), "W2 left out: dh = dy"),
    (([3, -2], [3, -2], [-1, -5]), "relu'(0) taken as 1 (the mask z >= 0), or the mask left out"),
    (([3, -2], [0, -4], [-8, -4]), "multiplied by z (or h) instead of relu'(z)"),
    (([3, -2], [3, 0], [3, -3]), "the mask inverted"),
    (([3, -2], [0, 1], [2, 1]), "relu'(z) written without dh"),
    (([3, -2], [0, -2], [2, -2]), "W1 not transposed in dx"),
    (([3, -2], [0, -2], [-4, 2]), "W2 used in place of W1"),
    (([3, -2], [0, -2], [-1, -5]), "dx taken from dh, before the mask"),
    (([0.5, -1], [0, -1], [-1, 1]), "the worked example's numbers copied"),
    (([3, -2], [0, -2], [-4.000004, -2]), "a typo or a tiny offset in dx"),
]


def test_the_wrong_answers_by_hand_are_all_different():
    answers = [str(answer) for answer, _ in WRONG_BY_HAND]
    assert len(set(answers)) == len(answers)


@pytest.mark.parametrize("answer, name", WRONG_BY_HAND, ids=[n for _, n in WRONG_BY_HAND])
def test_backward_by_hand_names_the_slip_without_the_numbers(answer, name, capsys, first_attempt):
    verdict = check_backward_by_hand(lambda: answer)
    out = capsys.readouterr().out
    assert not verdict and named(out, name), out
    assert verdict.mistake.startswith(name.split(":")[0])
    mine = {str(np.asarray(part, dtype=float).tolist()) for part in answer}
    for part in RIGHT_BY_HAND:                      # a right part the learner has not written is never shown
        shown = str(np.asarray(part, dtype=float).tolist())
        if shown not in mine:
            assert str(part).replace(" ", "") not in out.replace(" ", ""), (part, out)
    assert "The answer" not in out and "reveal=True" in out


def test_backward_by_hand_carries_a_slip_forward_without_a_second_failure(capsys, first_attempt):
    check_backward_by_hand(lambda: ([3, -2], [3, -2], [-1, -5]))
    out = capsys.readouterr().out
    assert "follows correctly from your dz" in out and "1 of 3 cases failed" in out


def test_backward_by_hand_reveals_after_a_second_failure_or_on_request(capsys, first_attempt):
    wrong = ([-1, -4], [0, -4], [-8, -4])
    check_backward_by_hand(lambda: wrong)
    assert "The answer" not in capsys.readouterr().out
    check_backward_by_hand(lambda: wrong)
    assert "The answer, after your second try: dh = [3, -2], dz = [0, -2], dx = [-4, -2]." in capsys.readouterr().out
    _verdict._FAILED_ATTEMPTS.clear()
    check_backward_by_hand(lambda: wrong, reveal=True)
    assert "The answer, as you asked" in capsys.readouterr().out


@pytest.mark.parametrize("fn, message", [
    (stub, "not implemented yet"),
    (lambda: None, "returned None"),
    (lambda: ([3, -2], [0, -2]), "returned 2 values"),
    (lambda: ([[0, 0], [-2, 4]], [3, -2], [0, -2], [-4, -2]), "returned 4 values"),
    (lambda: ([3, -2, 0], [0, -2], [-4, -2]), "`dh` has shape (3,); expected (2,)"),
    (lambda: (None, [0, -2], [-4, -2]), "`dh` is None"),
    (lambda: ([3, -2], [0, float("nan")], [-4, -2]), "`dz` holds NaN"),
    (lambda: ([3, -2], [0, -2], "-4, -2"), "`dx` is a str"),
    (lambda: 1 / 0, "ZeroDivisionError"),
    (RIGHT_BY_HAND, "expected a function"),
])
def test_backward_by_hand_bad_answers_get_specific_messages(fn, message, capsys, first_attempt):
    assert not check_backward_by_hand(fn)
    assert message in capsys.readouterr().out


def test_backward_by_hand_has_no_hidden_cases_even_when_graded(monkeypatch, capsys, first_attempt):
    """A number worked out by hand has one right value: graded runs judge the same three parts."""
    monkeypatch.setenv(GRADING_ENV, "1")
    verdict = check_backward_by_hand(lambda: RIGHT_BY_HAND)
    assert verdict and verdict.total == 3 and verdict.hidden == 0
