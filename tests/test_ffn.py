"""helpers.ffn against independent definitions: per-element math, per-token Python loops, 60-digit values.

None of these references call helpers.ffn or scipy: GELU is checked against math.erf / math.erfc per element
and against the normal CDF summed as a series in 60-digit decimal arithmetic; the FFNs against loops over
tokens and units in plain Python. float32 GELU, which has code of its own, is checked in float32 ulps on a
dense grid. No timings here: benchmarks/ffn_bench.py measures speed and memory.
"""
import functools
import math
import threading
import time
import warnings
from decimal import Decimal, localcontext

import numpy as np
import pytest

from helpers import _blocks as blocks
from helpers import _gelu32 as gelu32
from helpers import ffn as lib
from helpers.ffn import ffn, gelu, gelu_tanh, relu, silu, softmax, swiglu_ffn

ACTIVATIONS = [relu, gelu, gelu_tanh, silu]
EPS32 = float(np.finfo(np.float32).eps)


# ---------------------------------------------------------------- references, one element at a time

def relu_ref(z):
    return z if z > 0 else 0.0


def gelu_ref(z):
    """z Phi(z), Phi from math.erfc (or math.erf near 0, where 1 + erf does not cancel)."""
    phi = 0.5 * math.erfc(-z / math.sqrt(2)) if z < 0 else 0.5 * (1 + math.erf(z / math.sqrt(2)))
    return z * phi


def gelu_tanh_ref(z):
    return 0.5 * z * (1 + math.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))


def silu_ref(z):
    """z / (1 + e^-z), rewritten as z e^z / (1 + e^z) for z < 0 so that math.exp cannot overflow."""
    return z / (1 + math.exp(-z)) if z >= 0 else z * math.exp(z) / (1 + math.exp(z))


REFERENCES = {relu: relu_ref, gelu: gelu_ref, gelu_tanh: gelu_tanh_ref, silu: silu_ref}

# float64 tolerances. GPT-2's formula 1 + tanh(..) cancels for negative z, so one ulp of tanh (NumPy's or
# math's) becomes an absolute error of about eps * |z| / 2 there: gelu_tanh gets that as an absolute margin.
TOL64 = {relu: dict(rtol=0, atol=0), gelu: dict(rtol=1e-13, atol=1e-300),
         gelu_tanh: dict(rtol=1e-13, atol=4e-15), silu: dict(rtol=1e-13, atol=1e-300)}


def per_element(f, z):
    return np.array([f(float(v)) for v in np.ravel(z)]).reshape(np.shape(z))


@functools.cache
def decimal_pi():
    """pi to 70 digits by Machin's formula, pi = 16 atan(1/5) - 4 atan(1/239)."""
    def atan_inv(n):
        total, term, k, sign = Decimal(0), Decimal(1) / n, 1, 1
        while term > Decimal(10) ** -75:
            total += sign * term / k
            term, k, sign = term / (n * n), k + 2, -sign
        return total
    with localcontext() as ctx:
        ctx.prec = 70
        return 16 * atan_inv(5) - 4 * atan_inv(239)


def gelu_60_digits(z):
    """GELU(z) = z Phi(z) in 60-digit decimal arithmetic, for a float z (taken exactly).

    erf(x) = 2/sqrt(pi) e^(-x^2) sum_n 2^n x^(2n+1) / (1 * 3 * ... * (2n+1)), a series of positive terms,
    so nothing cancels in the sum; Phi(z) = (1 + erf(z / sqrt 2)) / 2 keeps 30+ digits even at z = -10.
    """
    with localcontext() as ctx:
        ctx.prec = 60
        zd = Decimal(float(z))
        x = abs(zd) / Decimal(2).sqrt()
        term = total = x
        n = 0
        while term > total * Decimal(10) ** -60:
            n += 1
            term = term * 2 * x * x / (2 * n + 1)
            total += term
        erf_abs = 2 / decimal_pi().sqrt() * (-x * x).exp() * total
        phi = (1 + erf_abs) / 2 if zd >= 0 else (1 - erf_abs) / 2
        return zd * phi


def test_the_60_digit_reference_itself():
    # Published values: pi, and the normal CDF at 1 and at -10 (tables of Phi to 20 and more digits).
    assert str(decimal_pi())[:32] == "3.141592653589793238462643383279"
    assert abs(gelu_60_digits(1.0) - Decimal("0.84134474606854294858523254563")) < Decimal("1e-29")
    assert abs(gelu_60_digits(-10.0) / -10 / Decimal("7.6198530241605260659733432515e-24") - 1) < Decimal("1e-25")
    assert gelu_60_digits(0.0) == 0


def ffn_loop(x, W1, b1, W2, b2, act):
    """Token by token, unit by unit, in Python floats: y_j = sum_k act(sum_i x_i W1[i,k] + b1[k]) W2[k,j] + b2[j]."""
    d, d_ff = W1.shape
    rows = []
    for token in np.reshape(x, (-1, d)).tolist():
        h = [act(sum(token[i] * W1[i, k] for i in range(d)) + b1[k]) for k in range(d_ff)]
        rows.append([sum(h[k] * W2[k, j] for k in range(d_ff)) + b2[j] for j in range(W2.shape[1])])
    return np.array(rows).reshape(np.shape(x)[:-1] + (W2.shape[1],))


def swiglu_loop(x, W_gate, W_up, W_down):
    """Token by token: a_k = silu(x . W_gate[:, k]) * (x . W_up[:, k]); y_j = sum_k a_k W_down[k, j]."""
    d, d_ff = W_gate.shape
    rows = []
    for token in np.reshape(x, (-1, d)).tolist():
        gate = [sum(token[i] * W_gate[i, k] for i in range(d)) for k in range(d_ff)]
        value = [sum(token[i] * W_up[i, k] for i in range(d)) for k in range(d_ff)]
        a = [silu_ref(g) * v for g, v in zip(gate, value)]
        rows.append([sum(a[k] * W_down[k, j] for k in range(d_ff)) for j in range(W_down.shape[1])])
    return np.array(rows).reshape(np.shape(x)[:-1] + (W_down.shape[1],))


def weights(rng, d=5, d_ff=7, dtype=np.float64):
    return [rng.standard_normal(shape).astype(dtype) for shape in [(d, d_ff), (d_ff,), (d_ff, d), (d,)]]


# ---------------------------------------------------------------- GELU accuracy

Z_GRID = np.linspace(-10, 10, 401)


def test_gelu_float64_within_1e_7_of_60_digit_values_absolute_and_relative():
    expected = np.array([gelu_60_digits(z) for z in Z_GRID])          # Decimals
    got = gelu(Z_GRID)
    abs_err = np.array([abs(Decimal(float(g)) - e) for g, e in zip(got, expected)], dtype=float)
    rel_err = np.array([abs(Decimal(float(g)) - e) / abs(e) for g, e in zip(got, expected) if e != 0], dtype=float)
    assert abs_err.max() <= 1e-7 and rel_err.max() <= 1e-7, (abs_err.max(), rel_err.max())
    # In fact far better: 1e-14 relative even at z = -10, where GELU is -7.6e-23 (there the rounding of
    # z / sqrt 2 inside Phi, magnified by the slope of log Phi, costs about z^2 / 2 float64 ulps).
    assert rel_err.max() < 1e-13


# float32 has a GELU of its own (helpers._gelu32.gelu_float32: a table and a Taylor step, in float32 arithmetic),
# whose error, measured at every float32 in [-15, 15] by benchmarks/gelu_float32_error.py --exhaustive, is:
GELU32_ULPS = 2.9           # at most this many ulps of the float32 result, wherever that is a normal float32
GELU32_SUBNORMAL = 1.5      # below float32's normal range: at most this many smallest subnormals (2^-149) off
GELU32_ULPS_ABOVE_1E_7 = 0.55   # where the error exceeds 1e-7 (absolute): at most this many ulps
TINY32 = float(np.finfo(np.float32).tiny)           # 2^-126, the smallest normal float32


def float32_ulps(got, exact):
    """|got - exact| in float32 ulps at exact (the spacing of float32 numbers around it); exact may be Decimals."""
    exact = np.array([float(e) for e in exact]) if not isinstance(exact, np.ndarray) else exact
    spacing = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    return np.abs(np.asarray(got, dtype=np.float64) - exact) / spacing


def test_gelu_float32_within_a_few_ulps_of_60_digit_values():
    z32 = Z_GRID.astype(np.float32)
    got = gelu(z32)
    assert got.dtype == np.float32
    expected = [gelu_60_digits(z) for z in z32]                        # at the float32 inputs, exactly
    errors = [abs(Decimal(float(g)) - e) for g, e in zip(got, expected)]
    ulps = [float(err) / float(np.spacing(np.float32(abs(e)))) for err, e in zip(errors, expected)]
    assert max(ulps) <= GELU32_ULPS, max(ulps)                          # down to GELU(-10) = -7.6e-23


def float32_grid():
    """float32 z: every 4099th float32 in [-15, 15] by bit pattern (every magnitude from 1e-45 to 15, both signs)
    and 100,001 evenly spaced over [-10, 10]."""
    top = int(np.float32(15).view(np.int32))
    magnitudes = np.arange(0, top + 1, 4099, dtype=np.int32).view(np.float32)
    return np.concatenate([magnitudes, -magnitudes, np.linspace(-10, 10, 100_001, dtype=np.float32)])


def test_gelu_float32_error_bound_on_a_dense_grid_against_math_erfc():
    z = float32_grid()
    exact = per_element(gelu_ref, z)                                   # float64, math.erf / math.erfc
    got = gelu(z)
    assert got.dtype == np.float32
    normal = np.abs(exact) >= TINY32
    ulps = float32_ulps(got[normal], exact[normal])
    assert ulps.max() <= GELU32_ULPS, (ulps.max(), z[normal][ulps.argmax()])
    # The float32 criterion: off by at most 4 ulps or at most 1e-7, whichever is larger.
    above_1e_7 = np.abs(got[normal] - exact[normal]) > 1e-7
    assert above_1e_7.any() and ulps[above_1e_7].max() <= GELU32_ULPS_ABOVE_1E_7 <= 4
    # Small relative error in the left tail, where GELU is -7.6e-23 at z = -10 and -1.2e-38 at z = -13.2
    # (and 1 - Phi(-z) in float32 would be 0).
    tail = normal & (z < -5.5)
    assert tail.sum() > 1000 and np.all(np.abs(got[tail] / exact[tail] - 1) <= GELU32_ULPS * EPS32)
    # Results below float32's normal range (far left, or |z| tiny) lose precision gradually, as float32 does.
    below = ~normal
    assert np.all((z[below] < -13) | (np.abs(z[below]) < 2 * TINY32)) and np.sum(z[below] < -13) > 100
    assert np.abs(got[below] - exact[below]).max() <= GELU32_SUBNORMAL * 2.0 ** -149


def test_gelu_float32_special_values_and_warnings_as_in_float64():
    big = float(np.finfo(np.float32).max)
    z = np.array([-np.inf, np.inf, np.nan, -0.0, 0.0, -big, big, -20.0, 20.0], np.float32)
    results, messages = [], []
    for dtype in (np.float32, np.float64):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(gelu(z.astype(dtype)).astype(np.float32))
        messages.append(sorted(str(w.message) for w in caught))
    got, expected = results
    np.testing.assert_array_equal(got, expected)                        # -inf -> nan (-inf * 0), inf, nan, ...
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))  # -0.0 stays -0.0
    assert np.isnan(got[0]) and got[1] == np.inf and np.isnan(got[2])
    assert messages[0] == messages[1] == ["invalid value encountered in multiply"]   # from -inf * 0, both


def test_gelu_float32_table_holds_the_normal_tail_and_its_ratio_to_the_density():
    s = np.arange(gelu32._TABLE_TAIL.size) / gelu32._TABLE_STEP
    assert gelu32._TABLE_STEP == 256 and s[-1] == 15                   # s = 0, 1/256, ..., 15
    tail = np.array([0.5 * math.erfc(v / math.sqrt(2)) for v in s])  # Phi(-s)
    density = np.array([math.exp(-v * v / 2) / math.sqrt(2 * math.pi) for v in s])
    rounding = 2.0 ** -24 * (1 + 1e-6)                              # one float32 rounding of a float64 value
    np.testing.assert_allclose(np.float64(gelu32._TABLE_TAIL) * 2.0 ** -64, tail, rtol=rounding, atol=0)
    np.testing.assert_allclose(gelu32._TABLE_LAM, density / tail, rtol=rounding, atol=0)
    assert gelu32._TABLE_TAIL.dtype == gelu32._TABLE_LAM.dtype == np.float32


def test_gelu_matches_math_erf_per_element():
    rng = np.random.default_rng(0)
    z = np.concatenate([rng.normal(0, 3, 500), [-38.0, -20.0, -10.0, -1e-300, 0.0, 1e-300, 10.0, 40.0]])
    np.testing.assert_allclose(gelu(z), per_element(gelu_ref, z), rtol=1e-13, atol=1e-300)  # 1e-300: Phi(-38)


def test_exact_and_tanh_gelu_differ_by_at_most_about_4_7e_4():
    z = np.linspace(-10, 10, 200_001)
    gap = np.abs(gelu(z) - gelu_tanh(z))
    assert 4.70e-4 <= gap.max() < 4.75e-4, gap.max()
    assert abs(abs(z[gap.argmax()]) - 2.70) < 0.01                    # at |z| of about 2.7
    assert gap[np.abs(z) > 6].max() < 1e-8                             # both are 0 or z far out


# ---------------------------------------------------------------- each activation against its definition

@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_activation_matches_per_element_definition_float64(act):
    rng = np.random.default_rng(1)
    z = np.concatenate([rng.normal(0, 3, 300), np.linspace(-10, 10, 101)])
    np.testing.assert_allclose(act(z), per_element(REFERENCES[act], z), **TOL64[act])


@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_activation_float32_stays_float32_and_is_accurate(act):
    z32 = np.linspace(-10, 10, 1001, dtype=np.float32)
    got = act(z32)
    assert got.dtype == np.float32
    expected = per_element(REFERENCES[act], z32)                       # float64, at the float32 inputs
    # gelu_tanh computes GPT-2's 1 + tanh(..) in float32, which cancels for negative z: allow eps * |z|.
    np.testing.assert_allclose(got, expected, rtol=4 * EPS32, atol=4 * EPS32 * float(np.abs(z32).max()))


@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_no_warnings_and_right_limits_for_extreme_inputs(act, dtype):
    z = np.array([-1e30, -1000.0, -745.0, -100.0, -89.0, -20.0, 0.0, 20.0, 89.0, 100.0, 1000.0, 1e30], dtype)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        got = act(z)
    assert got.dtype == dtype and np.all(np.isfinite(got))
    big = np.abs(z) >= 100
    np.testing.assert_array_equal(got[big & (z > 0)], z[big & (z > 0)])          # act(z) = z far right
    assert np.all(np.abs(got[big & (z < 0)]) < 1e-30)                            # act(z) = 0 far left
    np.testing.assert_allclose(got, per_element(REFERENCES[act], z).astype(dtype), rtol=4 * EPS32, atol=1e-30)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_silu_for_large_negative_and_positive_inputs(dtype):
    z = np.array([-1000.0, -80.0, -30.0, -5.0, 5.0, 30.0, 80.0, 1000.0], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = silu(z)
    np.testing.assert_allclose(got, [silu_ref(float(v)) for v in z], rtol=4 * np.finfo(dtype).eps, atol=1e-300)
    assert got[-1] == 1000 and got[0] == 0                              # saturates to z and to 0


@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_scalar_list_and_integer_inputs(act):
    assert act(1.5) == pytest.approx(REFERENCES[act](1.5), rel=1e-14)
    assert isinstance(act(1.5), np.floating)                           # a scalar, as a ufunc returns
    np.testing.assert_allclose(act([-2, 0, 3]), [REFERENCES[act](v) for v in (-2.0, 0.0, 3.0)], rtol=1e-14)


# ---------------------------------------------------------------- out= and aliasing

@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_activation_out_semantics(act):
    rng = np.random.default_rng(2)
    z = rng.normal(0, 3, (6, 9))
    kept = z.copy()
    expected = per_element(REFERENCES[act], kept)

    y = act(z)                                             # out=None: a new array, z untouched
    np.testing.assert_array_equal(z, kept)
    assert not np.shares_memory(y, z)
    np.testing.assert_allclose(y, expected, **TOL64[act])

    out = np.full_like(z, np.nan)                          # out= another array: filled and returned
    assert act(z, out=out) is out
    np.testing.assert_array_equal(z, kept)
    np.testing.assert_array_equal(out, y)

    assert act(z, out=z) is z                              # out=z: in place, as ffn uses it
    np.testing.assert_array_equal(z, y)


@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_activation_with_overlapping_or_strided_out(act):
    z = np.linspace(-4, 4, 40)
    expected = per_element(REFERENCES[act], z)
    shifted = z.copy()
    act(shifted[1:], out=shifted[:-1])                     # out overlaps the input, one element over
    np.testing.assert_allclose(shifted[:-1], expected[1:], **TOL64[act])

    grid = z.reshape(5, 8).copy()
    out = np.zeros((8, 5))
    act(grid[:, ::2], out=out.T[:, ::2])                    # strided input and output
    np.testing.assert_allclose(out.T[:, ::2], expected.reshape(5, 8)[:, ::2], **TOL64[act])
    np.testing.assert_array_equal(out.T[:, 1::2], 0)        # nothing written outside out


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_overlapping_out_across_many_blocks(act, threads, monkeypatch):
    """out one element after the input: blocks written early must not be read later as input."""
    monkeypatch.setattr(blocks, "BLOCK", 4)
    monkeypatch.setattr(blocks, "n_threads", lambda: threads)
    z = np.linspace(-4, 4, 50)
    expected = per_element(REFERENCES[act], z)
    for source, target in [(slice(None, -1), slice(1, None)), (slice(1, None), slice(None, -1))]:
        shifted = z.copy()
        act(shifted[source], out=shifted[target])
        np.testing.assert_allclose(shifted[target], expected[source], **TOL64[act])


@pytest.mark.parametrize("act", [gelu, gelu_tanh, silu], ids=lambda f: f.__name__)
def test_blocks_and_threads_give_the_same_result(act, monkeypatch):
    """Many small blocks (the last one short) shared by three threads: the same values as one go."""
    monkeypatch.setattr(blocks, "BLOCK", 7)
    monkeypatch.setattr(blocks, "n_threads", lambda: 3)
    z = np.random.default_rng(3).normal(0, 3, (11, 13)).astype(np.float32)
    kept = z.copy()
    np.testing.assert_allclose(act(z), per_element(REFERENCES[act], kept), rtol=4 * EPS32, atol=1e-6)
    np.testing.assert_array_equal(z, kept)
    act(z, out=z)
    np.testing.assert_allclose(z, per_element(REFERENCES[act], kept), rtol=4 * EPS32, atol=1e-6)


def test_an_error_in_a_helper_thread_reaches_the_caller(monkeypatch):
    monkeypatch.setattr(blocks, "BLOCK", 4)
    monkeypatch.setattr(blocks, "n_threads", lambda: 3)

    def formula(z, out):                    # fails in the helper threads only; the caller's thread is slow,
        if threading.current_thread() is threading.main_thread():   # so that the helpers get blocks
            time.sleep(0.005)
            return np.multiply(z, 2.0, out=out)
        raise ValueError("a block in a helper thread")

    with pytest.raises(ValueError, match="helper thread"):
        blocks.elementwise(formula, np.linspace(0, 1, 40), None)


def test_thread_count_follows_the_blas_setting(monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    assert blocks.n_threads() == 1
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    assert blocks.n_threads() == 3
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert blocks.n_threads() == 2


# ---------------------------------------------------------------- ffn

@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda f: f.__name__)
def test_ffn_matches_per_token_loop(act):
    rng = np.random.default_rng(4)
    W1, b1, W2, b2 = weights(rng)
    x = rng.standard_normal((6, 5))
    kept = x.copy()
    np.testing.assert_allclose(ffn(x, W1, b1, W2, b2, activation=act), ffn_loop(x, W1, b1, W2, b2, REFERENCES[act]),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(x, kept)


def test_ffn_default_activation_is_relu():
    rng = np.random.default_rng(5)
    W1, b1, W2, b2 = weights(rng)
    x = rng.standard_normal((3, 5))
    np.testing.assert_allclose(ffn(x, W1, b1, W2, b2), ffn_loop(x, W1, b1, W2, b2, relu_ref), rtol=1e-12)


@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 5)], ids=["(d,)", "(T,d)", "(B,T,d)"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ffn_leading_dims_and_dtypes(shape, dtype):
    rng = np.random.default_rng(6)
    W1, b1, W2, b2 = weights(rng, dtype=dtype)
    x = rng.standard_normal(shape).astype(dtype)
    y = ffn(x, W1, b1, W2, b2, activation=gelu)
    assert y.shape == shape and y.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y, ffn_loop(x, W1, b1, W2, b2, gelu_ref), rtol=tol, atol=tol)


def test_ffn_non_square_and_non_contiguous_input():
    rng = np.random.default_rng(7)
    W1, b1 = rng.standard_normal((5, 7)), rng.standard_normal(7)
    W2, b2 = rng.standard_normal((7, 3)), rng.standard_normal(3)        # d_out = 3, not d
    x = rng.standard_normal((5, 4)).T                                   # (4, 5), a transposed view
    np.testing.assert_allclose(ffn(x, W1, b1, W2, b2), ffn_loop(x, W1, b1, W2, b2, relu_ref), rtol=1e-12)


def test_ffn_float32_stays_float32_with_float64_biases_and_weights():
    rng = np.random.default_rng(8)
    W1, b1, W2, b2 = weights(rng)                                       # all float64
    x = rng.standard_normal((4, 5)).astype(np.float32)
    for params in ([W1, b1, W2, b2], [W1.astype(np.float32), b1, W2.astype(np.float32), b2]):
        y = ffn(x, *params, activation=silu)
        assert y.dtype == np.float32
        np.testing.assert_allclose(y, ffn_loop(x, W1, b1, W2, b2, silu_ref), rtol=1e-4, atol=1e-4)
    assert ffn(x.tolist(), W1, b1, W2, b2).dtype == np.float64          # lists become float64


def test_ffn_with_a_custom_activation():
    rng = np.random.default_rng(9)
    W1, b1, W2, b2 = weights(rng)
    x = rng.standard_normal((4, 5))
    square = lambda z: z ** 2                                           # noqa: E731
    np.testing.assert_allclose(ffn(x, W1, b1, W2, b2, activation=square),
                               ffn_loop(x, W1, b1, W2, b2, lambda z: z * z), rtol=1e-12)
    np.testing.assert_allclose(ffn(x, W1, b1, W2, b2, activation=lambda z: np.maximum(z, 0)),
                               ffn(x, W1, b1, W2, b2, activation=relu), rtol=0)
    np.testing.assert_allclose(ffn(x, W1, b1, W2, b2, activation=np.tanh),          # a ufunc, in place
                               ffn_loop(x, W1, b1, W2, b2, math.tanh), rtol=1e-12)
    upcast = ffn(x.astype(np.float32), W1, b1, W2, b2, activation=lambda z: z * np.float64(2))
    assert upcast.dtype == np.float32                                   # the lambda's float64 is not kept


# ---------------------------------------------------------------- SwiGLU

@pytest.mark.parametrize("shape", [(5,), (7, 5), (2, 7, 5)], ids=["(d,)", "(T,d)", "(B,T,d)"])
@pytest.mark.parametrize("cols", [768, 3], ids=["default blocks", "blocks of 3 units"])
def test_swiglu_matches_written_out_definition(shape, cols, monkeypatch):
    monkeypatch.setattr(lib, "_COLS", cols)                             # 3: blocks 3 + 3 + 2 of d_ff = 8
    rng = np.random.default_rng(10)
    W_gate, W_up, W_down = rng.standard_normal((5, 8)), rng.standard_normal((5, 8)), rng.standard_normal((8, 5))
    x = rng.standard_normal(shape)
    kept = x.copy()
    y = swiglu_ffn(x, W_gate, W_up, W_down)
    assert y.shape == shape
    np.testing.assert_allclose(y, swiglu_loop(x, W_gate, W_up, W_down), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(x, kept)


def test_swiglu_is_not_symmetric_in_gate_and_value():
    rng = np.random.default_rng(11)
    W_gate, W_up, W_down = rng.standard_normal((5, 8)), rng.standard_normal((5, 8)), rng.standard_normal((8, 5))
    x = rng.standard_normal((3, 5))
    assert not np.allclose(swiglu_ffn(x, W_gate, W_up, W_down), swiglu_ffn(x, W_up, W_gate, W_down))


def test_swiglu_dtypes():
    rng = np.random.default_rng(12)
    W_gate, W_up, W_down = rng.standard_normal((5, 8)), rng.standard_normal((5, 8)), rng.standard_normal((8, 5))
    x = rng.standard_normal((300, 5))
    expected = swiglu_loop(x, W_gate, W_up, W_down)
    y32 = swiglu_ffn(x.astype(np.float32), W_gate, W_up, W_down)       # float64 weights, float32 x
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, expected, rtol=1e-4, atol=1e-4)
    y64 = swiglu_ffn(x, W_gate.astype(np.float32), W_up, W_down)
    assert y64.dtype == np.float64


# ---------------------------------------------------------------- softmax

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_matches_per_row_definition_and_survives_large_logits(dtype):
    z = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, -1000.0], [-5.0, 0.0, 5.0]], dtype)
    expected = []
    for row in z.tolist():
        top = max(row)
        e = [math.exp(v - top) for v in row]
        expected.append([v / sum(e) for v in e])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = softmax(z)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, expected, rtol=4 * np.finfo(dtype).eps, atol=1e-300)
    np.testing.assert_allclose(softmax(z.T, axis=0), np.array(expected).T, rtol=4 * np.finfo(dtype).eps)
