"""Numeric quiz questions: a wrong number is told which known slip it is, worked out here again from the
question's quantities, and otherwise which way it is off; a right number to fewer places than asked is told so.
Plus the mechanism (helpers.quiz.Slip, Numeric.places) on a question of its own."""
import math

import pytest

from helpers.models import GPT2_MEDIUM, GPT2_SMALL, LLAMA_7B
from helpers.params import ffn_params
from helpers.quiz import Numeric, Slip, decimals, lesson_quiz
from helpers.quizzes import LESSONS

D, D_FF = GPT2_SMALL["d"], GPT2_SMALL["d_ff"]
MED, MED_FF = GPT2_MEDIUM["d"], GPT2_MEDIUM["d_ff"]
SWIGLU_TWO_THIRDS = 2 * 4 * 5_120 / 3             # lesson 04's question: d = 5,120, multiple_of = 256
TOP2 = math.exp(2) / (math.exp(2) + 1)

# (lesson, question id, a learner's answer, words its feedback must hold): one row per slip a trial learner
# made or a reviewer listed, each answer worked out from the quantities it slips on.
SLIPS = [
    ("01", "one-unit", 2 * 1 - 1 * 3 + 0.5, "That is z"),
    ("01", "one-unit", abs(2 * 1 - 1 * 3 + 0.5), "That is |z|"),
    ("01", "one-unit", 2 * 1 - 1 * 3, "dot product alone"),
    ("01", "one-unit", 2 * 1 - 1 * 3 - 0.5, "subtracts the bias"),
    ("01", "one-unit", -1 * 1 + 2 * 3 + 0.5, "wrong inputs"),
    ("01", "one-unit", -3, "never negative"),
    ("01", "gpt2-width", 3000, "multiple of 768; 3,000 is not"),          # the issue's: not "more than 768"
    ("01", "gpt2-width", 500, "wider than 768"),
    ("01", "gpt2-width", D, "the token's width"),
    ("01", "gpt2-width", 3 * D, "c_attn"),
    ("01", "gpt2-width", 6 * D, "6 · 768: a whole factor"),
    ("01", "gpt2-width", 12 * D_FF, "all 12 blocks"),
    ("01", "gpt2-width", GPT2_SMALL["context"], "context length"),
    ("02", "row-start", 3 * 4, "one-stride bug"),
    ("02", "row-start", 2 * 16, "counting rows from 1"),
    ("02", "row-start", 3 * 16 + 1, "counts indices from 1"),
    ("02", "row-start", 3 * 16 - 1, "last index of row 2"),
    ("02", "row-start", 5 * 16, "where row 5 starts"),
    ("02", "row-start", 48.5, "whole number"),
    ("03", "gpt2-medium-ffn", ffn_params(MED, MED_FF) - MED, "leaves out one bias, b2"),         # 8,392,704
    ("03", "gpt2-medium-ffn", ffn_params(MED, MED_FF) - MED_FF, "leaves out one bias, b1"),      # 8,389,632
    ("03", "gpt2-medium-ffn", 2 * MED * MED_FF, "both biases are left out"),                     # 8,388,608
    ("03", "gpt2-medium-ffn", 24 * ffn_params(MED, MED_FF), "all the model's blocks"),           # 201,449,472
    ("03", "gpt2-medium-ffn", 2 * MED * MED + 2 * MED, "takes d_ff as d"),                       # 2,099,200
    ("03", "gpt2-medium-ffn", ffn_params(D, D_FF), "GPT-2 small's FFN"),                         # 4,722,432
    ("03", "gpt2-medium-ffn", 8.39, "in millions"),
    ("03", "gpt2-medium-ffn", "8,394,000", "rounded"),
    ("03", "gpt2-medium-ffn", 4 * ffn_params(MED, MED_FF), "bytes"),
    ("04", "swiglu-width", f"{SWIGLU_TWO_THIRDS:.2f}", "round up to a multiple of 256"),    # 13,653.33
    ("04", "swiglu-width", int(SWIGLU_TWO_THIRDS), "truncated, the first step"),            # not rounded
    ("04", "swiglu-width", 256 * (int(SWIGLU_TWO_THIRDS) // 256), "rounded down"),          # 13,568
    ("04", "swiglu-width", 4 * 5_120, "4d, the classic FFN's width"),                       # two thirds not taken
    ("04", "swiglu-width", LLAMA_7B["d_ff"], "Llama 7B's width"),                          # section 7's number read
    ("04", "swiglu-width", 13_800, "not a multiple of 256"),
    ("04", "swiglu-width", 1024 * math.ceil(int(SWIGLU_TWO_THIRDS) / 1024), "multiple of 1,024"),
    ("05", "narrowest", 16 * 10, "entries"),
    ("05", "narrowest", 10, "its smaller side"),
    ("05", "narrowest", 2, "section 5's stack"),
    ("05", "narrowest", 4, "counts the weight matrices"),
    ("05", "narrowest", 2.5, "whole number"),
    ("05", "narrowest", 0, "zero matrix"),
    ("06", "threshold-activation", 0.25 / 0.75, "divides by the cosine"),
    ("06", "threshold-activation", "0.33", "divides by the cosine"),
    ("06", "threshold-activation", 50, "percentage"),
    ("06", "threshold-activation", 0.75 / 0.5, "divided by the threshold"),
    ("06", "threshold-activation", -0.25, "never negative"),
    ("07", "top2-weight", 0.88, "Right to 2 decimal places, but the question asks for 3"),  # the issue's
    ("07", "top2-weight", "0.880", "cut off, not rounded"),
    ("07", "top2-weight", round(1 - TOP2, 3), "expert 1's weight"),
    ("07", "top2-weight", round(100 * TOP2, 2), "percentage"),
    ("07", "top2-weight", round(math.exp(2), 3), "numerator alone"),
    ("07", "top2-weight", 0.731, "softmax of 1 and 0"),
    ("07", "top2-weight", 1.2, "between 0 and 1"),
    ("08", "db2-sum", 15, "db2[0]"),
    ("08", "db2-sum", -5, "db2[2]"),
    ("08", "db2-sum", 5 * (3 + 2 - 1), "every entry of dy"),
    ("08", "db2-sum", 3 + 2 - 1, "over the outputs"),
    ("08", "db2-sum", 5, "counts the tokens"),
    ("08", "db2-sum", -10, "The sign"),
    ("09", "update-entry", 2 * -10, "before the division"),
    ("09", "update-entry", 2 * 5 / 5, "entry [0, 0]"),
    ("09", "update-entry", 4, "The sign"),
    ("09", "update-entry", 0, "entry [1, 0]"),
    ("09", "update-entry", round(-20 / 5 ** 0.5, 3), "length of k"),
    ("09", "update-entry", round(2 * -10 / 3, 3), "sum of the squares"),
    ("09", "update-entry", 2 * -10 * 5, "divided by"),
    ("09", "update-entry", 1 * -10 / 5, "unit 2's entry"),
    ("09", "update-entry", -10, "coordinate 1 of the change alone"),
]


def question(lesson, qid):
    return next(q for q in lesson_quiz(lesson).questions if q.id == qid)


@pytest.mark.parametrize("lesson, qid, answer, words", SLIPS, ids=[f"{r[0]}-{r[1]}-{r[2]}" for r in SLIPS])
def test_each_slip_is_named(lesson, qid, answer, words):
    feedback = question(lesson, qid).judge(answer)
    assert not feedback and words in feedback.text, feedback.text


NUMERIC = [(lesson, q) for lesson in LESSONS for q in lesson_quiz(lesson).questions if isinstance(q, Numeric)]


@pytest.mark.parametrize("lesson, q", NUMERIC, ids=lambda v: v if isinstance(v, str) else v.id)
def test_every_numeric_question_has_its_slips_in_the_table(lesson, q):
    assert sum(1 for row in SLIPS if row[:2] == (lesson, q.id)) >= 3, f"{lesson} {q.id}: list its slips above"


@pytest.mark.parametrize("lesson, q", NUMERIC, ids=lambda v: v if isinstance(v, str) else v.id)
def test_no_known_slip_is_hidden_by_another_or_by_the_tolerance(lesson, q):
    """Each value slip, typed as a number or as text, gets its own feedback, not another's nor a "right"."""
    for slip in q.known():
        if slip.test is None:
            for typed in (slip.value, f"{slip.value:.10g}"):
                feedback = q.judge(typed)
                assert not feedback and slip.text(slip.value) in feedback.text, (q.id, typed, feedback.text)


def written(q) -> str:
    """The answer as a learner would write it."""
    return f"{q.answer:,.10g}" if float(q.answer).is_integer() else f"{q.answer:.3f}"


# An answer of one or two digits appears in ordinary words ("two thirds", "1 or 2"): only longer ones are looked for.
LONG_ANSWERS = [(lesson, q) for lesson, q in NUMERIC if len(written(q).replace(",", "").replace(".", "").lstrip("0")) >= 3]


@pytest.mark.parametrize("lesson, q", LONG_ANSWERS, ids=lambda v: v if isinstance(v, str) else v.id)
def test_a_wrong_number_is_not_handed_the_answer(lesson, q):
    """No slip's feedback, nor the nudge up or down, states the answer (three digits or more, as written)."""
    answer = written(q)
    texts = [s.says for s in q.known() if isinstance(s.says, str)] + [q.low, q.high]
    texts += [s.text(v) for s in q.known() if callable(s.says) for v in (q.answer * 0.9, q.answer * 1.1)]
    for text in texts:
        assert answer not in text and answer.replace(",", "") not in text, (q.id, text)


@pytest.mark.parametrize("lesson, q", NUMERIC, ids=lambda v: v if isinstance(v, str) else v.id)
def test_the_question_states_its_tolerance_and_the_right_answer_passes_in_any_spelling(lesson, q):
    assert q.judge(q.answer) and q.judge(f"{q.answer:,.10g}")
    words = q.instruction()
    if q.places is not None:
        assert f"to {q.places} decimal places" in words and q.judge(round(q.answer, q.places))
    elif q.whole:
        assert words == "Answer with a whole number."
    else:
        assert "whole" not in words, "only a count is asked as a whole number (it would hint at the answer)"


# ---- the mechanism ----------------------------------------------------------------------------------------
def demo(**kwargs):
    return Numeric("demo", "What is 2 / 3?", 2 / 3, why="Two thirds.", places=3,
                   wrong={1.5: "That is 3 / 2, upside down."},
                   slips=[Slip(lambda v: f"{v:g} is negative; a ratio of two positives is not.",
                               test=lambda v: v < 0, shown="a negative number")], **kwargs)


@pytest.mark.parametrize("answer, right, words", [
    (0.667, True, "Two thirds"), ("0.6667", True, "Two thirds"), (0.6665, True, "Two thirds"),
    (0.67, False, "Right to 2 decimal places, but the question asks for 3"),
    ("0.666", False, "cut off, not rounded"),
    (0.7, False, "too large"),                     # one digit is too coarse to call right so far
    ("1.50", False, "upside down"), (1.5, False, "upside down"),
    (-0.5, False, "-0.5 is negative"),
    (0.6, False, "too small"),
])
def test_places_slips_and_tests(answer, right, words):
    feedback = demo().judge(answer)
    assert bool(feedback) == right and words.lower() in feedback.text.lower(), feedback.text


def test_a_value_slip_is_also_recognised_rounded_to_the_digits_given():
    q = Numeric("q", "?", 11008, why="the width", wrong={32768 / 3: "two thirds of 4d, not rounded up"})
    for typed in ("10922.67", "10922.7", 10922.667):
        assert "not rounded up" in q.judge(typed).text
    assert "not rounded up" not in q.judge(10900).text      # two significant figures off is not a rounding


@pytest.mark.parametrize("answer, count", [("0.880", 3), (0.88, 2), ("8.8e-1", 2), (4722432, 0),
                                           ("4 722 432", 0), ("10,922.67", 2)])
def test_decimals_counts_what_the_learner_wrote(answer, count):
    assert decimals(answer) == count


@pytest.mark.parametrize("build, complaint", [
    (lambda: Slip("x", value=1, test=lambda v: True, shown="s"), "a value or a test"),
    (lambda: Slip("x"), "a value or a test"),
    (lambda: Slip("x", test=lambda v: v > 1), "needs `shown`"),
    (lambda: Slip(" ", value=2), "no feedback"),
    (lambda: Numeric("q", "?", 3, why="w", slips=[Slip("odd", test=lambda v: v % 2 == 1, shown="odd")]),
     "would catch the right answer"),
    (lambda: Numeric("q", "?", 0.5, why="w", places=2, slips=[Slip("near", value=0.504)]), "within the tolerance"),
    (lambda: Numeric("q", "?", 0.5, why="w", places=2, tolerance=0.1), "one or the other"),
])
def test_slips_that_would_mislead_cannot_be_built(build, complaint):
    with pytest.raises(ValueError, match=complaint):
        build()


def test_the_site_lists_the_slips_and_the_rule_for_places():
    from helpers.quiz import Quiz
    page = Quiz("99", [demo()]).html()
    assert "1.5: That is 3 / 2, upside down." in page and "<li>a negative number</li>" in page
    assert "fewer than 3 decimal places" in page and "(within 0.0005)" in page
