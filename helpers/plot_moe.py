"""Figures for lesson 07: how many tokens each expert receives."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

KEPT, DROPPED = "tab:blue", "tab:red"
DROPPED_HATCH = "///"


def plot_expert_load(loads: dict[str, np.ndarray], capacity: int, even: float):
    """One bar chart per routing (title -> tokens per expert), with the even share and the capacity marked.

    Each bar is split at the capacity: the part up to it (blue) is what a capacity-limited expert takes, the
    part above it (red and hatched, so that it does not rest on colour alone) the choices it would drop.
    """
    fig, axes = plt.subplots(1, len(loads), figsize=(5 * len(loads), 4.3), sharey=True, squeeze=False)
    for ax, (title, load) in zip(axes[0], loads.items()):
        load = np.asarray(load)
        experts = np.arange(len(load))
        kept = np.minimum(load, capacity)
        ax.bar(experts, kept, color=KEPT)
        over = load > capacity
        if over.any():
            ax.bar(experts[over], (load - capacity)[over], bottom=capacity, color=DROPPED, hatch=DROPPED_HATCH,
                   edgecolor="white", linewidth=0)
        ax.axhline(even, color="0.2", linestyle="--")
        ax.axhline(capacity, color="0.2", linestyle=":")
        ax.set_xticks(experts)
        ax.set_xlabel("expert")
        ax.set_title(title)
    axes[0, 0].set_ylabel("choices routed to the expert")
    key = [Patch(color=KEPT, label="choices the expert takes"),
           Patch(facecolor=DROPPED, hatch=DROPPED_HATCH, edgecolor="white",
                 label="choices beyond its capacity: dropped"),
           Line2D([], [], color="0.2", linestyle="--", label=f"even share ({even:.0f})"),
           Line2D([], [], color="0.2", linestyle=":", label=f"expert capacity ({capacity})")]
    fig.legend(handles=key, loc="lower center", ncol=2, fontsize=9, frameon=False)
    fig.suptitle("Top-2 routing of the same random router: load per expert")
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig
