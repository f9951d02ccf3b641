"""The speed machinery behind helpers.ffn's activations: element-wise work in cache-sized blocks, shared by threads.

NumPy's matrix products use every core but its element-wise functions use one. An activation applied to the
(n, d_ff) hidden array is therefore cut into blocks of BLOCK elements, which a few threads take in turn (NumPy
and SciPy release the GIL inside their loops). Each block's temporaries are small enough to stay in cache, so no
second (n, d_ff) array is ever made. Small arrays are done in one go, on one thread. The backward pass uses the
same blocks for dz = dh * act'(z) (blockwise), so act'(z) is never a whole (n, d_ff) array either.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

BLOCK = 1 << 16   # elements per block of an activation: 256 KiB of float32, cache-sized temporaries


def elementwise(formula, z, out):
    """formula(z, out) for an activation, done block by block on flat views, the blocks shared by threads.

    formula(z_block, out_block) must write out_block from z_block alone (an element-wise function), so the
    result is the same for any block size or thread count.
    """
    z = np.asarray(z)
    if z.dtype.kind != "f":
        z = z.astype(np.float64)
    scalar = out is None and z.ndim == 0
    if out is None:
        out = np.empty_like(z)
    elif np.may_share_memory(z, out) and not _same_view(z, out):
        out[...] = elementwise(formula, z, None)   # overlapping but not the same view: go via a copy
        return out
    if not (z.shape == out.shape and z.flags.c_contiguous and out.flags.c_contiguous):
        formula(z, out)                         # strided or broadcast: one go, one temporary of z's size
        return out
    blockwise(formula, z, out)
    return out[()] if scalar else out


def blockwise(formula, *arrays):
    """formula(*blocks) on matching flat blocks of arrays of one shape, all C-contiguous, blocks shared by threads.

    formula gets the same BLOCK elements of every array (flat views) and may write into any of them: an
    element-wise formula such as an activation (z, out) or an update in place such as dh *= act'(z) for the
    backward pass (z, dh). Each block must depend on its own elements alone, so that the result is the same for
    any block size or thread count.
    """
    flats = [a.reshape(-1) for a in arrays]            # views, thanks to contiguity
    size = flats[0].size
    blocks = iter(range(0, size, BLOCK))               # block starts, taken in turn by whichever thread
    lock = threading.Lock()                             # is free, so a thread slowed down by another
                                                        # program simply does fewer blocks
    def work():
        while True:
            with lock:
                start = next(blocks, None)
            if start is None:
                return
            formula(*(flat[start:start + BLOCK] for flat in flats))

    n_helpers = min(n_threads(), -(-size // BLOCK)) - 1      # this thread works as well
    helpers = [_pool().submit(work) for _ in range(n_helpers)]
    try:
        work()
    finally:
        for helper in helpers:
            helper.result()                             # wait for it, and re-raise its error if any


def _same_view(a, b):
    """True when a and b are the same elements in the same order (in-place use such as gelu(h, out=h))."""
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
            and a.shape == b.shape and a.strides == b.strides)


def n_threads() -> int:
    """As many threads as NumPy's BLAS uses: OPENBLAS_NUM_THREADS or OMP_NUM_THREADS, else the usable cores."""
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


_pool_pid, _pool_executor = None, None   # made on first use, and again in a forked child process


def _pool() -> ThreadPoolExecutor:
    global _pool_pid, _pool_executor
    if _pool_pid != os.getpid():
        _pool_pid = os.getpid()
        _pool_executor = ThreadPoolExecutor(max_workers=n_threads(), thread_name_prefix="helpers.ffn")
    return _pool_executor
