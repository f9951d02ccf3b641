"""A labelled bank of answers to every exercise of lessons 01-09, and the share of named mistakes that are right.

Each wrong answer carries the mistake it makes: words that the check's "Likely mistake: ..." (or "Possibly:
...") line must contain, or None when it makes none of the mistakes the check knows (two slips at once, a
partial answer, a slip with no stored mistake): then the check must name nothing. The answers come in several
styles: classic slips, transposes, near-misses at a boundary, inputs changed in place, float32, wrong types,
off-by-one, tables of numbers, partly right answers and two mistakes combined. Right answers, in several
styles, must pass.

    .venv/bin/python tests/bank_named.py        prints, lesson by lesson, the wrong answers rejected and the
                                                 named mistakes that are the right one, and every misnamed answer

tests/test_bank_named.py keeps both shares at 100 % (README's "How the checks work" quotes them).
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from scipy import special

from helpers import checks
from helpers import kv_memory as kv
from helpers.block import layer_norm
from helpers.ffn import ffn, relu, silu, softmax


@dataclass
class Answer:
    exercise: str
    fn: Callable
    label: str | None       # the mistake's words, None for "none of the named ones"; ignored for right answers
    style: str              # what kind of answer it is (a classic slip, a transpose, ...)
    right: bool = False
    graded: bool = False    # judged as make grade judges it, hidden cases included (FFN_GRADING=1)


BANK: list[Answer] = []


def wrong(exercise: str, label: str | None, style: str, graded: bool = False):
    def add(fn):
        BANK.append(Answer(exercise, fn, label, style, graded=graded))
        return fn
    return add


def right(exercise: str, style: str):
    def add(fn):
        BANK.append(Answer(exercise, fn, None, style, right=True))
        return fn
    return add


def _a(v):
    return np.asarray(v, dtype=float)


# ==========================================================================================================
# 01 hand_trace: z = [4, -1], h = [4, 0], y = [5, -1]
# ==========================================================================================================
for values, style in [(([4, -1], [4, 0], [5, -1]), "lists"), ((np.array([4.0, -1]), (4, 0), [5.0, -1.0]), "mixed")]:
    right("hand_trace", style)(lambda values=values: values)
for values, label, style in [
    (([5, -1], [5, 0], [6, -1]), "b1 left out", "classic slip"),
    (([4, -1], [4, -1], [5, -2]), "ReLU not applied", "classic slip"),
    (([4, -1], [4, 0], [5, 0]), "ReLU applied after W2", "classic slip"),
    (([4, -1], [4, 0], [4, 0]), "b2 left out", "classic slip"),
    (([5, -1], [4, 0], [4, -1]), "another order", "(y, h, z): parts swapped"),
    (([0, 2], [0, 2], [0, 2]), "section 2's numbers copied", "table of another case"),
    (([4, -1], [4, 0], [5, -1.000001]), "a typo or a tiny offset", "near-miss"),
    (([3, 7], [1, 2], [5, 5]), None, "three slips of their own"),
    (([5, -1], [5, 0], [4, 0]), None, "two mistakes combined (b1 left out, then b1 for b2)"),
]:
    wrong("hand_trace", label, style)(lambda values=values: values)


# ==========================================================================================================
# 01 firing_units
# ==========================================================================================================
@right("firing_units", "NumPy")
def firing_numpy(x, W1, b1):
    z = np.asarray(x, dtype=float) @ np.asarray(W1, dtype=float) + np.asarray(b1, dtype=float)
    return [k for k in range(len(z)) if z[k] > 0]


@right("firing_units", "loops over lists")
def firing_loops(x, W1, b1):
    return [k for k in range(len(b1)) if sum(float(x[i]) * float(W1[i][k]) for i in range(len(x))) + b1[k] > 0]


@right("firing_units", "np.flatnonzero")
def firing_flat(x, W1, b1):
    return [int(k) for k in np.flatnonzero(_a(x) @ _a(W1) + _a(b1) > 0)]


wrong("firing_units", "exactly 0 as firing", "near-miss at the boundary")(
    lambda x, W1, b1: [k for k, v in enumerate(_a(x) @ _a(W1) + _a(b1)) if v >= 0])
wrong("firing_units", "counting units from 1", "off by one")(
    lambda x, W1, b1: [k + 1 for k, v in enumerate(_a(x) @ _a(W1) + _a(b1)) if v > 0])
wrong("firing_units", "b1 left out", "classic slip")(
    lambda x, W1, b1: [k for k, v in enumerate(_a(x) @ _a(W1)) if v > 0])
wrong("firing_units", "silent units listed", "classic slip")(
    lambda x, W1, b1: [k for k, v in enumerate(_a(x) @ _a(W1) + _a(b1)) if v <= 0])
wrong("firing_units", "W1 read by rows", "transpose")(
    lambda x, W1, b1: [k for k, v in enumerate(_a(W1) @ _a(x) + _a(b1)) if v > 0])
wrong("firing_units", "threshold above 0", "near-miss: a tolerance")(
    lambda x, W1, b1: [k for k, v in enumerate(_a(x) @ _a(W1) + _a(b1)) if v > 1e-6])
wrong("firing_units", "float32", "float32")(
    lambda x, W1, b1: [k for k, v in enumerate(np.asarray(x, np.float32) @ np.asarray(W1, np.float32)
                                               + np.asarray(b1, np.float32)) if v > 0])
wrong("firing_units", None, "returns [] (a stub's table)")(lambda x, W1, b1: [])
wrong("firing_units", None, "two mistakes combined (from 1, and >= 0)")(
    lambda x, W1, b1: [k + 1 for k, v in enumerate(_a(x) @ _a(W1) + _a(b1)) if v >= 0])


# ==========================================================================================================
# 01 detector
# ==========================================================================================================
right("detector", "floats")(lambda: ([1.0, -1.0], -1.0))
right("detector", "a positive multiple")(lambda: ([2, -2], -2))
for value, label, style in [
    (([1, -1], 0), "the bias left out", "classic slip"),
    (([1, -1], 1), "the bias with the wrong sign", "sign slip"),
    (([-1, 1], 1), "the signs of w and b all flipped", "sign slip"),
    (([1, -1.0000000001], -1), "w's two weights of different sizes", "near-miss in w"),
    (([1, -1], -1.0000001), "the bias off by a hair", "near-miss at the boundary"),
    (([1, 1], -1), "w's two weights with the same sign", "classic slip"),
    (([2, -2], -1), "w and b not scaled together", "scaled half-way"),
    (([1, 0], -1), "w ignores x2", "partial answer"),
    (([1, -1], -2), "the bias sets the wrong threshold", "wrong threshold"),
]:
    wrong("detector", label, style)(lambda value=value: value)


# ==========================================================================================================
# 02 matvec (flat row-major M, len(v) columns)
# ==========================================================================================================
@right("matvec", "loops")
def matvec_loops(M, v):
    n = len(v)
    return [sum(M[i * n + j] * v[j] for j in range(n)) for i in range(len(M) // n)]


@right("matvec", "slices")
def matvec_slices(M, v):
    n = len(v)
    return [sum(a * b for a, b in zip(M[i:i + n], v)) for i in range(0, len(M), n)]


def _matvec_with(row_stride=None, skip_last=False, reset=True, first_rows=None):
    def fn(M, v):
        n = len(v)
        rows = len(M) // n
        out, total = [], 0.0
        for i in range(rows - (1 if skip_last else 0) if first_rows is None else min(rows, first_rows)):
            total = 0.0 if reset else total
            for j in range(n):
                total += M[i * (row_stride(M, v) if row_stride else n) + j] * v[j]
            out.append(total)
        return out
    return fn


wrong("matvec", "number of rows used as the stride", "transpose of the stride")(
    _matvec_with(row_stride=lambda M, v: len(M) // len(v)))
wrong("matvec", "not reset", "classic slip")(_matvec_with(reset=False))
wrong("matvec", None, "off by one: the last row dropped")(_matvec_with(skip_last=True))
wrong("matvec", None, "the first 3 rows only (fits every public case; graded)", graded=True)(_matvec_with(first_rows=3))
wrong("matvec", "column by column", "transpose")(
    lambda M, v: [sum(M[j * (len(M) // len(v)) + i] * v[j] for j in range(len(v))) for i in range(len(M) // len(v))])
wrong("matvec", "row offset", "classic slip")(
    lambda M, v: [sum(M[j] * v[j] for j in range(len(v))) for i in range(len(M) // len(v))])
wrong("matvec", "rounded", "rounding")(lambda M, v: [round(t, 2) for t in matvec_loops(M, v)])


@wrong("matvec", "the number of rows taken as len(v)", "n_rows = len(v), as if M were square (a trial learner's)")
def matvec_rows_from_v(M, v):
    n_rows = len(v)
    n_cols = len(v)
    out = []
    for i in range(n_rows):
        total = 0.0
        for j in range(n_cols):
            total += M[i * n_cols + j] * v[j]
        out.append(total)
    return out
wrong("matvec", None, "a string")(lambda M, v: str(matvec_loops(M, v)))


# ==========================================================================================================
# 02 ffn_forward (W1 H x D and W2 D x H, flat row-major)
# ==========================================================================================================
def _forward(x, W1, b1, W2, b2, s1=None, s2=None, act_after=False, no_act=False, no_b1=False, no_b2=False,
             b1_after=False, residual=False):
    D, H = len(x), len(b1)
    s1, s2 = s1 or D, s2 or H
    h = []
    for i in range(H):
        z = 0.0 if no_b1 or b1_after else b1[i]
        z += sum(W1[i * s1 + j] * x[j] for j in range(D))
        z = z if no_act else max(0.0, z)
        h.append(z + (b1[i] if b1_after else 0.0))
    y = []
    for k in range(D):
        t = (0.0 if no_b2 else b2[k]) + sum(W2[k * s2 + i] * h[i] for i in range(H))
        y.append((max(0.0, t) if act_after else t) + (x[k] if residual else 0.0))
    return y


right("ffn_forward", "loops")(lambda x, W1, b1, W2, b2: _forward(x, W1, b1, W2, b2))


@right("ffn_forward", "comprehensions")
def forward_comprehensions(x, W1, b1, W2, b2):
    D, H = len(x), len(b1)
    h = [max(0.0, b1[i] + sum(W1[i * D + j] * x[j] for j in range(D))) for i in range(H)]
    return [b2[k] + sum(W2[k * H + i] * h[i] for i in range(H)) for k in range(D)]


wrong("ffn_forward", "one stride, D, used for both", "classic slip")(
    lambda x, W1, b1, W2, b2: _forward(x, W1, b1, W2, b2, s2=len(x)))
wrong("ffn_forward", "an activation after W2", "classic slip")(
    lambda x, W1, b1, W2, b2: _forward(x, W1, b1, W2, b2, act_after=True))
wrong("ffn_forward", "b1 missing", "classic slip")(lambda x, W1, b1, W2, b2: _forward(x, W1, b1, W2, b2, no_b1=True))
wrong("ffn_forward", "b2 missing", "classic slip")(lambda x, W1, b1, W2, b2: _forward(x, W1, b1, W2, b2, no_b2=True))
wrong("ffn_forward", "the activation missing", "classic slip")(
    lambda x, W1, b1, W2, b2: _forward(x, W1, b1, W2, b2, no_act=True))
wrong("ffn_forward", "b1 added after the activation", "classic slip")(
    lambda x, W1, b1, W2, b2: _forward(x, W1, b1, W2, b2, b1_after=True))
wrong("ffn_forward", "x added to the output", "the residual inside")(
    lambda x, W1, b1, W2, b2: _forward(x, W1, b1, W2, b2, residual=True))
wrong("ffn_forward", None, "two mistakes combined (b1 and b2 both missing)")(
    lambda x, W1, b1, W2, b2: _forward(x, W1, b1, W2, b2, no_b1=True, no_b2=True, act_after=True))


# ==========================================================================================================
# 02 transpose (flat row-major n_rows x n_cols -> n_cols x n_rows)
# ==========================================================================================================
right("transpose", "loops")(lambda M, r, c: [M[i * c + j] for j in range(c) for i in range(r)])
right("transpose", "slices")(lambda M, r, c: [v for j in range(c) for v in M[j::c]])
wrong("transpose", "M returned in its original order", "no-op")(lambda M, r, c: list(M))


@wrong("transpose", "M returned in its original order", "loops swapped: i outside, j inside (a trial learner's)")
def transpose_loops_swapped(M, n_rows, n_cols):
    out = []
    for i in range(n_rows):
        for j in range(n_cols):
            out.append(M[i * n_cols + j])
    return out


wrong("transpose", "n_rows and n_cols swapped", "swapped sizes")(
    lambda M, r, c: [M[i * r + j] for j in range(r) for i in range(c)])
wrong("transpose", None, "in place and None")(lambda M, r, c: M.reverse())
wrong("transpose", "ints", "wrong type")(lambda M, r, c: [int(M[i * c + j]) for j in range(c) for i in range(r)])
wrong("transpose", None, "the last element dropped")(
    lambda M, r, c: [M[i * c + j] for j in range(c) for i in range(r)][:-1])


# ==========================================================================================================
# 03 ffn_batched
# ==========================================================================================================
right("ffn_batched", "three lines")(lambda x, W1, b1, W2, b2: relu(x @ W1 + b1) @ W2 + b2)
right("ffn_batched", "einsum")(lambda x, W1, b1, W2, b2: np.einsum(
    "tf,fd->td", np.maximum(np.einsum("td,df->tf", x, W1) + b1, 0), W2) + b2)
wrong("ffn_batched", "ReLU applied after W2 as well", "classic slip")(
    lambda x, W1, b1, W2, b2: relu(relu(x @ W1 + b1) @ W2 + b2))
wrong("ffn_batched", "b1 left out", "classic slip")(lambda x, W1, b1, W2, b2: relu(x @ W1) @ W2 + b2)
wrong("ffn_batched", "b2 left out", "classic slip")(lambda x, W1, b1, W2, b2: relu(x @ W1 + b1) @ W2)
wrong("ffn_batched", "no activation", "classic slip")(lambda x, W1, b1, W2, b2: (x @ W1 + b1) @ W2 + b2)
wrong("ffn_batched", "transposed", "transpose")(lambda x, W1, b1, W2, b2: relu(x @ W1.T + b1) @ W2.T + b2)
wrong("ffn_batched", "x added to the output", "the residual inside")(
    lambda x, W1, b1, W2, b2: x + relu(x @ W1 + b1) @ W2 + b2)
wrong("ffn_batched", None, "float32 inside")(
    lambda x, W1, b1, W2, b2: (relu(x.astype(np.float32) @ W1.astype(np.float32) + b1) @ W2 + b2).astype(x.dtype))


@wrong("ffn_batched", None, "x changed in place, right numbers")
def batched_in_place(x, W1, b1, W2, b2):
    h = relu(x @ W1 + b1)
    x += 0.5
    return h @ W2 + b2


wrong("ffn_batched", None, "two mistakes combined (no b1, ReLU after W2)")(
    lambda x, W1, b1, W2, b2: relu(relu(x @ W1) @ W2 + b2))


# ==========================================================================================================
# 03 count_ffn_params
# ==========================================================================================================
right("count_ffn_params", "sum of sizes")(lambda d, d_ff, bias=True: 2 * d * d_ff + ((d + d_ff) if bias else 0))
right("count_ffn_params", "shapes")(
    lambda d, d_ff, bias=True: sum(math.prod(s) for s in [(d, d_ff), (d_ff, d)] + ([(d_ff,), (d,)] if bias else [])))
wrong("count_ffn_params", "the biases forgotten", "classic slip")(lambda d, d_ff, bias=True: 2 * d * d_ff)
wrong("count_ffn_params", "biases counted even when bias=False", "flag ignored")(
    lambda d, d_ff, bias=True: 2 * d * d_ff + d + d_ff)
wrong("count_ffn_params", "only one weight matrix counted", "classic slip")(
    lambda d, d_ff, bias=True: d * d_ff + ((d + d_ff) if bias else 0))
wrong("count_ffn_params", "d_ff assumed to be 4 * d", "a default the text mentions")(
    lambda d, d_ff, bias=True: 8 * d * d + (5 * d if bias else 0))
wrong("count_ffn_params", "d_ff assumed to be 4 * d", "the argument overwritten by the rule of thumb")(
    lambda d, d_ff, bias=True: (lambda d_ff: 2 * d * d_ff + ((d + d_ff) if bias else 0))(4 * d))
wrong("count_ffn_params", "bias=True and bias=False swapped", "swapped branch")(
    lambda d, d_ff, bias=True: 2 * d * d_ff + (0 if bias else d + d_ff))
wrong("count_ffn_params", "both biases given the hidden width", "classic slip")(
    lambda d, d_ff, bias=True: 2 * d * d_ff + (2 * d_ff if bias else 0))
wrong("count_ffn_params", None, "one too many")(
    lambda d, d_ff, bias=True: 2 * d * d_ff + ((d + d_ff) if bias else 0) + 1)
wrong("count_ffn_params", None, "two mistakes combined (4d, no biases)")(lambda d, d_ff, bias=True: 8 * d * d)
wrong("count_ffn_params", "float32", "float32")(
    lambda d, d_ff, bias=True: int(np.float32(2 * d * d_ff) + np.float32((d + d_ff) if bias else 0)))


# ==========================================================================================================
# 03 ffn_chunked
# ==========================================================================================================
@right("ffn_chunked", "np.empty and slices")
def chunked_empty(x, W1, b1, W2, b2, chunk):
    y = np.empty((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for s in range(0, len(x), chunk):
        y[s:s + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2)
    return y


right("ffn_chunked", "concatenate")(lambda x, W1, b1, W2, b2, chunk: np.concatenate(
    [ffn(x[s:s + chunk], W1, b1, W2, b2) for s in range(0, len(x), chunk)]))


@wrong("ffn_chunked", "the last, shorter chunk never computed", "off by one: the last chunk dropped (zeros)")
def chunked_drop_last(x, W1, b1, W2, b2, chunk):
    y = np.zeros((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for s in range(0, len(x) - chunk + 1, chunk):
        y[s:s + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2)
    return y


@wrong("ffn_chunked", None, "the last chunk dropped, np.empty (leftovers)")
def chunked_drop_last_empty(x, W1, b1, W2, b2, chunk):
    y = np.empty((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for s in range(0, len(x) - chunk + 1, chunk):
        y[s:s + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2)
    return y


@wrong("ffn_chunked", "slices of x started at the chunk number", "wrong index variable")
def chunked_x_from_i(x, W1, b1, W2, b2, chunk):
    y = np.zeros((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for i, s in enumerate(range(0, len(x), chunk)):
        y[s:s + chunk] = ffn(x[i:i + chunk], W1, b1, W2, b2)
    return y


wrong("ffn_chunked", "np.stack", "wrong join")(lambda x, W1, b1, W2, b2, chunk: np.stack(
    [ffn(x[s:s + chunk], W1, b1, W2, b2) for s in range(0, len(x), chunk)]))
wrong("ffn_chunked", None, "whole sequence at once (ignores chunk)")(
    lambda x, W1, b1, W2, b2, chunk: ffn(x, W1, b1, W2, b2))


# ==========================================================================================================
# 04 gelu and silu
# ==========================================================================================================
right("gelu", "erf")(lambda z: 0.5 * z * (1 + special.erf(z / math.sqrt(2))))
right("gelu", "ndtr")(lambda z: z * special.ndtr(z))
wrong("gelu", "tanh approximation", "an approximation the text mentions")(
    lambda z: 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3))))
wrong("gelu", "tanh approximation", "the approximation with NumPy's float64 constant (float32 rounds inside)")(
    lambda z: 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z ** 3))))
wrong("gelu", "the factor 1/2 is missing", "classic slip")(lambda z: z * (1 + special.erf(z / math.sqrt(2))))
wrong("gelu", "erf(z) where erf(z / sqrt(2))", "classic slip")(lambda z: 0.5 * z * (1 + special.erf(z)))
wrong("gelu", "the factor z is missing", "classic slip")(lambda z: special.ndtr(z))
wrong("gelu", "SiLU", "another activation")(lambda z: z * special.expit(z))
wrong("gelu", "math.erf", "wrong type: a scalar function")(lambda z: 0.5 * z * (1 + math.erf(z / math.sqrt(2))))


@wrong("gelu", "math.erf (a function of one number) applied to a whole array",
       "math.erf on an array, in the solution's two lines (a trial learner's)")
def gelu_math_erf(z):
    Phi = 0.5 * (1 + math.erf(z / math.sqrt(2)))
    return z * Phi


wrong("gelu", None, "negatives clamped to 0")(lambda z: np.maximum(z, 0) * special.ndtr(np.maximum(z, 0)))
wrong("gelu", "rounded", "rounding")(lambda z: np.round(z * special.ndtr(z), 4))
wrong("gelu", "float16", "float16 inside")(
    lambda z: (z.astype(np.float16) * special.ndtr(z.astype(np.float16))).astype(z.dtype))

right("silu", "expit")(lambda z: z * special.expit(z))
right("silu", "division")(lambda z: z / (1 + np.exp(-np.clip(z, -700, 700))))
wrong("silu", "sigmoid alone", "classic slip")(lambda z: special.expit(z))
wrong("silu", "e^z where e^-z", "sign slip")(lambda z: z * special.expit(-z))
wrong("silu", "tanh where the sigmoid", "another function")(lambda z: z * np.tanh(z))
wrong("silu", "softplus", "another function")(lambda z: np.logaddexp(0, z))
wrong("silu", "GELU instead of SiLU", "another activation")(lambda z: z * special.ndtr(z))
wrong("silu", "float32", "float32 inside")(
    lambda z: (z.astype(np.float32) * special.expit(z.astype(np.float32))).astype(z.dtype))
wrong("silu", None, "negatives clamped to 0")(lambda z: np.maximum(z, 0) * special.expit(np.maximum(z, 0)))


# ==========================================================================================================
# 04 swiglu_ffn and swiglu_hidden
# ==========================================================================================================
right("swiglu_ffn", "three lines")(lambda x, Wg, Wu, Wd: (silu(x @ Wg) * (x @ Wu)) @ Wd)
right("swiglu_ffn", "einsum")(lambda x, Wg, Wu, Wd: np.einsum(
    "...f,fd->...d", silu(np.einsum("...d,df->...f", x, Wg)) * np.einsum("...d,df->...f", x, Wu), Wd))
wrong("swiglu_ffn", "gate and value swapped", "swap")(lambda x, Wg, Wu, Wd: ((x @ Wg) * silu(x @ Wu)) @ Wd)
wrong("swiglu_ffn", "SiLU applied to both paths", "classic slip")(
    lambda x, Wg, Wu, Wd: (silu(x @ Wg) * silu(x @ Wu)) @ Wd)
wrong("swiglu_ffn", "added instead of multiplied", "classic slip")(lambda x, Wg, Wu, Wd: (silu(x @ Wg) + x @ Wu) @ Wd)
wrong("swiglu_ffn", "no SiLU at all", "classic slip")(lambda x, Wg, Wu, Wd: ((x @ Wg) * (x @ Wu)) @ Wd)
wrong("swiglu_ffn", "W_down transposed", "transpose")(lambda x, Wg, Wu, Wd: (silu(x @ Wg) * (x @ Wu)) @ Wd.T)
wrong("swiglu_ffn", None, "W_gate and W_up transposed")(lambda x, Wg, Wu, Wd: (silu(x @ Wg.T) * (x @ Wu.T)) @ Wd)
wrong("swiglu_ffn", "ReLU instead of SiLU on the gate", "another activation")(
    lambda x, Wg, Wu, Wd: (relu(x @ Wg) * (x @ Wu)) @ Wd)

right("swiglu_hidden", "ceil")(lambda d, multiple_of=256: multiple_of * math.ceil(int(8 * d / 3) / multiple_of))
right("swiglu_hidden", "integer division")(
    lambda d, multiple_of=256: -(-int(2 * 4 * d / 3) // multiple_of) * multiple_of)
wrong("swiglu_hidden", "rounded down instead of up", "classic slip")(
    lambda d, multiple_of=256: multiple_of * (int(8 * d / 3) // multiple_of))
wrong("swiglu_hidden", "not rounded to a multiple at all", "classic slip")(lambda d, multiple_of=256: int(8 * d / 3))
wrong("swiglu_hidden", "multiple_of ignored", "a constant the text mentions")(
    lambda d, multiple_of=256: 256 * math.ceil(int(8 * d / 3) / 256))
wrong("swiglu_hidden", "4d, the classic width", "a default the text mentions")(lambda d, multiple_of=256: 4 * d)
wrong("swiglu_hidden", "11,008", "a table of one case")(lambda d, multiple_of=256: 11008)
wrong("swiglu_hidden", "nearest multiple", "near-miss")(
    lambda d, multiple_of=256: multiple_of * round(int(8 * d / 3) / multiple_of))


# ==========================================================================================================
# 05 collapse, residual_collapse, detector_weights
# ==========================================================================================================
right("collapse", "matmul")(lambda W1, b1, W2, b2: (W1 @ W2, b1 @ W2 + b2))
right("collapse", "np.dot")(lambda W1, b1, W2, b2: (np.dot(W1, W2), np.dot(b1, W2) + b2))
wrong("collapse", "the product in the wrong order, W2 W1", "order of the product")(
    lambda W1, b1, W2, b2: (W2 @ W1, b1 @ W2 + b2))
wrong("collapse", "W transposed", "transpose")(lambda W1, b1, W2, b2: ((W1 @ W2).T, b1 @ W2 + b2))
wrong("collapse", "b1 forgotten in the combined bias", "classic slip")(lambda W1, b1, W2, b2: (W1 @ W2, b2))
wrong("collapse", "b1 not multiplied by W2", "classic slip")(lambda W1, b1, W2, b2: (W1 @ W2, b1.sum() + b2))
wrong("collapse", "b2 forgotten", "classic slip")(lambda W1, b1, W2, b2: (W1 @ W2, b1 @ W2))
wrong("collapse", "element by element", "wrong product")(
    lambda W1, b1, W2, b2: (W1 * W2.T if W1.shape == W2.T.shape else W1 @ W2 * 2, b1 @ W2 + b2))
wrong("collapse", "rounded", "rounding")(lambda W1, b1, W2, b2: (np.round(W1 @ W2, 3), np.round(b1 @ W2 + b2, 3)))


@wrong("collapse", None, "b2 changed in place, right numbers")
def collapse_in_place(W1, b1, W2, b2):
    b2 += b1 @ W2
    return W1 @ W2, b2


wrong("collapse", None, "float32")(
    lambda W1, b1, W2, b2: ((W1 @ W2).astype(np.float32), (b1 @ W2 + b2).astype(np.float32)))

right("residual_collapse", "eye")(lambda W1, W2: np.eye(W1.shape[0]) + W1 @ W2)
right("residual_collapse", "identity")(lambda W1, W2: np.identity(len(W1)) + np.dot(W1, W2))
wrong("residual_collapse", "the identity forgotten", "classic slip")(lambda W1, W2: W1 @ W2)
wrong("residual_collapse", "1 added to every entry", "classic slip")(lambda W1, W2: 1 + W1 @ W2)
wrong("residual_collapse", "the skip path subtracted", "sign slip")(lambda W1, W2: np.eye(len(W1)) - W1 @ W2)
wrong("residual_collapse", "identity counted twice", "classic slip")(lambda W1, W2: 2 * np.eye(len(W1)) + W1 @ W2)
wrong("residual_collapse", "transposed", "transpose")(lambda W1, W2: (np.eye(len(W1)) + W1 @ W2).T)
wrong("residual_collapse", None, "float32")(lambda W1, W2: (np.eye(len(W1)) + W1 @ W2).astype(np.float32))

right("detector_weights", "one unit")(lambda: (np.array([[1.0], [1.0], [-1.0]]), np.array([-1.0]), np.array([[1.0]]),
                                              np.array([0.0])))
wrong("detector_weights", "fires for A alone and for B alone", "no threshold")(
    lambda: (np.array([[1.0], [1.0], [-1.0]]), np.array([0.0]),
                                                         np.array([[1.0]]), np.array([0.0])))
wrong("detector_weights", "C raises the output", "C added instead of subtracted")(
    lambda: (np.array([[1.0], [1.0], [1.0]]),
                                                                          np.array([-1.0]), np.array([[1.0]]),
                                                                          np.array([0.0])))


# ==========================================================================================================
# 06 ffn_as_sum, top_units, store_fact
# ==========================================================================================================
@right("ffn_as_sum", "loop over units")
def sum_loop(x, W1, b1, W2, b2):
    y = b2.copy()
    for k in range(W1.shape[1]):
        y = y + max(0.0, x @ W1[:, k] + b1[k]) * W2[k]
    return y


@right("ffn_as_sum", "sum of a generator")
def sum_generator(x, W1, b1, W2, b2):
    return b2 + sum(max(0.0, float(x @ W1[:, k] + b1[k])) * W2[k] for k in range(W1.shape[1]))


def _sum_with(act=lambda z: max(0.0, z), start=0, stop=0, no_b2=False, b1_sign=1.0):
    def fn(x, W1, b1, W2, b2):
        y = np.zeros_like(b2) if no_b2 else b2.copy()
        for k in range(start, W1.shape[1] - stop):
            y = y + act(x @ W1[:, k] + b1_sign * b1[k]) * W2[k]
        return y
    return fn


wrong("ffn_as_sum", "ReLU not applied", "classic slip")(_sum_with(act=lambda z: z))
wrong("ffn_as_sum", "b2 left out", "classic slip")(_sum_with(no_b2=True))
wrong("ffn_as_sum", "the loop starts at 1", "off by one")(_sum_with(start=1))
wrong("ffn_as_sum", "the loop stops one early", "off by one")(_sum_with(stop=1))
wrong("ffn_as_sum", "b1 subtracted", "sign slip")(_sum_with(b1_sign=-1.0))
wrong("ffn_as_sum", "absolute value", "another activation")(_sum_with(act=abs))
wrong("ffn_as_sum", "W2 multiplied as a whole", "the rule broken: a copy of W2")(
    lambda x, W1, b1, W2, b2: np.maximum(x @ W1 + b1, 0) @ np.copy(W2) + b2)


@wrong("ffn_as_sum", "b2 changed in place", "b2 aliased, right numbers")
def sum_aliased(x, W1, b1, W2, b2):
    y = b2
    for k in range(W1.shape[1]):
        y += max(0.0, x @ W1[:, k] + b1[k]) * W2[k]
    return y


wrong("ffn_as_sum", None, "two mistakes combined (from 1, no b2)")(_sum_with(start=1, no_b2=True))


def _top(score):
    def fn(x, W1, b1, W2, k):
        a = np.maximum(x @ W1 + b1, 0)
        return [int(j) for j in np.argsort(-score(a, W2), kind="stable")[:k]]
    return fn


right("top_units", "norm")(_top(lambda a, W2: np.linalg.norm(a[:, None] * W2, axis=1)))
right("top_units", "a times ||u||")(_top(lambda a, W2: a * np.sqrt((W2 ** 2).sum(axis=1))))
wrong("top_units", "ranked by the activation h_j alone", "partial answer")(_top(lambda a, W2: a))


@wrong("top_units", "ranked by the activation h_j alone", "argsort reversed with [::-1] (ties broken the other way)")
def _top_by_activation_reversed(x, W1, b1, W2, k):
    a = np.maximum(x @ W1 + b1, 0)
    return list(np.argsort(a)[::-1][:k])


@right("top_units", "argsort reversed with [::-1]")
def _top_reversed(x, W1, b1, W2, k):
    sizes = np.linalg.norm(np.maximum(x @ W1 + b1, 0)[:, None] * W2, axis=1)
    return [int(j) for j in np.argsort(sizes)[::-1][:k]]

wrong("top_units", "ranked by the length of the value", "partial answer")(
    _top(lambda a, W2: np.linalg.norm(W2, axis=1)))
wrong("top_units", "(L1)", "another norm")(_top(lambda a, W2: np.abs(a[:, None] * W2).sum(axis=1)))
wrong("top_units", "max norm", "another norm")(_top(lambda a, W2: np.abs(a[:, None] * W2).max(axis=1)))
wrong("top_units", "sum of h_j u_j's coordinates", "classic slip")(_top(lambda a, W2: (a[:, None] * W2).sum(axis=1)))
wrong("top_units", "smallest first", "sort order")(
    lambda x, W1, b1, W2, k: _top(lambda a, W2: np.linalg.norm(a[:, None] * W2, axis=1))(x, W1, b1, W2, k)[::-1])
wrong("top_units", "counting units from 1", "off by one")(
    lambda x, W1, b1, W2, k: [j + 1 for j in _top(lambda a, W2: np.linalg.norm(a[:, None] * W2, axis=1))(
        x, W1, b1, W2, k)])


def _store(scale=True, threshold=True, swap=False):
    def fn(W1, b1, W2, key, value):
        theta = kv.THETA
        column = key / (1 - theta) if scale else key
        bias = (-theta / (1 - theta) if scale else -theta) if threshold else 0.0
        k, v = (value, key) if swap else (key, value)
        column = k / (1 - theta) if scale else k
        return np.column_stack([W1, column]), np.append(b1, bias), np.vstack([W2, v])
    return fn


right("store_fact", "column_stack")(_store())
right("store_fact", "concatenate")(lambda W1, b1, W2, key, value: (
    np.concatenate([W1, (key / (1 - kv.THETA))[:, None]], axis=1), np.concatenate([b1, [-kv.THETA / (1 - kv.THETA)]]),
    np.concatenate([W2, value[None, :]], axis=0)))
wrong("store_fact", "no threshold", "classic slip")(_store(threshold=False))
wrong("store_fact", "the unit not rescaled", "classic slip")(_store(scale=False))
wrong("store_fact", "key and value swapped", "swap")(_store(swap=True))
wrong("store_fact", "0.5", "a constant the text mentions")(lambda W1, b1, W2, key, value: (
    np.column_stack([W1, key / 0.5]), np.append(b1, -1.0), np.vstack([W2, value])))


# ==========================================================================================================
# 07 route, moe_forward, residual_block
# ==========================================================================================================
@right("route", "argsort and take_along_axis")
def route_right(logits, k):
    experts = np.argsort(-logits, axis=-1, kind="stable")[:, :k]
    chosen = np.take_along_axis(logits, experts, axis=-1)
    e = np.exp(chosen - chosen.max(axis=-1, keepdims=True))
    return experts, e / e.sum(axis=-1, keepdims=True)


def _route_with(weights):
    def fn(logits, k):
        experts = np.argsort(-logits, axis=-1, kind="stable")[:, :k]
        chosen = np.take_along_axis(logits, experts, axis=-1)
        return experts, weights(logits, chosen, experts)
    return fn


wrong("route", "not renormalised over the chosen k", "classic slip")(
    _route_with(lambda l, c, e: np.take_along_axis(softmax(l), e, axis=-1)))
wrong("route", "the raw logits returned as weights", "classic slip")(_route_with(lambda l, c, e: c))
wrong("route", "never divided by their sum", "classic slip")(_route_with(lambda l, c, e: np.exp(c)))
wrong("route", "first k columns", "wrong columns")(
    _route_with(lambda l, c, e: softmax(l)[:, :e.shape[1]] / softmax(l)[:, :e.shape[1]].sum(axis=-1, keepdims=True)))
wrong("route", "sigmoid gate", "another function")(_route_with(lambda l, c, e: special.expit(c)))
wrong("route", "smallest logits", "sort order")(
    lambda logits, k: route_right(-logits, k)[0:1]
    + (softmax(np.take_along_axis(logits, route_right(-logits, k)[0], -1)),))
wrong("route", None, "float32 weights")(
    lambda logits, k: (route_right(logits, k)[0], route_right(logits, k)[1].astype(np.float32)))


def _moe(combine):
    def fn(x, W_router, experts, k):
        chosen, weights = route_right(x @ W_router, k)
        y = np.zeros_like(x)
        for t in range(len(x)):
            for j in range(k):
                y[t] += combine(weights[t, j], k) * experts[chosen[t, j]](x[t:t + 1])[0]
        return y
    return fn


right("moe_forward", "loop over tokens")(_moe(lambda w, k: w))


@right("moe_forward", "loop over experts")
def moe_by_expert(x, W_router, experts, k):
    chosen, weights = route_right(x @ W_router, k)
    y = np.zeros_like(x)
    for e, expert in enumerate(experts):
        rows, slot = np.nonzero(chosen == e)
        if rows.size:
            y[rows] += weights[rows, slot, None] * expert(x[rows])
    return y


wrong("moe_forward", "added without their weights", "classic slip")(_moe(lambda w, k: 1.0))
wrong("moe_forward", "averaged with equal weights", "classic slip")(_moe(lambda w, k: 1.0 / k))
wrong("moe_forward", "divided by k", "classic slip")(_moe(lambda w, k: w / k))
wrong("moe_forward", "x added to the output", "the residual inside")(
    lambda x, W_router, experts, k: x + moe_by_expert(x, W_router, experts, k))
@wrong("moe_forward", "router read transposed", "transpose")
def moe_router_transposed(x, W_router, experts, k):
    return moe_by_expert(x, W_router.T, experts, k) if W_router.shape[0] == W_router.shape[1] else \
        moe_by_expert(x @ W_router.T @ W_router.T, W_router, experts, k)

right("residual_block", "two lines")(lambda x, f: x + f(layer_norm(x)))
right("residual_block", "by hand")(lambda x, f: x + f((x - x.mean(-1, keepdims=True))
                                                     / np.sqrt(x.var(-1, keepdims=True) + 1e-5)))
wrong("residual_block", "the residual is missing", "classic slip")(lambda x, f: f(layer_norm(x)))
wrong("residual_block", "the FFN applied to x, not to LN(x)", "classic slip")(lambda x, f: x + f(x))
wrong("residual_block", "post-LN", "the other order")(lambda x, f: layer_norm(x + f(x)))
wrong("residual_block", "adds LN(x) instead of x", "classic slip")(lambda x, f: layer_norm(x) + f(layer_norm(x)))
wrong("residual_block", "RMSNorm", "another norm")(
    lambda x, f: x + f(x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-5)))
wrong("residual_block", "ddof=1", "near-miss")(lambda x, f: x + f((x - x.mean(-1, keepdims=True))
                                                                / np.sqrt(x.var(-1, ddof=1, keepdims=True) + 1e-5)))
wrong("residual_block", "subtracted", "sign slip")(lambda x, f: x - f(layer_norm(x)))


# ==========================================================================================================
# 08 relu_backward, ffn_backward, numerical_gradient, gelu_backward
# ==========================================================================================================
right("relu_backward", "mask")(lambda z, dh: dh * (z > 0))
right("relu_backward", "where")(lambda z, dh: np.where(z > 0, dh, 0.0))
wrong("relu_backward", "relu'(0) taken as 1", "near-miss at the boundary")(lambda z, dh: dh * (z >= 0))
wrong("relu_backward", "the mask forgotten", "classic slip")(lambda z, dh: dh.copy())
wrong("relu_backward", "without multiplying by dh", "classic slip")(lambda z, dh: (z > 0).astype(float))
wrong("relu_backward", "dh's sign", "wrong variable")(lambda z, dh: dh * (dh > 0))
wrong("relu_backward", "multiplied by z", "classic slip")(lambda z, dh: dh * z)
wrong("relu_backward", "inverted (z <= 0)", "sign slip")(lambda z, dh: dh * (z <= 0))
wrong("relu_backward", None, "clamped dh and masked (two mistakes)")(lambda z, dh: np.maximum(dh, 0) * (z > 0))
wrong("relu_backward", None, "2-D only (the text says any shape)")(
    lambda z, dh: np.array([[d * (t > 0) for t, d in zip(zr, dr)] for zr, dr in zip(z, dh)]))


def _backward(slip=""):
    def fn(x, W1, b1, W2, b2, dy):
        z = x @ W1 + b1
        h = np.maximum(z, 0)
        dW2 = h.T @ dy
        db2 = dy.sum(axis=0)
        dh = dy @ W2.T
        dz = dh if slip == "no mask" else dh * (z >= 0 if slip == ">=" else z > 0)
        dW1 = x.T @ dz
        db1 = dz.sum(axis=0)
        dx = dz @ W1.T
        if slip == "mean":
            db1, db2 = db1 / len(x), db2 / len(x)
        if slip == "twice":
            dW1, dW2 = 2 * dW1, 2 * dW2
        if slip == "swap":
            return dx, dW2, db2, dW1, db1
        if slip == "two":
            db2, dx = db2 / len(x), dh @ W1.T
        return dx, dW1, db1, dW2, db2
    return fn


right("ffn_backward", "chain rule")(_backward())
wrong("ffn_backward", "relu'(0) taken as 1", "near-miss at the boundary")(_backward(">="))
wrong("ffn_backward", "mask forgotten", "classic slip")(_backward("no mask"))
wrong("ffn_backward", "bias gradients averaged", "a mean for a sum")(_backward("mean"))
wrong("ffn_backward", "swapped in the returned tuple", "order of the tuple")(_backward("swap"))
wrong("ffn_backward", None, "dW1 and dW2 twice")(_backward("twice"))
wrong("ffn_backward", None, "two mistakes combined (db2 averaged, dx from dh)")(_backward("two"))


def _numerical(step=lambda eps: eps, central=True, divide=lambda eps: 2 * eps):
    def fn(f, a, eps=1e-6):
        grad = np.zeros(a.shape)
        for index in np.ndindex(a.shape):
            kept = a[index]
            a[index] = kept + step(eps)
            up = f(a)
            a[index] = kept - step(eps) if central else kept
            down = f(a)
            a[index] = kept
            grad[index] = (up - down) / divide(eps)
        return grad
    return fn


right("numerical_gradient", "ndindex")(_numerical())
wrong("numerical_gradient", "a forward difference", "classic slip")(_numerical(central=False, divide=lambda e: e))
wrong("numerical_gradient", "divided by eps instead of 2 eps", "classic slip")(_numerical(divide=lambda e: e))
wrong("numerical_gradient", "multiplied by eps", "precedence: (up - down) / 2 * eps")(
    _numerical(divide=lambda e: 2 / e))
wrong("numerical_gradient", None, "a step of 1e-4 of its own")(_numerical(step=lambda e: 1e-4, divide=lambda e: 2e-4))


@wrong("numerical_gradient", "the entry never put back", "classic slip (no restore)")
def _numerical_never_restored(f, a, eps):
    grad = np.zeros(a.shape)
    for index in np.ndindex(a.shape):
        a[index] += eps
        up = f(a)
        a[index] -= 2 * eps
        grad[index] = (up - f(a)) / (2 * eps)
    return grad


@wrong("numerical_gradient", None, "two mistakes combined (not put back exactly, divided by eps)")
def _numerical_two_slips(f, a, eps):
    grad = np.zeros(a.shape)
    for index in np.ndindex(a.shape):
        a[index] += eps
        up = f(a)
        a[index] -= 2 * eps
        down = f(a)
        a[index] += eps
        grad[index] = (up - down) / eps
    return grad


def _gelu_back(slope):
    return lambda z, dh: dh * slope(z)


_phi = lambda z: np.exp(-z ** 2 / 2) / np.sqrt(2 * np.pi)   # noqa: E731
right("gelu_backward", "ndtr")(_gelu_back(lambda z: special.ndtr(z) + z * _phi(z)))
wrong("gelu_backward", "the product rule's second term", "classic slip")(_gelu_back(lambda z: special.ndtr(z)))
wrong("gelu_backward", "the second term subtracted", "sign slip")(_gelu_back(lambda z: special.ndtr(z) - z * _phi(z)))
wrong("gelu_backward", "GELU itself instead of its slope", "classic slip")(_gelu_back(lambda z: z * special.ndtr(z)))
wrong("gelu_backward", "without its 1/sqrt(2π)", "classic slip")(
    _gelu_back(lambda z: special.ndtr(z) + z * np.exp(-z ** 2 / 2)))
wrong("gelu_backward", "without multiplying by dh", "classic slip")(lambda z, dh: special.ndtr(z) + z * _phi(z))
wrong("gelu_backward", None, "two mistakes combined (Φ alone, without dh)")(lambda z, dh: special.ndtr(z))


# ==========================================================================================================
# 08 backward_by_hand: dh = [3, -2], dz = [0, -2], dx = [-4, -2]
# ==========================================================================================================
for values, style in [(([3, -2], [0, -2], [-4, -2]), "lists"),
                      ((np.array([3.0, -2.0]), (-0.0, -2.0), np.array([-4, -2])), "mixed")]:
    right("backward_by_hand", style)(lambda values=values: values)
for values, label, style in [
    (([-3, 2], [0, 2], [4, 2]), "its sign flipped", "sign slip carried through"),
    (([-4, 2], [0, 2], [4, 2]), "y used where dy belongs", "classic slip carried through"),
    (([-1, -4], [0, -4], [-8, -4]), "W2 not transposed in dh", "transpose, carried through"),
    (([-1, 2], [0, 2], [4, 2]), "W2 left out", "classic slip carried through"),
    (([3, -2], [3, -2], [-1, -5]), "relu'(0) taken as 1", "boundary: the unit at z = 0"),
    (([3, -2], [3, 0], [3, -3]), "the mask inverted", "classic slip"),
    (([3, -2], [0, -2], [2, -2]), "W1 not transposed in dx", "transpose"),
    (([3, -2], [0, -2], [-1, -5]), "dx taken from dh", "classic slip"),
    (([0.5, -1], [0, -1], [-1, 1]), "the worked example's numbers copied", "table of another case"),
    (([3, -2], [0, -2], [-4.000004, -2]), "a typo or a tiny offset", "near-miss"),
    (([-1, -4], [0, -4], [8, 4]), None, "two mistakes combined (W2 untransposed, then dx's sign)"),
    (([-1, -4], [0, -4], [4, -4]), None, "two transposes (dh and dx)"),
    (([1, 1], [1, 1], [1, 1]), None, "made-up numbers"),
    (([3, -2], [0, -2], [-4, -2], [0, 0]), None, "an extra part"),
]:
    wrong("backward_by_hand", label, style)(lambda values=values: values)


# ==========================================================================================================
# 09 value_logits(W2, lnf_g, wte, unit), key_vector(model, prompts, layer), rank_one_update(W2, k, v_star, C)
# ==========================================================================================================
@right("value_logits", "NumPy, step by step")
def value_steps(W2, lnf_g, wte, unit):
    v = np.asarray(W2)[unit]
    return wte @ ((v - v.mean()) * lnf_g)


@right("value_logits", "matmul with the transpose")
def value_matmul(W2, lnf_g, wte, unit):
    return np.matmul((W2[unit] - np.mean(W2[unit])) * np.asarray(lnf_g), np.asarray(wte).T)


@wrong("value_logits", "a column of W2", "transpose (a column, not a row)")
def value_column(W2, lnf_g, wte, unit):
    v = np.asarray(W2)[:, unit]
    return wte @ ((v - v.mean()) * lnf_g)


@wrong("value_logits", "layer norm left out", "classic slip (the raw row)")
def value_raw(W2, lnf_g, wte, unit):
    return W2[unit] @ wte.T


@wrong("value_logits", "not centred", "classic slip")
def value_uncentred(W2, lnf_g, wte, unit):
    return (W2[unit] * lnf_g) @ wte.T


@wrong("value_logits", "gain lnf_g left out", "classic slip")
def value_no_gain(W2, lnf_g, wte, unit):
    return (W2[unit] - W2[unit].mean()) @ wte.T


@wrong("value_logits", "centred after multiplying by the gain", "steps in the wrong order")
def value_scaled_then_centred(W2, lnf_g, wte, unit):
    v = W2[unit] * lnf_g
    return (v - v.mean()) @ wte.T


@wrong("value_logits", "divided by the gain", "the inverse operation")
def value_divided_by_gain(W2, lnf_g, wte, unit):
    v = W2[unit]
    return ((v - v.mean()) / lnf_g) @ wte.T


@wrong("value_logits", "mean of the whole W2", "the mean over the wrong axis (all of W2)")
def value_whole_mean(W2, lnf_g, wte, unit):
    return ((W2[unit] - np.mean(W2)) * lnf_g) @ wte.T


@wrong("value_logits", "mean over the units", "the mean over the wrong axis (the units)")
def value_unit_means(W2, lnf_g, wte, unit):
    return ((W2[unit] - W2.mean(axis=0)) * lnf_g) @ wte.T


@wrong("value_logits", "units counted from 1", "off-by-one")
def value_off_by_one(W2, lnf_g, wte, unit):
    v = W2[unit - 1]
    return ((v - v.mean()) * lnf_g) @ wte.T


@wrong("value_logits", "softmax", "probabilities for logits")
def value_softmax(W2, lnf_g, wte, unit):
    return softmax(((W2[unit] - W2[unit].mean()) * lnf_g) @ wte.T)


@wrong("value_logits", None, "two mistakes combined (no centring, softmax)")
def value_two_slips(W2, lnf_g, wte, unit):
    return softmax((W2[unit] * lnf_g) @ wte.T)


@wrong("value_logits", None, "float32 result")
def value_float32(W2, lnf_g, wte, unit):
    v = W2[unit].astype(np.float32)
    return ((v - v.mean()) * lnf_g.astype(np.float32)) @ wte.T.astype(np.float32)


@wrong("value_logits", None, "the top 10 words only, not every word's logit")
def value_top_only(W2, lnf_g, wte, unit):
    return np.sort(((W2[unit] - W2[unit].mean()) * lnf_g) @ wte.T)[-10:]


@right("key_vector", "a loop over the prompts")
def key_loop_bank(model, prompts, layer):
    total = 0
    for text in prompts:
        total = total + model.hidden(model.encode(text), layer).h[-1]
    return total / len(prompts)


@right("key_vector", "stacked, then the mean")
def key_stack_bank(model, prompts, layer):
    return np.stack([model.hidden(model.encode(t), layer)[1][-1, :] for t in prompts]).mean(axis=0)


@wrong("key_vector", "pre-activation z", "classic slip (z for h)")
def key_z(model, prompts, layer):
    return np.mean([model.hidden(model.encode(t), layer).z[-1] for t in prompts], axis=0)


@wrong("key_vector", "first token", "wrong position")
def key_first(model, prompts, layer):
    return np.mean([model.hidden(model.encode(t), layer).h[0] for t in prompts], axis=0)


@wrong("key_vector", "averaged over the prompt's tokens", "wrong position (every token)")
def key_all_tokens(model, prompts, layer):
    return np.mean([model.hidden(model.encode(t), layer).h.mean(axis=0) for t in prompts], axis=0)


@wrong("key_vector", "first prompt's key alone", "partial answer (one prompt)")
def key_first_prompt(model, prompts, layer):
    return model.hidden(model.encode(prompts[0]), layer).h[-1]


@wrong("key_vector", "summed over the prompts", "classic slip")
def key_summed(model, prompts, layer):
    return sum(model.hidden(model.encode(t), layer).h[-1] for t in prompts)


@wrong("key_vector", None, "two mistakes combined (z, first token)")
def key_z_first(model, prompts, layer):
    return np.mean([model.hidden(model.encode(t), layer).z[0] for t in prompts], axis=0)


@wrong("key_vector", None, "one key per prompt, not their mean")
def key_each(model, prompts, layer):
    return np.array([model.hidden(model.encode(t), layer).h[-1] for t in prompts])


@right("rank_one_update", "np.linalg.solve")
def update_solve_bank(W2, k, v_star, C):
    u = np.linalg.solve(C, k)
    return W2 + np.outer(u, v_star - k @ W2) / (k @ u)


@right("rank_one_update", "the inverse, with [:, None] and [None, :]")
def update_inv_bank(W2, k, v_star, C):
    u = np.linalg.inv(C) @ k
    return W2 + u[:, None] * (v_star - k @ W2)[None, :] / float(u @ k)


@wrong("rank_one_update", "not scaled", "classic slip")
def update_unscaled(W2, k, v_star, C):
    return W2 + np.outer(np.linalg.solve(C, k), v_star - k @ W2)


@wrong("rank_one_update", "C left out", "classic slip (plain least squares)")
def update_no_c(W2, k, v_star, C):
    return W2 + np.outer(k, v_star - k @ W2) / (k @ k)


@wrong("rank_one_update", "sign reversed", "sign slip")
def update_sign(W2, k, v_star, C):
    u = np.linalg.solve(C, k)
    return W2 + np.outer(u, k @ W2 - v_star) / (k @ u)


@wrong("rank_one_update", "only the update returned", "partial answer")
def update_delta_only(W2, k, v_star, C):
    u = np.linalg.solve(C, k)
    return np.outer(u, v_star - k @ W2) / (k @ u)


@wrong("rank_one_update", None, "two mistakes combined (C left out, sign reversed)")
def update_two_slips(W2, k, v_star, C):
    return W2 + np.outer(k, k @ W2 - v_star) / (k @ k)


@wrong("rank_one_update", None, "changed W2 in place, and returned it")
def update_in_place_bank(W2, k, v_star, C):
    u = np.linalg.solve(C, k)
    W2 += np.outer(u, v_star - k @ W2) / (k @ u)
    return W2


@wrong("rank_one_update", None, "float32 result")
def update_float32_bank(W2, k, v_star, C):
    u = np.linalg.solve(C, k)
    return (W2 + np.outer(u, v_star - k @ W2) / (k @ u)).astype(np.float32)


# ==========================================================================================================
# Running the bank
# ==========================================================================================================
NAMED = re.compile(r"^  (Likely mistake|Possibly): (.*)$", re.M)


@dataclass
class Result:
    answer: Answer
    passed: bool
    named: str            # the first sentence of the Likely mistake / Possibly line, "" when none
    recorded: str         # what progress and make grade record
    out: str

    @property
    def right_name(self) -> bool:
        """The name given is the answer's mistake (always false for a name given to a "none of them" answer)."""
        return bool(self.named) and self.answer.label is not None and self.answer.label.lower() in self.out_named

    @property
    def out_named(self) -> str:
        return " ".join(m.group(2) for m in NAMED.finditer(self.out)).lower()


def run_bank(bank=None) -> list[Result]:
    """Every answer through its check, outside grading (the public cases, as a learner runs them), or as make
    grade runs it for an answer marked `graded` (one that only the hidden cases can catch)."""
    results = []
    saved = {name: os.environ.pop(name) for name in ("FFN_GRADING", "NBGRADER_EXECUTION") if name in os.environ}
    try:
        for answer in bank or BANK:
            check = getattr(checks, f"check_{answer.exercise}")
            out = io.StringIO()
            if answer.graded:
                os.environ["FFN_GRADING"] = "1"
            try:
                with contextlib.redirect_stdout(out), np.errstate(all="ignore"):
                    verdict = check(answer.fn)
            finally:
                os.environ.pop("FFN_GRADING", None)
            text = out.getvalue()
            match = NAMED.search(text)
            named = match.group(2) if match else ""
            results.append(Result(answer, bool(verdict), named, verdict.mistake, text))
    finally:
        os.environ.update(saved)
    return results


def shares(results: list[Result]) -> dict[str, Any]:
    wrong_answers = [r for r in results if not r.answer.right]
    named = [r for r in wrong_answers if r.named]
    return {"wrong": len(wrong_answers), "rejected": sum(not r.passed for r in wrong_answers),
            "right": sum(r.answer.right for r in results),
            "right_passed": sum(r.passed for r in results if r.answer.right),
            "named": len(named), "named_right": sum(r.right_name for r in named),
            "unnamed_with_a_mistake": sum(1 for r in wrong_answers if not r.named and r.answer.label),
            "misnamed": [r for r in named if not r.right_name]}


def lesson_of(exercise: str) -> str:
    return next(check.lesson for name in dir(checks) if name == f"check_{exercise}"
                for check in [getattr(checks, name)])


def main() -> int:
    results = run_bank()
    by_lesson: dict[str, list[Result]] = {}
    for result in results:
        by_lesson.setdefault(lesson_of(result.answer.exercise), []).append(result)
    print(f"{'lesson':<7}{'wrong answers':>14}{'rejected':>10}{'named':>7}{'named right':>13}{'right answers':>15}"
          f"{'passed':>8}")
    for lesson, group in sorted(by_lesson.items()):
        s = shares(group)
        print(f"{lesson:<7}{s['wrong']:>14}{s['rejected']:>10}{s['named']:>7}{s['named_right']:>13}{s['right']:>15}"
              f"{s['right_passed']:>8}")
    s = shares(results)
    print(f"{'all':<7}{s['wrong']:>14}{s['rejected']:>10}{s['named']:>7}{s['named_right']:>13}{s['right']:>15}"
          f"{s['right_passed']:>8}")
    print(f"\nwrong answers rejected: {100 * s['rejected'] / s['wrong']:.1f} %; named mistakes that are the right one: "
          f"{100 * s['named_right'] / max(s['named'], 1):.1f} % ({s['named_right']} of {s['named']}); answers with a "
          f"known mistake left unnamed: {s['unnamed_with_a_mistake']}")
    for r in s["misnamed"]:
        print(f"  misnamed: {r.answer.exercise} ({r.answer.style}), labelled {r.answer.label!r}, "
              f"named {r.named[:100]!r}")
    for r in results:
        if r.passed != r.answer.right:
            print(f"  {'rejected' if r.answer.right else 'accepted'}: {r.answer.exercise} ({r.answer.style})")
    return 0 if (s["rejected"] == s["wrong"] and not s["misnamed"] and s["right_passed"] == s["right"]) else 1


if __name__ == "__main__":
    sys.exit(main())
