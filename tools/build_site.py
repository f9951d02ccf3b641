"""Build a static, offline site of the course: `make html` (or tools/build_site.py --out DIR).

    site/index.html          the notebooks in order, each with its title and a one-line summary
    site/NN_name.html        one page per notebook with its stored outputs and figures
    site/conventions.html    one page per markdown card beside the notebooks (links to it are rewritten)
    site/LICENSE.txt, site/LICENSE-text.txt   the licences the footer of every page names

Two editions:

    make html                (--solutions folded, from solutions/) each exercise shows the learner's stub,
                             its solution folded below it behind a "Show solution" toggle, and the output its
                             check printed for the solution folded the same way.
    make html SOLUTIONS=0    (--solutions none, from notebooks/) the learner edition: the notebooks exactly as
                             `make notebooks` writes them (stubs, and what a fresh Run All prints: each check
                             says "not implemented yet"). No solution is anywhere in it; the build refuses a
                             source notebook that still holds a solution marker, or a stale notebooks/.

Nothing is executed: the pages show the stored outputs (`make solutions` refreshes them). Figures are embedded
(data: URIs) and no page loads anything from the network, so the folder can be zipped, mailed or opened from
disk. Maths ($...$, $$...$$) becomes MathML (latex2mathml), which browsers draw themselves.

Accessibility (tests/test_axe.py runs axe-core on every page of both editions, light and dark): the pages
follow the reader's colour scheme (prefers-color-scheme), code is coloured with accessible-pygments'
a11y-light / a11y-dark, every page has a skip link, a navigation landmark, a main landmark and a footer, focus
is always visible, and figures sit on a light backing in dark mode. A figure's text alternative comes from its
output: an HTML output's own <img alt> (what helpers.plotting's show(fig, alt=...) writes), else the PNG's
metadata {"image/png": {"alt": ...}}. A figure with neither gets no alt at all (not nbconvert's "No description
has been provided" placeholder), so axe reports it and the build prints a warning naming the page.

Widgets cannot run without a kernel: a widget output's own text/html stands in when the bundle has one (the
quizzes' questions with folded answers), else its static picture with a note (the explorer's), else a note.

A notebook's summary is `metadata.ffn_course.summary` (of the same-named solutions/ notebook when there is
one), else the first paragraph after the title in its first markdown cell, cut after the last sentence that
fits in 300 characters.
"""
from __future__ import annotations

import argparse
import ast
import html
import logging
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import jinja2
import nbformat
from latex2mathml.converter import convert as latex_to_mathml
from nbconvert import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES, Token

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import notebooks as nbtool  # noqa: E402  (tools/notebooks.py: the solution markers and the check-call pattern)

SOLUTIONS_DIR, NOTEBOOKS_DIR = ROOT / "solutions", ROOT / "notebooks"
EDITIONS = {   # --solutions value -> (default source, what the pages call the edition)
    "folded": (SOLUTIONS_DIR, "with solutions (folded: open one when you have tried the exercise)"),
    "none": (NOTEBOOKS_DIR, "learner edition (no solutions)"),
}
LICENCES = {"LICENSE": "LICENSE.txt", "LICENSE-text": "LICENSE-text.txt"}   # repository file -> site file
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
COURSE_TITLE = "The feed-forward network, from hand trace to mixture of experts"
SUMMARY_LIMIT = 300   # characters of a notebook's first paragraph that the index shows
NO_ALT_PLACEHOLDER = ' alt="No description has been provided for this image"'   # what nbconvert adds
CODE_STYLES = {"light": "a11y-light", "dark": "a11y-dark"}                      # accessible-pygments
WIDGET_NOTE = ("<p class='ffn-widget-note'><em>{what} It needs a running kernel: open the notebook in JupyterLab "
               "(<code>make lab</code>) to use it.</em></p>")

# The site's own colours, light and dark. Text contrast is at least 4.5:1 on its background (WCAG AA), and the
# focus ring at least 3:1. The notebook pages also get JupyterLab's light theme, and its dark theme inside
# @media (prefers-color-scheme: dark); the rules below win over both.
SITE_CSS = """
:root { color-scheme: light dark;
  --ffn-bg: #ffffff; --ffn-fg: #1e1e1e; --ffn-muted: #4a4a4a; --ffn-link: #0b57d0; --ffn-focus: #0b57d0;
  --ffn-border: #8a8a8a; --ffn-fold-bg: #f4f4f4; --ffn-in-prompt: #1d5f9a; --ffn-out-prompt: #9c4126;
  --ffn-figure-backing: transparent; }
@media (prefers-color-scheme: dark) { :root {
  --ffn-bg: #111111; --ffn-fg: #ededed; --ffn-muted: #c4c4c4; --ffn-link: #8ab4f8; --ffn-focus: #8ab4f8;
  --ffn-border: #8a8a8a; --ffn-fold-bg: #1e1e1e; --ffn-in-prompt: #8cc1f0; --ffn-out-prompt: #f2a68e;
  --ffn-figure-backing: #ffffff;
  --jp-layout-color0: #111111; --jp-cell-editor-background: #2b2b2b; } }
html body { background: var(--ffn-bg); color: var(--ffn-fg); }
.ffn-skip-link { position: absolute; left: 0.5rem; top: -3rem; z-index: 100; padding: 0.5rem 1rem;
  background: var(--ffn-bg); color: var(--ffn-link); border: 2px solid var(--ffn-focus); }
.ffn-skip-link:focus { top: 0.5rem; }
/* Links are underlined: JupyterLab's rendered markdown shows them by colour alone (1.9:1 against the text). */
html body a, html body .jp-RenderedHTMLCommon a:link, html body .jp-RenderedHTMLCommon a:visited {
  color: var(--ffn-link); text-decoration: underline; }
html body a.anchor-link { display: none; }
html body :focus-visible, html body details > summary:focus-visible {
  outline: 3px solid var(--ffn-focus); outline-offset: 2px; }
main:focus { outline: none; }
.ffn-header, .ffn-footer { max-width: 72rem; margin: 0 auto; padding: 0.75rem 1rem; font-size: 0.95rem;
  font-family: system-ui, sans-serif; line-height: 1.5; }
.ffn-header { border-bottom: 1px solid var(--ffn-border); }
.ffn-footer { border-top: 1px solid var(--ffn-border); margin-top: 2rem; color: var(--ffn-fg); }
.ffn-header ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 0.25rem 1.5rem; }
.ffn-edition { margin: 0.25rem 0 0; color: var(--ffn-muted); }
/* In [ ] / Out[ ] prompts: JupyterLab greys them (2.2:1); here they keep their colour at full strength. */
html body .jp-InputPrompt, html body.jp-Notebook .jp-Cell:not(.jp-mod-active) .jp-InputPrompt {
  color: var(--ffn-in-prompt); opacity: 1; }
html body .jp-OutputPrompt, html body.jp-Notebook .jp-Cell:not(.jp-mod-active) .jp-OutputPrompt {
  color: var(--ffn-out-prompt); opacity: 1; }
/* Figures keep a white backing in dark mode: matplotlib draws dark text on a white or transparent canvas. */
html body .jp-OutputArea-output img { background: var(--ffn-figure-backing); border-radius: 4px; }
@media (prefers-color-scheme: dark) { html body .jp-OutputArea-output img { padding: 6px; } }
/* Folded solutions, check outputs and hints: native <details>, so Tab reaches the summary and Enter or
   Space opens it. */
details > summary { cursor: pointer; }
.ffn-fold-row { display: flex; }
.ffn-fold-row > .jp-InputPrompt { flex-shrink: 0; }
.ffn-fold-column { flex: 1 1 auto; min-width: 0; }
.ffn-fold { margin: 0.25rem 0 0.75rem 0; border: 1px solid var(--ffn-border);
  border-radius: 4px; background: var(--ffn-fold-bg); }
.ffn-fold > summary { padding: 0.4rem 0.75rem; font-family: system-ui, sans-serif; font-weight: 600; }
.ffn-fold[open] > summary { border-bottom: 1px solid var(--ffn-border); }
.ffn-fold .ffn-when-open, .ffn-fold[open] .ffn-when-closed { display: none; }
.ffn-fold[open] .ffn-when-open { display: inline; }
.ffn-fold-body { padding: 0.25rem 0.5rem; overflow-x: auto; }
.ffn-fold .jp-OutputArea-output pre { color: var(--ffn-fg); }
.ffn-fold .jp-OutputArea-prompt { display: none; }   /* the fold sits in the prompt column's place already */
.ffn-stub-note { margin: 0.25rem 0 0 0; color: var(--ffn-muted);
  font-family: system-ui, sans-serif; font-size: 0.9rem; }
.jp-RenderedHTMLCommon details { margin: 0.5rem 0; }
.jp-RenderedHTMLCommon details > summary { font-weight: 600; }
"""

INDEX_CSS = """
body { font-family: system-ui, sans-serif; line-height: 1.5; margin: 0; }
main { max-width: 60rem; margin: 1.5rem auto; padding: 0 1rem; }
table { border-collapse: collapse; width: 100%; }
th { text-align: left; border-bottom: 2px solid var(--ffn-border); padding: 0.4rem 0.8rem; }
td { border-top: 1px solid var(--ffn-border); padding: 0.6rem 0.8rem; vertical-align: top; }
td:first-child { width: 30%; }
code { font-size: 0.9em; color: var(--ffn-muted); }
"""

# The lab template, less everything it would fetch from the network (require.js, MathJax, the widget manager),
# with landmarks, a skip link, both colour schemes, folded solutions and figures' alt text.
OFFLINE_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block notebook_css -%}
{{ super() }}
<style type="text/css">
@media (prefers-color-scheme: dark) {
{{ resources.ffn.dark_theme }}
}
</style>
{%- endblock notebook_css -%}
{%- block html_head_css -%}
<style type="text/css">
{{ resources.ffn.css }}
</style>
{%- endblock html_head_css -%}
{%- block body_header -%}
<body class="jp-Notebook" data-jp-theme-light="true" data-jp-theme-name="JupyterLab Light">
{{ resources.ffn.header }}
<main id="content" tabindex="-1">
{%- endblock body_header -%}
{% block body_footer %}
</main>
{{ resources.ffn.footer }}
</body>
{% endblock body_footer %}

{% block input_group -%}
{{ super() }}
{%- set ffn = cell.metadata.get('ffn_site', {}) -%}
{%- if ffn.get('solution') %}
<div class="jp-InputArea ffn-fold-row">
<div class="jp-InputPrompt jp-InputArea-prompt"></div>
<div class="ffn-fold-column">
<p class="ffn-stub-note">{{ ffn.stub_note }}</p>
<details class="ffn-fold ffn-solution">
<summary><span class="ffn-when-closed">Show</span><span class="ffn-when-open">Hide</span> solution{{ ffn.label }}</summary>
<div class="ffn-fold-body" tabindex="0">
<div class="cm-editor cm-s-jupyter">
{{ ffn.solution | highlight_code(metadata=cell.metadata) }}
</div>
</div>
</details>
</div>
</div>
{%- endif %}
{%- endblock input_group %}

{% block output_group %}
{%- set ffn = cell.metadata.get('ffn_site', {}) -%}
{%- if ffn.get('fold_outputs') -%}
<div class="jp-InputArea ffn-fold-row">
<div class="jp-InputPrompt jp-InputArea-prompt"></div>
<details class="ffn-fold ffn-fold-column ffn-check-output">
<summary><span class="ffn-when-closed">Show</span><span class="ffn-when-open">Hide</span> {{ ffn.fold_outputs }}</summary>
<div class="ffn-fold-body">
{{ super() }}
</div>
</details>
</div>
{%- else -%}
{{ super() }}
{%- endif -%}
{% endblock output_group %}

{% block data_png scoped %}
{%- set alt = output | get_metadata('alt', 'image/png') -%}
<div class="jp-RenderedImage jp-OutputArea-output {{ extra_class }}">
<img src="data:image/png;base64,{{ output.data['image/png'] | escape_html }}"
{%- if alt %} alt="{{ alt | escape_html }}"{% endif %}>
</div>
{%- endblock data_png %}
"""


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
    """The lab template without network scripts, maths as MathML, and no placeholder alt text."""

    @jinja2.pass_context
    def markdown2html(self, context, source):
        cell = context.get("cell", {})
        renderer = MathMLRenderer(escape=False, attachments=cell.get("attachments", {}),
                                  embed_images=self.embed_images,
                                  path=context.get("resources", {}).get("metadata", {}).get("path", ""),
                                  anchor_link_text=self.anchor_link_text,
                                  exclude_anchor_links=self.exclude_anchor_links, **self.lexer_options)
        return MarkdownWithMath(renderer=renderer).render(source)

    def from_notebook_node(self, nb, resources=None, **kw):
        # nbconvert gives every <img> without alt the text "No description has been provided for this image".
        # That hides a missing description from axe and tells a screen-reader user nothing: take it back out.
        body, resources = super().from_notebook_node(nb, resources, **kw)
        resources["missing_alt"] = body.count(NO_ALT_PLACEHOLDER)
        return body.replace(NO_ALT_PLACEHOLDER, ""), resources


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


def _with_summary(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """`nb`, with the summary of the same-named solutions/ notebook when it has none of its own (the learner
    copies in notebooks/ do not keep it)."""
    solution = SOLUTIONS_DIR / name
    if nb.metadata.get("ffn_course", {}).get("summary") or not solution.is_file():
        return nb
    summary = nbformat.read(solution, as_version=4).metadata.get("ffn_course", {}).get("summary")
    if not summary:
        return nb
    copy = nbformat.from_dict(nb)
    copy.metadata.setdefault("ffn_course", {})["summary"] = summary
    return copy


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
    """Replace every widget output, in place, by what a page can show without a kernel: the bundle's own
    text/html, else its static picture with a note, else a note. Return how many widget outputs there were."""
    count = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW not in data:
                continue
            count += 1
            image = next((m for m in ("image/png", "image/jpeg") if m in data), None)
            if "text/html" in data:
                output["data"] = {"text/html": data["text/html"]}
            elif image:
                note = WIDGET_NOTE.format(what="A static picture of an interactive widget's starting state.")
                described = output.get("metadata", {}).get(image, {}).get("alt") or data.get("text/plain", "")
                alt = html.escape(described or "A static picture of an interactive widget", quote=True)
                picture = f"<img src='data:{image};base64,{data[image].strip()}' alt='{alt}'>"
                output["data"] = {"text/html": picture + note}
            else:
                output["data"] = {"text/html": WIDGET_NOTE.format(what="An interactive widget goes here.")}
    nb.metadata.pop("widgets", None)           # no widget state: nothing for a widget manager to load
    return count


def _defined_names(source: str) -> list[str]:
    """Names of the functions and classes a cell defines (for the labels of its folds)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def _without_markers(source: str) -> str:
    """A solution cell as the learner would write it: the marker lines removed, the rest as is."""
    return "\n".join(line for line in source.split("\n") if line.strip() not in (nbtool.BEGIN, nbtool.END))


def fold_solutions(nb: nbformat.NotebookNode, where: str) -> int:
    """The folded edition, in place: each exercise cell shows the learner's stub with its solution folded
    below, and each check cell's stored output (what the check printed for the solution) is folded too.
    Return the number of exercises."""
    exercises = 0
    for index, cell in enumerate(nb.cells):
        if nbtool.is_exercise(cell):
            exercises += 1
            names = _defined_names(cell.source)
            label = (": " + ", ".join(names)) if names else ""
            solution = _without_markers(cell.source)
            cell.source = nbtool.strip_solutions(cell.source, f"{where} cell {index + 1}")
            cell.metadata["ffn_site"] = {"solution": solution, "label": html.escape(label),
                                         "stub_note": "Above: the stub you start from. Try the exercise in JupyterLab before you open the solution."}
        elif cell.cell_type == "code" and nbtool.CHECK_CALL.search(cell.source) and cell.get("outputs"):
            check = nbtool.CHECK_CALL.search(cell.source).group(1)
            cell.metadata["ffn_site"] = {"fold_outputs": f"what <code>{html.escape(check)}</code> printed "
                                                         "for the solution"}
    return exercises


LOCAL_LINK = re.compile(r"\]\((?:\./)?([\w.-]+)\.(?:md|ipynb)(#[^)\s]*)?\)")


def local_links(nb: nbformat.NotebookNode, stems: set[str]) -> None:
    """Markdown links to the course's own notebooks and cards (`conventions.md`, `02_pure_python.ipynb`), in
    place, pointed at their pages on the site."""
    def page(match: re.Match) -> str:
        stem = match.group(1)
        return f"]({stem}.html{match.group(2) or ''})" if stem in stems else match.group(0)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = LOCAL_LINK.sub(page, cell.source)


def refuse_solutions(nb: nbformat.NotebookNode, where: str) -> None:
    """The learner edition's safety net: no solution marker may reach a page."""
    found = [i + 1 for i, c in enumerate(nb.cells) if nbtool.BEGIN in c.source or nbtool.END in c.source]
    if found:
        raise SystemExit(f"{where}: cells {found} hold solution markers; the learner edition is built from "
                         "learner notebooks (run `make notebooks`, or pass --source notebooks)")


def code_css(style_name: str, scope: str = "html body") -> str:
    """CSS colouring every Pygments token class under `scope` as the named style does (tokens the style leaves
    alone get its text colour, so no colour of JupyterLab's own highlighting survives)."""
    style = get_style_by_name(style_name)
    text = style.style_for_token(Token.Text)["color"] or "000000"
    rules = [f"{scope} .highlight {{ background: {style.background_color}; color: #{text}; }}",
             f"{scope} .jp-InputArea-editor, {scope} .ffn-fold .cm-editor {{ background: {style.background_color}; }}"]
    for token, cls in STANDARD_TYPES.items():
        if not cls:
            continue
        s = style.style_for_token(token)
        rules.append(f"{scope} .highlight .{cls} {{ color: #{s['color'] or text}; "
                     f"font-weight: {'bold' if s['bold'] else 'normal'}; "
                     f"font-style: {'italic' if s['italic'] else 'normal'}; background: transparent; }}")
    return "\n".join(rules)


def page_css() -> str:
    dark_code = code_css(CODE_STYLES["dark"])
    return (SITE_CSS + "\n" + code_css(CODE_STYLES["light"])
            + "\n@media (prefers-color-scheme: dark) {\n" + dark_code + "\n}\n")


def header(pages: list[Page], index: int | None, edition: str) -> str:
    links = ["<li><a href='index.html'>All notebooks</a></li>"]
    if index is not None and index > 0:
        p = pages[index - 1]
        links.append(f"<li>Previous: <a href='{p.html_name}' rel='prev'>{html.escape(p.title)}</a></li>")
    if index is not None and index + 1 < len(pages):
        p = pages[index + 1]
        links.append(f"<li>Next: <a href='{p.html_name}' rel='next'>{html.escape(p.title)}</a></li>")
    return (f"<a class='ffn-skip-link' href='#content'>Skip to content</a>\n"
            f"<header class='ffn-header'>\n<nav aria-label='Notebooks'><ul>{''.join(links)}</ul></nav>\n"
            f"<p class='ffn-edition'>{html.escape(COURSE_TITLE)}: {html.escape(EDITIONS[edition][1])}</p>\n"
            f"</header>")


def footer() -> str:
    return ("<footer class='ffn-footer'>\n<p>Code: <a href='LICENSE.txt'>MIT licence</a>. Lesson text and "
            "figures: <a href='LICENSE-text.txt'>Creative Commons Attribution 4.0 International (CC BY 4.0)"
            "</a>. Reuse them with credit to the course.</p>\n<p>Accessibility: every page is checked with "
            "axe-core in light and dark mode, with no serious or critical violation allowed. If something "
            "here does not work for you, open an issue on the course repository (or tell your instructor) "
            "and say which page and what you use to read it.</p>\n</footer>")


def index_page(pages: list[Page], source: str, edition: str, cards: list[Page] = ()) -> str:
    reference = ("<h2>Reference</h2>\n<ul>\n" + "\n".join(
        f"<li><a href='{c.html_name}'>{html.escape(c.title)}</a>: {_inline_markdown(c.summary)}</li>"
        for c in cards) + "\n</ul>") if cards else ""
    rows = "\n".join(
        f"<tr><td><a href='{p.html_name}'>{html.escape(p.title)}</a><br><code>{html.escape(p.name)}</code></td>"
        f"<td>{_inline_markdown(p.summary)}</td></tr>" for p in pages)
    what = ("The completed notebooks with their stored outputs, to read without running anything. Each "
            "exercise shows the stub you start from; its solution is folded below it: try the exercise "
            "first, then open <em>Show solution</em>." if edition == "folded" else
            "The notebooks as you get them: each exercise is a stub for you to complete, and no solution is "
            "included. Its check cell shows what a fresh notebook prints before you start.")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(COURSE_TITLE)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
{SITE_CSS}
{INDEX_CSS}
</style></head>
<body>
{header(pages, None, edition)}
<main id="content" tabindex="-1">
<h1>{html.escape(COURSE_TITLE)}</h1>
<p>{what} Built from <code>{html.escape(source)}/</code> by <code>make html</code>. To run the notebooks and do
the exercises, use <code>make lab</code>.</p>
<table>
<caption class="ffn-edition">The notebooks, in order</caption>
<thead><tr><th scope="col">Notebook</th><th scope="col">What you do</th></tr></thead>
<tbody>
{rows}
</tbody>
</table>
{reference}
</main>
{footer()}
</body></html>
"""


def build(out: Path, source: Path | None = None, edition: str = "folded") -> list[Page]:
    """Write index.html, one page per notebook in `source` and the licences into `out`; return the pages."""
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}; choose one of {list(EDITIONS)}")
    source = Path(source) if source is not None else EDITIONS[edition][0]
    paths = sorted(source.glob("*.ipynb"))
    if not paths:
        raise SystemExit(f"No notebooks in {source}")
    if edition == "none" and source.resolve() == NOTEBOOKS_DIR.resolve():
        stale = nbtool.stale()
        if stale:
            raise SystemExit("notebooks/ is stale, so the learner edition would not match solutions/: "
                             + "; ".join(stale) + ". Run `make notebooks` first.")
    notebooks = [nbformat.read(path, as_version=4) for path in paths]
    pages = [describe(_with_summary(nb, path.name), path.name) for nb, path in zip(notebooks, paths)]
    # Markdown cards beside the notebooks (conventions.md): a page each, linked from the index and the lessons.
    card_paths = sorted(source.glob("*.md"))
    cards = [nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(p.read_text(encoding="utf-8"))])
             for p in card_paths]
    card_pages = [describe(card, p.name) for card, p in zip(cards, card_paths)]
    stems = {Path(p.name).stem for p in pages + card_pages}
    exporter = OfflineHTMLExporter(template_file="ffn_offline.html.j2", theme="light",
                                   extra_loaders=[jinja2.DictLoader({"ffn_offline.html.j2": OFFLINE_TEMPLATE})])
    exporter.log.setLevel(logging.ERROR)        # its "Alternative text is missing": the warning below names the page
    dark_theme = exporter.environment.loader.get_source(exporter.environment, "static/theme-dark.css")[0]
    css = page_css()
    out.mkdir(parents=True, exist_ok=True)
    for nb, page in zip(notebooks, pages):
        where = f"{source.name}/{page.name}"
        if edition == "folded":
            fold_solutions(nb, where)
        else:
            refuse_solutions(nb, where)
        static_outputs(nb)
    for i, (nb, page) in enumerate(list(zip(notebooks, pages)) + list(zip(cards, card_pages))):
        local_links(nb, stems)
        resources = {"metadata": {"name": page.title},
                     "ffn": {"css": css, "dark_theme": dark_theme, "footer": footer(),
                             "header": header(pages, i if i < len(pages) else None, edition)}}
        body, resources = exporter.from_notebook_node(nb, resources=resources)
        if resources.get("missing_alt"):
            print(f"warning: {page.html_name}: {resources['missing_alt']} figure(s) without a text alternative "
                  "(give the output an <img alt> in text/html, or metadata image/png alt)", file=sys.stderr)
        (out / page.html_name).write_text(body, encoding="utf-8")
    (out / "index.html").write_text(index_page(pages, source.name, edition, card_pages), encoding="utf-8")
    for name, target in LICENCES.items():
        if (ROOT / name).is_file():
            shutil.copyfile(ROOT / name, out / target)
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "site", help="folder to write (default: site/)")
    parser.add_argument("--solutions", choices=list(EDITIONS), default="folded",
                        help="folded: solutions behind a toggle (default); none: the learner edition")
    parser.add_argument("--source", type=Path, default=None,
                        help="executed notebooks to render (default: solutions/, or notebooks/ with --solutions none)")
    args = parser.parse_args(argv)
    pages = build(args.out, args.source, args.solutions)
    for page in pages:
        print(f"wrote    {args.out / page.html_name}")
    print(f"Open {args.out / 'index.html'} in a browser ({len(pages)} notebooks, {EDITIONS[args.solutions][1]}).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
