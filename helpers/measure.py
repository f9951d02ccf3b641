"""Measuring calls: the peak memory of one call (tracemalloc), and best times over interleaved rounds."""
from __future__ import annotations

import math
import time
import tracemalloc
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Hashable, Iterator

import numpy  # noqa: F401  (loads the BLAS library that threadpoolctl finds and limits)
from threadpoolctl import threadpool_info, threadpool_limits


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


def blas_threads() -> int | None:
    """How many threads NumPy's matrix products may use now (None if no BLAS library is found)."""
    counts = [info["num_threads"] for info in threadpool_info() if info.get("user_api") == "blas"]
    return max(counts) if counts else None


def one_blas_thread():
    """A context manager: inside it NumPy's matrix products run on one thread; afterwards as before."""
    return threadpool_limits(limits=1, user_api="blas")


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
