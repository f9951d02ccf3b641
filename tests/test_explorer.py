"""helpers.explorer: the numbers it shows, how the widget reacts, and a display that nbval can compare."""
import base64
import math

import numpy as np
import pytest

from helpers import explorer
from helpers.ffn import ffn
from helpers.toy import B1_484, B2_484, NET_484, W1_484, W2_484, X_ROBOT

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def by_hand(x, activation):
    """The forward pass one unit at a time, with the activations written from their definitions."""
    act = {"ReLU": lambda v: max(v, 0.0),
           "GELU": lambda v: v * 0.5 * (1 + math.erf(v / math.sqrt(2))),
           "SiLU": lambda v: v / (1 + math.exp(-v))}[activation]
    z = [sum(x[i] * W1_484[i][k] for i in range(4)) + B1_484[k] for k in range(8)]
    h = [act(v) for v in z]
    y = [sum(h[k] * W2_484[k][j] for k in range(8)) + B2_484[j] for j in range(4)]
    return z, h, y


@pytest.mark.parametrize("activation", ["ReLU", "GELU", "SiLU"])
@pytest.mark.parametrize("preset", list(explorer.PRESETS))
def test_forward_matches_a_per_unit_loop_and_the_reference_ffn(preset, activation):
    x = explorer.PRESETS[preset]
    z, h, y = explorer.forward(x, activation)
    for got, want in zip((z, h, y), by_hand(list(x), activation)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    act = explorer.ACTIVATIONS[activation]
    np.testing.assert_allclose(y, ffn(np.array(x), **NET_484, activation=act), rtol=1e-12, atol=1e-12)


def test_robot_token_relu_zeroes_units_2_6_7():
    _, h, _ = explorer.forward(X_ROBOT, "ReLU")
    assert explorer.zeroed_units(h) == [2, 6, 7]
    assert explorer.describe(X_ROBOT) == "ReLU zeroes three of eight hidden units (units 2, 6, 7)."


def test_smooth_activations_zero_nothing_and_say_what_they_let_through():
    line = explorer.describe(X_ROBOT, "GELU")
    assert line.startswith("GELU zeroes none of eight hidden units; three negative pre-activations pass as small "
                           "negatives")
    assert explorer.describe(X_ROBOT, "SiLU").startswith("SiLU zeroes none of eight hidden units; three negative")
    zeros = explorer.describe([0.0, 0.0, 0.0, 0.0], "GELU")     # z is exactly 0 for units 3 and 6: gelu(0) = 0
    assert zeros.startswith("GELU zeroes two of eight hidden units (units 3, 6)")


@pytest.mark.parametrize("n, word", [(0, "none"), (1, "one"), (3, "three"), (8, "eight"), (9, "9")])
def test_counts_are_words(n, word):
    assert explorer.in_words(n) == word


def test_one_negative_pre_activation_is_singular():
    x = [-2.0, -0.5, 1.0, 1.5]
    assert (explorer.forward(x, "GELU")[0] < 0).sum() == 1
    assert "; one negative pre-activation passes as a small negative (" in explorer.describe(x, "GELU")


def test_the_picture_has_a_text_alternative_with_the_state_and_the_count():
    alt = explorer.alt_text(X_ROBOT, "ReLU")
    assert alt.startswith('Four strips, input x, pre-activation z, hidden h and output y, for the "robot" input '
                          "[+0.8, -0.5, +0.3, +1.0] through ReLU: ReLU zeroes three of eight hidden units")
    assert "your input [+0.5, +0.0, +0.0, +0.0]" in explorer.alt_text([0.5, 0, 0, 0], "SiLU")


def test_every_control_is_labelled():
    e = explorer.explore()
    assert [s.description for s in e.sliders] == ["x[0]", "x[1]", "x[2]", "x[3]"]
    assert e.preset.description == "preset" and e.activation.description == "activation"
    assert list(e.activation.tooltips) == ["rectified linear unit", "Gaussian error linear unit", "sigmoid linear unit"]


def test_presets_are_distinct_and_named_back():
    inputs = [tuple(v) for v in explorer.PRESETS.values()]
    assert len(set(inputs)) == len(inputs) and explorer.TOKEN in explorer.PRESETS
    for name, x in explorer.PRESETS.items():
        assert explorer.preset_name(x) == name
    assert explorer.preset_name([0.1, 0.2, 0.3, 0.4]) == explorer.CUSTOM


def test_picture_is_a_png_with_the_title_of_the_state():
    fig = explorer.figure(X_ROBOT, "SiLU")
    assert fig.axes[0].get_title() == '4 \u2192 8 \u2192 4 FFN with SiLU: the "robot" input'
    assert explorer.png([0.5, 0, 0, 0]).startswith(PNG_MAGIC)
    assert "your input [+0.5, +0.0, +0.0, +0.0]" in explorer.figure([0.5, 0, 0, 0]).axes[0].get_title()


def test_a_slider_change_redraws_and_recounts():
    e = explorer.explore()
    before_png, before_summary = e.picture, e.summary.value
    assert 'for the &quot;robot&quot; input' in e.image.value                 # quotes in the alt are escaped
    assert e.zeroed() == 3 and "three of eight" in before_summary
    e.sliders[3].value = -1.0
    assert e.zeroed() == 5 and "ReLU zeroes five of eight hidden units (units 2, 3, 5, 6, 7)." in e.summary.value
    assert e.image.value.endswith('ReLU zeroes five of eight hidden units (units 2, 3, 5, 6, 7).">')
    assert e.picture != before_png and e.picture.startswith(PNG_MAGIC)
    assert e.image.value.startswith(f'<img src="data:image/png;base64,{base64.b64encode(e.picture).decode()}" alt="')
    assert e.preset.value == explorer.CUSTOM               # the menu follows the sliders


def fake_png(x, activation="ReLU", dpi=explorer.DPI):
    """A cheap stand-in for the rendered picture that still says which state it shows."""
    return PNG_MAGIC + repr(([float(v) for v in x], activation)).encode()


def test_a_preset_moves_the_sliders_and_an_activation_redraws(monkeypatch):
    monkeypatch.setattr(explorer, "png", fake_png)
    e = explorer.explore()
    e.preset.value = "all ones"
    assert list(e.x) == [1.0, 1.0, 1.0, 1.0] and e.zeroed() == 4
    e.activation.value = "GELU"
    assert e.zeroed() == 0 and e.summary.value.startswith("<b>GELU zeroes none of eight")
    assert e.picture == fake_png([1, 1, 1, 1], "GELU")
    e.sliders[0].value = X_ROBOT[0]
    e.sliders[1].value, e.sliders[2].value, e.sliders[3].value = X_ROBOT[1:]
    assert e.preset.value == explorer.TOKEN                # back on a preset: the menu names it again


def test_display_is_stable_for_nbval_and_has_a_static_fallback(monkeypatch):
    monkeypatch.setattr(explorer, "png", fake_png)
    bundle, metadata = explorer.explore()._repr_mimebundle_()
    assert bundle["text/plain"] == "FFNExplorer('robot', ReLU): 3 of 8 hidden units zeroed"
    assert "0x" not in bundle["text/plain"] and len(bundle["text/plain"]) < 110
    assert bundle["image/png"].startswith(PNG_MAGIC)        # what HTML, nbval and untrusted notebooks show
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert explorer.explore()._repr_mimebundle_()[0]["text/plain"] == bundle["text/plain"]
    assert metadata["image/png"]["alt"] == explorer.alt_text(X_ROBOT)          # make html's alt for the picture


def test_unknown_preset_or_activation_is_refused():
    with pytest.raises(ValueError, match="unknown preset"):
        explorer.explore("teapot")
    with pytest.raises(ValueError, match="unknown activation"):
        explorer.explore(activation="tanh")


def test_lesson_01_shows_the_explorer_with_a_static_picture():
    import nbformat
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "solutions" / "01_hand_trace.ipynb"
    cells = [c for c in nbformat.read(path, as_version=4).cells
             if c.cell_type == "code" and "helpers.explorer" in c.source]
    assert len(cells) == 1, "lesson 01 should show the explorer once (the browser test drives it there)"
    (output,) = cells[0].outputs
    assert output["data"]["text/plain"] == "FFNExplorer('robot', ReLU): 3 of 8 hidden units zeroed"
    assert "image/png" in output["data"] and "application/vnd.jupyter.widget-view+json" in output["data"]
