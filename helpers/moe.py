"""Routing tokens to experts, and the bookkeeping of who got how many.

helpers.ffn.moe_ffn is the whole layer; this module holds its parts, so a lesson can look at each one:
the experts, the router's choice (route), and the load each expert receives.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from helpers.ffn import route, softmax, swiglu_ffn  # route, the router's choice, is shared with moe_ffn


@dataclass(eq=False)
class SwiGLUExpert:
    """One expert: a SwiGLU FFN (Mixtral's) with its own three matrices, callable on (m, d) rows."""
    W_gate: np.ndarray  # (d, d_ff)
    W_up: np.ndarray    # (d, d_ff)
    W_down: np.ndarray  # (d_ff, d)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return swiglu_ffn(x, self.W_gate, self.W_up, self.W_down)

    def __eq__(self, other) -> bool:
        """Equal weights, value by value (so a copy equals the original, and a changed weight shows)."""
        return isinstance(other, SwiGLUExpert) and all(
            np.array_equal(a, b) for a, b in ((self.W_gate, other.W_gate), (self.W_up, other.W_up),
                                              (self.W_down, other.W_down)))

    __hash__ = None  # mutable arrays inside: not hashable

    @property
    def n_params(self) -> int:
        return self.W_gate.size + self.W_up.size + self.W_down.size


def make_experts(rng: np.random.Generator, n_experts: int, d: int, d_ff: int,
                 dtype=np.float64) -> list[SwiGLUExpert]:
    """n_experts SwiGLU experts with random weights, scaled so each output has roughly unit size."""
    def draw(rows, cols):
        return (rng.standard_normal((rows, cols)) / math.sqrt(rows)).astype(dtype)
    return [SwiGLUExpert(draw(d, d_ff), draw(d, d_ff), draw(d_ff, d)) for _ in range(n_experts)]


def expert_load(experts: np.ndarray, n_experts: int) -> np.ndarray:
    """How many tokens each expert receives: (n_experts,) counts of the (n, k) choices."""
    return np.bincount(np.ravel(experts), minlength=n_experts)


def expert_capacity(n_tokens: int, n_experts: int, k: int, factor: float = 1.25) -> int:
    """Slots per expert when each may take `factor` times its even share of the n_tokens * k choices."""
    return math.ceil(factor * n_tokens * k / n_experts)


def over_capacity(experts: np.ndarray, n_experts: int, capacity: int) -> np.ndarray:
    """(n, k) True where a choice arrives after its expert's `capacity` slots are full (first come, first
    served in token order): a capacity-limited layer drops that choice, and the token gets only the rest."""
    flat = np.ravel(experts)                                           # (n * k,) in token order
    arrivals = np.cumsum(flat[:, None] == np.arange(n_experts), axis=0)  # (n * k, n_experts) running counts
    place = arrivals[np.arange(flat.size), flat]                       # 1 for an expert's first token, ...
    return (place > capacity).reshape(np.shape(experts))


def balance_loss(logits: np.ndarray, experts: np.ndarray) -> float:
    """The Switch Transformer's load-balancing loss, n_experts * sum_e f_e * P_e.

    f_e is the share of the n * k choices that went to expert e and P_e the router's mean softmax probability
    for e. It is 1 when both are even (1 / n_experts each) and grows as routing concentrates.
    """
    n_experts = logits.shape[-1]
    f = expert_load(experts, n_experts) / experts.size                 # (n_experts,) share of choices
    P = softmax(logits).mean(axis=0)                                   # (n_experts,) mean probability
    return float(n_experts * np.sum(f * P))
