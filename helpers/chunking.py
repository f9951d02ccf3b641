"""Applying the FFN to a long sequence a chunk of tokens at a time, to bound the memory it needs."""
from __future__ import annotations

from typing import Callable

import numpy as np

from helpers.ffn import ffn, relu


def ffn_chunked(x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray,
                chunk: int = 64, activation: Callable[[np.ndarray], np.ndarray] = relu) -> np.ndarray:
    """The same numbers as ffn(x, ...) for x of shape (T, d), holding at most `chunk` tokens' hidden
    activations (chunk, d_ff) at a time instead of all T. The last chunk may be shorter."""
    if chunk < 1:
        raise ValueError(f"chunk must be a positive number of tokens, got {chunk}")
    T = x.shape[0]
    y = np.empty((T, W2.shape[1]), dtype=np.result_type(x, W1, W2))     # (T, d)
    for start in range(0, T, chunk):
        rows = slice(start, start + chunk)                              # the last slice may be shorter
        y[rows] = ffn(x[rows], W1, b1, W2, b2, activation)              # (<= chunk, d)
    return y
