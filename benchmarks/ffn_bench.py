"""How close helpers.ffn comes to its bare matmuls, in time and in peak memory, at GPT-2 small size.

Forward passes (ffn, swiglu_ffn) and backward passes (ffn_backward, swiglu_backward), each against the matrix
products it cannot avoid.

    make bench                                    # or: .venv/bin/python benchmarks/ffn_bench.py
    .venv/bin/python benchmarks/ffn_bench.py --quick   # a smoke run: 3 rounds, noisy ratios

Sizes: T = 1024 tokens, d = 768, d_ff = 3072, float32 (GPT-2 small; SwiGLU uses the same d_ff here).

Time: each round times every function right next to its bare-matmul baseline (which one goes first
alternates between rounds) and takes the ratio of the two, so a burst of load from another process tends to
hit both sides of a ratio. The median over rounds is the figure we quote; the quartiles beside it show how
noisy the machine was. Absolute times are not printed: they depend on the machine, ratios much less.
On a busy machine the rounds stop after --budget seconds (40 by default; at least 7 rounds).

Memory: tracemalloc's peak during one call (NumPy reports its array allocations to tracemalloc; checked
below), divided by the least that any FFN which materialises its hidden layer must hold at once:
the hidden activations (T, d_ff) plus the output (T, d). The bare matmuls themselves reach exactly that for
the two-matrix FFN. For SwiGLU we divide by the same minimum: its hidden activations
silu(x W_gate) * (x W_up) are one (T, d_ff) array, and its two projections need not both exist whole,
since the value path can be formed a block of hidden units at a time and multiplied straight in. (Its three
bare matmuls, holding x W_gate and x W_up whole, need about 1.8 times that; printed for comparison.)
OpenBLAS's own work buffers are not NumPy arrays and are not traced, on either side of a ratio.

Backward passes: ffn_backward is given x, the weights and dy (not the forward pass's hidden arrays), so its
baseline is five bare matmuls: x W1 again for the pre-activation, then dW2 = h^T dy, dh = dy W2^T, dW1 = x^T dz
and dx = dz W1^T. Its memory is divided by what the gradients themselves take plus two hidden-sized (T, d_ff)
arrays (z and h, or z and dh); the five bare matmuls hold exactly that. swiglu_backward's baseline is its eight
matmuls (x W_gate, x W_up, dW_down, da, dW_up, dW_gate and the two halves of dx, added), and its memory is divided
by the same kind of minimum: its gradients plus two (T, d_ff) arrays. (Its eight bare matmuls, holding g, u and
da whole, take one more; printed for comparison.)

Prints PASS or FAIL per goal and exits with status 1 if any goal is missed. Not part of `make test`.
"""
from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
import tracemalloc

import numpy as np
from scipy import special

from helpers import _blocks as blocks
from helpers import ffn as lib
from helpers.measure import peak_bytes

T, D, D_FF = 1024, 768, 3072
DTYPE = np.float32
MIB = 2 ** 20
MIN_ROUNDS = 7


def make_inputs(rng):
    """x ~ N(0, 1) and weights ~ N(0, 0.02^2) as GPT-2 initialises them; biases small."""
    def normal(*shape, scale=1.0):
        return (scale * rng.standard_normal(shape)).astype(DTYPE)
    return dict(x=normal(T, D),
                W1=normal(D, D_FF, scale=0.02), b1=normal(D_FF, scale=0.02),
                W2=normal(D_FF, D, scale=0.02), b2=normal(D, scale=0.02),
                W_gate=normal(D, D_FF, scale=0.02), W_up=normal(D, D_FF, scale=0.02),
                W_down=normal(D_FF, D, scale=0.02), dy=normal(T, D))


def bare_two(p):
    h = p["x"] @ p["W1"]          # (T, d_ff)
    return h @ p["W2"]            # (T, d)


def bare_three(p):
    g = p["x"] @ p["W_gate"]      # (T, d_ff)
    u = p["x"] @ p["W_up"]        # (T, d_ff)  held, not used: the naive SwiGLU holds it (the product is left out)
    return g @ p["W_down"]        # (T, d)


def bare_five(p):
    z = p["x"] @ p["W1"]          # (T, d_ff)  the pre-activation again
    dW2 = z.T @ p["dy"]           # (d_ff, d)  stands for h^T dy
    dz = p["dy"] @ p["W2"].T      # (T, d_ff)  stands for dh, and dz after the activation's slope
    dW1 = p["x"].T @ dz           # (d, d_ff)
    dx = dz @ p["W1"].T           # (T, d)
    return dx, dW1, dW2


def bare_eight(p):
    g = p["x"] @ p["W_gate"]      # (T, d_ff)  gate path again
    u = p["x"] @ p["W_up"]        # (T, d_ff)  value path again
    dW_down = g.T @ p["dy"]       # (d_ff, d)  stands for a^T dy
    da = p["dy"] @ p["W_down"].T  # (T, d_ff)  stands for da, du and dg
    dW_up = p["x"].T @ da         # (d, d_ff)
    dW_gate = p["x"].T @ da       # (d, d_ff)
    dx = da @ p["W_up"].T         # (T, d)
    dx += da @ p["W_gate"].T      # (T, d)     both paths reach x
    del u
    return dx, dW_gate, dW_up, dW_down


def ffn_with(activation):
    return lambda p: lib.ffn(p["x"], p["W1"], p["b1"], p["W2"], p["b2"], activation=activation)


def swiglu(p):
    return lib.swiglu_ffn(p["x"], p["W_gate"], p["W_up"], p["W_down"])


def backward_with(activation):
    return lambda p: lib.ffn_backward(p["x"], p["W1"], p["b1"], p["W2"], p["b2"], p["dy"], activation=activation)


def swiglu_back(p):
    return lib.swiglu_backward(p["x"], p["W_gate"], p["W_up"], p["W_down"], p["dy"])


# name: (function, its baseline, time goal, memory goal). ffn_backward's relu goals are issue 14's; the others
# are set like the forward pass's: an activation's slope may cost what the activation costs.
CASES = {
    "ffn, relu": (ffn_with(lib.relu), "2 bare matmuls", 1.10, 1.25),
    "ffn, gelu": (ffn_with(lib.gelu), "2 bare matmuls", 1.50, 2.00),
    "ffn, gelu_tanh": (ffn_with(lib.gelu_tanh), "2 bare matmuls", 1.50, 2.00),
    "swiglu_ffn": (swiglu, "3 bare matmuls", 1.30, 1.50),
    "ffn_backward, relu": (backward_with(lib.relu), "5 bare matmuls", 1.15, 1.25),
    "ffn_backward, gelu": (backward_with(lib.gelu), "5 bare matmuls", 1.50, 1.25),
    "ffn_backward, gelu_tanh": (backward_with(lib.gelu_tanh), "5 bare matmuls", 1.50, 1.25),
    "swiglu_backward": (swiglu_back, "8 bare matmuls", 1.30, 1.50),
}
BASELINES = {"2 bare matmuls": bare_two, "3 bare matmuls": bare_three,
             "5 bare matmuls": bare_five, "8 bare matmuls": bare_eight}
ITEM = np.dtype(DTYPE).itemsize
# The least each kind of call must hold at once, in bytes (see the docstring), by baseline.
FORWARD_MINIMUM = (T * D_FF + T * D) * ITEM                              # hidden + output
MINIMUM = {
    "2 bare matmuls": FORWARD_MINIMUM,
    "3 bare matmuls": FORWARD_MINIMUM,
    "5 bare matmuls": (T * D + 2 * D * D_FF + D_FF + D + 2 * T * D_FF) * ITEM,   # dx dW1 db1 dW2 db2 + 2 hidden
    "8 bare matmuls": (T * D + 3 * D * D_FF + 2 * T * D_FF) * ITEM,              # dx dW_gate dW_up dW_down + 2
}


def check_outputs(p):
    """The functions timed must be right: compare with the formulas written out (float64)."""
    x, W1, b1, W2, b2, W_gate, W_up, W_down, dy = (
        p[k].astype(np.float64) for k in ("x", "W1", "b1", "W2", "b2", "W_gate", "W_up", "W_down", "dy"))
    z = x @ W1 + b1
    g = x @ W_gate
    u = x @ W_up
    k = np.sqrt(2 / np.pi)
    t = np.tanh(k * (z + 0.044715 * z ** 3))
    gelu_tanh = 0.5 * z * (1 + t)
    slopes = {"relu": (z > 0) * 1.0,
              "gelu": special.ndtr(z) + z * np.exp(-z * z / 2) / np.sqrt(2 * np.pi),
              "gelu_tanh": 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * k * (1 + 3 * 0.044715 * z * z)}
    hidden = {"relu": np.maximum(z, 0), "gelu": z * special.ndtr(z), "gelu_tanh": gelu_tanh}

    def backward(act):
        dz = (dy @ W2.T) * slopes[act]
        return (dz @ W1.T, x.T @ dz, dz.sum(0), hidden[act].T @ dy, dy.sum(0))

    sig = special.expit(g)
    da = dy @ W_down.T
    du = da * g * sig
    dg = da * u * sig * (1 + g * (1 - sig))
    expected = {
        "ffn, relu": (hidden["relu"] @ W2 + b2,),
        "ffn, gelu": (hidden["gelu"] @ W2 + b2,),
        "ffn, gelu_tanh": (gelu_tanh @ W2 + b2,),
        "swiglu_ffn": ((g * sig * u) @ W_down,),
        "ffn_backward, relu": backward("relu"),
        "ffn_backward, gelu": backward("gelu"),
        "ffn_backward, gelu_tanh": backward("gelu_tanh"),
        "swiglu_backward": (du @ W_up.T + dg @ W_gate.T, x.T @ dg, x.T @ du, (g * sig * u).T @ dy),
    }
    for name, (fn, *_) in CASES.items():
        got = fn(p)
        got = got if isinstance(got, tuple) else (got,)
        for value, exact in zip(got, expected[name], strict=True):
            scale = np.abs(exact).max()
            if (value.dtype != DTYPE or value.shape != exact.shape
                    or np.abs(value - exact).max() > 1e-4 * scale):
                sys.exit(f"{name} gives a wrong result (dtype {value.dtype}, shape {value.shape}): not timing it")


def time_rounds(p, rounds, rng, budget):
    """Median and quartiles over rounds of (function's time / its baseline's time, measured next to it).

    A round visits the cases in a shuffled order and times each case right next to its baseline, the
    baseline first in even rounds and second in odd ones, so that the two sides of a ratio share the
    machine's load of that moment and neither always goes first. Rounds stop early, after at least
    MIN_ROUNDS, once `budget` seconds have gone by (a busy machine makes every round slower).
    """
    started = time.perf_counter()
    for fn in [*BASELINES.values(), *(case[0] for case in CASES.values())]:
        fn(p)                                    # warm up: first-call costs, thread pool, page faults
    ratios = {name: [] for name in CASES}
    gc.disable()
    try:
        for r in range(rounds):
            if r >= min(rounds, MIN_ROUNDS) and time.perf_counter() - started > budget:
                break
            for name in rng.permutation(list(CASES)):
                fn, baseline = CASES[name][0], BASELINES[CASES[name][1]]
                pair = (baseline, fn) if r % 2 == 0 else (fn, baseline)
                seconds = {}
                for job in pair:
                    start = time.perf_counter()
                    result = job(p)
                    seconds[job] = time.perf_counter() - start
                    del result
                ratios[name].append(seconds[fn] / seconds[baseline])
    finally:
        gc.enable()
    done = len(next(iter(ratios.values())))
    return {name: quartiles(r) for name, r in ratios.items()}, done


def quartiles(values):
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q2, q1, q3


def traced_peak(fn):
    """Bytes tracemalloc saw allocated at the worst moment of one call, above what was allocated before."""
    gc.collect()
    return peak_bytes(fn)[1]


def peak_memory(p):
    tracemalloc.start()
    try:
        n = 4 * MIB
        seen = traced_peak(lambda: np.ones(n, dtype=np.uint8))
        if seen < n:
            sys.exit(f"tracemalloc saw {seen} bytes of a {n}-byte NumPy array: it cannot measure this NumPy")
        peaks = {name: traced_peak(lambda: fn(p)) for name, fn in BASELINES.items()}
        peaks.update({name: traced_peak(lambda: case[0](p)) for name, case in CASES.items()})
    finally:
        tracemalloc.stop()
    return peaks


def describe_machine():
    threads = {k: os.environ[k] for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS") if k in os.environ}
    print(f"numpy {np.__version__} on {platform.machine()}, {os.cpu_count()} cores; activation threads "
          f"{blocks.n_threads()} ({', '.join(f'{k}={v}' for k, v in threads.items()) or 'no thread variables set'})")
    coretype = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
    if coretype:
        print(f"note: {coretype} is set, which makes OpenBLAS run an older, slower matmul kernel and so "
              "flatters these ratios; for the real figures run this command with both unset")
    try:
        from threadpoolctl import threadpool_info
        for pool in threadpool_info():
            print(f"BLAS: {pool.get('internal_api')} {pool.get('version')}, kernel {pool.get('architecture')}, "
                  f"{pool.get('num_threads')} threads")
    except ImportError:
        pass


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 rounds (ratios are noisier)")
    parser.add_argument("--rounds", type=int, default=None, help="timing rounds (default 21, or 3 with --quick)")
    parser.add_argument("--budget", type=float, default=40.0,
                        help=f"seconds of timing after which rounds stop (after at least {MIN_ROUNDS}; default 40)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 21)

    print(f"helpers.ffn against bare matmuls: T = {T}, d = {D}, d_ff = {D_FF}, {np.dtype(DTYPE).name}")
    describe_machine()
    p = make_inputs(np.random.default_rng(0))
    check_outputs(p)
    load_before = os.getloadavg()[0]
    timing, rounds = time_rounds(p, rounds, np.random.default_rng(1), args.budget)
    load_after = os.getloadavg()[0]
    peaks = peak_memory(p)

    failed = []

    def verdict(name, what, value, goal):
        ok = value <= goal
        if not ok:
            failed.append(f"{name} {what}")
        return f"<= {goal:.2f}  {'PASS' if ok else 'FAIL'}"

    print(f"\ntime / baseline's time, median over {rounds} interleaved rounds [quartiles]; "
          f"load average {load_before:.1f} before, {load_after:.1f} after")
    for name, (_, baseline, time_goal, _) in CASES.items():
        median, q1, q3 = timing[name]
        print(f"  {name:23s} / {baseline:15s} {median:5.2f}  [{q1:.2f}, {q3:.2f}]  "
              + verdict(name, "time", median, time_goal))

    print("\npeak memory during one call / the least that kind of call must hold")
    print(f"  forward: hidden (T, d_ff) + output (T, d) = {FORWARD_MINIMUM / MIB:.1f} MiB; backward: gradients "
          f"+ two (T, d_ff) = {MINIMUM['5 bare matmuls'] / MIB:.1f} MiB (ffn), "
          f"{MINIMUM['8 bare matmuls'] / MIB:.1f} MiB (SwiGLU)")
    for name in BASELINES:
        print(f"  {name:33s} {peaks[name] / MINIMUM[name]:5.2f}  (for comparison)")
    for name, (_, baseline, _, memory_goal) in CASES.items():
        ratio = peaks[name] / MINIMUM[baseline]
        print(f"  {name:33s} {ratio:5.2f}  " + verdict(name, "memory", ratio, memory_goal))

    if failed:
        print(f"\nFAIL: {', '.join(failed)}")
        return 1
    print("\nPASS: every goal met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
