"""Figures for lesson 04: activations and their slopes, the two GELUs, hidden values, and SwiGLU's gate.

Each function takes the numbers to draw (the notebook computes them) and returns the figure; the notebook
shows it with helpers.figures.show(fig, alt=...).
"""
from __future__ import annotations

from typing import Callable, Mapping

import matplotlib.pyplot as plt
import numpy as np

# One colour and line style per activation, the same in every figure of the lesson.
STYLE = {
    "ReLU": {"color": "0.25", "ls": "-"},
    "GELU": {"color": "tab:blue", "ls": "-"},
    "GELU (tanh)": {"color": "tab:orange", "ls": "--"},
    "SiLU": {"color": "tab:green", "ls": "-"},
    "SwiGLU": {"color": "tab:purple", "ls": "-"},
}


def _style(name: str) -> dict:
    return STYLE.get(name, {})


def plot_activations(z: np.ndarray, values: Mapping[str, np.ndarray], slopes: Mapping[str, np.ndarray]):
    """Left: each activation of z. Right: its slope. `values` and `slopes` map a name to an array like z."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for name, v in values.items():
        left.plot(z, v, lw=2, label=name, **_style(name))
    for name, s in slopes.items():
        right.plot(z, s, lw=2, label=name, **_style(name))
    for ax, what in ((left, "activation act(z)"), (right, "slope act'(z)")):
        ax.axhline(0, color="0.7", lw=0.8)
        ax.axvline(0, color="0.7", lw=0.8)
        ax.set_xlabel("pre-activation z")
        ax.set_ylabel(what)
        ax.legend()
    left.set_title("The activations: all ≈ z for large z, ≈ 0 for very negative z")
    right.set_title("Their slopes: ReLU's jumps at 0, the others are smooth")
    fig.tight_layout()
    return fig


def plot_gelu_gap(z: np.ndarray, exact: np.ndarray, approx: np.ndarray):
    """Left: the exact GELU and the tanh approximation. Right: their difference, with its largest value marked
    at both z and -z (the gap is even in z)."""
    gap = approx - exact
    k = int(np.argmax(np.abs(gap)))
    peaks = (-abs(z[k]), abs(z[k]))
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.plot(z, exact, lw=3, label="GELU, exact z·Φ(z)", **_style("GELU"))
    left.plot(z, approx, lw=2, label="GELU, tanh approximation", **_style("GELU (tanh)"))
    left.set_title("The two GELUs: indistinguishable at this scale")
    left.set_ylabel("activation")
    left.legend()
    right.plot(z, gap, lw=2, color="tab:red", label="tanh form minus exact")
    right.plot(peaks, [gap[k], gap[k]], "o", color="tab:red", label="largest gap")
    label = right.text(0.5, 0.68, f"largest gap\n{gap[k]:.2e}\nat z = ±{abs(z[k]):.2f}", transform=right.transAxes,
                       ha="center", va="center")
    for z_peak, side in zip(peaks, (0.0, 1.0)):  # an arrow from each side of the label to the peak on that side
        right.annotate("", xy=(z_peak, gap[k]), xytext=(side, 0.5), textcoords=label,
                       arrowprops={"arrowstyle": "->", "color": "0.4", "shrinkA": 2, "shrinkB": 4})
    right.axhline(0, color="0.7", lw=0.8)
    right.set_title("tanh approximation minus exact")
    right.set_ylabel("difference")
    right.set_ylim(2.2 * min(gap.min(), 0.0), 1.15 * gap.max())   # room below the curve for the legend
    right.legend(loc="lower center", fontsize=8, ncols=2)
    for ax in (left, right):
        ax.set_xlabel("pre-activation z")
    fig.tight_layout()
    return fig


def plot_hidden_histograms(hidden: Mapping[str, np.ndarray], bins: np.ndarray):
    """One histogram per activation of the hidden values it produced, with the share at exactly 0 in the title."""
    fig, axes = plt.subplots(1, len(hidden), figsize=(4 * len(hidden), 3.4), sharey=True)
    for ax, (name, h) in zip(np.atleast_1d(axes), hidden.items()):
        h = np.ravel(h)
        ax.hist(h, bins=bins, weights=np.full(h.size, 100 / h.size), color=_style(name).get("color"), label=name)
        ax.set_title(f"{name}: {100 * np.mean(h == 0):.1f}% exactly 0")
        ax.legend(loc="upper right")
        ax.set_xlabel("hidden value h")
    np.atleast_1d(axes)[0].set_ylabel("% of hidden values")
    fig.suptitle("Hidden values for the same random pre-activations")
    fig.tight_layout()
    return fig


def plot_gate_map(silu: Callable[[np.ndarray], np.ndarray], limit: float = 4.0, n: int = 201):
    """A SwiGLU hidden unit, silu(g) * v, as a colour map over its gate pre-activation g and value v."""
    g, v = np.meshgrid(np.linspace(-limit, limit, n), np.linspace(-limit, limit, n))
    h = silu(g) * v
    fig, ax = plt.subplots(figsize=(6, 4.6))
    top = float(np.abs(h).max())
    image = ax.pcolormesh(g, v, h, cmap="RdBu_r", vmin=-top, vmax=top, shading="auto")
    ax.contour(g, v, h, levels=[0.0], colors="0.3", linewidths=0.8)
    ax.plot([], [], color="0.3", lw=0.8, label="hidden value exactly 0")   # the contour's legend entry
    ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    fig.colorbar(image, ax=ax, label="hidden value silu(g) · v (red > 0, blue < 0)")
    ax.set_xlabel("gate pre-activation g = (x W_gate)_k")
    ax.set_ylabel("value pre-activation v = (x W_up)_k")
    ax.set_title("One SwiGLU unit: the gate decides how much of v gets through")
    fig.tight_layout()
    return fig
