"""Figures for lesson 03: speed of loops against arrays, where the parameters sit, and cost against T."""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np


def plot_speedup(widths: Sequence[int], t_python: Sequence[float], t_numpy: Sequence[float], ax=None):
    """Time per call of the pure-Python and the NumPy FFN against the width d, log-log, speedups marked."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    ax.loglog(widths, t_python, "o-", label="pure Python (loops over lists)")
    ax.loglog(widths, t_numpy, "s-", label="NumPy (two matmuls)")
    for d, slow, fast in zip(widths, t_python, t_numpy):
        ax.annotate(f"{slow / fast:,.0f}x", (d, np.sqrt(slow * fast)), ha="center", fontsize=9)
    ax.set_xticks(list(widths), [str(d) for d in widths])
    ax.set_xlabel("model width d (hidden width d_ff = 4d)")
    ax.set_ylabel("seconds per token (best run)")
    ax.set_title("One token through the FFN: loops against arrays")
    ax.legend()
    return ax


def plot_parameters(names: Sequence[str], attention: Sequence[int], ffn: Sequence[int],
                    attention_label: str = "attention, 4 projections (4d²)", ffn_label: str = "FFN, W1 + W2 (8d²)"):
    """Per-block weights of attention's projections and the FFN (the matrices: the biases, embeddings and
    cross-attention are not counted): absolute (log scale) and as shares of the two (a block with one attention
    and one FFN, as in GPT-2).
    In the shares the FFN's bar stands on the axis, so the dashed line at 2/3 marks the top of a two-thirds
    share."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    where = np.arange(len(names))
    left.bar(where - 0.2, attention, 0.4, label=attention_label, color="tab:blue")
    left.bar(where + 0.2, ffn, 0.4, label=ffn_label, color="tab:orange", hatch="//", edgecolor="white")
    left.set_yscale("log")
    left.set_xticks(where, names)
    left.set_ylabel("weights per block (log scale)")
    left.set_title("Weights per block (biases left out)")
    left.legend(fontsize=8)
    share = np.asarray(ffn, float) / (np.asarray(ffn, float) + np.asarray(attention, float))
    right.bar(where, share, 0.5, label="FFN", color="tab:orange", hatch="//", edgecolor="white")
    right.bar(where, 1 - share, 0.5, bottom=share, label="attention", color="tab:blue")
    for i, s in enumerate(share):
        right.text(i, s / 2, f"{s:.2%}", ha="center", va="center", color="black", fontsize=10,
                   bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.5})
    right.axhline(2 / 3, color="0.2", ls="--", lw=1.2, label="two thirds")
    right.set_xticks(where, names)
    right.set_ylim(0, 1.22)
    right.set_ylabel("share of the weights of one attention + one FFN")
    right.set_title("In a block with one attention and one FFN,\nthe FFN holds two thirds of the weights at every size")
    right.legend(loc="upper center", ncol=3, fontsize=8)
    fig.tight_layout()
    return fig


def plot_cost(lengths: Sequence[int], t_ffn: Sequence[float], t_attention: Sequence[float],
              slope_ffn: float, slope_attention: float, crossover_flops: float, ax=None):
    """Measured time of the FFN and of attention's score and mixing steps against T, log-log, with the
    fitted slopes and the length at which the FLOP counts cross (a dashed line, named in the legend)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    ax.loglog(lengths, t_ffn, "o-", label=f"FFN (fitted slope {slope_ffn:.2f})")
    ax.loglog(lengths, t_attention, "s-", label=f"attention scores + mixing (fitted slope {slope_attention:.2f})")
    ax.axvline(crossover_flops, color="0.3", ls="--", lw=1, label=f"FLOP counts equal at T = {crossover_flops:,.0f}")
    ax.set_xticks(list(lengths), [str(t) for t in lengths])
    ax.set_xlabel("sequence length T (tokens)")
    ax.set_ylabel("seconds per call (best run)")
    ax.set_title("Cost against sequence length: linear FFN, quadratic attention")
    ax.legend(loc="upper left")  # the lines rise to the right, so the upper left stays clear
    return ax
