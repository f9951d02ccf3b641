"""Lesson 05's graders against banks of right and wrong answers."""
import numpy as np
import pytest
from hidden_under_secrets import (SECRETS, assert_banks_pass_and_fail_under_secrets, assert_drawn_afresh,
                                  assert_forgery_fails_under_every_secret, graded_under, memorising_forgery)

from helpers.and_not import DETECTOR
from helpers.checks import _verdict, check_collapse, check_detector_weights, check_residual_collapse, lesson05


@pytest.fixture(autouse=True)
def fresh_attempts(monkeypatch):
    """Each test starts as a kernel would: no failed attempt at the detector yet."""
    monkeypatch.setattr(_verdict, "_FAILED_ATTEMPTS", {})


def stub(*args):
    raise NotImplementedError("your code here")


# ---- exercise 1: collapse(W1, b1, W2, b2) -> (W, b) -----------------------------------------------------
def collapse_numpy(W1, b1, W2, b2):
    return W1 @ W2, b1 @ W2 + b2


def collapse_loops(W1, b1, W2, b2):
    d_in, d_hidden, d_out = len(W1), len(W2), len(W2[0])
    W = [[sum(W1[i][k] * W2[k][j] for k in range(d_hidden)) for j in range(d_out)] for i in range(d_in)]
    b = [sum(b1[k] * W2[k][j] for k in range(d_hidden)) + b2[j] for j in range(d_out)]
    return W, b


def collapse_einsum(W1, b1, W2, b2):
    return [np.einsum("ik,kj->ij", W1, W2), np.einsum("k,kj->j", b1, W2) + b2]


def collapse_by_probing(W1, b1, W2, b2):
    """Read the map off its outputs: b = f(0), and row i of W is f(e_i) - f(0)."""
    def f(x):
        return (x @ W1 + b1) @ W2 + b2
    b = f(np.zeros(W1.shape[0]))
    return f(np.eye(W1.shape[0])) - b, b


@pytest.mark.parametrize("fn", [collapse_numpy, collapse_loops, collapse_einsum, collapse_by_probing])
def test_collapse_accepts_correct_styles(fn, capsys):
    assert check_collapse(fn), capsys.readouterr().out
    assert "all 4 public cases pass" in capsys.readouterr().out


@pytest.mark.parametrize("fn, named", [
    (lambda W1, b1, W2, b2: (W1 @ W2, b2), "Likely mistake: b1 forgotten in the combined bias"),
    (lambda W1, b1, W2, b2: (W1 @ W2, b1 + b2), "Likely mistake: b1 not multiplied by W2"),
    (lambda W1, b1, W2, b2: (W1 @ W2, b1 @ W2), "Likely mistake: b2 forgotten in the combined bias"),
    (lambda W1, b1, W2, b2: (W2 @ W1, b1 @ W2 + b2), "Likely mistake: the product in the wrong order, W2 W1"),
    (lambda W1, b1, W2, b2: (W1 * W2, b1 @ W2 + b2), "Likely mistake: W1 and W2 multiplied element by element"),
    (lambda W1, b1, W2, b2: ((W1 @ W2).T, b1 @ W2 + b2), "W transposed (the column-vector convention)"),
    (lambda W1, b1, W2, b2: (W2 @ W1, W2 @ b1 + b2),
     "Likely mistake: the column-vector convention throughout: W = W2 W1 and b = W2 b1 + b2"),
    (lambda W1, b1, W2, b2: (W1 @ W2, W2 @ b1 + b2),
     "Likely mistake: the bias in the column-vector convention, W2 b1 + b2"),
    (lambda W1, b1, W2, b2: (np.dot(W2, W1), b2),
     "the product in the wrong order, W2 W1; and b1 forgotten in the combined bias"),
    (lambda W1, b1, W2, b2: (W1 * W2, b1 + b2),
     "Likely mistake: W1 and W2 multiplied element by element; and b1 not multiplied by W2"),
    (lambda W1, b1, W2, b2: (np.round(W1 @ W2, 2), np.round(b1 @ W2 + b2, 2)),
     "Likely mistake: the numbers are rounded (or cast to int)"),
    (lambda W1, b1, W2, b2: ((W1 @ W2).astype(int), b1 @ W2 + b2),
     "Likely mistake: the numbers are rounded (or cast to int)"),
    (lambda W1, b1, W2, b2: ((W1 @ W2).astype(np.float16), (b1 @ W2 + b2).astype(np.float16)),
     "Likely mistake: the numbers are rounded (or cast to int)"),
    (lambda W1, b1, W2, b2: (W1.T @ W2, b1 @ W2 + b2), "Likely mistake: W1 transposed before the product. W1 "
                                                        "already has the shape x @ W1 needs"),
    (lambda W1, b1, W2, b2: (W1 @ W2, (b1 @ W2) * b2), "Likely mistake: b2 multiplied in instead of added"),
    (lambda W1, b1, W2, b2: (np.transpose(W1) @ W2, b1 @ W2 * b2),
     "Likely mistake: W1 transposed before the product; and b2 multiplied in instead of added"),
    (lambda W1, b1, W2, b2: (W1 @ W2 + b1 @ W2, b1 @ W2 + b2),
     "Likely mistake: b1's part of the bias added to W as well. W is only the part that multiplies x"),
])
def test_collapse_names_the_mistake(fn, named, capsys):
    assert not check_collapse(fn)
    assert named in capsys.readouterr().out


def test_collapse_wrong_order_is_named_even_though_it_crashes_on_non_square_layers(capsys):
    def wrong_order(W1, b1, W2, b2):
        return W2 @ W1, b1 @ W2 + b2
    assert not check_collapse(wrong_order)
    out = capsys.readouterr().out
    assert "raised ValueError" in out and "line 2 of wrong_order" in out
    assert "Likely mistake: the product in the wrong order" in out


@pytest.mark.parametrize("fn, message", [
    (lambda W1, b1, W2, b2: W1 @ W2, "returned one array, of shape"),
    (lambda W1, b1, W2, b2: W1 @ W2, "not the matrix alone"),
    (lambda W1, b1, W2, b2: {"W": W1 @ W2, "b": b1 @ W2 + b2}, "returned a dict; return the pair `W, b`"),
    (lambda W1, b1, W2, b2: 3.0, "returned a float; return the pair `W, b`"),
    (lambda W1, b1, W2, b2: (W1, b1, W2), "returned 3 values; return exactly two"),
    (lambda W1, b1, W2, b2: (W1 @ W2, (b1 @ W2 + b2)[None, :]), "Return b as a flat vector"),
    (lambda W1, b1, W2, b2: (W1 @ W2, b1), "That is the length of b1"),
    (lambda W1, b1, W2, b2: ((W1 @ W2).T, b1 @ W2 + b2), "That is W transposed"),
    (lambda W1, b1, W2, b2: (W1 @ W2, None), "returned None for `b`"),
    (lambda W1, b1, W2, b2: ("W", b2), "returned a str for `W`"),
    (lambda W1, b1, W2, b2: (W1 @ W2 * np.nan, b2), "returned `W` holding NaN"),
    (lambda W1, b1, W2, b2: None, "returned None"),
    (lambda W1, b1, W2, b2: 1 / 0, "raised ZeroDivisionError"),
    ("collapse", "expected a function"),
])
def test_collapse_bad_returns_get_clear_messages(fn, message, capsys):
    assert not check_collapse(fn)
    assert message in capsys.readouterr().out


def test_collapse_that_changes_an_input_in_place_is_told(capsys):
    def in_place(W1, b1, W2, b2):
        b2 += b1 @ W2
        return W1 @ W2, b2
    assert not check_collapse(in_place)
    assert "changed its input `b2` in place" in capsys.readouterr().out


def test_collapse_stub_says_not_implemented(capsys):
    assert not check_collapse(stub)
    out = capsys.readouterr().out
    assert "not implemented yet" in out and "\u2718" not in out


def test_collapse_dict_message_shows_no_repr_and_does_not_call_it_a_matrix(capsys):
    assert not check_collapse(lambda W1, b1, W2, b2: {"W": W1 @ W2, "b": b1 @ W2 + b2})
    out = capsys.readouterr().out
    assert out.count("returned a dict;") == 1 and out.count("the same as above") == 3
    assert "array(" not in out and "{" not in out and "matrix alone" not in out


def test_collapse_unknown_mistake_gets_the_hint(capsys):
    assert not check_collapse(lambda W1, b1, W2, b2: (W1 @ W2 + 1.0, b1 @ W2 + b2))
    assert "Hint: expand" in capsys.readouterr().out


# ---- exercise 2: residual_collapse(W1, W2) -> I + W1 W2 -------------------------------------------------
def residual_numpy(W1, W2):
    return np.eye(W1.shape[0]) + W1 @ W2


def residual_loops(W1, W2):
    d, d_ff = len(W1), len(W2)
    return [[(1.0 if i == j else 0.0) + sum(W1[i][k] * W2[k][j] for k in range(d_ff)) for j in range(d)]
            for i in range(d)]


def residual_by_probing(W1, W2):
    """Apply the block to each basis vector: the rows of M are the images of e_1, ..., e_d."""
    identity = np.identity(len(W1))
    return identity + (identity @ W1) @ W2


def residual_diagonal_added(W1, W2):
    """1 added on the diagonal of W1 @ W2, in place on the new array."""
    M = W1 @ W2
    M[np.diag_indices_from(M)] += 1
    return M


def residual_identity_from_W2(W1, W2):
    return np.identity(W2.shape[1]) + np.dot(W1, W2)


@pytest.mark.parametrize("fn", [residual_numpy, residual_loops, residual_by_probing, residual_diagonal_added,
                                residual_identity_from_W2])
def test_residual_collapse_accepts_correct_styles(fn, capsys):
    assert check_residual_collapse(fn), capsys.readouterr().out


def test_residual_collapse_has_a_bottleneck_case():
    """d > d_ff: the identity's size is then the larger side of W1, so min(W1.shape) shows."""
    assert any(case.args["W1"].shape[0] > case.args["W1"].shape[1] for case in lesson05._residual_cases())


@pytest.mark.parametrize("fn, named", [
    (lambda W1, W2: W1 @ W2, "Likely mistake: the identity forgotten"),
    (lambda W1, W2: 1 + W1 @ W2, "Likely mistake: 1 added to every entry instead of the identity"),
    (lambda W1, W2: np.eye(len(W1)) - W1 @ W2, "Likely mistake: the skip path subtracted"),
    (lambda W1, W2: np.eye(len(W1)) + W2 @ W1, "Likely mistake: the product in the wrong order, W2 W1"),
    (lambda W1, W2: (np.eye(len(W1)) + W1) @ W2, "Likely mistake: the skip path sent through W2"),
    (lambda W1, W2: (np.eye(len(W1)) + W1 @ W2).T, "M transposed (the column-vector convention)"),
    (lambda W1, W2: np.eye(W1.shape[1]) + W1 @ W2, "Likely mistake: the identity of size d_ff"),
    (lambda W1, W2: W1 @ W2 + np.identity(len(W2)), "Likely mistake: the identity of size d_ff"),
    (lambda W1, W2: np.round(np.eye(len(W1)) + W1 @ W2, 1), "Likely mistake: the numbers are rounded"),
    (lambda W1, W2: np.dot(W1, W2), "Likely mistake: the identity forgotten"),
    (lambda W1, W2: W1 @ W2 + np.ones((len(W1), len(W1))), "Likely mistake: 1 added to every entry"),
    (lambda W1, W2: np.eye(min(W1.shape)) + W1 @ W2,
     "Likely mistake: the identity sized by the smaller side of W1. I is d x d, the model width"),
    (lambda W1, W2: np.eye(min(W1.shape)) + W1[:min(W1.shape)] @ W2[:, :min(W1.shape)],
     "Likely mistake: W1 and W2 cut down to the smaller size. I is d x d, the model width, not the smaller size"),
    (lambda W1, W2: 2 * np.eye(len(W1)) + W1 @ W2, "Likely mistake: the identity counted twice (2I)"),
    (lambda W1, W2: np.eye(len(W1)) * (W1 @ W2) + np.eye(len(W1)),
     "Likely mistake: the FFN's matrix multiplied by the identity entry by entry"),
])
def test_residual_collapse_names_the_mistake(fn, named, capsys):
    assert not check_residual_collapse(fn)
    out = capsys.readouterr().out
    assert named in out
    assert out.count("\n  Likely mistake:") == 1 and "\n  Possibly:" not in out


def test_residual_collapse_tells_the_two_crashing_mistakes_apart(capsys):
    """Both crash on the non-square cases with the same broadcasting error; the square case tells them apart."""
    def identity_of_d_ff(W1, W2):
        return np.eye(W1.shape[1]) + W1 @ W2

    def wrong_order(W1, W2):
        return np.eye(W1.shape[0]) + W2 @ W1
    assert not check_residual_collapse(identity_of_d_ff)
    out = capsys.readouterr().out
    assert "\u2714 d = 2, d_ff = 2 (square)" in out and "raised ValueError" in out
    assert "the identity of size d_ff" in out and "wrong order" not in out
    assert not check_residual_collapse(wrong_order)
    out = capsys.readouterr().out
    assert "Likely mistake: the product in the wrong order, W2 W1" in out and "size d_ff" not in out


def test_residual_collapse_shows_each_cases_shape_error(capsys):
    """The identity of size d_ff crashes on every non-square case with its own shapes: each line shows them,
    never "the same as above, with its own numbers", which reads oddly of an error (a trial learner's report)."""
    assert not check_residual_collapse(lambda W1, W2: np.eye(W1.shape[1]) + W1 @ W2)
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if line.startswith("  \u2718")]
    assert len(failed) == 4 and all("could not be broadcast together with shapes" in line for line in failed), out
    assert len({line.split("shapes", 1)[1] for line in failed}) == 4 and "the same as above" not in out, out


@pytest.mark.parametrize("fn, message", [
    (lambda W1, W2: np.eye(len(W2)) + W2 @ W1, "That is the shape of W2 @ W1"),
    (lambda W1, W2: (np.eye(len(W1)), W1 @ W2), "return the one matrix"),
    (lambda W1, W2: None, "returned None"),
    (lambda W1, W2: np.full((len(W1), len(W1)), np.inf), "returned `M` holding NaN or infinity"),
    (lambda W1, W2: np.eye(len(W1))[0], "returned `M` of shape"),
    (lambda W1, W2: W1.undefined, "raised AttributeError"),
    (residual_numpy(np.eye(2), np.eye(2)), "expected a function"),
])
def test_residual_collapse_bad_returns(fn, message, capsys):
    assert not check_residual_collapse(fn)
    assert message in capsys.readouterr().out


def test_residual_collapse_stub(capsys):
    assert not check_residual_collapse(stub)
    assert "not implemented yet" in capsys.readouterr().out


# ---- exercise 3: detector_weights() -> (W1, b1, W2, b2) --------------------------------------------------
def one_unit(scale=1.0):
    return (scale * np.array([[1.0], [1.0], [-1.0]]), scale * np.array([-1.0]), np.array([[1.0 / scale]]),
            np.array([0.0]))


@pytest.mark.parametrize("answer", [
    one_unit(),
    one_unit(2.0),                                                      # relu(2s - 2) / 2
    tuple(DETECTOR[k] for k in ("W1", "b1", "W2", "b2")),               # two units
    ([[1], [1], [-2]], [-1], [[1]], [0]),                               # lists; C weighed more
    (np.array([[1.0], [1.0], [-1.0]]), np.array([-1.0]), np.array([1.0]), 0.0),   # W2 flat, b2 a number
    (np.array([[1.0], [1.0], [-1.0]]), -1.0, np.array([[1.0]]), np.array([0.0])),  # one unit, b1 a number
    ([[1.0], [1.0], [-1.0]], -1, [1.0], 0),                             # every weight as loosely as allowed
    (np.array([[1.0, 0.0, 5.0], [1.0, 0.0, 5.0], [-1.0, 0.0, -5.0]]),   # three units, two never fire
     np.array([-1.0, -3.0, -100.0]), np.array([[1.0], [7.0], [-3.0]]), np.array([0.0])),
    (np.array([[0.5], [0.5], [-1.0]]), np.array([-0.5]), np.array([[2.0]]), np.array([0.0])),  # height by W2
    # Layouts the forward pass relu(x @ W1 + b1) @ W2 + b2 broadcasts exactly like the flat ones:
    (np.array([[1.0], [1.0], [-1.0]]), np.array([[-1.0]]), np.array([[1.0]]), np.array([[0.0]])),  # b1, b2 (1, 1)
    (np.array([[1.0, 1.0], [1.0, 1.0], [-1.0, -1.0]]), np.array([[-1.0, -2.0]]),                  # b1 a row (1, k)
     np.array([[1.0], [-1.0]]), 0.0),
])
def test_detector_weights_accepts_any_exact_detector(answer, capsys):
    assert check_detector_weights(lambda: answer), capsys.readouterr().out
    assert "all 8 cases pass" in capsys.readouterr().out


def unit(wa, wb, wc, bias, out=1.0, b2=0.0):
    return np.array([[wa], [wb], [wc]], float), np.array([bias], float), np.array([[out]]), np.array([b2])


@pytest.mark.parametrize("answer, named", [
    (unit(1, 1, 0, -1), "it fires for A and B and C. C does not switch the unit off"),   # C ignored
    (unit(1, 1, -0.5, -1), "it fires for A and B and C. C does not switch the unit off"),  # C too weak
    (unit(1, 1, 1, -1), "C raises the output: 1 for A=0 B=1 C=1 but 0 for A=0 B=1 C=0"),  # C excites
    (unit(1, 1, 2, -1), "C raises the output: 1 for A=0 B=0 C=1 but 0 for A=0 B=0 C=0"),  # C alone fires
    (unit(1, 1, -1, 0), "it fires for A alone and for B alone (and, since C cancels only one of them, "
                        "for A and B and C too). The threshold is too low"),               # b1 = 0
    (unit(1, 1, -1, -0.5), "it fires for A alone and for B alone (and, since"),           # b1 not low enough
    (unit(1, 0.5, -1, -0.75), "it fires for A alone. The threshold is too low"),          # only A crosses
    (unit(1, 1, -1, -1, out=2.0), "the right pattern but the wrong height: it outputs 2"),
    (unit(1, 1, -1, -1.5), "the right pattern but the wrong height: it outputs 0.5"),
    (unit(1, 1, -1, -1, out=1 + 1e-9), "the right pattern but the wrong height: it outputs 1.000000001 "
                                       "(off by 1e-09)"),                                  # a hair too high
    (unit(1, 1, -1, -1, out=-1.0, b2=1.0), "the signs are flipped"),
    (unit(1, 1, -1, -5), "silent everywhere"),
    (unit(1, 1, -1, -2), "silent everywhere"),                                             # just too high
    (unit(1, 1, -1, -1, b2=-0.5), "it outputs -0.5 with no input present (A=0 B=0 C=0)"),
    (unit(1, 1, -1, -1, b2=0.5), "it outputs 0.5 with no input present (A=0 B=0 C=0)"),
    (unit(1, 1, -1, 1), "it outputs 1 with no input present (A=0 B=0 C=0)"),              # b1 positive
    (unit(1, 1, -1, -1, out=-1.0), "a negative output somewhere"),                          # W2 negative
    (unit(-1, -1, -1, 0), "silent everywhere"),                                            # never fires
])
def test_detector_weights_names_the_mistake(answer, named, capsys):
    assert not check_detector_weights(lambda: answer)
    out = capsys.readouterr().out
    assert named in out
    assert out.count("Likely mistake") == 1


def test_detector_weights_threshold_too_low_is_not_blamed_on_c(capsys):
    """b1 = 0: A alone, B alone and A+B+C all fire. One diagnosis, the threshold; C's weight is right."""
    assert not check_detector_weights(lambda: unit(1, 1, -1, 0))
    out = capsys.readouterr().out
    assert out.count("Likely mistake") == 1 and "threshold is too low" in out
    assert "C does not switch" not in out and "C raises" not in out


def test_detector_weights_header_says_unit_or_units(capsys):
    assert check_detector_weights(lambda: one_unit())
    assert "with 1 hidden unit on all 8 inputs" in capsys.readouterr().out
    assert check_detector_weights(lambda: tuple(DETECTOR[k] for k in ("W1", "b1", "W2", "b2")))
    assert "with 2 hidden units on all 8 inputs" in capsys.readouterr().out


@pytest.mark.parametrize("answer, message", [
    ((np.ones((1, 3)), np.zeros(1), np.ones((1, 1)), np.zeros(1)), "looks transposed"),
    ((np.ones((3, 2)), np.zeros(3), np.ones((2, 1)), np.zeros(1)), "`b1` has shape (3,); expected (2,)"),
    ((np.ones((3, 2)), np.zeros(2), np.ones((3, 1)), np.zeros(1)), "`W2` has shape (3, 1); expected (2, 1)"),
    ((np.ones((3, 1)), np.zeros(1), np.ones((1, 1)), np.zeros(2)), "`b2` has shape (2,)"),
    ((np.ones((3, 2)), -1.0, np.ones((2, 1)), np.zeros(1)),
     "`b1` is a single number, but W1 has 2 columns, one per hidden unit: give each unit its own bias"),
    ((np.ones((3, 1)), np.zeros((2, 1)), np.ones((1, 1)), np.zeros(1)), "`b1` has shape (2, 1); expected (1,)"),
    ((np.ones((3, 2)), np.zeros((2, 1)), np.ones((2, 1)), np.zeros(1)), "`b1` has shape (2, 1); expected (2,)"),
    ((np.ones((3, 1)), np.zeros(1), np.ones((1, 1)), np.zeros((1, 2))), "`b2` has shape (1, 2)"),
    ((np.array([["1"], ["1"], ["-1"]]), np.array([-1.0]), np.array([[1.0]]), np.array([0.0])),
     "`W1` holds strings, not real numbers (NumPy could convert them, but a weight is a real number): write "
     "1.0, not '1' or 1+0j"),
    ((np.array([[1.0], [1.0], [-1.0]]), ["-1"], [[1.0]], [0.0]), "`b1` holds strings, not real numbers"),
    ((np.array([[1.0], [1.0], [-1.0]]), [-1.0], [[1.0]], np.array(["0"], dtype=object)),
     "`b2` holds strings, not real numbers"),
    ((np.array([[1 + 0j], [1 + 0j], [-1 + 0j]]), [-1.0], [[1.0]], [0.0]), "`W1` holds complex numbers"),
    ((np.ones((3, 1)), np.zeros(1), np.ones((1, 1))), "returned 3 values; expected the four weights"),
    ({"W1": np.ones((3, 1))}, "returned a dict; expected the four weights"),
    ((np.ones((3, 1)), np.zeros(1), "one", np.zeros(1)), "`W2` is 'one', not numbers"),
    ((np.ones((3, 1)), np.zeros(1), {"w": 1.0}, np.zeros(1)), "`W2` is a dict, not numbers"),
    ((np.full((3, 1), np.nan), np.zeros(1), np.ones((1, 1)), np.zeros(1)), "`W1` holds NaN"),
    (None, "returned None"),
])
def test_detector_weights_bad_shapes(answer, message, capsys):
    assert not check_detector_weights(lambda: answer)
    assert message in capsys.readouterr().out


def test_detector_a_near_miss_shows_enough_digits(capsys):
    """1 + 1e-9 fails the 1e-9 tolerance: the line must not read "expected 1, got 1"."""
    assert not check_detector_weights(lambda: unit(1, 1, -1, -1, out=1 + 1e-9))
    out = capsys.readouterr().out
    assert "expected 1, got 1.000000001 (off by 1e-09)" in out and "expected 1, got 1\n" not in out
    assert not check_detector_weights(lambda: unit(1, 1, -1, -1, b2=-3e-9))
    out = capsys.readouterr().out
    assert "A=1 B=1 C=0: expected 1, got 0.999999997 (off by 3e-09)" in out
    assert "A=0 B=0 C=0: expected 0, got -3e-09" in out                 # distinct already: shown as it was


def test_detector_weights_stub_exception_and_not_a_function(capsys):
    assert not check_detector_weights(stub)
    assert "not implemented yet" in capsys.readouterr().out
    assert not check_detector_weights(lambda: [][0])
    assert "raised IndexError" in capsys.readouterr().out
    assert not check_detector_weights(one_unit())
    assert "expected a function" in capsys.readouterr().out


# ---- the detector is a design exercise: no answer on the first failure, one after the second -------------------
def test_detector_first_failure_names_the_slip_but_not_the_weights(capsys):
    assert not check_detector_weights(lambda: unit(1, 1, 0, -1))
    out = capsys.readouterr().out
    assert "C does not switch the unit off" in out and "One answer that works" not in out
    assert "After your second failed attempt in this session (the count starts again when the kernel restarts)" in out
    assert "check_detector_weights(detector_weights, reveal=True)" in out


def test_detector_second_failure_reveals_an_answer_that_the_check_accepts(capsys):
    assert not check_detector_weights(lambda: unit(1, 1, 0, -1))
    assert not check_detector_weights(lambda: unit(1, 1, -1, 0))
    out = capsys.readouterr().out
    assert out.count("One answer that works: W1 = [[1], [1], [-1]], b1 = [-1], W2 = [[1]], b2 = [0]") == 1
    assert check_detector_weights(lambda: ([[1], [1], [-1]], [-1], [[1]], [0]))   # the revealed answer passes


def test_detector_stub_runs_are_no_attempts(capsys):
    for _ in range(3):                                        # "Run All" on a fresh notebook, three times
        assert not check_detector_weights(stub)
    assert not check_detector_weights(lambda: unit(1, 1, 0, -1))
    out = capsys.readouterr().out
    assert "One answer that works" not in out and "After your second failed attempt" in out


def test_detector_reveal_on_request(capsys):
    assert not check_detector_weights(lambda: unit(1, 1, 0, -1), reveal=True)
    assert "One answer that works" in capsys.readouterr().out


# ---- the banks are big enough (CONTRIBUTING: at least 8 wrong answers and 3 right ones per exercise) ----------
def test_each_exercise_has_a_full_bank():
    wrong = {"collapse": 0, "residual_collapse": 0, "detector_weights": 0}
    for name, values in ((test_collapse_names_the_mistake, "collapse"),
                         (test_residual_collapse_names_the_mistake, "residual_collapse"),
                         (test_detector_weights_names_the_mistake, "detector_weights")):
        marks = [m for m in name.pytestmark if m.name == "parametrize"]
        wrong[values] += len(marks[0].args[1])
    assert min(wrong.values()) >= 8, wrong
    right = [test_collapse_accepts_correct_styles, test_residual_collapse_accepts_correct_styles,
             test_detector_weights_accepts_any_exact_detector]
    assert all(len(t.pytestmark[0].args[1]) >= 3 for t in right)


# ---- first failures name the slip in words and hand over no code (a reveal is the detector's, on request) ----
def test_collapse_first_failure_says_what_is_wrong_without_the_formula(capsys):
    """collapse's answer is two formulas: no named mistake may write either out (b1 forgotten says in words
    that b1 passes through W2 too)."""
    for mistake in lesson05._COLLAPSE_MISTAKES:
        assert not check_collapse(mistake.fn)
        (line,) = [line for line in capsys.readouterr().out.splitlines() if "Likely mistake:" in line]
        assert mistake.name in line
        for formula in ("W1 @ W2", "b1 @ W2", "b1 W2 + b2", "W1 W2", "= b1"):
            assert formula not in line, line
    assert not check_collapse(lambda W1, b1, W2, b2: (W1 @ W2, b2))
    out = capsys.readouterr().out
    assert "b1 forgotten in the combined bias. b1 is added before W2, so it passes through W2 too" in out


@pytest.mark.parametrize("fn, named", [
    (lambda W1, W2: W1 @ W2, "the identity forgotten"),
    (lambda W1, W2: 1.0 + W1 @ W2, "1 added to every entry instead of the identity"),
    (lambda W1, W2: np.eye(W1.shape[1]) + W1 @ W2, "the identity of size d_ff"),
])
def test_residual_collapse_first_failure_gives_no_code(fn, named, capsys):
    assert not check_residual_collapse(fn)
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "Likely mistake:" in line]
    assert f"Likely mistake: {named}." in line
    for code in ("np.eye", "W1.shape[0]", "eye(d)", "@"):          # the learner's own line may show code; this may not
        assert code not in line, line


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")     # np.asmatrix in the learner's answer
def test_a_collapse_returned_as_np_matrix_is_refused(capsys):
    def collapse(W1, b1, W2, b2):
        return np.asmatrix(W1) * np.asmatrix(W2), b1 @ W2 + b2
    assert not check_collapse(collapse)
    assert "as an np.matrix; return a plain array" in capsys.readouterr().out


def test_residual_collapse_rounded_to_six_decimals_fails(capsys):
    """Three-decimal weights make six-decimal products: the unrounded case is what shows the rounding."""
    assert not check_residual_collapse(lambda W1, W2: np.round(np.eye(W1.shape[0]) + W1 @ W2, 6))
    assert "✘ d = 3, d_ff = 5, unrounded weights" in capsys.readouterr().out


# ---- hidden cases: drawn at grading time from the grading secret, so no table of cases passes ------------------
COLLAPSE_RIGHT = [collapse_numpy, collapse_loops, collapse_einsum, collapse_by_probing]
RESIDUAL_RIGHT = [residual_numpy, residual_loops, residual_by_probing, residual_diagonal_added,
                  residual_identity_from_W2]
HIDDEN = [(check_collapse, lesson05._collapse_hidden, COLLAPSE_RIGHT, test_collapse_names_the_mistake, 4),
          (check_residual_collapse, lesson05._residual_hidden, RESIDUAL_RIGHT,
           test_residual_collapse_names_the_mistake, 5)]
IDS = ["collapse", "residual_collapse"]


def bank(test):
    """The (wrong answer, named mistake) pairs of a parametrized bank test."""
    return next(m for m in test.pytestmark if m.name == "parametrize").args[1]


@pytest.mark.parametrize("check, draw, right, wrong, n_public", HIDDEN, ids=IDS)
def test_under_each_secret_right_answers_pass_and_wrong_ones_are_still_named(check, draw, right, wrong, n_public,
                                                                              capsys):
    assert_banks_pass_and_fail_under_secrets(check, draw, right, bank(wrong), n_public, capsys)


@pytest.mark.parametrize("check, draw, right, wrong, n_public", HIDDEN, ids=IDS)
def test_a_table_of_the_cases_the_learners_copy_runs_fails_under_every_secret(check, draw, right, wrong, n_public,
                                                                               capsys):
    assert_forgery_fails_under_every_secret(check, memorising_forgery(check, right[0]), capsys, n_public=n_public)


@pytest.mark.parametrize("draw", [lesson05._collapse_hidden, lesson05._residual_hidden], ids=IDS)
def test_hidden_cases_are_drawn_afresh_for_each_secret_and_the_same_twice_under_one(draw):
    assert_drawn_afresh(draw)


def test_the_hidden_cases_keep_their_kinds_under_every_secret():
    """Sizes are drawn, within what each case's name says; the bottleneck stays a bottleneck."""
    for value in (None, *SECRETS):
        with graded_under(value):
            (layers, wide), (expanding, bottleneck) = lesson05._collapse_hidden(), lesson05._residual_hidden()
        for case in (layers, wide):
            W1, b1, W2, b2 = (case.args[n] for n in ("W1", "b1", "W2", "b2"))
            assert W1.shape[1] == len(b1) == W2.shape[0] and W2.shape[1] == len(b2)
            assert np.any(np.abs(W1 - np.round(W1, 6)) > 0)                 # unrounded
        assert all(1 <= n <= 6 for n in layers.args["W1"].shape + layers.args["W2"].shape[1:])
        d_in, d_hidden, d_out = wide.args["W1"].shape + wide.args["W2"].shape[1:]
        assert 7 <= d_hidden <= 12 and 2 <= d_in <= 5 and 2 <= d_out <= 5 and d_in != d_out
        d, d_ff = expanding.args["W1"].shape
        assert 2 <= d <= 6 and d + 1 <= d_ff <= 2 * d + 2 and expanding.args["W2"].shape == (d_ff, d)
        d, d_ff = bottleneck.args["W1"].shape
        assert 3 <= d <= 7 and 1 <= d_ff < d and bottleneck.args["W2"].shape == (d_ff, d)
