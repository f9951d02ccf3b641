"""Measuring calls: the peak memory of one call (tracemalloc), and best times over interleaved rounds."""
from __future__ import annotations

import ctypes
import math
import time
import tracemalloc
from contextlib import contextmanager, nullcontext
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Hashable, Iterator

import numpy as np


def peak_bytes(fn: Callable, *args: Any, **kwargs: Any) -> tuple[Any, int]:
    """Call fn(*args, **kwargs); return its result and the peak number of bytes it had allocated at once.

    NumPy reports its array buffers to tracemalloc, so the peak counts every temporary array the call made,
    and the result itself. Memory allocated before the call (the inputs) is not counted.
    """
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    try:
        result = fn(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return result, peak


@lru_cache(maxsize=None)
def _openblas() -> tuple[Callable, Callable] | None:
    """(get_num_threads, set_num_threads) of the OpenBLAS library that NumPy's wheels bundle (Linux, Windows,
    older macOS), or None where NumPy uses another library or it cannot be found."""
    numpy_dir = Path(np.__file__).resolve().parent
    for path in [*numpy_dir.parent.glob("numpy.libs/*openblas*"), *numpy_dir.glob(".dylibs/*openblas*")]:
        try:
            lib = ctypes.CDLL(str(path))  # already loaded by NumPy: this finds the same copy
        except OSError:
            continue
        for prefix in ("scipy_", ""):
            for suffix in ("64_", ""):
                get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
                put = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    get.restype, put.argtypes = ctypes.c_int, [ctypes.c_int]
                    return get, put
    return None


def blas_threads() -> int | None:
    """How many threads NumPy's matrix products may use now (None if the library is not OpenBLAS)."""
    found = _openblas()
    return None if found is None else found[0]()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Inside the block NumPy's matrix products run on one thread; afterwards as before. Where the library
    cannot be found (see _openblas) nothing changes."""
    found = _openblas()
    if found is None:
        yield
        return
    get, put = found
    before = get()
    put(1)
    try:
        yield
    finally:
        put(before)


def best_times(calls: dict[Hashable, Callable[[], Any]], repeat: int = 7, min_run: float = 0.005,
               budget: float = 3.0, clock: Callable[[], float] = time.perf_counter,
               one_thread: bool = True) -> dict[Hashable, float]:
    """The fastest of up to `repeat` runs of each call, in seconds per call.

    Each call first runs twice: once to warm up (caches, memory it allocates the first time) and once to see
    how long it takes. A run then repeats a quick call enough times to last about `min_run` seconds and
    reports the average, so a call of a few microseconds is not lost in the clock's own cost. The calls take
    turns in rounds, the order rotating every round (a, b, c, then b, c, a, ...), so a slow spell on the
    machine hits all of them alike; other programs can only add time, so the minimum over the rounds keeps
    the least disturbed run. After `budget` seconds on the wall clock no new round starts, so a busy machine
    shortens the measurement instead of stretching it.

    With one_thread (the default) NumPy's matrix products run on one thread while they are measured, so the
    times follow the work done rather than how well it spreads over the cores; on a busy machine a product
    split over several threads also waits for the slowest of them, which makes its times erratic.

    The default clock is the wall clock, time.perf_counter. Processor time (time.process_time) leaves other
    programs out, but it adds up every thread of this one, including the threads NumPy's BLAS library keeps
    spinning while they wait for work: that can turn a call of microseconds into milliseconds.
    """
    with one_blas_thread() if one_thread else nullcontext():
        number = {}
        for name, call in calls.items():
            call()                                          # warm-up
            start = clock()
            call()
            number[name] = max(1, math.ceil(min_run / max(clock() - start, 1e-9)))
        best = {name: float("inf") for name in calls}
        names = list(calls)
        deadline = time.perf_counter() + budget
        for round_ in range(repeat):
            shift = round_ % len(names)
            for name in names[shift:] + names[:shift]:
                call = calls[name]
                start = clock()
                for _ in range(number[name]):
                    call()
                best[name] = min(best[name], (clock() - start) / number[name])
            if time.perf_counter() > deadline:
                break
    return best
