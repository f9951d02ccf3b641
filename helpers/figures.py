"""Show a Matplotlib figure with a text alternative that states its takeaway.

    fig, ax = plt.subplots()
    ...
    show(fig, alt="GELU and its tanh form overlap everywhere; their gap peaks at 4.7e-4 near z = +-2.7.")

Why not plt.show(): a figure shown that way is a bare PNG, which screen readers announce as "image" (nbconvert
writes "No description has been provided for this image"), and JupyterLab 4's image renderer ignores any alt
text in an output's metadata. `show` displays one output that carries the alt text everywhere:
- text/html: `<img src="data:image/png;base64,..." alt="...">`, which JupyterLab and `make html` render;
- image/png: the same picture, with {"alt": ...} in its metadata, for tools that show only images;
- text/plain: "[figure] <alt>", what a terminal kernel prints and what nbval compares (the base64 data in the
  HTML is blanked by tests/sanitize.cfg; pictures are not compared).
The figure is closed afterwards, so the inline backend does not show it a second time.
"""
from __future__ import annotations

import base64
import html
import io

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

ALT_LIMIT = 400   # characters: a sentence or two, not a description of every line


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG, cropped to its contents as the inline backend does."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight", dpi=fig.dpi)
    return buffer.getvalue()


def bundle(fig: Figure, alt: str) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """The display data and metadata that `show` displays (separate, so tests can read them)."""
    alt = " ".join(str(alt).split())
    if not alt:
        raise ValueError("alt must state the figure's takeaway in a sentence")
    if len(alt) > ALT_LIMIT:
        raise ValueError(f"alt is {len(alt)} characters; keep it to the takeaway (at most {ALT_LIMIT})")
    encoded = base64.b64encode(png_bytes(fig)).decode("ascii")
    data = {
        "text/html": f'<img src="data:image/png;base64,{encoded}" alt="{html.escape(alt, quote=True)}" '
                     f'style="max-width: 100%; height: auto;">',
        "image/png": encoded,
        "text/plain": f"[figure] {alt}",
    }
    return data, {"image/png": {"alt": alt}}


def show(fig: Figure | None = None, *, alt: str) -> None:
    """Display `fig` (default: the current figure) with its alt text, then close it."""
    from IPython.display import display
    fig = fig if fig is not None else plt.gcf()
    data, metadata = bundle(fig, alt)
    plt.close(fig)
    display(data, metadata=metadata, raw=True)
