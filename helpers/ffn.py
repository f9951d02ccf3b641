"""NumPy reference implementations of the feed-forward network and its variants.

Row-vector convention throughout, as in GPT-2's checkpoints: a token is a row, x has shape (..., d),
W1 is (d, d_ff) and W2 is (d_ff, d), so FFN(x) = act(x @ W1 + b1) @ W2 + b2. Any leading dimensions work:
one token (d,), a sequence (T, d) or a batch (B, T, d).

The hidden activations (..., d_ff) are the biggest array in an FFN, so the functions below update them in
place (`h += b1`, an activation writing into `out=h`) instead of allocating a new array at every step. The
dtype of x is kept: float32 in, float32 out.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from scipy import special

SQRT_HALF = 0.7071067811865476      # 1 / sqrt(2), for Phi(z) = erfc(-z / sqrt(2)) / 2
SQRT_2_OVER_PI = 0.7978845608028654  # sqrt(2 / pi), for the tanh approximation of GELU
GELU_TANH_CUBIC = 0.044715


def relu(z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """max(0, z), element-wise."""
    return np.maximum(z, 0, out=out)


def gelu(z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Exact GELU, z * Phi(z), with Phi the standard normal CDF (BERT; GPT-2 uses gelu_tanh).

    Phi(z) = erfc(-z / sqrt(2)) / 2 is computed with erfc rather than (1 + erf(z / sqrt(2))) / 2, which
    would cancel to 0 for very negative z and lose all relative accuracy there.
    """
    z = np.asarray(z)
    phi = np.multiply(z, -SQRT_HALF)  # one temporary of z's shape and dtype
    special.erfc(phi, out=phi)
    phi *= 0.5                        # phi = Phi(z)
    return np.multiply(z, phi, out=out)


def gelu_tanh(z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """GPT-2's GELU: 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3)))."""
    z = np.asarray(z)
    t = np.multiply(z, z)             # z^2, one temporary
    t *= GELU_TANH_CUBIC
    t += 1.0
    t *= z                            # z + 0.044715 z^3
    t *= SQRT_2_OVER_PI
    np.tanh(t, out=t)
    t += 1.0
    t *= 0.5
    return np.multiply(z, t, out=out)


def silu(z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """SiLU (swish): z / (1 + e^-z) = z * sigmoid(z), with no overflow warning for very negative z."""
    z = np.asarray(z)
    s = special.expit(z)              # sigmoid, stable for any z
    return np.multiply(z, s, out=out)


# Activations above accept out=, so ffn can apply them in place on the hidden array.
_IN_PLACE = (relu, gelu, gelu_tanh, silu)


def ffn(x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray,
        activation: Callable[[np.ndarray], np.ndarray] = relu) -> np.ndarray:
    """FFN(x) = activation(x @ W1 + b1) @ W2 + b2, applied to every row (token) of x independently."""
    h = x @ W1                        # (..., d_ff)  expand
    h += b1                           # (..., d_ff)  in place
    if activation in _IN_PLACE:
        activation(h, out=h)          # (..., d_ff)  in place
    else:
        h = activation(h)             # any other element-wise function
    y = h @ W2                        # (..., d)     project back
    y += b2                           # (..., d)     in place
    return y


def swiglu_ffn(x: np.ndarray, W_gate: np.ndarray, W_up: np.ndarray, W_down: np.ndarray) -> np.ndarray:
    """SwiGLU FFN (Llama): (silu(x @ W_gate) * (x @ W_up)) @ W_down. Three matrices, no biases."""
    g = x @ W_gate                    # (..., d_ff)  gate path
    silu(g, out=g)
    g *= x @ W_up                     # (..., d_ff)  times the value path
    return g @ W_down                 # (..., d)


def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along `axis`."""
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def moe_ffn(x: np.ndarray, W_router: np.ndarray, experts: Sequence[Callable[[np.ndarray], np.ndarray]],
            k: int = 2) -> np.ndarray:
    """Mixture of experts: each token goes to the k experts with the largest router logits.

    x is (n, d) (or any (..., d): leading dimensions are tokens), W_router is (d, n_experts), and each expert
    maps (m, d) to (m, d). A token's output is the sum of its k experts' outputs weighted by the softmax of
    those k logits, which equals a softmax over all experts renormalised over the chosen k (as Mixtral does).

    - Each expert is called once, on all the tokens routed to it together (a batch of rows, in token order);
      an expert that receives no token is not called at all.
    - Ties between equal logits go to the lower expert index (a stable sort), so the result is reproducible.
    - k must be an integer from 1 to n_experts; k = n_experts is the full softmax mixture of every expert.
    - The output has x's shape and dtype (float32 in, float32 out).
    """
    n_experts = len(experts)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an integer, got {k!r}")
    if not 1 <= k <= n_experts:
        raise ValueError(f"k must be between 1 and the number of experts ({n_experts}), got {k}")
    x = np.asarray(x)
    tokens_in = x.reshape(-1, x.shape[-1])                            # (n, d) every token a row
    logits = tokens_in @ W_router                                     # (n, n_experts)
    chosen = np.argsort(-logits, axis=-1, kind="stable")[:, :k]       # (n, k) expert indices, best first
    weights = softmax(np.take_along_axis(logits, chosen, axis=-1))    # (n, k) each row sums to 1
    y = np.zeros(tokens_in.shape, np.result_type(x.dtype, np.float32))  # (n, d) x's dtype if float
    for e, expert in enumerate(experts):
        rows, slot = np.nonzero(chosen == e)                          # a token picks e at most once
        if rows.size == 0:
            continue                                                  # idle expert: not called
        out = expert(tokens_in[rows])                                 # (m, d) one call for its m tokens
        if np.shape(out) != (rows.size, x.shape[-1]):
            raise ValueError(f"expert {e} mapped {rows.size} tokens of shape {tokens_in[rows].shape} to "
                             f"shape {np.shape(out)}; an expert must return its input's shape")
        y[rows] += weights[rows, slot, None] * out                    # (m, d) weighted, back in place
    return y.reshape(x.shape)
