"""An interactive explorer for lesson 01's 4 -> 8 -> 4 network: move the inputs, watch units switch off.

    from helpers.explorer import explore
    explore()                      # the "robot" token through ReLU; sliders, presets and an activation menu

Four sliders set the input x, a menu picks a preset token and another the activation (ReLU, GELU, SiLU).
Every change recomputes z = x @ W1 + b1, h = act(z) and y = h @ W2 + b2 with the weights in helpers.toy and
redraws helpers.plotting.draw_ffn_strips: hidden units set to exactly zero are hatched, and a line above
the picture counts them in words ("ReLU zeroes three of eight hidden units (units 2, 6, 7).").

Keyboard (tests/test_browser.py drives it in JupyterLab): every control takes focus with Tab. A focused
slider moves one step with Left / Right, five with Page Up / Page Down, and to its ends with Home / End; the
activation buttons press with Enter or Space; the preset menu opens with Alt+Down, then Up / Down and Enter
choose. Each change redraws the picture and the summary line. In JupyterLab's command mode the notebook keeps
Up / Down and letter keys for itself even when a slider or the menu has focus (Up moves to the cell above,
"a" inserts a cell): hence Left / Right and Alt+Down.

Screen readers: the menu is labelled "preset" and the buttons name their activation; the picture is an <img>
whose alt text describes the state and repeats the summary line. What ipywidgets 8.1 does not allow from
Python: the slider handles carry no accessible name (the x[i] label is not tied to them), the activation
buttons do not expose which one is pressed (the summary line names the activation), the Image widget has no
alt attribute and breaks if given a tooltip (so the picture is an HTML widget), and no widget can be an
aria-live region, so a change is not announced by itself: read the summary line after a change.

Where no kernel runs (nbval, exported HTML, a notebook opened but not yet run) the explorer's output falls
back to a static picture of the state it was displayed in: its display bundle carries an image/png next to
the widget view, and a text/plain line that does not change from run to run.
"""
from __future__ import annotations

import base64
import html
import io

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure
from PIL import Image

from helpers.ffn import gelu, relu, silu
from helpers.plotting import draw_ffn_strips
from helpers.toy import B1_484, B2_484, TOKEN, W1_484, W2_484, X_ROBOT

ACTIVATIONS = {"ReLU": relu, "GELU": gelu, "SiLU": silu}
PRESETS = {                                    # name -> input x (4,)
    TOKEN: X_ROBOT,                            # the lesson's token: ReLU zeroes 3 of 8 units
    f"{TOKEN}, every feature flipped": -X_ROBOT,
    "all zeros (the biases alone)": np.zeros(4),
    "all ones": np.ones(4),
    "+1 -1 +1 -1": np.array([1.0, -1.0, 1.0, -1.0]),
}
CUSTOM = "(your own input)"
NUMBER_WORDS = ("none", "one", "two", "three", "four", "five", "six", "seven", "eight")
ACTIVATION_NAMES = {"ReLU": "rectified linear unit", "GELU": "Gaussian error linear unit",
                    "SiLU": "sigmoid linear unit"}
SLIDER_RANGE = (-2.0, 2.0, 0.1)                # min, max, step of each input slider
DPI = 80                                       # the picture inside the widget


def forward(x, activation: str = "ReLU"):
    """z, h, y for input x (4,) through the lesson-01 network: z = x @ W1 + b1, h = act(z), y = h @ W2 + b2."""
    x = np.asarray(x, dtype=float)             # (4,)
    z = x @ W1_484 + B1_484                    # (8,)
    h = ACTIVATIONS[activation](z)             # (8,)
    y = h @ W2_484 + B2_484                    # (4,)
    return z, h, y


def zeroed_units(h) -> list[int]:
    """Indices of hidden units that are exactly zero (what the picture hatches)."""
    return np.flatnonzero(np.asarray(h) == 0).tolist()


def in_words(n: int) -> str:
    """A count as a word ("none", "one", ... "eight"), digits above eight."""
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


def describe(x, activation: str = "ReLU") -> str:
    """One line on what the activation did to the hidden units for input x, with the counts in words."""
    z, h, _ = forward(x, activation)
    zeroed, negative = zeroed_units(h), int((z < 0).sum())
    line = f"{activation} zeroes {in_words(len(zeroed))} of {in_words(len(h))} hidden units"
    if zeroed:
        line += f" (unit{'s' if len(zeroed) > 1 else ''} {', '.join(map(str, zeroed))})"
    if activation != "ReLU" and negative:
        passes = "passes as a small negative" if negative == 1 else "pass as small negatives"
        line += (f"; {in_words(negative)} negative pre-activation{'s' if negative > 1 else ''} {passes} "
                 f"(smallest h = {h.min():+.2f})")
    return line + "."


def alt_text(x, activation: str = "ReLU") -> str:
    """A text alternative for the picture of input x: what it shows, and the summary line."""
    name = preset_name(x)
    label = f'the "{name}" input' if name != CUSTOM else "your input"
    values = ", ".join(f"{float(v):+.1f}" for v in np.asarray(x, dtype=float))
    return (f"Four strips, input x, pre-activation z, hidden h and output y, for {label} [{values}] through "
            f"{activation}: {describe(x, activation)}")


def preset_name(x) -> str:
    """The preset whose input equals x (to two decimals), or CUSTOM."""
    for name, preset in PRESETS.items():
        if np.allclose(np.round(np.asarray(x, dtype=float), 2), preset):
            return name
    return CUSTOM


def figure(x, activation: str = "ReLU", dpi: int = DPI) -> Figure:
    """The four strips for input x, drawn on a Figure of its own (not registered with pyplot)."""
    z, h, y = forward(x, activation)
    fig = Figure(figsize=(9, 4.6), dpi=dpi)
    ax = fig.add_subplot()
    name = preset_name(x)
    label = (f'the "{name}" input' if name != CUSTOM else
             "your input [" + ", ".join(f"{float(v):+.1f}" for v in x) + "]")
    draw_ffn_strips(x, z, h, y, title=f"4 \u2192 8 \u2192 4 FFN with {activation}: {label}",
                    activation=activation, ax=ax)
    fig.tight_layout()
    return fig


def png(x, activation: str = "ReLU", dpi: int = DPI) -> bytes:
    """The picture for input x as PNG bytes, in 256 colours (a third of the size; it is stored in notebooks)."""
    buffer = io.BytesIO()
    figure(x, activation, dpi).savefig(buffer, format="png")
    picture = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB").quantize(colors=256)
    buffer = io.BytesIO()
    picture.save(buffer, format="png", optimize=True)
    return buffer.getvalue()


class FFNExplorer(widgets.VBox):
    """Sliders for the four inputs, a preset menu and an activation menu above the redrawn picture."""

    def __init__(self, preset: str = TOKEN, activation: str = "ReLU"):
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; choose one of {list(PRESETS)}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; choose one of {list(ACTIVATIONS)}")
        low, high, step = SLIDER_RANGE
        self.sliders = [widgets.FloatSlider(value=float(v), min=low, max=high, step=step, description=f"x[{i}]",
                                            continuous_update=False, readout_format="+.1f")
                        for i, v in enumerate(PRESETS[preset])]
        self.preset = widgets.Dropdown(options=[*PRESETS, CUSTOM], value=preset, description="preset",
                                       style={"description_width": "70px"}, layout={"width": "330px"})
        self.activation = widgets.ToggleButtons(options=list(ACTIVATIONS), value=activation,
                                                description="activation",
                                                tooltips=[ACTIVATION_NAMES[a] for a in ACTIVATIONS],
                                                style={"button_width": "64px", "description_width": "74px"})
        self.summary = widgets.HTML()
        self.image = widgets.HTML()                 # an <img> with alt text (see the module's docstring)
        self.picture = b""                          # the PNG on show
        self._applying_preset = False
        for slider in self.sliders:
            slider.observe(self._on_slider, names="value")
        self.preset.observe(self._on_preset, names="value")
        self.activation.observe(lambda change: self.redraw(), names="value")
        controls = widgets.HBox([widgets.VBox(self.sliders), widgets.VBox([self.preset, self.activation])])
        super().__init__([controls, self.summary, self.image])
        self.add_class("ffn-explorer")
        self.redraw()

    @property
    def x(self) -> np.ndarray:
        """The current input (4,), rounded to the sliders' step."""
        return np.round([s.value for s in self.sliders], 2)

    def zeroed(self) -> int:
        """How many hidden units are exactly zero in the current state."""
        return len(zeroed_units(forward(self.x, self.activation.value)[1]))

    def redraw(self) -> None:
        self.picture = png(self.x, self.activation.value)
        alt = html.escape(alt_text(self.x, self.activation.value), quote=True)
        self.image.value = (f'<img src="data:image/png;base64,{base64.b64encode(self.picture).decode()}" '
                            f'alt="{alt}">')
        self.summary.value = f"<b>{describe(self.x, self.activation.value)}</b>"

    def _on_slider(self, change) -> None:
        if self._applying_preset:
            return
        self._applying_preset = True                # the menu follows the sliders without moving them
        try:
            self.preset.value = preset_name(self.x)
        finally:
            self._applying_preset = False
        self.redraw()

    def _on_preset(self, change) -> None:
        if self._applying_preset or change["new"] == CUSTOM:
            return
        self._applying_preset = True
        try:
            for slider, v in zip(self.sliders, PRESETS[change["new"]]):
                slider.value = float(v)
        finally:
            self._applying_preset = False
        self.redraw()

    def __repr__(self) -> str:
        # The text/plain part of the display: stable from run to run (nbval compares it), with no model id.
        return (f"FFNExplorer({preset_name(self.x)!r}, {self.activation.value}): "
                f"{self.zeroed()} of 8 hidden units zeroed")

    def _repr_mimebundle_(self, **kwargs):
        # The widget view for a live kernel, plus a static picture where widgets cannot render, with its text
        # alternative in the picture's metadata (make html writes it as the <img>'s alt).
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["image/png"] = png(self.x, self.activation.value, dpi=100)
        bundle["text/plain"] = repr(self)
        return bundle, {"image/png": {"alt": alt_text(self.x, self.activation.value)}}


def explore(preset: str = TOKEN, activation: str = "ReLU") -> FFNExplorer:
    """The interactive explorer, starting from a preset input and an activation."""
    return FFNExplorer(preset, activation)
