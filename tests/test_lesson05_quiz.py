"""Lesson 05's quiz: the rank is worked out again here, wrong answers explain the misconception without stating
the answer, and no option gives the answer away by its length."""
import numpy as np
import pytest

from helpers.quiz import lesson_quiz

QUIZ = lesson_quiz("05")


def question(qid):
    return next(q for q in QUIZ.questions if q.id == qid)


def test_the_rank_is_the_narrowest_layers_width():
    q = question("narrowest")
    rng = np.random.default_rng(0)
    widths = [16, 64, 6, 48, 10]
    assert "16 -> 64 -> 6 -> 48 -> 10" in q.prompt and "16 x 10 matrix" in q.prompt
    product = np.linalg.multi_dot([rng.normal(size=(a, b)) for a, b in zip(widths[:-1], widths[1:])])
    assert q.answer == np.linalg.matrix_rank(product) == min(widths)
    assert {10, 16, 64, 16 * 10, 4, 5, 2, 0} == set(q.wrong)


def test_the_question_is_not_section_5s_stack():
    """A transfer question: another shape than the lesson's 8 -> 32 -> 2 -> 32 -> 8, whose rank it printed, and
    an output narrower than the input, so the matrix's smaller side is a trap of its own."""
    q = question("narrowest")
    assert "8 -> 32 -> 2 -> 32 -> 8" not in q.prompt and q.answer != 2
    assert "smaller side" in q.judge(10).text and "section 5's stack" in q.judge(2).text


@pytest.mark.parametrize("value", [10, 16, 64, 160, 4, 5, 2])
def test_wrong_ranks_explain_the_misconception_without_stating_the_answer(value):
    text = question("narrowest").judge(value).text
    for answer in ("6 directions", "rank 6", "width 6", "6-wide", "is 6"):
        assert answer not in text, text
    assert len(text) > 60
