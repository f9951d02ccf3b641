"""Lesson 09's figures: how many units fire per token (trained against random), and a knock-out."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def plot_firing(shares: dict[str, np.ndarray], title: str):
    """Histograms of the share of a layer's units that fire (z > 0) at each context, one per model."""
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    bins = np.linspace(0, 1, 41)
    for (label, share), style in zip(shares.items(), [dict(color="C0"), dict(color="0.45", hatch="//")]):
        ax.hist(share, bins=bins, alpha=0.75, label=f"{label} (mean {share.mean():.0%})", **style)
    ax.set_xlabel("share of the layer's 256 units that fire (z > 0) at a prefix")
    ax.set_ylabel("number of prefixes")
    ax.set_title(title)
    ax.legend(loc="upper right")
    return fig


def plot_knockout(counts, target_probs, others_right, target: str, title: str):
    """The target word's probability and the share of the other facts still right, against units knocked out."""
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    ax.plot(counts, target_probs, "o-", color="C3", label=f"probability of {target!r} (this fact)")
    ax.plot(counts, others_right, "s--", color="C0", label="share of the other facts still right")
    ax.set_ylim(-0.03, 1.05)
    ax.set_xticks(counts)                                 # a count of units: whole numbers, the ones measured
    ax.set_xlabel("units knocked out (the ones that push this fact's answer most)")
    ax.set_ylabel("probability / share")
    ax.set_title(title)
    ax.legend(loc="center right")
    return fig
