"""The FFN read as a key-value memory: the layer as a sum over units, and a tiny memory of facts.

Row-vector convention, as in helpers.ffn: column k of W1 is unit k's key w_k, row k of W2 is its value u_k,
and for one token x of shape (d,)

    FFN(x) = sum_k h_k u_k + b2,   h_k = relu(x . w_k + b1[k]).

The memories below store facts (key -> value) with b2 = 0. Keys and values are unit vectors, one per row.
"""
from __future__ import annotations

import numpy as np

from helpers.ffn import relu

THETA = 0.5  # a stored unit fires only for queries whose cosine with its key exceeds THETA


def _theta(theta: float | None) -> float:
    """theta, or the module's THETA read now (not when the function was defined), so that a change to
    kv_memory.THETA reaches every memory built afterwards."""
    return THETA if theta is None else theta


# --------------------------------------------------------------------------------------------------------
# The layer as a sum over units
# --------------------------------------------------------------------------------------------------------
def ffn_as_sum(x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """FFN(x) for one token x (d,), written as the sum over hidden units of h_k u_k, plus b2."""
    y = np.array(b2, dtype=float)                 # (d,)
    for k in range(W1.shape[1]):
        h_k = relu(x @ W1[:, k] + b1[k])          # how hard unit k fires: one number
        y += h_k * W2[k]                          # it writes its value u_k, scaled by h_k
    return y


def contributions(x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray) -> np.ndarray:
    """What each unit writes for one token x (d,): row k is h_k u_k. Shape (d_ff, d)."""
    a = relu(x @ W1 + b1)                         # (d_ff,)
    return a[:, None] * W2                        # (d_ff, d)


def top_units(x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, k: int) -> list[int]:
    """The k units whose contributions h_k u_k have the largest norm for token x, largest first."""
    norms = np.linalg.norm(contributions(x, W1, b1, W2), axis=1)      # (d_ff,)
    return [int(i) for i in np.argsort(-norms, kind="stable")[:k]]


def rebuild(x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray,
            units: list[int]) -> np.ndarray:
    """FFN(x) rebuilt from the listed units only: b2 plus their contributions."""
    return b2 + contributions(x, W1, b1, W2)[list(units)].sum(axis=0)


# --------------------------------------------------------------------------------------------------------
# A memory of facts, one unit per fact
# --------------------------------------------------------------------------------------------------------
def unit_vectors(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """n made-up embeddings of length 1 in d dimensions, one per row. Shape (n, d)."""
    v = rng.normal(size=(n, d))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def build_memory(keys: np.ndarray, values: np.ndarray, theta: float | None = None):
    """W1 (d, n), b1 (n,), W2 (n, d) storing fact k on unit k.

    Unit k's key is keys[k] scaled by 1 / (1 - theta) with bias -theta / (1 - theta), so for a unit-length
    query q its activation is relu(cos(q, key_k) - theta) / (1 - theta): exactly 1 on its own key and 0 for
    any query whose cosine with key_k is at most theta (THETA unless given). Its value is values[k].
    """
    theta = _theta(theta)
    n = len(keys)
    W1 = keys.T / (1 - theta)                     # (d, n)  column k: key k, scaled
    b1 = np.full(n, -theta / (1 - theta))         # (n,)    the threshold
    W2 = np.array(values, dtype=float)            # (n, d)  row k: value k
    return W1, b1, W2


def store_fact(W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, key: np.ndarray, value: np.ndarray,
               theta: float | None = None):
    """New (W1, b1, W2) with one more unit, built as in build_memory, that stores key -> value."""
    theta = _theta(theta)
    w = key / (1 - theta)                                   # (d,)
    return (np.column_stack([W1, w]),                       # (d, n + 1)
            np.append(b1, -theta / (1 - theta)),            # (n + 1,)
            np.vstack([W2, value]))                         # (n + 1, d)


def share_unit(keys: np.ndarray, values: np.ndarray, a: int, b: int, theta: float | None = None):
    """A memory like build_memory's in which facts a and b share one unit (there is no unit of b's own).

    The shared unit's key is the normalised sum of the two keys and its value is the sum of the two values.
    Returns W1 (d, n - 1), b1 (n - 1,), W2 (n - 1, d) and the list of facts each unit stores.
    """
    theta = _theta(theta)
    W1, b1, W2 = build_memory(keys, values, theta)
    both = keys[a] + keys[b]
    W1[:, a] = both / np.linalg.norm(both) / (1 - theta)
    W2[a] = values[a] + values[b]
    keep = [k for k in range(len(keys)) if k != b]
    stored = [[a, b] if k == a else [k] for k in keep]
    return W1[:, keep], b1[keep], W2[keep], stored


def recall(queries: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray) -> np.ndarray:
    """The memory's output for each query row (b2 = 0). Shape (n_queries, d)."""
    return relu(queries @ W1 + b1) @ W2


def decode(outputs: np.ndarray, values: np.ndarray, tie: float = 1e-9) -> np.ndarray:
    """For each output row, the index of the nearest value row (Euclidean distance).

    Values within `tie` of the nearest count as tied, and a tie goes to the lowest index, so that rounding
    noise cannot decide between two equally near values. An output of exactly zero (no unit fired) has no
    answer: -1.
    """
    distances = np.linalg.norm(outputs[:, None, :] - values[None, :, :], axis=-1)   # (n_queries, n_values)
    nearest = distances <= distances.min(axis=1, keepdims=True) + tie                # (n_queries, n_values)
    answers = nearest.argmax(axis=1)                                                 # first True in each row
    answers[~outputs.any(axis=1)] = -1
    return answers


def accuracy(W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, keys: np.ndarray, values: np.ndarray) -> float:
    """The fraction of facts (keys[i] -> values[i]) that the memory recalls and decodes correctly."""
    answers = decode(recall(keys, W1, b1, W2), values)
    return float(np.mean(answers == np.arange(len(keys))))


# --------------------------------------------------------------------------------------------------------
# More facts than units
# --------------------------------------------------------------------------------------------------------
def fit_memory(keys: np.ndarray, values: np.ndarray, n_units: int, rng: np.random.Generator):
    """A memory of n_units random detectors whose values W2 are fitted by least squares.

    W1 (d, n_units) is drawn from a standard normal and b1 = 0.5, so each key fires most units. W2 is the
    least-squares solution of H W2 = values with H = relu(keys @ W1 + b1) of shape (n_facts, n_units):
    exact when n_facts <= n_units (and H has full rank), a compromise when there are more facts than units.
    """
    W1 = rng.normal(size=(keys.shape[1], n_units))                      # (d, m)
    b1 = np.full(n_units, 0.5)                                          # (m,)
    H = relu(keys @ W1 + b1)                                            # (n_facts, m)
    W2 = np.linalg.lstsq(H, values, rcond=None)[0]                      # (m, d)
    return W1, b1, W2


def capacity_sweep(n_units: int, fact_counts, d: int, n_draws: int, seed: int):
    """Mean recall accuracy for each number of facts, over n_draws seeded sets of facts, of two memories
    with n_units units: fit_memory's, and build_memory's holding the first n_units facts (one unit each).

    Returns two arrays (fitted, one_per_unit), one entry per number of facts.
    """
    fitted, one_per_unit = [], []
    for n_facts in fact_counts:
        scores = []
        for draw in range(n_draws):
            rng = np.random.default_rng([seed, n_facts, draw])
            keys, values = unit_vectors(n_facts, d, rng), unit_vectors(n_facts, d, rng)
            scores.append((accuracy(*fit_memory(keys, values, n_units, rng), keys, values),
                           accuracy(*build_memory(keys[:n_units], values[:n_units]), keys, values)))
        fitted.append(np.mean([s[0] for s in scores]))
        one_per_unit.append(np.mean([s[1] for s in scores]))
    return np.array(fitted), np.array(one_per_unit)
