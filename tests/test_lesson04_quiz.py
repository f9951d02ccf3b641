"""Lesson 04's quiz: its numbers are worked out again here, each slip gets its feedback, and no option gives the
answer away by its length or claims what the lesson does not show."""
import math

import pytest

from helpers.models import LLAMA_7B
from helpers.params import swiglu_hidden
from helpers.quiz import Choice, Numeric, lesson_quiz

QUIZ = lesson_quiz("04")


def question(qid):
    return next(q for q in QUIZ.questions if q.id == qid)


def test_the_llama_width_and_its_slips_are_computed_not_typed():
    q, d = question("llama-width"), LLAMA_7B["d"]
    h = int(2 * 4 * d / 3)
    assert q.answer == swiglu_hidden(d) == LLAMA_7B["d_ff"] == 256 * math.ceil(h / 256)
    slips = {h: "truncated, the first step", math.ceil(8 * d / 3): "rounded up to a whole number",
             256 * (h // 256): "rounded down", 4 * d: "4d, the classic", int(2 * d / 3) // 256 * 256 + 256:
             "two thirds of d"}
    assert set(q.wrong) == set(slips)
    for value, words in slips.items():
        feedback = q.judge(value)
        assert not feedback and words in feedback.text


def test_the_first_steps_feedback_quotes_llama_instead_of_claiming_why():
    """Llama's code says only 'make SwiGLU hidden layer size multiple of large power of 2' (llama/model.py)."""
    text = question("llama-width").wrong[int(2 * 4 * LLAMA_7B["d"] / 3)]
    assert "multiple of large power of 2" in text
    assert "GPU kernels" not in text and "multi-device" not in text

