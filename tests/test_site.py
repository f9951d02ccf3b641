"""tools/build_site.py: an offline site whose index links every solution and whose pages embed the figures."""
import base64
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import build_site  # noqa: E402

SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"0" * 32).decode()


class Links(HTMLParser):
    """Every href and src in a page."""
    def __init__(self):
        super().__init__()
        self.hrefs, self.srcs = [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("href"):
            self.hrefs.append(attrs["href"])
        if attrs.get("src"):
            self.srcs.append(attrs["src"])


def links(path):
    parser = Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def has_figure(path):
    nb = nbformat.read(path, as_version=4)
    return any("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    return out, build_site.build(out)


def test_index_links_every_solution_with_its_title_and_summary(site):
    out, pages = site
    assert [p.name for p in pages] == [p.name for p in SOLUTIONS] and SOLUTIONS
    index = links(out / "index.html")
    for path in SOLUTIONS:
        page = f"{path.stem}.html"
        assert page in index.hrefs, f"index.html does not link {page}"
        assert (out / page).is_file()
    text = (out / "index.html").read_text(encoding="utf-8")
    for page in pages:
        assert page.title and page.summary and "\n" not in page.summary
        assert page.title.replace("&", "&amp;") in text


def test_pages_embed_their_figures_and_load_nothing_from_the_network(site):
    out, pages = site
    for page in pages:
        parsed = links(out / page.html_name)
        assert not [s for s in parsed.srcs if not s.startswith("data:")], f"{page.html_name} loads {parsed.srcs}"
        assert not [h for h in parsed.hrefs if re.match(r"https?://", h) and "stylesheet" in h]
        if has_figure(ROOT / "solutions" / page.name):
            assert any(s.startswith("data:image/png;base64,") for s in parsed.srcs), f"{page.html_name}: no figure"
        assert "index.html" in parsed.hrefs                           # the way back


def synthetic(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 01. Tracing by hand\n\nWe trace one token. Then we do more."),
                nbformat.v4.new_code_cell("explore()")]
    nb.cells[1].outputs = [nbformat.v4.new_output(
        "display_data", data={"text/plain": "FFNExplorer('robot', ReLU): 3 of 8 hidden units zeroed",
                              "image/png": PNG,
                              "application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2,
                                                                           "version_minor": 0}})]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    second = nbformat.v4.new_notebook()
    second.cells = [nbformat.v4.new_markdown_cell("# Two\nText right under the title, `code` & $x_1$. More.")]
    third = nbformat.v4.new_notebook()
    third.metadata["ffn_course"] = {"summary": "Set in the metadata."}
    third.cells = [nbformat.v4.new_code_cell("w")]
    third.cells[0].outputs = [nbformat.v4.new_output(
        "display_data", data={"text/plain": "VBox()", "application/vnd.jupyter.widget-view+json": {}})]
    for name, notebook in (("01_a.ipynb", nb), ("02_b.ipynb", second), ("03_c.ipynb", third)):
        nbformat.write(notebook, tmp_path / name)
    return tmp_path


def test_summaries_come_from_the_first_markdown_cell_or_the_metadata(tmp_path):
    pages = build_site.build(tmp_path / "out", synthetic(tmp_path))
    assert [(p.title, p.summary) for p in pages] == [
        ("01. Tracing by hand", "We trace one token. Then we do more."),
        ("Two", "Text right under the title, `code` & $x_1$. More."),
        ("03 c", "Set in the metadata.")]
    index = (tmp_path / "out" / "index.html").read_text()
    assert "<code>code</code> &amp; <math" in index and "$x_1$" not in index      # maths as MathML


def test_a_long_first_paragraph_is_cut_after_a_sentence():
    long = " ".join(f"Sentence number {i} says a little more than the one before it." for i in range(12))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"# Long\n\n{long}")]
    summary = build_site.describe(nb, "01_long.ipynb").summary
    assert summary.endswith("before it.") and len(summary) <= build_site.SUMMARY_LIMIT
    assert long.startswith(summary) and summary.count("Sentence") > 1


def test_a_widget_shows_its_static_picture_or_a_note_and_no_widget_script(tmp_path):
    build_site.build(tmp_path / "out", synthetic(tmp_path))
    first = (tmp_path / "out" / "01_a.html").read_text()
    assert f"data:image/png;base64,{PNG}" in first and "needs a running kernel" in first
    assert "widget-view+json" not in first and "widget-state+json" not in first
    assert "next: <a href=\"02_b.html\">Two</a>" in first
    third = (tmp_path / "out" / "03_c.html").read_text()
    assert "An interactive widget goes here." in third and "VBox()" not in third
