"""Lesson 08's training task and its plain SGD loop.

The task: normal random inputs x in R^8 with targets y = tanh(2 x A + c) B from a fixed random "teacher" (A is
8 x 16, B is 16 x 8), a smooth function to learn. The model: an FFN with d = 8, d_ff = 32. The loss: the mean
over a batch of ||FFN(x) - y||^2 / 2, so dy = (FFN(x) - y) / batch.

    task = teacher_task()                    # seeded: 256 training inputs, 1,024 fresh ones to test on
    (W1, b1, W2, b2), history = train(relu, lr=0.5, task=task)

`train` is plain SGD: each step takes a random batch, runs the forward pass and the backward pass
(helpers.ffn.ffn_backward unless another is given) and moves every parameter a step `lr` against its gradient.
Every `every` steps it records the loss on all training inputs and how many hidden units are off for every one
of them (z <= 0 for all). The random draws (the teacher, the inputs, the initial weights, the batches) come in
a fixed order from fixed seeds, so a run gives the same numbers every time.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from helpers.ffn import ffn, ffn_backward

D, D_FF, N_TRAIN, N_TEST = 8, 32, 256, 1024     # token width, hidden units, training and test inputs


@dataclass(frozen=True)
class Task:
    X_train: np.ndarray     # (N_TRAIN, D)
    Y_train: np.ndarray     # (N_TRAIN, D)
    X_test: np.ndarray      # (N_TEST, D)  inputs the FFN never trains on
    Y_test: np.ndarray      # (N_TEST, D)


def teacher_task(seed: int = 8) -> Task:
    """The teacher's training and test sets, drawn from `seed` (lesson 08 uses 8)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(D, 16)) / np.sqrt(D)      # (D, 16)
    c = rng.normal(size=16)                         # (16,)
    B = rng.normal(size=(16, D)) / 4                # (16, D)

    def teacher(X):
        return np.tanh(2 * X @ A + c) @ B           # (rows, D)

    X_train = rng.normal(size=(N_TRAIN, D))
    X_test = rng.normal(size=(N_TEST, D))
    return Task(X_train, teacher(X_train), X_test, teacher(X_test))


def half_mse(Y_hat: np.ndarray, Y: np.ndarray) -> float:
    """The mean over rows of ||Y_hat - Y||^2 / 2."""
    return float(0.5 * np.mean(np.sum((Y_hat - Y) ** 2, axis=1)))


def train(activation: Callable, lr: float, task: Task | None = None, b1_start: float = 0.0, seed: int = 0,
          steps: int = 600, batch: int = 32, every: int = 10, d_ff: int = D_FF,
          backward: Callable = ffn_backward) -> tuple[tuple[np.ndarray, ...], dict[str, list]]:
    """Plain SGD on the task (teacher_task() when None); returns the final (W1, b1, W2, b2) and a history of the
    training loss and the count of units off for every training input, every `every` steps."""
    task = teacher_task() if task is None else task
    X, Y = task.X_train, task.Y_train
    d = X.shape[1]
    rng = np.random.default_rng(seed)              # initial weights and batches
    W1 = rng.normal(size=(d, d_ff)) / np.sqrt(d)    # (d, d_ff)
    b1 = np.full(d_ff, b1_start)                    # (d_ff,)
    W2 = rng.normal(size=(d_ff, d)) / np.sqrt(d_ff)  # (d_ff, d)
    b2 = np.zeros(d)                                # (d,)
    history: dict[str, list] = {"loss": [], "off": []}
    for step in range(steps + 1):
        if step % every == 0:                       # measured on all training inputs
            Z = X @ W1 + b1                         # (n, d_ff)
            history["off"].append(int(np.sum(np.all(Z <= 0, axis=0))))
            history["loss"].append(half_mse(ffn(X, W1, b1, W2, b2, activation), Y))
        if step == steps:
            break
        rows = rng.choice(len(X), size=batch, replace=False)
        x, y = X[rows], Y[rows]                     # (batch, d)
        dy = (ffn(x, W1, b1, W2, b2, activation) - y) / batch   # (batch, d)  the batch's dL/dy
        _, dW1, db1, dW2, db2 = backward(x, W1, b1, W2, b2, dy, activation)
        W1 -= lr * dW1                              # a step against each gradient
        b1 -= lr * db1
        W2 -= lr * dW2
        b2 -= lr * db2
    return (W1, b1, W2, b2), history
