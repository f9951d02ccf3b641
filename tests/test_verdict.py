"""What a check call returns and does around it: Verdicts, grading modes, hidden cases, progress."""
import json

import pytest

from helpers import progress
from helpers.checks import check_hand_trace
from helpers.checks import _verdict
from helpers.checks._core import Case, Mistake, check_function, vector_problem
from helpers.checks._verdict import CheckFailed, Verdict, failed_attempts, first_sentence, grader

RIGHT = ([4, -1], [4, 0], [5, -1])
B1_LEFT_OUT = ([5, -1], [5, 0], [6, -1])


def named(answer):
    """The learner's own hand_trace returning `answer` (a check of another function is a demonstration)."""
    def hand_trace():
        return answer
    return hand_trace


@pytest.fixture(autouse=True)
def no_grading(monkeypatch):
    for name in (_verdict.NBGRADER_ENV, _verdict.GRADING_ENV):
        monkeypatch.delenv(name, raising=False)


def test_a_pass_is_a_truthy_verdict_with_counts(capsys):
    verdict = check_hand_trace(lambda: RIGHT)
    assert isinstance(verdict, Verdict) and verdict
    assert (verdict.exercise, verdict.lesson, verdict.status) == ("hand_trace", "01", "pass")
    assert (verdict.passed, verdict.total, verdict.score, verdict.mistake) == (3, 3, 1.0, "")


def test_a_fail_carries_the_named_mistake_and_a_partial_count(capsys):
    verdict = check_hand_trace(lambda: ([4, -1], [4, 0], [4, 0]))    # b2 left out: only y is wrong
    assert not verdict and verdict.status == "fail"
    assert (verdict.passed, verdict.total) == (2, 3) and verdict.mistake == "b2 left out"


def test_a_stub_is_not_attempted_not_failed(capsys):
    def hand_trace():
        raise NotImplementedError("your code here")
    verdict = check_hand_trace(hand_trace)
    assert not verdict and verdict.status == "not attempted" and verdict.mistake == ""


def test_an_early_stop_records_its_printed_problem(capsys):
    verdict = check_hand_trace("not a function")
    assert verdict.status == "fail" and verdict.mistake.startswith("expected a function but got")


def test_a_verdict_displays_nothing_so_a_check_cell_has_no_out_line():
    verdict = Verdict("x", "01", "pass", 1, 1)
    assert verdict._ipython_display_() is None
    from IPython.core.formatters import DisplayFormatter
    assert DisplayFormatter().format(verdict) == ({}, {})


def test_under_nbgrader_a_failed_check_raises_after_its_report(monkeypatch, capsys):
    monkeypatch.setenv(_verdict.NBGRADER_ENV, "autograde")
    with pytest.raises(CheckFailed, match="hand_trace: fail .*b1 left out"):
        check_hand_trace(named(B1_LEFT_OUT))
    assert "Likely mistake: b1 left out" in capsys.readouterr().out      # the feedback is printed first
    assert check_hand_trace(named(RIGHT))                                # a pass never raises


def test_under_nbgrader_a_demonstration_with_another_function_does_not_raise(monkeypatch, capsys):
    monkeypatch.setenv(_verdict.NBGRADER_ENV, "autograde")
    verdict = check_hand_trace(lambda: B1_LEFT_OUT)                      # like check_ffn_forward(ffn_one_stride)
    assert not verdict and "Likely mistake: b1 left out" in capsys.readouterr().out


def test_under_nbgrader_warnings_and_stderr_become_notes_on_stdout(monkeypatch, capsys):
    import sys
    import warnings
    monkeypatch.setenv(_verdict.NBGRADER_ENV, "autograde")

    def hand_trace():
        warnings.warn("overflow encountered in exp", RuntimeWarning)
        print("debugging", file=sys.stderr)
        return RIGHT
    assert check_hand_trace(hand_trace)
    out, err = capsys.readouterr()
    assert err == "" and "debugging" in out and "Note: your code raised a RuntimeWarning: overflow" in out


@pytest.mark.parametrize("mode", ["validate", "autograde"])
def test_under_nbgrader_a_stub_fails_its_cell(monkeypatch, capsys, mode):
    monkeypatch.setenv(_verdict.NBGRADER_ENV, mode)

    def hand_trace():
        raise NotImplementedError
    with pytest.raises(CheckFailed, match="not attempted"):
        check_hand_trace(hand_trace)


def test_outside_nbgrader_a_failed_check_never_raises(capsys):
    assert not check_hand_trace(lambda: B1_LEFT_OUT)


# ---- hidden cases ----------------------------------------------------------------------------------------
def reference(x):
    return [2 * v for v in x]


PUBLIC = [Case("small", {"x": [1.0, -2.0]})]
HIDDEN = [Case("hidden: three numbers", {"x": [0.5, 0.0, 3.0]})]


def only_two(x):            # right on two numbers, wrong on three: only the hidden case finds it
    return [2 * v for v in x] if len(x) == 2 else [0.0] * len(x)


@grader
def check_double(fn):
    return check_function("double", fn, PUBLIC, reference, lambda v, c: vector_problem(v, len(c.args["x"])),
                          hidden=HIDDEN)


def test_hidden_cases_do_not_run_for_a_learner_and_the_pass_says_public(capsys):
    verdict = check_double(only_two)
    out = capsys.readouterr().out
    assert verdict and verdict.total == 1 and verdict.hidden == 0
    assert "all 1 public cases pass" in out and "more cases run" in out and "Well done" not in out


def test_hidden_cases_run_under_make_grade(monkeypatch, capsys):
    monkeypatch.setenv(_verdict.GRADING_ENV, "1")
    verdict = check_double(only_two)
    assert not verdict and (verdict.passed, verdict.total) == (1, 2)
    assert "hidden: three numbers" in capsys.readouterr().out
    verdict = check_double(reference)
    assert verdict and verdict.hidden == 1 and "1 of them hidden" in capsys.readouterr().out


def test_hidden_cases_stay_out_of_the_learners_kernel_under_nbgrader_autograde(monkeypatch, capsys):
    """In the kernel nbgrader runs, the hidden cases do not run (their values would be in reach of the
    learner's code there): the course's autograde preprocessor runs them in a clean process afterwards."""
    monkeypatch.setenv(_verdict.NBGRADER_ENV, "autograde")

    def double(x):                  # the exercise's own function, right on the public case only
        return only_two(x)
    assert check_double(double).total == 1


def test_hidden_cases_run_under_the_grading_secret(capsys):
    _verdict.use_secret("a secret")
    try:
        def double(x):
            return only_two(x)
        verdict = check_double(double)
    finally:
        _verdict.use_secret(None)
    assert not verdict and (verdict.passed, verdict.total) == (1, 2)


def test_hidden_rng_is_fixed_without_a_secret_and_fresh_with_one():
    draw = lambda: _verdict.hidden_rng(7).normal(size=3).tolist()  # noqa: E731
    assert draw() == draw()                                       # the tests' fixed cases
    fixed = draw()
    seen = []
    for secret in ("one", "two"):
        _verdict.use_secret(secret)
        try:
            seen.append(draw())
            assert draw() == seen[-1]                             # one run draws the same case twice
        finally:
            _verdict.use_secret(None)
    assert seen[0] != seen[1] and fixed not in seen


def test_hidden_cases_do_not_run_under_validate(monkeypatch, capsys):
    monkeypatch.setenv(_verdict.NBGRADER_ENV, "validate")
    assert check_double(only_two).total == 1


# ---- repeated messages, attempts ---------------------------------------------------------------------------
def test_a_message_repeated_with_other_numbers_collapses(capsys):
    cases = [Case(f"case {n}", {"x": [float(n), 1.0]}) for n in range(1, 4)]
    check_function("double", lambda x: 3 * x[0], cases, reference,             # a single number back
                   lambda v, c: vector_problem(v, 2))
    out = capsys.readouterr().out
    assert out.count("single number") == 1 and out.count("the same as above, with its own numbers") == 2


def test_an_error_repeated_word_for_word_collapses_but_one_with_other_numbers_is_shown(capsys):
    """"As above" only of a message of the same kind: the same error, word for word. An error whose numbers
    differ (the shapes that did not broadcast) is another error, shown whole."""
    cases = [Case(f"case {n}", {"x": [float(n)] * n}) for n in range(2, 5)]

    def same_error(x):
        raise ValueError("no good")

    def own_shapes(x):
        raise ValueError(f"operands could not be broadcast together with shapes ({len(x)},) (1, 5)")
    check_function("double", same_error, cases, reference, lambda v, c: vector_problem(v, len(c.args["x"])))
    out = capsys.readouterr().out
    assert out.count("raised ValueError") == 1 and out.count("the same as above") == 2, out
    assert "with its own numbers" not in out
    check_function("double", own_shapes, cases, reference, lambda v, c: vector_problem(v, len(c.args["x"])))
    out = capsys.readouterr().out
    assert all(f"shapes ({n},) (1, 5)" in out for n in range(2, 5)) and "the same as above" not in out, out


def test_messages_that_differ_in_a_name_or_in_kind_do_not_collapse(capsys):
    """The digits of a name are words, not numbers: a problem with W1 is not "the same" as one with W2. A
    problem with the result after an error is another kind of message."""
    cases = [Case(f"case {n}", {"x": [1.0, float(n)]}) for n in range(1, 4)]
    said = iter(["the result W1 is off", "the result W2 is off", "the result W2 is off"])
    check_function("double", lambda x: "nope", cases, reference, lambda v, c: next(said))
    out = capsys.readouterr().out
    assert "W1 is off" in out and "W2 is off" in out and out.count("the same as above") == 1, out

    def sometimes(x):
        if x[1] == 1.0:
            raise ValueError("bad input 1")
        return "nope"
    check_function("double", sometimes, cases, reference, lambda v, c: "your function raised ValueError: bad input 2")
    out = capsys.readouterr().out
    assert "the same as above" not in out.split("case 2", 1)[1].splitlines()[0], out


def test_expected_and_got_is_short_and_always_shown(capsys):
    cases = [Case(f"case {n}", {"x": [float(n), 1.0]}) for n in range(1, 4)]
    check_function("double", lambda x: [3 * v for v in x], cases, reference, lambda v, c: vector_problem(v, 2))
    out = capsys.readouterr().out
    assert out.count("expected") == 3 and "the same as above" not in out


def test_a_repeat_is_not_collapsed_across_a_passing_case(capsys):
    # wrong, right, wrong: "as above" would point at the passing line
    cases = [Case("a", {"x": [1.0, 1.0]}), Case("b", {"x": [0.0, 0.0]}), Case("c", {"x": [2.0, 1.0]})]
    check_function("double", lambda x: [3 * v for v in x], cases, reference,
                   lambda v, c: vector_problem(v, 2))
    out = capsys.readouterr().out
    assert out.count("expected") == 2 and "the same as above" not in out


def test_failed_attempts_count_real_failures_only(capsys):
    def stub():
        raise NotImplementedError
    before = failed_attempts("hand_trace")
    check_hand_trace(stub)                       # Run All on a fresh notebook: not an attempt
    check_hand_trace(lambda: B1_LEFT_OUT)
    check_hand_trace(lambda: RIGHT)
    assert failed_attempts("hand_trace") == before + 1


@pytest.mark.parametrize("text, first", [
    ("one stride for both matrices. Use i*D for W1.", "one stride for both matrices"),
    ("math.exp on an array. Use np.exp.", "math.exp on an array"),
    ("a bias, e.g. b1. Then more.", "a bias, e.g. b1"),
])
def test_first_sentence(text, first):
    assert first_sentence(text) == first


# ---- progress ----------------------------------------------------------------------------------------------
def records(folder):
    return [json.loads(line) for line in (folder / progress.LOG).read_text().splitlines()]


def test_a_check_in_a_workspace_is_recorded(tmp_path, monkeypatch, capsys):
    (tmp_path / progress.MARKER).write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTEST_CURRENT_TEST")          # as in a learner's kernel

    def hand_trace():
        return [4, -1], [4, 0], [4, 0]
    check_hand_trace(hand_trace)
    check_hand_trace(lambda: RIGHT)                    # an experiment with another function: not progress
    [entry] = records(tmp_path)
    assert (entry["kind"], entry["lesson"], entry["item"], entry["verdict"], entry["mistake"]) == \
        ("check", "01", "hand_trace", "fail", "b2 left out")


def test_nothing_is_recorded_outside_a_workspace_or_under_tests(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTEST_CURRENT_TEST")

    def hand_trace():
        return RIGHT
    check_hand_trace(hand_trace)                       # no marker: not a workspace
    (tmp_path / progress.MARKER).write_text("")
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "x")
    check_hand_trace(hand_trace)                       # under pytest or nbval
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    monkeypatch.setenv(_verdict.GRADING_ENV, "1")
    check_hand_trace(hand_trace)                       # while an instructor grades
    assert not (tmp_path / progress.LOG).exists()


def test_a_read_only_workspace_does_not_break_the_check(tmp_path, monkeypatch, capsys):
    (tmp_path / progress.MARKER).write_text("")
    (tmp_path / progress.LOG).mkdir()                  # cannot be opened for writing, even as root
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    assert check_hand_trace(lambda: RIGHT)


def test_calling_the_courses_own_reference_for_the_exercise_is_not_passing(capsys):
    from helpers import flat
    from helpers.checks import check_ffn_forward

    def ffn_forward(x, W1, b1, W2, b2):
        return flat.ffn_forward(x, W1, b1, W2, b2)
    verdict = check_ffn_forward(ffn_forward)
    out = capsys.readouterr().out
    assert not verdict and "calls the course's own `helpers.flat.ffn_forward`" in out


def test_the_courses_own_function_under_the_exercises_name_fails_and_counts(tmp_path, monkeypatch, capsys):
    # A learner's exercise cell that stopped with a syntax error leaves the name meaning the reference that the
    # lesson imported above: the check refuses it, progress records the fail, and nbgrader fails the cell.
    from helpers.checks import check_ffn_forward
    from helpers.flat import ffn_forward
    (tmp_path / progress.MARKER).write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    verdict = check_ffn_forward(ffn_forward)
    assert not verdict and verdict.mistake == "the course's reference was checked, not the learner's function"
    assert "this is the course's own `helpers.flat.ffn_forward`" in capsys.readouterr().out
    [entry] = records(tmp_path)
    assert (entry["item"], entry["verdict"]) == ("ffn_forward", "fail")
    monkeypatch.setenv(_verdict.NBGRADER_ENV, "autograde")
    with pytest.raises(CheckFailed, match="the course's reference was checked"):
        check_ffn_forward(ffn_forward)


def test_the_mistake_is_the_checks_diagnosis_and_the_shape_goes_to_the_detail(capsys):
    """An unsummed bias gradient: the check says what came back (a shape) and then what is wrong; the verdict
    keeps the diagnosis as the mistake and the shape as the detail."""
    import numpy as np
    from helpers.checks import check_ffn_backward

    def ffn_backward(x, W1, b1, W2, b2, dy):
        z = x @ W1 + b1
        h = np.maximum(z, 0)
        dz = (dy @ W2.T) * (z > 0)
        return dz @ W1.T, x.T @ dz, dz.sum(axis=0, keepdims=True), h.T @ dy, dy.sum(axis=0)
    verdict = check_ffn_backward(ffn_backward)
    assert verdict.mistake.startswith("db1 was not summed over the tokens")
    assert "shape (1, 2)" in verdict.detail and "expected (2,)" in verdict.detail


def test_a_first_sentence_that_names_the_mistake_stays_the_mistake():
    what, diagnosis = _verdict.split_problem("returned `experts` as floats (the first is 3.0). np.argsort returns "
                                             "ints: give np.zeros dtype=int.")
    assert (what, diagnosis) == ("returned `experts` as floats (the first is 3.0)", "")
