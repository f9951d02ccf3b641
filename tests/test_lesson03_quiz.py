"""Lesson 03's quiz: its numbers are the lesson's numbers, worked out again here, and each slip gets its feedback."""
from helpers.models import GPT2_SMALL
from helpers.params import attention_params, ffn_params
from helpers.quiz import lesson_quiz

QUIZ = lesson_quiz("03")
d, d_ff = GPT2_SMALL["d"], GPT2_SMALL["d_ff"]


def question(qid):
    return next(q for q in QUIZ.questions if q.id == qid)


def test_the_parameter_count_and_its_slips_are_computed_not_typed():
    q = question("gpt2-ffn")
    assert q.answer == ffn_params(d, d_ff) == d * d_ff + d_ff + d_ff * d + d
    block = ffn_params(d, d_ff) + attention_params(d, bias=True) + 2 * 2 * d
    slips = {2 * d * d_ff: "biases b1 (3,072) and b2 (768) are missing",
             2 * d * d_ff + 2 * d_ff: "gives both biases d_ff",
             2 * d * d_ff + 2 * d: "gives both biases d = 768",
             ffn_params(d, d_ff) - d: "leaves out one bias, b2",
             ffn_params(d, d_ff) - d_ff: "leaves out one bias, b1",
             d * d_ff + d_ff: "W1 and b1 only",
             d_ff * d + d: "W2 and b2 only",
             block: "a whole GPT-2 block",
             attention_params(d): "attention's four",
             GPT2_SMALL["n_layers"] * ffn_params(d, d_ff): "all twelve blocks' FFNs; the question asks for one",
             GPT2_SMALL["n_layers"] * 2 * d * d_ff: "all twelve blocks' FFNs, and without their biases",
             4 * ffn_params(d, d_ff): "in bytes"}
    assert set(q.wrong) == set(slips)
    assert (4_721_664, 56_669_184) == (ffn_params(d, d_ff) - d, 12 * ffn_params(d, d_ff))   # the two
    for value, words in slips.items():
        feedback = q.judge(value)
        assert not feedback and words in feedback.text


def test_the_whole_model_share_is_the_lessons():
    vocab = 50_257
    total = vocab * d + GPT2_SMALL["context"] * d + GPT2_SMALL["n_layers"] * (
        ffn_params(d, d_ff) + attention_params(d, bias=True) + 4 * d) + 2 * d
    assert total == 124_439_808
    share = GPT2_SMALL["n_layers"] * ffn_params(d, d_ff) / total
    right = [o for o in question("share").options if o.correct]
    assert len(right) == 1 and f"{share:.2%}".replace("%", " %") in right[0].feedback


def test_four_questions_on_the_core_path():
    assert [q.id for q in QUIZ.questions] == ["one-row", "gpt2-ffn", "share", "chunks"]
