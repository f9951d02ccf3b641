"""The lesson 03 graders against banks of answers written the way a learner writes them: right ones in several
styles pass; every wrong one fails with its own named mistake or a specific problem, never a bare expected/got."""
import math
import re

import numpy as np
import pytest

from helpers.checks import check_count_ffn_params, check_ffn_batched, check_ffn_chunked
from helpers.checks import lesson03
from helpers.ffn import ffn, relu
from hidden_under_secrets import (SECRETS, assert_drawn_afresh, assert_forgery_fails_under_every_secret, drawn,
                                  graded_under, memorising_forgery, sizes)


@pytest.fixture(autouse=True)
def not_grading(monkeypatch):
    """The learner's view: hidden cases do not run (tests that grade set the variable themselves)."""
    for name in ("FFN_GRADING", "NBGRADER_EXECUTION"):
        monkeypatch.delenv(name, raising=False)


def verdict(check, fn, capsys):
    result = check(fn)
    return result, capsys.readouterr().out


def bare_expected_got(result):
    """True when a failed check's recorded mistake is only a comparison of numbers, with no named mistake."""
    return bool(re.search(r": expected .*, got ", result.mistake)) and "should be" not in result.mistake


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
                                batched_in_place])
def test_batched_correct_vectorised_styles_pass_without_a_note(fn, capsys):
    ok, out = verdict(check_ffn_batched, fn, capsys)
    assert ok, out
    assert "all 6 public cases pass" in out and "loop" not in out


def batched_apply_along_axis(x, W1, b1, W2, b2):
    return np.apply_along_axis(lambda row: relu(row @ W1 + b1) @ W2 + b2, 1, x)


def batched_loop_after_one_product(x, W1, b1, W2, b2):
    h = relu(x @ W1 + b1)                                # one product for every token ...
    return np.stack([row @ W2 + b2 for row in h])        # ... then a loop over the tokens all the same


def batched_dot_method_loop(x, W1, b1, W2, b2):
    return np.array([np.maximum(row.dot(W1) + b1, 0).dot(W2) + b2 for row in x])   # row.dot(W1): unrecorded


def own_ffn(x, W1, b1, W2, b2):
    """A learner's own forward pass (calling the course's helpers.ffn.ffn would be refused by the check)."""
    return np.maximum(x @ W1 + b1, 0) @ W2 + b2


def batched_map(x, W1, b1, W2, b2):
    return np.array(list(map(lambda row: own_ffn(row, W1, b1, W2, b2), x)))


def batched_in_two_halves(x, W1, b1, W2, b2):
    half = (len(x) + 1) // 2
    return np.concatenate([own_ffn(x[:half], W1, b1, W2, b2), own_ffn(x[half:], W1, b1, W2, b2)])


@pytest.mark.parametrize("fn, how", [
    (batched_per_token_loop, "products with W1, one token each"),
    (batched_comprehension, "products with W1, one token each"),
    (batched_apply_along_axis, "products with W1, one token each"),
    (batched_map, "products with W1, one token each"),
    (batched_loop_after_one_product, "Python steps for 1 token"),
    (batched_dot_method_loop, "products with W1, one token each"),     # row.dot(W1): x's rows are watched
    (batched_in_two_halves, "products with W1, of [2, 1] tokens"),
])
def test_batched_a_loop_over_the_tokens_fails_as_the_exercise_says(fn, how, capsys):
    """The exercise says: no Python loop over the tokens. The right numbers from a loop fail, with the rule."""
    result, out = verdict(check_ffn_batched, fn, capsys)
    assert not result
    assert "gives the right numbers but runs a Python loop over the tokens" in out and how in out, out
    assert out.count("The exercise asks for no Python loop over the tokens") == 1, out
    assert "\u2714 a single token as a (1, d) array" in out          # one token is no loop: that case passes
    assert "loop" in result.mistake and not bare_expected_got(result)


def relu_for_one_number(z):
    return z if z > 0 else 0.0                           # lesson 02's ReLU, for one float


def batched_relu_written_for_one_number(x, W1, b1, W2, b2):
    return relu_for_one_number(x @ W1 + b1) @ W2 + b2


def batched_with_the_residual(x, W1, b1, W2, b2):
    y = own_ffn(x, W1, b1, W2, b2)
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
    "Python's max() used on an array": [lambda x, W1, b1, W2, b2: max(0, x @ W1 + b1) @ W2 + b2,
                                        batched_relu_written_for_one_number],
}


@pytest.mark.parametrize("name, fn", [(n, f) for n, fs in WRONG_BATCHED.items() for f in fs])
def test_batched_each_mistake_gets_its_own_diagnosis(name, fn, capsys):
    ok, out = verdict(check_ffn_batched, fn, capsys)
    assert not ok
    assert f"Likely mistake: {name}." in out, out
    assert out.count("Likely mistake") == 1
    assert ok.mistake == name


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
                except ValueError as error:                    # the checks tell errors apart by their message
                    results.append(re.sub(r"\d+", "#", str(error)).encode())
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
    assert "1 of 6 cases failed" in out                  # only the float32 case fails


@pytest.mark.parametrize("fn, message", [
    (lambda x, W1, b1, W2, b2: np.round(relu(x @ W1 + b1) @ W2 + b2, 3), "rounded to 3 decimals"),
    (lambda x, W1, b1, W2, b2: np.round(relu(x @ W1 + b1) @ W2 + b2, 6), "rounded to 6 decimals"),
    (lambda x, W1, b1, W2, b2: (relu(x.astype(np.float32) @ W1.astype(np.float32) + b1) @ W2 + b2).astype(x.dtype),
     "part of the computation ran in lower precision"),
])
def test_batched_rounded_or_low_precision_numbers_are_named(fn, message, capsys):
    """Too-kind inputs let these pass: the dyadic cases are exact in float32 and in few decimals. The case of
    random numbers catches them, with a message that says what happened."""
    result, out = verdict(check_ffn_batched, fn, capsys)
    assert not result and message in out, out
    assert not bare_expected_got(result)


@pytest.mark.parametrize("fn, message", [
    (lambda x, W1, b1, W2, b2: relu(x @ W1 + b1), "the second matrix W2 was not applied"),
    (lambda x, W1, b1, W2, b2: np.max(x @ W1 + b1, 0) @ W2 + b2, "np.max(h, 0)"),
    (lambda x, W1, b1, W2, b2: relu(x @ W1 + b1).mean(axis=0) @ W2 + b2, "something reduced over the tokens"),
    (lambda x, W1, b1, W2, b2: (relu(x @ W1 + b1) @ W2 + b2).astype(int), "returned dtype int64"),
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
    assert not bare_expected_got(ok)


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


COUNT_BANK = {   # wrong answers written the way a learner would, with what the check must say
    "the biases forgotten": lambda d, d_ff, bias=True: d * d_ff * 2,
    "biases counted even when bias=False": lambda d, d_ff, bias=True: d * d_ff + d_ff * d + d_ff + d,
    "both biases given the hidden width d_ff":
        lambda d, d_ff, bias=True: (d + 1) * d_ff * 2 if bias else 2 * d * d_ff,
    "only b1 counted of the two biases": lambda d, d_ff, bias=True: (d + 1) * d_ff + d_ff * d if bias else 2 * d * d_ff,
    "only b2 counted of the two biases": lambda d, d_ff, bias=True: d * d_ff + (d_ff + 1) * d if bias else 2 * d * d_ff,
    "bias=True and bias=False swapped": lambda d, d_ff, bias=True: 2 * d * d_ff + (d + d_ff) * (not bias),
    "attention's four d x d projections counted too":
        lambda d, d_ff, bias=True: 4 * d * d + 2 * d * d_ff + (d + d_ff) * bias,
    "d_ff assumed to be 4 * d": lambda d, d_ff, bias=True: 2 * d * (4 * d) + (d + 4 * d if bias else 0),
    "W1 counted as d x d and W2 as d_ff x d_ff": lambda d, d_ff, bias=True: d ** 2 + d_ff ** 2 + (d + d_ff) * bias,
    "only one weight matrix counted": lambda d, d_ff, bias=True: d * d_ff + (d + d_ff if bias else 0),
    "each bias counted twice": lambda d, d_ff, bias=True: 2 * d * d_ff + 2 * (d_ff + d) * bias,
}


@pytest.mark.parametrize("name", list(COUNT_BANK))
def test_count_bank_of_learner_answers_gets_named_mistakes(name, capsys):
    result, out = verdict(check_count_ffn_params, COUNT_BANK[name], capsys)
    assert not result
    assert result.mistake == name, out


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


def count_bias_default_false(d, d_ff, bias=False):
    return 2 * d * d_ff + (d + d_ff if bias else 0)


def count_bias_default_none(d, d_ff, bias=None):
    return 2 * d * d_ff + (d + d_ff if bias else 0)


@pytest.mark.parametrize("fn, shown", [(count_bias_default_false, "False"), (count_bias_default_none, "None")])
def test_count_a_default_other_than_true_is_named(fn, shown, capsys):
    """Right whenever bias is passed, so only the default tells it apart: the text says bias=True."""
    result, out = verdict(check_count_ffn_params, fn, capsys)
    assert not result
    assert f"your `bias` argument defaults to {shown}" in out and "bias=True" in out, out
    assert result.mistake.startswith("your `bias` argument defaults to")


def count_gpt2_typed_in(d, d_ff, bias=True):
    return 4_722_432                                     # GPT-2 small's count, whatever the arguments


def count_with_lesson_constants(d, d_ff, bias=True):
    d, d_ff = 768, 3072                                  # the lesson's GPT-2 sizes, in place of the arguments
    return 2 * d * d_ff + (d + d_ff if bias else 0)


def test_count_a_number_typed_in_is_named(capsys):
    result, out = verdict(check_count_ffn_params, count_gpt2_typed_in, capsys)
    assert not result and "returns 4,722,432 whatever d and d_ff are" in out, out
    result, out = verdict(check_count_ffn_params, count_with_lesson_constants, capsys)
    assert not result and "returns 4,722,432 or 4,718,592 whatever d and d_ff are" in out, out
    assert "do not overwrite them" in out and result.mistake.startswith("your function returns")


def test_count_cases_are_not_too_kind():
    """d != d_ff in every case with numbers, some d_ff other than 4d, the default exercised, both bias values."""
    cases = lesson03._count_cases()
    assert all(c.args["d"] != c.args["d_ff"] for c in cases)
    assert any(c.args["d_ff"] != 4 * c.args["d"] for c in cases if "bias" not in c.args)   # the default case
    assert {c.args.get("bias", "default") for c in cases} == {True, False, "default"}
    labels = " ".join(c.name for c in cases)
    assert "Transformer base, 512 -> 2048, with biases" in labels            # Vaswani et al. eq. 2: b1 and b2


def test_count_d_ff_taken_as_4d_fails_the_cases_that_say_another_width():
    """An answer that hard-codes d_ff = 4d fails the case labelled with another width for the same d, some case
    with biases and some without, and every hidden case (their widths are never 4d)."""
    four_d = next(m for m in lesson03._COUNT_MISTAKES if m.name == "d_ff assumed to be 4 * d").fn
    cases = lesson03._count_cases()
    failing = [c for c in cases if four_d(**c.args) != lesson03._reference_count(**c.args)]
    another = [c for c in cases if "another width" in c.name]
    assert another and all(c in failing for c in another), [c.name for c in another]
    assert {c.args.get("bias", True) for c in failing} == {True, False}
    for c in cases:
        if "another width" in c.name or "not 4d" in c.name:
            assert c.args["d_ff"] != 4 * c.args["d"], c.name
    for secret in (None,) + SECRETS:
        for case in drawn(lesson03._count_hidden, secret):
            assert four_d(**case.args) != lesson03._reference_count(**case.args), (secret, case.name)


def test_count_probe_prints_nothing_of_its_own(capsys):
    def prints_and_returns(d, d_ff, bias=True):
        print("counting", d)
        return 2 * d * d_ff + (d + d_ff if bias else 0)
    ok, out = verdict(check_count_ffn_params, prints_and_returns, capsys)
    assert ok and out.count("counting 768") == 1, out


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


def test_count_a_renamed_bias_argument_is_named(capsys):
    def count(d, d_ff, with_bias=True):
        return 2 * d * d_ff + (d + d_ff if with_bias else 0)
    ok, out = verdict(check_count_ffn_params, count, capsys)
    assert not ok and "your third argument is named `with_bias`" in out and "bias=False" in out, out


@pytest.mark.parametrize("fn", [
    lambda d, d_ff, bias=True, **kwargs: 2 * d * d_ff + (d + d_ff if bias else 0),
    lambda d, d_ff, /, bias=True: 2 * d * d_ff + (d + d_ff if bias else 0),
])
def test_count_bias_by_keyword_in_other_forms_passes(fn, capsys):
    ok, out = verdict(check_count_ffn_params, fn, capsys)
    assert ok, out


@pytest.mark.parametrize("fn", [
    lambda d, d_ff, bias=True: int(np.float32(2 * d * d_ff) + np.float32(d + d_ff if bias else 0)),
    lambda d, d_ff, bias=True: int(np.float32(d) * np.float32(d_ff) * 2 + (d + d_ff if bias else 0)),
])
def test_count_in_float32_fails_on_the_odd_count_and_is_named(fn, capsys):
    ok, out = verdict(check_count_ffn_params, fn, capsys)
    assert not ok and "float32 (or float) arithmetic lost the last digits" in out, out


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


def chunked_padded(x, W1, b1, W2, b2, chunk):
    T = len(x)                                                       # every product takes chunk tokens
    padded = np.concatenate([x, np.zeros((-T % chunk, x.shape[1]), x.dtype)])
    return np.concatenate([ffn(padded[s:s + chunk], W1, b1, W2, b2) for s in range(0, len(padded), chunk)])[:T]


def chunked_reversed(x, W1, b1, W2, b2, chunk):
    starts = list(range(0, len(x), chunk))[::-1]
    return np.concatenate([ffn(x[s:s + chunk], W1, b1, W2, b2) for s in starts][::-1])


@pytest.mark.parametrize("fn", [chunked_preallocated, chunked_concatenate, chunked_array_split, chunked_while,
                                chunked_padded, chunked_reversed])
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
    assert "Likely mistake: the last, shorter chunk never computed (its rows left as the output array began" in out


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


def chunked_whole_when_short(x, W1, b1, W2, b2, chunk):
    if len(x) <= 2 * chunk:                                          # "short enough": no chunking
        return ffn(x, W1, b1, W2, b2)
    return chunked_concatenate(x, W1, b1, W2, b2, chunk)


def chunked_capped_at_64(x, W1, b1, W2, b2, chunk):
    chunk = min(chunk, 64)
    return chunked_concatenate(x, W1, b1, W2, b2, chunk)


def chunked_half_chunks(x, W1, b1, W2, b2, chunk):
    step = max(1, chunk // 2)
    return np.concatenate([ffn(x[s:s + step], W1, b1, W2, b2) for s in range(0, len(x), step)])


CHUNKING_SLIPS = {"whole": "went through at once", "split": "np.array_split(x, chunk) cuts x into chunk pieces",
                  "overlap": "the windows overlap", "tokens": "one token at a time, whatever chunk is",
                  "repeat": "some tokens were computed more than once", "sizes": "every chunk should hold chunk tokens",
                  "capped": "halved or replaced by a number typed in"}


@pytest.mark.parametrize("fn, kind, failed, also", [
    (chunked_whole_sequence, "whole", 8, set()),
    (chunked_array_split_into_chunk_pieces, "split", 9, {"whole"}),   # array_split(x, 1) is the whole sequence
    (chunked_overlapping_windows, "overlap", 8, set()),
    (chunked_one_token_at_a_time, "tokens", 8, set()),
    (chunked_each_chunk_twice, "repeat", 9, set()),
    (chunked_half_chunks, "capped", 8, {"tokens"}),                   # half of chunk = 3 is one token
])
def test_chunked_right_numbers_from_the_wrong_chunks_are_named(fn, kind, failed, also, capsys):
    ok, out = verdict(check_ffn_chunked, fn, capsys)
    assert not ok
    assert f"{failed} of 9 cases failed" in out, out
    assert out.count(": your function gives the right numbers, but its products with W1 took") == failed, out
    assert out.count(CHUNKING_SLIPS[kind]) == 1 and "(see above)" in out, out   # explained once, then referred to
    for other, phrase in CHUNKING_SLIPS.items():
        if other != kind and other not in also:
            assert phrase not in out, (other, out)


@pytest.mark.parametrize("fn, case, phrase", [
    (chunked_whole_when_short, "7 tokens in chunks of 4", "all 7 tokens went through at once"),
    (chunked_capped_at_64, "300 tokens in chunks of 100", "chunks of 64 tokens although chunk = 100"),
])
def test_chunked_a_shortcut_or_a_cap_fails_its_own_case_and_is_named(fn, case, phrase, capsys):
    ok, out = verdict(check_ffn_chunked, fn, capsys)
    assert not ok and "1 of 9 cases failed" in out and f"\u2718 {case}" in out and phrase in out, out


def test_chunked_chunks_of_the_right_size_that_keep_every_hidden_row_fail_on_memory(capsys):
    def keeps_hidden_rows(x, W1, b1, W2, b2, chunk):
        hidden = [relu(x[s:s + chunk] @ W1 + b1) for s in range(0, len(x), chunk)]   # all kept alive
        return np.concatenate([h @ W2 + b2 for h in hidden])
    ok, out = verdict(check_ffn_chunked, keeps_hidden_rows, capsys)
    assert not ok
    assert "gives the right numbers but held" in out and "whole (T, d_ff) hidden layer" in out
    assert "1 of 9 cases failed" in out


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
        [ffn(x[s:s + chunk], W1, b1, W2, b2) for s in range(0, len(x), max(1, chunk // 2))]),
     "18 rows for 10 tokens: some tokens were computed more than once, so the slices overlap"),
    (lambda x, W1, b1, W2, b2, chunk: np.round(chunked_preallocated(x, W1, b1, W2, b2, chunk), 2),
     "rounded to 2 decimals"),
    (lambda x, W1, b1, W2, b2, chunk: np.concatenate(                # float32 inside, float64 returned
        [ffn(x[s:s + chunk].astype(np.float32), W1.astype(np.float32), b1.astype(np.float32),
             W2.astype(np.float32), b2.astype(np.float32)) for s in range(0, len(x), chunk)]).astype(x.dtype),
     "part of the computation ran in lower precision"),
])
def test_chunked_wrong_kinds_get_clear_messages(fn, message, capsys):
    ok, out = verdict(check_ffn_chunked, fn, capsys)
    assert not ok
    assert message in out, out
    assert not bare_expected_got(ok)


def chunked_joined_with_np_array(x, W1, b1, W2, b2, chunk):
    outs = []
    for s in range(0, len(x), chunk):
        outs.append(ffn(x[s:s + chunk], W1, b1, W2, b2))
    return np.array(outs)


def chunked_joined_with_np_stack(x, W1, b1, W2, b2, chunk):
    return np.stack([ffn(x[s:s + chunk], W1, b1, W2, b2) for s in range(0, len(x), chunk)])


@pytest.mark.parametrize("fn, name", [
    (chunked_joined_with_np_array, "chunks joined with np.array instead of np.concatenate"),
    (chunked_joined_with_np_stack, "chunks joined with np.stack instead of np.concatenate"),
])
def test_chunked_stacking_the_chunks_is_named(fn, name, capsys):
    result, out = verdict(check_ffn_chunked, fn, capsys)
    assert not result and result.mistake == name, out
    assert "np.concatenate(chunks)" in out                         # the 3-D shape's own hint


def chunked_step_typed_in(x, W1, b1, W2, b2, chunk):
    return np.concatenate([ffn(x[s:s + 64], W1, b1, W2, b2) for s in range(0, len(x), 64)])   # the lesson's 64


def test_chunked_a_chunk_size_typed_in_is_named(capsys):
    """The memory case uses chunk = 64, the lesson's example: the other cases tell a typed-in 64 apart."""
    result, out = verdict(check_ffn_chunked, chunked_step_typed_in, capsys)
    assert not result
    assert "\u2714 512 tokens in chunks of 64" in out
    assert "step by the argument chunk, not by a number typed in" in out, out


def chunked_slice_one_short(x, W1, b1, W2, b2, chunk):
    y = np.zeros((len(x), W2.shape[1]), dtype=x.dtype)
    for s in range(0, len(x), chunk):
        y[s:s + chunk - 1] = ffn(x[s:s + chunk - 1], W1, b1, W2, b2)     # the last token of each chunk missed
    return y


def test_chunked_wrong_rows_are_named_by_place(capsys):
    result, out = verdict(check_ffn_chunked, chunked_slice_one_short, capsys)
    assert not result
    assert ("returned wrong numbers in 2 of the 10 rows (rows [3, 7]), in chunks 0 and 1 of the 3, at the same "
            "place in each: row 3 of its chunk (its last). Row 3 should be") in out, out
    assert "in every chunk, at the same place in each: row 3 of its chunk (its last)" in out, out
    assert not bare_expected_got(result)


# The wrong index variable: a loop over (i, s) = (chunk number, first token) that uses i where s belongs.
def chunked_y_from_chunk_number(x, W1, b1, W2, b2, chunk):
    y = np.empty((x.shape[0], W2.shape[1]), dtype=x.dtype)          # rows never written hold leftovers
    for i, s in enumerate(range(0, x.shape[0], chunk)):
        y[i:i + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2)
    return y


def chunked_y_from_chunk_number_sized(x, W1, b1, W2, b2, chunk):
    y = np.full((x.shape[0], W2.shape[1]), np.nan, dtype=x.dtype)   # never broadcasts, never raises
    for i in range(-(-x.shape[0] // chunk)):
        out = ffn(x[i * chunk:(i + 1) * chunk], W1, b1, W2, b2)
        y[i:i + len(out)] = out
    return y


def chunked_y_from_chunk_number_zeros(x, W1, b1, W2, b2, chunk):
    y = np.zeros((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for i, s in enumerate(range(0, x.shape[0], chunk)):
        y[i:i + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2)
    return y


def chunked_x_from_chunk_number(x, W1, b1, W2, b2, chunk):
    y = np.empty((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for i, s in enumerate(range(0, x.shape[0], chunk)):
        y[s:s + chunk] = ffn(x[i:i + chunk], W1, b1, W2, b2)
    return y


@pytest.mark.parametrize("fn, named, message", [
    # np.empty: the rows never written hold leftovers, which no stored mistake reproduces on every failing case
    (chunked_y_from_chunk_number, None, "wrote each chunk's outputs into y from row i, the chunk's number"),
    (chunked_y_from_chunk_number_zeros, "Likely mistake: the outputs written to y[i:i + chunk]", None),
    (chunked_y_from_chunk_number_sized, None, "wrote each chunk's outputs into y from row i, the chunk's number"),
    (chunked_x_from_chunk_number, "Likely mistake: slices of x started at the chunk number i", None),
])
def test_chunked_the_chunk_number_used_for_the_first_token_is_named(fn, named, message, capsys):
    """Named when the stored mistake gives the learner's outcome on every failing case (the lines of those cases
    then show what came back, and no other cause); otherwise the failed case that shows the slip says it."""
    result, out = verdict(check_ffn_chunked, fn, capsys)
    assert not result
    if named:
        assert named in out, out
    else:   # (np.empty's leftovers vary from run to run: which rows show the slip does too)
        assert "Likely mistake" not in out and "Possibly" not in out, out
        # Repeated, the message collapses: it names the slip once and then refers to it.
        assert out.count(message) <= 3, out
    assert not bare_expected_got(result) and "chunk" in result.mistake


def test_chunked_rows_never_written_are_named_not_blamed_on_a_division(capsys):
    def last_chunk_left_empty(x, W1, b1, W2, b2, chunk):
        y = np.full((x.shape[0], W2.shape[1]), np.nan, dtype=x.dtype)    # what np.empty may hold
        for s in range(0, x.shape[0] - x.shape[0] % chunk, chunk):       # full chunks only
            y[s:s + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2)
        return y
    result, out = verdict(check_ffn_chunked, last_chunk_left_empty, capsys)
    assert not result
    assert "left 2 rows of 10 ([8, 9]) holding NaN or infinity while every other row is right" in out, out
    assert "division by zero" not in out


def test_chunked_cases_are_not_too_kind():
    cases = lesson03._chunked_cases()
    assert any(c.args["x"].shape[0] % c.args["chunk"] for c in cases)           # a shorter last chunk
    assert any(c.args["chunk"] > c.args["x"].shape[0] for c in cases)           # chunk longer than T
    assert any(c.args["chunk"] != 64 for c in cases) and any(c.args["chunk"] == 64 for c in cases)
    assert all(c.args["W1"].shape[0] != c.args["W1"].shape[1] for c in cases)   # d != d_ff
    assert {c.args["x"].dtype for c in cases} == {np.dtype(np.float32), np.dtype(np.float64)}


# --------------------------------------------------------------------------------------------------------
# hidden cases, and the banks as a whole
# --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("check, right, n_public, n_hidden", [
    (check_ffn_batched, batched_three_lines, 6, 2),
    (check_count_ffn_params, count_plain, 10, 4),
    (check_ffn_chunked, chunked_preallocated, 9, 3),
])
def test_hidden_cases_run_only_while_grading(check, right, n_public, n_hidden, capsys, monkeypatch):
    result, out = verdict(check, right, capsys)
    assert result and f"all {n_public} public cases pass" in out and result.total == n_public
    monkeypatch.setenv("FFN_GRADING", "1")
    result, out = verdict(check, right, capsys)
    assert result and result.total == n_public + n_hidden and result.hidden == n_hidden, out
    assert f"{n_hidden} of them hidden" in out


CHUNKED_BANK = (chunked_whole_sequence, chunked_array_split_into_chunk_pieces, chunked_overlapping_windows,
                chunked_one_token_at_a_time, chunked_each_chunk_twice, chunked_half_chunks,
                chunked_joined_with_np_array, chunked_joined_with_np_stack, chunked_step_typed_in,
                chunked_slice_one_short, chunked_y_from_chunk_number, chunked_y_from_chunk_number_sized,
                chunked_y_from_chunk_number_zeros, chunked_x_from_chunk_number)


def test_at_least_nine_in_ten_rejections_name_the_mistake(capsys):
    """Every wrong answer in this file's banks, run through its check: at most one in ten may be recorded with
    only an expected/got comparison."""
    bank = ([(check_ffn_batched, f) for fs in WRONG_BATCHED.values() for f in fs]
            + [(check_count_ffn_params, f) for f in COUNT_BANK.values()]
            + [(check_ffn_chunked, f) for f in CHUNKED_BANK])
    results = [check(fn) for check, fn in bank]
    capsys.readouterr()
    assert not any(results)
    bare = [r.mistake for r in results if bare_expected_got(r) or not r.mistake]
    assert len(bare) * 10 <= len(results), bare


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


# --------------------------------------------------------------------------------------------------------
# The recorder watches x and W2 as well as W1: converting W1 to a plain array hides nothing
# --------------------------------------------------------------------------------------------------------
def chunked_fixed_64_plain_w1(x, W1, b1, W2, b2, chunk):
    W1 = np.asarray(W1)
    return np.concatenate([ffn(x[s:s + 64], W1, b1, W2, b2) for s in range(0, len(x), 64)])


def chunked_one_token_plain_w1(x, W1, b1, W2, b2, chunk):
    W1 = np.array(W1, dtype=x.dtype)
    y = np.empty((len(x), W2.shape[1]), dtype=x.dtype)
    for t in range(len(x)):
        y[t] = ffn(x[t:t + 1], W1, b1, W2, b2)[0]
    return y


def chunked_half_steps_contiguous_w1(x, W1, b1, W2, b2, chunk):
    W1, step = np.ascontiguousarray(W1), max(1, chunk // 2)
    return np.concatenate([ffn(x[s:s + step], W1, b1, W2, b2) for s in range(0, len(x), step)])


def chunked_whole_when_short_plain_w1(x, W1, b1, W2, b2, chunk):
    W1 = W1 * 1
    if len(x) < 100:
        return ffn(x, W1, b1, W2, b2)
    return np.concatenate([ffn(x[s:s + chunk], W1, b1, W2, b2) for s in range(0, len(x), chunk)])


def chunked_overlapping_plain_w1(x, W1, b1, W2, b2, chunk):
    W1 = np.asarray(W1)
    y = np.empty((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for s in range(x.shape[0]):
        y[s:s + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2)
    return y


@pytest.mark.parametrize("fn, phrase", [
    (chunked_fixed_64_plain_w1, "all 10 tokens went through at once"),
    (chunked_one_token_plain_w1, "one token at a time, whatever chunk is"),
    (chunked_half_steps_contiguous_w1, "took [2, 2, 2, 2, 2] tokens where chunk = 4 asks for [4, 4, 2]"),
    (chunked_whole_when_short_plain_w1, "all 10 tokens went through at once"),
    (chunked_overlapping_plain_w1, "the windows overlap"),
])
def test_chunked_slips_fail_even_with_w1_converted_to_a_plain_array(fn, phrase, capsys):
    result, out = verdict(check_ffn_chunked, fn, capsys)
    assert not result
    assert phrase in out, out
    assert not bare_expected_got(result)


def chunked_all_converted_fixed_64(x, W1, b1, W2, b2, chunk):
    x, W1, W2 = np.asarray(x), np.asarray(W1), np.asarray(W2)
    return np.concatenate([ffn(x[s:s + 64], W1, b1, W2, b2) for s in range(0, len(x), 64)])


def chunked_all_converted_one_token(x, W1, b1, W2, b2, chunk):
    x, W1, b1, W2, b2 = (np.array(a) for a in (x, W1, b1, W2, b2))
    return np.concatenate([ffn(x[t:t + 1], W1, b1, W2, b2) for t in range(len(x))])


@pytest.mark.parametrize("fn", [chunked_all_converted_fixed_64, chunked_all_converted_one_token])
def test_chunked_with_every_input_converted_is_judged_by_its_memory(fn, capsys):
    """No product can be seen: the memory it holds for chunk = 8 and chunk = 256 tells the chunking."""
    result, out = verdict(check_ffn_chunked, fn, capsys)
    assert not result
    assert "the memory it holds does not follow chunk" in out and "not a number typed in" in out, out


def chunked_all_converted_right(x, W1, b1, W2, b2, chunk):
    x, W1, b1, W2, b2 = (np.asarray(a) for a in (x, W1, b1, W2, b2))
    return np.concatenate([np.maximum(x[s:s + chunk] @ W1 + b1, 0) @ W2 + b2 for s in range(0, len(x), chunk)])


def batched_all_converted_right(x, W1, b1, W2, b2):
    x, W1, b1, W2, b2 = (np.asarray(a) for a in (x, W1, b1, W2, b2))
    return np.maximum(x @ W1 + b1, 0) @ W2 + b2


def batched_loop_over_hidden_units(x, W1, b1, W2, b2):
    y = np.zeros((x.shape[0], W2.shape[1]), dtype=x.dtype) + b2
    for k in range(W1.shape[1]):
        y += np.maximum(x @ W1[:, k] + b1[k], 0)[:, None] * W2[k]
    return y


@pytest.mark.parametrize("check, fn", [(check_ffn_chunked, chunked_all_converted_right),
                                       (check_ffn_batched, batched_all_converted_right),
                                       (check_ffn_batched, batched_loop_over_hidden_units)])
def test_right_answers_that_convert_every_input_pass(check, fn, capsys):
    result, out = verdict(check, fn, capsys)
    assert result, out


@pytest.mark.parametrize("fn", [
    lambda x, W1, b1, W2, b2, chunk: np.concatenate(      # W1 converted, x's chunks still seen
        [ffn(x[s:s + chunk], np.asarray(W1), b1, W2, b2) for s in range(0, len(x), chunk)]),
    lambda x, W1, b1, W2, b2, chunk: np.vstack(           # np.array_split keeps x's pieces watched
        [ffn(p, np.array(W1), b1, W2, b2) for p in np.array_split(x, range(chunk, len(x), chunk))]),
    lambda x, W1, b1, W2, b2, chunk: np.concatenate(      # x and W1 converted, products with W2 seen
        [relu(np.asarray(x)[s:s + chunk] @ np.asarray(W1) + b1) @ W2 + b2 for s in range(0, len(x), chunk)]),
])
def test_chunked_right_answers_with_converted_inputs_still_pass(fn, capsys):
    ok, out = verdict(check_ffn_chunked, fn, capsys)
    assert ok, out


@pytest.mark.parametrize("fn, phrase", [
    (lambda x, W1, b1, W2, b2: relu(np.array(list(map(np.array(W1).__rmatmul__, x))) + b1) @ W2 + b2,
     "products with W1, one token each"),
    (lambda x, W1, b1, W2, b2: relu(np.array(list(map(np.dot, x, [np.asarray(W1)] * len(x)))) + b1) @ W2 + b2,
     "products with W1, one token each"),
    (lambda x, W1, b1, W2, b2: np.asmatrix(relu(x @ W1 + b1) @ W2 + b2), "return a plain array"),
    (lambda x, W1, b1, W2, b2: (lambda y: y.T if y.shape[0] == y.shape[1] else y)(relu(x @ W1 + b1) @ W2 + b2),
     "returned the output transposed"),
])
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")        # np.asmatrix warns of np.matrix's future
def test_batched_hidden_loops_matrices_and_square_transposes_are_named(fn, phrase, capsys):
    result, out = verdict(check_ffn_batched, fn, capsys)
    assert not result
    assert phrase in out, out
    assert not bare_expected_got(result)


@pytest.mark.parametrize("fn", [
    lambda d, d_ff, *, bias=True: 2 * d * d_ff + (d + d_ff) * int(bias),
    lambda d, d_ff, bias=1: 2 * d * d_ff + (d + d_ff) * bias,
])
def test_count_keyword_only_bias_and_bias_one_pass(fn, capsys):
    ok, out = verdict(check_count_ffn_params, fn, capsys)
    assert ok, out


def count_int32(d, d_ff, bias=True):
    n = np.int32(2) * np.int32(d) * np.int32(d_ff)
    return n + (np.int32(d + d_ff) if bias else np.int32(0))


def count_cached(d, d_ff, bias=True, _cache={}):
    key = (d, bias)
    if key not in _cache:
        _cache[key] = 2 * d * d_ff + (d + d_ff if bias else 0)
    return _cache[key]


@pytest.mark.parametrize("fn, phrase", [
    (count_int32, "the overflow of 32-bit integers"),
    (count_cached, "the result does not follow d_ff"),
    (lambda d, d_ff, bias=True: 2 * d ** d_ff + (d + d_ff if bias else 0), "Look for ** where * was meant"),
    (lambda d, d_ff, bias=True: 10 ** 400 + d, "Look for ** where * was meant"),
    (lambda d, d_ff, bias=True: 10 ** 400, "digits long"),
    (lambda d, d_ff, bias=True: 2 * d * min(d_ff, 4 * d) + (d + min(d_ff, 4 * d) if bias else 0), "131072"),
])
def test_count_overflow_caches_and_huge_numbers_are_named_without_raising(fn, phrase, capsys):
    with np.errstate(over="ignore"):
        result, out = verdict(check_count_ffn_params, fn, capsys)
    assert not result
    assert phrase in out, out


def chunked_even_split(x, W1, b1, W2, b2, chunk):
    n = -(-x.shape[0] // chunk)
    pieces = [ffn(c, W1, b1, W2, b2) for c in np.array_split(x, n)] if n else []
    return np.concatenate(pieces) if pieces else np.empty((0, W2.shape[1]), x.dtype)


def test_chunks_of_even_sizes_are_named_as_such(capsys):
    """np.array_split(x, n) with n = ceil(T / chunk): the right number of chunks, but [3, 3, 3] for chunk 4."""
    result, out = verdict(check_ffn_chunked, chunked_even_split, capsys)
    assert not result
    assert "took [4, 3, 3] tokens where chunk = 4 asks for [4, 4, 2]: as many chunks as chunk asks for, but of " \
           "even sizes" in out, out
    assert "capped" not in out, out


# --------------------------------------------------------------------------------------------------------
# Hidden cases drawn from the grading secret: fresh in every grading run, built only while grading
# --------------------------------------------------------------------------------------------------------
N_HIDDEN = {check_ffn_batched: 2, check_count_ffn_params: 4, check_ffn_chunked: 3}
BUILDERS = {"ffn_batched": lesson03._batched_hidden, "count_ffn_params": lesson03._count_hidden,
            "ffn_chunked": lesson03._chunked_hidden}


def leave_out_public_cases(monkeypatch):
    """ffn_batched and ffn_chunked without their public cases: what the hidden cases alone accept and reject (the
    public cases do not depend on the secret, and the tests above judge them; leaving them out keeps this fast)."""
    monkeypatch.setattr(lesson03, "_batched_cases", list)
    monkeypatch.setattr(lesson03, "_chunked_cases", list)


@pytest.fixture
def hidden_only(monkeypatch):
    leave_out_public_cases(monkeypatch)


RIGHT_ANSWERS = ([(check_ffn_batched, f) for f in (batched_three_lines, batched_maximum, batched_einsum,
                                                   batched_column_layout, batched_in_place,
                                                   batched_all_converted_right, batched_loop_over_hidden_units)]
                 + [(check_count_ffn_params, f) for f in (count_plain, count_by_shapes, count_numpy, count_with_ifs)]
                 + [(check_ffn_chunked, f) for f in (chunked_preallocated, chunked_concatenate, chunked_array_split,
                                                     chunked_while, chunked_padded, chunked_reversed,
                                                     chunked_einsum_and_dot, chunked_column_layout,
                                                     chunked_reverse_order, chunked_plain_copy_of_w1,
                                                     chunked_dot_methods, chunked_all_converted_right)])


@pytest.mark.parametrize("check, fn", RIGHT_ANSWERS, ids=lambda v: getattr(v, "__name__", ""))
def test_right_answers_pass_the_hidden_cases_under_every_secret(check, fn, hidden_only, capsys):
    for secret in SECRETS:
        with graded_under(secret):
            result = check(fn)
        assert result and result.hidden == N_HIDDEN[check], capsys.readouterr().out


WRONG_ANSWERS = ([(check_ffn_batched, f, name) for name, fs in WRONG_BATCHED.items() for f in fs]
                 + [(check_ffn_batched, f, "loop") for f in (batched_per_token_loop, batched_comprehension,
                                                             batched_apply_along_axis, batched_map,
                                                             batched_loop_after_one_product,
                                                             batched_dot_method_loop, batched_in_two_halves)]
                 + [(check_count_ffn_params, f, name) for name, f in COUNT_BANK.items()]
                 + [(check_ffn_chunked, f, "") for f in CHUNKED_BANK])


@pytest.mark.parametrize("check, fn, named", WRONG_ANSWERS, ids=lambda v: getattr(v, "__name__", str(v)))
def test_wrong_answers_fail_the_hidden_cases_alone_under_every_secret(check, fn, named, hidden_only, capsys):
    """Each wrong answer of the banks fails on the drawn cases by themselves, with the mistake the public cases
    name (a loop: the rule; chunking: a specific problem, never a bare expected/got)."""
    for secret in SECRETS:
        with graded_under(secret):
            result = check(fn)
        out = capsys.readouterr().out
        assert not result and result.hidden == N_HIDDEN[check], out
        if named == "loop":
            assert "loop over the tokens" in result.mistake, out
        elif named:
            assert result.mistake == named, out
        else:
            assert result.mistake and not bare_expected_got(result), out


@pytest.mark.parametrize("check, right, replay", [(check_ffn_batched, batched_three_lines, False),
                                                  (check_count_ffn_params, count_plain, False),
                                                  (check_ffn_chunked, chunked_preallocated, True)])
def test_a_table_of_the_fixed_cases_fails_under_every_secret(check, right, replay, capsys, monkeypatch):
    """A forgery that tables the answers of a FFN_GRADING=1 run (ffn_batched and ffn_chunked are judged on their
    hidden cases alone under the secrets, see leave_out_public_cases)."""
    assert_forgery_fails_under_every_secret(check, memorising_forgery(check, right, replay=replay), capsys,
                                            n_hidden=N_HIDDEN[check],
                                            hidden_only=lambda: leave_out_public_cases(monkeypatch))


@pytest.mark.parametrize("build", BUILDERS.values(), ids=BUILDERS)
def test_hidden_cases_are_drawn_afresh_under_each_secret_and_named_by_kind(build):
    runs = assert_drawn_afresh(build)
    for index, case in enumerate(runs[0]):                              # every case's sizes are drawn too
        assert len({sizes(run[index]) for run in runs}) > 1, case.name


def within(n, low, high):
    return low <= n <= high


@pytest.mark.parametrize("secret", (None,) + SECRETS)
def test_hidden_cases_have_the_properties_their_names_state(secret):
    single, tokens = drawn(lesson03._batched_hidden, secret)
    partial, whole, longer = drawn(lesson03._chunked_hidden, secret)
    for case in (single, tokens, partial, whole, longer):
        (T, d), d_ff = case.args["x"].shape, case.args["W1"].shape[1]
        assert d != d_ff and lesson03._relu_matters(case), case.name
    assert single.args["x"].dtype == partial.args["x"].dtype == np.float32
    assert tokens.args["x"].dtype == whole.args["x"].dtype == longer.args["x"].dtype == np.float64
    assert within(len(single.args["x"]), 5, 12) and within(len(tokens.args["x"]), 2, 12)
    chunk, T = partial.args["chunk"], len(partial.args["x"])
    assert within(chunk, 3, 9) and within(T // chunk, 2, 6) and T % chunk
    chunk, T = whole.args["chunk"], len(whole.args["x"])
    assert within(chunk, 2, 8) and within(T // chunk, 2, 5) and T % chunk == 0
    chunk, T = longer.args["chunk"], len(longer.args["x"])
    assert within(T, 2, 7) and chunk > T
    without, with_biases, default, wide = drawn(lesson03._count_hidden, secret)
    for case in (without, with_biases, default, wide):
        d, d_ff = case.args["d"], case.args["d_ff"]
        assert d_ff not in (d, 4 * d), case.name
    assert without.args["bias"] is False and with_biases.args["bias"] is True and "bias" not in default.args
    count = lesson03._reference_count(**wide.args)
    assert count % 2 and count > 2 ** 31 and float(np.float32(count)) != count


def test_no_hidden_case_is_drawn_outside_grading(monkeypatch, capsys):
    """Not grading, nothing calls hidden_rng: not the checks, and not the cache message of count_ffn_params,
    which compares with the other cases."""
    def refuse(label):
        raise AssertionError(f"hidden cases {label!r} drawn outside grading")
    monkeypatch.setattr(lesson03, "hidden_rng", refuse)
    for check, fn in ((check_ffn_batched, batched_three_lines), (check_count_ffn_params, count_plain),
                      (check_ffn_chunked, chunked_concatenate)):
        assert check(fn) and "public cases pass" in capsys.readouterr().out
    result = check_count_ffn_params(count_cached)
    assert not result and "the result does not follow d_ff" in capsys.readouterr().out


# ---- first failures: no generic hint after right numbers refused, the loop line held back (issue 21) ---------
@pytest.fixture
def first_failure(monkeypatch):
    from helpers.checks import _verdict
    monkeypatch.setattr(_verdict, "_FAILED_ATTEMPTS", {})


def chunked_into_a_float64_buffer(x, W1, b1, W2, b2, chunk):
    y = np.empty((x.shape[0], W2.shape[1]))                      # float64 whatever x is
    for s in range(0, x.shape[0], chunk):
        y[s:s + chunk] = ffn(x[s:s + chunk], W1, b1, W2, b2)
    return y


def chunked_leaving_the_last_chunk(x, W1, b1, W2, b2, chunk):
    y = np.zeros((x.shape[0], W2.shape[1]), dtype=x.dtype)
    for i in range(x.shape[0] // chunk):                         # stops before the shorter last chunk
        y[i * chunk:(i + 1) * chunk] = ffn(x[i * chunk:(i + 1) * chunk], W1, b1, W2, b2)
    return y


@pytest.mark.parametrize("check, fn", [(check_ffn_chunked, chunked_into_a_float64_buffer),
                                       (check_ffn_batched, batched_per_token_loop)])
def test_no_generic_hint_after_right_numbers_refused(check, fn, first_failure, capsys):
    """A dtype-only slip, or a loop over the tokens, gets the right numbers: its own message says what to
    change, and no hint about the slicing or the pre-activations' shape follows it."""
    result, out = verdict(check, fn, capsys)
    assert not result and "\u2718" in out and "Hint:" not in out, out


def test_chunked_off_by_one_shows_the_loop_only_after_a_second_failure(first_failure, capsys):
    result, first = verdict(check_ffn_chunked, chunked_leaving_the_last_chunk, capsys)
    assert not result and "the last chunk" in first and "range(0, T, chunk)" not in first, first
    assert "If the check finds this again, it shows the line to write." in first, first
    result, second = verdict(check_ffn_chunked, chunked_leaving_the_last_chunk, capsys)
    assert "range(0, T, chunk)" in second, second
