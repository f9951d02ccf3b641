"""helpers.sgd_toy: lesson 08's task and plain SGD loop, moved out of the lesson with the same draws."""
import numpy as np

from helpers.ffn import ffn_backward, gelu, relu
from helpers.sgd_toy import D, D_FF, N_TEST, N_TRAIN, half_mse, teacher_task, train


def test_the_task_is_seeded_and_shaped():
    a, b = teacher_task(), teacher_task()
    assert a.X_train.shape == a.Y_train.shape == (N_TRAIN, D) and a.X_test.shape == (N_TEST, D)
    assert np.array_equal(a.X_train, b.X_train) and np.array_equal(a.Y_test, b.Y_test)
    assert not np.array_equal(teacher_task(seed=9).X_train, a.X_train)


def test_a_run_repeats_exactly_and_a_dead_relu_unit_stays_dead():
    (W1, b1, W2, b2), history = train(relu, lr=0.5, steps=200)
    again = train(relu, lr=0.5, steps=200)
    assert np.array_equal(W1, again[0][0]) and history == again[1]
    assert len(history["loss"]) == len(history["off"]) == 21 and W1.shape == (D, D_FF)
    assert history["off"] == sorted(history["off"])            # ReLU units off for every input never revive
    assert history["loss"][-1] < history["loss"][0]


def test_the_backward_pass_it_is_given_is_the_one_it_uses():
    calls = []

    def counting(*args):
        calls.append(1)
        return ffn_backward(*args)
    train(gelu, lr=0.1, steps=5, backward=counting)
    assert len(calls) == 5


def test_half_mse_is_half_the_mean_squared_row_length():
    Y = np.array([[1.0, 2.0], [0.0, 0.0]])
    assert half_mse(Y, np.zeros_like(Y)) == 0.5 * (5.0 + 0.0) / 2
