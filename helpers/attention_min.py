"""A minimal single-head self-attention in NumPy, for comparing its cost and its token mixing with the FFN.

Row-vector convention, as in helpers.ffn: x is (T, d), each projection W_q, W_k, W_v, W_o is (d, d).
No heads, no biases: just the two steps whose cost grows with T squared, the scores Q K^T and the mixing A V,
between the four projections. Unmasked by default, as in an encoder, where every token sees every other;
causal=True applies GPT-2's mask (OpenAI's src/model.py, mask_attn_weights): token t sees tokens 0 to t.
"""
from __future__ import annotations

import math

import numpy as np


def attention_mix(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False) -> np.ndarray:
    """softmax(q k^T / sqrt(d)) v: every output row is a weighted average of all rows of v (with causal=True,
    row t of the rows 0 to t only)."""
    scores = (q * (1.0 / math.sqrt(q.shape[-1]))) @ k.T   # (T, T)  every query against every key, scaled
    if causal:                                        # query t may not see the keys after it
        scores[np.triu(np.ones(scores.shape, dtype=bool), k=1)] = -np.inf
    scores -= scores.max(axis=-1, keepdims=True)      # (T, T)  for a stable exp
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)      # (T, T)  each row sums to 1
    return scores @ v                                 # (T, d)  mix the values


def attention(x: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray,
              W_o: np.ndarray, causal: bool = False) -> np.ndarray:
    """Single-head self-attention: project, mix across tokens (only with earlier ones if causal), project back."""
    q, k, v = x @ W_q, x @ W_k, x @ W_v               # (T, d) each
    return attention_mix(q, k, v, causal) @ W_o       # (T, d)
