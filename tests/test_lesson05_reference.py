"""Lesson 05's reference code against independent definitions: the collapse algebra, the impossibility fit,
the A-and-B-not-C detector and the NumPy-trained FFN."""
import itertools
import math
import os
import subprocess
import sys
from fractions import Fraction

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from helpers import tiny_mlp  # noqa: E402
from helpers.and_not import DETECTOR, INPUTS, TARGET, step  # noqa: E402
from helpers.collapse import (apply_stack, best_affine_fit, collapse_affine, collapse_stack,  # noqa: E402
                              max_rel_err, residual_collapse)
from helpers.ffn import ffn  # noqa: E402
from helpers.plot_regions import plot_side_by_side  # noqa: E402


def layer_by_loops(x, W, b):
    """One token through one affine layer, one multiply-add at a time."""
    return [sum(x[i] * W[i][j] for i in range(len(x))) + b[j] for j in range(len(b))]


# ---- the collapse algebra --------------------------------------------------------------------------------
def test_collapse_affine_matches_the_layers_applied_one_number_at_a_time():
    rng = np.random.default_rng(0)
    W1, b1 = rng.normal(size=(3, 5)), rng.normal(size=5)
    W2, b2 = rng.normal(size=(5, 2)), rng.normal(size=2)
    W, b = collapse_affine(W1, b1, W2, b2)
    assert W.shape == (3, 2) and b.shape == (2,)
    for x in rng.normal(size=(4, 3)).tolist():
        two_layers = layer_by_loops(layer_by_loops(x, W1.tolist(), b1.tolist()), W2.tolist(), b2.tolist())
        assert np.allclose(layer_by_loops(x, W.tolist(), b.tolist()), two_layers, rtol=1e-12, atol=1e-12)


def test_collapse_affine_on_hand_computed_integers():
    W1, b1 = np.array([[1.0, 2.0], [0.0, -1.0]]), np.array([1.0, -2.0])
    W2, b2 = np.array([[3.0, 1.0], [-1.0, 2.0]]), np.array([0.5, -1.0])
    W, b = collapse_affine(W1, b1, W2, b2)
    # W = [[1*3 + 2*-1, 1*1 + 2*2], [0*3 + -1*-1, 0*1 + -1*2]]; b = [1*3 - 2*-1 + 0.5, 1*1 - 2*2 - 1]
    assert W.tolist() == [[1.0, 5.0], [1.0, -2.0]] and b.tolist() == [5.5, -4.0]


def test_an_affine_map_is_read_off_its_outputs_and_the_stack_agrees():
    # Independent of collapse_stack's folding: any affine f has b = f(0) and rows W[i] = f(e_i) - f(0).
    rng = np.random.default_rng(1)
    widths = [3, 6, 4, 7, 2, 5, 3]
    layers = [(rng.normal(size=(a, c)), rng.normal(size=c)) for a, c in zip(widths[:-1], widths[1:])]
    b_probe = apply_stack(np.zeros(3), layers)
    W_probe = apply_stack(np.eye(3), layers) - b_probe
    W, b = collapse_stack(layers)
    assert np.allclose(W, W_probe, rtol=1e-12, atol=1e-12) and np.allclose(b, b_probe, rtol=1e-12, atol=1e-12)


def test_96_blocks_collapse_to_one_map_with_rounding_level_error():
    rng = np.random.default_rng(2)
    d, d_ff = 8, 32
    layers = []
    for _ in range(96):
        layers.append((rng.normal(size=(d, d_ff)) / np.sqrt(d), 0.02 * rng.normal(size=d_ff)))
        layers.append((rng.normal(size=(d_ff, d)) / np.sqrt(d_ff), 0.02 * rng.normal(size=d)))
    X = rng.normal(size=(5, d))
    W, b = collapse_stack(layers)
    assert W.shape == (d, d) and b.shape == (d,)
    assert max_rel_err(X @ W + b, apply_stack(X, layers)) < 1e-12


def test_residual_collapse_matches_the_block_token_by_token():
    rng = np.random.default_rng(3)
    W1, W2 = rng.normal(size=(3, 7)), rng.normal(size=(7, 3))
    M = residual_collapse(W1, W2)
    zero = [0.0] * 3
    for x in rng.normal(size=(5, 3)).tolist():
        branch = layer_by_loops(layer_by_loops(x, W1.tolist(), [0.0] * 7), W2.tolist(), zero)
        block = [xi + bi for xi, bi in zip(x, branch)]
        assert np.allclose(layer_by_loops(x, M.tolist(), zero), block, rtol=1e-12, atol=1e-12)


def test_residual_collapse_of_a_silent_branch_is_the_identity():
    assert np.array_equal(residual_collapse(np.ones((4, 6)), np.zeros((6, 4))), np.eye(4))


def test_rank_of_a_stack_is_capped_by_its_narrowest_layer():
    rng = np.random.default_rng(5)
    for narrow in (1, 2, 3):
        widths = [8, 32, narrow, 32, 8]
        Ws = [rng.normal(size=(a, c)) for a, c in zip(widths[:-1], widths[1:])]
        assert np.linalg.matrix_rank(np.linalg.multi_dot(Ws)) == narrow


def test_max_rel_err_by_hand():
    assert max_rel_err(np.array([1.0, 2.5]), np.array([1.0, 2.0])) == 0.25
    assert max_rel_err(np.array([[3.0, -4.0]]), np.array([[3.0, -4.0]])) == 0.0


def test_relu_breaks_the_collapse():
    rng = np.random.default_rng(0)
    W1, b1 = rng.normal(size=(4, 16)), rng.normal(size=16)
    W2, b2 = rng.normal(size=(16, 4)), rng.normal(size=4)
    X = rng.normal(size=(200, 4))
    W, b = collapse_affine(W1, b1, W2, b2)
    assert max_rel_err(X @ W + b, ffn(X, W1, b1, W2, b2, activation=lambda z: z)) < 1e-12
    W_fit, b_fit = best_affine_fit(X, ffn(X, W1, b1, W2, b2))
    assert max_rel_err(X @ W_fit + b_fit, ffn(X, W1, b1, W2, b2)) > 0.1


# ---- the impossibility and the detector ------------------------------------------------------------------
def test_inputs_are_the_eight_binary_triples_and_the_target_picks_110():
    assert sorted(map(tuple, INPUTS.astype(int).tolist())) == list(itertools.product([0, 1], repeat=3))
    for (a, b, c), t in zip(INPUTS.astype(int).tolist(), TARGET):
        assert t == (1.0 if (a, b, c) == (1, 1, 0) else 0.0)


def corner_sum(values):
    at = {tuple(row): v for row, v in zip(INPUTS.astype(int).tolist(), values)}
    return at[1, 1, 0] - at[1, 0, 0] - at[0, 1, 0] + at[0, 0, 0]


@pytest.mark.parametrize("w, b", [((1, 2, 3), 4), ((-5, 7, 0), -1), ((Fraction(1, 3), Fraction(-2, 7), 9), 0)])
def test_every_affine_map_has_corner_sum_zero_exactly(w, b):
    # Exact arithmetic: the identity f(110) - f(100) - f(010) + f(000) = 0 holds for any w and b.
    values = [sum(wi * xi for wi, xi in zip(w, x)) + b for x in INPUTS.astype(int).tolist()]
    assert corner_sum(values) == 0
    assert corner_sum(TARGET) == 1


def test_least_squares_fit_is_a_quarter_of_a_plus_b_minus_c_with_error_one_half():
    # By hand: A, B, C are balanced and independent over the 8 inputs, so each weight is
    # cov(target, input) / var(input) = (+-1/16) / (1/4) = +-1/4, and b = 1/8 - 1/4 * (1/2 + 1/2 - 1/2) = 0.
    w, b = best_affine_fit(INPUTS, TARGET)
    assert np.allclose(w, [0.25, 0.25, -0.25], atol=1e-12) and abs(b) < 1e-12
    fit = INPUTS @ w + b
    assert math.isclose(float(np.sum((fit - TARGET) ** 2)), 0.5, rel_tol=1e-12)


def test_least_squares_fit_is_the_minimum():
    w, b = best_affine_fit(INPUTS, TARGET)
    theta = np.append(w, b)
    design = np.hstack([INPUTS, np.ones((8, 1))])
    # the normal equations hold: the residual is orthogonal to every column
    assert np.allclose(design.T @ (design @ theta - TARGET), 0.0, atol=1e-12)
    sse = lambda t: float(np.sum((design @ t - TARGET) ** 2))  # noqa: E731
    for k in range(4):
        for delta in (-1e-3, 1e-3):
            assert sse(theta + delta * np.eye(4)[k]) > sse(theta)


def test_a_threshold_after_the_fit_is_exact_but_the_fit_alone_is_not():
    w, b = best_affine_fit(INPUTS, TARGET)
    fit = INPUTS @ w + b
    assert not np.allclose(fit, TARGET)
    assert np.array_equal(step(fit - 0.375), TARGET)
    assert step(np.array([-1.0, 0.0, 1e-9])).tolist() == [0.0, 0.0, 1.0]


def test_reference_detector_by_hand_on_all_eight_inputs():
    W1, b1, W2, b2 = (DETECTOR[k].tolist() for k in ("W1", "b1", "W2", "b2"))
    for x, t in zip(INPUTS.tolist(), TARGET):
        h = [max(0.0, v) for v in layer_by_loops(x, W1, b1)]
        assert layer_by_loops(h, W2, b2) == [t]
    assert np.array_equal(ffn(INPUTS, **DETECTOR)[:, 0], TARGET)


def test_reference_detector_never_exceeds_one():
    x = np.random.default_rng(9).uniform(-5, 5, size=(5000, 3))
    out = ffn(x, **DETECTOR)
    assert out.max() == 1.0 and out.min() == 0.0


# ---- the NumPy-trained FFN ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def task():
    X, y = tiny_mlp.disc_and_ring(np.random.default_rng(10))
    return X, y, tiny_mlp.init_params(np.random.default_rng(11), d=2, d_ff=16)


def test_disc_and_ring_data(task):
    X, y, _ = task
    r = np.linalg.norm(X, axis=1)
    assert X.shape == (300, 2) and y.sum() == 100
    assert r[y == 1].max() < 1 and r[y == 0].min() > 1.5 and r[y == 0].max() < 2.5


def test_forward_is_the_course_ffn(task):
    X, _, params = task
    logits, cache = tiny_mlp.forward(params, X)
    assert np.allclose(logits, ffn(X, **params)[:, 0], rtol=1e-12, atol=1e-12)
    assert np.array_equal(cache["h"], np.maximum(cache["z"], 0))


def test_bce_against_the_textbook_formula_and_for_huge_logits():
    s, y = np.array([-2.0, 0.0, 3.0, 0.5]), np.array([0.0, 1.0, 1.0, 0.0])
    p = 1 / (1 + np.exp(-s))
    textbook = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert math.isclose(tiny_mlp.bce(s, y), textbook, rel_tol=1e-12)
    assert math.isclose(tiny_mlp.bce(np.array([1000.0]), np.array([0.0])), 1000.0)
    assert tiny_mlp.bce(np.array([1000.0]), np.array([1.0])) == 0.0


@pytest.mark.parametrize("act", ["relu", "none"])
def test_backprop_matches_finite_differences_on_every_parameter(act):
    rng = np.random.default_rng(3)
    X, y = tiny_mlp.disc_and_ring(rng, n_disc=10, n_ring=15)
    params = tiny_mlp.init_params(rng, d=2, d_ff=5)
    _, grads = tiny_mlp.loss_and_grads(params, X, y, act)
    for name, value in params.items():
        assert grads[name].shape == value.shape
        for index in np.ndindex(value.shape):
            numeric = tiny_mlp.numerical_grad(params, X, y, name, index, act)
            assert abs(numeric - grads[name][index]) < 1e-8, (name, index)


def test_numerical_grad_of_a_known_function():
    # One point, W1 = [[1], [0]], b1 = [0], W2 = [[w]], b2 = [0], act none: loss = log(1 + e^(w x1)) - y w x1.
    params = {"W1": np.array([[1.0], [0.0]]), "b1": np.zeros(1), "W2": np.array([[0.5]]), "b2": np.zeros(1)}
    X, y = np.array([[2.0, 7.0]]), np.array([1.0])
    exact = (1 / (1 + math.exp(-1.0)) - 1.0) * 2.0        # d/dw at w = 0.5, x1 = 2
    assert math.isclose(tiny_mlp.numerical_grad(params, X, y, "W2", (0, 0), "none"), exact, rel_tol=1e-7)


def test_training_lowers_the_loss_is_deterministic_and_leaves_the_start_alone(task):
    X, y, params = task
    before = {k: v.copy() for k, v in params.items()}
    net, losses = tiny_mlp.train(params, X, y, act="relu", lr=0.5, steps=300)
    again, losses_again = tiny_mlp.train(params, X, y, act="relu", lr=0.5, steps=300)
    assert losses[-1] < 0.5 * losses[0]
    assert sum(b > a for a, b in zip(losses, losses[1:])) < 0.05 * len(losses)   # nearly monotone
    assert losses == losses_again and all(np.array_equal(net[k], again[k]) for k in net)
    assert all(np.array_equal(params[k], before[k]) for k in params)


def test_relu_ffn_beats_the_best_linear_model_which_the_sigma_free_ffn_equals(task):
    X, y, params = task
    relu_net, _ = tiny_mlp.train(params, X, y, act="relu", lr=0.5, steps=2000)
    flat_net, _ = tiny_mlp.train(params, X, y, act="none", lr=0.5, steps=2000)
    w, b = tiny_mlp.best_linear_classifier(X, y)

    def correct(s):
        return int(np.sum((s > 0) == (y == 1)))
    relu_logits = tiny_mlp.forward(relu_net, X, "relu")[0]
    flat_logits = tiny_mlp.forward(flat_net, X, "none")[0]
    assert correct(relu_logits) == 300
    assert correct(X @ w + b) == correct(flat_logits) == 200      # both answer "ring" everywhere
    W_flat, b_flat = collapse_affine(flat_net["W1"], flat_net["b1"], flat_net["W2"], flat_net["b2"])
    assert np.allclose(W_flat[:, 0], w, atol=1e-5) and abs(b_flat[0] - b) < 1e-5
    # margins are wide, so the counts cannot flip with rounding
    assert np.abs(relu_logits).min() > 1.0 and np.abs(X @ w + b).min() > 0.1


def test_best_linear_classifier_is_at_a_stationary_point(task):
    X, y, _ = task
    w, b = tiny_mlp.best_linear_classifier(X, y)
    p = 1 / (1 + np.exp(-(X @ w + b)))
    assert np.allclose(X.T @ (p - y) / len(y), 0, atol=1e-8) and abs(np.mean(p - y)) < 1e-8


SCRIPT = """
import numpy as np
from helpers import tiny_mlp
X, y = tiny_mlp.disc_and_ring(np.random.default_rng(10))
net, losses = tiny_mlp.train(tiny_mlp.init_params(np.random.default_rng(11), 2, 16), X, y, steps=500)
s = tiny_mlp.forward(net, X)[0]
print(int(np.sum((s > 0) == (y == 1))), f"{losses[-1]:.6f}")
"""


def test_training_prints_the_same_for_one_and_two_blas_threads():
    outputs = set()
    for threads in ("1", "2"):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads)
        outputs.add(subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                                   check=True).stdout)
    assert len(outputs) == 1, outputs


def test_side_by_side_plot_has_titled_labelled_panels(task):
    X, y, _ = task
    fig = plot_side_by_side([("constant", lambda P: np.full(len(P), 0.3)),
                             ("disc", lambda P: (np.linalg.norm(P, axis=1) < 1).astype(float))],
                            X, y, "suptitle")
    try:
        axes = fig.axes
        assert [ax.get_title() for ax in axes] == ["constant", "disc"]
        assert all(ax.get_xlabel() and ax.get_ylabel() for ax in axes)
        assert fig._suptitle.get_text() == "suptitle"
        # every colour in the figure is in the legend: both labels, both shaded regions, the level lines
        labels = [t.get_text() for t in axes[0].get_legend().get_texts()]
        assert labels == ["label 1 (disc)", "label 0 (ring)", "predicted label 1", "predicted label 0",
                          "probability of label 1"]
    finally:
        plt.close(fig)
