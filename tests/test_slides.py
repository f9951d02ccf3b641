"""tools/build_slides.py: a reveal.js deck per lesson from the cells of solutions/ tagged for slides, short, with
figures and their alt text, speaker notes, and never a solution; nothing loaded from the network.

These build the decks' pages without reveal.js itself (no npm needed); tests/test_slides_browser.py (make
test-a11y) builds them with reveal.js, drives them in Chromium and runs axe-core on every slide."""
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import build_slides  # noqa: E402
import notebooks as nbtool  # noqa: E402

SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
MIN_SLIDES, MAX_SLIDES = 6, 14
LOADERS = {"script": "src", "img": "src", "link": "href", "iframe": "src", "source": "src", "video": "src",
           "audio": "src", "embed": "src", "object": "data"}
REMOTE = re.compile(r"^\s*(?:https?:)?//", re.IGNORECASE)
CSS_LOADS = re.compile(r"""@import\s+(?:url\()?\s*['"]?([^'")\s;]+)|url\(\s*['"]?([^'")\s]+)""", re.IGNORECASE)


class Loads(HTMLParser):
    """What a browser would load from a page: the src/href of script, img, link, ... and the CSS of its <style>
    blocks and style attributes."""

    def __init__(self):
        super().__init__()
        self.urls, self.css, self._in_style = [], [], False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in LOADERS and attrs.get(LOADERS[tag]):
            self.urls.append(attrs[LOADERS[tag]])
        if tag == "img" and attrs.get("srcset"):
            self.urls += [part.split()[0] for part in attrs["srcset"].split(",") if part.strip()]
        if attrs.get("style"):
            self.css.append(attrs["style"])
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.css.append(data)


def remote_loads(folder: Path) -> list[str]:
    """Every reference in `folder`'s HTML and CSS files that a browser would fetch from the network."""
    found = []
    for path in sorted(folder.rglob("*")):
        if path.suffix == ".html":
            parser = Loads()
            parser.feed(path.read_text(encoding="utf-8"))
            urls, css = parser.urls, parser.css
        elif path.suffix == ".css":
            urls, css = [], [path.read_text(encoding="utf-8")]
        else:
            continue
        for sheet in css:
            urls += [a or b for a, b in CSS_LOADS.findall(sheet)]
        found += [f"{path.relative_to(folder)}: {url[:80]}" for url in urls if REMOTE.match(url)]
    return found


def solution_lines(path: Path) -> list[str]:
    """Every line between the solution markers of every exercise of a solutions/ notebook that the learner's
    notebook does not show anyway (a lesson may print a line of a solution elsewhere), stripped."""
    learner = (ROOT / "notebooks" / path.name).read_text(encoding="utf-8")
    lines = []
    for cell in nbformat.read(path, as_version=4).cells:
        if nbtool.is_exercise(cell):
            for block in re.findall(rf"{nbtool.BEGIN}\n(.*?)\n[ \t]*{nbtool.END}", cell.source, flags=re.DOTALL):
                lines += [line.strip() for line in block.splitlines() if line.strip()
                          and not line.strip().startswith("#") and line.strip() not in learner]
    return lines


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    out = tmp_path_factory.mktemp("slides")
    return out, build_slides.build(out)


def sections(out: Path, deck) -> list:
    """The top-level slides of a deck as written (a poll's questions are nested under its slide)."""
    soup = BeautifulSoup((out / deck.html_name).read_text(encoding="utf-8"), "html.parser")
    return soup.select_one("div.slides").find_all("section", recursive=False)


def test_every_lesson_has_a_short_deck(decks):
    out, built = decks
    assert [d.name for d in built] == [p.name for p in SOLUTIONS] and SOLUTIONS
    index = (out / "index.html").read_text(encoding="utf-8")
    for deck in built:
        count = len(sections(out, deck))
        assert count == len(deck.slides)
        assert MIN_SLIDES <= count <= MAX_SLIDES, f"{deck.name}: {count} slides, not {MIN_SLIDES} to {MAX_SLIDES}"
        assert f"href='{deck.html_name}'" in index


def test_no_solution_reaches_a_slide(decks):
    out, built = decks
    for path, deck in zip(SOLUTIONS, built):
        text = (out / deck.html_name).read_text(encoding="utf-8")
        assert nbtool.BEGIN not in text and nbtool.END not in text
        plain = BeautifulSoup(text, "html.parser").get_text("\n")
        lines = solution_lines(path)
        assert lines, f"{path.name}: no solution lines found to look for"
        leaked = [line for line in lines if line in plain or line in text]
        assert not leaked, f"{deck.html_name} shows solution lines: {leaked}"


def test_a_code_cell_shows_its_outputs_never_its_source(decks):
    out, built = decks
    for path, deck in zip(SOLUTIONS, built):
        nb = nbformat.read(path, as_version=4)
        text = (out / deck.html_name).read_text(encoding="utf-8")
        for cell in nb.cells:
            if cell.cell_type == "code" and set(cell.metadata.get("tags", [])) & set(build_slides.TAGS):
                first = next(line for line in cell.source.splitlines() if line.strip())
                assert first.strip() not in text, f"{path.name}: a slide shows the source line {first!r}"


def test_figures_on_slides_keep_their_alt_text(decks):
    out, built = decks
    figures = 0
    for path, deck in zip(SOLUTIONS, built):
        nb = nbformat.read(path, as_version=4)
        expected = [o["metadata"]["image/png"]["alt"] for c in nb.cells
                    if c.cell_type == "code" and set(c.metadata.get("tags", [])) & set(build_slides.TAGS)
                    for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
        soup = BeautifulSoup((out / deck.html_name).read_text(encoding="utf-8"), "html.parser")
        alts = [img.get("alt") for img in soup.find_all("img")]
        assert alts == expected, f"{deck.html_name}: images' alt texts {alts} are not the figures' {expected}"
        assert all(alt and alt.strip() for alt in alts)
        figures += len(alts)
    assert figures >= 8, f"only {figures} figures on all the slides: tag the cells that draw the lessons' figures"


def test_speaker_notes_come_from_cells_tagged_notes_and_stay_off_the_slide(decks):
    out, built = decks
    for path, deck in zip(SOLUTIONS, built):
        nb = nbformat.read(path, as_version=4)
        notes = [c for c in nb.cells if "notes" in c.metadata.get("tags", [])]
        assert notes, f"{path.name} has no cell tagged notes"
        soup = BeautifulSoup((out / deck.html_name).read_text(encoding="utf-8"), "html.parser")
        asides = " ".join(a.get_text(" ") for a in soup.select("aside.notes"))
        for aside in soup.select("aside.notes"):
            aside.decompose()
        shown = " ".join(soup.select_one("div.slides").get_text(" ").split())
        for cell in notes:
            words = " ".join(BeautifulSoup(build_slides.markdown(cell.source), "html.parser").get_text(" ").split())
            assert words[:60] in " ".join(asides.split()), f"{path.name}: notes {words[:60]!r} missing"
            assert words[:60] not in shown, f"{path.name}: the notes {words[:60]!r} are on a slide too"


def test_the_quiz_becomes_a_poll_with_its_answers_folded(decks):
    out, built = decks
    for deck in built:
        polls = [s for s in deck.slides if s.poll]
        assert len(polls) == 1, f"{deck.name}: tag its quiz cell slide, for the class poll"
        soup = BeautifulSoup((out / deck.html_name).read_text(encoding="utf-8"), "html.parser")
        questions = soup.select("section.ffn-poll")
        assert len(questions) == len(polls[0].poll) >= 3
        for question in questions:
            answer = question.find("details")
            assert answer is not None and answer.find("summary") and "Answer" in answer.get_text()


def test_nothing_is_loaded_from_the_network(decks):
    out, _ = decks
    assert remote_loads(out) == []


def test_the_remote_scan_finds_what_a_browser_would_load(tmp_path):
    """The scan above must be able to fail: each kind of remote load is found, and a plain link is not one."""
    (tmp_path / "a.html").write_text(
        "<script src='https://cdn.example.org/reveal.js'></script><link rel=stylesheet href='//example.org/x.css'>"
        "<img src='http://example.org/a.png' alt='a'><a href='https://example.org/paper'>a paper</a>"
        "<style>@import url(https://fonts.example.org/f.css); .x { background: url('http://example.org/b.png') }"
        "</style>")
    (tmp_path / "t.css").write_text("@import 'https://example.org/theme.css';\n"
                                    ".y { src: url(data:font/woff;base64,AA) }")
    found = remote_loads(tmp_path)
    assert len(found) == 6 and not any("paper" in f for f in found), found


def notebook(tmp_path, cells) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Lesson 09 · Test\n\nA summary.\n\nText and figures CC BY 4.0.")]
    for kind, source, tags in cells:
        cell = (nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell)(source)
        cell.metadata["tags"] = tags
        nb.cells.append(cell)
    folder = tmp_path / "src"
    folder.mkdir(exist_ok=True)
    nbformat.write(nb, folder / "09_test.ipynb")
    return folder


@pytest.mark.parametrize("source, complaint", [
    ("def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION", "is an exercise"),
    ("check_f(f)", "calls an exercise's check"),
])
def test_an_exercise_or_check_cell_tagged_slide_is_refused(tmp_path, source, complaint):
    folder = notebook(tmp_path, [("markdown", "## An idea", ["slide"]), ("code", source, ["slide-continue"])])
    with pytest.raises(build_slides.SlideError, match=complaint):
        build_slides.build(tmp_path / "out", folder)
    assert not (tmp_path / "out" / "09_test.html").exists()


def test_make_slides_refuses_it_with_a_message_before_writing_or_installing(tmp_path, capsys, monkeypatch):
    folder = notebook(tmp_path, [("code", "def f(x):\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION",
                                  ["slide"])])
    monkeypatch.setattr(build_slides, "install_reveal", lambda: pytest.fail("reveal.js installed for a refused deck"))
    assert build_slides.main(["--source", str(folder), "--out", str(tmp_path / "out")]) == 1
    assert "must not be on a slide" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("cells, complaint", [
    ([("markdown", "## Lone", ["slide-continue"])], "no tagged slide comes before it"),
    ([("markdown", "## Two", ["slide", "notes"])], "give it one of"),
    ([("markdown", "## A", ["slide"]), ("code", "print(1)", ["notes"])], "from a markdown cell"),
])
def test_tags_out_of_place_are_refused(tmp_path, cells, complaint):
    with pytest.raises(build_slides.SlideError, match=complaint):
        build_slides.build(tmp_path / "out", notebook(tmp_path, cells))


def test_make_slides_writes_the_ignored_folder():
    recipe = subprocess.run(["make", "-n", "slides"], cwd=ROOT, capture_output=True, text=True).stdout
    assert "tools/build_slides.py --out slides" in recipe
    assert "slides/" in (ROOT / ".gitignore").read_text().splitlines()
    assert "build/" in (ROOT / ".gitignore").read_text().splitlines()     # build/reveal/, npm's install


def test_readme_and_make_help_point_to_slides_the_guide_and_reset():
    help_text = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True).stdout
    for target in ("make slides", "make reset LESSON=02", "make test-a11y", "docs/teaching.md"):
        assert target in help_text
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    instructors = readme[readme.index("## Instructor notes"):]
    instructors = instructors[:instructors.index("### Grading a class")]
    for mention in ("make slides", "docs/teaching.md", "make reset LESSON=02"):
        assert mention in instructors, f"README's instructor notes do not mention {mention}"
