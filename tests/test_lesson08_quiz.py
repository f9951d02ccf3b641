"""Lesson 08's quiz: the db2 sum is worked out again here, and wrong options explain their misconception without
stating the right answer."""
import numpy as np

from helpers.quiz import Choice, lesson_quiz

QUIZ = lesson_quiz("08")


def question(qid):
    return next(q for q in QUIZ.questions if q.id == qid)


def test_db2_is_the_sum_over_tokens():
    dy = np.tile([3.0, 2.0, -1.0], (5, 1))                 # T = 5 tokens, the same dy row
    q = question("db2-sum")
    assert "[3, 2, -1]" in q.prompt and q.answer == dy.sum(axis=0)[1]
    assert {dy[0, 1], dy[0, 1] / 5, dy.sum(axis=0)[0], dy.sum(axis=0)[2], dy.sum(), dy[0].sum()} <= set(q.wrong)
    assert dy.sum() != q.answer, "summing every entry must not give the right number for the wrong reason"


def test_right_feedback_does_not_capitalise_a_variable():
    """The judge capitalises a leading word; feedback that starts with a variable (dz, db2) would read "Dz"."""
    for q in QUIZ.questions:
        text = q.judge(q.correct_letters() if isinstance(q, Choice) else q.answer).text
        assert not text.startswith(("Right. Dz", "Right. Db", "Right. Dw", "Right. Dh")), text
