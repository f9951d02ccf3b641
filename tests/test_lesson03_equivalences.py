"""What lesson 03 teaches, checked against independent definitions: the FFN is position-wise (four ways give
the same numbers, no token sees another), the two weight layouts agree, the reference API keeps shapes and
dtypes, and the parameter counts match numbers worked out by hand."""
import numpy as np
import pytest

from helpers.chunking import ffn_chunked
from helpers.ffn import ffn, relu
from helpers.models import GPT2_SMALL, GPT3, VASWANI_BASE
from helpers.params import attention_params, ffn_params


def ffn_one_token_by_hand(x, W1, b1, W2, b2):
    """relu(x W1 + b1) W2 + b2 for one token with Python floats and loops (W1 is d x d_ff)."""
    d, d_ff = len(x), len(b1)
    h = [max(0.0, sum(x[i] * W1[i][j] for i in range(d)) + b1[j]) for j in range(d_ff)]
    return [sum(h[j] * W2[j][k] for j in range(d_ff)) + b2[k] for k in range(d)]


def conv_width_one(X, K, b):
    """A convolution along the sequence written out element by element; K is (1, d_in, d_out)."""
    T, (_, d_in, d_out) = len(X), K.shape
    Y = np.zeros((T, d_out))
    for t in range(T):
        for o in range(d_out):
            Y[t, o] = sum(X[t, i] * K[0, i, o] for i in range(d_in)) + b[o]
    return Y


@pytest.fixture
def net():
    rng = np.random.default_rng(0)
    T, d, d_ff = 9, 4, 12
    return (rng.normal(size=(T, d)), rng.normal(size=(d, d_ff)), rng.normal(size=d_ff),
            rng.normal(size=(d_ff, d)), rng.normal(size=d))


def test_four_ways_agree_with_the_definition(net):
    X, W1, b1, W2, b2 = net
    by_hand = np.array([ffn_one_token_by_hand(x, W1.tolist(), b1.tolist(), W2.tolist(), b2.tolist())
                        for x in X.tolist()])
    loop = np.stack([ffn(X[t], W1, b1, W2, b2) for t in range(len(X))])
    batched = ffn(X, W1, b1, W2, b2)
    conv = conv_width_one(np.maximum(conv_width_one(X, W1[None], b1), 0), W2[None], b2)
    chunks = np.concatenate([ffn(X[s:s + 4], W1, b1, W2, b2) for s in range(0, len(X), 4)])
    for y in (loop, batched, conv, chunks, ffn_chunked(X, W1, b1, W2, b2, 4)):
        assert np.allclose(y, by_hand, rtol=1e-12, atol=1e-12)


def test_shuffling_tokens_shuffles_outputs(net):
    X, *params = net
    perm = np.random.default_rng(1).permutation(len(X))
    assert not np.array_equal(perm, np.arange(len(X)))
    assert np.allclose(ffn(X[perm], *params), ffn(X, *params)[perm], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("t", [0, 4, 8])
def test_changing_one_token_changes_only_its_row(net, t):
    X, *params = net
    X2 = X.copy()
    X2[t] += 1.0
    changed = np.abs(ffn(X2, *params) - ffn(X, *params)).max(axis=1) > 1e-12
    assert changed.tolist() == [i == t for i in range(len(X))]


def test_column_and_row_layouts_give_the_same_numbers(net):
    X, W1, b1, W2, b2 = net
    W1_col, W2_col = np.ascontiguousarray(W1.T), np.ascontiguousarray(W2.T)     # (d_ff, d), (d, d_ff)
    Y_col = W2_col @ relu(W1_col @ X.T + b1[:, None]) + b2[:, None]              # (d, T)
    assert np.allclose(Y_col.T, ffn(X, W1, b1, W2, b2), rtol=1e-12, atol=1e-12)


def test_linear_and_conv1d_storage_convert_by_a_transpose(net):
    X, W1, b1, _, _ = net
    conv1d_weight = W1                                  # (in, out), as GPT-2's checkpoints store it
    linear_weight = conv1d_weight.T                     # (out, in), as torch.nn.Linear stores it
    assert linear_weight.shape == (W1.shape[1], W1.shape[0])
    assert np.allclose(X @ conv1d_weight + b1, X @ linear_weight.T + b1)
    square = np.random.default_rng(2).normal(size=(4, 4))
    assert not np.allclose(X @ square, X @ square.T)    # a missed transpose of a square matrix goes unnoticed


@pytest.mark.parametrize("shape", [(4,), (9, 4), (2, 9, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ffn_api_keeps_leading_dimensions_and_dtype(net, shape, dtype):
    _, W1, b1, W2, b2 = (a.astype(dtype) for a in net)
    x = np.random.default_rng(3).normal(size=shape).astype(dtype)
    y = ffn(x, W1, b1, W2, b2)
    assert y.shape == shape and y.dtype == dtype
    flat = x.reshape(-1, shape[-1]).astype(float)
    by_hand = [ffn_one_token_by_hand(t, W1.tolist(), b1.tolist(), W2.tolist(), b2.tolist()) for t in flat.tolist()]
    tol = 1e-4 if dtype == np.float32 else 1e-12
    assert np.allclose(y.reshape(-1, shape[-1]), by_hand, rtol=tol, atol=tol)


def test_ffn_does_not_change_its_inputs(net):
    copies = [a.copy() for a in net]
    ffn(*net)
    assert all(np.array_equal(a, c) for a, c in zip(net, copies))


def test_parameter_counts_worked_out_by_hand():
    assert (GPT2_SMALL["d"], GPT2_SMALL["d_ff"]) == (768, 3072)
    assert (VASWANI_BASE["d"], VASWANI_BASE["d_ff"]) == (512, 2048)
    assert (GPT3["d"], GPT3["d_ff"]) == (12288, 49152)
    assert 768 * 3072 + 3072 == 2_362_368 and 3072 * 768 + 768 == 2_360_064
    assert ffn_params(768, 3072) == 4_722_432
    assert attention_params(768) == 2_359_296
    assert ffn_params(512, 2048) == 2_099_712 and ffn_params(512, 2048, bias=False) == 2_097_152
    assert ffn_params(12288, 49152) == 1_208_020_992 and attention_params(12288) == 603_979_776
    for m in (VASWANI_BASE, GPT2_SMALL, GPT3):
        share = ffn_params(m["d"], m["d_ff"]) / (ffn_params(m["d"], m["d_ff"]) + attention_params(m["d"]))
        assert abs(share - 2 / 3) < 1e-3
