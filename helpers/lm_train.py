"""Training lesson 09's language model: batches from the corpus, Adam, a fixed seed (tools/train_lm.py runs it).

Deterministic given the seed: one generator (np.random.default_rng(seed)) draws the initial weights and then
every batch, in a fixed order; training is in float64 on one BLAS thread (gpt.single_blas_thread), so nothing sums
in an order that depends on the number of threads (the embedding gradient adds rows with np.add.at, one at a
time). tests/test_lm.py retrains the
first steps and compares the losses with the manifest's.
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np

from helpers import gpt
from helpers.lm_corpus import corpus_sentences, vocabulary, words

CONFIG = {                  # the shape of the model: one commented place
    "vocab_size": len(vocabulary()),   # word-level vocabulary of the corpus (helpers.lm_corpus)
    "n_ctx": 16,            # tokens of context (GPT-2: 1024)
    "d": 64,                # width of the residual stream (GPT-2 small: 768)
    "n_head": 2,            # attention heads of 32 features each (GPT-2 small: 12 of 64)
    "d_ff": 256,            # FFN hidden units, 4 d as in GPT-2
    "n_layer": 2,           # blocks (GPT-2 small: 12)
}
TRAINING = {
    "seed": 0,
    "steps": 3000,
    "batch": 32,            # sequences of n_ctx + 1 tokens per step
    "lr": 3e-3,             # Adam's peak learning rate, after a linear warm-up ...
    "warmup": 100,          # ... of this many steps, then a cosine decay to lr_min
    "lr_min": 3e-4,
    "betas": (0.9, 0.99),
    "adam_eps": 1e-8,
    "weight_decay": 0.1,
}


def token_stream(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The corpus as one array of token ids, and the index where each sentence starts."""
    index = {w: i for i, w in enumerate(vocabulary())}
    ids, starts = [], []
    for sentence in corpus_sentences(seed):
        starts.append(len(ids))
        ids.extend(index[w] for w in words(sentence))
    return np.array(ids), np.array(starts)


def batch(stream: np.ndarray, starts: np.ndarray, rng: np.random.Generator, size: int,
          n_ctx: int) -> tuple[np.ndarray, np.ndarray]:
    """size windows of n_ctx + 1 tokens, each starting at a sentence, as (inputs, next-token targets)."""
    usable = starts[starts + n_ctx + 1 <= len(stream)]
    first = rng.choice(usable, size=size)                  # (B,)
    windows = stream[first[:, None] + np.arange(n_ctx + 1)]   # (B, n_ctx + 1)
    return windows[:, :-1], windows[:, 1:]


def learning_rate(step: int, hp: dict) -> float:
    """Linear warm-up to hp["lr"], then a cosine decay to hp["lr_min"] at the last step."""
    if step < hp["warmup"]:
        return hp["lr"] * (step + 1) / hp["warmup"]
    progress = (step - hp["warmup"]) / max(1, hp["steps"] - hp["warmup"])
    return hp["lr_min"] + 0.5 * (hp["lr"] - hp["lr_min"]) * (1 + np.cos(np.pi * progress))


class Adam:
    """Adam (Kingma and Ba 2015) with decoupled weight decay (AdamW, Loshchilov and Hutter 2019), as
    torch.optim.AdamW: one moment pair per parameter; the decay shrinks the matrices (every parameter with two
    axes: embeddings and weights), never the biases and layer norm gains, as nanoGPT does."""

    def __init__(self, params: dict, betas: tuple[float, float], eps: float, weight_decay: float = 0.0):
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.betas, self.eps, self.weight_decay, self.t = betas, eps, weight_decay, 0

    def step(self, params: dict, grads: dict, lr: float) -> None:
        """Update params in place from grads."""
        self.t += 1
        b1, b2 = self.betas
        for k in params:
            self.m[k] = b1 * self.m[k] + (1 - b1) * grads[k]
            self.v[k] = b2 * self.v[k] + (1 - b2) * grads[k] ** 2
            m_hat = self.m[k] / (1 - b1 ** self.t)
            v_hat = self.v[k] / (1 - b2 ** self.t)
            if self.weight_decay and params[k].ndim == 2:
                params[k] *= 1 - lr * self.weight_decay
            params[k] -= lr * m_hat / (np.sqrt(v_hat) + self.eps)


@gpt.single_blas_thread
def train(steps: int | None = None, hp: dict | None = None, config: dict | None = None,
          log: Callable[[int, float], None] | None = None) -> tuple[dict, list[float]]:
    """Train from scratch: (float64 parameters, the loss of every step). steps cuts the run short (the same
    first steps as the full run: the learning rate schedule is still the full run's)."""
    hp = dict(TRAINING, **(hp or {}))
    config = dict(CONFIG, **(config or {}))
    rng = np.random.default_rng(hp["seed"])
    params = gpt.init_params(config, rng)                  # first the weights ...
    stream, starts = token_stream(hp["seed"])
    adam = Adam(params, hp["betas"], hp["adam_eps"], hp["weight_decay"])
    losses = []
    for step in range(hp["steps"] if steps is None else steps):
        ids, targets = batch(stream, starts, rng, hp["batch"], config["n_ctx"])   # ... then every batch
        loss, grads = gpt.loss_and_grads(params, ids, targets, config)
        adam.step(params, grads, learning_rate(step, hp))
        losses.append(loss)
        if log is not None:
            log(step, loss)
    return params, losses


def timed_train(**kwargs) -> tuple[dict, list[float], float]:
    """train(), and its wall-clock seconds."""
    start = time.perf_counter()
    params, losses = train(**kwargs)
    return params, losses, time.perf_counter() - start
