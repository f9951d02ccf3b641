"""helpers.figures.show: one output that carries the figure's takeaway as alt text everywhere."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import bundle, show  # noqa: E402

ALT = 'ReLU is 0 for z < 0 and z above; its slope jumps from 0 to 1 at z = 0 ("a kink").'


def figure():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [0, 1])
    return fig


def test_the_alt_text_is_in_the_html_the_metadata_and_the_text():
    data, metadata = bundle(figure(), ALT)
    escaped = ALT.replace("<", "&lt;").replace('"', "&quot;")
    assert f'alt="{escaped}"' in data["text/html"] and data["text/html"].startswith('<img src="data:image/png;base64,')
    assert data["image/png"] in data["text/html"]
    assert metadata == {"image/png": {"alt": ALT}} and data["text/plain"] == f"[figure] {ALT}"


@pytest.mark.parametrize("alt, complaint", [("", "takeaway"), ("   ", "takeaway"), ("x" * 401, "at most")])
def test_a_missing_or_rambling_alt_is_refused(alt, complaint):
    with pytest.raises(ValueError, match=complaint):
        bundle(figure(), alt)


def test_show_closes_the_figure_so_it_is_not_drawn_twice(capsys):
    fig = figure()
    show(fig, alt=ALT)
    assert not plt.fignum_exists(fig.number)
    assert "[figure] ReLU is 0" in capsys.readouterr().out      # what a terminal shows
