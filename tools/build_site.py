"""Build a static, offline site from the executed solutions: `make html` (or tools/build_site.py --out DIR).

    site/index.html          the notebooks in order, each with its title and a one-line summary
    site/NN_name.html        one page per solutions/NN_name.ipynb with its stored outputs and figures

Nothing is executed: the pages show what `make solutions` stored. Figures are embedded in the pages
(data: URIs) and no page loads anything from the network, so the folder can be zipped, mailed or opened
from disk. A widget cannot run without a kernel: where its output carries a static picture (the explorer's
does) the picture stands in, with a note; otherwise the note alone says to open the notebook in JupyterLab.
Maths ($...$, $$...$$) becomes MathML (latex2mathml), which browsers draw themselves: no MathJax to fetch.

A notebook's summary is `metadata.ffn_course.summary` when set, else the first paragraph after the title in
its first markdown cell, cut after the last sentence that fits in 300 characters.
"""
from __future__ import annotations

import argparse
import html
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import jinja2
import nbformat
from latex2mathml.converter import convert as latex_to_mathml
from nbconvert import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

ROOT = Path(__file__).resolve().parent.parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
COURSE_TITLE = "The feed-forward network, from hand trace to mixture of experts"
SUMMARY_LIMIT = 300   # characters of a notebook's first paragraph that the index shows
# The lab template, less everything it would fetch from the network (require.js, MathJax, the widget manager).
OFFLINE_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
"""
WIDGET_NOTE = ("<p class='ffn-widget-note'><em>{what} It needs a running kernel: open the notebook in JupyterLab "
               "(<code>make lab</code>) to use it.</em></p>")


class MathMLRenderer(IPythonRenderer):
    """nbconvert's markdown renderer, with maths written as MathML instead of left for MathJax."""

    def _mathml(self, tex: str, display: str, fallback: str) -> str:
        try:
            return latex_to_mathml(tex, display=display)
        except Exception:                      # TeX that latex2mathml cannot read stays as TeX source
            return fallback

    def inline_math(self, body: str) -> str:
        return self._mathml(body, "inline", super().inline_math(body))

    def block_math(self, body: str) -> str:
        return self._mathml(body, "block", super().block_math(body))

    def latex_environment(self, name: str, body: str) -> str:
        return self._mathml(f"\\begin{{{name}}}{body}\\end{{{name}}}", "block",
                            super().latex_environment(name, body))


class OfflineHTMLExporter(HTMLExporter):
    """The lab template without network scripts, and maths as MathML."""

    @jinja2.pass_context
    def markdown2html(self, context, source):
        cell = context.get("cell", {})
        renderer = MathMLRenderer(escape=False, attachments=cell.get("attachments", {}),
                                  embed_images=self.embed_images,
                                  path=context.get("resources", {}).get("metadata", {}).get("path", ""),
                                  anchor_link_text=self.anchor_link_text,
                                  exclude_anchor_links=self.exclude_anchor_links, **self.lexer_options)
        return MarkdownWithMath(renderer=renderer).render(source)


@dataclass
class Page:
    name: str        # NN_name.ipynb
    title: str
    summary: str     # one line, markdown

    @property
    def html_name(self) -> str:
        return Path(self.name).stem + ".html"


def _paragraphs(markdown: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", markdown) if p.strip()]


def describe(nb: nbformat.NotebookNode, name: str) -> Page:
    """Title and one-line summary of a notebook, read from the notebook itself."""
    first = next((c.source for c in nb.cells if c.cell_type == "markdown" and c.source.strip()), "")
    paragraphs = _paragraphs(first)
    heading = next((p for p in paragraphs if p.startswith("#")), None)
    title = heading.splitlines()[0].lstrip("#").strip() if heading else Path(name).stem.replace("_", " ")
    summary = nb.metadata.get("ffn_course", {}).get("summary")
    if not summary:
        under_heading = heading.split("\n", 1)[1] if heading and "\n" in heading else ""
        text = under_heading or next((p for p in paragraphs if not p.startswith("#")), "")
        summary = _shorten(" ".join(text.split()))
    return Page(name, title, summary)


def _shorten(text: str, limit: int = SUMMARY_LIMIT) -> str:
    """`text` whole when short, else its sentences up to `limit` characters (always at least the first)."""
    if len(text) <= limit:
        return text
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9`*_(\"$])", text)
    kept = sentences[:1]
    for sentence in sentences[1:]:
        if len(" ".join(kept + [sentence])) > limit:
            break
        kept.append(sentence)
    return " ".join(kept)


def _inline_markdown(text: str) -> str:
    """One line of markdown (with maths) as HTML, without the paragraph around it."""
    rendered = MarkdownWithMath(renderer=MathMLRenderer(escape=False)).render(text).strip()
    return re.sub(r"^<p>(.*)</p>$", r"\1", rendered, flags=re.DOTALL)


def static_outputs(nb: nbformat.NotebookNode) -> int:
    """Replace every widget output by its static picture (or a note) in place; return how many there were."""
    count = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW not in data:
                continue
            count += 1
            image = next((m for m in ("image/png", "image/jpeg") if m in data), None)
            if image:
                note = WIDGET_NOTE.format(what="A static picture of an interactive widget's starting state.")
                alt = html.escape(data.get("text/plain", "widget"), quote=True)
                picture = f"<img src='data:{image};base64,{data[image].strip()}' alt='{alt}'>"
                output["data"] = {"text/html": picture + note}
            else:
                output["data"] = {"text/html": WIDGET_NOTE.format(what="An interactive widget goes here.")}
    nb.metadata.pop("widgets", None)           # no widget state: nothing for a widget manager to load
    return count


def navigation(pages: list[Page], index: int) -> nbformat.NotebookNode:
    links = ["[\u2190 all notebooks](index.html)"]
    if index > 0:
        links.append(f"previous: [{pages[index - 1].title}]({pages[index - 1].html_name})")
    if index + 1 < len(pages):
        links.append(f"next: [{pages[index + 1].title}]({pages[index + 1].html_name})")
    return nbformat.v4.new_markdown_cell(" \u00b7 ".join(links))


def index_page(pages: list[Page], source: str) -> str:
    rows = "\n".join(
        f"<tr><td><a href='{p.html_name}'>{html.escape(p.title)}</a><br><code>{html.escape(p.name)}</code></td>"
        f"<td>{_inline_markdown(p.summary)}</td></tr>" for p in pages)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(COURSE_TITLE)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.5; }}
table {{ border-collapse: collapse; width: 100%; }}
td {{ border-top: 1px solid #ddd; padding: 0.6rem 0.8rem; vertical-align: top; }}
td:first-child {{ width: 30%; }}
code {{ font-size: 0.85em; color: #555; }}
</style></head>
<body>
<h1>{html.escape(COURSE_TITLE)}</h1>
<p>The completed notebooks with their stored outputs, to read without running anything (built from
<code>{html.escape(source)}/</code> by <code>make html</code>). To run them and do the exercises,
use <code>make lab</code>.</p>
<table>
{rows}
</table>
</body></html>
"""


def build(out: Path, source: Path = ROOT / "solutions") -> list[Page]:
    """Write index.html and one page per notebook in `source` into `out`; return the pages."""
    paths = sorted(source.glob("*.ipynb"))
    if not paths:
        raise SystemExit(f"No notebooks in {source}")
    notebooks = [nbformat.read(path, as_version=4) for path in paths]
    pages = [describe(nb, path.name) for nb, path in zip(notebooks, paths)]
    exporter = OfflineHTMLExporter(template_file="ffn_offline.html.j2",
                            extra_loaders=[jinja2.DictLoader({"ffn_offline.html.j2": OFFLINE_TEMPLATE})])
    out.mkdir(parents=True, exist_ok=True)
    for i, (nb, page) in enumerate(zip(notebooks, pages)):
        static_outputs(nb)
        nb.cells.insert(0, navigation(pages, i))
        body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": page.title}})
        (out / page.html_name).write_text(body, encoding="utf-8")
    (out / "index.html").write_text(index_page(pages, source.name), encoding="utf-8")
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "site", help="folder to write (default: site/)")
    parser.add_argument("--source", type=Path, default=ROOT / "solutions", help="executed notebooks to render")
    args = parser.parse_args(argv)
    pages = build(args.out, args.source)
    for page in pages:
        print(f"wrote    {args.out / page.html_name}")
    print(f"Open {args.out / 'index.html'} in a browser ({len(pages)} notebooks).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
