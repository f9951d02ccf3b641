"""helpers.quiz: feedback on every option, answers judged and recorded, the same text on every run."""
import json

import pytest

from helpers import progress
from helpers.quiz import Choice, Feedback, Numeric, Option, Quiz, lesson_quiz
from helpers.quizzes import LESSONS


def demo():
    return Quiz("99", shuffle=False, questions=[
        Choice("mixing", "Does the FFN mix information between tokens?", [
            Option("Yes, through `W1`", "No: W1 multiplies one token's vector at a time."),
            Option("No, each token goes through on its own", "Each row of x is transformed alone.", correct=True),
            Option("Only when d_ff > d", "The width does not matter: no product involves two tokens."),
        ]),
        Choice("which", "Which are matrices of a SwiGLU FFN?", [
            Option("W_gate", "It feeds SiLU.", correct=True),
            Option("W_up", "It is the value path.", correct=True),
            Option("W_router", "That is a mixture of experts' router, not part of one FFN."),
        ], several=True),
        Numeric("params", "How many weights and biases has GPT-2 small's FFN?", 4_722_432,
                why="768 x 3072 + 3072 + 3072 x 768 + 768.", wrong={4_718_592: "That leaves out both biases."}),
    ])


def test_right_and_wrong_single_answers(capsys):
    quiz = demo()
    wrong = quiz.answer(1, "A")
    assert not wrong and "W1 multiplies one token's vector" in wrong.text and "Try again" in wrong.text
    assert quiz.answer(1, " b ") and "Each row of x" in capsys.readouterr().out


def test_the_right_answer_is_called_right_once():
    quiz = Quiz("99", shuffle=False, questions=[Choice("q", "?", [Option("a", "Right: because of x.", True), Option("b", "No: y is z.")]),
                       Choice("v", "?", [Option("a", "Right: z = 2 here.", True), Option("b", "No: y is z.")])])
    assert quiz.judge(1, "A").text == "Right. Because of x."
    assert quiz.judge(2, "A").text == "Right. z = 2 here."          # a variable keeps its case
    short = Quiz("99", shuffle=False, questions=[Choice("q", "?", [Option("a", "Right: dz = dh * mask.", True), Option("b", "No: y is z.")])])
    assert short.judge(1, "A").text == "Right. dz = dh * mask."


def test_several_answers_name_each_wrong_pick_and_the_missing_ones():
    quiz = demo()
    partial = quiz.judge(2, "AC")
    assert not partial and "router" in partial.text and "left out an option" in partial.text
    assert quiz.judge(2, ["b", "a"]) and quiz.judge(2, "A, B")


@pytest.mark.parametrize("answer, words", [
    ("4,718,592", "leaves out both biases"), (4.7e6, "too small"), (9e6, "too large"), ("many", "not a number"),
    (True, "not True or False"),
])
def test_numeric_wrong_answers_get_their_own_feedback(answer, words):
    feedback = demo().judge(3, answer)
    assert not feedback and words in feedback.text


@pytest.mark.parametrize("answer", [4722432, "4 722 432", 4722432.0, "4_722_432"])
def test_numeric_right_answer_in_any_spelling(answer):
    assert demo().judge(3, answer)


@pytest.mark.parametrize("number, answer, words", [
    (7, "A", "no question 7"), ("1", "A", "no question '1'"), (1, "Z", "the options are A, B, C"),
    (1, "AB", "one answer"), (1, 2, "letter"),
])
def test_unreadable_answers_are_explained(number, answer, words):
    feedback = demo().judge(number, answer)
    assert not feedback and words in feedback.text


def test_a_feedback_displays_nothing():
    assert Feedback(True, "Right.")._ipython_display_() is None


@pytest.mark.parametrize("build, complaint", [
    (lambda: Choice("q", "?", [Option("a", "x"), Option("b", "y")]), "0 correct"),
    (lambda: Choice("q", "?", [Option("a", "x", True), Option("b", "y", True)]), "2 correct"),
    (lambda: Choice("q", "?", [Option("a", "x", True), Option("b", " ")]), "no feedback"),
    (lambda: Numeric("q", "?", 10, why="because", wrong={10.0: "same"}), "within the tolerance"),
    (lambda: Numeric("q", "?", 10, why=""), "need feedback"),
    (lambda: Quiz("99", shuffle=False, questions=[Numeric("q", "?", 1, why="w"), Numeric("q", "?", 2, why="w")]), "repeat"),
])
def test_questions_without_feedback_cannot_be_built(build, complaint):
    with pytest.raises(ValueError, match=complaint):
        build()


def test_text_and_html_show_every_question_and_fold_the_answers():
    quiz = demo()
    text, page = quiz.text(), quiz.html()
    assert text == demo().text()                          # the same on every run (nbval compares it)
    assert all(q.prompt in text for q in quiz.questions)
    assert "W1 multiplies" not in text and "leaves out both biases" not in text    # no feedback given away
    assert page.count("<details>") == 3 and page.count("<summary>") == 3
    assert "<code>W1</code>" in page and "W1 multiplies one token" in page.split("<details>", 1)[1]


def test_the_display_bundle_has_a_widget_text_and_html():
    bundle = demo()._repr_mimebundle_()
    assert {"text/plain", "text/html", "application/vnd.jupyter.widget-view+json"} <= bundle.keys()


def test_the_widget_checks_an_answer_and_shows_feedback():
    quiz = demo()
    widget = quiz.widget().questions[0]
    widget.check()
    assert "Choose an answer first" in widget.feedback.value
    widget.input.value = "A"
    widget.check()
    assert "Not yet" in widget.feedback.value and "one token" in widget.feedback.value
    widget.input.value = "B"
    widget.check()
    assert "Right" in widget.feedback.value


def test_answers_in_a_workspace_are_recorded(tmp_path, monkeypatch, capsys):
    (tmp_path / progress.MARKER).write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    quiz = demo()
    quiz.answer(1, "A")
    quiz.answer(1, "B")
    quiz.answer(1, "nonsense")                             # not read: not recorded
    lines = [json.loads(line) for line in (tmp_path / progress.LOG).read_text().splitlines()]
    assert [(e["kind"], e["lesson"], e["item"], e["verdict"]) for e in lines] == \
        [("quiz", "99", "mixing", "fail"), ("quiz", "99", "mixing", "pass")]
    assert lines[0]["mistake"] == "chose A"


# ---- every lesson's quiz ----------------------------------------------------------------------------------
@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_quiz_has_three_to_six_questions_with_feedback_everywhere(lesson):
    quiz = lesson_quiz(lesson)
    assert quiz.lesson == lesson and 3 <= len(quiz) <= 6
    for q in quiz.questions:
        if isinstance(q, Choice):
            assert any(not o.correct for o in q.options), f"{q.id}: no wrong option to learn from"
            assert all(len(o.feedback.split()) >= 5 for o in q.options), f"{q.id}: feedback too thin to teach"
        else:
            assert q.wrong, f"{q.id}: name at least one common wrong value and its misconception"
            assert len(q.why.split()) >= 5


ALL_QUESTIONS = [(lesson, q) for lesson in LESSONS for q in lesson_quiz(lesson).questions]


@pytest.mark.parametrize("lesson, q", ALL_QUESTIONS, ids=lambda v: v if isinstance(v, str) else v.id)
def test_every_right_answer_passes_and_every_wrong_one_explains(lesson, q):
    if isinstance(q, Choice):
        right = q.correct_letters()
        assert q.judge(right)
        for letter in q.letters():
            if letter not in right:
                feedback = q.judge(letter)
                assert not feedback and "not quite" in feedback.text.lower() and len(feedback.text) > 60, \
                    f"lesson {lesson}, {q.id}, {letter}: {feedback.text}"
    else:
        assert q.judge(q.answer) and len(q.wrong) >= 2, f"lesson {lesson}, {q.id}: name two common wrong values"


@pytest.mark.parametrize("lesson, q", [(lesson, q) for lesson, q in ALL_QUESTIONS
                                       if isinstance(q, Choice) and not q.several],
                         ids=lambda v: v if isinstance(v, str) else v.id)
def test_the_right_option_does_not_stand_out_by_its_length(lesson, q):
    right = [len(o.text) for o in q.options if o.correct]
    wrong = [len(o.text) for o in q.options if not o.correct]
    assert max(right) <= 1.15 * max(wrong), f"lesson {lesson}, {q.id}: {[o.text for o in q.options]}"


# Phrases that would hand over a question's right option if a wrong option's feedback used them.
GIVEAWAYS = {
    ("03", "one-row"): ["no row's result depends", "never across rows"],
    ("03", "share"): ["45 %", "45%"],
    ("05", "residual"): ["one affine map", "(I + W1 W2)", "gives one", "into one"],
    ("05", "corner-sum"): ["corner sum"],
    ("05", "attention"): ["softmax of scores", "softmax of token-dependent scores"],
    ("08", "relu-at-zero"): ["uses is 0", "is 0.", ": 0", "as off", "db1[0] = 0", "passes no gradient"],
    ("08", "dead-unit"): ["gradient is 0", "exactly 0 there", "stays off", "is exactly 0"],
}


@pytest.mark.parametrize("lesson, qid", list(GIVEAWAYS), ids=lambda v: v)
def test_wrong_options_do_not_state_the_right_one(lesson, qid):
    """A wrong option's feedback explains its misconception; it does not hand over the right option."""
    q = next(q for q in lesson_quiz(lesson).questions if q.id == qid)
    for letter in q.letters():
        if letter not in q.correct_letters():
            text = q.judge(letter).text
            for phrase in GIVEAWAYS[lesson, qid]:
                assert phrase.lower() not in text.lower(), (lesson, qid, letter, phrase, text)


# ---- the right letter follows no pattern (a trial learner found every answer was A in lessons 07-09) ----------
def test_no_lesson_has_the_same_right_letter_twice_running_and_no_letter_dominates():
    from collections import Counter

    from helpers.quiz import Choice, lesson_quiz
    counts = Counter()
    for lesson in ("01", "02", "03", "04", "05", "06", "07", "08", "09"):
        letters = [q.correct_letters() for q in lesson_quiz(lesson).questions
                   if isinstance(q, Choice) and not q.several]
        assert all(a != b for a, b in zip(letters, letters[1:])), (lesson, letters)
        counts.update(letters)
    total = sum(counts.values())
    assert set(counts) >= {"A", "B", "C", "D"} and max(counts.values()) <= 0.35 * total, counts


def test_options_are_written_in_any_order_and_shown_arranged():
    from helpers.quiz import Choice, Option, Quiz
    written = [Choice(f"q{i}", "Which?", [Option("right", "Yes.", correct=True), Option("x", "No."),
                                         Option("y", "No."), Option("z", "No.")]) for i in range(4)]
    quiz = Quiz("01", written)
    assert [q.correct_letters() for q in quiz.questions] == ["B", "A", "D", "C"]
    assert [o.text for o in quiz.questions[0].options] == ["x", "right", "y", "z"]     # the others keep their order
    kept = Quiz("01", [Choice("k", "Which?", written[0].options, shuffle=False)])
    assert kept.questions[0].correct_letters() == "A"
    assert quiz.judge(1, "B") and not quiz.judge(1, "A")
