"""Lesson 09's language model: its forward pass against its bare matmuls, and training seconds per 1,000 steps.

    make bench                                   # runs this after benchmarks/ffn_bench.py
    .venv/bin/python benchmarks/lm_bench.py [--quick]

Forward: helpers.lm's model.logits on one 16-token context (the shipped model: 2 layers, d = 64, 2 heads,
d_ff = 256, float32), against the matrix products it cannot avoid, on the same shapes: per layer the q, k, v
projection, q k^T and p v for both heads (one batched call each), the output projection, x W1 and h W2, then the
unembedding. Both on one BLAS thread, as helpers.lm runs the model (helpers.gpt.single_blas_thread). As in
ffn_bench.py, each round times the two side by side (which goes first alternates) and the
median ratio over rounds is the figure; the quartiles show how noisy the machine was.

At this size the ratio is far above GPT-2 small's: with d = 64, each hidden unit's activation costs about as
much as the 2 x 64 multiply-adds that feed and read it, where GPT-2 small has 2 x 768, and layer norm, softmax
and the residual adds are each a few NumPy calls of about a microsecond on arrays of 16 x 64 numbers, against
matmuls of a few microseconds. The figure printed says what this model costs; the goal of 1.3 is GPT-2-sized.
The same ratio on a batch of 64 contexts is printed beside it, for comparison: it shows how much of the gap is
per-call overhead and how much is element-wise work.

Training: tools/train_lm.py's loop (float64, one BLAS thread) for a number of steps from scratch, scaled to
1,000 steps; the first steps cost what every step costs (the batch is always 32 x 16 tokens).
Prints PASS or FAIL against the goal for the forward ratio. Not part of `make test`.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

import numpy as np

from helpers import lm, lm_train
from helpers.measure import one_blas_thread

GOAL = 1.3
BATCH = 64                  # contexts at once, for comparison: per-call overheads shrink, element-wise work does not


def bare_matmuls(model: lm.Model, ids: np.ndarray):
    """A function doing only the forward pass's matrix products, on arrays of the right shapes; ids is (B, T)."""
    c, p = model.config, model.params
    (B, T), d, H = ids.shape, c["d"], c["n_head"]
    rng = np.random.default_rng(0)
    x = rng.normal(size=(B, T, d)).astype(np.float32)
    q = rng.normal(size=(B, H, T, d // H)).astype(np.float32)
    attn = rng.normal(size=(B, H, T, T)).astype(np.float32)
    h = rng.normal(size=(B, T, c["d_ff"])).astype(np.float32)
    layers = [(p[f"h{i}.W_qkv"], p[f"h{i}.W_o"], p[f"h{i}.W1"], p[f"h{i}.W2"]) for i in range(c["n_layer"])]
    wte_t = np.ascontiguousarray(p["wte"].T)

    def run():
        for W_qkv, W_o, W1, W2 in layers:
            x @ W_qkv                                # (B, T, 3d)
            q @ q.swapaxes(-1, -2)                   # (B, H, T, T) q k^T
            attn @ q                                 # (B, H, T, hd) p v
            x @ W_o                                  # (B, T, d)
            x @ W1                                   # (B, T, d_ff)
            h @ W2                                   # (B, T, d)
        return x @ wte_t                             # (B, T, vocab)
    return run


def ratio_rounds(fn, baseline, rounds: int, repeat: int = 200) -> list[float]:
    """fn's time / baseline's, each timed over `repeat` calls, side by side, first one then the other."""
    for job in (fn, baseline):
        job()
    ratios = []
    gc.disable()
    try:
        for r in range(rounds):
            seconds = {}
            for job in ((baseline, fn) if r % 2 == 0 else (fn, baseline)):
                start = time.perf_counter()
                for _ in range(repeat):
                    job()
                seconds[job] = time.perf_counter() - start
            ratios.append(seconds[fn] / seconds[baseline])
    finally:
        gc.enable()
    return ratios


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 rounds, 20 training steps")
    args = parser.parse_args(argv)
    model = lm.load()
    ids = model.encode("The capital of France is Paris . People in Japan speak Japanese . Ghana is in")[:16]
    c = model.config
    print(f"\nhelpers.lm's model ({c['n_layer']} layers, d = {c['d']}, {c['n_head']} heads, d_ff = {c['d_ff']}, "
          f"float32) on a {len(ids)}-token context; load average {os.getloadavg()[0]:.1f}")
    one = np.array([ids])                                       # (1, 16)
    with one_blas_thread():                                     # both sides, as helpers.lm runs the model
        ratios = ratio_rounds(lambda: model.batch_logits(one), bare_matmuls(model, one), 3 if args.quick else 21)
    q1, median, q3 = statistics.quantiles(ratios, n=4, method="inclusive") if len(ratios) > 1 else ratios * 3
    ok = median <= GOAL
    print(f"  forward / its bare matmuls {median:5.2f}  [{q1:.2f}, {q3:.2f}]  <= {GOAL:.2f}  "
          f"{'PASS' if ok else 'FAIL (see the docstring: d = 64 is too small for matmuls to dominate)'}")
    many = np.repeat(one, BATCH, axis=0)                         # (64, 16)
    with one_blas_thread():
        ratios = ratio_rounds(lambda: model.batch_logits(many), bare_matmuls(model, many), 3 if args.quick else 11, 20)
    print(f"  the same on a batch of {BATCH} contexts: {statistics.median(ratios):5.2f}  (for comparison)")
    steps = 20 if args.quick else 200
    start = time.perf_counter()
    lm_train.train(steps=steps)                      # on one BLAS thread
    seconds = time.perf_counter() - start
    print(f"  training: {seconds / steps * 1000:.0f} s per 1,000 steps (measured over {steps} steps, 1 BLAS "
          f"thread, batch {lm_train.TRAINING['batch']} x {c['n_ctx']}); load average {os.getloadavg()[0]:.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
