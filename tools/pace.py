"""How long a lesson takes: its core path and its "Going further" sections, estimated from the notebook.

    python tools/pace.py            # a table for every lesson in solutions/
    python tools/pace.py 03         # one lesson, section by section

The estimate is deliberately plain, so that a stated time can be checked against it:
- prose reads at 150 words a minute (dense technical text; maths counts a word per symbol group),
- code is read and run at 20 lines a minute (only cells outside exercises; an exercise has its time box),
- each exercise takes its stated time box ("Time box: 10 minutes"),
- each quiz question ("Check your understanding") takes a minute.

A "Going further" section starts at a markdown heading whose text begins with "Going further" and runs to the
next heading of the same or a higher level that does not; everything else is the core path. The lesson's
first cell states both times ("**Core path:** about 35 minutes" and, if it has optional sections,
"**Going further:** ... about 20 minutes"); tests/test_edition2.py holds the stated times to these estimates
and to what trial learners needed (recorded in docs/pace.md).
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
WORDS_PER_MINUTE = 150
CODE_LINES_PER_MINUTE = 20
MINUTES_PER_QUESTION = 1.0
BEGIN = "### BEGIN SOLUTION"
HEADING = re.compile(r"^(#{1,6})\s+(.*)$", re.MULTILINE)
TIME_BOX = re.compile(r"Time box:\**\s*(?:about\s+|up to\s+)?(\d+)\s*min", re.IGNORECASE)
CORE_STATED = re.compile(r"Core path:\**\s*about\s+(\d+)\s*min", re.IGNORECASE)
FURTHER_STATED = re.compile(r"Going further:\**[^\n]*?about\s+(\d+)\s*min", re.IGNORECASE)
SECTION_STATED = re.compile(r"\(about\s+(\d+)\s*min", re.IGNORECASE)


def words(markdown: str) -> int:
    """Words a reader reads: HTML tags and link targets dropped, a maths span counted by its symbol groups."""
    text = re.sub(r"<[^>]+>", " ", markdown)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"\\[a-zA-Z]+", " x ", text)                    # \mathrm, \cdot: one word each
    return len(re.findall(r"[A-Za-z0-9][A-Za-z0-9'’.,-]*", text))


def code_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


@dataclass
class Section:
    title: str
    further: bool
    words: int = 0
    code_lines: int = 0
    exercise_minutes: int = 0
    questions: int = 0
    stated: int | None = None          # "(about N minutes)" in a Going further heading

    @property
    def minutes(self) -> float:
        return (self.words / WORDS_PER_MINUTE + self.code_lines / CODE_LINES_PER_MINUTE
                + self.exercise_minutes + self.questions * MINUTES_PER_QUESTION)


@dataclass
class Pace:
    name: str
    sections: list[Section] = field(default_factory=list)
    stated_core: int | None = None
    stated_further: int | None = None

    @property
    def core(self) -> float:
        return sum(s.minutes for s in self.sections if not s.further)

    @property
    def further(self) -> float:
        return sum(s.minutes for s in self.sections if s.further)


def further_flags(cells) -> list[bool]:
    """For each cell, whether it belongs to a "Going further" section."""
    flags, level = [], None          # level: the heading level of the Going further section we are in
    for cell in cells:
        if cell.cell_type == "markdown":
            heading = HEADING.search(cell.source.lstrip())
            if heading and cell.source.lstrip().startswith("#"):
                depth, text = len(heading.group(1)), heading.group(2).strip()
                if text.lower().startswith("going further"):
                    level = depth if level is None or depth <= level else level
                elif level is not None and depth <= level:
                    level = None
        flags.append(level is not None)
    return flags


def quiz_questions(source: str) -> int:
    match = re.search(r"lesson_quiz\(\s*[\"'](\d\d)[\"']\s*\)", source)
    if not match:
        return 0
    from helpers.quiz import lesson_quiz
    return len(lesson_quiz(match.group(1)))


def pace(path: Path) -> Pace:
    nb = nbformat.read(path, as_version=4)
    result = Pace(path.name)
    first = next((c.source for c in nb.cells if c.cell_type == "markdown"), "")
    if (m := CORE_STATED.search(first)):
        result.stated_core = int(m.group(1))
    if (m := FURTHER_STATED.search(first)):
        result.stated_further = int(m.group(1))
    section = Section("(start)", False)
    result.sections.append(section)
    for cell, further in zip(nb.cells, further_flags(nb.cells)):
        if cell.cell_type == "markdown":
            heading = HEADING.search(cell.source.lstrip())
            if heading and cell.source.lstrip().startswith("#") and len(heading.group(1)) <= 2:
                section = Section(heading.group(2).strip(), further)
                stated = SECTION_STATED.search(heading.group(2))
                section.stated = int(stated.group(1)) if stated else None
                result.sections.append(section)
            section.words += words(cell.source)
            if (box := TIME_BOX.search(cell.source)):
                section.exercise_minutes += int(box.group(1))
        elif cell.cell_type == "code":
            if BEGIN in cell.source:
                continue                   # the time box covers writing the exercise
            section.questions += quiz_questions(cell.source)
            section.code_lines += code_lines(cell.source)
    return result


def main(argv: list[str]) -> int:
    paths = sorted((ROOT / "solutions").glob("*.ipynb"))
    if argv:
        paths = [p for p in paths if any(p.name.startswith(a) for a in argv)]
    for path in paths:
        p = pace(path)
        print(f"{p.name:34s} core {p.core:5.1f} min (stated {p.stated_core}), "
              f"going further {p.further:5.1f} min (stated {p.stated_further})")
        if argv:
            for s in p.sections:
                print(f"    {'GF ' if s.further else '   '}{s.minutes:5.1f}  {s.title[:70]}"
                      f"  [{s.words} words, {s.code_lines} code lines, {s.exercise_minutes} min exercises, "
                      f"{s.questions} questions]")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:          # `tools/pace.py 03 | head`
        sys.exit(0)
