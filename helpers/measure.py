"""Measuring calls: the peak memory of one call (tracemalloc), and best times over interleaved repeats."""
from __future__ import annotations

import time
import tracemalloc
from typing import Any, Callable


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


def best_times(calls: dict[str, Callable[[], Any]], repeat: int = 5, min_run: float = 0.002,
               budget: float = 0.5, clock: Callable[[], float] = time.process_time) -> dict[str, float]:
    """The fastest of up to `repeat` runs of each call, in seconds of processor time per call.

    Each call runs once to warm up. A run repeats a quick call enough times to last about `min_run`
    seconds and reports the average, so a call of a few microseconds is not lost in the clock's own cost.
    The calls take turns (a, b, c, a, b, c, ...), so a slow spell hits all of them alike, and the minimum
    discards the runs that were disturbed. After `budget` seconds on the wall clock no new round starts, so
    a busy machine shortens the measurement instead of stretching it.

    The default clock, time.process_time, counts the processor time this program used (summed over its
    threads), not the time on the wall: the moments the machine spends on other programs are left out, so
    the numbers track the work done. Pass clock=time.perf_counter for wall-clock time.
    """
    number = {}
    for name, call in calls.items():
        start = clock()
        call()
        number[name] = max(1, int(min_run / max(clock() - start, 1e-9)))
    best = {name: float("inf") for name in calls}
    deadline = time.perf_counter() + budget
    for _ in range(repeat):
        for name, call in calls.items():
            start = clock()
            for _ in range(number[name]):
                call()
            best[name] = min(best[name], (clock() - start) / number[name])
        if time.perf_counter() > deadline:
            break
    return best
