"""Affine layers with no activation between them collapse into one affine map.

Row-vector convention, as in helpers.ffn: a layer maps x (..., d_in) to x @ W + b, with W (d_in, d_out) and
b (d_out,). Two such layers in a row are one: (x W1 + b1) W2 + b2 = x (W1 W2) + (b1 W2 + b2).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

Layer = tuple[np.ndarray, np.ndarray]  # (W, b)


def collapse_affine(W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray) -> Layer:
    """The one affine map (W, b) equal to x -> (x @ W1 + b1) @ W2 + b2."""
    W = W1 @ W2                       # (d_in, d_out)
    b = b1 @ W2 + b2                  # (d_out,)  b1 travels through W2 like any other input
    return W, b


def collapse_stack(layers: Sequence[Layer]) -> Layer:
    """Fold a stack of affine layers, first to last, into one (W, b) with collapse_affine."""
    W, b = layers[0]
    for W_next, b_next in layers[1:]:
        W, b = collapse_affine(W, b, W_next, b_next)
    return W, b


def apply_stack(x: np.ndarray, layers: Sequence[Layer]) -> np.ndarray:
    """Run x through the layers one at a time, with nothing between them."""
    for W, b in layers:
        x = x @ W + b
    return x


def residual_collapse(W1: np.ndarray, W2: np.ndarray) -> np.ndarray:
    """The one matrix M with x + (x @ W1) @ W2 = x @ M, namely I + W1 W2 (W1 is (d, d_ff), W2 is (d_ff, d))."""
    return np.eye(W1.shape[0]) + W1 @ W2


def best_affine_fit(X: np.ndarray, Y: np.ndarray) -> Layer:
    """Least squares: the (W, b) that minimises the sum of squared errors of X @ W + b against Y."""
    ones = np.ones((X.shape[0], 1))
    coef, *_ = np.linalg.lstsq(np.hstack([X, ones]), Y, rcond=None)   # (d_in + 1, ...)
    return coef[:-1], coef[-1]


def max_rel_err(got: np.ndarray, want: np.ndarray) -> float:
    """Largest entry-wise difference, relative to the largest entry of `want`."""
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
