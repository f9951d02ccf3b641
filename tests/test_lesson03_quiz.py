"""Lesson 03's quiz: its numbers are the lesson's numbers, worked out again here, and each slip gets its feedback."""
import json
import re
from pathlib import Path

import nbformat

from helpers.models import GPT2_MEDIUM, GPT2_SMALL
from helpers.params import attention_params, ffn_params
from helpers.quiz import lesson_quiz

ROOT = Path(__file__).resolve().parent.parent
QUIZ = lesson_quiz("03")
d, d_ff = GPT2_SMALL["d"], GPT2_SMALL["d_ff"]


def question(qid):
    return next(q for q in QUIZ.questions if q.id == qid)


def test_the_parameter_count_and_its_slips_are_computed_not_typed():
    """GPT-2 medium's FFN (d = 1,024, d_ff = 4,096: OpenAI's src/model.py makes every FFN nx*4 wide), and every
    slip a learner makes on the way, worked out again here."""
    q = question("gpt2-medium-ffn")
    dm, d_ffm, layers = GPT2_MEDIUM["d"], GPT2_MEDIUM["d_ff"], GPT2_MEDIUM["n_layers"]
    assert (dm, d_ffm, layers) == (1024, 4 * 1024, 24)
    count = dm * d_ffm + d_ffm + d_ffm * dm + dm
    assert q.answer == ffn_params(dm, d_ffm) == count == 8_393_728
    weights = 2 * dm * d_ffm
    block = count + attention_params(dm, bias=True) + 2 * 2 * dm
    slips = {weights: "both biases are left out",
             count - dm: "leaves out one bias, b2",
             count - d_ffm: "leaves out one bias, b1",
             weights + 2 * d_ffm: "gives both biases the hidden width",
             weights + 2 * dm: "gives both biases the model width",
             weights + 2 * (dm + d_ffm): "counts each bias twice",
             dm * d_ffm + d_ffm: "W1 and b1 only",
             d_ffm * dm + dm: "W2 and b2 only",
             dm * d_ffm + dm + d_ffm: "one weight matrix",
             2 * dm * dm + 2 * dm: "takes d_ff as d",
             2 * dm * dm: "takes d_ff as d and leaves out the biases",
             block: "a whole block",
             attention_params(dm): "attention's four",
             layers * count: "all the model's blocks",
             layers * weights: "all 24 blocks, and without their biases",
             4 * count: "in bytes",
             ffn_params(d, d_ff): "GPT-2 small's FFN, the count the lesson printed"}
    assert set(q.wrong) == set(slips)
    for value, words in slips.items():
        feedback = q.judge(value)
        assert not feedback and words in feedback.text, (value, feedback.text)


def test_the_count_asked_for_is_not_printed_by_the_lesson():
    """The question needs the lesson's reasoning on a model whose count no cell prints (a trial learner copied
    GPT-2 small's count from the cell above the quiz)."""
    cells = nbformat.read(ROOT / "solutions" / "03_numpy_position_wise.ipynb", as_version=4).cells
    text = json.dumps([c for c in cells if "lesson_quiz" not in c.source])      # the quiz's own page folds it
    answer = question("gpt2-medium-ffn").answer
    for written in (f"{answer:,}", f"{answer}", f"{answer:_}"):
        assert written not in text, written


def test_no_slip_feedback_gives_a_number_beyond_the_question():
    """Each slip says which slip it is, never a count to copy: the only numbers are the question's own sizes,
    the model's 24 blocks, GPT-2 small's d and float32's 4 bytes."""
    q = question("gpt2-medium-ffn")
    allowed = {"1,024", "4,096", "768", "24", "4"}

    def numbers(text):        # standalone numbers: not the digits of a name (W1, b2, float32, GPT-2)
        return set(n.rstrip(",") for n in re.findall(r"(?<![\w.-])\d[\d,]*(?![\w])", text))
    for slip in q.known():
        if isinstance(slip.says, str):
            assert numbers(slip.says) <= allowed, slip.says
    assert not numbers(q.low) and not numbers(q.high), (q.low, q.high)


def test_the_whole_model_share_is_the_lessons():
    vocab = 50_257
    total = vocab * d + GPT2_SMALL["context"] * d + GPT2_SMALL["n_layers"] * (
        ffn_params(d, d_ff) + attention_params(d, bias=True) + 4 * d) + 2 * d
    assert total == 124_439_808
    share = GPT2_SMALL["n_layers"] * ffn_params(d, d_ff) / total
    right = [o for o in question("share").options if o.correct]
    assert len(right) == 1 and f"{share:.2%}".replace("%", " %") in right[0].feedback


def test_four_questions_on_the_core_path():
    assert [q.id for q in QUIZ.questions] == ["one-row", "gpt2-medium-ffn", "share", "chunks"]
