"""A minimal single-head self-attention in NumPy, for comparing its cost and its token mixing with the FFN.

Row-vector convention, as in helpers.ffn: x is (T, d), each projection W_q, W_k, W_v, W_o is (d, d).
No mask, no heads, no biases: just the two steps whose cost grows with T squared, the scores Q K^T and the
mixing A V, between the four projections.
"""
from __future__ import annotations

import math

import numpy as np


def attention_mix(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """softmax(q k^T / sqrt(d)) v: every output row is a weighted average of all rows of v."""
    scores = (q * (1.0 / math.sqrt(q.shape[-1]))) @ k.T   # (T, T)  every query against every key, scaled
    scores -= scores.max(axis=-1, keepdims=True)      # (T, T)  for a stable exp
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)      # (T, T)  each row sums to 1
    return scores @ v                                 # (T, d)  mix the values


def attention(x: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray,
              W_o: np.ndarray) -> np.ndarray:
    """Single-head self-attention: project, mix across tokens, project back."""
    q, k, v = x @ W_q, x @ W_k, x @ W_v               # (T, d) each
    return attention_mix(q, k, v) @ W_o               # (T, d)
