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
    widths = [8, 32, 2, 32, 8]
    product = np.linalg.multi_dot([rng.normal(size=(a, b)) for a, b in zip(widths[:-1], widths[1:])])
    assert q.answer == np.linalg.matrix_rank(product) == min(widths)
    assert {8, 32} <= set(q.wrong)


@pytest.mark.parametrize("value", [8, 32])
def test_wrong_ranks_explain_the_misconception_without_stating_the_answer(value):
    text = question("narrowest").judge(value).text
    assert "2 directions" not in text and "rank 2" not in text and "width 2" not in text, text
    assert len(text) > 60
