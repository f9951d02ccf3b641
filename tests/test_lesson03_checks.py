"""The lesson 03 graders: every known mistake gets its own diagnosis, and correct answers in several styles pass."""
import math

import numpy as np
import pytest

from helpers.checks import check_count_ffn_params, check_ffn_batched, check_ffn_chunked
from helpers.checks import lesson03
from helpers.ffn import ffn, relu


def verdict(check, fn, capsys):
    result = check(fn)
    return result, capsys.readouterr().out


# --------------------------------------------------------------------------------------------------------
# ffn_batched
# --------------------------------------------------------------------------------------------------------
def batched_three_lines(x, W1, b1, W2, b2):
    h = x @ W1 + b1
    h = relu(h)
    return h @ W2 + b2


def batched_maximum(x, W1, b1, W2, b2):
    return np.maximum(np.matmul(x, W1) + b1, 0) @ W2 + b2


def batched_einsum(x, W1, b1, W2, b2):
    h = np.einsum("td,df->tf", x, W1) + b1
    return np.einsum("tf,fd->td", np.where(h > 0, h, 0), W2) + b2


def batched_column_layout(x, W1, b1, W2, b2):
    h = W1.T @ x.T + b1[:, None]                        # (d_ff, T): tokens as columns
    return (W2.T @ h.clip(min=0) + b2[:, None]).T


def batched_in_place(x, W1, b1, W2, b2):
    h = np.dot(x, W1)
    h += b1
    np.maximum(h, 0, out=h)
    y = np.dot(h, W2)
    y += b2
    return y


def batched_per_token_loop(x, W1, b1, W2, b2):
    rows = []
    for t in range(x.shape[0]):
        h = np.maximum(x[t] @ W1 + b1, 0)
        rows.append(h @ W2 + b2)
    return np.stack(rows)


def batched_comprehension(x, W1, b1, W2, b2):
    return np.array([relu(row @ W1 + b1) @ W2 + b2 for row in x])


@pytest.mark.parametrize("fn", [batched_three_lines, batched_maximum, batched_einsum, batched_column_layout,
                                batched_in_place, ffn])
def test_batched_correct_vectorised_styles_pass_without_a_note(fn, capsys):
    ok, out = verdict(check_ffn_batched, fn, capsys)
    assert ok, out
    assert "all 4 cases pass" in out and "Note" not in out


@pytest.mark.parametrize("fn", [batched_per_token_loop, batched_comprehension])
def test_batched_per_token_loop_passes_with_a_note(fn, capsys):
    ok, out = verdict(check_ffn_batched, fn, capsys)
    assert ok, out
    assert "all 4 cases pass" in out
    assert "Note: correct, but your function runs Python code for every token" in out


def batched_with_the_residual(x, W1, b1, W2, b2):
    y = ffn(x, W1, b1, W2, b2)
    y += x                                               # x + FFN(x): the block's job, not the FFN's
    return y


WRONG_BATCHED = {
    "weights used transposed, in the W @ x layout": [
        lambda x, W1, b1, W2, b2: relu(x @ W1.T + b1) @ W2.T + b2,
        lambda x, W1, b1, W2, b2: (W2 @ relu(W1 @ x.T + b1[:, None]) + b2[:, None]).T,
    ],
    "ReLU applied after W2 as well": [lambda x, W1, b1, W2, b2: relu(relu(x @ W1 + b1) @ W2 + b2)],
    "ReLU moved to after W2 (none between the two matrices)": [
        lambda x, W1, b1, W2, b2: np.maximum((x @ W1 + b1) @ W2 + b2, 0)],
    "ReLU applied before adding b1": [lambda x, W1, b1, W2, b2: (relu(x @ W1) + b1) @ W2 + b2],
    "no activation at all": [lambda x, W1, b1, W2, b2: (x @ W1 + b1) @ W2 + b2],
    "both biases left out": [lambda x, W1, b1, W2, b2: relu(x @ W1) @ W2],
    "b1 left out": [lambda x, W1, b1, W2, b2: relu(x @ W1) @ W2 + b2],
    "b2 left out": [lambda x, W1, b1, W2, b2: relu(x @ W1 + b1) @ W2],
    "x added to the output": [lambda x, W1, b1, W2, b2: x + relu(x @ W1 + b1) @ W2 + b2,
                              batched_with_the_residual],
}


@pytest.mark.parametrize("name, fn", [(n, f) for n, fs in WRONG_BATCHED.items() for f in fs])
def test_batched_each_mistake_gets_its_own_diagnosis(name, fn, capsys):
    ok, out = verdict(check_ffn_batched, fn, capsys)
    assert not ok
    assert f"Likely mistake: {name}." in out, out
    assert out.count("Likely mistake") == 1


def test_mistakes_are_told_apart_by_the_cases():
    """No two mutants of a grader give the same results on every case, so each diagnosis is unambiguous."""
    for cases, mistakes in [(lesson03._batched_cases(), lesson03._BATCHED_MISTAKES),
                            (lesson03._count_cases(), lesson03._COUNT_MISTAKES),
                            (lesson03._chunked_cases(), lesson03._CHUNKED_MISTAKES)]:
        signatures = []
        for mistake in mistakes:
            results = []
            for case in cases:
                try:
                    results.append(np.asarray(mistake.fn(*case.args.values())).tobytes())
                except ValueError:
                    results.append(b"raised")
            signatures.append(tuple(results))
        assert len(set(signatures)) == len(signatures)


def test_batched_float64_from_float32_is_named(capsys):
    def loop_into_zeros(x, W1, b1, W2, b2):
        y = np.zeros((x.shape[0], W2.shape[1]))          # float64 whatever x is
        y[:] = relu(x @ W1 + b1) @ W2 + b2
        return y
    ok, out = verdict(check_ffn_batched, loop_into_zeros, capsys)
    assert not ok
    assert "returned dtype float64 from float32 inputs" in out and "dtype=x.dtype" in out
    assert "1 of 4 cases failed" in out                  # only the float32 case fails


@pytest.mark.parametrize("fn, message", [
    (lambda x, W1, b1, W2, b2: relu(x @ W1 + b1), "the second matrix W2 was not applied"),
    (lambda x, W1, b1, W2, b2: np.max(x @ W1 + b1, 0) @ W2 + b2, "np.max(h, 0)"),
    (lambda x, W1, b1, W2, b2: (relu(x @ W1 + b1) @ W2 + b2).T, "That is the output transposed"),
    (lambda x, W1, b1, W2, b2: list(relu(x @ W1 + b1) @ W2 + b2), "np.stack(rows)"),
    (lambda x, W1, b1, W2, b2: None, "returned None"),
    (lambda x, W1, b1, W2, b2: (relu(x @ W1 + b1) @ W2 + b2).tolist(), "returned a list"),
    (lambda x, W1, b1, W2, b2: np.full((x.shape[0], W2.shape[1]), np.nan, x.dtype), "NaN or infinity"),
])
def test_batched_wrong_kinds_and_shapes_get_clear_messages(fn, message, capsys):
    ok, out = verdict(check_ffn_batched, fn, capsys)
    assert not ok
    assert message in out, out


def test_batched_stub_exception_mutation_and_non_function(capsys):
    def stub(x, W1, b1, W2, b2):
        raise NotImplementedError("your code here")

    def raises(x, W1, b1, W2, b2):
        raise ValueError("boom")

    def mutates(x, W1, b1, W2, b2):
        y = ffn(x, W1, b1, W2, b2)
        x[0] = 0
        return y

    ok, out = verdict(check_ffn_batched, stub, capsys)
    assert not ok and "not implemented yet" in out and "\u2718" not in out
    ok, out = verdict(check_ffn_batched, raises, capsys)
    assert not ok and "raised ValueError: boom" in out and "line 2 of raises" in out
    ok, out = verdict(check_ffn_batched, mutates, capsys)
    assert not ok and "changed its input `x` in place" in out
    ok, out = verdict(check_ffn_batched, np.zeros((2, 2)), capsys)
    assert not ok and "expected a function" in out


def test_python_steps_grow_with_tokens_only_for_loops():
    small = tuple(lesson03._ffn_case("", 1, T=1, d=4, d_ff=8).args.values())
    big = tuple(lesson03._ffn_case("", 1, T=40, d=4, d_ff=8).args.values())
    vectorised = [lesson03.python_steps(batched_three_lines, args) for args in (small, big)]
    looped = [lesson03.python_steps(batched_per_token_loop, args) for args in (small, big)]
    assert vectorised[0] == vectorised[1]
    assert looped[1] - looped[0] >= 39
    assert lesson03.python_steps(lambda *a: 1 / 0, small) is None


# --------------------------------------------------------------------------------------------------------
# count_ffn_params
# --------------------------------------------------------------------------------------------------------
def count_plain(d, d_ff, bias=True):
    return 2 * d * d_ff + (d + d_ff if bias else 0)


def count_by_shapes(d, d_ff, bias=True):
    shapes = [(d, d_ff), (d_ff, d)] + ([(d_ff,), (d,)] if bias else [])
    return sum(math.prod(shape) for shape in shapes)


def count_numpy(d, d_ff, bias=True):
    sizes = np.array([d * d_ff, d_ff * d, d_ff * bias, d * bias])
    return sizes.sum()                                   # an np.int64


def count_with_ifs(d, d_ff, bias=True):
    total = 0
    for rows, cols in ((d, d_ff), (d_ff, d)):
        total += rows * cols
        if bias:
            total += cols
    return total


@pytest.mark.parametrize("fn", [count_plain, count_by_shapes, count_numpy, count_with_ifs])
def test_count_correct_styles_pass(fn, capsys):
    ok, out = verdict(check_count_ffn_params, fn, capsys)
    assert ok, out


@pytest.mark.parametrize("mistake", lesson03._COUNT_MISTAKES, ids=lambda m: m.name)
def test_count_each_mistake_gets_its_own_diagnosis(mistake, capsys):
    ok, out = verdict(check_count_ffn_params, mistake.fn, capsys)
    assert not ok
    assert f"Likely mistake: {mistake.name}." in out, out


def test_count_written_independently_of_the_mutants(capsys):
    """The same mistakes written the way a learner would, not copied from the grader."""
    ok, out = verdict(check_count_ffn_params, lambda d, d_ff, bias=True: d * d_ff * 2, capsys)
    assert "Likely mistake: the biases forgotten." in out
    ok, out = verdict(check_count_ffn_params, lambda d, d_ff, bias=True: d * d_ff + d_ff * d + d_ff + d, capsys)
    assert "Likely mistake: biases counted even when bias=False." in out
    ok, out = verdict(check_count_ffn_params, lambda d, d_ff, bias=True: (d + 1) * d_ff * 2 if bias else 2 * d * d_ff,
                      capsys)
    assert "Likely mistake: both biases given the hidden width d_ff." in out


@pytest.mark.parametrize("fn, message", [
    (lambda d, d_ff, bias=True: 2 * d * d_ff / 1 + (d + d_ff) * bias, "returned the float"),
    (lambda d, d_ff, bias=True: None, "returned None"),
    (lambda d, d_ff, bias=True: (2 * d * d_ff, d + d_ff), "return one int"),
    (lambda d, d_ff, bias=True: True, "a truth value"),
    (lambda d, d_ff, bias=True: "4,722,432", "return one int"),
])
def test_count_wrong_kinds_get_clear_messages(fn, message, capsys):
    ok, out = verdict(check_count_ffn_params, fn, capsys)
    assert not ok
    assert message in out, out


def count_without_bias(d, d_ff):
    return d * d_ff + d_ff + d_ff * d + d


def count_bias_without_default(d, d_ff, bias):
    return 2 * d * d_ff + (d + d_ff if bias else 0)


@pytest.mark.parametrize("fn, message", [
    (count_without_bias, "count_ffn_params: your function takes no third argument, `bias`"),
    (count_bias_without_default, "count_ffn_params: your `bias` argument has no default"),
])
def test_count_a_signature_without_bias_or_its_default_is_named(fn, message, capsys):
    ok, out = verdict(check_count_ffn_params, fn, capsys)
    assert not ok
    assert message in out and "def count_ffn_params(d, d_ff, bias=True):" in out, out
    assert "Hint" not in out and "TypeError" not in out and out.count("\n") == 1   # one line, no generic hint


def test_count_stub_and_exception(capsys):
    def stub(d, d_ff, bias=True):
        raise NotImplementedError

    ok, out = verdict(check_count_ffn_params, stub, capsys)
    assert not ok and "not implemented yet" in out
    ok, out = verdict(check_count_ffn_params, lambda d, d_ff, bias=True: d // 0, capsys)
    assert not ok and "raised ZeroDivisionError" in out


# --------------------------------------------------------------------------------------------------------
# ffn_chunked
# --------------------------------------------------------------------------------------------------------
def chunked_preallocated(x, W1, b1, W2, b2, chunk):
    y = np.empty((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for s in range(0, x.shape[0], chunk):
        y[s:s + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2)
    return y


def chunked_concatenate(x, W1, b1, W2, b2, chunk):
    return np.concatenate([ffn(x[s:s + chunk], W1, b1, W2, b2) for s in range(0, len(x), chunk)])


def chunked_array_split(x, W1, b1, W2, b2, chunk):
    pieces = np.array_split(x, range(chunk, len(x), chunk))
    return np.vstack([relu(p @ W1 + b1) @ W2 + b2 for p in pieces])


def chunked_while(x, W1, b1, W2, b2, chunk):
    out, start = [], 0
    while start < len(x):
        out.append(batched_three_lines(x[start:start + chunk], W1, b1, W2, b2))
        start += chunk
    return np.concatenate(out)


@pytest.mark.parametrize("fn", [chunked_preallocated, chunked_concatenate, chunked_array_split, chunked_while])
def test_chunked_correct_styles_pass(fn, capsys):
    ok, out = verdict(check_ffn_chunked, fn, capsys)
    assert ok, out
    assert "memory measured" in out


def test_chunked_dropping_the_last_partial_chunk_is_named(capsys):
    def drops(x, W1, b1, W2, b2, chunk):
        return np.concatenate([ffn(x[i * chunk:(i + 1) * chunk], W1, b1, W2, b2)
                               for i in range(max(1, len(x) // chunk))])
    ok, out = verdict(check_ffn_chunked, drops, capsys)
    assert not ok
    assert "The last 2 tokens are missing: the last, shorter chunk was dropped" in out
    assert "The last token is missing" in out              # 9 tokens in chunks of 4


@pytest.mark.parametrize("mistake", lesson03._CHUNKED_MISTAKES, ids=lambda m: m.name)
def test_chunked_each_mistake_gets_its_own_diagnosis(mistake, capsys):
    ok, out = verdict(check_ffn_chunked, mistake.fn, capsys)
    assert not ok
    assert f"Likely mistake: {mistake.name}." in out, out


def test_chunked_zero_rows_written_by_a_learner(capsys):
    def leaves_zeros(x, W1, b1, W2, b2, chunk):
        y = np.zeros((x.shape[0], W2.shape[1]), dtype=x.dtype)
        for i in range(x.shape[0] // chunk):
            y[i * chunk:(i + 1) * chunk] = ffn(x[i * chunk:(i + 1) * chunk], W1, b1, W2, b2)
        return y
    ok, out = verdict(check_ffn_chunked, leaves_zeros, capsys)
    assert not ok
    assert "Likely mistake: the last, shorter chunk never computed (its rows left at zero)." in out


def chunked_einsum_and_dot(x, W1, b1, W2, b2, chunk):
    rows = []
    for s in range(0, len(x), chunk):
        h = np.einsum("td,df->tf", x[s:s + chunk], W1) + b1
        rows.append(np.dot(np.maximum(h, 0), W2) + b2)
    return np.vstack(rows)


def chunked_column_layout(x, W1, b1, W2, b2, chunk):
    pieces = []
    for s in range(0, len(x), chunk):
        h = np.maximum(W1.T @ x[s:s + chunk].T + b1[:, None], 0)       # (d_ff, chunk): tokens as columns
        pieces.append((W2.T @ h + b2[:, None]).T)
    return np.concatenate(pieces)


def chunked_reverse_order(x, W1, b1, W2, b2, chunk):
    y = np.empty((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for s in reversed(range(0, len(x), chunk)):                      # the last, shorter chunk first
        y[s:s + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2)
    return y


def chunked_plain_copy_of_w1(x, W1, b1, W2, b2, chunk):
    W1 = np.asarray(W1)                                               # a plain array: the check cannot follow
    return np.concatenate([ffn(x[s:s + chunk], W1, b1, W2, b2) for s in range(0, len(x), chunk)])


def chunked_dot_methods(x, W1, b1, W2, b2, chunk):
    y = np.empty((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for s in range(0, len(x), chunk):
        h = W1.T.dot(x[s:s + chunk].T).T + b1                        # W1's own .dot method
        y[s:s + chunk] = np.maximum(h, 0).dot(W2) + b2
    return y


@pytest.mark.parametrize("fn", [chunked_einsum_and_dot, chunked_column_layout, chunked_reverse_order,
                                chunked_plain_copy_of_w1, chunked_dot_methods])
def test_chunked_more_correct_styles_pass(fn, capsys):
    ok, out = verdict(check_ffn_chunked, fn, capsys)
    assert ok, out


def chunked_whole_sequence(x, W1, b1, W2, b2, chunk):
    y = ffn(x, W1, b1, W2, b2)
    return np.concatenate([y[s:s + chunk] for s in range(0, len(y), chunk)])


def chunked_array_split_into_chunk_pieces(x, W1, b1, W2, b2, chunk):
    return np.concatenate([ffn(piece, W1, b1, W2, b2) for piece in np.array_split(x, chunk)])


def chunked_overlapping_windows(x, W1, b1, W2, b2, chunk):
    y = np.empty((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for s in range(x.shape[0]):                                       # a window at every token
        y[s:s + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2)
    return y


def chunked_one_token_at_a_time(x, W1, b1, W2, b2, chunk):
    return np.stack([relu(token @ W1 + b1) @ W2 + b2 for token in x])


def chunked_each_chunk_twice(x, W1, b1, W2, b2, chunk):
    y = np.empty((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for s in range(0, len(x), chunk):
        d_ff = (x[s:s + chunk] @ W1).shape[1]                         # a product just to read a size
        y[s:s + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2)
    return y


def chunked_half_chunks(x, W1, b1, W2, b2, chunk):
    step = max(1, chunk // 2)
    return np.concatenate([ffn(x[s:s + step], W1, b1, W2, b2) for s in range(0, len(x), step)])


CHUNKING_SLIPS = {"whole": "went through at once", "split": "np.array_split(x, chunk) cuts x into chunk pieces",
                  "overlap": "the windows overlap", "tokens": "one token at a time, whatever chunk is",
                  "repeat": "some tokens were computed more than once", "sizes": "every chunk should hold chunk tokens"}


@pytest.mark.parametrize("fn, kind, failed, also", [
    (chunked_whole_sequence, "whole", 5, set()),
    (chunked_array_split_into_chunk_pieces, "split", 6, {"whole"}),   # array_split(x, 1) is the whole sequence
    (chunked_overlapping_windows, "overlap", 5, set()),
    (chunked_one_token_at_a_time, "tokens", 5, set()),
    (chunked_each_chunk_twice, "repeat", 6, set()),
    (chunked_half_chunks, "sizes", 5, set()),
])
def test_chunked_right_numbers_from_the_wrong_chunks_are_named(fn, kind, failed, also, capsys):
    ok, out = verdict(check_ffn_chunked, fn, capsys)
    assert not ok
    assert f"{failed} of 6 cases failed" in out, out
    assert out.count(": your function gives the right numbers, but its products with W1 took") == failed, out
    assert out.count(CHUNKING_SLIPS[kind]) == 1 and "(see above)" in out, out   # explained once, then referred to
    for other, phrase in CHUNKING_SLIPS.items():
        if other != kind and other not in also:
            assert phrase not in out, (other, out)


def test_chunked_chunks_of_the_right_size_that_keep_every_hidden_row_fail_on_memory(capsys):
    def keeps_hidden_rows(x, W1, b1, W2, b2, chunk):
        hidden = [relu(x[s:s + chunk] @ W1 + b1) for s in range(0, len(x), chunk)]   # all kept alive
        return np.concatenate([h @ W2 + b2 for h in hidden])
    ok, out = verdict(check_ffn_chunked, keeps_hidden_rows, capsys)
    assert not ok
    assert "gives the right numbers but held" in out and "whole (T, d_ff) hidden layer" in out
    assert "1 of 6 cases failed" in out


def test_the_token_counter_sees_products_in_every_layout_and_hands_back_plain_arrays():
    W1 = np.arange(12.0).reshape(3, 4).view(lesson03._TokenCounter)   # d = 3, d_ff = 4
    W1.products, W1.d_ff, W1.weight_shape = [], 4, (3, 4)
    x = np.ones((6, 3))
    results = [x @ W1, np.matmul(x[:2], W1), np.dot(x[0], W1), np.einsum("td,df->tf", x[:3], W1),
               W1.T @ x[:4].T, W1.T.dot(x[:5].T), np.inner(x[:2], W1.T)]
    assert W1.products == [6, 2, 1, 3, 4, 5, 2]
    assert all(type(r) is np.ndarray for r in results)
    assert np.array_equal(results[0], x @ np.arange(12.0).reshape(3, 4))
    W1 + 1.0, W1 * 2.0, W1[:2] @ np.ones((4, 2)), np.linalg.multi_dot([x, W1, np.ones((4, 2))])
    assert W1.products == [6, 2, 1, 3, 4, 5, 2]                      # not products that make hidden rows
    assert repr(W1) == repr(np.arange(12.0).reshape(3, 4))            # printing W1 shows a plain array


@pytest.mark.parametrize("fn, message", [
    (lambda x, W1, b1, W2, b2, chunk: [ffn(x[s:s + chunk], W1, b1, W2, b2) for s in range(0, len(x), chunk)],
     "np.concatenate(chunks)"),
    (lambda x, W1, b1, W2, b2, chunk: None, "returned None"),
    (lambda x, W1, b1, W2, b2, chunk: chunked_preallocated(x, W1, b1, W2, b2, chunk).astype(np.float64),
     "returned dtype float64 from float32 inputs"),
    (lambda x, W1, b1, W2, b2, chunk: np.concatenate(
        [ffn(x[s:s + chunk], W1, b1, W2, b2) for s in range(0, len(x), max(1, chunk // 2))]), "expected"),
])
def test_chunked_wrong_kinds_get_clear_messages(fn, message, capsys):
    ok, out = verdict(check_ffn_chunked, fn, capsys)
    assert not ok
    assert message in out, out


def test_chunked_stub_exception_and_non_function(capsys):
    def stub(x, W1, b1, W2, b2, chunk):
        raise NotImplementedError("your code here")

    def raises(x, W1, b1, W2, b2, chunk):
        raise IndexError("off the end")

    ok, out = verdict(check_ffn_chunked, stub, capsys)
    assert not ok and "not implemented yet" in out
    ok, out = verdict(check_ffn_chunked, raises, capsys)
    assert not ok and "raised IndexError: off the end" in out
    ok, out = verdict(check_ffn_chunked, "ffn_chunked", capsys)
    assert not ok and "expected a function" in out
