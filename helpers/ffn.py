"""NumPy reference implementations of the feed-forward network and its variants, forward and backward.

Row-vector convention throughout, as in GPT-2's checkpoints: a token is a row, x has shape (..., d),
W1 is (d, d_ff) and W2 is (d_ff, d), so FFN(x) = act(x @ W1 + b1) @ W2 + b2. Any leading dimensions work:
one token (d,), a sequence (T, d) or a batch (B, T, d).

Written to be as fast and as lean as NumPy allows, because later lessons time and measure them:
- The hidden activations (n, d_ff) are the biggest array in an FFN, so the bias and the activation update
  them in place (`h += b1`, an activation writing into `out=h`) instead of allocating a new array each step.
- Activations work through their input in cache-sized blocks shared by a few threads (helpers._blocks), so
  their temporaries stay small: never a second (n, d_ff) array. Exact GELU on float32 has a float32 method of
  its own (helpers._gelu32), several times faster than scipy's float64 ndtr.
- The backward passes (ffn_backward, swiglu_backward) recompute the pre-activations from x and reuse the
  hidden arrays' memory for their gradients: the (n, d_ff) arrays they hold are z and h, then z and dh.
- The dtype of x is kept: float32 in, float32 out, whatever the dtype of the biases or weights (they are
  cast to x's dtype); float64 works too. Inputs that are not floating point (lists, ints) become float64.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from scipy import special

from helpers._blocks import blockwise, elementwise
from helpers._gelu32 import gelu_float32

SQRT_HALF = 0.7071067811865476      # 1 / sqrt(2), for Phi(z) = erfc(-z / sqrt(2)) / 2
SQRT_2_OVER_PI = 0.7978845608028654  # sqrt(2 / pi), for the tanh approximation of GELU
GELU_TANH_CUBIC = 0.044715

# Hidden units per block of SwiGLU's value path. Blocks of columns of W_up, not of rows of x: BLAS packs
# each block of W_up once, where row blocks would repack all of W_up for every block (measured: 768 columns
# cost about as much as one whole matmul, blocks of 256 rows half as much again). The block, (n, 768), is a
# quarter of GPT-2 small's hidden array and 7% of Llama 7B's.
_COLS = 768


def relu(z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """max(0, z), element-wise."""
    return np.maximum(z, 0, out=out)


def gelu(z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Exact GELU, z * Phi(z), with Phi the standard normal CDF (BERT; GPT-2 uses gelu_tanh).

    For z < 0 both paths compute the tail Phi(z) itself, as erfc does, never (1 + erf(z / sqrt(2))) / 2, which
    cancels to 0 for very negative z and loses all relative accuracy there (GELU's left tail is small, not 0).

    float64 (and any dtype but float32): scipy.special.ndtr, accurate to about 1e-14 relative.

    float32 has a path of its own, _gelu_float32 below, because ndtr works in float64 whatever it is given, at
    about 14 ns an element, which made GELU add half to the time of a GPT-2-sized FFN's two matmuls. float32
    needs 24 bits, not 53: a table of Phi and a short Taylor step from its nearest entry (the table-driven
    method maths libraries use for exp and log), in float32 arithmetic, gets them in about a third of the time,
    within 2.9 ulps of the exact GELU at every float32 from -15 to 15. That holds in the left tail too, down to
    z = -13.2 where GELU leaves float32's normal range; below it GELU underflows gradually to 0. inf, -inf and
    nan give what float64 gives: inf, nan (as -inf * Phi(-inf) = -inf * 0 is) and nan.
    """
    def formula(z, out):
        if z.dtype == np.float32:
            return gelu_float32(z, out)
        phi = special.ndtr(z)                   # Phi(z)
        return np.multiply(z, phi, out=out)     # z * Phi(z)
    return elementwise(formula, z, out)


def gelu_tanh(z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """GPT-2's GELU: 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3)))."""
    def formula(z, out):
        with np.errstate(over="ignore"):        # z^3 may overflow to +-inf, where tanh is +-1 as it should be
            t = np.multiply(z, z)               # z^2
            t *= GELU_TANH_CUBIC
            t += 1.0
            t *= z                              # z + 0.044715 z^3
            t *= SQRT_2_OVER_PI                 # sqrt(2/pi) (z + 0.044715 z^3)
        np.tanh(t, out=t)
        t += 1.0
        t *= 0.5                                # (1 + tanh(...)) / 2
        return np.multiply(z, t, out=out)       # 0.5 z (1 + tanh(...))
    return elementwise(formula, z, out)


def silu(z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """SiLU (swish): z / (1 + e^-z) = z * sigmoid(z), with no overflow warning for very negative z.

    For very negative z, e^-z overflows to inf and z / inf is -0, the right limit: the overflow is expected,
    so its warning is switched off here. (NumPy's exp is about twice as fast as scipy.special.expit.)
    """
    def formula(z, out):
        with np.errstate(over="ignore", under="ignore"):
            e = np.exp(-z)                      # e^-z, inf for very negative z
        e += 1.0                                # 1 + e^-z
        return np.divide(z, e, out=out)         # z / (1 + e^-z)
    return elementwise(formula, z, out)


# ---------------------------------------------------------------- derivatives, for the backward pass
# Each formula(z, out) writes act'(z) into out; the public functions below run it block by block as the
# activations do, and ffn_backward runs it on one block at a time to update dh in place (dz = dh * act'(z)).
INV_SQRT_2PI = 0.3989422804014327   # 1 / sqrt(2 pi), the normal density phi(0)


def _relu_slope(z, out):
    return np.greater(z, 0, out=out)            # 1 where z > 0, else 0: relu'(0) = 0, as in PyTorch


def _gelu_slope(z, out):
    with np.errstate(over="ignore"):
        zphi = np.multiply(z, z)                # z^2 (inf for huge z, where phi(z) is 0 as it should be)
    zphi *= -0.5
    np.exp(zphi, out=zphi)
    zphi *= INV_SQRT_2PI                        # phi(z), the normal density
    zphi *= z                                   # z phi(z)
    if z.dtype == np.float32:                   # Phi(z) = GELU(z) / z, from the fast float32 GELU (3 ulps);
        cdf = gelu_float32(z, np.empty_like(z))  # ndtr works in float64 and would take 3 times as long
        with np.errstate(invalid="ignore"):
            cdf /= z                            # 0 / 0 at z = 0 ...
        cdf[z == 0] = 0.5                       # ... where Phi(0) = 1/2
    else:
        cdf = special.ndtr(z)                   # Phi(z), the tail computed as such for z < 0
    return np.add(cdf, zphi, out=out)           # Phi(z) + z phi(z)


def _gelu_tanh_slope(z, out):
    with np.errstate(over="ignore"):
        z2 = np.multiply(z, z)                  # z^2, inf for |z| near the square root of float's max ...
    np.minimum(z2, 1e4, out=z2)                 # ... but beyond |z| = 100 tanh is +-1 exactly: same result
    u = np.multiply(z2, GELU_TANH_CUBIC)
    u += 1.0
    with np.errstate(over="ignore"):            # u overflows only for |z| near float's max: tanh(+-inf) = +-1
        u *= z
        u *= SQRT_2_OVER_PI                     # u = sqrt(2/pi) (z + 0.044715 z^3)
    t = np.tanh(u, out=u)                       # tanh(u)
    z2 *= 3 * GELU_TANH_CUBIC
    z2 += 1.0
    z2 *= SQRT_2_OVER_PI                        # du/dz = sqrt(2/pi) (1 + 3 * 0.044715 z^2), at most 1071
    slope = np.multiply(t, t)
    np.subtract(1.0, slope, out=slope)          # 1 - tanh^2, as PyTorch computes it (0 beyond |z| = 100)
    slope *= z2
    slope *= z                                  # z (1 - tanh^2) du/dz (z read before out is written: out may be z)
    np.add(t, 1.0, out=out)
    out += slope
    out *= 0.5                                  # (1 + tanh + z (1 - tanh^2) du/dz) / 2
    return out


def _silu_slope(z, out):
    with np.errstate(over="ignore"):
        s = np.exp(-z)                          # e^-z, inf for very negative z
    s += 1.0
    np.reciprocal(s, out=s)                     # sigmoid(z) = 1 / (1 + e^-z), 0 for very negative z
    silu_z = np.multiply(z, s)                  # silu(z) = z sigmoid(z) (read before out is written)
    np.subtract(1.0, s, out=out)                # 1 - sigmoid
    out *= silu_z
    out += s                                    # sigmoid + silu (1 - sigmoid) = sigmoid (1 + z (1 - sigmoid))
    return out


def relu_grad(z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """relu'(z): 1 where z > 0, 0 where z <= 0 (at z = 0 exactly, 0, as PyTorch takes it)."""
    return elementwise(_relu_slope, z, out)


def gelu_grad(z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """gelu'(z) = Phi(z) + z phi(z), with Phi the normal CDF and phi its density."""
    return elementwise(_gelu_slope, z, out)


def gelu_tanh_grad(z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The derivative of GPT-2's GELU: (1 + t) / 2 + z (1 - t^2) u' / 2,
    with t = tanh(u), u = sqrt(2/pi) (z + 0.044715 z^3) and u' = sqrt(2/pi) (1 + 3 * 0.044715 z^2)."""
    return elementwise(_gelu_tanh_slope, z, out)


def silu_grad(z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """silu'(z) = sigmoid(z) (1 + z (1 - sigmoid(z)))."""
    return elementwise(_silu_slope, z, out)


_SLOPES = {relu: _relu_slope, gelu: _gelu_slope, gelu_tanh: _gelu_tanh_slope, silu: _silu_slope}


# ---------------------------------------------------------------- GELU in float32
# Activations above accept out=, so ffn can apply them in place on the hidden array (so can any NumPy ufunc).
_IN_PLACE = (relu, gelu, gelu_tanh, silu)


def ffn(x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray,
        activation: Callable[[np.ndarray], np.ndarray] = relu) -> np.ndarray:
    """FFN(x) = activation(x @ W1 + b1) @ W2 + b2, applied to every row (token) of x independently."""
    x, (W1, b1, W2, b2) = _as_float(x, W1, b1, W2, b2)   # all in x's float dtype
    tokens = x.reshape(-1, x.shape[-1])  # (n, d)      leading dims flattened: n tokens
    h = tokens @ W1                      # (n, d_ff)   expand
    h += b1                              # (n, d_ff)   in place
    if activation in _IN_PLACE or isinstance(activation, np.ufunc):
        activation(h, out=h)             # (n, d_ff)   in place
    else:
        h = np.asarray(activation(h), dtype=h.dtype)  # any other element-wise function, dtype kept
    y = h @ W2                           # (n, d)      project back
    y += b2                              # (n, d)      in place
    return y.reshape(x.shape[:-1] + y.shape[-1:])     # (..., d)


def swiglu_ffn(x: np.ndarray, W_gate: np.ndarray, W_up: np.ndarray, W_down: np.ndarray) -> np.ndarray:
    """SwiGLU FFN (Llama): (silu(x @ W_gate) * (x @ W_up)) @ W_down. Three matrices, no biases.

    The value path x @ W_up is computed _COLS hidden units at a time and multiplied straight into the
    hidden array, so it never exists whole: the hidden (n, d_ff) array is the only big one, as in ffn.
    """
    x, (W_gate, W_up, W_down) = _as_float(x, W_gate, W_up, W_down)
    tokens = x.reshape(-1, x.shape[-1])  # (n, d)      leading dims flattened: n tokens
    h = tokens @ W_gate                  # (n, d_ff)   gate path
    silu(h, out=h)                       # (n, d_ff)   silu(x W_gate), in place
    u = np.empty((len(h), min(_COLS, h.shape[1])), h.dtype)  # (n, c) room for one block of the value path
    for start in range(0, h.shape[1], _COLS):               # a few blocks of hidden units
        cols = slice(start, start + _COLS)
        width = W_up[:, cols].shape[1]                      # _COLS, or fewer in the last block
        np.matmul(tokens, W_up[:, cols], out=u[:, :width])  # (n, c) value path x W_up, for these units
        h[:, cols] *= u[:, :width]       # (n, c)      silu(x W_gate) * (x W_up), in place
    del u                                # the block's memory is free again before the output is made
    y = h @ W_down                       # (n, d)      project back
    return y.reshape(x.shape[:-1] + y.shape[-1:])     # (..., d)


def ffn_backward(x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray,
                 dy: np.ndarray, activation: Callable[[np.ndarray], np.ndarray] = relu) -> tuple[np.ndarray, ...]:
    """The gradients of a loss L through y = FFN(x), given dy = dL/dy: returns (dx, dW1, db1, dW2, db2).

    x is (..., d) (leading dimensions are tokens) and dy has y's shape (..., d); b1 is (d_ff,) and b2 is (d,).
    Each gradient has the shape of what it is the gradient of. The weights' and biases' gradients add up the
    contributions of every token; dx stays per token. The chain rule, one line per step:
        z = x W1 + b1          recomputed: this function is given x, not the forward pass's hidden arrays
        dW2 = h^T dy, db2 = dy summed over tokens, dh = dy W2^T
        dz = dh * act'(z)      relu'(0) = 0, as in PyTorch
        dW1 = x^T dz, db1 = dz summed over tokens, dx = dz W1^T
    activation must be relu, gelu, gelu_tanh or silu (its derivative is needed). dtype as in ffn.

    Lean like ffn: two (n, d_ff) arrays at most, z and h; dh is written over h once h^T dy is done, and
    dz over dh, a block at a time (helpers._blocks), so act'(z) never exists whole.
    """
    slope = _SLOPES.get(activation)
    if slope is None:
        raise ValueError(f"ffn_backward knows the derivatives of relu, gelu, gelu_tanh and silu from helpers.ffn, "
                         f"not of {getattr(activation, '__name__', activation)!r}")
    x, (W1, b1, W2, b2, dy) = _as_float(x, W1, b1, W2, b2, dy)
    if dy.shape != x.shape[:-1] + W2.shape[-1:]:
        raise ValueError(f"dy must have the output's shape {x.shape[:-1] + W2.shape[-1:]}, got {dy.shape}")
    tokens = x.reshape(-1, x.shape[-1])  # (n, d)      leading dims flattened: n tokens
    dy_tokens = dy.reshape(-1, dy.shape[-1])          # (n, d)
    z = tokens @ W1                      # (n, d_ff)   pre-activation, again
    z += b1                              # (n, d_ff)   in place
    h = activation(z)                    # (n, d_ff)   hidden activations
    dW2 = h.T @ dy_tokens                # (d_ff, d)   every token's h^T dy, summed
    db2 = dy_tokens.sum(axis=0)          # (d,)
    dh = np.matmul(dy_tokens, W2.T, out=h)            # (n, d_ff)   into h's memory: h is done with
    blockwise(_times_slope(slope), z, dh)             # (n, d_ff)   dz = dh * act'(z), in place, by blocks
    dz = dh
    del z
    db1 = dz.sum(axis=0)                 # (d_ff,)
    dW1 = tokens.T @ dz                  # (d, d_ff)
    dx = dz @ W1.T                       # (n, d)
    return dx.reshape(x.shape), dW1, db1, dW2, db2


def _times_slope(slope):
    """A block formula for blockwise(..., z, dh): dh *= act'(z), with act'(z) one block long."""
    def formula(z, dh):
        dh *= slope(z, np.empty_like(z))
    return formula


def swiglu_backward(x: np.ndarray, W_gate: np.ndarray, W_up: np.ndarray, W_down: np.ndarray,
                    dy: np.ndarray) -> tuple[np.ndarray, ...]:
    """The gradients through y = swiglu_ffn(x), given dy = dL/dy: returns (dx, dW_gate, dW_up, dW_down).

    With g = x W_gate, u = x W_up, a = silu(g) * u and y = a W_down, the chain rule gives
        dW_down = a^T dy, da = dy W_down^T
        du = da * silu(g), dg = da * u * silu'(g)
        dW_up = x^T du, dW_gate = x^T dg, dx = du W_up^T + dg W_gate^T
    x is (..., d) and dy has y's shape; dtype as in swiglu_ffn. Three (n, d_ff) arrays at most: g and u, and a,
    over which da is written; du and dg are then written over g and u, a block at a time.
    """
    x, (W_gate, W_up, W_down, dy) = _as_float(x, W_gate, W_up, W_down, dy)
    if dy.shape != x.shape[:-1] + W_down.shape[-1:]:
        raise ValueError(f"dy must have the output's shape {x.shape[:-1] + W_down.shape[-1:]}, got {dy.shape}")
    tokens = x.reshape(-1, x.shape[-1])  # (n, d)      leading dims flattened: n tokens
    dy_tokens = dy.reshape(-1, dy.shape[-1])          # (n, d)
    g = tokens @ W_gate                  # (n, d_ff)   gate path
    u = tokens @ W_up                    # (n, d_ff)   value path
    a = np.empty_like(g)
    blockwise(_swiglu_hidden, g, u, a)   # (n, d_ff)   a = silu(g) * u
    dW_down = a.T @ dy_tokens            # (d_ff, d)
    da = np.matmul(dy_tokens, W_down.T, out=a)        # (n, d_ff)   into a's memory
    blockwise(_swiglu_split, g, u, da)   # (n, d_ff)   du written over g, dg over u, by blocks
    del a, da
    du, dg = g, u                        # (n, d_ff)   each in the other's old memory
    dW_up = tokens.T @ du                # (d, d_ff)
    dW_gate = tokens.T @ dg              # (d, d_ff)
    dx = du @ W_up.T                     # (n, d)
    dx += dg @ W_gate.T                  # (n, d)      both paths reach x
    return dx.reshape(x.shape), dW_gate, dW_up, dW_down


def _swiglu_hidden(g, u, a):
    """One block: a = silu(g) * u."""
    with np.errstate(over="ignore", under="ignore"):
        np.exp(-g, out=a)                # e^-g
    a += 1.0
    np.divide(g, a, out=a)               # silu(g) = g / (1 + e^-g)
    a *= u


def _swiglu_split(g, u, da):
    """One block: du = da * silu(g) written over g, dg = da * u * silu'(g) written over u (no copies)."""
    s = np.negative(g)
    with np.errstate(over="ignore"):
        np.exp(s, out=s)                 # e^-g, inf for very negative g
    s += 1.0
    np.reciprocal(s, out=s)              # sigmoid(g)
    slope = np.subtract(1.0, s)
    slope *= g
    slope += 1.0
    slope *= s                           # silu'(g) = sigmoid (1 + g (1 - sigmoid))
    g *= s                               # silu(g), over g: g is done with
    g *= da                              # du = da * silu(g)
    u *= slope
    u *= da                              # dg = da * u * silu'(g)


def _as_float(x, *params):
    """x as an array, and params cast to its dtype: x's own if floating point, else float64 (or wider).
    Array subclasses pass through (asanyarray): lesson 03's grader hands in a W1 that records its products."""
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(np.result_type(x, *(np.asanyarray(p).dtype for p in params), np.float64))
    return x, [np.asanyarray(p, dtype=x.dtype) for p in params]


def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along `axis`."""
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def route(logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each token's k experts with the largest logits (best first) and their weights.

    logits is (n, n_experts). Returns experts, an (n, k) array of indices, and weights, the (n, k) softmax
    of those k logits, which sum to 1 on every row. Ties go to the lower expert index (a stable sort).
    """
    experts = np.argsort(-logits, axis=-1, kind="stable")[:, :k]      # (n, k) expert indices, best first
    weights = softmax(np.take_along_axis(logits, experts, axis=-1))    # (n, k) each row sums to 1
    return experts, weights


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
    chosen, weights = route(logits, k)                                # (n, k) experts and their weights
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
