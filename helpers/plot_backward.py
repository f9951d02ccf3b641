"""Lesson 08's figure: training loss and units that fire for no training input, for ReLU, GELU and SiLU."""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

# One colour, one line style and one marker per activation, so no curve is told apart by colour alone.
STYLE = {"relu": dict(color="C0", linestyle="-", marker="o"),
         "gelu": dict(color="C1", linestyle="--", marker="s"),
         "silu": dict(color="C2", linestyle=":", marker="^")}
LABEL = {"relu": "ReLU", "gelu": "GELU", "silu": "SiLU"}


def plot_training(scenarios: dict[str, dict[str, dict]], every: int, d_ff: int, title: str) -> Figure:
    """One row per scenario: the training loss (log scale) and the number of units off for every input.

    scenarios maps a scenario's title to {activation name: {"loss": [...], "off": [...]}}, both measured every
    `every` steps from step 0.
    """
    fig, axes = plt.subplots(len(scenarios), 2, figsize=(10, 3.6 * len(scenarios)), squeeze=False)
    for row, (name, runs) in zip(axes, scenarios.items()):
        loss_ax, off_ax = row
        for act, run in runs.items():
            steps = [every * i for i in range(len(run["loss"]))]
            style = dict(STYLE[act], markevery=max(1, len(steps) // 8), markersize=5, label=LABEL[act])
            loss_ax.plot(steps, run["loss"], **style)
            off_ax.plot(steps, run["off"], **style)
        loss_ax.set_yscale("log")
        loss_ax.set_title(f"{name}: training loss")
        loss_ax.set_xlabel("SGD step")
        loss_ax.set_ylabel("mean squared error / 2 (log scale)")
        off_ax.set_title(f"{name}: units off for every input")
        off_ax.set_xlabel("SGD step")
        off_ax.set_ylabel(f"hidden units with z <= 0 for all inputs (of {d_ff})")
        off_ax.set_ylim(-0.5, d_ff + 0.5)
        for ax in row:
            ax.grid(alpha=0.3)
            ax.legend(title="activation", fontsize=8, title_fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig
