"""axe-core on every page of the site, both editions, light and dark (`make test-a11y`).

tools/build_site.py builds the folded edition (solutions/) and the learner edition (notebooks/) into a temporary
folder. Each page is opened from disk in headless Debian Chromium (Playwright, as in tests/test_browser.py), with
prefers-color-scheme emulated as light and as dark; axe-core is injected and run twice, once on the page as
loaded and once with every <details> (solutions, check outputs, hints, quiz answers) open, since axe skips what
is folded away. Any violation of impact "serious" or "critical" fails the test, printed with its rule, its help
page and every element it was found on (CSS selector and HTML).

axe-core comes from npm at the exact version and integrity pinned below, installed by this test into build/axe/
(git-ignored) the first time; no browser is downloaded. A synthetic lesson, with every kind of output the
lessons use and figures that carry alt text the way helpers.plotting's show() writes it, must pass too, and a
figure without alt must fail: that proves the test can fail and that the pipeline keeps alt text.

Like the browser test, this module runs only with FFN_BROWSER_TEST=1 and skips, saying why, where there is no
Chromium or no npm.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_site  # noqa: E402
from test_browser import headless_chromium  # noqa: E402  (one definition of how Chromium runs)
from test_site import lesson_like  # noqa: E402

AXE_VERSION = "4.14.1"
AXE_INTEGRITY = ("sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ==")
AXE_DIR = ROOT / "build" / "axe"
AXE_JS = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")
SCHEMES = ("light", "dark")
EDITIONS = ("folded", "none")
PAGES = ["index.html"] + [p.stem + ".html" for p in sorted((ROOT / "solutions").glob("*.ipynb"))
                           + sorted((ROOT / "solutions").glob("*.md"))]      # the lessons, then cards
OPEN_EVERY_FOLD = "document.querySelectorAll('details').forEach(d => { d.open = true; })"
RUN_AXE = "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
# Which notebook cell an element sits in, and the first line of that cell's code: where to fix it.
WHERE = """selector => { const cell = document.querySelector(selector)?.closest('.jp-Cell');
  if (!cell) return '';
  const code = cell.querySelector('.jp-InputArea-editor');
  return (cell.id ? cell.id + ': ' : '') + (code ? code.textContent.trim().split('\\n')[0].slice(0, 100) : 'a markdown cell');
}"""

pytestmark = pytest.mark.skipif(os.environ.get("FFN_BROWSER_TEST") != "1",
                                reason="the accessibility test runs with `make test-a11y`")


def installed_axe() -> dict | None:
    """The installed axe-core's entry in npm's lock file, or None."""
    lock = AXE_DIR / "node_modules" / ".package-lock.json"
    if not (lock.is_file() and AXE_JS.is_file()):
        return None
    return json.loads(lock.read_text()).get("packages", {}).get("node_modules/axe-core")


@pytest.fixture(scope="session")
def axe_js() -> Path:
    entry = installed_axe()
    if not entry or entry.get("version") != AXE_VERSION:
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("no npm here to install axe-core: install Node.js and npm (`apt-get install npm`, as root; "
                        ".ci/run does), then run `make test-a11y` again")
        shutil.rmtree(AXE_DIR, ignore_errors=True)
        AXE_DIR.mkdir(parents=True)
        subprocess.run([npm, "install", "--prefix", str(AXE_DIR), "--no-save", "--no-package-lock", "--no-audit",
                        "--no-fund", "--ignore-scripts", f"axe-core@{AXE_VERSION}"], check=True, timeout=300)
        entry = installed_axe()
    assert entry and entry.get("version") == AXE_VERSION, f"npm installed {entry}, not axe-core {AXE_VERSION}"
    assert entry.get("integrity") == AXE_INTEGRITY, f"axe-core {AXE_VERSION} has integrity {entry.get('integrity')}"
    return AXE_JS


@pytest.fixture(scope="module")
def browser():
    with headless_chromium("test-a11y") as chromium:
        contexts = {scheme: chromium.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 900})
                    for scheme in SCHEMES}
        for context in contexts.values():
            context.set_default_timeout(120_000)
        yield contexts


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """Both editions of the real site, built once."""
    out = tmp_path_factory.mktemp("sites")
    for edition in EDITIONS:
        build_site.build(out / edition, edition=edition)
    return out


def violations(context, path: Path, axe: Path) -> list[dict]:
    """axe's serious and critical violations on the page at `path`, as loaded and with every fold open."""
    page = context.new_page()
    try:
        page.goto(path.as_uri())
        page.add_script_tag(path=str(axe))
        found: dict[tuple, dict] = {}
        for state in ("as loaded", "every <details> open"):
            if state != "as loaded":
                page.evaluate(OPEN_EVERY_FOLD)
            for rule in page.evaluate(RUN_AXE):
                if rule["impact"] not in BLOCKING:
                    continue
                for node in rule["nodes"]:
                    key = (rule["id"], json.dumps(node["target"]))
                    if key in found:
                        continue
                    cell = page.evaluate(WHERE, node["target"][0]) if len(node["target"]) == 1 else ""
                    found[key] = {"rule": rule["id"], "impact": rule["impact"], "help": rule["help"],
                                  "url": rule["helpUrl"], "target": node["target"], "html": node["html"],
                                  "why": node.get("failureSummary", ""), "state": state, "cell": cell}
        return list(found.values())
    finally:
        page.close()


def report(found: list[dict]) -> str:
    lines = []
    for rule in sorted({f["rule"] for f in found}):
        nodes = [f for f in found if f["rule"] == rule]
        lines.append(f"{rule} ({nodes[0]['impact']}): {nodes[0]['help']}, {len(nodes)} element(s); {nodes[0]['url']}")
        for f in nodes:
            snippet = f["html"] if len(f["html"]) <= 240 else f["html"][:240] + "..."
            why = " ".join(f["why"].split())[:200]
            cell = f"\n      in cell {f['cell']}" if f["cell"] else ""
            lines.append(f"  - {' '.join(map(str, f['target']))}  [{f['state']}]\n      {snippet}{cell}\n      {why}")
    return "\n".join(lines)


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("edition", EDITIONS)
def test_no_serious_or_critical_violation(browser, sites, axe_js, edition, scheme, page):
    path = sites / edition / page
    assert path.is_file(), f"make html did not write {page} ({edition} edition)"
    found = violations(browser[scheme], path, axe_js)
    if found:
        pytest.fail(f"{page}, {edition} edition, {scheme} colour scheme: {len(found)} serious or critical "
                    f"violation(s)\n{report(found)}", pytrace=False)


@pytest.fixture(scope="module")
def synthetic_sites(tmp_path_factory):
    """A lesson with every kind of output the course uses, figures described the new way, in both editions;
    and the same lesson with one figure that has no alt text."""
    root = tmp_path_factory.mktemp("synthetic")
    built = {}
    for variant in ("described", "one figure without alt"):
        solutions, learner = lesson_like(root / variant / "src", figure_without_alt=variant != "described")
        built[(variant, "folded")] = root / variant / "folded"
        built[(variant, "none")] = root / variant / "none"
        build_site.build(built[(variant, "folded")], solutions, "folded")
        build_site.build(built[(variant, "none")], learner, "none")
    return built


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("edition", EDITIONS)
def test_a_lesson_whose_figures_carry_alt_text_passes(browser, synthetic_sites, axe_js, edition, scheme):
    out = synthetic_sites[("described", edition)]
    for page in sorted(out.glob("*.html")):
        found = violations(browser[scheme], page, axe_js)
        if found:
            pytest.fail(f"synthetic {page.name}, {edition} edition, {scheme}:\n{report(found)}", pytrace=False)


def test_a_figure_without_alt_text_fails(browser, synthetic_sites, axe_js):
    found = violations(browser["light"], synthetic_sites[("one figure without alt", "folded")] / "01_synthetic.html",
                       axe_js)
    assert [f["rule"] for f in found] == ["image-alt"], report(found)
    assert found[0]["html"].startswith("<img src=\"data:image/png")


def focused(page) -> str:
    return page.evaluate("(() => { const e = document.activeElement; "
                         "return e ? e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' ' + "
                         "(e.textContent || '').trim().slice(0, 60) : '' })()")


def outline_width(page) -> float:
    return page.evaluate("parseFloat(getComputedStyle(document.activeElement).outlineWidth) || 0")


@pytest.mark.parametrize("scheme", SCHEMES)
def test_skip_link_and_folds_work_from_the_keyboard(browser, sites, scheme):
    name = next(p for p in PAGES[1:] if "ffn-solution" in (sites / "folded" / p).read_text())
    page = browser[scheme].new_page()
    try:
        page.goto((sites / "folded" / name).as_uri())
        page.keyboard.press("Tab")
        assert focused(page) == "a Skip to content", f"{name}: the first Tab lands on {focused(page)!r}"
        assert outline_width(page) >= 2, "the skip link shows no focus outline"
        page.keyboard.press("Enter")
        assert page.evaluate("location.hash") == "#content" and focused(page).startswith("main#content")

        for selector, what in (("details.ffn-solution > summary", "a solution"),
                               ("details.ffn-check-output > summary", "a check's output"),
                               (".jp-MarkdownCell details > summary", "a hint")):
            summary = page.locator(selector).first
            details = summary.locator("xpath=..")
            summary.focus()
            page.keyboard.press("Shift+Tab")             # reach it with the keyboard, as a reader would
            page.keyboard.press("Tab")
            assert page.evaluate("document.activeElement.tagName") == "SUMMARY", f"Tab does not reach {what}"
            assert outline_width(page) >= 2, f"{what}'s toggle shows no focus outline"
            assert not details.evaluate("d => d.open")
            page.keyboard.press("Enter")
            assert details.evaluate("d => d.open"), f"Enter does not unfold {what}"
            assert details.evaluate("d => d.lastElementChild.getBoundingClientRect().height") > 0
            page.keyboard.press(" ")
            assert not details.evaluate("d => d.open"), f"Space does not fold {what} again"
    finally:
        page.close()
