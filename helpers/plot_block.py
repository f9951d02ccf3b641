"""Figures for lesson 07's residual block: what a sublayer adds to each coordinate of x."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def plot_residual_updates(updates: dict[str, np.ndarray], bins: int = 40):
    """Histograms of (block output - x), one panel per FFN, with zero marked: left of it, x was pushed down."""
    fig, axes = plt.subplots(1, len(updates), figsize=(5 * len(updates), 3.5), sharey=True, squeeze=False)
    limit = max(float(np.abs(u).max()) for u in updates.values())
    edges = np.linspace(-limit, limit, bins + 1)
    for ax, (title, update) in zip(axes[0], updates.items()):
        ax.hist(np.ravel(update), bins=edges, color="tab:blue", label="coordinates of all tokens")
        ax.axvline(0.0, color="black", linestyle="--", label="0: left of it, x goes down")
        ax.set_title(title)
        ax.legend(loc="upper right", fontsize=9)
        ax.set_xlabel("update to one coordinate, FFN(LN(x))")
    axes[0, 0].set_ylabel("coordinates")
    fig.suptitle("What the block adds to x: left of the dashed line, a coordinate goes down")
    fig.tight_layout()
    return fig
