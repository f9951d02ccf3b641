"""Lesson 01's graders against banks of right and wrong answers, written as learners write them.

Every wrong answer must be rejected, and with its own named slip or specific problem; the pencil exercises
(hand_trace, detector) must not give the answer away on a first failure."""
import itertools
from fractions import Fraction

import numpy as np
import pytest

from helpers.checks import _verdict, check_detector, check_firing_units, check_hand_trace
from helpers.checks.lesson01 import _ABOVE, _BELOW, _ON, _firing_cases, _reference_firing
from helpers.ffn import ffn, relu
from helpers.toy import B1_484, NET_484, W1_484, X_ROBOT

from hidden_under_secrets import (SECRETS, assert_drawn_afresh, assert_forgery_fails_under_every_secret, graded_under,
                                  memorising_forgery)

RIGHT_TRACE = ([4, -1], [4, 0], [5, -1])


@pytest.fixture(autouse=True)
def fresh_attempts(monkeypatch):
    """Each test starts as a first attempt: the reveal after a second failure depends on the kernel's count."""
    monkeypatch.setattr(_verdict, "_FAILED_ATTEMPTS", {})


def test_the_robot_token_zeroes_exactly_three_of_eight():
    z = X_ROBOT @ W1_484 + B1_484
    assert int(np.sum(relu(z) == 0)) == 3 and int(np.sum(z < 0)) == 3


def test_the_robot_output_is_signed():
    y = ffn(X_ROBOT, **NET_484)
    assert (y < 0).any() and (y > 0).any()


# ---- exercise 1: the hand trace ------------------------------------------------------------------------
def traced_with_numpy():
    x, W1, b1, b2 = np.array([2.0, 3.0]), np.array([[1.0, 1.0], [1.0, -1.0]]), np.array([-1.0, 0.0]), \
        np.array([1.0, -1.0])
    z = x @ W1 + b1
    h = np.maximum(z, 0)
    return z, h, h @ np.eye(2) + b2


@pytest.mark.parametrize("fn", [
    lambda: RIGHT_TRACE,
    lambda: ((4.0, -1.0), (4.0, 0.0), (5.0, -1.0)),
    lambda: (np.array([4, -1]), np.array([4, 0]), np.array([5, -1])),
    lambda: [[4, -1], [4, 0], [5, -1]],
    lambda: np.array([[4, -1], [4, 0], [5, -1]]),
    traced_with_numpy,
    lambda: ([Fraction(4), Fraction(-1)], [Fraction(4), Fraction(0)], [Fraction(5), Fraction(-1)]),
    lambda: (np.array([4, -1], np.float32), np.array([4, 0], np.float32), np.array([5, -1], np.float32)),
    lambda: ([4.0, -1.0], [4.0, -0.0], [5.0, -1.0]),        # -0.0 from z * (z > 0)
])
def test_hand_trace_accepts_right_answers_in_any_container(fn, capsys):
    assert check_hand_trace(fn)
    assert "all 3 cases pass" in capsys.readouterr().out


# (answer, the slip the check must name). No two entries are the same answer.
WRONG_TRACES = [
    (([5, -1], [5, 0], [6, -1]), "b1 left out"),
    (([6, -1], [6, 0], [7, -1]), "b1 subtracted instead of added"),
    (([5, -2], [5, 0], [6, -1]), "b1's entries on the wrong units"),
    (([4, 5], [4, 5], [5, 4]), "column 2 read as [1, 1], its minus sign lost"),
    (([4, 1], [4, 1], [5, 0]), "the minus sign of column 2 put on the x1 term"),
    (([4, -5], [4, 0], [5, -1]), "the minus sign of column 2 put on both terms"),
    (([-1, 4], [0, 4], [1, 3]), "z1 and z2 in the wrong order"),
    (([0, 2], [0, 2], [0, 2]), "section 2's numbers copied"),
    (([-1, 2], [0, 2], [1, 1]), "section 2's token x = [1, -1] traced"),
    (([4, -1], [4, -1], [5, -2]), "ReLU not applied"),
    (([4, -1], [4, 1], [5, 0]), "the absolute value taken instead of ReLU"),
    (([4, -1], [0, -1], [1, -2]), "ReLU kept the negative part"),
    (([4, -1], [1, 0], [2, -1]), "a 0/1 'fires' flag"),
    (([4, -1], [4, 0], [5, 0]), "ReLU applied after W2 as well"),
    (([4, -1], [4, 0], [4, 0]), "b2 left out"),
    (([4, -1], [4, 0], [3, 1]), "b2 subtracted, or its two entries swapped"),
    (([4, -1], [4, 0], [5, -2]), "y computed from z instead of h"),
    (([4, -1], [4, 0], [4, -1]), "y copied from z"),
    (([4, -1], [4, 0], [7, 2]), "x added to the output"),
    (([4, -1], [4, 0], [3, 0]), "b1 used in place of b2"),
]


@pytest.mark.parametrize("answer, named", WRONG_TRACES, ids=[n for _, n in WRONG_TRACES])
def test_hand_trace_names_the_slip(answer, named, capsys):
    verdict = check_hand_trace(lambda: answer)
    out = capsys.readouterr().out
    assert not verdict and f"Likely mistake: {named}" in out, out
    assert verdict.mistake.startswith(named)


@pytest.mark.parametrize("answer, where", [
    (([4, -1], [4, 0], [5.000004, -1]), "y1"),                # a typo inside the old 1e-6 tolerance
    (([4, -1], [4, 1e-10], [5, -1]), "h2"),                   # relu of a negative z is exactly 0, not tiny
    (([4.000012, -1], [4.000012, 0], [5.000012, -1]), "z1"),
])
def test_hand_trace_a_pencil_number_must_be_exact(answer, where, capsys):
    verdict = check_hand_trace(lambda: answer)
    out = capsys.readouterr().out
    assert not verdict and f"Likely mistake: a typo or a tiny offset in {where}" in out, out


def test_the_wrong_traces_are_all_different():
    answers = [tuple(tuple(part) for part in answer) for answer, _ in WRONG_TRACES]
    assert len(set(answers)) == len(answers)


@pytest.mark.parametrize("answer, named", WRONG_TRACES, ids=[n for _, n in WRONG_TRACES])
def test_a_first_failure_says_which_part_but_not_the_expected_numbers(answer, named, capsys):
    check_hand_trace(lambda: answer)
    out = capsys.readouterr().out
    mine = [list(part) for part in answer]
    hidden = [list(part) for part in RIGHT_TRACE if list(part) not in mine]
    for part in hidden:                             # a right value the learner has not written is never shown
        assert str(part).replace(" ", "") not in out.replace(" ", ""), (part, out)
    assert "expected" not in out and "The answer" not in out and "reveal=True" in out


def test_the_answer_is_revealed_after_a_second_failure_or_on_request(capsys):
    wrong = ([4, 1], [4, 1], [5, 0])
    check_hand_trace(lambda: wrong)
    assert "The answer" not in capsys.readouterr().out
    check_hand_trace(lambda: wrong)
    assert "The answer, after your second try: z = [4, -1], h = [4, 0], y = [5, -1]." in capsys.readouterr().out


def test_reveal_true_shows_the_answer_on_a_first_failure(capsys):
    assert not check_hand_trace(lambda: ([5, -1], [5, 0], [6, -1]), reveal=True)
    assert "The answer, as you asked: z = [4, -1]" in capsys.readouterr().out


def test_a_slip_carried_forward_is_not_blamed_twice(capsys):
    verdict = check_hand_trace(lambda: ([4, 5], [4, 5], [5, 4]))
    out = capsys.readouterr().out
    assert out.count("Likely mistake") == 1
    assert "follows correctly from your z" in out and "follows correctly from your h" in out
    # A step done right on the learner's own numbers is not marked wrong, and counts as a passed case
    # (follow-through); the check still fails, on z alone.
    carried = [line for line in out.splitlines() if "follows correctly" in line]
    assert len(carried) == 2 and all("\u2718" not in line and "\u2714" not in line for line in carried), out
    assert all(line.lstrip().startswith("\u2192") for line in carried), out
    assert out.count("  \u2718 ") == 1 and "1 of 3 cases failed" in out
    assert not verdict and (verdict.passed, verdict.total) == (2, 3)


def test_a_step_right_on_carried_numbers_but_wrong_after_is_still_named(capsys):
    # z wrong (b1 left out), h follows from it, y then adds b1 instead of b2: y is a slip of its own.
    verdict = check_hand_trace(lambda: ([5, -1], [5, 0], [4, 0]))
    out = capsys.readouterr().out
    assert not verdict and (verdict.passed, verdict.total) == (1, 3)
    assert "follows correctly from your z" in out and out.count("  \u2718 ") == 2
    # Two slips of their own: no one name explains both, so none is given, and the summary says so.
    assert "Likely mistake" not in out and "Possibly" not in out
    assert verdict.mistake == "z and y each wrong on their own", verdict.mistake


def test_the_reveal_says_the_count_lives_in_this_session(capsys):
    check_hand_trace(lambda: ([5, -1], [5, 0], [6, -1]))
    out = capsys.readouterr().out
    assert "in this session" in out and "restart starts the count afresh" in out
    assert "check_hand_trace(hand_trace, reveal=True) shows it at any time" in out
    check_detector(lambda: ([1, -1], 0))
    out = capsys.readouterr().out
    assert "in this session" in out and "check_detector(detector, reveal=True) shows it at any time" in out


def test_the_line_case_is_labelled_by_what_the_unit_must_do(capsys):
    check_detector(lambda: ([1, -1], 0))               # the bias left out: fires on the line
    out = capsys.readouterr().out
    assert "\u2718 on the line x1 = x2 + 1 itself: must stay silent" in out
    assert "where z = 0" not in out                    # true only of the right unit, not of this one


@pytest.mark.parametrize("answer, hint", [
    (([3, 7], [4, 0], [5, -1]), "Possibly: a slip in z. Work one unit at a time: z_k"),
    (([4, -1], [4, 0], [5, 1]), "Possibly: a slip in y. Work out y = h W2 + b2"),
    (([4, -1], [4, 0], [1, 3]), "Possibly: a slip in y. Work out y = h W2 + b2"),
    (([4, -1], [3, 7], [4, 6]), "Possibly: a slip in h. Apply ReLU to z element by element, h = relu(z)"),
])
def test_the_fallback_hint_keeps_the_variables_lower_case(answer, hint, capsys):
    # H is lesson 02's hidden size and Y is no variable of this trace: a hint never capitalises h or y
    check_hand_trace(lambda: answer)
    out = capsys.readouterr().out
    assert hint in out, out
    assert ". Y =" not in out and ". H =" not in out and ". Z" not in out


def test_the_three_parts_in_another_order_are_named_as_that(capsys):
    """Issue 21: (y, h, z) returned. Its first list, [5, -1], is also z without b1, but "b1 left out" would not
    explain the y; the order does."""
    verdict = check_hand_trace(lambda: ([5, -1], [4, 0], [4, -1]))
    out = capsys.readouterr().out
    assert not verdict and verdict.mistake == "z, h and y returned in another order", out
    assert "b1 left out" not in out


def test_several_slips_of_their_own_get_no_single_name(capsys):
    verdict = check_hand_trace(lambda: ([3, 7], [1, 2], [5, 5]))
    out = capsys.readouterr().out
    assert not verdict and "Likely mistake" not in out and "Possibly" not in out
    assert "What differs: z and h and y are each wrong on their own" in out, out


def test_an_unknown_slip_still_names_the_part(capsys):
    verdict = check_hand_trace(lambda: ([3, 7], [4, 0], [5, -1]))
    out = capsys.readouterr().out
    assert not verdict and "Possibly: a slip in z." in out and "(z1 and z2)" in out
    assert verdict.mistake == "a slip in z"


@pytest.mark.parametrize("fn, message", [
    (lambda: None, "returned None"),
    (lambda: ([4, -1], [4, 0]), "returned 2 values"),
    (lambda: {"z": [4, -1], "h": [4, 0], "y": [5, -1]}, "returned a dict"),
    (lambda: ([4, -1], [4, 0], [5, -1, 0]), "`y` is 3 numbers; expected 2"),
    (lambda: ([4, -1], None, [5, -1]), "`h` is None: give h its two numbers before `return z, h, y`"),
    (lambda: ("4, -1", [4, 0], [5, -1]), "`z` is a string"),
    (lambda: ([4, -1], [4, 0], [5, float("nan")]), "element 1 is nan"),
    (lambda: 1 / 0, "raised ZeroDivisionError"),
    ("not a function", "expected a function"),
])
def test_hand_trace_bad_answers(fn, message, capsys):
    assert not check_hand_trace(fn)
    assert message in capsys.readouterr().out


def test_hand_trace_shape_problem_gets_no_arithmetic_hint(capsys):
    assert not check_hand_trace(lambda: ([4, -1], [4, 0], 3))
    out = capsys.readouterr().out
    assert "`y` is a single number" in out and "Likely mistake" not in out and "Possibly" not in out


def test_hand_trace_stub(capsys):
    def hand_trace():
        raise NotImplementedError("your code here")
    verdict = check_hand_trace(hand_trace)
    assert not verdict and verdict.status == "not attempted"
    assert "not implemented yet" in capsys.readouterr().out


# ---- exercise 2: firing units ---------------------------------------------------------------------------
def test_every_firing_case_is_non_symmetric_and_one_square_one_tells_the_orientations_apart():
    cases = _firing_cases()
    square = []
    for case in cases:
        W1 = np.asarray(case.args["W1"])
        if W1.shape[0] != W1.shape[1]:
            continue                                          # a transposed W1 cannot even multiply
        assert not np.allclose(W1, W1.T), case.name
        square.append(case)
    # W1 @ x runs on a square W1: there it must give other firing units than x @ W1 (and not the silent ones)
    assert len(square) == 1
    x, W1, b1 = square[0].args.values()
    columns, rows = _reference_firing(x, W1, b1), _reference_firing(x, np.asarray(W1).T, b1)
    assert rows != columns and rows != [k for k in range(len(b1)) if k not in columns]
    kinds = {type(case.args["W1"]) for case in cases}
    assert kinds == {list, np.ndarray}
    assert any(len(case.args["x"]) > len(case.args["b1"]) for case in cases)   # d > d_ff
    assert any(len(case.args["x"]) < len(case.args["b1"]) for case in cases)   # d < d_ff
    z = [np.asarray(c.args["x"]) @ np.asarray(c.args["W1"]) + np.asarray(c.args["b1"]) for c in cases]
    assert any(np.any(v == 0) for v in z)                                       # exactly at the boundary
    assert any(np.any((v > 0) & (v < 1e-3)) for v in z)                         # barely fires
    assert any(len(_reference_firing(*c.args.values())) == 0 for c in cases)   # none fires


def pre(x, W1, b1):
    return np.asarray(x, float) @ np.asarray(W1, float) + np.asarray(b1, float)


def firing_numpy(x, W1, b1):
    z = np.asarray(x) @ np.asarray(W1) + np.asarray(b1)
    return np.flatnonzero(z > 0)


def firing_loops(x, W1, b1):
    fired = []
    for k in range(len(b1)):
        z = b1[k]
        for i in range(len(x)):
            z += x[i] * W1[i][k]
        if z > 0:
            fired.append(k)
    return fired


def firing_comprehension(x, W1, b1):
    return tuple(k for k in range(len(b1)) if sum(xi * row[k] for xi, row in zip(x, W1)) + b1[k] > 0)


def firing_where(x, W1, b1):
    return list(np.where(pre(x, W1, b1) > 0)[0])          # a list of np.int64


def firing_set(x, W1, b1):
    return {k for k, v in enumerate(np.dot(x, W1) + np.asarray(b1)) if v > 0}


def firing_einsum_descending(x, W1, b1):
    z = np.einsum("i,ij->j", np.asarray(x, float), np.asarray(W1, float)) + np.asarray(b1, float)
    return tuple(sorted((int(k) for k in np.argwhere(z > 0).ravel()), reverse=True))


@pytest.mark.parametrize("fn", [firing_numpy, firing_loops, firing_comprehension, firing_where, firing_set,
                                firing_einsum_descending])
def test_firing_units_accepts_correct_styles(fn, capsys):
    assert check_firing_units(fn), capsys.readouterr().out


def rows_matrix(x, W1, b1):
    z = np.asarray(W1) @ np.asarray(x) + np.asarray(b1)   # W1 read as (d_ff, d)
    return [k for k in range(len(z)) if z[k] > 0]


def rows_dot(x, W1, b1):
    return list(np.flatnonzero(np.dot(W1, x) + b1 > 0))


def rows_loop_over_units(x, W1, b1):
    return [k for k in range(len(b1)) if np.dot(W1[k], x) + b1[k] > 0]


def rows_loop_over_rows(x, W1, b1):
    return [k for k in range(len(W1)) if sum(a * b for a, b in zip(W1[k], x)) + b1[k] > 0]


def transposed_then_matrix(x, W1, b1):
    return np.flatnonzero(np.asarray(x) @ np.asarray(W1).T + b1 > 0)


def rows_tried_first(x, W1, b1):
    # W1 @ x, and x @ W1 only when that raises: right on every non-square W1, wrong on a square one
    x, W1, b1 = (np.asarray(a, float) for a in (x, W1, b1))
    try:
        z = W1 @ x + b1
    except ValueError:
        z = x @ W1 + b1
    return [k for k, v in enumerate(z) if v > 0]


def orientation_from_the_shapes(x, W1, b1):
    x, W1 = np.asarray(x, float), np.asarray(W1, float)
    z = (W1 @ x if W1.shape[1] == len(x) else x @ W1) + np.asarray(b1, float)
    return list(np.flatnonzero(z > 0))


def rows_when_square(x, W1, b1):
    W = np.asarray(W1, float)
    W = W.T if W.shape[0] == W.shape[1] else W
    return list(np.flatnonzero(np.asarray(x, float) @ W + np.asarray(b1, float) > 0))


# (function, what the check must say). Named mistakes first, then specific problems.
WRONG_FIRING = [
    (lambda x, W1, b1: [k for k, v in enumerate(pre(x, W1, b1)) if v >= 0], "Likely mistake: counting a unit "
                                                                             "whose pre-activation is exactly 0"),
    (lambda x, W1, b1: [k for k, v in enumerate(pre(x, W1, b1)) if v <= 0], "Likely mistake: the silent units"),
    (lambda x, W1, b1: [k + 1 for k, v in enumerate(pre(x, W1, b1)) if v > 0], "Likely mistake: counting units "
                                                                                "from 1"),
    (lambda x, W1, b1: list(np.flatnonzero(np.asarray(x) @ np.asarray(W1) > 0)), "Likely mistake: b1 left out"),
    (lambda x, W1, b1: list(np.flatnonzero(np.asarray(x) @ np.asarray(W1) - b1 > 0)), "Likely mistake: b1 "
                                                                                       "subtracted"),
    (rows_matrix, "Likely mistake: W1 read by rows"),
    (rows_dot, "Likely mistake: W1 read by rows"),
    (rows_loop_over_units, "Likely mistake: W1 read by rows"),
    (rows_loop_over_rows, "Likely mistake: W1 read by rows"),
    (transposed_then_matrix, "Likely mistake: W1 read by rows"),
    (rows_tried_first, "Likely mistake: W1 read by rows"),
    (orientation_from_the_shapes, "Likely mistake: W1 read by rows"),
    (rows_when_square, "Likely mistake: W1 read by rows"),
    (lambda x, W1, b1: [k for k, v in enumerate(x @ W1 + b1) if v > 0], "Likely mistake: the inputs used as NumPy "
                                                                         "arrays, but they may arrive as lists"),
    (lambda x, W1, b1: [k for k in range(W1.shape[1]) if np.dot(x, W1[:, k]) + b1[k] > 0],
     "Likely mistake: the inputs used as NumPy arrays"),
    (lambda x, W1, b1: [k for k in range(len(W1)) if sum(x[i] * W1[i][k] for i in range(len(x))) + b1[k] > 0],
     "Likely mistake: d_ff taken as len(W1)"),
    (lambda x, W1, b1: [k for k in range(len(x)) if pre(x, W1, b1)[k] > 0], "Possibly: d_ff taken as len(W1)"),
    (lambda x, W1, b1: [k for k, v in enumerate(np.round(pre(x, W1, b1), 2)) if v > 0],
     "z rounded before the comparison"),
    (lambda x, W1, b1: [k for k, v in enumerate(pre(x, W1, b1)) if v > 1e-6], "Likely mistake: a unit with a "
                                                                              "tiny positive z left out"),
    (lambda x, W1, b1: [k for k, v in enumerate(pre(x, W1, b1)) if v > 1e-4], "Likely mistake: a unit with a "
                                                                              "tiny positive z left out"),
    (lambda x, W1, b1: [k for k, v in enumerate(np.round(pre(x, W1, b1), 4)) if v > 0],
     "z rounded before the comparison"),
    (lambda x, W1, b1: [k for k, v in enumerate(pre(x, W1, b1)) if round(float(v), 5) > 0],
     "z rounded before the comparison"),
    (lambda x, W1, b1: [k for k, v in enumerate(np.asarray(x, np.float32) @ np.asarray(W1, np.float32)
                                                + np.asarray(b1, np.float32)) if v > 0],
     "Likely mistake: z computed in float32"),
    (lambda x, W1, b1: [k for k, v in enumerate(np.asarray(x, float) @ np.asarray(W1, float)
                                                + np.asarray(b1, float) * (sum(x) > 0)) if v > 0],
     "Possibly: b1 left out"),
    (lambda x, W1, b1: [float(k) for k in np.flatnonzero(pre(x, W1, b1) > 0)], "a float; an index must be an int"),
    (lambda x, W1, b1: np.flatnonzero(pre(x, W1, b1) > 0).astype(float), "an array of floats"),
    (lambda x, W1, b1: np.nonzero(pre(x, W1, b1) > 0), "what np.nonzero and np.where give"),
    (lambda x, W1, b1: np.argwhere(pre(x, W1, b1) > 0), "np.argwhere gives one row per index"),
    (lambda x, W1, b1: (pre(x, W1, b1) > 0).tolist(), "np.flatnonzero(mask)"),
    (lambda x, W1, b1: (pre(x, W1, b1) > 0).astype(int).tolist(), "returned 0 or 1 for every unit (a mask)"),
    (lambda x, W1, b1: relu(pre(x, W1, b1)).tolist(), "not whole, such as the pre-activations"),
    (lambda x, W1, b1: list(firing_numpy(x, W1, b1)) * 2, "more than once"),
    (lambda x, W1, b1: (k for k in firing_numpy(x, W1, b1)), "returned a generator"),
    (lambda x, W1, b1: None, "returned None"),
]


@pytest.mark.parametrize("fn, message", WRONG_FIRING, ids=[m[:40] for _, m in WRONG_FIRING])
def test_firing_units_rejects_and_names(fn, message, capsys):
    verdict = check_firing_units(fn)
    out = capsys.readouterr().out
    assert not verdict and message in out, out
    assert "Possibly" not in out or message.startswith("Possibly")


def test_the_rows_diagnosis_covers_the_matrix_form_not_only_the_loop(capsys):
    check_firing_units(rows_matrix)
    out = capsys.readouterr().out
    assert "raised ValueError: matmul" in out and "Likely mistake: W1 read by rows" in out and "W1 @ x" in out


def test_an_orientation_chosen_at_run_time_fails_only_the_square_case_and_is_told_why(capsys):
    for fn in (rows_tried_first, orientation_from_the_shapes):
        verdict = check_firing_units(fn)
        out = capsys.readouterr().out
        assert not verdict and verdict.passed == verdict.total - 1, out
        assert "\u2718 a square 3 -> 3 layer, W1 not symmetric" in out and "falling back on the other" in out


def test_a_right_answer_on_transposed_data_is_not_called_a_rows_mistake(capsys):
    assert check_firing_units(firing_loops)
    assert "W1 read by rows" not in capsys.readouterr().out


def test_firing_units_stub_and_non_function(capsys):
    def firing_units(x, W1, b1):
        raise NotImplementedError("your code here")
    assert not check_firing_units(firing_units)
    assert "not implemented yet" in capsys.readouterr().out
    assert not check_firing_units([0, 1, 3])
    assert "expected a function" in capsys.readouterr().out


# ---- exercise 3: the detector ---------------------------------------------------------------------------
def test_the_detector_points_sit_on_the_line_and_just_either_side_of_it():
    assert _ON and all(x1 - x2 == 1.0 for x1, x2 in _ON)                       # exactly on the line
    assert all(x2 * 2 != round(x2 * 2) for _, x2 in _ON)                       # not on the 0.5 grid
    for eps in (1e-3, 1e-6, 1e-9):
        assert sum(abs((x1 - x2 - 1.0) + eps) < eps / 10 for x1, x2 in _BELOW) == len(_ON)
        assert sum(abs((x1 - x2 - 1.0) - eps) < eps / 10 for x1, x2 in _ABOVE) == len(_ON)
    assert all(x1 < x2 + 1 for x1, x2 in _BELOW) and all(x1 > x2 + 1 for x1, x2 in _ABOVE)


@pytest.mark.parametrize("answer", [
    ([1, -1], -1), ([2.5, -2.5], -2.5), (np.array([1.0, -1.0]), np.float64(-1.0)), ([0.1, -0.1], -0.1),
    ((1 / 3, -1 / 3), -1 / 3), ((7, -7), -7), (np.array([1.0, -1.0]), np.array(-1.0)),
    ([1e308, -1e308], -1e308), ([1e-300, -1e-300], -1e-300), ((7 / 3, -7 / 3), -7 / 3), ([3, -3], -3.0),
    ([1.0, -1.0], -1.0 + 1e-15),        # a rounding-level remainder, as 0.1 * 10 - 1 can leave
])
def test_detector_accepts_any_positive_multiple(answer, capsys):
    assert check_detector(lambda: answer), capsys.readouterr().out


WRONG_DETECTORS = [
    (([2, -2], -1), "w and b not scaled together"),                  # w doubled, b unchanged
    (([1, -1], -1.5), "the bias sets the wrong threshold"),
    (([1, -1], -0.5), "the bias sets the wrong threshold"),
    (([1, -1], -0.75), "the bias sets the wrong threshold"),
    (([1, -1], -1.25), "the bias sets the wrong threshold"),
    (([1, -1], -0.9999), "the bias off by a hair"),
    (([1, -1], -1.0005), "the bias off by a hair"),
    (([1, -1], -1.0000005), "the bias off by a hair"),         # silent 1e-6 above the line: only 1e-9 shows
    (([1, -1], -0.9999995), "the bias off by a hair"),
    (([1, -1.0000001], -1), "w's two weights of different sizes"),
    (([1, -1], 0), "the bias left out"),
    (([1, -1], 1), "the bias with the wrong sign"),
    (([-1, 1], 1), "the signs of w and b all flipped"),
    (([-1, 1], -1), "w points the wrong way"),
    (([1, 1], -1), "w's two weights with the same sign"),
    (([1, 0], -1), "w ignores x2"),
    (([0, -1], -1), "w ignores x1"),
    (([1, -0.9], -1), "w's two weights of different sizes"),
    (([0, 0], 0), "w = [0, 0]"),
]


def test_detector_accepts_fractions(capsys):
    assert check_detector(lambda: ([Fraction(1), Fraction(-1)], Fraction(-1))), capsys.readouterr().out
    assert check_detector(lambda: ((Fraction(1, 3), Fraction(-1, 3)), Fraction(-1, 3))), capsys.readouterr().out


@pytest.mark.parametrize("answer, named", WRONG_DETECTORS, ids=[str(a) for a, _ in WRONG_DETECTORS])
def test_detector_names_the_slip_without_the_right_bias(answer, named, capsys):
    verdict = check_detector(lambda: answer)
    out = capsys.readouterr().out
    assert not verdict and f"Likely mistake: {named}" in out, out
    assert "The answer" not in out and "b = -1 (" not in out


def test_detector_reveals_after_a_second_failure_or_on_request(capsys):
    check_detector(lambda: ([2, -2], -1))
    assert "The answer" not in capsys.readouterr().out
    check_detector(lambda: ([2, -2], -1))
    assert "The answer, after your second try: w = [1, -1] and b = -1" in capsys.readouterr().out
    _verdict._FAILED_ATTEMPTS.clear()
    check_detector(lambda: ([1, -1], 0), reveal=True)
    assert "The answer, as you asked" in capsys.readouterr().out


def test_near_misses_are_quoted_with_the_digits_that_show_the_difference(capsys):
    check_detector(lambda: ([1.0, -1.0000001], -1.0))
    out = capsys.readouterr().out
    assert "|w1| = 1 and |w2| = 1.0000001 are not equal" in out and "|w2| = 1 " not in out, out
    check_detector(lambda: ([1.0, -1.0], -1.0000005))
    out = capsys.readouterr().out
    assert "switches at x1 - x2 = 1.0000005," in out, out
    check_detector(lambda: ([1e308, -1e308], -0.8e308))          # huge, and the threshold is 0.8: no overflow
    out = capsys.readouterr().out
    assert "Likely mistake: the bias sets the wrong threshold" in out and "0.8" in out, out


def test_huge_integers_are_told_not_raised(capsys):
    for answer in (([1, -1], -10 ** 400), ([10 ** 400, -10 ** 400], -10 ** 400), ([10 ** 400, -1], -1)):
        verdict = check_detector(lambda: answer)
        out = capsys.readouterr().out
        assert not verdict and "too large for a float" in out and "Divide w and b by the same" in out, out
    verdict = check_hand_trace(lambda: ([4, -1], [4, 0], [5, -10 ** 400]))
    assert not verdict and "too large for a float" in capsys.readouterr().out


def test_the_bias_range_that_used_to_pass_fails_everywhere():
    for b in np.linspace(-1.5, -0.5, 21):
        if b != -1.0:
            assert not check_detector(lambda: ([1.0, -1.0], float(b))), b


@pytest.mark.parametrize("answer, message", [
    ((None, 1), "w should be a flat list of two numbers"),
    (([1, -1, 0], -1), "w should be a flat list of two numbers"),
    (([[1], [-1]], -1), "w should be a flat list of two numbers"),
    (([1, -1],), "expected (w, b)"),
    ((-1, [1, -1]), "the order is (w, b)"),
    (([1, -1], [-1]), "b is [-1], a list holding one number"),
    (([1, -1], (-1.0,)), "b is [-1], a tuple holding one number"),
    (([1, -1], np.array([-1.0])), "b is [-1], a NumPy array of shape (1,) holding one number"),
    ((np.array([[1, -1]]), -1), "w should be a flat list of two numbers"),
    (([1, -1], "-1"), "b should be one number"),
    (([1, -1], True), "b should be one number"),
    (([1, -1], float("nan")), "the bias must be a finite number"),
])
def test_detector_bad_returns(answer, message, capsys):
    assert not check_detector(lambda: answer)
    assert message in capsys.readouterr().out


def test_detector_stub(capsys):
    def detector():
        raise NotImplementedError("your code here")
    assert not check_detector(detector)
    assert "not implemented yet" in capsys.readouterr().out


# ---- the banks as a whole: no wrong answer accepted, nearly every rejection names the problem -----------
def test_at_least_nine_in_ten_rejections_name_the_mistake_or_the_problem(capsys):
    verdicts = [check_hand_trace(lambda a=a: a) for a, _ in WRONG_TRACES]
    verdicts += [check_detector(lambda a=a: a) for a, _ in WRONG_DETECTORS]
    verdicts += [check_firing_units(fn) for fn, _ in WRONG_FIRING]
    capsys.readouterr()
    assert not any(verdicts)                                   # no wrong answer accepted
    generic = [v.mistake for v in verdicts if not v.mistake or ("expected" in v.mistake and ", got" in v.mistake)]
    assert len(generic) <= 0.1 * len(verdicts), generic


def test_banks_are_big_enough():
    assert len(WRONG_TRACES) >= 8 and len(WRONG_DETECTORS) >= 8 and len(WRONG_FIRING) >= 8
    assert len(list(itertools.chain(WRONG_TRACES, WRONG_DETECTORS, WRONG_FIRING))) >= 50


def test_the_whole_answer_examples_are_named_as_they_say():
    from helpers.checks.lesson01 import _TRACE_MISTAKES
    for name, answer, _ in _TRACE_MISTAKES:
        verdict = check_hand_trace(lambda: (answer["z"], answer["h"], answer["y"]))
        assert not verdict and verdict.mistake.startswith(name)


def test_firing_units_as_an_array_built_from_a_list_passes_even_when_empty(capsys):
    """np.array([...]) of an empty list is float64, but it holds no float index: "no unit fires" is right."""
    def firing_units(x, W1, b1):
        z = np.asarray(x, float) @ np.asarray(W1, float) + np.asarray(b1, float)
        return np.array([k for k in range(len(z)) if z[k] > 0])
    assert check_firing_units(firing_units), capsys.readouterr().out


# ---- hidden cases: drawn at grading time from a secret, so that no table of cases passes ----------------
def test_a_memorised_table_passes_the_fixed_cases_but_fails_every_secret(capsys):
    # A table of every input recorded from a run with FFN_GRADING=1, and no unit at all for any other input.
    forgery = memorising_forgery(check_firing_units, _reference_firing, otherwise=[], answer_afterwards=True)
    assert_forgery_fails_under_every_secret(check_firing_units, forgery, capsys, n_public=len(_firing_cases()),
                                            n_hidden=3)


@pytest.mark.parametrize("secret", SECRETS)
def test_under_a_secret_right_answers_pass_and_the_whole_bank_still_fails(secret, capsys):
    right = [firing_numpy, firing_loops, firing_comprehension, firing_where, firing_set, firing_einsum_descending]
    with graded_under(secret):
        for fn in right:
            verdict = check_firing_units(fn)
            out = capsys.readouterr().out
            assert verdict and verdict.hidden == 3 and "3 of them hidden ones" in out, (fn.__name__, out)
        # The wrong answers take turns, each under one of the secrets (the three together cover the bank).
        for fn, message in WRONG_FIRING[SECRETS.index(secret)::len(SECRETS)]:
            verdict = check_firing_units(fn)
            out = capsys.readouterr().out
            assert not verdict and verdict.hidden == 3 and message in out, out


def test_hidden_cases_differ_between_secrets_and_not_within_one():
    from helpers.checks.lesson01 import _firing_hidden
    assert_drawn_afresh(_firing_hidden)


@pytest.mark.parametrize("secret", (None, *SECRETS))
def test_each_hidden_kind_keeps_its_property_under_any_secret(secret):
    from helpers.checks.lesson01 import _firing_hidden
    with graded_under(secret):
        narrowing, widening, square = _firing_hidden()
    for case in (narrowing, widening, square):               # a unit fires and a unit stays silent in each
        fired = _reference_firing(*case.args.values())
        assert 0 < len(fired) < len(case.args["b1"]), case.name
    x, W1, b1 = narrowing.args.values()
    assert isinstance(W1, list) and 5 <= len(x) <= 9 and 2 <= len(b1) < len(x)
    z = pre(x, W1, b1)
    backwards = [sum(x[i] * W1[i][k] for i in reversed(range(len(x)))) + b1[k] for k in range(len(b1))]
    from_the_bias = [b1[k] + sum(x[i] * W1[i][k] for i in range(len(x))) for k in range(len(b1))]
    zero = [k for k in range(len(b1)) if z[k] == 0]
    assert zero and all(backwards[k] == 0 and from_the_bias[k] == 0 for k in zero)   # exactly 0, in any order
    assert any(1e-8 * 0.99 <= v <= 1e-4 for v in z)                          # barely fires
    x, W1, b1 = widening.args.values()
    assert isinstance(W1, np.ndarray) and 2 <= len(x) <= 5 and len(x) + 2 <= len(b1) <= 12
    z = pre(x, W1, b1)
    assert any(1e-8 * 0.99 <= v <= 1e-4 for v in z) and any(-1e-4 <= v <= -1e-8 * 0.99 for v in z)
    x, W1, b1 = square.args.values()
    assert 3 <= len(x) <= 7 and np.shape(W1) == (len(x), len(x)) and not np.allclose(W1, np.transpose(W1))
    columns, rows = _reference_firing(x, W1, b1), _reference_firing(x, np.transpose(W1), b1)
    assert rows != columns and rows != [k for k in range(len(b1)) if k not in columns]


def test_hidden_cases_are_not_built_outside_grading(monkeypatch, capsys):
    from helpers.checks import lesson01
    monkeypatch.delenv("FFN_GRADING", raising=False)
    monkeypatch.setattr(lesson01, "_firing_hidden", lambda: pytest.fail("hidden cases built outside grading"))
    verdict = check_firing_units(firing_loops)
    assert verdict and "all 6 public cases pass. When your work is graded, more cases run." in capsys.readouterr().out
