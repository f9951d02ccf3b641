"""The slide decks in a real browser (`make test-a11y`): each of the eight decks opens in headless Chromium from
disk, loads nothing but its own files, moves forward and back from the keyboard, carries speaker notes, and has
no serious or critical axe-core violation on any of its slides (each slide shown in turn, since reveal.js
hides the others, with every poll answer unfolded).

tools/build_slides.py builds the decks with reveal.js (pinned there, installed with npm into build/reveal/);
axe-core, Chromium and the fixtures are those of the site's test (tests/a11y.py). A deck with a figure that
has no alt text must fail axe: that proves the run can fail. Runs only with FFN_BROWSER_TEST=1; skips, saying
why, where there is no npm or no Chromium.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_slides  # noqa: E402
import npm_pin  # noqa: E402
from a11y import axe_js, browser, report, run_axe  # noqa: E402,F401  (the site's axe and Chromium)
from test_site import figure_png  # noqa: E402
from test_slides import notebook, remote_loads  # noqa: E402

SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
READY = "() => window.Reveal && Reveal.isReady()"
OPEN_EVERY_FOLD = "document.querySelectorAll('details').forEach(d => { d.open = true; })"

pytestmark = pytest.mark.skipif(os.environ.get("FFN_BROWSER_TEST") != "1",
                                reason="the slides' browser test runs with `make test-a11y`")


@pytest.fixture(scope="module")
def reveal() -> Path:
    try:
        return build_slides.install_reveal()
    except npm_pin.NpmMissing as missing:
        pytest.skip(f"{missing}, then run `make test-a11y` again")


@pytest.fixture(scope="module")
def decks(tmp_path_factory, reveal):
    out = tmp_path_factory.mktemp("slides")
    return out, build_slides.build(out, reveal=reveal)


def open_deck(context, path: Path):
    """A page showing the deck at `path`, and the list of every URL it requested."""
    page = context.new_page()
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(path.as_uri())
    page.wait_for_function(READY)
    return page, requests


def deck_violations(page, axe: Path) -> list[dict]:
    """axe's serious and critical violations on every slide of the open deck (every vertical one too)."""
    page.add_script_tag(path=str(axe))
    page.evaluate(OPEN_EVERY_FOLD)                 # a poll's answers: axe skips what is folded away
    found: dict[tuple, dict] = {}
    for h, count in enumerate(page.evaluate(
            "Reveal.getHorizontalSlides().map(s => Math.max(1, s.querySelectorAll(':scope > section').length))")):
        for v in range(count):
            page.evaluate(f"Reveal.slide({h}, {v})")
            run_axe(page, f"slide {h + 1}.{v + 1}, every answer open", found)
    return list(found.values())


def test_the_decks_and_reveal_load_nothing_from_the_network(decks):
    out, _ = decks
    assert (out / "reveal" / "reveal.js").is_file() and (out / "reveal" / "LICENSE").is_file()
    assert remote_loads(out) == []


@pytest.mark.parametrize("lesson", [p.stem for p in SOLUTIONS])
def test_a_deck_opens_moves_from_the_keyboard_and_passes_axe(browser, decks, axe_js, lesson):
    out, built = decks
    deck = next(d for d in built if d.name == f"{lesson}.ipynb")
    page, requests = open_deck(browser["light"], out / deck.html_name)
    try:
        assert page.evaluate("Reveal.getTotalSlides()") >= len(deck.slides)
        assert page.evaluate("Reveal.getIndices().h") == 0
        page.keyboard.press("ArrowRight")
        assert page.evaluate("Reveal.getIndices().h") == 1, "Right arrow did not move to the next slide"
        page.keyboard.press("Space")
        assert page.evaluate("Reveal.getIndices().h") == 2, "Space did not move to the next slide"
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        assert page.evaluate("Reveal.getIndices().h") == 0, "Left arrow did not move back"
        notes = page.evaluate("Reveal.getSlides().map(s => Reveal.getSlideNotes(s) || '').filter(n => n.trim())")
        assert len(notes) == sum(1 for s in deck.slides if s.notes), "speaker notes missing"
        alts = page.evaluate("[...document.querySelectorAll('.slides img')].map(i => i.alt)")
        assert all(alt.strip() for alt in alts), f"a figure lost its alt text: {alts}"
        found = deck_violations(page, axe_js)
        if found:
            pytest.fail(f"{deck.html_name}: {len(found)} serious or critical violation(s)\n{report(found)}",
                        pytrace=False)
        local = [url for url in requests if not url.startswith(("file:", "data:"))]
        assert local == [], f"{deck.html_name} requested {local}"
    finally:
        page.close()


def test_the_decks_index_passes_axe(browser, decks, axe_js):
    out, built = decks
    page = browser["light"].new_page()
    try:
        page.goto((out / "index.html").as_uri())
        assert page.locator("a[href$='.html']").count() == len(built)
        page.add_script_tag(path=str(axe_js))
        found: dict[tuple, dict] = {}
        run_axe(page, "as loaded", found)
    finally:
        page.close()
    assert not found, report(list(found.values()))


def test_a_figure_without_alt_text_fails_on_a_slide(tmp_path, browser, axe_js, reveal):
    folder = notebook(tmp_path, [("markdown", "## A figure", ["slide"]), ("code", "plot()", ["slide-continue"])])
    path = folder / "09_test.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[-1].outputs = [nbformat.v4.new_output("display_data", data={"image/png": figure_png()})]
    nbformat.write(nb, path)
    build_slides.build(tmp_path / "out", folder, reveal)
    page, _ = open_deck(browser["light"], tmp_path / "out" / "09_test.html")
    try:
        found = deck_violations(page, axe_js)
    finally:
        page.close()
    assert [f["rule"] for f in found] == ["image-alt"], report(found)
