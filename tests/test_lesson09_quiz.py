"""Lesson 09's quiz and recap are answerable from the core path: what they rest on is printed by a core cell, not
only in a Going further section (which a learner may skip)."""
import re
import sys
from pathlib import Path

import nbformat

from helpers.quiz import Choice, lesson_quiz

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from pace import further_flags  # noqa: E402

QUIZ = lesson_quiz("09")
NOTEBOOK = nbformat.read(ROOT / "solutions" / "09_trained_memory.ipynb", as_version=4)
FIRING = re.compile(r"layer 1's units that fire \(z > 0\) at a prefix, on average: ([\d.]+)% trained, ([\d.]+)% random")


def core_cells():
    return [cell for cell, further in zip(NOTEBOOK.cells, further_flags(NOTEBOOK.cells)) if not further]


def printed(cells):
    return "".join(o.get("text", "") for cell in cells if cell.cell_type == "code" for o in cell.get("outputs", []))


def texts(question):
    yield question.prompt
    if isinstance(question, Choice):
        for option in question.options:
            yield option.text
            yield option.feedback


def test_no_question_sends_the_learner_to_a_going_further_section():
    for question in QUIZ.questions:
        for text in texts(question):
            assert "Going further" not in text, (question.id, text)


def test_the_firing_shares_the_quiz_and_recap_use_are_printed_on_the_core_path():
    """Question 3 (why about half at random) and the recap (about a quarter trained) rest on one core line."""
    found = FIRING.search(printed(core_cells()))
    assert found, "the core path prints no firing share"
    trained, random = map(float, found.groups())
    assert 20 <= trained <= 30, trained                    # "about a quarter"
    assert 45 <= random <= 55, random                      # "about half"
    question = next(q for q in QUIZ.questions if q.id == "random-half")
    assert "about half" in question.prompt and "far fewer" in question.prompt


def test_the_recap_says_about_a_quarter_and_needs_no_going_further_section():
    recap = next(cell.source for cell in NOTEBOOK.cells if cell.source.startswith("## Recap"))
    assert "about a quarter" in recap and "few in ten" not in recap, recap
    assert "Going further" not in recap.split("**Next:**")[0], recap


def test_where_the_edit_goes_is_said_alike_on_the_core_path():
    """Section 3, section 4 and the recap say what is true in this model: in layer 1 only the last token takes; an
    edit of layer 0 can take but costs more other facts (Going further prints both). None says the edit *must* sit
    in the last layer."""
    core = re.sub(r"\s+", " ", " ".join(cell.source for cell in core_cells() if cell.cell_type == "markdown"))
    assert "must sit in the last layer" not in core and "last token of the last layer" not in core
    assert core.count("an edit of the last layer takes only with its key at the last token") == 2   # 4 and the recap
    assert "only the last token can take" in core and "turns many more other facts wrong" in core
