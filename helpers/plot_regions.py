"""Decision regions of 2-D binary classifiers, drawn side by side."""
from __future__ import annotations

from typing import Callable

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

_REGIONS = ListedColormap(["#c6dbef", "#fdd0a2"])   # predicted 0 (blue), predicted 1 (orange)


def plot_decision_regions(ax, prob: Callable[[np.ndarray], np.ndarray], X: np.ndarray, y: np.ndarray,
                          title: str, lim: float = 3.0, n: int = 241) -> None:
    """Shade where prob(points) > 0.5, draw the probability's level lines, and scatter the labelled points.

    prob maps an (m, 2) array of points to m probabilities of label 1.
    """
    grid = np.linspace(-lim, lim, n)
    xx, yy = np.meshgrid(grid, grid)
    p = prob(np.stack([xx.ravel(), yy.ravel()], axis=1)).reshape(xx.shape)           # (n, n)
    ax.pcolormesh(xx, yy, (p > 0.5).astype(float), cmap=_REGIONS, vmin=0, vmax=1, shading="auto")
    levels = [v for v in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9) if p.min() < v < p.max()]
    if levels:
        lines = ax.contour(xx, yy, p, levels=levels, colors="0.35", linewidths=0.7)
        ax.clabel(lines, fmt="%.1f", fontsize=7)
    ax.scatter(*X[y == 1].T, s=10, c="#d94801", label="label 1 (disc)")
    ax.scatter(*X[y == 0].T, s=10, c="#2171b5", label="label 0 (ring)")
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    ax.set_title(title, fontsize=10)


def plot_side_by_side(models: list[tuple[str, Callable[[np.ndarray], np.ndarray]]], X: np.ndarray,
                      y: np.ndarray, suptitle: str):
    """One panel per (title, prob) pair, sharing the data; returns the figure."""
    fig, axes = plt.subplots(1, len(models), figsize=(4.4 * len(models), 4.6))
    for ax, (title, prob) in zip(np.atleast_1d(axes), models):
        plot_decision_regions(ax, prob, X, y, title)
    first = np.atleast_1d(axes)[0]
    handles, _ = first.get_legend_handles_labels()
    handles += [Patch(color=_REGIONS.colors[1], label="predicted label 1"),
                Patch(color=_REGIONS.colors[0], label="predicted label 0"),
                plt.Line2D([], [], color="0.35", lw=0.7, label="probability of label 1")]
    first.legend(handles=handles, loc="upper left", fontsize=8, framealpha=0.9)
    fig.suptitle(suptitle)
    fig.tight_layout()
    return fig
