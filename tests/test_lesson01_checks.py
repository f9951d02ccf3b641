"""Lesson 01's graders against banks of right and wrong answers."""
import numpy as np
import pytest

from helpers.checks import check_detector, check_firing_units, check_hand_trace
from helpers.toy import B1_484, NET_484, W1_484, X_ROBOT
from helpers.ffn import ffn, relu


def test_the_robot_token_zeroes_exactly_three_of_eight():
    z = X_ROBOT @ W1_484 + B1_484
    assert int(np.sum(relu(z) == 0)) == 3 and int(np.sum(z < 0)) == 3


def test_the_robot_output_is_signed():
    y = ffn(X_ROBOT, **NET_484)
    assert (y < 0).any() and (y > 0).any()


# ---- exercise 1: the hand trace ------------------------------------------------------------------------
@pytest.mark.parametrize("answer", [
    ([4, -1], [4, 0], [5, -1]),
    ((4.0, -1.0), (4.0, 0.0), (5.0, -1.0)),
    (np.array([4, -1]), np.array([4, 0]), np.array([5, -1])),
    [[4, -1], [4, 0], [5, -1]],
])
def test_hand_trace_accepts_right_answers_in_any_container(answer, capsys):
    assert check_hand_trace(lambda: answer)
    assert "all 3 cases pass" in capsys.readouterr().out


@pytest.mark.parametrize("answer, named", [
    (([5, -1], [5, 0], [6, -1]), "b1 left out"),
    (([4, -1], [4, -1], [5, -2]), "ReLU not applied"),
    (([4, -1], [4, 0], [5, 0]), "ReLU applied after W2 as well"),
    (([4, -1], [4, 0], [4, 0]), "b2 left out"),
    (([4, -1], [4, 0], [4, -1]), "y copied from z"),
    (([4, 1], [4, 1], [5, 0]), "the second row read as [-1, 1]"),
])
def test_hand_trace_names_the_slip(answer, named, capsys):
    assert not check_hand_trace(lambda: answer)
    assert f"Likely mistake: {named}" in capsys.readouterr().out


@pytest.mark.parametrize("fn, message", [
    (lambda: ([1, 2], [3, 4], [5, 6]), "Hint: work one unit at a time"),
    (lambda: None, "returned None"),
    (lambda: ([4, -1], [4, 0]), "expected three lists"),
    (lambda: ([4, -1], [4, 0], [5, -1, 0]), "`y` is 3 numbers; expected 2"),
    (lambda: ([4, -1], None, [5, -1]), "`h` is None: give h its two numbers before `return z, h, y`"),
    (lambda: 1 / 0, "raised ZeroDivisionError"),
    ("not a function", "expected a function"),
])
def test_hand_trace_bad_answers(fn, message, capsys):
    assert not check_hand_trace(fn)
    assert message in capsys.readouterr().out


def test_hand_trace_shape_problem_gets_no_arithmetic_hint(capsys):
    assert not check_hand_trace(lambda: ([4, -1], [4, 0], 3))
    out = capsys.readouterr().out
    assert "`y` is a single number" in out and "Hint" not in out


def test_firing_units_mask_gets_told_to_take_indices(capsys):
    assert not check_firing_units(lambda x, W1, b1: (pre(x, W1, b1) > 0).tolist())
    assert "np.flatnonzero(mask)" in capsys.readouterr().out


def test_hand_trace_stub(capsys):
    def hand_trace():
        raise NotImplementedError("your code here")
    assert not check_hand_trace(hand_trace)
    assert "not implemented yet" in capsys.readouterr().out


# ---- exercise 2: firing units ---------------------------------------------------------------------------
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


@pytest.mark.parametrize("fn", [firing_numpy, firing_loops, firing_comprehension])
def test_firing_units_accepts_correct_styles(fn, capsys):
    assert check_firing_units(fn), capsys.readouterr().out


def pre(x, W1, b1):
    return np.asarray(x, float) @ np.asarray(W1, float) + np.asarray(b1, float)


@pytest.mark.parametrize("fn, named", [
    (lambda x, W1, b1: [k for k, v in enumerate(pre(x, W1, b1)) if v >= 0], "exactly 0 as firing"),
    (lambda x, W1, b1: [k for k, v in enumerate(pre(x, W1, b1)) if v <= 0], "silent units listed"),
    (lambda x, W1, b1: [k + 1 for k, v in enumerate(pre(x, W1, b1)) if v > 0], "counting units from 1"),
    (lambda x, W1, b1: list(np.flatnonzero(np.asarray(x) @ np.asarray(W1) > 0)), "b1 left out"),
    (lambda x, W1, b1: [k for k in range(len(b1)) if np.dot(W1[k], x) + b1[k] > 0], "W1 read by rows"),
])
def test_firing_units_names_the_mistake(fn, named, capsys):
    assert not check_firing_units(fn)
    assert named in capsys.readouterr().out


def test_firing_units_returning_activations_gets_told(capsys):
    assert not check_firing_units(lambda x, W1, b1: relu(pre(x, W1, b1)).tolist())
    assert "not whole" in capsys.readouterr().out


# ---- exercise 3: the detector ---------------------------------------------------------------------------
@pytest.mark.parametrize("answer", [([1, -1], -1), ([2.5, -2.5], -2.5), (np.array([1.0, -1.0]), -1.0)])
def test_detector_accepts_any_positive_multiple(answer, capsys):
    assert check_detector(lambda: answer), capsys.readouterr().out


@pytest.mark.parametrize("answer, message", [
    (([-1, 1], 1), "signs are flipped"),
    (([1, -1], 0), "b = -1"),
    (([1, -1], 1), "b = -1"),
    (([1, 0], -1), "Hint: z = w1*x1"),
    ((None, 1), "w should be two numbers"),
    (([1, -1],), "expected (w, b)"),
])
def test_detector_wrong_answers(answer, message, capsys):
    assert not check_detector(lambda: answer)
    assert message in capsys.readouterr().out
