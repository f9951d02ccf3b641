"""Build a reveal.js slide deck per lesson from solutions/, the single source: `make slides`.

    slides/index.html        the decks in order, with how to drive them
    slides/NN_name.html      one deck per lesson
    slides/reveal/           reveal.js (pinned below, from npm) and its licence; the course's licences

Which cells go on a slide is set by cell tags in solutions/*.ipynb (JupyterLab: the property inspector's
"Cell tags"; `make notebooks` carries them into notebooks/):

    slide             the cell starts a new slide
    slide-continue    the cell is added to the slide before it (a figure under the text that explains it)
    notes             a markdown cell: the speaker notes of the slide before it (reveal's speaker view, key S)

A markdown cell shows as rendered (maths as MathML, as on the site; links to the course's own files become
plain text). A code cell shows its stored outputs only, never its source: figures with their alt text, printed
text as a block. A tagged cell that is an exercise (it holds `### BEGIN SOLUTION`), or that calls an
exercise's check (its output is what the check printed for the solution), is refused: a solution never
reaches a slide. The quiz cell (`lesson_quiz(...)`) tagged `slide` becomes a class poll: one slide with a
question on each of its vertical sub-slides (Down arrow), each answer folded under its question.

Every deck opens with a title slide made from the lesson's first cell (its title, summary and licence line).
Nothing is executed: the slides show the stored outputs (`make solutions` refreshes them).

Offline: reveal.js comes from npm at the pinned version and integrity, installed into build/reveal/ (git-ignored)
the first time, and copied into the output folder; no page loads anything from the network (figures are
data: URIs, the theme's font is embedded), so the folder can be zipped or opened from disk.
"""
from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from bs4 import BeautifulSoup
from nbconvert.filters.markdown_mistune import MarkdownWithMath

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import build_site  # noqa: E402  (markdown with MathML, code colours, licences)
import notebooks as nbtool  # noqa: E402  (the solution markers, the check-call pattern)
import npm_pin  # noqa: E402

SOLUTIONS_DIR = ROOT / "solutions"
SLIDE, CONTINUE, NOTES = "slide", "slide-continue", "notes"
TAGS = (SLIDE, CONTINUE, NOTES)
REVEAL_VERSION = "6.0.2"
REVEAL_INTEGRITY = ("sha512-JYIg5D9aoxoaLeb84O+OvAwsKWdIavVgEDScxtYEXFCT6t6TQrhNtSgogcjdCpdLsWglhJn3zyE3fUOwiH5KEg==")
REVEAL_BUILD = ROOT / "build" / "reveal"
# What a deck loads, copied from the npm package into <out>/reveal/. white-contrast: black on white, the
# theme with the most contrast (its font is embedded as a data: URI, so nothing is fetched).
REVEAL_FILES = ("dist/reveal.css", "dist/theme/white-contrast.css", "dist/reveal.js", "dist/plugin/notes.js",
                "LICENSE")
QUIZ_CALL = re.compile(r"lesson_quiz\(")
LOCAL_LINK = re.compile(r"\[([^\]]+)\]\((?:\./)?[\w.-]+\.(?:md|ipynb)(?:#[^)\s]*)?\)")
CHECK_LINE = nbtool.CHECK_CALL      # a line that calls an exercise's check

DECK_CSS = """
.reveal { font-size: 28px; }
.reveal .slides { text-align: left; }
.reveal .slides section { height: 100%; overflow-y: auto; }
.reveal h1 { font-size: 1.9em; } .reveal h2 { font-size: 1.45em; } .reveal h3 { font-size: 1.15em; }
.reveal h1, .reveal h2, .reveal h3 { text-transform: none; }
.reveal p, .reveal li { line-height: 1.35; }
.reveal .ffn-figure img, .reveal img { display: block; max-width: 100%; max-height: 62vh; margin: 0.4em auto;
  background: #ffffff; }
.reveal pre.ffn-output { font-size: 0.6em; width: 100%; box-shadow: none; border: 1px solid #8a8a8a;
  padding: 0.5em; white-space: pre; overflow-x: auto; color: #1e1e1e; background: #f7f7f7; }
.reveal table { font-size: 0.75em; border-collapse: collapse; margin: 0.5em 0; }
.reveal table th, .reveal table td { border-bottom: 1px solid #8a8a8a; padding: 0.2em 0.6em; }
.reveal code { font-size: 0.9em; }
.reveal a { color: #0b57d0; text-decoration: underline; }
.reveal a.anchor-link { display: none; }
/* reveal's slide number is white on grey (2.8:1); dark grey makes it 12.6:1. Bottom left, clear of the arrows. */
.reveal .slide-number, .reveal .slide-number a { background-color: #333333; color: #ffffff; }
.reveal .slide-number { right: auto; left: 8px; }
.reveal :focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
.reveal details > summary { cursor: pointer; font-weight: 600; }
.reveal .ffn-licence, .reveal .ffn-small { font-size: 0.6em; color: #4a4a4a; }
.reveal .ffn-poll ol[type="A"] { list-style-type: upper-alpha; }
"""


class SlideError(ValueError):
    """A cell tagged for a slide that must not be on one (an exercise, a check), or a tag out of place."""


@dataclass
class Slide:
    parts: list[str] = field(default_factory=list)   # HTML, in order
    notes: list[str] = field(default_factory=list)   # HTML of the speaker notes
    poll: list[str] = field(default_factory=list)    # a class poll: the HTML of each question
    cells: list[int] = field(default_factory=list)   # the notebook cells it shows (1-based)


@dataclass
class Deck:
    name: str        # NN_name.ipynb
    title: str
    slides: list[Slide]

    @property
    def html_name(self) -> str:
        return Path(self.name).stem + ".html"


def markdown(source: str) -> str:
    """A markdown cell as HTML: maths as MathML (as on the site), links to the course's own files as text."""
    source = LOCAL_LINK.sub(r"\1", source)
    return MarkdownWithMath(renderer=build_site.MathMLRenderer(escape=False)).render(source)


def outputs_html(cell) -> str:
    """A code cell's stored outputs as HTML: figures (their alt text kept), printed text, rich HTML."""
    parts = []
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            if output.get("name") == "stdout" and output.get("text", "").strip():
                parts.append(f"<pre class='ffn-output' tabindex='0'>{html.escape(output['text'].rstrip())}</pre>")
            continue
        if kind not in ("display_data", "execute_result"):
            continue
        data = output.get("data", {})
        alt = output.get("metadata", {}).get("image/png", {}).get("alt")
        if "text/html" in data and "<img" in data["text/html"]:
            parts.append(f"<div class='ffn-figure'>{data['text/html']}</div>")       # show()'s <img alt=...>
        elif "image/png" in data:
            alt_attr = f" alt='{html.escape(alt, quote=True)}'" if alt else ""
            parts.append(f"<div class='ffn-figure'><img src='data:image/png;base64,{data['image/png'].strip()}'"
                         f"{alt_attr}></div>")
        elif "text/html" in data:
            parts.append(data["text/html"])
        elif "text/plain" in data:
            parts.append(f"<pre class='ffn-output' tabindex='0'>{html.escape(data['text/plain'])}</pre>")
    return "\n".join(parts)


def poll_questions(cell) -> list[str]:
    """The quiz's questions, one HTML fragment each, from the quiz cell's stored text/html (each answer stays
    folded in its <details>)."""
    for output in cell.get("outputs", []):
        page = output.get("data", {}).get("text/html")
        if page and "ffn-quiz" in page:
            soup = BeautifulSoup(page, "html.parser")
            questions = soup.select_one("section.ffn-quiz > ol")
            if questions is not None:
                return [item.decode_contents() for item in questions.find_all("li", recursive=False)]
    raise SlideError("the quiz cell has no stored questions (run `make solutions`)")


def refuse(cell, where: str) -> None:
    """A solution must never reach a slide: refuse an exercise cell, a check cell, and any solution marker."""
    if nbtool.is_exercise(cell):
        raise SlideError(f"{where} is an exercise (it holds {nbtool.BEGIN}): its solution must not be on a slide; "
                         "remove its slide tag")
    if cell.cell_type == "code" and CHECK_LINE.search(cell.source):
        raise SlideError(f"{where} calls an exercise's check, whose output is what it printed for the solution; "
                         "remove its slide tag")
    if nbtool.BEGIN in cell.source or nbtool.END in cell.source:
        raise SlideError(f"{where} holds a solution marker; remove its slide tag")


def title_slide(nb, name: str) -> Slide:
    page = build_site.describe(nb, name)
    licence = next((p for p in build_site._paragraphs(nb.cells[0].source) if "CC BY" in p), "")
    parts = [f"<h1>{html.escape(page.title)}</h1>", f"<p>{build_site._inline_markdown(page.summary)}</p>"]
    if licence:
        parts.append(f"<p class='ffn-licence'>{build_site._inline_markdown(' '.join(licence.split()))}</p>")
    return Slide(parts=parts, cells=[1])


def deck(nb, name: str) -> Deck:
    """The slides of one lesson, from its tagged cells (see the module's doc)."""
    slides = [title_slide(nb, name)]
    for index, cell in enumerate(nb.cells):
        tags = [t for t in cell.metadata.get("tags", []) if t in TAGS]
        if not tags:
            continue
        where = f"{name}, cell {index + 1} ({nbtool.describe_cell(nb.cells, index)})"
        if len(tags) > 1:
            raise SlideError(f"{where} has tags {tags}: give it one of {', '.join(TAGS)}")
        refuse(cell, where)
        tag = tags[0]
        if tag == NOTES:
            if cell.cell_type != "markdown":
                raise SlideError(f"{where}: speaker notes come from a markdown cell")
            slides[-1].notes.append(markdown(cell.source))
            slides[-1].cells.append(index + 1)
            continue
        if tag == SLIDE:
            slides.append(Slide())
        elif len(slides) == 1:
            raise SlideError(f"{where} is tagged {CONTINUE} but no tagged slide comes before it")
        slide = slides[-1]
        slide.cells.append(index + 1)
        if cell.cell_type == "markdown":
            slide.parts.append(markdown(cell.source))
        elif QUIZ_CALL.search(cell.source):
            slide.poll = poll_questions(cell)
        else:
            slide.parts.append(outputs_html(cell))
    return Deck(name, build_site.describe(nb, name).title, slides)


def section(slide: Slide) -> str:
    notes = f"\n<aside class='notes'>{''.join(slide.notes)}</aside>" if slide.notes else ""
    if not slide.poll:
        return f"<section>\n{''.join(slide.parts)}{notes}\n</section>"
    count = len(slide.poll)
    first = (f"<section>\n<h2>Class poll: check your understanding</h2>\n<p>{count} questions, one per slide "
             "below (Down arrow). Let the room vote, then open the answer.</p>{notes}\n</section>")
    questions = [f"<section class='ffn-poll'>\n<h2>Poll, question {i} of {count}</h2>\n{q}\n</section>"
                 for i, q in enumerate(slide.poll, start=1)]
    return "<section>\n" + first.replace("{notes}", notes) + "\n" + "\n".join(questions) + "\n</section>"


def deck_page(d: Deck) -> str:
    sections = "\n".join(section(s) for s in d.slides)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{html.escape(d.title)} (slides)</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="reveal/reveal.css">
<link rel="stylesheet" href="reveal/white-contrast.css">
<style>
{build_site.code_css("a11y-light", ".reveal")}
{DECK_CSS}
</style></head>
<body>
<main class="reveal" aria-label="{html.escape(d.title)}: slides">
<div class="slides">
{sections}
</div>
</main>
<script src="reveal/reveal.js"></script>
<script src="reveal/notes.js"></script>
<script>
Reveal.initialize({{ hash: true, center: false, width: 1280, height: 800, margin: 0.04, transition: 'none',
  slideNumber: 'c/t', plugins: [RevealNotes] }});
// A slide taller than the screen scrolls: make it focusable, so the keyboard can reach the scrolling region.
function ffnScrollable() {{
  const slide = Reveal.getCurrentSlide();
  if (slide && slide.scrollHeight > slide.clientHeight + 1) slide.setAttribute('tabindex', '0');
}}
Reveal.on('ready', ffnScrollable);
Reveal.on('slidechanged', ffnScrollable);
</script>
</body></html>
"""


def index_page(decks: list[Deck]) -> str:
    rows = "\n".join(f"<li><a href='{d.html_name}'>{html.escape(d.title)}</a> "
                     f"({sum(1 + len(s.poll) for s in d.slides)} slides)</li>" for d in decks)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(build_site.COURSE_TITLE)}: slides</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
{build_site.SITE_CSS}
body {{ font-family: system-ui, sans-serif; line-height: 1.5; margin: 0; }}
main {{ max-width: 60rem; margin: 1.5rem auto; padding: 0 1rem; }}
</style></head>
<body>
<main id="content">
<h1>{html.escape(build_site.COURSE_TITLE)}: slides</h1>
<p>One deck per lesson, built from <code>solutions/</code> by <code>make slides</code>: the ideas and figures to
talk over, never an exercise's solution. Right arrow or Space: next slide; Left arrow: back; Down arrow: the next
question of a class poll; S: the speaker view with the notes; Esc: the overview. Teaching guide: docs/teaching.md
in the course repository.</p>
<ol>
{rows}
</ol>
<p>Code: <a href='LICENSE.txt'>MIT licence</a>. Lesson text and figures: <a href='LICENSE-text.txt'>CC BY 4.0</a>.
reveal.js {REVEAL_VERSION}: <a href='reveal/LICENSE'>MIT licence</a>.</p>
</main>
</body></html>
"""


def copy_reveal(out: Path, package: Path) -> None:
    target = out / "reveal"
    target.mkdir(parents=True, exist_ok=True)
    for name in REVEAL_FILES:
        shutil.copyfile(package / name, target / Path(name).name)


def build(out: Path, source: Path = SOLUTIONS_DIR, reveal: Path | None = None) -> list[Deck]:
    """Write a deck per notebook in `source`, index.html and the licences into `out`; with `reveal` (the npm
    package's folder), copy reveal.js in too. Returns the decks."""
    paths = sorted(source.glob("*.ipynb"))
    if not paths:
        raise SystemExit(f"No notebooks in {source}")
    decks = [deck(nbformat.read(path, as_version=4), path.name) for path in paths]
    out.mkdir(parents=True, exist_ok=True)
    for d in decks:
        (out / d.html_name).write_text(deck_page(d), encoding="utf-8")
    (out / "index.html").write_text(index_page(decks), encoding="utf-8")
    for name, target in build_site.LICENCES.items():
        if (ROOT / name).is_file():
            shutil.copyfile(ROOT / name, out / target)
    if reveal is not None:
        copy_reveal(out, reveal)
    return decks


def install_reveal() -> Path:
    return npm_pin.install("reveal.js", REVEAL_VERSION, REVEAL_INTEGRITY, REVEAL_BUILD)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "slides", help="folder to write (default: slides/)")
    parser.add_argument("--source", type=Path, default=SOLUTIONS_DIR, help="notebooks (default: solutions/)")
    args = parser.parse_args(argv)
    try:
        decks = build(args.out, args.source)        # refuses a solution on a slide before anything is written
        copy_reveal(args.out, install_reveal())
    except (SlideError, npm_pin.NpmMissing) as error:
        print(f"make slides: {error}", file=sys.stderr)
        return 1
    for d in decks:
        print(f"wrote    {args.out / d.html_name}  ({len(d.slides)} slides"
              + (f", a poll of {sum(len(s.poll) for s in d.slides)} questions" if any(s.poll for s in d.slides)
                 else "") + ")")
    print(f"Open {args.out / 'index.html'} in a browser (reveal.js {REVEAL_VERSION}; S opens the speaker notes).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
