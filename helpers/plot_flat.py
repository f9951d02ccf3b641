"""Figures for lesson 02: a matrix laid out as a flat row-major list, and the updates an FFN adds to x."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch, Rectangle

_ROW_COLOURS = plt.get_cmap("tab10").colors


def _cell(ax, left, bottom, text, colour, text_colour="black"):
    ax.add_patch(Rectangle((left, bottom), 0.94, 0.9, facecolor=colour, edgecolor="0.25", lw=0.8))
    ax.text(left + 0.47, bottom + 0.45, text, ha="center", va="center", fontsize=9, color=text_colour)


def draw_row_major(n_rows: int, n_cols: int, ax=None):
    """An n_rows x n_cols matrix (top) and the same elements as one flat row-major list (bottom).

    Each cell shows its (i, j); the flat list shows each position under its cell. Colours mark the rows, and
    an arrow joins each row to the position where it starts, i * n_cols.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4.2))
    n = n_rows * n_cols
    grid_left = (n - n_cols) / 2                 # centre the matrix over the flat list
    grid_bottom = 2.4                            # row 0 at the top
    for i in range(n_rows):
        colour = _ROW_COLOURS[i % len(_ROW_COLOURS)]
        for j in range(n_cols):
            _cell(ax, grid_left + j, grid_bottom + (n_rows - 1 - i), f"({i}, {j})", colour, "white")
            k = i * n_cols + j
            _cell(ax, k, 0.0, f"({i}, {j})", colour, "white")
            ax.text(k + 0.47, -0.35, str(k), ha="center", va="center", fontsize=9)
        row_centre = grid_bottom + n_rows - 0.55 - i
        ax.annotate("", xy=(i * n_cols + 0.47, 0.95), xytext=(grid_left - 0.05, row_centre),
                    arrowprops={"arrowstyle": "->", "color": colour, "lw": 1.4,
                                "connectionstyle": "arc3,rad=0.15"})
        ax.text(i * n_cols + 0.05, -0.75, f"row {i} starts at {i}·{n_cols} = {i * n_cols}", fontsize=9,
                color=colour, ha="left", va="top")
    ax.text(grid_left + n_cols + 0.3, grid_bottom + n_rows / 2, f"{n_rows} x {n_cols} matrix\n"
            f"element (i, j)", va="center", fontsize=10)
    ax.text(n + 0.2, 0.45, "flat list", va="center", fontsize=10)
    ax.set_xlim(-0.5, n + 2.5)
    ax.set_ylim(-1.3, grid_bottom + n_rows + 0.2)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_xlabel(f"position in the flat list: element (i, j) sits at i·{n_cols} + j")
    ax.set_ylabel("matrix (top), list (bottom)")
    ax.set_title(f"Row-major storage: the rows of a {n_rows} x {n_cols} matrix laid end to end")
    ax.legend(handles=[Patch(facecolor=_ROW_COLOURS[i % len(_ROW_COLOURS)], edgecolor="0.25", label=f"row {i}")
                       for i in range(n_rows)], loc="upper left", fontsize=9, title="colour", title_fontsize=9)
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    return ax


def draw_update_histograms(updates: dict[str, list[float]], title: str, ax=None):
    """Histograms of the numbers an FFN adds to x (one per coordinate and token), one per FFN (the first filled,
    the second outlined), with 0 marked."""
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3.8))
    values = np.concatenate([np.asarray(v, dtype=float) for v in updates.values()])
    width = (values.max() - values.min()) / 40 or 1.0
    bins = width * np.arange(np.floor(values.min() / width), np.ceil(values.max() / width) + 1)  # 0 is an edge
    # The first histogram filled, the second an outline drawn over it: no blended colour where they overlap,
    # and the two differ in fill and line style as well as in colour.
    styles = ({"histtype": "stepfilled", "color": "tab:blue", "alpha": 0.5},
              {"histtype": "step", "color": "tab:red", "linewidth": 2.0, "linestyle": "--"})
    for (label, update), style in zip(updates.items(), styles):
        ax.hist(update, bins=bins, label=label, **style)
    ax.axvline(0.0, color="black", lw=1.2, ls=":", label="0: no change to x")
    top = ax.get_ylim()[1]
    ax.text(-0.02 * (bins[-1] - bins[0]), top * 0.6, "left of 0, x + FFN(x) < x:\nthe coordinate goes down",
            fontsize=9, va="center", ha="right")
    ax.set_xlabel("FFN(x)_k, the amount added to coordinate k of x")
    ax.set_ylabel("number of (token, coordinate) pairs")
    ax.set_title(title)
    ax.legend(loc="upper right")
    return ax
