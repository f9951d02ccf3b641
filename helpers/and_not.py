"""The task "respond only if A and B are present but C is not", on the eight binary inputs (A, B, C).

No affine map gets it exactly (lesson 05 proves it); an affine map followed by a threshold does, and so does
a ReLU FFN. The weights below are in the row-vector convention of helpers.ffn: W1 is (3, d_ff).
"""
import itertools

import numpy as np

INPUTS = np.array(list(itertools.product([0.0, 1.0], repeat=3)))   # (8, 3), rows (A, B, C) from 000 to 111
TARGET = INPUTS[:, 0] * INPUTS[:, 1] * (1 - INPUTS[:, 2])          # (8,)  1 only for (1, 1, 0)


def step(z: np.ndarray) -> np.ndarray:
    """The threshold: 1 where z > 0, else 0."""
    return (np.asarray(z) > 0).astype(float)


# A two-unit ReLU FFN. Both units see s = A + B - C; the output relu(s - 1) - relu(s - 2) is 0 for s <= 1,
# 1 for s >= 2 and a ramp between, so it never exceeds 1 whatever the inputs.
DETECTOR = {
    "W1": np.array([[1.0, 1.0],
                    [1.0, 1.0],
                    [-1.0, -1.0]]),      # (3, 2)  both columns read A + B - C
    "b1": np.array([-1.0, -2.0]),        # (2,)    two thresholds, one apart
    "W2": np.array([[1.0], [-1.0]]),     # (2, 1)  the first unit minus the second
    "b2": np.array([0.0]),               # (1,)
}
