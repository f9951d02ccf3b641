"""Figures for lesson 06: which units fire, what each writes, and how much a memory can hold."""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator
import numpy as np


def plot_activations(A, row_labels, title: str, col_labels=None, ax=None):
    """Activations h_k (rows: inputs, columns: hidden units) as a grid; white means the unit is silent."""
    A = np.asarray(A, dtype=float)
    if ax is None:
        _, ax = plt.subplots(figsize=(min(2 + 0.22 * A.shape[1], 12), 0.9 + 0.4 * A.shape[0]))
    image = ax.imshow(np.ma.masked_equal(A, 0.0), cmap="viridis", aspect="auto",
                      vmin=0.0, vmax=max(float(A.max()), 1e-9))
    ax.set_facecolor("white")
    ax.set_yticks(range(len(row_labels)), [f"{label} ({int((row > 0).sum())} firing)"
                                           for label, row in zip(row_labels, A)])
    if col_labels is not None:
        ax.set_xticks(range(len(col_labels)), col_labels, rotation=45, ha="right")
    ax.set_xlabel("hidden unit k")
    ax.set_ylabel("input")
    ax.set_title(title)
    plt.colorbar(image, ax=ax, label="activation $h_k$ (white: exactly 0)")
    return ax


def plot_contributions(C, title: str, n_show: int = 12):
    """One token's contributions h_k u_k (rows of C, shape (d_ff, d)), sorted by norm.

    Left: the norm of every unit's contribution, largest first. Right: the n_show largest contributions
    themselves, one row each, coloured by value.
    """
    C = np.asarray(C, dtype=float)
    norms = np.linalg.norm(C, axis=1)
    order = np.argsort(-norms, kind="stable")
    n_firing = int((norms > 0).sum())
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4), gridspec_kw={"width_ratios": [1.4, 1]})
    left.bar(range(n_firing), norms[order[:n_firing]], color="tab:blue", label=f"{n_firing} firing units")
    left.axvline(n_firing - 0.5, color="crimson", ls="--", lw=1,
                 label=f"the other {len(norms) - n_firing} units are silent and write 0")
    left.set_xlim(-1, len(norms))
    left.set_xlabel("units, sorted by the size of what they write")
    left.set_ylabel(r"$\|h_k u_k\|$")
    left.set_title("size of each unit's contribution")
    left.legend(loc="upper right")
    shown = C[order[:n_show]]
    limit = float(np.abs(shown).max())
    image = right.imshow(shown, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
    right.set_yticks(range(len(shown)), [f"unit {k}" for k in order[:n_show]])
    right.xaxis.set_major_locator(MaxNLocator(integer=True))   # coordinates are whole numbers
    right.set_xlabel("output coordinate")
    right.set_ylabel("unit (largest contribution first)")
    right.set_title(f"the {n_show} largest contributions $h_k u_k$")
    plt.colorbar(image, ax=right, label="value (red positive, blue negative, white 0)")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_rebuild_error(kept, errors, n_firing: int, title: str, ax=None):
    """Relative error of the output rebuilt from the top units, against how many units are kept."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(kept, errors, ".-")
    ax.axvline(n_firing, color="crimson", ls="--", lw=1, label=f"all {n_firing} firing units")
    ax.set_xlabel("units kept (largest contributions first)")
    ax.set_ylabel("relative error of the output")
    ax.set_title(title)
    ax.legend()
    return ax


def plot_capacity(fact_counts, fitted, one_per_unit, n_units: int, title: str, ax=None):
    """Recall accuracy against the number of facts for the two memories of kv_memory.capacity_sweep."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.8))
    ax.plot(fact_counts, fitted, "o-", label="shared units, fitted values")
    ax.plot(fact_counts, one_per_unit, "s--", color="0.5", label="one unit per fact (the first facts)")
    ax.axvline(n_units, color="crimson", ls=":", lw=1, label=f"as many facts as units ({n_units})")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("number of facts stored")
    ax.set_ylabel("fraction recalled correctly")
    ax.set_title(title)
    ax.legend(loc="upper right")
    return ax
