"""Figures for lesson 07: how many tokens each expert receives."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch


def plot_expert_load(loads: dict[str, np.ndarray], capacity: int, even: float):
    """One bar chart per routing (title -> tokens per expert), with the even share and the capacity marked.

    Bars above the capacity are red: those experts would have to drop the tokens beyond it.
    """
    fig, axes = plt.subplots(1, len(loads), figsize=(5 * len(loads), 4.3), sharey=True, squeeze=False)
    for ax, (title, load) in zip(axes[0], loads.items()):
        load = np.asarray(load)
        experts = np.arange(len(load))
        ax.bar(experts, load, color=np.where(load > capacity, "tab:red", "tab:blue"))
        ax.axhline(even, color="0.2", linestyle="--")
        ax.axhline(capacity, color="tab:red", linestyle=":")
        ax.set_xticks(experts)
        ax.set_xlabel("expert")
        ax.set_title(title)
    axes[0, 0].set_ylabel("tokens routed to the expert")
    key = [Patch(color="tab:blue", label="expert within capacity"),
           Patch(color="tab:red", label="expert over capacity: drops tokens"),
           Line2D([], [], color="0.2", linestyle="--", label=f"even share ({even:.0f})"),
           Line2D([], [], color="tab:red", linestyle=":", label=f"capacity ({capacity})")]
    fig.legend(handles=key, loc="lower center", ncol=len(key), fontsize=9, frameon=False)
    fig.suptitle("Top-2 routing of the same random router: load per expert")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig
