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


def test_the_width_and_its_slips_are_computed_not_typed():
    q, d = question("swiglu-width"), 5_120
    h = int(2 * 4 * d / 3)
    assert q.answer == swiglu_hidden(d, 256) == 256 * math.ceil(h / 256) == 13_824
    slips = {h: "truncated, the first step", math.ceil(8 * d / 3): "rounded up to a whole number",
             8 * d / 3: "not yet a whole number", 256 * (h // 256): "rounded down", 4 * d: "4d, the classic",
             int(2 * d / 3) // 256 * 256 + 256: "starts from two thirds of d", 2 * d / 3: "two thirds of d, not of 4d",
             256 * math.ceil(int(4 * d / 3) / 256): "one third of 4d", 1024 * math.ceil(h / 1024): "multiple of 1,024",
             3 * q.answer: "three matrices' hidden layers", LLAMA_7B["d_ff"]: "Llama 7B's width"}
    assert set(q.wrong) == set(slips)
    for value, words in slips.items():
        feedback = q.judge(value)
        assert not feedback and words in feedback.text


def test_the_question_needs_the_rule_not_a_number_the_lesson_prints():
    """Section 7 prints Llama 7B's width at d = 4,096; the question asks the same two steps at another d, and
    says neither step (the learner recalls them from section 7)."""
    q = question("swiglu-width")
    assert "5,120" in q.prompt and "4,096" not in q.prompt and q.answer != LLAMA_7B["d_ff"]
    assert "two thirds" not in q.prompt and "round" not in q.prompt


def test_the_rounded_down_feedback_says_no_floor_that_truncation_breaks():
    """With multiple_of = 1 the width int(8/3 · d) is below 8/3 · d: the floor is h, two thirds of 4d truncated."""
    q = question("swiglu-width")
    text = q.judge(256 * (int(2 * 4 * 5_120 / 3) // 256)).text
    assert "rounded down" in text and "never below h" in text and "8/3 · d" not in text
    assert swiglu_hidden(1025, 1) == 2733 < 8 * 1025 / 3


@pytest.mark.parametrize("answer", ["13653.33", 13653.3, "13,653.3333"])
def test_two_thirds_not_yet_rounded_up_is_named_to_any_digits(answer):
    """10,922.67 (at d = 4,096) was a trial learner's: two thirds taken, as asked; missing is the rounding up."""
    text = question("swiglu-width").judge(answer).text
    assert "not yet a whole number" in text and "multiple of 256" in text and "two thirds" in text


def test_the_first_steps_feedback_quotes_llama_instead_of_claiming_why():
    """Llama's code says only 'make SwiGLU hidden layer size multiple of large power of 2' (llama/model.py)."""
    text = question("swiglu-width").wrong[int(2 * 4 * 5_120 / 3)]
    assert "multiple of large power of 2" in text
    assert "GPU kernels" not in text and "multi-device" not in text

