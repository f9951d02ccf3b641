"""Pure-Python matrices stored as flat row-major lists, and the FFN forward pass built from them.

Column-vector convention (W @ x), as in lesson 02 and PyTorch's nn.Linear: a matrix with n_rows rows and
n_cols columns is one flat list of n_rows * n_cols numbers, row after row. Row i starts at i * n_cols, and
element (i, j) sits at i * n_cols + j. For the FFN, W1 is H x D (row i holds hidden unit i's D weights) and
W2 is D x H.

helpers.ffn uses the other convention (x @ W, W1 of shape (D, H)). To run the same network both ways, pass
`flatten(W1.T)` and `flatten(W2.T)` of helpers.ffn's NumPy weights to ffn_forward here.

No NumPy in this module: it is the loop version that lesson 03 compares with NumPy.
"""
from __future__ import annotations

from typing import Callable, Sequence

Vector = Sequence[float]


def index(i: int, j: int, n_cols: int) -> int:
    """Position of element (i, j) in a flat row-major matrix with n_cols columns."""
    return i * n_cols + j


def row(M: Vector, i: int, n_cols: int) -> list[float]:
    """Row i of a flat row-major matrix with n_cols columns: the n_cols numbers starting at i * n_cols."""
    start = i * n_cols
    return list(M[start:start + n_cols])


def flatten(rows) -> list[float]:
    """A nested list of rows (or a 2-D NumPy array) as one flat row-major list of floats."""
    return [float(value) for r in rows for value in r]


def _n_rows(M: Vector, n_cols: int) -> int:
    if n_cols == 0 or len(M) % n_cols:
        raise ValueError(f"a flat matrix of {len(M)} numbers cannot have rows of {n_cols} numbers")
    return len(M) // n_cols


def matvec(M: Vector, v: Vector) -> list[float]:
    """M @ v for a flat row-major M with len(v) columns: output[i] = row_i . v, one number per row."""
    n_cols = len(v)
    n_rows = _n_rows(M, n_cols)
    return [sum(m * v_j for m, v_j in zip(M[i * n_cols:(i + 1) * n_cols], v)) for i in range(n_rows)]


def vecmat(v: Vector, M: Vector) -> list[float]:
    """v @ M for a flat row-major M with len(v) rows: output[j] = sum_i v[i] * M[i, j] (x @ W convention)."""
    n_rows = len(v)
    n_cols = _n_rows(M, n_rows)  # M has len(M) / n_rows columns
    return [sum(v[i] * M[i * n_cols + j] for i in range(n_rows)) for j in range(n_cols)]


def transpose(M: Vector, n_rows: int, n_cols: int) -> list[float]:
    """The flat row-major n_cols x n_rows transpose of a flat row-major n_rows x n_cols matrix."""
    if len(M) != n_rows * n_cols:
        raise ValueError(f"a {n_rows} x {n_cols} matrix has {n_rows * n_cols} numbers, not {len(M)}")
    return [M[i * n_cols + j] for j in range(n_cols) for i in range(n_rows)]


def relu(z: Vector) -> list[float]:
    """max(0, z), element by element."""
    return [z_i if z_i > 0 else 0.0 for z_i in z]


def add(u: Vector, v: Vector) -> list[float]:
    """u + v, element by element."""
    if len(u) != len(v):
        raise ValueError(f"cannot add vectors of lengths {len(u)} and {len(v)}")
    return [u_i + v_i for u_i, v_i in zip(u, v)]


def ffn_forward(x: Vector, W1: Vector, b1: Vector, W2: Vector, b2: Vector,
                activation: Callable[[Vector], list[float]] = relu) -> list[float]:
    """FFN(x) = W2 @ activation(W1 @ x + b1) + b2 with flat row-major W1 (H x D) and W2 (D x H).

    D = len(x) and H = len(b1). The activation sits between the two linears only: the output stays signed.
    """
    D, H = len(x), len(b1)
    if len(W1) != H * D or len(W2) != D * H or len(b2) != D:
        raise ValueError(f"with D = {D} and H = {H}, W1 and W2 need {H * D} numbers each and b2 needs {D}; "
                         f"got {len(W1)}, {len(W2)} and {len(b2)}")
    z = add(matvec(W1, x), b1)      # (H,)  pre-activation
    h = activation(z)               # (H,)  hidden
    return add(matvec(W2, h), b2)   # (D,)  output, signed
