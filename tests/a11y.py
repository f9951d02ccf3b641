"""What the accessibility tests share (tests/test_axe.py: the site; tests/test_slides_browser.py: the decks):
axe-core installed from npm at a pinned version and integrity into build/axe/ (git-ignored), headless Debian
Chromium through Playwright in a light and a dark context, and one axe run that returns the serious and
critical violations of a page, each with the notebook cell it sits in, and a readable report of them.

Import the fixtures into a test module (`from a11y import axe_js, browser`); both skip, saying why, where there
is no npm or no Chromium.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import npm_pin  # noqa: E402
from test_browser import headless_chromium  # noqa: E402  (one definition of how Chromium runs)

AXE_VERSION = "4.14.1"
AXE_INTEGRITY = ("sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ==")
AXE_DIR = ROOT / "build" / "axe"
BLOCKING = ("serious", "critical")
SCHEMES = ("light", "dark")
RUN_AXE = "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
# Which notebook cell an element sits in, and the first line of that cell's code: where to fix it.
WHERE = """selector => { const cell = document.querySelector(selector)?.closest('.jp-Cell');
  if (!cell) return '';
  const code = cell.querySelector('.jp-InputArea-editor');
  return (cell.id ? cell.id + ': ' : '') + (code ? code.textContent.trim().split('\\n')[0].slice(0, 100) : 'a markdown cell');
}"""


@pytest.fixture(scope="session")
def axe_js() -> Path:
    try:
        package = npm_pin.install("axe-core", AXE_VERSION, AXE_INTEGRITY, AXE_DIR)
    except npm_pin.NpmMissing as missing:
        pytest.skip(f"{missing}, then run `make test-a11y` again")
    return package / "axe.min.js"


@pytest.fixture(scope="module")
def browser():
    """A light and a dark browser context of headless Chromium: {"light": context, "dark": context}."""
    with headless_chromium("test-a11y") as chromium:
        contexts = {scheme: chromium.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 900})
                    for scheme in SCHEMES}
        for context in contexts.values():
            context.set_default_timeout(120_000)
        yield contexts


def run_axe(page, state: str, found: dict[tuple, dict]) -> None:
    """Run axe (already injected) on `page` as it is now, adding its serious and critical violations to `found`
    (keyed by rule and element, so a violation seen in an earlier state is kept once)."""
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
