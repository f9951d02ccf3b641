"""helpers.ffn's backward passes against independent references: central differences and per-token loops.

Central differences use only the forward pass (helpers.ffn.ffn and swiglu_ffn, themselves tested against loops in
test_ffn.py): the gradient of L = sum(FFN(x) * dy) with respect to every entry of every input, in float64. The
per-token loop works through one token and one unit at a time in Python floats, with the derivatives written
from math's functions. No timings here: benchmarks/ffn_bench.py measures speed and memory.
"""
import math
import warnings

import numpy as np
import pytest

from helpers import _blocks as blocks
from helpers.ffn import (ffn, ffn_backward, gelu, gelu_grad, gelu_tanh, gelu_tanh_grad, relu, relu_grad, silu,
                         silu_grad, swiglu_backward, swiglu_ffn)
from helpers.toy import HAND_TRACE

ACTIVATIONS = [relu, gelu, gelu_tanh, silu]
GRADS = {relu: relu_grad, gelu: gelu_grad, gelu_tanh: gelu_tanh_grad, silu: silu_grad}
SHAPES = {"(d,)": (3,), "(T,d)": (4, 3), "(B,T,d)": (2, 4, 3)}     # d = 3, d_ff = 5: nothing square
D, D_FF = 3, 5
FD_STEP = 1e-6
FD_TOL = 1e-6           # the bound on the relative error against central differences, in float64


# ---------------------------------------------------------------- references

def relu_slope_ref(z):
    return 1.0 if z > 0 else 0.0                       # relu'(0) = 0, as PyTorch takes it


def gelu_slope_ref(z):
    """Phi(z) + z phi(z), Phi from math.erfc (or math.erf for z >= 0)."""
    cdf = 0.5 * math.erfc(-z / math.sqrt(2)) if z < 0 else 0.5 * (1 + math.erf(z / math.sqrt(2)))
    return cdf + z * math.exp(-z * z / 2) / math.sqrt(2 * math.pi)


def gelu_tanh_slope_ref(z):
    """d/dz of 0.5 z (1 + tanh(u)), u = sqrt(2/pi) (z + 0.044715 z^3), by the product and chain rules."""
    k = math.sqrt(2 / math.pi)
    t = math.tanh(k * (z + 0.044715 * z ** 3))
    return 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * k * (1 + 3 * 0.044715 * z * z)


def silu_slope_ref(z):
    s = 1 / (1 + math.exp(-z))
    return s + z * s * (1 - s)


def relu_ref(z):
    return max(z, 0.0)


def gelu_ref(z):
    return z * 0.5 * math.erfc(-z / math.sqrt(2))


def gelu_tanh_ref(z):
    return 0.5 * z * (1 + math.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))


def silu_ref(z):
    return z / (1 + math.exp(-z))


SCALAR = {relu: (relu_ref, relu_slope_ref), gelu: (gelu_ref, gelu_slope_ref),
          gelu_tanh: (gelu_tanh_ref, gelu_tanh_slope_ref), silu: (silu_ref, silu_slope_ref)}


def central_differences(loss, arrays):
    """dloss/darray for every array, entry by entry: (loss(a + step) - loss(a - step)) / (2 step)."""
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            kept = a[idx]
            a[idx] = kept + FD_STEP
            up = loss()
            a[idx] = kept - FD_STEP
            down = loss()
            a[idx] = kept
            g[idx] = (up - down) / (2 * FD_STEP)
        grads.append(g)
    return grads


def relative_error(got, expected):
    """The largest error over the gradient's largest entry."""
    return np.abs(got - expected).max() / np.abs(expected).max()


def backward_loop(x, W1, b1, W2, b2, dy, act):
    """Token by token, unit by unit, in Python floats; returns (dx, dW1, db1, dW2, db2) as arrays."""
    f, slope = SCALAR[act]
    d, d_ff = np.shape(W1)
    d_out = np.shape(W2)[1]
    W1, b1, W2 = np.asarray(W1).tolist(), np.asarray(b1).tolist(), np.asarray(W2).tolist()
    dW1 = [[0.0] * d_ff for _ in range(d)]
    db1 = [0.0] * d_ff
    dW2 = [[0.0] * d_out for _ in range(d_ff)]
    db2 = [0.0] * d_out
    dx = []
    for token, g in zip(np.reshape(x, (-1, d)).tolist(), np.reshape(dy, (-1, d_out)).tolist()):
        z = [sum(token[i] * W1[i][k] for i in range(d)) + b1[k] for k in range(d_ff)]
        h = [f(v) for v in z]
        dz = []
        for k in range(d_ff):
            dh = sum(g[j] * W2[k][j] for j in range(d_out))         # row k of W2 against dy
            dz.append(dh * slope(z[k]))
            for j in range(d_out):
                dW2[k][j] += h[k] * g[j]
        for j in range(d_out):
            db2[j] += g[j]
        for k in range(d_ff):
            db1[k] += dz[k]
            for i in range(d):
                dW1[i][k] += token[i] * dz[k]
        dx.append([sum(dz[k] * W1[i][k] for k in range(d_ff)) for i in range(d)])
    return (np.reshape(dx, np.shape(x)), np.array(dW1), np.array(db1), np.array(dW2), np.array(db2))


def ffn_inputs(rng, shape, d_out=D):
    x = rng.standard_normal(shape)
    W1, b1 = rng.standard_normal((D, D_FF)), rng.standard_normal(D_FF)
    W2, b2 = rng.standard_normal((D_FF, d_out)), rng.standard_normal(d_out)
    dy = rng.standard_normal(shape[:-1] + (d_out,))
    return x, W1, b1, W2, b2, dy


def swiglu_weights(rng):
    return rng.standard_normal((D, D_FF)), rng.standard_normal((D, D_FF)), rng.standard_normal((D_FF, D))


# ---------------------------------------------------------------- against central differences

@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_ffn_backward_matches_central_differences(act, shape):
    x, W1, b1, W2, b2, dy = ffn_inputs(np.random.default_rng(0), shape)
    z = x @ W1 + b1
    assert np.abs(z).min() > 1000 * FD_STEP            # no step crosses ReLU's kink: its slope is defined there
    params = [p.copy() for p in (x, W1, b1, W2, b2)]
    expected = central_differences(lambda: np.sum(ffn(*params, activation=act) * dy), params)
    got = ffn_backward(x, W1, b1, W2, b2, dy, activation=act)
    assert len(got) == 5
    for name, g, e in zip(["dx", "dW1", "db1", "dW2", "db2"], got, expected):
        assert g.shape == e.shape, name
        assert relative_error(g, e) < FD_TOL, (name, relative_error(g, e))


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_swiglu_backward_matches_central_differences(shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    W_gate, W_up, W_down = swiglu_weights(rng)
    dy = rng.standard_normal(shape)
    params = [p.copy() for p in (x, W_gate, W_up, W_down)]
    expected = central_differences(lambda: np.sum(swiglu_ffn(*params) * dy), params)
    got = swiglu_backward(x, W_gate, W_up, W_down, dy)
    assert len(got) == 4
    for name, g, e in zip(["dx", "dW_gate", "dW_up", "dW_down"], got, expected):
        assert g.shape == e.shape, name
        assert relative_error(g, e) < FD_TOL, (name, relative_error(g, e))


def test_swiglu_backward_tells_gate_from_value():
    """Swapping W_gate and W_up changes the function, so the two gradients must not be interchangeable."""
    rng = np.random.default_rng(2)
    x, dy = rng.standard_normal((4, D)), rng.standard_normal((4, D))
    W_gate, W_up, W_down = swiglu_weights(rng)
    _, dW_gate, dW_up, _ = swiglu_backward(x, W_gate, W_up, W_down, dy)
    _, dW_gate_swapped, dW_up_swapped, _ = swiglu_backward(x, W_up, W_gate, W_down, dy)
    assert not np.allclose(dW_gate, dW_up_swapped) and not np.allclose(dW_up, dW_gate_swapped)


# ---------------------------------------------------------------- against a per-token loop, with z = 0 exactly

@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_ffn_backward_matches_per_token_loop_with_exact_zeros(act):
    """Small integers make many pre-activations exactly 0, where relu'(0) = 0 (PyTorch's choice) decides."""
    rng = np.random.default_rng(3)
    x = rng.integers(-2, 3, (6, D)).astype(float)
    W1 = rng.integers(-2, 3, (D, D_FF)).astype(float)
    b1 = -(x[0] @ W1)                                                   # token 0: z = 0 at every unit
    W2, b2 = rng.standard_normal((D_FF, 2)), rng.standard_normal(2)     # d_out = 2, not d
    dy = rng.standard_normal((6, 2))
    assert np.sum(x @ W1 + b1 == 0) >= D_FF
    got = ffn_backward(x, W1, b1, W2, b2, dy, activation=act)
    expected = backward_loop(x, W1, b1, W2, b2, dy, act)
    for name, g, e in zip(["dx", "dW1", "db1", "dW2", "db2"], got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, err_msg=name)


def test_relu_slope_at_zero_is_zero_on_the_hand_trace():
    """Lesson 01's 2 x 2 trace: z = [0, 2], so unit 0 sits exactly on ReLU's kink. Worked by hand with dy = [1, 1]:
    h = [0, 2], dh = dy W2^T = [1, 1], dz = dh * relu'(z) = [0, 1] (relu'(0) = 0), dx = dz W1^T = [1, -1]."""
    p = HAND_TRACE
    dy = np.array([1.0, 1.0])
    dx, dW1, db1, dW2, db2 = ffn_backward(p["x"], p["W1"], p["b1"], p["W2"], p["b2"], dy)
    np.testing.assert_array_equal(dx, [1.0, -1.0])
    np.testing.assert_array_equal(dW1, [[0.0, 1.0], [0.0, -1.0]])     # x^T dz: column 0 is 0, unit 0 is off
    np.testing.assert_array_equal(db1, [0.0, 1.0])                     # relu'(0) = 1 would give [1, 1]
    np.testing.assert_array_equal(dW2, [[0.0, 0.0], [2.0, 2.0]])       # h^T dy
    np.testing.assert_array_equal(db2, [1.0, 1.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_grad_at_zero_and_either_side(dtype):
    tiny = np.finfo(dtype).smallest_subnormal
    z = np.array([0.0, -0.0, tiny, -tiny, 1.0, -1.0], dtype)
    got = relu_grad(z)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, [0, 0, 1, 0, 1, 0])
    assert relu_grad(0.0) == 0 and isinstance(relu_grad(0.0), np.floating)


# ---------------------------------------------------------------- the derivatives themselves

Z = np.linspace(-8, 8, 1601)


@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_derivative_matches_math_and_central_differences_of_the_activation(act):
    got = GRADS[act](Z)
    expected = np.array([SCALAR[act][1](z) for z in Z])
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    away = np.abs(Z) > 1e-3                                             # central differences: not across a kink
    step = 1e-6
    differences = (act(Z[away] + step) - act(Z[away] - step)) / (2 * step)
    np.testing.assert_allclose(got[away], differences, rtol=0, atol=1e-8)


def test_smooth_derivatives_at_zero_are_one_half():
    for grad in (gelu_grad, gelu_tanh_grad, silu_grad):
        for dtype in (np.float32, np.float64):
            assert grad(np.zeros(3, dtype))[0] == 0.5, grad.__name__
            assert grad(np.array([-0.0], dtype))[0] == 0.5, grad.__name__


# float32 derivatives: the largest absolute error against float64 on [-20, 20] (gelu: from the float32 GELU's 3
# ulps; gelu_tanh and silu: 1 - tanh^2 and 1 - sigmoid, as PyTorch computes them, cancel to about z eps).
FLOAT32_ABS = {relu: 0.0, gelu: 4e-7, gelu_tanh: 3e-6, silu: 3e-6}


@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_float32_derivative_close_to_float64(act):
    z = np.linspace(-20, 20, 400_001)
    got = GRADS[act](z.astype(np.float32))
    assert got.dtype == np.float32
    expected = GRADS[act](z.astype(np.float32).astype(np.float64))
    assert np.abs(got - expected).max() <= FLOAT32_ABS[act]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_derivatives_of_huge_inputs_are_the_limits_without_warnings(act, dtype):
    big = np.finfo(dtype).max
    z = np.array([big, -big, 1e19, -1e19], dtype)                    # z^2, z^3 and e^-z overflow
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = GRADS[act](z)
    np.testing.assert_array_equal(got, [1, 0, 1, 0])


@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_derivative_out_semantics(act):
    z = np.linspace(-4, 4, 24).reshape(4, 6)
    kept = z.copy()
    fresh = GRADS[act](z)
    np.testing.assert_array_equal(z, kept)
    out = np.full_like(z, np.nan)
    assert GRADS[act](z, out=out) is out
    np.testing.assert_array_equal(out, fresh)
    assert GRADS[act](z, out=z) is z
    np.testing.assert_array_equal(z, fresh)


# ---------------------------------------------------------------- dtypes, inputs, blocks, errors

@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_ffn_backward_float32_kept_and_close_to_float64(act):
    rng = np.random.default_rng(4)
    x, W1, b1, W2, b2, dy = ffn_inputs(rng, (2, 5, D))
    exact = ffn_backward(x, W1, b1, W2, b2, dy, activation=act)
    x32, dy32 = x.astype(np.float32), dy.astype(np.float32)
    for params in ([W1, b1, W2, b2], [p.astype(np.float32) for p in (W1, b1, W2, b2)]):   # float64 params cast
        got = ffn_backward(x32, *params, dy32, activation=act)
        for g, e in zip(got, exact):
            assert g.dtype == np.float32 and g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=0, atol=1e-5 * np.abs(e).max())


def test_swiglu_backward_float32_kept_and_close_to_float64():
    rng = np.random.default_rng(5)
    x, dy = rng.standard_normal((2, 5, D)), rng.standard_normal((2, 5, D))
    W_gate, W_up, W_down = swiglu_weights(rng)
    exact = swiglu_backward(x, W_gate, W_up, W_down, dy)
    got = swiglu_backward(x.astype(np.float32), W_gate, W_up, W_down, dy.astype(np.float32))
    for g, e in zip(got, exact):
        assert g.dtype == np.float32 and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=0, atol=1e-5 * np.abs(e).max())


def test_lists_become_float64():
    p = HAND_TRACE
    got = ffn_backward(p["x"].tolist(), p["W1"].tolist(), [0, 0], p["W2"].tolist(), [0, 0], [1, 1])
    assert all(g.dtype == np.float64 for g in got)
    np.testing.assert_array_equal(got[0], [1.0, -1.0])
    got = swiglu_backward([1, -1], [[1, 2], [3, 4]], [[1, 0], [0, 1]], [[1, 0], [0, 1]], [1, 1])
    assert all(g.dtype == np.float64 for g in got)


def test_inputs_are_not_changed():
    rng = np.random.default_rng(6)
    for act in ACTIVATIONS:
        inputs = ffn_inputs(rng, (4, D))
        kept = [a.copy() for a in inputs]
        ffn_backward(*inputs, activation=act)
        for a, k in zip(inputs, kept):
            np.testing.assert_array_equal(a, k)
    inputs = [rng.standard_normal(s) for s in [(4, D), (D, D_FF), (D, D_FF), (D_FF, D), (4, D)]]
    kept = [a.copy() for a in inputs]
    swiglu_backward(*inputs)
    for a, k in zip(inputs, kept):
        np.testing.assert_array_equal(a, k)


def test_non_contiguous_input_and_zero_tokens():
    rng = np.random.default_rng(7)
    x, W1, b1, W2, b2, dy = ffn_inputs(rng, (5, D))
    view = np.asfortranarray(x)[::1]                                    # the same values, column-major
    for g, e in zip(ffn_backward(view, W1, b1, W2, b2, dy), ffn_backward(x, W1, b1, W2, b2, dy)):
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=1e-14)
    got = ffn_backward(np.zeros((0, D)), W1, b1, W2, b2, np.zeros((0, D)))
    assert [g.shape for g in got] == [(0, D), (D, D_FF), (D_FF,), (D_FF, D), (D,)]
    assert all(np.all(g == 0) for g in got)


@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_blocks_and_threads_give_the_same_gradients(act, monkeypatch):
    """Many small blocks (the last one short) shared by three threads: the same gradients as one block."""
    rng = np.random.default_rng(8)
    x, W1, b1, W2, b2, dy = (a.astype(np.float32) for a in ffn_inputs(rng, (11, D)))
    one_go = ffn_backward(x, W1, b1, W2, b2, dy, activation=act)
    monkeypatch.setattr(blocks, "BLOCK", 7)                              # 55 hidden values: 8 blocks
    monkeypatch.setattr(blocks, "n_threads", lambda: 3)
    for g, e in zip(ffn_backward(x, W1, b1, W2, b2, dy, activation=act), one_go):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)
    W_gate, W_up, W_down = W1, W1[::-1] * 0.5, W2
    swiglu_blocks = swiglu_backward(x, W_gate, W_up, W_down, dy)
    monkeypatch.setattr(blocks, "BLOCK", 1 << 16)
    for g, e in zip(swiglu_blocks, swiglu_backward(x, W_gate, W_up, W_down, dy)):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)


def test_errors_name_the_problem():
    x, W1, b1, W2, b2, dy = ffn_inputs(np.random.default_rng(9), (4, D))
    with pytest.raises(ValueError, match="derivatives of relu, gelu, gelu_tanh and silu"):
        ffn_backward(x, W1, b1, W2, b2, dy, activation=np.tanh)
    with pytest.raises(ValueError, match=r"dy must have the output's shape \(4, 3\)"):
        ffn_backward(x, W1, b1, W2, b2, dy[:, :2])
    with pytest.raises(ValueError, match="dy must have the output's shape"):
        swiglu_backward(x, W1, W1, W2, dy.T)
