"""The exact GELU for float32 input, in float32 NumPy arithmetic: a table of the normal tail and a Taylor step.

Used by helpers.ffn.gelu for float32 arrays; float64 input goes to scipy.special.ndtr instead. The method and its
error bound are explained below; benchmarks/gelu_float32_error.py measures the error at every float32 input.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

# For float32 input, Phi comes from float32 NumPy operations rather than ndtr (float64, about 14 ns an element).
# Three steps:
#
# 1. Only the tail. With t = |z|: z Phi(z) = z H(z) - t Phi(-t), where H(z) is 1 for z >= 0 and 0 for z < 0,
#    because Phi(z) = 1 - Phi(-z). The tail Phi(-t) <= 1/2 is computed to small relative error, never as
#    1 - (a number close to 1), which loses relative accuracy as the tail shrinks and is 0 below z = -5.4.
# 2. A table, made once from float64 values: Phi(-s) and lam(s) = phi(s) / Phi(-s) (phi the normal density;
#    lam is the inverse Mills ratio) at s = 0, 1/256, 2/256, ..., 15. Beyond 15, Phi(-t) < 4e-51 is 0 in float32,
#    so t is clamped to 15.
# 3. A short step from the nearest table point s to t = s + e, |e| <= 1/512. The slope of log Phi(-t) at s is
#    -lam and its curvature -lam (lam - s), so by Taylor's theorem
#        Phi(-t) = Phi(-s) exp(-d),   d = e (lam + lam (lam - s) e / 2),
#    within 3e-10 (relative) over [0, 15], and exp(-d), |d| < 0.03, is 1 - d + d^2/2 - d^3/6 + d^4/24 within
#    2e-10. No step loses accuracy to cancellation (lam - s is small for large s, but so is its term), so
#    float32 rounding alone sets the error: at most 2.9 ulps of GELU (benchmarks/gelu_float32_error.py).
#
# The table holds Phi(-s) 2^64 and the polynomial gives 2^-64 exp(-d), so that every intermediate value is a
# normal float32 and only the last product can underflow, where GELU itself leaves float32's normal range.
_TABLE_STEP = 256                                   # table points per unit of s
_S = np.arange(15 * _TABLE_STEP + 1) / _TABLE_STEP  # 0, 1/256, ..., 15: 3841 points, exact in float64
_TAIL = special.ndtr(-_S)                           # Phi(-s), float64, to about 1e-15 relative
_TABLE_TAIL = (_TAIL * 2.0 ** 64).astype(np.float32)                                  # Phi(-s) 2^64
_TABLE_LAM = (np.exp(-_S ** 2 / 2) / math.sqrt(2 * math.pi) / _TAIL).astype(np.float32)  # phi(s) / Phi(-s)
_EXP_TAYLOR = np.float32([2.0 ** -64 * (-1) ** k / math.factorial(k) for k in range(5)])  # 2^-64 exp(-d)


def gelu_float32(z: np.ndarray, out: np.ndarray) -> np.ndarray:
    """z Phi(z) for float32 z, written into out, by the three steps above."""
    f32 = np.float32
    # One allocation for the four float32 temporaries, not four: four arrays freed after every block let the C
    # library return their memory to the system and fault it back in, page by page, for the next block
    # (measured: more than twice the time).
    t, s, e, work = np.empty((4,) + z.shape, np.float32)
    row = np.empty(z.shape, np.intp)
    with np.errstate(under="ignore"):           # z below -13.2: GELU underflows, gradually, to 0
        np.abs(z, out=t)
        s.fill(15)
        np.minimum(t, s, out=t)                 # t = min(|z|, 15), nan stays nan (minimum is 3x faster with
                                                # an array of 15s than with the number 15)
        np.multiply(t, f32(_TABLE_STEP), out=s)
        np.rint(s, out=s)
        with np.errstate(invalid="ignore"):     # nan: a garbage row, clipped below; the result is nan anyway
            np.copyto(work.view(np.int32), s, casting="unsafe")
        np.copyto(row, work.view(np.int32))     # row of the nearest table point (via int32: 2x faster)
        s *= f32(1 / _TABLE_STEP)               # s, the nearest table point
        np.subtract(t, s, out=e)                # e = t - s, exactly
        lam = np.take(_TABLE_LAM, row, mode="clip", out=work)
        d = np.subtract(lam, s, out=s)          # lam - s
        d *= lam
        d *= e
        d *= f32(0.5)
        d += lam
        d *= e                                  # d = e (lam + lam (lam - s) e / 2)
        shrink = _horner(_EXP_TAYLOR, d, out=work)          # 2^-64 exp(-d)
        tail = np.take(_TABLE_TAIL, row, mode="clip", out=d)  # 2^64 Phi(-s)
        tail *= t
        tail *= shrink                          # t Phi(-t)
        np.multiply(z, z >= 0, out=out)         # z H(z): z, or 0 z = -0 (nan for -inf, as in -inf * Phi(-inf))
        out -= tail                             # z H(z) - t Phi(-t)
    return out


def _horner(coefs: np.ndarray, x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """coefs[0] + coefs[1] x + ... + coefs[n] x^n by Horner's rule, into out."""
    np.multiply(x, coefs[-1], out=out)
    for c in coefs[-2:0:-1]:
        out += c
        out *= x
    out += coefs[0]
    return out
