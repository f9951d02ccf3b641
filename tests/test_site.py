"""tools/build_site.py: an offline site in two editions (solutions folded; learner, no solutions), with landmarks,
licences, figures' alt text and widgets' static stand-ins. tests/test_axe.py runs axe-core on it in a browser."""
import base64
import io
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import build_site  # noqa: E402
import notebooks as nbtool  # noqa: E402

SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"0" * 32).decode()
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


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


def soup(path):
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def words(text):
    return " ".join(text.split())


def has_figure(path):
    nb = nbformat.read(path, as_version=4)
    return any("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


def notebook_text(path):
    """Every cell's source and every text output of a notebook, whitespace collapsed."""
    parts = []
    for cell in nbformat.read(path, as_version=4).cells:
        parts.append(cell.source)
        for output in cell.get("outputs", []):
            parts += [output.get("text", ""), output.get("data", {}).get("text/plain", "")]
    return words("\n".join(parts))


def leaked(blocks, page_text, learner_notebook):
    """Solution blocks in a page's text that the learner's own notebook does not show anyway (a lesson may
    show a line of a solution elsewhere, say in the worked example before the exercise)."""
    shown = notebook_text(learner_notebook)
    return [b for b in blocks if b in page_text and b not in shown]


def solution_blocks(path):
    """The code between the solution markers of every exercise in a solutions/ notebook, one string each."""
    blocks = []
    for cell in nbformat.read(path, as_version=4).cells:
        if nbtool.is_exercise(cell):
            inside = re.findall(rf"{nbtool.BEGIN}\n(.*?)\n[ \t]*{nbtool.END}", cell.source, flags=re.DOTALL)
            blocks += [words(b) for b in inside]
    return blocks


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    return out, build_site.build(out)


@pytest.fixture(scope="module")
def learner_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("learner-site")
    return out, build_site.build(out, edition="none")


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


def test_the_learner_edition_lists_the_same_notebooks_with_the_same_summaries(site, learner_site):
    assert [(p.name, p.title, p.summary) for p in learner_site[1]] == [(p.name, p.title, p.summary) for p in site[1]]


@pytest.mark.parametrize("edition", ["site", "learner_site"])
def test_pages_embed_their_figures_and_load_nothing_from_the_network(edition, request):
    out, pages = request.getfixturevalue(edition)
    for page in pages:
        parsed = links(out / page.html_name)
        assert not [s for s in parsed.srcs if not s.startswith("data:")], f"{page.html_name} loads {parsed.srcs}"
        assert not [h for h in parsed.hrefs if re.match(r"https?://", h) and "stylesheet" in h]
        if has_figure(ROOT / "solutions" / page.name):
            assert any(s.startswith("data:image/png;base64,") for s in parsed.srcs), f"{page.html_name}: no figure"
        assert "index.html" in parsed.hrefs                           # the way back


@pytest.mark.parametrize("edition", ["site", "learner_site"])
def test_every_local_link_leads_to_a_page_of_the_site(edition, request):
    out, _ = request.getfixturevalue(edition)
    for page in sorted(out.glob("*.html")):
        for href in links(page).hrefs:
            if re.match(r"[a-z]+:|#", href):
                continue
            target = href.split("#")[0]
            assert (out / target).is_file(), f"{page.name} links {href}, which the site does not have"


@pytest.mark.parametrize("edition", ["site", "learner_site"])
def test_every_page_has_a_skip_link_landmarks_and_the_licences(edition, request):
    out, pages = request.getfixturevalue(edition)
    for name in ["index.html"] + [p.html_name for p in pages]:
        page = soup(out / name)
        first_link = page.body.find("a")
        assert first_link.get("href") == "#content" and "Skip to content" in first_link.text, name
        mains = page.find_all("main")
        assert len(mains) == 1 and mains[0].get("id") == "content", f"{name}: {len(mains)} <main>"
        assert page.find("nav", attrs={"aria-label": True}) and page.find("header"), name
        footer = page.find("footer")
        assert footer and "MIT" in footer.text and "CC BY 4.0" in footer.text, name
        assert {a["href"] for a in footer.find_all("a")} >= {"LICENSE.txt", "LICENSE-text.txt"}, name
        assert page.html.get("lang") == "en" and page.title.text.strip(), name
    assert "MIT License" in (out / "LICENSE.txt").read_text()
    assert "Attribution 4.0 International" in (out / "LICENSE-text.txt").read_text()


def test_the_repository_states_its_licences():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "Creative Commons Attribution 4.0 International" in (ROOT / "LICENSE-text").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "MIT" in readme and "CC BY 4.0" in readme and "LICENSE-text" in readme


def test_the_folded_edition_shows_each_stub_and_folds_its_solution(site):
    out, pages = site
    total = 0
    for path in SOLUTIONS:
        page = soup(out / f"{path.stem}.html")
        blocks = solution_blocks(path)
        folds = page.select("details.ffn-solution")
        assert len(folds) == len(blocks), f"{path.name}: {len(blocks)} exercises, {len(folds)} folded solutions"
        for fold, block in zip(folds, blocks):
            assert block in words(fold.get_text()), f"{path.name}: a fold lacks its solution:\n{block}"
            assert fold.summary.get_text(" ", strip=True).startswith("Show Hide solution")
            assert "NotImplementedError" in fold.find_previous("div", class_="jp-Cell-inputWrapper").get_text()
        for details in page.find_all("details"):
            details.decompose()
        visible = words(page.get_text())
        outside = leaked(blocks, visible, ROOT / "notebooks" / path.name)
        assert not outside, f"{path.name}: solutions outside a fold:\n" + "\n".join(outside)
        assert "all" not in visible or "cases pass" not in visible, f"{path.name}: a check's output is not folded"
        total += len(blocks)
    assert total >= len(SOLUTIONS), "fewer exercises than lessons: is the marker search broken?"


def test_the_learner_edition_has_no_solution_and_checks_say_not_implemented(learner_site):
    out, pages = learner_site
    for path in SOLUTIONS:
        page = soup(out / f"{path.stem}.html")
        assert not page.select("details.ffn-solution, details.ffn-check-output"), path.name
        text = words(page.get_text())
        found = leaked(solution_blocks(path), text, ROOT / "notebooks" / path.name)
        assert not found, f"{path.name}: solutions in the learner edition:\n" + "\n".join(found)
        assert text.count("not implemented yet") >= len(solution_blocks(path)), path.name
        assert nbtool.BEGIN not in text and "learner edition" in text


def figure_png() -> str:
    """A real, small, labelled figure as base64 PNG."""
    fig = Figure(figsize=(3, 2), dpi=60)
    ax = fig.add_subplot()
    ax.plot([0, 1, 2], [0, 1, 4], label="x squared")
    ax.set(title="A parabola", xlabel="x", ylabel="x squared")
    ax.legend()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return base64.b64encode(buffer.getvalue()).decode()


QUIZ_HTML = ("<div class='ffn-quiz'><p><strong>Check your understanding.</strong> Which units does ReLU zero?</p>"
             "<ol type='a'><li>the negative pre-activations</li><li>the positive ones</li></ol>"
             "<details><summary>Answer and feedback</summary><p>(a): ReLU sends every negative pre-activation "
             "to exactly 0.</p></details></div>")


def lesson_like(folder: Path, figure_without_alt: bool = False) -> tuple[Path, Path]:
    """A solution notebook with every kind of cell and output the lessons use (a hint, an exercise and its
    check, figures described the way helpers.plotting's show() does, a quiz, the explorer's static picture),
    and its learner copy as `make notebooks` would write it. Return (solutions folder, learner folder)."""
    png, alt = figure_png(), "A parabola through (0, 0), (1, 1) and (2, 4)"
    nb = nbformat.v4.new_notebook()
    nb.metadata["ffn_course"] = {"summary": "A synthetic lesson with every kind of output."}
    nb.metadata["language_info"] = {"name": "python", "pygments_lexer": "ipython3"}
    md, code, output = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell, nbformat.v4.new_output
    nb.cells = [
        md("# 01. A synthetic lesson\n\nIt has every kind of output the lessons use, with maths: $z = xW + b$, "
           "and links in the text: the [conventions card](conventions.md) and a paper, "
           "[arXiv:2002.05202](https://arxiv.org/abs/2002.05202)."),
        md("### Exercise 1 · Double it\n\n**Difficulty:** ● ○ ○ · **Time box:** 2 minutes\n\n"
           "| input | output |\n|---|---|\n| 1 | 2 |\n\n"
           "<details><summary>Hint 1</summary>\n\nMultiply by **two**.\n</details>"),
        code('def double(x):\n    """Twice x."""  # a comment\n    ### BEGIN SOLUTION\n    return 2 * x\n'
             "    ### END SOLUTION"),
        code("check_double(double)"),
        code("show(fig, alt=...)"),
        code("fig"),
        code("quiz()"),
        code("explore()"),
        md("**Takeaway:** the figure above is a parabola."),
    ]
    nb.cells[3].outputs = [output("stream", name="stdout",
                                  text="double: checking 3 cases\n  \u2714 1 -> 2\ndouble: all 3 cases pass. Well done!\n")]
    nb.cells[4].outputs = [output("display_data", metadata={"image/png": {"alt": alt}}, data={
        "image/png": png, "text/plain": "<Figure>",
        "text/html": f'<img src="data:image/png;base64,{png}" alt="{alt}">'})]
    nb.cells[5].outputs = [output("display_data", data={"image/png": png, "text/plain": "<Figure>"},
                                  metadata={} if figure_without_alt else {"image/png": {"alt": alt}})]
    nb.cells[6].outputs = [output("display_data", data={
        "text/plain": "Quiz(1 question)", "text/html": QUIZ_HTML,
        WIDGET_VIEW: {"model_id": "not-stored", "version_major": 2, "version_minor": 0}})]
    nb.cells[7].outputs = [output("display_data", metadata={"image/png": {"alt": "The explorer: " + alt}}, data={
        "text/plain": "FFNExplorer('robot', ReLU): 3 of 8 hidden units zeroed", "image/png": png,
        WIDGET_VIEW: {"model_id": "not-stored", "version_major": 2, "version_minor": 0}})]
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            cell.execution_count = i
    learner = nbtool.learner_version(nb, "01_synthetic.ipynb")
    for theirs, ours in zip(learner.cells, nb.cells):          # what Run All of the learner copy stores
        if ours.cell_type == "code" and not nbtool.is_exercise(ours):
            theirs.outputs, theirs.execution_count = ours.outputs, ours.execution_count
    learner.cells[3].outputs = [output("stream", name="stdout", text="double: not implemented yet.\n")]
    folders = folder / "solutions", folder / "notebooks"
    for where, notebook in zip(folders, (nb, learner)):
        where.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, where / "01_synthetic.ipynb")
        (where / "conventions.md").write_text("# Conventions card\n\nOne page of symbols.\n\n"
                                              "| | $Wx$ | $xW$ |\n|---|---|---|\n| $W_1$ | $H \\times D$ | $D \\times H$ |\n")
    return folders


def test_a_synthetic_lesson_in_both_editions(tmp_path, capsys):
    solutions, learner = lesson_like(tmp_path)
    build_site.build(tmp_path / "folded", solutions, "folded")
    build_site.build(tmp_path / "none", learner, "none")
    assert "without a text alternative" not in capsys.readouterr().err
    folded, plain = soup(tmp_path / "folded" / "01_synthetic.html"), soup(tmp_path / "none" / "01_synthetic.html")
    (fold,) = folded.select("details.ffn-solution")
    assert fold.summary.get_text(" ", strip=True) == "Show Hide solution: double"
    assert "return 2 * x" in fold.get_text() and "BEGIN SOLUTION" not in folded.get_text()
    (check,) = folded.select("details.ffn-check-output")
    assert "check_double" in check.summary.get_text() and "all 3 cases pass" in check.get_text()
    for page in (folded, plain):
        imgs = page.select("main img")
        assert len(imgs) == 3 and all(i.get("alt", "").strip() for i in imgs), [i.get("alt") for i in imgs]
        assert any(i["alt"].startswith("The explorer: A parabola") for i in imgs)      # metadata alt wins
        hint = [d for d in page.select(".jp-MarkdownCell details") if "Hint 1" in d.summary.text]
        assert hint and "two" in hint[0].get_text()
        quiz = page.select_one(".ffn-quiz details")
        assert quiz and quiz.summary.text == "Answer and feedback"
        assert "widget-view+json" not in str(page) and page.find("math")
    assert "return 2 * x" not in plain.get_text() and "not implemented yet" in plain.get_text()
    assert "NotImplementedError" in plain.get_text() and not plain.select("details.ffn-fold")
    assert "learner edition" in plain.get_text() and "with solutions" in folded.get_text()
    for edition in ("folded", "none"):                 # the card is a page, and links to it lead there
        assert "conventions.html" in links(tmp_path / edition / "01_synthetic.html").hrefs
        assert "conventions.md" not in links(tmp_path / edition / "01_synthetic.html").hrefs
        assert "conventions.html" in links(tmp_path / edition / "index.html").hrefs
        card = soup(tmp_path / edition / "conventions.html")
        assert card.find("h1").get_text(strip=True).startswith("Conventions card") and card.find("math")


def test_a_figure_without_alt_text_gets_none_and_a_warning(tmp_path, capsys):
    solutions, _ = lesson_like(tmp_path, figure_without_alt=True)
    build_site.build(tmp_path / "out", solutions)
    assert "01_synthetic.html: 1 figure(s) without a text alternative" in capsys.readouterr().err
    page = (tmp_path / "out" / "01_synthetic.html").read_text()
    assert "No description has been provided" not in page
    assert len([i for i in soup(tmp_path / "out" / "01_synthetic.html").select("main img") if not i.get("alt")]) == 1


def test_the_learner_edition_refuses_a_notebook_with_solutions(tmp_path):
    solutions, _ = lesson_like(tmp_path)
    with pytest.raises(SystemExit, match="solution markers"):
        build_site.build(tmp_path / "out", solutions, "none")
    with pytest.raises(ValueError, match="unknown edition"):
        build_site.build(tmp_path / "out", solutions, "hidden")


def test_code_is_coloured_by_the_accessible_styles_in_both_schemes():
    css = build_site.page_css()
    light, dark = css.split("@media (prefers-color-scheme: dark) {\nhtml body .highlight")
    for cls in ("c1", "k", "o", "mi", "s2", "nb"):
        assert f"html body .highlight .{cls} {{ color: #" in light and f"html body .highlight .{cls} {{" in dark
    assert "background: #f2f2f2" in light and "background: #2b2b2b" in dark      # a11y-light, a11y-dark
    assert "var(--jp-mirror-editor" not in css


def synthetic(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 01. Tracing by hand\n\nWe trace one token. Then we do more."),
                nbformat.v4.new_code_cell("explore()")]
    nb.cells[1].outputs = [nbformat.v4.new_output(
        "display_data", data={"text/plain": "FFNExplorer('robot', ReLU): 3 of 8 hidden units zeroed",
                              "image/png": PNG,
                              WIDGET_VIEW: {"model_id": "abc", "version_major": 2, "version_minor": 0}})]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    second = nbformat.v4.new_notebook()
    second.cells = [nbformat.v4.new_markdown_cell("# Two\nText right under the title, `code` & $x_1$. More.")]
    third = nbformat.v4.new_notebook()
    third.metadata["ffn_course"] = {"summary": "Set in the metadata."}
    third.cells = [nbformat.v4.new_code_cell("w")]
    third.cells[0].outputs = [nbformat.v4.new_output(
        "display_data", data={"text/plain": "VBox()", WIDGET_VIEW: {}})]
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
    (picture,) = soup(tmp_path / "out" / "01_a.html").select("main img")
    assert picture["alt"] == "FFNExplorer('robot', ReLU): 3 of 8 hidden units zeroed"   # no alt metadata: text/plain
    assert "widget-view+json" not in first and "widget-state+json" not in first
    assert "Next: <a href=\"02_b.html\" rel=\"next\">Two</a>" in first
    third = (tmp_path / "out" / "03_c.html").read_text()
    assert "An interactive widget goes here." in third and "VBox()" not in third


@pytest.mark.parametrize("solutions, flags", [("", "--solutions folded --out site"),
                                              ("SOLUTIONS=0", "--solutions none --out site-learner")])
def test_make_html_builds_the_edition_it_documents(solutions, flags):
    dry_run = subprocess.run(["make", "-n", "html", *filter(None, [solutions])], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout
    assert f"tools/build_site.py {flags}" in dry_run, dry_run
