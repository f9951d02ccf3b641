"""Figures that more than one cell (or lesson) draws."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

_CMAP = plt.get_cmap("RdBu_r")


def _strip(ax, values, row, label, limit, zeroed=()):
    """One row of annotated cells, centred horizontally; cells in `zeroed` are hatched and outlined."""
    n = len(values)
    left = -n / 2
    for k, v in enumerate(values):
        colour = _CMAP(0.5 + 0.5 * float(v) / limit)
        ax.add_patch(Rectangle((left + k, row), 0.92, 0.8, facecolor=colour, edgecolor="0.3", lw=0.8))
        if k in zeroed:
            ax.add_patch(Rectangle((left + k, row), 0.92, 0.8, facecolor="none", edgecolor="crimson",
                                   hatch="///", lw=2.0))
        shade = 0.5 + 0.5 * abs(float(v)) / limit  # dark cells get white text
        label_text = "0" if k in zeroed else f"{float(v):+.2f}"
        ax.text(left + k + 0.46, row + 0.4, label_text, ha="center", va="center", fontsize=8,
                color="white" if shade > 0.8 else "black")
    ax.text(-4.6, row + 0.4, label, ha="right", va="center", fontsize=10)


def draw_ffn_strips(x, z, h, y, title: str, activation: str = "ReLU", ax=None):
    """Input, pre-activation, hidden and output of one token as four strips of annotated cells.

    Hidden units that the activation set to exactly zero are hatched and outlined in red.
    """
    x, z, h, y = (np.asarray(v, dtype=float) for v in (x, z, h, y))
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 4.6))
    limit = max(float(np.abs(np.concatenate([x, z, h, y])).max()), 1e-9)
    zeroed = set(np.flatnonzero(h == 0).tolist())
    rows = [(x, 4.5, f"input x ({len(x)})", ()), (z, 3.0, f"pre-activation z ({len(z)})", ()),
            (h, 1.5, f"hidden h ({len(h)})", zeroed), (y, 0.0, f"output y ({len(y)})", ())]
    for values, row, label, marked in rows:
        _strip(ax, values, row, label, limit, marked)
    for (top, bottom, text) in ((4.5, 3.8, "x @ W1 + b1"), (3.0, 2.3, activation),
                                (1.5, 0.8, "h @ W2 + b2")):
        ax.annotate("", xy=(0, bottom), xytext=(0, top), arrowprops={"arrowstyle": "->", "color": "0.4"})
        ax.text(0.25, (top + bottom) / 2, text, va="center", fontsize=9, color="0.25")
    ax.text(4.3, 1.9, f"{len(zeroed)} of {len(h)} zeroed", color="crimson", fontsize=10, ha="left")
    ax.set_xlim(-9.5, 6.5)
    ax.set_ylim(-0.3, 5.5)
    ax.set_xlabel("unit index within each layer (cells centred; colour: blue negative, red positive)")
    ax.set_ylabel("layer, read top to bottom")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title)
    return ax
