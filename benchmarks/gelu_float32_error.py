"""How far helpers.ffn's float32 GELU is from the exact GELU, in float32 ulps, over float32 inputs.

    .venv/bin/python benchmarks/gelu_float32_error.py                # every 97th float32 in [-15, 15]: seconds
    .venv/bin/python benchmarks/gelu_float32_error.py --exhaustive   # every float32 in [-15, 15]: a few minutes

The exact value is z * scipy.special.ndtr(z) in float64 at the float32 z (ndtr is accurate to about 1e-15,
relative, far below a float32 ulp). An error is printed in ulps of the float32 result, that is in units of the
spacing of float32 numbers at the exact value, for results in float32's normal range (|GELU| >= 2^-126); for
smaller results (z below about -13.2, or |z| below about 2^-125) it is printed in units of the smallest
subnormal float32, 2^-149. Outside [-15, 15] GELU is z or 0 in float32 (tests/test_ffn.py checks those).
Not part of `make test`; tests/test_ffn.py checks the bound measured here on a sample of the same inputs.
"""
from __future__ import annotations

import argparse

import numpy as np
from scipy import special

from helpers import ffn

TINY = float(np.finfo(np.float32).tiny)                         # 2^-126, the smallest normal float32
RANGES = [(-13.2, -10), (-10, -5), (-5, -1), (-1, 0), (0, 1), (1, 5), (5, 15)]
CHUNK = 1 << 22                                                 # float32 inputs per sign at a time


def errors(z):
    """Errors of helpers.ffn.gelu at float32 z: (ulps, where the result is normal; multiples of 2^-149, where not)."""
    z64 = z.astype(np.float64)
    exact = z64 * special.ndtr(z64)
    err = np.abs(ffn.gelu(z).astype(np.float64) - exact)
    normal = np.abs(exact) >= TINY
    ulps = np.where(normal, err / np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64), 0.0)
    return ulps, np.where(normal, 0.0, err / 2.0 ** -149), err


def measure(step):
    """Largest errors over every step-th float32 (by bit pattern) of each sign in [0, 15], range by range."""
    top = int(np.float32(15).view(np.int32))
    worst = {rng: (0.0, None) for rng in RANGES}
    worst_subnormal = worst_above_1e7 = 0.0
    count = 0
    for start in range(0, top + 1, step * CHUNK):
        magnitudes = np.arange(start, min(start + step * CHUNK, top + 1), step, dtype=np.int32).view(np.float32)
        for z in (magnitudes, -magnitudes):
            ulps, subnormal, err = errors(z)
            count += z.size
            worst_subnormal = max(worst_subnormal, subnormal.max())
            worst_above_1e7 = max(worst_above_1e7, ulps[err > 1e-7].max(initial=0.0))
            for lo, hi in RANGES:
                inside = np.flatnonzero((z >= lo) & (z < hi))
                if inside.size and ulps[inside].max() > worst[lo, hi][0]:
                    i = inside[ulps[inside].argmax()]
                    worst[lo, hi] = (ulps[i], z[i])
    return count, worst, worst_subnormal, worst_above_1e7


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exhaustive", action="store_true", help="every float32 in [-15, 15], not every 97th")
    args = parser.parse_args(argv)
    count, worst, worst_subnormal, worst_above_1e7 = measure(1 if args.exhaustive else 97)
    print(f"helpers.ffn.gelu in float32 against z * ndtr(z) in float64, at {count:,} float32 values of z in "
          "[-15, 15]:")
    for (lo, hi), (ulps, z) in worst.items():
        print(f"  z in [{lo:5.1f}, {hi:5.1f}): at most {ulps:.2f} ulp  (at z = {z:.9g})")
    print(f"  results below float32's normal range: at most {worst_subnormal:.2f} x 2^-149 off")
    print(f"  where the error exceeds 1e-7 (absolute): at most {worst_above_1e7:.2f} ulp")


if __name__ == "__main__":
    main()
