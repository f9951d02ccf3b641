"""Lesson 04's graders: correct answers in several styles pass, and each known mistake gets its own diagnosis.

The wrong implementations here are written independently of the graders' mutants (different formulas, loops,
math instead of scipy), so a test passes only when the grader recognises the mistake by its behaviour.
"""
import math
import re
import warnings

import numpy as np
import pytest
from scipy import special

from helpers import ffn as reference
from helpers import params
from helpers.checks import check_gelu, check_silu, check_swiglu_ffn, check_swiglu_hidden, lesson04
from hidden_under_secrets import (SECRETS, assert_drawn_afresh, assert_forgery_fails_under_every_secret, drawn,
                                  graded_under, memorising_forgery, sizes)

FAIL = "\u2718"
SQRT2 = math.sqrt(2.0)


def verdict(check, fn, capsys):
    """Run a check; return its result, what it printed, and the warnings that escaped it."""
    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        result = check(fn)
    return result, capsys.readouterr().out, escaped


def assert_passes(check, fn, capsys):
    result, out, escaped = verdict(check, fn, capsys)
    assert result, out
    assert ("Well done!" in out or "public cases pass" in out) and FAIL not in out, out
    assert not escaped, [str(w.message) for w in escaped]
    return out


def assert_fails_with(check, fn, capsys, *phrases):
    result, out, _ = verdict(check, fn, capsys)
    assert not result, out
    for phrase in phrases:
        assert phrase in out, f"{phrase!r} not in:\n{out}"
    return out


def per_element(f):
    """Apply a function of one Python float to every element of an array, keeping its shape and dtype."""
    def apply(z):
        out = np.empty_like(z)
        for index in np.ndindex(z.shape):
            out[index] = f(float(z[index]))
        return out
    return apply


# --------------------------------------------------------------------------------------------------------
# gelu
# --------------------------------------------------------------------------------------------------------
def gelu_vectorized_math_erf(z):
    return np.vectorize(lambda v: 0.5 * v * (1.0 + math.erf(v / SQRT2)))(z)


def gelu_scipy_erf(z):
    return z * 0.5 * (1 + special.erf(z / SQRT2))


def gelu_erfc(z):
    return 0.5 * z * special.erfc(-z / SQRT2)


def gelu_ndtr(z):
    return z * special.ndtr(z)


gelu_loop = per_element(lambda v: v * (1 + math.erf(v / SQRT2)) / 2)


def gelu_np_sqrt(z):
    return z * 0.5 * (1 + special.erf(z / np.sqrt(2)))       # np.sqrt(2) is a float64 scalar: float32 upcasts


def gelu_stats_style(z):
    from scipy import stats
    return z * stats.norm.cdf(z)                               # float64 for any input


CORRECT_GELU = [gelu_vectorized_math_erf, gelu_scipy_erf, gelu_erfc, gelu_ndtr, gelu_loop, gelu_np_sqrt,
                gelu_stats_style]


@pytest.mark.parametrize("fn", CORRECT_GELU, ids=lambda f: getattr(f, "__name__", "loop"))
def test_correct_gelu_passes_without_notes(fn, capsys):
    out = assert_passes(check_gelu, fn, capsys)
    assert "Note" not in out and "dtype" not in out   # the exercise is not about dtype: no nagging


@pytest.mark.parametrize("fn", [
    lambda z: z * special.ndtr(z),                                  # a NumPy scalar back for a 0-d z
    lambda z: np.vectorize(lambda t: t * 0.5 * math.erfc(-t / math.sqrt(2)))(z),
    lambda z: np.asarray(z * special.ndtr(z)),
])
def test_gelu_of_any_shape_including_0_d_passes(fn, capsys):
    assert_passes(check_gelu, fn, capsys)


def gelu_cut_off(z):
    return np.where(z < -6.5, 0.0, z * special.ndtr(z))


@pytest.mark.parametrize("fn, phrases", [
    (gelu_cut_off, ("returned exactly 0 for z = -7", "a cut-off in the tail")),
    (lambda z: np.array([t * special.ndtr(t) for t in z]) if z.ndim == 1
     else np.array([[t * special.ndtr(t) for t in row] for row in z]),
     ("\u2718 a 0-d array", "your function fails on a 0-d array")),
])
def test_gelu_a_cut_off_or_a_row_loop_fails_and_is_named(fn, phrases, capsys):
    assert_fails_with(check_gelu, fn, capsys, *phrases)


def silu_z_above_20(z):
    return np.where(z > 20, z, z * special.expit(z))


def silu_0_below_minus_20(z):
    return np.where(z < -20, 0.0, z * special.expit(z))


@pytest.mark.parametrize("fn, phrases", [
    (silu_z_above_20, ("returned z itself for z = 20.5", "a cut-off")),
    (silu_0_below_minus_20, ("returned exactly 0 for z = -20.5", "a cut-off")),
    (lambda z: z * special.expit(z) if z.ndim == 1 else np.array([r * special.expit(r) for r in z]),
     ("\u2718 a 0-d array", "your function fails on a 0-d array")),
])
def test_silu_a_cut_off_or_a_row_loop_fails_and_is_named(fn, phrases, capsys):
    assert_fails_with(check_silu, fn, capsys, *phrases)


def test_the_activation_cases_cover_every_shape_and_the_tails():
    from helpers.checks.lesson04 import _SILU_LARGE, _cases
    shapes = {case.args["z"].ndim for case in _cases(4, _SILU_LARGE)}
    assert shapes == {0, 1, 2, 3}
    assert -20.5 in _SILU_LARGE and 20.5 in _SILU_LARGE


def test_gelu_float32_case_says_either_dtype_passes(capsys):
    out = assert_passes(check_gelu, gelu_np_sqrt, capsys)
    assert "float32 input (a float32 or a float64 result both pass)" in out


WRONG_GELU = {
    "tanh approximation": lambda z: 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3))),
    "density φ(z) used where the cumulative": lambda z: z * np.exp(-z ** 2 / 2) / math.sqrt(2 * math.pi),
    "factor z is missing": lambda z: (1 + special.erf(z / SQRT2)) / 2,
    "erf(z) where erf(z / sqrt(2)) belongs": lambda z: z * (1 + special.erf(z)) / 2,
    "multiplied by sqrt(2) inside erf": lambda z: z * (1 + special.erf(z * SQRT2)) / 2,
    "factor 1/2 is missing": lambda z: z * (1 + special.erf(z / SQRT2)),
    "1 - erf where 1 + erf belongs": lambda z: z * (1 - special.erf(z / SQRT2)) / 2,
    "sigmoid approximation z * sigmoid(1.702 z)": lambda z: z / (1 + np.exp(-1.702 * z)),
    "SiLU (z * sigmoid(z)) instead of GELU": lambda z: z / (1 + np.exp(-z)),
    "ReLU instead of GELU": lambda z: np.where(z > 0, z, 0.0),
    "math.erf (a function of one number) applied to a whole array":
        lambda z: z * 0.5 * (1 + math.erf(z / math.sqrt(2))),
    "sqrt(2) divides erf(z) instead of z inside erf": lambda z: 0.5 * z * (1 + special.erf(z) / math.sqrt(2)),
    "the parentheses around 1 + erf(...) are missing": lambda z: z * 0.5 * 1 + special.erf(z / math.sqrt(2)),
}


@pytest.mark.parametrize("mistake", WRONG_GELU)
def test_each_gelu_mistake_is_named(mistake, capsys):
    assert_fails_with(check_gelu, WRONG_GELU[mistake], capsys, "Likely mistake: ", mistake)


def test_gelu_stub_says_not_implemented(capsys):
    def gelu(z):
        raise NotImplementedError("your code here")
    result, out, _ = verdict(check_gelu, gelu, capsys)
    assert not result
    assert out.strip() == ("gelu: not implemented yet (replace the `raise NotImplementedError` line with "
                           "your code).")


def test_gelu_exception_is_reported_with_the_learners_line(capsys):
    def gelu(z):
        scale = 0
        return z * (1 / scale)
    assert_fails_with(check_gelu, gelu, capsys, "raised ZeroDivisionError: division by zero",
                      "line 3 of gelu: `return z * (1 / scale)`")


def test_gelu_math_erf_on_a_whole_array_is_named(capsys):
    def gelu(z):
        phi = 0.5 * (1 + math.erf(z / SQRT2))                # math.erf takes one number
        return z * phi
    assert_fails_with(check_gelu, gelu, capsys, "raised TypeError", "line 2 of gelu",
                      "Likely mistake: math.erf (a function of one number) applied to a whole array",
                      "special.erf")


@pytest.mark.parametrize("fn, phrase", [
    (lambda z: None, "returned None. Did you forget the `return` statement"),
    (lambda z: [float(v) for v in np.ravel(gelu_erfc(z))], "returned a list; return a NumPy array shaped like z"),
    (lambda z: gelu_erfc(z).ravel(), "Your function flattened z; keep its shape"),
    (lambda z: gelu_erfc(z).astype(np.float32), "returned dtype float32 for float64 input"),
    (lambda z: "gelu", "returned a str"),
    (lambda z: gelu_erfc(z) / (z != 0), "returned NaN or infinity"),
], ids=["None", "list", "flattened", "float32", "string", "nan"])
def test_gelu_wrong_kind_of_result_gets_its_own_message(fn, phrase, capsys):
    assert_fails_with(check_gelu, fn, capsys, phrase)


def test_gelu_changing_its_input_in_place_fails(capsys):
    def gelu(z):
        z *= special.ndtr(z)
        return z
    assert_fails_with(check_gelu, gelu, capsys, "changed its input `z` in place")


def test_gelu_passed_a_value_instead_of_a_function(capsys):
    assert_fails_with(check_gelu, gelu_erfc(np.ones(3)), capsys, "expected a function but got",
                      "Pass the function itself, without calling it")


# --------------------------------------------------------------------------------------------------------
# silu
# --------------------------------------------------------------------------------------------------------
def silu_expit(z):
    return z * special.expit(z)


def silu_stable_where(z):
    e = np.exp(-np.abs(z))                                   # never overflows
    return np.where(z >= 0, z / (1 + e), z * e / (1 + e))


def silu_tanh_identity(z):
    return 0.5 * z * (1 + np.tanh(z / 2))                    # sigmoid(z) = (1 + tanh(z / 2)) / 2


silu_loop = per_element(lambda v: v / (1 + math.exp(-v)) if v >= 0 else v * math.exp(v) / (1 + math.exp(v)))


@pytest.mark.parametrize("fn", [silu_expit, silu_stable_where, silu_tanh_identity, silu_loop],
                         ids=lambda f: getattr(f, "__name__", "loop"))
def test_correct_silu_passes_without_notes(fn, capsys):
    out = assert_passes(check_silu, fn, capsys)
    assert "Note" not in out


def test_naive_silu_passes_with_a_note_about_overflow_and_no_warning_escapes(capsys):
    def silu(z):
        return z / (1 + np.exp(-z))                          # np.exp(1000) overflows to inf, with a warning
    out = assert_passes(check_silu, silu, capsys)            # assert_passes also checks no warning escaped
    assert "Note: your silu is right, but NumPy warned 'overflow encountered in exp'" in out


def test_silu_with_e_to_the_z_gets_the_nan_explanation(capsys):
    def silu(z):
        return z * np.exp(z) / (1 + np.exp(z))               # inf / inf = NaN for z = 1000
    assert_fails_with(check_silu, silu, capsys, "for z = 1000: e^z overflows to inf there, and inf / inf is NaN")


def test_silu_with_math_exp_gets_the_overflow_error_hint(capsys):
    silu = np.vectorize(lambda v: v / (1 + math.exp(-v)))
    assert_fails_with(check_silu, silu, capsys, "raised OverflowError: math range error",
                      "Hint: math.exp(1000) is too big for a Python float")


def silu_math_exp_on_the_array(z):
    return z / (1 + math.exp(-z))                             # math.exp takes one number


WRONG_SILU = {
    "math.exp (a function of one number) applied to a whole array": silu_math_exp_on_the_array,
    "1 - e^-z where 1 + e^-z belongs": lambda z: z / (1 - np.exp(-z)),
    "the parentheses around 1 + e^-z are missing": lambda z: z / 1 + np.exp(-z),
    "softplus, log(1 + e^z), instead of SiLU": lambda z: np.log1p(np.exp(z)),
    "sigmoid alone, without the factor z": lambda z: 1 / (1 + np.exp(-z)),
    "e^z where e^-z belongs": lambda z: z / (1 + np.exp(z)),
    "tanh where the sigmoid belongs": lambda z: z * np.tanh(z),
    "GELU instead of SiLU": lambda z: z * special.ndtr(z),
    "ReLU instead of SiLU": lambda z: np.maximum(z, 0.0),
}


@pytest.mark.parametrize("mistake", WRONG_SILU)
def test_each_silu_mistake_is_named(mistake, capsys):
    with np.errstate(all="ignore"):
        out = assert_fails_with(check_silu, WRONG_SILU[mistake], capsys, "Likely mistake: ", mistake)
    assert "Note" not in out                                 # no overflow note on a failing answer


def test_silu_math_exp_says_use_np_exp(capsys):
    assert_fails_with(check_silu, silu_math_exp_on_the_array, capsys, "raised TypeError",
                      "line 2 of silu_math_exp_on_the_array", "np.exp works element by element")


def test_silu_stub_exception_and_none(capsys):
    def stub(z):
        raise NotImplementedError("your code here")

    def broken(z):
        return z / (1 + np.exp(-z)) + undefined_name          # noqa: F821

    assert_fails_with(check_silu, stub, capsys, "silu: not implemented yet")
    assert_fails_with(check_silu, broken, capsys, "raised NameError", "line 2 of broken")
    assert_fails_with(check_silu, lambda z: None, capsys, "returned None")
    assert_fails_with(check_silu, 3.0, capsys, "expected a function but got 3")


# --------------------------------------------------------------------------------------------------------
# swiglu_ffn
# --------------------------------------------------------------------------------------------------------
def sigmoid_silu(a):
    return a / (1 + np.exp(-a))


def swiglu_matmul(x, W_gate, W_up, W_down):
    return (sigmoid_silu(x @ W_gate) * (x @ W_up)) @ W_down


def swiglu_einsum(x, W_gate, W_up, W_down):
    g = np.einsum("...i,ij->...j", x, W_gate)
    v = np.einsum("...i,ij->...j", x, W_up)
    return np.einsum("...j,jk->...k", g * special.expit(g) * v, W_down)


def swiglu_token_loop(x, W_gate, W_up, W_down):
    x = np.asarray(x)
    rows = x.reshape(-1, x.shape[-1])                        # (n_tokens, d)
    out = []
    for row in rows:                                         # one token at a time
        hidden = [sigmoid_silu(row @ W_gate[:, k]) * (row @ W_up[:, k]) for k in range(W_gate.shape[1])]
        out.append(np.array(hidden) @ W_down)
    return np.array(out).reshape(x.shape[:-1] + (W_down.shape[1],))


@pytest.mark.parametrize("fn", [swiglu_matmul, swiglu_einsum, swiglu_token_loop])
def test_correct_swiglu_passes(fn, capsys):
    assert_passes(check_swiglu_ffn, fn, capsys)


def test_swiglu_that_squeezes_length_1_axes_fails_and_is_told(capsys):
    def squeezed(x, Wg, Wu, Wd):
        X = np.atleast_2d(x)
        return ((sigmoid_silu(X @ Wg) * (X @ Wu)) @ Wd).squeeze()
    assert_fails_with(check_swiglu_ffn, squeezed, capsys, "\u2718 a sequence of one token, x of shape (T, d) = (1, 4)",
                      "The axes of length 1 are gone")


WRONG_SWIGLU = {
    "gate and value swapped": lambda x, Wg, Wu, Wd: (sigmoid_silu(x @ Wu) * (x @ Wg)) @ Wd,
    "SiLU applied to both paths": lambda x, Wg, Wu, Wd: (sigmoid_silu(x @ Wg) * sigmoid_silu(x @ Wu)) @ Wd,
    "only the gate path silu(x @ W_gate) reaches W_down": lambda x, Wg, Wu, Wd: sigmoid_silu(x @ Wg) @ Wd,
    "only the value path x @ W_up reaches W_down": lambda x, Wg, Wu, Wd: (x @ Wu) @ Wd,
    "the two paths added instead of multiplied": lambda x, Wg, Wu, Wd: (sigmoid_silu(x @ Wg) + x @ Wu) @ Wd,
    "SiLU applied after the product": lambda x, Wg, Wu, Wd: sigmoid_silu((x @ Wg) * (x @ Wu)) @ Wd,
    "SiLU applied to the output, after W_down": lambda x, Wg, Wu, Wd: sigmoid_silu(((x @ Wg) * (x @ Wu)) @ Wd),
    "no SiLU at all": lambda x, Wg, Wu, Wd: ((x @ Wg) * (x @ Wu)) @ Wd,
    "ReLU instead of SiLU": lambda x, Wg, Wu, Wd: (np.maximum(x @ Wg, 0) * (x @ Wu)) @ Wd,
    "GELU instead of SiLU": lambda x, Wg, Wu, Wd: (gelu_erfc(x @ Wg) * (x @ Wu)) @ Wd,
    "the sigmoid instead of SiLU": lambda x, Wg, Wu, Wd: (1 / (1 + np.exp(-(x @ Wg))) * (x @ Wu)) @ Wd,
    "ReLU applied to the output, after W_down":
        lambda x, Wg, Wu, Wd: np.maximum((sigmoid_silu(x @ Wg) * (x @ Wu)) @ Wd, 0.0),
    "SiLU applied again to the output, after W_down":
        lambda x, Wg, Wu, Wd: sigmoid_silu((sigmoid_silu(x @ Wg) * (x @ Wu)) @ Wd),
    "W_down transposed": lambda x, Wg, Wu, Wd: (sigmoid_silu(x @ Wg) * (x @ Wu)) @ np.transpose(Wd),
    "the matrices applied in the column-vector convention":
        lambda x, Wg, Wu, Wd: np.dot(Wd.T, sigmoid_silu(np.dot(Wg.T, x)) * np.dot(Wu.T, x)),
}


@pytest.mark.parametrize("mistake", WRONG_SWIGLU)
def test_each_swiglu_mistake_is_named(mistake, capsys):
    assert_fails_with(check_swiglu_ffn, WRONG_SWIGLU[mistake], capsys, "Likely mistake: ", mistake)


def test_swiglu_arguments_used_in_the_wrong_order_are_called_swapped(capsys):
    def swiglu_ffn(x, W_up, W_gate, W_down):                  # parameters listed in the wrong order
        return (sigmoid_silu(x @ W_gate) * (x @ W_up)) @ W_down
    assert_fails_with(check_swiglu_ffn, swiglu_ffn, capsys, "Likely mistake: gate and value swapped")


def test_swiglu_without_w_down_gets_the_shape_hint(capsys):
    assert_fails_with(check_swiglu_ffn, lambda x, Wg, Wu, Wd: sigmoid_silu(x @ Wg) * (x @ Wu), capsys,
                      "returned shape (5, 6); expected (5, 4)", "hidden layer's shape, (..., d_ff): multiply by W_down")


def test_swiglu_with_a_transposed_w_down_reports_the_error_and_names_it(capsys):
    def swiglu_ffn(x, W_gate, W_up, W_down):
        return (sigmoid_silu(x @ W_gate) * (x @ W_up)) @ W_down.T
    assert_fails_with(check_swiglu_ffn, swiglu_ffn, capsys, "raised ValueError", "line 2 of swiglu_ffn",
                      "Likely mistake: W_down transposed")


def test_swiglu_stub_none_and_in_place(capsys):
    def stub(x, W_gate, W_up, W_down):
        raise NotImplementedError

    def in_place(x, W_gate, W_up, W_down):
        y = swiglu_matmul(x, W_gate, W_up, W_down)
        x *= 2.0                                             # overwrites the caller's x
        return y

    assert_fails_with(check_swiglu_ffn, stub, capsys, "swiglu_ffn: not implemented yet")
    assert_fails_with(check_swiglu_ffn, lambda x, Wg, Wu, Wd: None, capsys, "returned None")
    assert_fails_with(check_swiglu_ffn, in_place, capsys, "changed its input `x` in place")


# --------------------------------------------------------------------------------------------------------
# swiglu_hidden
# --------------------------------------------------------------------------------------------------------
def hidden_llama_style(d, multiple_of=256):
    hidden_dim = int(2 * (4 * d) / 3)
    return multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)


def hidden_ceil(d, multiple_of=256):
    return multiple_of * math.ceil((8 * d // 3) / multiple_of)


def hidden_negative_floor(d, multiple_of=256):
    return -(-int(8 * d / 3) // multiple_of) * multiple_of


def hidden_count_up(d, multiple_of=256):
    width = int(2 * 4 * d / 3)
    while width % multiple_of:
        width += 1
    return width


def hidden_numpy_int(d, multiple_of=256):
    return np.int64(np.ceil(int(8 * d / 3) / multiple_of)) * multiple_of


@pytest.mark.parametrize("fn", [hidden_llama_style, hidden_ceil, hidden_negative_floor, hidden_count_up,
                                hidden_numpy_int])
def test_correct_swiglu_hidden_passes(fn, capsys):
    assert_passes(check_swiglu_hidden, fn, capsys)


def test_llama_sizes_by_hand():
    # Independent of the grader: the widths published for Llama 7B, 13B, 33B and 65B.
    assert [hidden_count_up(d) for d in (4096, 5120, 6656, 8192)] == [11008, 13824, 17920, 22016]


WRONG_HIDDEN = {
    "not rounded to a multiple at all": lambda d, multiple_of=256: 8 * d // 3,
    "rounded down instead of up": lambda d, multiple_of=256: (8 * d // 3) - (8 * d // 3) % multiple_of,
    "rounded to the nearest multiple instead of up":
        lambda d, multiple_of=256: int(np.round((8 * d // 3) / multiple_of)) * multiple_of,
    "one multiple too many when 8/3 · d is already a multiple":
        lambda d, multiple_of=256: ((8 * d // 3) // multiple_of + 1) * multiple_of,
    "8/3 · d rounded up directly, without truncating it to an int first":
        lambda d, multiple_of=256: math.ceil(8 / 3 * d / multiple_of) * multiple_of,
    "multiple_of ignored (always 256)": lambda d, multiple_of=256: hidden_llama_style(d),
    "2/3 of d instead of 2/3 of 4d": lambda d, multiple_of=256: hidden_llama_style(d / 4, multiple_of),
    "4d, the classic width, instead of 8/3 · d": lambda d, multiple_of=256: 4 * d,
    "4d, the classic width, rounded up, instead of 8/3 · d":
        lambda d, multiple_of=256: -(-4 * d // multiple_of) * multiple_of,
    "a bit trick that works only when multiple_of is a power of two":
        lambda d, multiple_of=256: (8 * d // 3 + multiple_of - 1) & ~(multiple_of - 1),
    "Llama 7B's width, 11,008, returned for every d": lambda d, multiple_of=256: 11008,
    "the default of multiple_of is 128, not 256": lambda d, multiple_of=128: hidden_llama_style(d, multiple_of),
    "the default of multiple_of is 512, not 256": lambda d, multiple_of=512: hidden_count_up(d, multiple_of),
    "the default of multiple_of is 64, not 256": lambda d, multiple_of=64: hidden_ceil(d, multiple_of),
    "rounded down": lambda d, multiple_of=256: multiple_of * int(int(8 * d / 3) / multiple_of),
    "one multiple too many": lambda d, multiple_of=256: (math.floor(int(8 * d / 3) / multiple_of) + 1) * multiple_of,
}


@pytest.mark.parametrize("mistake", WRONG_HIDDEN)
def test_each_swiglu_hidden_mistake_is_named(mistake, capsys):
    assert_fails_with(check_swiglu_hidden, WRONG_HIDDEN[mistake], capsys, "Likely mistake: ", mistake)


@pytest.mark.parametrize("fn, phrases", [
    (lambda d, multiple_of=256: float(hidden_llama_style(d, multiple_of)),
     ("returned the float 11008.0; the width is a whole number",)),
    (lambda d, multiple_of=256: 8 * d / 3, ("returned 10922.667, which is not a whole number",)),
    (lambda d, multiple_of: hidden_llama_style(d, multiple_of),
     ("d = 4096 with the default multiple_of: your function raised TypeError",
      "Likely mistake: multiple_of has no default value")),
    (lambda d, multiple_of=256: None, ("returned None",)),
    (lambda d, multiple_of=256: str(hidden_llama_style(d, multiple_of)), ("returned a str ('11008')",)),
    (lambda d, multiple_of=256: True, ("returned True, a bool",)),
], ids=["float", "fraction", "no-default", "None", "string", "bool"])
def test_swiglu_hidden_wrong_kind_of_result(fn, phrases, capsys):
    assert_fails_with(check_swiglu_hidden, fn, capsys, *phrases)


def test_swiglu_hidden_stub(capsys):
    def swiglu_hidden(d, multiple_of=256):
        raise NotImplementedError("your code here")
    assert_fails_with(check_swiglu_hidden, swiglu_hidden, capsys, "swiglu_hidden: not implemented yet")


# --------------------------------------------------------------------------------------------------------
# The graders' own mutants: each is told apart from all the others, and none warns
# --------------------------------------------------------------------------------------------------------
BANKS = [(check_gelu, lesson04._GELU_MISTAKES), (check_silu, lesson04._SILU_MISTAKES),
         (check_swiglu_ffn, lesson04._SWIGLU_MISTAKES), (check_swiglu_hidden, lesson04._HIDDEN_MISTAKES)]


@pytest.mark.parametrize("check, mistake", [(c, m) for c, bank in BANKS for m in bank],
                         ids=lambda v: getattr(v, "name", getattr(v, "__name__", "")))
def test_every_mutant_is_diagnosed_as_itself(check, mistake, capsys):
    assert_fails_with(check, mistake.fn, capsys, f"Likely mistake: {mistake.name}.")


def test_graders_are_silent_about_exits(capsys):
    def leaves(z):
        raise SystemExit(3)
    assert_fails_with(check_gelu, leaves, capsys, "raised SystemExit: 3")


# --------------------------------------------------------------------------------------------------------
# The lesson's figures: every axis has a title and labels
# --------------------------------------------------------------------------------------------------------
def test_every_figure_has_titles_and_labelled_axes():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from helpers import plot_activations as figures

    z = np.linspace(-4.0, 4.0, 81)
    made = [
        figures.plot_activations(z, {"ReLU": reference.relu(z), "GELU": reference.gelu(z)},
                                 {"ReLU": (z > 0).astype(float), "GELU": z * 0 + 0.5}),
        figures.plot_gelu_gap(z, reference.gelu(z), reference.gelu_tanh(z)),
        figures.plot_hidden_histograms({"ReLU": reference.relu(z), "SiLU": reference.silu(z)},
                                       bins=np.linspace(-1.0, 4.0, 11)),
        figures.plot_gate_map(reference.silu, n=21),
    ]
    for fig in made:
        for ax in fig.axes:
            if ax.get_label() == "<colorbar>":
                continue
            assert ax.get_title() and ax.get_xlabel(), (ax.get_title(), ax.get_xlabel())
            assert ax.get_legend() is not None, f"no legend in '{ax.get_title()}'"   # every colour named
        assert any(ax.get_ylabel() for ax in fig.axes)
        plt.close(fig)


@pytest.mark.parametrize("mistake", WRONG_HIDDEN)
def test_swiglu_hidden_first_failure_names_the_fix_in_words_not_code(mistake, capsys):
    """A first failure may not hand over the rounding code: that is Hint 2's, in the learner's own hands."""
    _, out, _ = verdict(check_swiglu_hidden, WRONG_HIDDEN[mistake], capsys)
    (line,) = [line for line in out.splitlines() if "Likely mistake:" in line]
    for code in ("math.ceil", "//", "multiple_of *", "m * "):
        assert code not in line, line


def test_nearest_multiple_fix_text_states_what_round_gives(capsys):
    """The fix names round()'s result and the right one, and both numbers are what the code gives."""
    h = int(2 * 4 * 8192 / 3)
    assert (h, 256 * round(h / 256), hidden_count_up(8192)) == (21845, 21760, 22016)
    assert_fails_with(check_swiglu_hidden, WRONG_HIDDEN["rounded to the nearest multiple instead of up"], capsys,
                      "round() gives 85 x 256 = 21,760, while rounding up gives the right 86 x 256 = 22,016")


# --------------------------------------------------------------------------------------------------------
# The banks are big enough (CONTRIBUTING: at least 8 wrong answers and 3 right ones per exercise)
# --------------------------------------------------------------------------------------------------------
def test_each_exercise_has_a_full_bank():
    for wrong in (WRONG_GELU, WRONG_SILU, WRONG_SWIGLU, WRONG_HIDDEN):
        assert len(wrong) >= 8, list(wrong)
    rights = [test_correct_gelu_passes_without_notes, test_correct_silu_passes_without_notes,
              test_correct_swiglu_passes, test_correct_swiglu_hidden_passes]
    assert all(len(t.pytestmark[0].args[1]) >= 3 for t in rights)


def test_gate_map_colours_show_the_small_values_for_a_negative_gate():
    """On a linear scale up to about 16, SwiGLU's values for g < 0 (at most 0.28 |v|, about 1.1 here) were nearly
    white: the "sign flipped" region the takeaway describes was invisible. They must get a clear colour."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from helpers import plot_activations as figures

    fig = figures.plot_gate_map(reference.silu, n=81)
    try:
        mesh = fig.axes[0].collections[0]
        h = np.asarray(mesh.get_array()).ravel()
        g = np.asarray(mesh.get_coordinates())[..., 0]
        g = np.ravel((g[:-1, :-1] + g[1:, 1:]) / 2) if g.size != h.size else g.ravel()
        assert g.min() <= -6 and h.max() > 10                     # very negative gates, and the large values too
        weak = np.abs(h[g < -0.5]).max()                           # the largest value where the gate is negative
        assert 0.9 < weak < 1.2
        assert mesh.norm(weak) - 0.5 > 0.25 and 0.5 - mesh.norm(-weak) > 0.25   # far from white, both signs
    finally:
        plt.close(fig)


# --------------------------------------------------------------------------------------------------------
# Answers close to float64's precision but not at it, malformed results, and the hidden width's edges
# --------------------------------------------------------------------------------------------------------
def gelu_abramowitz_stegun(z):
    """erf from Abramowitz and Stegun 7.1.26: accurate to 1.5e-7, not to float64's precision."""
    x = np.abs(z) / math.sqrt(2)
    t = 1 / (1 + 0.3275911 * x)
    y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t \
        * np.exp(-x * x)
    return z * 0.5 * (1 + np.sign(z) * y)


@pytest.mark.parametrize("check, fn, phrase", [
    (check_gelu, gelu_abramowitz_stegun, "an approximation"),
    (check_gelu, lambda z: (z.astype(np.float32) * special.ndtr(z.astype(np.float32))).astype(z.dtype),
     "fit in float32"),
    (check_gelu, lambda z: np.round(z * special.ndtr(z), 6), "rounded to 6 decimals"),
    (check_gelu, lambda z: np.round(z * special.ndtr(z), 5), "rounded to 5 decimals"),
    (check_gelu, lambda z: np.round(z * special.ndtr(z), 3), "rounded to 3 decimals"),
    (check_gelu, lambda z: (z.astype(np.float16) * special.ndtr(z.astype(np.float16))).astype(z.dtype),
     "fit in float16"),
    (check_silu, lambda z: (z.astype(np.float32) * special.expit(z.astype(np.float32))).astype(z.dtype),
     "fit in float32"),
    (check_silu, lambda z: np.round(z * special.expit(z), 5), "rounded to 5 decimals"),
    (check_silu, lambda z: np.round(z * special.expit(z), 2), "rounded to 2 decimals"),
    (check_gelu, lambda z: np.ma.masked_less(z * special.ndtr(z), -1e9), "a MaskedArray"),
    (check_silu, lambda z: np.frompyfunc(lambda t: t * special.expit(t), 1, 1)(z), "return floats"),
    (check_silu, lambda z: (z * special.expit(z)).astype(object), "return floats"),
])
def test_activation_precision_slips_are_named(check, fn, phrase, capsys):
    with np.errstate(all="ignore"):
        out = assert_fails_with(check, fn, capsys, phrase)
    assert "Likely mistake" not in out, out


@pytest.mark.parametrize("check, fn", [
    (check_gelu, lambda z: (z * special.ndtr(z)).tolist()),
    (check_silu, lambda z: (z * special.expit(z)).tolist()),
    (check_gelu, lambda z: np.multiply(z, special.ndtr(z), out=z)),
    (check_silu, lambda z: np.multiply(z, special.expit(z), out=z)),
])
def test_a_malformed_or_in_place_result_is_not_called_rounded(check, fn, capsys):
    result, out, _ = verdict(check, fn, capsys)
    assert not result
    assert "rounded" not in out, out
    assert "list" in out or "in place" in out, out


OTHER_EXACT_FORMS = [
    (check_gelu, lambda z: 0.5 * z * (1 + special.erf(z / math.sqrt(2)))),      # loses the far left tail
    (check_gelu, lambda z: z * 0.5 * special.erfc(-z / math.sqrt(2))),
    (check_silu, lambda z: z * 0.5 * (1 + np.tanh(z / 2))),
    (check_silu, lambda z: np.where(z >= 0, z / (1 + np.exp(-np.abs(z))),
                                    z * np.exp(-np.abs(z)) / (1 + np.exp(-np.abs(z))))),
]


@pytest.mark.parametrize("check, fn", OTHER_EXACT_FORMS)
def test_other_exact_forms_of_the_activations_pass_the_tight_comparison(check, fn, capsys):
    with np.errstate(all="ignore"):
        assert_passes(check, fn, capsys)


def swiglu_try_both_orders(x, W_gate, W_up, W_down):
    try:
        return W_down @ (reference.silu(W_gate @ x) * (W_up @ x))
    except ValueError:
        return (reference.silu(x @ W_gate) * (x @ W_up)) @ W_down


@pytest.mark.parametrize("fn, phrase", [
    (swiglu_try_both_orders, "the matrices applied on the left, as stored (W_gate @ x)"),
    (lambda x, W_gate, W_up, W_down: (reference.silu(np.atleast_2d(x) @ W_gate) * (np.atleast_2d(x) @ W_up)) @ W_down,
     "An extra leading axis of length 1"),
    (lambda x, W_gate, W_up, W_down: np.round((reference.silu(x @ W_gate) * (x @ W_up)) @ W_down, 6),
     "rounded to 6 decimals"),
    (lambda x, W_gate, W_up, W_down: (reference.silu((x @ W_gate).astype(np.float32)).astype(float) * (x @ W_up)) @ W_down,
     "float32 inside"),
    (lambda x, W_gate, W_up, W_down: ((reference.silu(x @ W_gate) * (x @ W_up)) @ W_down).astype(np.float32),
     "returned dtype float32 for float64 inputs"),
])
def test_swiglu_slips_in_the_square_case_and_in_precision_are_named(fn, phrase, capsys):
    assert_fails_with(check_swiglu_ffn, fn, capsys, phrase)


@pytest.mark.parametrize("fn, phrase", [
    (lambda d, multiple_of=256: multiple_of * round(int(2 * 4 * d / 3) / multiple_of + 0.5), "already a multiple"),
    (lambda d, multiple_of=256: multiple_of * int(int(2 * 4 * d / 3) / multiple_of + 0.999), "rounded down"),
    (lambda d, multiple_of=256: {(4096, 256): 11008, (5120, 256): 13824, (8192, 256): 22016, (768, 256): 2048,
                                 (4096, 64): 10944, (4096, 100): 11000, (4096, 1): 10922, (96, 256): 256,
                                 (1025, 1): 2733}.get((d, multiple_of), 4 * d), "4d, the classic width"),
    (lambda d, multiple_of=256: multiple_of * math.ceil(int(2 * 4 * d / 3) / multiple_of) ** d, "digits long"),
])
def test_swiglu_hidden_edges_and_hidden_cases_catch_near_misses(fn, phrase, capsys, monkeypatch):
    monkeypatch.setenv("FFN_GRADING", "1")
    out = assert_fails_with(check_swiglu_hidden, fn, capsys, phrase)
    assert "hidden" in out


def test_swiglu_hidden_has_hidden_cases_and_takes_multiple_of_by_keyword(capsys, monkeypatch):
    def keyword_only(d, *, multiple_of=256):
        return multiple_of * math.ceil(int(2 * 4 * d / 3) / multiple_of)
    out = assert_passes(check_swiglu_hidden, keyword_only, capsys)
    assert "all 10 public cases pass" in out
    monkeypatch.setenv("FFN_GRADING", "1")
    out = assert_passes(check_swiglu_hidden, keyword_only, capsys)
    assert "all 16 cases pass, 6 of them hidden ones" in out


# --------------------------------------------------------------------------------------------------------
# Hidden cases drawn from the grading secret: fresh in every grading run, built only while grading
# --------------------------------------------------------------------------------------------------------
N_HIDDEN = {check_gelu: 4, check_silu: 4, check_swiglu_ffn: 3, check_swiglu_hidden: 6}
BUILDERS = {"gelu": lesson04._hidden_activation("gelu", lesson04._GELU_TAILS),
            "silu": lesson04._hidden_activation("silu", lesson04._SILU_TAILS),
            "swiglu_ffn": lesson04._swiglu_hidden, "swiglu_hidden": lesson04._hidden_hidden}


def leave_out_public_cases(monkeypatch):
    """gelu, silu and swiglu_ffn without their public cases: what the hidden cases alone accept and reject (the
    public cases do not depend on the secret, and the tests above judge them; leaving them out keeps this fast).
    swiglu_hidden keeps its public cases: they are cheap, and they alone call it with a default other than 256
    often enough to tell it apart."""
    monkeypatch.setattr(lesson04, "_cases", lambda seed, large: [])
    monkeypatch.setattr(lesson04, "_swiglu_cases", list)


@pytest.fixture
def hidden_only(monkeypatch):
    leave_out_public_cases(monkeypatch)


RIGHT_ANSWERS = ([(check_gelu, f) for f in CORRECT_GELU] + OTHER_EXACT_FORMS
                 + [(check_silu, f) for f in (silu_expit, silu_stable_where, silu_tanh_identity, silu_loop)]
                 + [(check_swiglu_ffn, f) for f in (swiglu_matmul, swiglu_einsum, swiglu_token_loop)]
                 + [(check_swiglu_hidden, f) for f in (hidden_llama_style, hidden_ceil, hidden_negative_floor,
                                                       hidden_count_up, hidden_numpy_int)])


@pytest.mark.parametrize("check, fn", RIGHT_ANSWERS, ids=lambda v: getattr(v, "__name__", ""))
def test_right_answers_pass_the_hidden_cases_under_every_secret(check, fn, hidden_only, capsys):
    for secret in SECRETS:
        with graded_under(secret), np.errstate(all="ignore"):
            result, out, escaped = verdict(check, fn, capsys)
        assert result and result.hidden == N_HIDDEN[check] and not escaped, out


WRONG_ANSWERS = ([(check_gelu, f, name) for name, f in WRONG_GELU.items()] + [(check_gelu, gelu_cut_off, "cut-off")]
                 + [(check_silu, f, name) for name, f in WRONG_SILU.items()]
                 + [(check_silu, f, "cut-off") for f in (silu_z_above_20, silu_0_below_minus_20)]
                 + [(check_swiglu_ffn, f, name) for name, f in WRONG_SWIGLU.items()]
                 + [(check_swiglu_hidden, f, name) for name, f in WRONG_HIDDEN.items()])


@pytest.mark.parametrize("check, fn, named", WRONG_ANSWERS, ids=lambda v: getattr(v, "__name__", str(v)))
def test_wrong_answers_fail_the_hidden_cases_alone_under_every_secret(check, fn, named, hidden_only, capsys):
    """Each wrong answer of the banks fails under every secret, on the drawn cases by themselves (swiglu_hidden:
    with its public ones), with the mistake the public cases name; a cut-off in a tail is seen in the drawn
    tails wherever it sits in them."""
    for secret in SECRETS:
        with graded_under(secret), np.errstate(all="ignore"):
            result, out, _ = verdict(check, fn, capsys)
        assert not result and result.hidden == N_HIDDEN[check], out
        assert named in result.mistake, out


@pytest.mark.parametrize("check, right", [(check_gelu, gelu_scipy_erf), (check_silu, silu_expit),
                                          (check_swiglu_ffn, swiglu_matmul), (check_swiglu_hidden, hidden_ceil)])
def test_a_table_of_the_fixed_cases_fails_under_every_secret(check, right, capsys):
    """A forgery that tables the answers of a FFN_GRADING=1 run."""
    assert_forgery_fails_under_every_secret(check, memorising_forgery(check, right), capsys, n_hidden=N_HIDDEN[check])


@pytest.mark.parametrize("build, drawn_sizes", [(BUILDERS["gelu"], (0, 2)), (BUILDERS["silu"], (0, 2)),
                                                (BUILDERS["swiglu_ffn"], (0, 1, 2)),
                                                (BUILDERS["swiglu_hidden"], (0, 1, 2, 3, 4, 5))],
                         ids=BUILDERS)
def test_hidden_cases_are_drawn_afresh_under_each_secret_and_named_by_kind(build, drawn_sizes):
    runs = assert_drawn_afresh(build, every_case=False)
    for index in drawn_sizes:                                            # sizes are drawn, not only numbers
        assert len({sizes(run[index]) for run in runs}) > 1, runs[0][index].name


def within(n, low, high):
    return low <= n <= high


@pytest.mark.parametrize("secret", (None,) + SECRETS)
@pytest.mark.parametrize("name, tails", [("gelu", lesson04._GELU_TAILS), ("silu", lesson04._SILU_TAILS)])
def test_activation_hidden_cases_have_the_properties_their_names_state(name, tails, secret):
    array, number, float32, tail = (case.args["z"] for case in drawn(BUILDERS[name], secret))
    assert within(array.ndim, 1, 3) and all(within(n, 1, 5) for n in array.shape)
    assert number.shape == () and array.dtype == number.dtype == tail.dtype == np.float64
    assert float32.dtype == np.float32 and float32.ndim == 1 and within(float32.size, 2, 12)
    low, high = tails                                  # one value on each side in each step of 1: every cut-off
    for step in np.arange(low, high, 1.0):             # between low and high meets a value beyond it
        for side in (-1, 1):
            assert np.sum((side * tail >= step) & (side * tail < min(step + 1, high))) == 1, (step, side, tail)


@pytest.mark.parametrize("secret", (None,) + SECRETS)
def test_swiglu_hidden_cases_have_the_properties_their_names_state(secret):
    token, batch, square = drawn(lesson04._swiglu_hidden, secret)
    d, d_ff = token.args["W_gate"].shape
    assert token.args["x"].shape == (d,) and within(d, 3, 7) and within(d_ff, 4, 10) and d != d_ff
    assert batch.args["x"].ndim == 3 and all(within(n, 1, 4) for n in batch.args["x"].shape[:2])
    assert batch.args["x"].shape[2] == d and batch.args["W_gate"] is token.args["W_gate"]
    (T, side), (rows, cols) = square.args["x"].shape, square.args["W_gate"].shape
    assert rows == cols == side and within(side, 3, 6) and within(T, 2, 6)
    assert not np.allclose(square.args["W_gate"], square.args["W_gate"].T)     # a transpose shows


@pytest.mark.parametrize("secret", (None,) + SECRETS)
def test_swiglu_hidden_hidden_cases_have_the_properties_their_names_state(secret):
    model, wide, past, odd, small, multiple = (case.args for case in drawn(lesson04._hidden_hidden, secret))
    h = lesson04._truncated
    assert "multiple_of" not in model and model["d"] % 128 == 0 and within(model["d"], 1024, 16384)
    assert wide["multiple_of"] == 256 and within(wide["d"], 64, 10000)
    assert h(model["d"]) % 256 and h(wide["d"]) % 256                  # both need rounding
    d, m = past["d"], past["multiple_of"]                               # just past a multiple: 0.999 is not enough
    assert within(m, 2048, 8192) and 0 < h(d) % m < m / 1000
    assert m * int(h(d) / m + 0.999) < params.swiglu_hidden(d, m)
    d, m = odd["d"], odd["multiple_of"]
    assert within(d, 100, 5000) and within(m, 3, 99) and m & (m - 1) and h(d) % m
    assert within(small["d"], 1, 99) and small["multiple_of"] == 1
    d, m = multiple["d"], multiple["multiple_of"]                       # already a multiple: it stays
    assert h(d) % m == 0 and m < h(d) and params.swiglu_hidden(d, m) == h(d)


def test_no_hidden_case_is_drawn_outside_grading(monkeypatch, capsys):
    def refuse(label):
        raise AssertionError(f"hidden cases {label!r} drawn outside grading")
    monkeypatch.setattr(lesson04, "hidden_rng", refuse)
    for check, fn in ((check_gelu, gelu_scipy_erf), (check_silu, silu_expit), (check_swiglu_ffn, swiglu_matmul),
                      (check_swiglu_hidden, hidden_ceil)):
        assert_passes(check, fn, capsys)


# ---- first failures: the line held back, and no cause that is not the learner's (issue 21) --------------------
@pytest.fixture
def first_failure(monkeypatch):
    from helpers.checks import _verdict
    monkeypatch.setattr(_verdict, "_FAILED_ATTEMPTS", {})


def test_swiglu_gate_and_value_swapped_shows_the_formula_only_after_a_second_failure(first_failure, capsys):
    from helpers.ffn import silu

    def swapped(x, W_gate, W_up, W_down):
        return (silu(x @ W_up) * (x @ W_gate)) @ W_down
    formula = "(silu(x @ W_gate) * (x @ W_up)) @ W_down"
    result, first, _ = verdict(check_swiglu_ffn, swapped, capsys)
    assert not result and "gate and value swapped" in first and formula not in first, first
    assert "If the check finds this again" in first, first
    result, second, _ = verdict(check_swiglu_ffn, swapped, capsys)
    assert formula in second, second


def test_the_line_comes_when_the_same_mistake_comes_back_not_after_any_second_failure(first_failure, capsys):
    """A new slip after another gets its own first tier; the line shows the second time that slip is found."""
    from helpers.ffn import silu

    def swapped(x, W_gate, W_up, W_down):
        return (silu(x @ W_up) * (x @ W_gate)) @ W_down

    def silu_after_product(x, W_gate, W_up, W_down):
        return silu((x @ W_gate) * (x @ W_up)) @ W_down
    formula = "(silu(x @ W_gate) * (x @ W_up)) @ W_down"
    result, first, _ = verdict(check_swiglu_ffn, silu_after_product, capsys)
    assert not result and "after the product" in first and formula not in first, first
    result, second, _ = verdict(check_swiglu_ffn, swapped, capsys)   # a second failure, a first swap
    assert not result and "gate and value swapped" in second and formula not in second, second
    assert "If the check finds this again" in second, second
    result, third, _ = verdict(check_swiglu_ffn, swapped, capsys)    # the swap found again
    assert formula in third, third
    result, fourth, _ = verdict(check_swiglu_ffn, silu_after_product, capsys)   # the first slip found again
    assert "silu(x @ W_gate) * (x @ W_up)" in fourth and "If the check finds this again" not in fourth, fourth


def test_a_mistake_the_check_only_tried_is_not_counted_as_shown(first_failure, capsys):
    """Diagnosing 4d, the check runs the rounded-down mutant, whose results its validator reads: that is no
    message the learner saw, so a first rounded-down answer afterwards still gets the first tier."""
    four_d = next(m.fn for m in lesson04._HIDDEN_MISTAKES if m.name.startswith("4d, the classic width, instead"))

    def rounded_down(d, multiple_of=256):
        return multiple_of * (int(2 * 4 * d / 3) // multiple_of)
    result, first, _ = verdict(check_swiglu_hidden, four_d, capsys)
    assert not result and "4d, the classic width" in result.mistake, first
    result, second, _ = verdict(check_swiglu_hidden, rounded_down, capsys)
    assert not result and "rounded down" in result.mistake, second
    assert "math.ceil" not in second and "If the check finds this again" in second, second
    result, third, _ = verdict(check_swiglu_hidden, rounded_down, capsys)
    assert "math.ceil(h / m)" in third, third


def test_rounded_down_says_what_the_width_never_falls_below_truthfully(first_failure, capsys):
    """With multiple_of = 1 the right width, int(8/3 · d), is below 8/3 · d: the floor is h, not 8/3 · d."""
    def rounded_down(d, multiple_of=256):
        return multiple_of * (int(2 * 4 * d / 3) // multiple_of)
    _, out, _ = verdict(check_swiglu_hidden, rounded_down, capsys)
    assert "never falls below 8/3" not in out and "never below h, the truncated two thirds of 4d" in out, out
    assert params.swiglu_hidden(1025, 1) == 2733 < 8 * 1025 / 3


def test_silu_with_math_exp_names_np_exp_first_and_the_formula_only_when_found_again(first_failure, capsys):
    formula = "z / (1 + np.exp(-z))"
    result, first, _ = verdict(check_silu, silu_math_exp_on_the_array, capsys)
    assert not result and "math.exp" in result.mistake and formula not in first.split("Likely mistake")[1], first
    result, second, _ = verdict(check_silu, silu_math_exp_on_the_array, capsys)
    assert formula in second.split("Likely mistake")[1], second


def test_gelu_with_math_erf_names_scipy_first_and_the_call_only_when_found_again(first_failure, capsys):
    """A trial learner's math.erf on an array was handed special.erf(z / math.sqrt(2)) on a first failure."""
    def gelu(z):
        return 0.5 * z * (1 + math.erf(z / math.sqrt(2)))
    call = "special.erf(z / math.sqrt(2))"
    result, first, _ = verdict(check_gelu, gelu, capsys)
    assert not result and "math.erf" in result.mistake and "scipy.special.erf" in first, first
    assert call not in first and "If the check finds this again" in first, first
    result, second, _ = verdict(check_gelu, gelu, capsys)
    assert call in second, second


def test_hidden_width_round_is_told_no_trick_it_did_not_use(first_failure, capsys):
    def nearest(d, multiple_of=256):
        return multiple_of * round(int(2 * 4 * d / 3) / multiple_of)
    result, out, _ = verdict(check_swiglu_hidden, nearest, capsys)
    assert not result and "nearest" in result.mistake, out
    assert "0.999" not in out and "math.ceil" not in out and "-(-h // m)" not in out, out
