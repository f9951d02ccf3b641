"""The holes trial learners found (issue 21, section 3): each answer that got through, or got a poor message,
now fails with a specific one."""
import warnings

import numpy as np
import pytest

import bank_named
from helpers import checks
from helpers.checks import lesson01
from helpers.ffn import ffn, relu, softmax


@pytest.fixture(autouse=True)
def not_grading(monkeypatch):
    for name in ("FFN_GRADING", "NBGRADER_EXECUTION"):
        monkeypatch.delenv(name, raising=False)


def graded(monkeypatch, check, fn):
    monkeypatch.setenv("FFN_GRADING", "1")
    try:
        return check(fn)
    finally:
        monkeypatch.delenv("FFN_GRADING")


def test_a_table_of_firing_units_public_answers_fails_when_graded(monkeypatch, capsys):
    table = {repr(np.asarray(c.args["x"], dtype=float).tolist()): lesson01._reference_firing(*c.args.values())
             for c in lesson01._firing_cases()}

    def firing_units(x, W1, b1):
        return table.get(repr(np.asarray(x, dtype=float).tolist()), [])
    assert checks.check_firing_units(firing_units)                  # every public case, by heart
    verdict = graded(monkeypatch, checks.check_firing_units, firing_units)
    assert not verdict and verdict.hidden == 3 and verdict.hidden_passed == 0, capsys.readouterr().out


def test_matvec_of_the_first_three_rows_fails_when_graded(monkeypatch):
    first_three = bank_named._matvec_with(first_rows=3)
    verdict = graded(monkeypatch, checks.check_matvec, first_three)
    assert not verdict and verdict.hidden_passed == 0


def test_a_relu_backward_for_2d_input_only_fails_in_public(capsys):
    def relu_backward(z, dh):
        return np.array([[d * (t > 0) for t, d in zip(zr, dr)] for zr, dr in zip(z, dh)])
    verdict = checks.check_relu_backward(relu_backward)
    out = capsys.readouterr().out
    assert not verdict and "(B, T, d_ff)" in out, out


@pytest.mark.parametrize("whole", [np.copy, np.ascontiguousarray])
def test_ffn_as_sum_with_w2_copied_whole_fails(whole, capsys):
    def ffn_as_sum(x, W1, b1, W2, b2):
        return np.maximum(x @ W1 + b1, 0) @ whole(W2) + b2
    verdict = checks.check_ffn_as_sum(ffn_as_sum)
    assert not verdict and verdict.mistake.startswith("W2 multiplied as a whole"), capsys.readouterr().out


def _route(logits, k):
    experts = np.argsort(-logits, axis=-1, kind="stable")[:, :k]
    weights = softmax(np.take_along_axis(logits, experts, axis=-1))
    return experts, weights.astype(np.float32)


@pytest.mark.parametrize("check, fn", [
    (checks.check_collapse, lambda W1, b1, W2, b2: ((W1 @ W2).astype(np.float32), (b1 @ W2 + b2).astype(np.float32))),
    (checks.check_route, _route),
    (checks.check_residual_collapse, lambda W1, W2: (np.eye(len(W1)) + W1 @ W2).astype(np.float32)),
    (checks.check_ffn_as_sum, lambda x, W1, b1, W2, b2: (np.maximum(x @ W1 + b1, 0) * W2.T).sum(axis=1)
     .astype(np.float32) + b2.astype(np.float32)),
    (checks.check_moe_forward, lambda x, W_router, experts, k: bank_named.moe_by_expert(x, W_router, experts, k)
     .astype(np.float32)),
])
def test_a_float32_result_is_told_so_and_what_to_change(check, fn, capsys):
    """The printed numbers look the same; the note names the dtype and the fix, whatever the check."""
    verdict = check(fn)
    out = capsys.readouterr().out
    told = "keep float64" in out.lower() or "keep x's dtype" in out.lower()
    assert not verdict and "float32" in verdict.mistake and told, out


def test_a_dropped_chunk_in_np_empty_shows_no_warning_of_the_checks_own():
    """Rows never written hold whatever was in memory, huge numbers included: the check's comparisons of them
    warn of nothing (warnings are errors here)."""
    def ffn_chunked(x, W1, b1, W2, b2, chunk):
        y = np.full((x.shape[0], W2.shape[1]), 1e308, dtype=x.dtype)     # leftovers at their worst
        for s in range(0, len(x) - chunk + 1, chunk):
            y[s:s + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2)
        return y
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not checks.check_ffn_chunked(ffn_chunked)


def test_the_learners_own_warnings_still_show():
    def relu_backward(z, dh):
        return dh * (z > 0) + np.float64(1e308) * 10 * 0     # an overflow of the learner's own
    with pytest.warns(RuntimeWarning):
        checks.check_relu_backward(relu_backward)


def test_ffn_batched_changing_x_is_told_so_first(capsys):
    def ffn_batched(x, W1, b1, W2, b2):
        x *= 1.0000001
        return relu(x @ W1 + b1) @ W2 + b2
    verdict = checks.check_ffn_batched(ffn_batched)
    out = capsys.readouterr().out
    assert not verdict and "changed its input `x` in place" in verdict.mistake, out
