"""A GPT-2-style decoder in NumPy, forward and backward, for lesson 09's small language model.

The model, in GPT-2's order (pre-LN blocks, as in helpers.block):
    x = wte[ids] + wpe[:T]                         learned token and position embeddings
    for each layer:  x = x + attn(LN1(x))          causal multi-head self-attention
                     x = x + FFN(LN2(x))           helpers.ffn.ffn with GPT-2's tanh GELU
    logits = LN_f(x) @ wte^T                       unembedding tied to the token embedding, as GPT-2's lm_head

Row-vector convention as in helpers.ffn and GPT-2's checkpoints: a token is a row, every weight is (in, out).
Parameters live in one flat dict of arrays (PARAM_NAMES), named as below, so that Adam, np.savez and the
conversion to GPT-2's names (helpers.lm.to_gpt2_state_dict) each need one loop.

The backward pass extends lesson 08's: the FFN's own is helpers.ffn.ffn_backward; layer norm, attention
(softmax included), the embeddings and the tied unembedding are written out here, one line per step of the
chain rule. tests/test_lm.py checks every gradient against central differences (helpers.gradcheck).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from helpers.ffn import ffn, ffn_backward, gelu_tanh

LN_EPS = 1e-5               # GPT-2's layer_norm_epsilon


_BLAS = []                  # a threadpoolctl controller, made on first use (it looks up the loaded BLAS once)


def single_blas_thread(fn):
    """fn, run with BLAS on one thread. This model's matrices are small (a few hundred rows of 64 or 256 at
    most), so a second thread cannot pay for itself, and on a machine busy with other work OpenBLAS's threads
    waiting for each other made training, helpers.lm.fact_predictions and edit_fact ten times slower
    (measured). Training owes its determinism to it too: on one thread every sum runs in one order, whatever
    OPENBLAS_NUM_THREADS says. A controller kept from the first call makes the limit cost about 3 microseconds
    (helpers.measure.one_blas_thread looks the library up each time, about 250)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not _BLAS:
            from threadpoolctl import ThreadpoolController   # not at import (helpers/__init__.py)
            _BLAS.append(ThreadpoolController())
        with _BLAS[0].limit(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper


# One layer's parameters, in (in, out) orientation; "h{i}." is put in front of each for layer i.
LAYER_PARAMS = ("ln1_g", "ln1_b", "W_qkv", "b_qkv", "W_o", "b_o", "ln2_g", "ln2_b", "W1", "b1", "W2", "b2")


def param_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """The name and shape of every parameter for a config with vocab_size, n_ctx, d, n_head, d_ff, n_layer."""
    V, d, d_ff = config["vocab_size"], config["d"], config["d_ff"]
    shapes = {"wte": (V, d), "wpe": (config["n_ctx"], d)}
    layer = {"ln1_g": (d,), "ln1_b": (d,), "W_qkv": (d, 3 * d), "b_qkv": (3 * d,), "W_o": (d, d), "b_o": (d,),
             "ln2_g": (d,), "ln2_b": (d,), "W1": (d, d_ff), "b1": (d_ff,), "W2": (d_ff, d), "b2": (d,)}
    for i in range(config["n_layer"]):
        shapes.update({f"h{i}.{name}": layer[name] for name in LAYER_PARAMS})
    shapes.update({"lnf_g": (d,), "lnf_b": (d,)})
    return shapes


def init_params(config: dict, rng: np.random.Generator, dtype=np.float64) -> dict[str, np.ndarray]:
    """GPT-2's initialisation as Hugging Face's GPT2PreTrainedModel._init_weights does it: weights and embeddings
    normal with std 0.02, the two projections that write into the residual stream (W_o, W2) with std
    0.02 / sqrt(2 n_layer) (the paper's 1/sqrt(N) for N residual layers), biases 0, layer norm gains 1."""
    params = {}
    for name, shape in param_shapes(config).items():
        short = name.split(".")[-1]
        if short.endswith("_g"):
            params[name] = np.ones(shape, dtype)
        elif short.startswith("b") or short.endswith("_b"):
            params[name] = np.zeros(shape, dtype)
        else:
            std = 0.02 / math.sqrt(2 * config["n_layer"]) if short in ("W_o", "W2") else 0.02
            params[name] = rng.normal(0.0, std, size=shape).astype(dtype)
    return params


# ---------------------------------------------------------------- layer norm
def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, tuple]:
    """GPT-2's LayerNorm over the last axis, and what its backward pass needs (xhat, 1/std)."""
    mean = x.mean(axis=-1, keepdims=True)                  # (..., 1)
    var = x.var(axis=-1, keepdims=True)                    # (..., 1) population variance, as nn.LayerNorm
    rstd = 1.0 / np.sqrt(var + LN_EPS)                     # (..., 1)
    xhat = (x - mean) * rstd                               # (..., d) mean 0, variance 1
    return xhat * g + b, (xhat, rstd)


def layer_norm_backward(dy: np.ndarray, g: np.ndarray, cache: tuple) -> tuple[np.ndarray, ...]:
    """(dx, dg, db) for y = LN(x) g + b, given dy. The mean and the variance depend on every feature, so dx
    is dxhat minus its mean, minus xhat times the mean of dxhat * xhat, all scaled by 1/std."""
    xhat, rstd = cache
    dg = (dy * xhat).reshape(-1, dy.shape[-1]).sum(axis=0)   # (d,)
    db = dy.reshape(-1, dy.shape[-1]).sum(axis=0)            # (d,)
    dxhat = dy * g                                          # (..., d)
    dx = dxhat - dxhat.mean(axis=-1, keepdims=True) - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)
    return dx * rstd, dg, db


# ---------------------------------------------------------------- causal self-attention
def _heads(x: np.ndarray, n_head: int) -> np.ndarray:
    """(B, T, d) -> (B, n_head, T, d / n_head): each head its own slice of the features."""
    B, T, d = x.shape
    return x.reshape(B, T, n_head, d // n_head).transpose(0, 2, 1, 3)


def _merge(x: np.ndarray) -> np.ndarray:
    """(B, n_head, T, hd) -> (B, T, n_head * hd), the inverse of _heads."""
    B, H, T, hd = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * hd)


def attention(x: np.ndarray, W_qkv, b_qkv, W_o, b_o, n_head: int) -> tuple[np.ndarray, tuple]:
    """Causal multi-head self-attention as GPT-2's: q, k, v from one (d, 3d) projection (c_attn), each head
    softmax(q k^T / sqrt(hd)) v over the tokens up to its own, heads concatenated, then W_o (c_proj)."""
    B, T, d = x.shape
    qkv = x @ W_qkv + b_qkv                                # (B, T, 3d)
    q, k, v = (_heads(part, n_head) for part in np.split(qkv, 3, axis=-1))   # (B, H, T, hd) each
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])                 # (B, H, T, T)
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)  # token t sees 0..t
    scores -= scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)                     # (B, H, T, T) each row sums to 1
    o = _merge(p @ v)                                      # (B, T, d) heads side by side
    return o @ W_o + b_o, (x, q, k, v, p, o)


def attention_backward(dy: np.ndarray, W_qkv, W_o, cache: tuple) -> tuple[np.ndarray, ...]:
    """(dx, dW_qkv, db_qkv, dW_o, db_o) for y = attention(x), given dy. The softmax's backward pass:
    dscores = p * (dp - sum(dp * p)) along each row."""
    x, q, k, v, p, o = cache
    d = x.shape[-1]
    dW_o = o.reshape(-1, d).T @ dy.reshape(-1, d)          # (d, d)
    db_o = dy.reshape(-1, d).sum(axis=0)                   # (d,)
    do = _heads(dy @ W_o.T, q.shape[1])                    # (B, H, T, hd)
    dp = do @ v.swapaxes(-1, -2)                           # (B, H, T, T)
    dv = p.swapaxes(-1, -2) @ do                           # (B, H, T, hd)
    dscores = p * (dp - (dp * p).sum(axis=-1, keepdims=True))   # (B, H, T, T) 0 where masked, as p is
    dscores /= math.sqrt(q.shape[-1])
    dq = dscores @ k                                       # (B, H, T, hd)
    dk = dscores.swapaxes(-1, -2) @ q                      # (B, H, T, hd)
    dqkv = np.concatenate([_merge(dq), _merge(dk), _merge(dv)], axis=-1)   # (B, T, 3d)
    dW_qkv = x.reshape(-1, d).T @ dqkv.reshape(-1, 3 * d)  # (d, 3d)
    db_qkv = dqkv.reshape(-1, 3 * d).sum(axis=0)           # (3d,)
    return dqkv @ W_qkv.T, dW_qkv, db_qkv, dW_o, db_o


# ---------------------------------------------------------------- the model
def forward(params: dict, ids: np.ndarray, config: dict, ffn_delta: tuple | None = None) -> tuple[np.ndarray, dict]:
    """Logits (B, T, vocab) for token ids (B, T), and the cache the backward pass reads.

    ffn_delta = (layer, delta) adds delta (broadcast to (B, T, d)) to that layer's FFN output: a change of the
    value the FFN writes, used to find the value a fact edit should write (helpers.lm.edit_fact).
    The cache keeps each layer's FFN input, LN2(x), under "ffn_in", for reading the FFN's hidden units.
    """
    T = ids.shape[-1]
    x = params["wte"][ids] + params["wpe"][:T]             # (B, T, d)
    cache = {"ids": ids, "layers": [], "ffn_in": []}
    for i in range(config["n_layer"]):
        p = {name: params[f"h{i}.{name}"] for name in LAYER_PARAMS}
        a_in, ln1 = layer_norm(x, p["ln1_g"], p["ln1_b"])
        a_out, att = attention(a_in, p["W_qkv"], p["b_qkv"], p["W_o"], p["b_o"], config["n_head"])
        x = x + a_out                                      # (B, T, d) residual
        f_in, ln2 = layer_norm(x, p["ln2_g"], p["ln2_b"])  # (B, T, d) what the FFN reads
        f_out = ffn(f_in, p["W1"], p["b1"], p["W2"], p["b2"], activation=gelu_tanh)   # (B, T, d)
        if ffn_delta is not None and ffn_delta[0] == i:
            f_out = f_out + ffn_delta[1]
        x = x + f_out                                      # (B, T, d) residual
        cache["layers"].append((ln1, att, ln2, f_in))
        cache["ffn_in"].append(f_in)
    xf, lnf = layer_norm(x, params["lnf_g"], params["lnf_b"])   # (B, T, d)
    cache["lnf"], cache["xf"] = lnf, xf
    return xf @ params["wte"].T, cache                     # (B, T, vocab) tied unembedding


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of next-token targets (B, T), and its gradient with respect to the logits."""
    z = logits - logits.max(axis=-1, keepdims=True)        # (B, T, V) stable
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_p, targets[..., None], axis=-1)   # (B, T, 1)
    dlogits = np.exp(log_p)                                # softmax
    np.put_along_axis(dlogits, targets[..., None], np.take_along_axis(dlogits, targets[..., None], -1) - 1, -1)
    return float(-picked.mean()), dlogits / targets.size   # d(mean) / dlogits = (p - onehot) / N


def backward(params: dict, dlogits: np.ndarray, cache: dict, config: dict) -> tuple[dict, list]:
    """The gradient of every parameter given dL/dlogits, and dL/d(each layer's FFN output) (B, T, d)."""
    grads = {}
    wte = params["wte"]
    d = wte.shape[1]
    grads["wte"] = dlogits.reshape(-1, wte.shape[0]).T @ cache["xf"].reshape(-1, d)   # (V, d) unembedding
    dx, grads["lnf_g"], grads["lnf_b"] = layer_norm_backward(dlogits @ wte, params["lnf_g"], cache["lnf"])
    d_ffn_out = [None] * config["n_layer"]
    for i in reversed(range(config["n_layer"])):
        p = {name: params[f"h{i}.{name}"] for name in LAYER_PARAMS}
        ln1, att, ln2, f_in = cache["layers"][i]
        g = {}
        d_ffn_out[i] = dx                                  # x + FFN(...): the FFN's output gets dx as it is
        df_in, g["W1"], g["b1"], g["W2"], g["b2"] = ffn_backward(f_in, p["W1"], p["b1"], p["W2"], p["b2"], dx,
                                                                 activation=gelu_tanh)   # lesson 08's
        dln2, g["ln2_g"], g["ln2_b"] = layer_norm_backward(df_in, p["ln2_g"], ln2)
        dx = dx + dln2                                     # both paths of the residual
        da_in, g["W_qkv"], g["b_qkv"], g["W_o"], g["b_o"] = attention_backward(dx, p["W_qkv"], p["W_o"], att)
        dln1, g["ln1_g"], g["ln1_b"] = layer_norm_backward(da_in, p["ln1_g"], ln1)
        dx = dx + dln1
        grads.update({f"h{i}.{name}": g[name] for name in LAYER_PARAMS})
    ids = cache["ids"]
    grads["wpe"] = np.zeros_like(params["wpe"])
    grads["wpe"][: ids.shape[-1]] = dx.reshape(-1, ids.shape[-1], d).sum(axis=0)   # (T, d) every sequence
    np.add.at(grads["wte"], ids.reshape(-1), dx.reshape(-1, d))   # embedding rows, in a fixed order
    return grads, d_ffn_out


def loss_and_grads(params: dict, ids: np.ndarray, targets: np.ndarray, config: dict) -> tuple[float, dict]:
    """Mean next-token cross-entropy of a batch and every parameter's gradient."""
    logits, cache = forward(params, ids, config)
    loss, dlogits = cross_entropy(logits, targets)
    grads, _ = backward(params, dlogits, cache, config)
    return loss, grads
