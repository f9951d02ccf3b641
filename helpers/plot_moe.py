"""Figures for lesson 07: how many tokens each expert receives."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def plot_expert_load(loads: dict[str, np.ndarray], capacity: int, even: float):
    """One bar chart per routing (title -> tokens per expert), with the even share and the capacity marked.

    Bars above the capacity are red: those experts would have to drop the tokens beyond it.
    """
    fig, axes = plt.subplots(1, len(loads), figsize=(5 * len(loads), 3.8), sharey=True, squeeze=False)
    for ax, (title, load) in zip(axes[0], loads.items()):
        experts = np.arange(len(load))
        colours = ["tab:red" if count > capacity else "tab:blue" for count in load]
        ax.bar(experts, load, color=colours)
        ax.axhline(even, color="0.2", linestyle="--", label=f"even share ({even:.0f})")
        ax.axhline(capacity, color="tab:red", linestyle=":", label=f"capacity ({capacity})")
        ax.set_xticks(experts)
        ax.set_xlabel("expert")
        ax.set_title(title)
    axes[0, 0].set_ylabel("tokens routed to the expert")
    axes[0, 0].legend(loc="upper left", fontsize=9)
    fig.suptitle("Top-2 routing of the same random router: load per expert")
    fig.tight_layout()
    return fig
