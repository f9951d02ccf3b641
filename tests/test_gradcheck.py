"""helpers.gradcheck.gradient_check, the cell of lesson 08 that turns a learner's numerical gradient on their
backward pass: it judges the backward pass only once the numerical gradient gives central differences."""
import numpy as np
import pytest

from helpers.ffn import ffn_backward
from helpers.gradcheck import gradient_check, numerical_gradient, relative_error


def case():
    rng = np.random.default_rng(4)
    return dict(x=rng.normal(size=(4, 3)), W1=rng.normal(size=(3, 5)), b1=rng.normal(size=5),
                W2=rng.normal(size=(5, 3)), b2=rng.normal(size=3), dy=rng.normal(size=(4, 3)))


def mask_forgotten(x, W1, b1, W2, b2, dy):
    h = np.maximum(x @ W1 + b1, 0)
    dz = dy @ W2.T
    return dz @ W1.T, x.T @ dz, dz.sum(axis=0), h.T @ dy, dy.sum(axis=0)


def own_central(f, a, eps):
    grad = np.zeros(a.shape)
    for i in np.ndindex(a.shape):
        kept = a[i]
        a[i] = kept + eps
        up = f(a)
        a[i] = kept - eps
        grad[i] = (up - f(a)) / (2 * eps)
        a[i] = kept
    return grad


def divided_by_eps(f, a, eps):
    return 2 * own_central(f, a, eps)


def forward_difference(f, a, eps):
    grad, base = np.zeros(a.shape), f(a)
    for i in np.ndindex(a.shape):
        kept = a[i]
        a[i] = kept + eps
        grad[i] = (f(a) - base) / eps
        a[i] = kept
    return grad


def test_a_right_backward_agrees(capsys):
    assert gradient_check(ffn_backward, own_central, **case(), eps=1e-5)
    out = capsys.readouterr().out
    assert out.count("agree") == 5 + 1 and "DISAGREE" not in out, out


def test_a_wrong_backward_disagrees_where_the_bug_is(capsys):
    assert not gradient_check(mask_forgotten, own_central, **case(), eps=1e-5)
    lines = capsys.readouterr().out.splitlines()
    disagree = [line.split()[0] for line in lines if line.endswith("DISAGREE")]
    assert disagree == ["dx", "dW1", "db1"], lines


@pytest.mark.parametrize("numerical, problem", [
    (divided_by_eps, "relative error of 1.0e+00"),
    (lambda f, a, eps: own_central(f, a, eps).ravel(), "has shape"),
    (lambda f, a, eps: own_central(f, a, eps) * np.nan, "NaN or infinity"),
])
def test_a_wrong_numerical_gradient_is_named_and_the_backward_pass_not_blamed(numerical, problem, capsys):
    """The trial learner's report: a wrong numerical_gradient made this cell call a right backward pass wrong."""
    assert not gradient_check(ffn_backward, numerical, **case(), eps=1e-5)
    out = capsys.readouterr().out
    assert out.startswith("numerical_gradient has not passed its check yet") and problem in out, out
    assert "DISAGREE" not in out and "a gradient disagrees" not in out, out


def test_stubs_say_which_exercise_is_missing(capsys):
    def stub(*args):
        raise NotImplementedError
    assert not gradient_check(stub, own_central, **case())
    assert "ffn_backward: not implemented yet (Exercise 3)" in capsys.readouterr().out
    assert not gradient_check(ffn_backward, stub, **case())
    assert "numerical_gradient: not implemented yet (Exercise 4)" in capsys.readouterr().out


def test_a_forward_difference_passes_here_because_this_loss_is_piecewise_linear(capsys):
    """What lesson 08 says: L = sum(FFN(x) * dy) is linear in each parameter away from the corner, so a
    one-sided difference is exact up to rounding; on a curved function it is off by about eps f'' / 2."""
    assert gradient_check(ffn_backward, forward_difference, **case(), eps=1e-5)
    capsys.readouterr()
    a = np.array([1.0, -2.0, 0.5, 3.0])
    exact = 3 * a ** 2
    one_sided = forward_difference(lambda v: float(np.sum(v ** 3)), a.copy(), 1e-5)
    central = numerical_gradient(lambda v: float(np.sum(v ** 3)), a.copy(), 1e-5)
    assert relative_error(one_sided, exact) > 1e-6 > 1e-8 > relative_error(central, exact)
