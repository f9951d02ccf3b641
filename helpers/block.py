"""The FFN in its block: a minimal layer norm, the residual wrapper, and a toy attention step.

Pre-LN order, as in GPT-2, Llama and Mixtral: the sublayer reads a normalised copy of x, and its output is
added back onto x itself, so x + FFN(LN(x)) has x's shape and x passes through untouched when FFN gives 0.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

LN_EPS = 1e-5  # added to the variance so a constant token does not divide by zero (PyTorch's default)


def layer_norm(x: np.ndarray, eps: float = LN_EPS) -> np.ndarray:
    """Each token (row) shifted to mean 0 and scaled to variance 1 over its d features.

    Minimal: a real LayerNorm then multiplies by a learned gain and adds a learned bias, one per feature.
    """
    mean = x.mean(axis=-1, keepdims=True)                # (..., 1)
    var = x.var(axis=-1, keepdims=True)                  # (..., 1) population variance, as LayerNorm uses
    return (x - mean) / np.sqrt(var + eps)               # (..., d)


def residual_block(x: np.ndarray, ffn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """x + ffn(layer_norm(x)): the FFN half of a pre-LN transformer block."""
    h = layer_norm(x)                                    # (..., d) what the FFN reads
    return x + ffn(h)                                    # (..., d) what it writes is added onto x


def average_tokens(x: np.ndarray) -> np.ndarray:
    """A toy attention step that only gathers: token i becomes the mean of tokens 0..i (causal).

    It is attention with every score equal and the values equal to the inputs: it mixes tokens but applies
    no weights and no nonlinearity. x is (T, d).
    """
    counts = np.arange(1, x.shape[-2] + 1, dtype=x.dtype)[:, None]  # (T, 1) tokens each position sees
    return np.cumsum(x, axis=-2) / counts                # (T, d)
