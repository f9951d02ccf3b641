"""A one-hidden-layer FFN classifier for 2-D points, trained in NumPy: forward, manual backprop, gradient descent.

The model is helpers.ffn's FFN with one output, the logit s = act(X @ W1 + b1) @ W2 + b2, and the loss is the
mean binary cross-entropy of sigmoid(s) against labels y in {0, 1}. With act = "none" the same network has no
nonlinearity, so it is one affine map in disguise. Everything is float64 and deterministic given the rng.
"""
from __future__ import annotations

import numpy as np
from scipy import optimize, special

from helpers.ffn import relu

Params = dict[str, np.ndarray]
# activation and its derivative, by name
ACTIVATIONS = {
    "relu": (relu, lambda z: (z > 0).astype(float)),
    "none": (lambda z: z, np.ones_like),
}


def disc_and_ring(rng: np.random.Generator, n_disc: int = 100, n_ring: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Points uniform in the disc r < 1 (label 1) and in the ring 1.5 < r < 2.5 (label 0): X (n, 2), y (n,)."""
    r = np.concatenate([np.sqrt(rng.uniform(0.0, 1.0, n_disc)),               # sqrt: uniform over the area
                        np.sqrt(rng.uniform(1.5 ** 2, 2.5 ** 2, n_ring))])
    angle = rng.uniform(0.0, 2 * np.pi, n_disc + n_ring)
    X = np.stack([r * np.cos(angle), r * np.sin(angle)], axis=1)              # (n, 2)
    y = np.concatenate([np.ones(n_disc), np.zeros(n_ring)])                   # (n,)
    return X, y


def init_params(rng: np.random.Generator, d: int = 2, d_ff: int = 16) -> Params:
    """Gaussian weights scaled by 1/sqrt(fan-in), small random first-layer biases, zero output bias."""
    return {"W1": rng.normal(0.0, 1.0 / np.sqrt(d), (d, d_ff)),              # (d, d_ff)
            "b1": rng.normal(0.0, 0.5, d_ff),                                  # (d_ff,)
            "W2": rng.normal(0.0, 1.0 / np.sqrt(d_ff), (d_ff, 1)),            # (d_ff, 1)
            "b2": np.zeros(1)}                                                  # (1,)


def forward(params: Params, X: np.ndarray, act: str = "relu") -> tuple[np.ndarray, dict]:
    """Logits (n,) and the intermediate arrays backprop needs."""
    sigma, _ = ACTIVATIONS[act]
    z = X @ params["W1"] + params["b1"]          # (n, d_ff)  pre-activation
    h = sigma(z)                                 # (n, d_ff)  hidden
    s = (h @ params["W2"] + params["b2"])[:, 0]  # (n,)       logit
    return s, {"X": X, "z": z, "h": h}


def bce(s: np.ndarray, y: np.ndarray) -> float:
    """Mean binary cross-entropy of sigmoid(s) against y, written stably: log(1 + e^s) - y s."""
    return float(np.mean(np.logaddexp(0.0, s) - y * s))


def loss(params: Params, X: np.ndarray, y: np.ndarray, act: str = "relu") -> float:
    return bce(forward(params, X, act)[0], y)


def loss_and_grads(params: Params, X: np.ndarray, y: np.ndarray, act: str = "relu") -> tuple[float, Params]:
    """The loss and its gradient with respect to every parameter, by the chain rule, layer by layer backwards."""
    _, slope = ACTIVATIONS[act]
    s, cache = forward(params, X, act)
    ds = (special.expit(s) - y)[:, None] / len(y)    # (n, 1)     dL/ds: sigmoid(s) - y, averaged
    dW2 = cache["h"].T @ ds                          # (d_ff, 1)
    db2 = ds.sum(axis=0)                             # (1,)
    dh = ds @ params["W2"].T                         # (n, d_ff)
    dz = dh * slope(cache["z"])                      # (n, d_ff)  ReLU passes the gradient only where z > 0
    dW1 = X.T @ dz                                   # (d, d_ff)
    db1 = dz.sum(axis=0)                             # (d_ff,)
    return bce(s, y), {"W1": dW1, "b1": db1, "W2": dW2, "b2": db2}


def numerical_grad(params: Params, X: np.ndarray, y: np.ndarray, name: str, index: tuple,
                   act: str = "relu", eps: float = 1e-6) -> float:
    """Central finite difference of the loss in one parameter entry, params[name][index]."""
    shifted = {k: v.copy() for k, v in params.items()}
    shifted[name][index] += eps
    up = loss(shifted, X, y, act)
    shifted[name][index] -= 2 * eps
    down = loss(shifted, X, y, act)
    return (up - down) / (2 * eps)


def train(params: Params, X: np.ndarray, y: np.ndarray, act: str = "relu", lr: float = 0.5,
          steps: int = 2000) -> tuple[Params, list[float]]:
    """Plain full-batch gradient descent from a copy of params; returns the trained params and the losses."""
    params = {k: v.copy() for k, v in params.items()}
    history = []
    for _ in range(steps):
        value, grads = loss_and_grads(params, X, y, act)
        history.append(value)
        for k in params:
            params[k] -= lr * grads[k]
    history.append(loss(params, X, y, act))
    return params, history


def best_linear_classifier(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Logistic regression: the (w, b) whose logit X @ w + b has the lowest cross-entropy (a convex problem)."""
    def objective(theta):
        s = X @ theta[:-1] + theta[-1]
        return bce(s, y), np.append(X.T @ (special.expit(s) - y), np.sum(special.expit(s) - y)) / len(y)
    theta = optimize.minimize(objective, np.zeros(X.shape[1] + 1), jac=True, method="BFGS",
                              options={"gtol": 1e-10}).x
    return theta[:-1], float(theta[-1])
