"""The grader protocol itself: never raise, name the mistake, True only when every case passes."""
import numpy as np
import pytest

from helpers.checks._core import (Case, Mistake, array_problem, check_function, close, fmt, precision_note,
                                  run, vector_problem)


def reference(x):
    return [2 * v for v in x]


CASES = [Case("small", {"x": [1.0, -2.0]}), Case("three", {"x": [0.5, 0.0, 3.0]})]
MISTAKES = [Mistake("squared instead of doubled", "Multiply by 2.", lambda x: [v * v for v in x]),
            Mistake("sign flipped", "Drop the minus.", lambda x: [-2 * v for v in x])]


def grade(fn, capsys):
    result = check_function("double", fn, CASES, reference, lambda v, c: vector_problem(v, len(c.args["x"])),
                            MISTAKES)
    return result, capsys.readouterr().out


def test_correct_function_passes_every_case(capsys):
    ok, out = grade(lambda x: [v + v for v in x], capsys)
    assert ok is True and out.count("\u2714") == 2 and "all 2 cases pass" in out


def test_numpy_result_and_tuple_are_accepted(capsys):
    assert grade(lambda x: 2 * np.asarray(x), capsys)[0] is True
    assert grade(lambda x: tuple(2 * v for v in x), capsys)[0] is True


def test_stub_says_not_implemented_and_nothing_else(capsys):
    def stub(x):
        raise NotImplementedError("your code here")
    ok, out = grade(stub, capsys)
    assert ok is False and out.strip() == ("double: not implemented yet (replace the `raise NotImplementedError` "
                                           "line with your code).")


def test_mutant_is_named(capsys):
    ok, out = grade(lambda x: [-2 * v for v in x], capsys)
    assert ok is False and "Likely mistake: sign flipped. Drop the minus." in out
    assert "expected [2, -4], got [-2, 4]" in out


def test_partial_match_is_offered_as_possibly(capsys):
    # squares on the first case only (where squaring and doubling differ), correct afterwards
    calls = []

    def half_wrong(x):
        calls.append(1)
        return [v * v for v in x] if len(calls) == 1 else [2 * v for v in x]
    ok, out = grade(half_wrong, capsys)
    assert ok is False and "Possibly: squared instead of doubled" in out


def test_exception_reports_type_message_and_learner_line(capsys):
    def broken(x):
        total = 0
        return [v / total for v in x]
    ok, out = grade(broken, capsys)
    assert ok is False and "raised ZeroDivisionError: float division by zero" in out
    assert "line 3 of broken: `return [v / total for v in x]`" in out


@pytest.mark.parametrize("fn, message", [
    (lambda x: None, "returned None. Did you forget the `return` statement"),
    (lambda x: "2, -4", "returned a string"),
    (lambda x: 3.0, "returned a single number"),
    (lambda x: (2 * v for v in x), "returned a generator"),
    (lambda x: {1: 2}, "returned a dict"),
    (lambda x: [2 * v for v in x][:1], "returned 1 number; expected 2"),
    (lambda x: [[2 * v] for v in x], "element 0 is [2]"),
    (lambda x: [float("nan")] * len(x), "whose element 0 is nan"),
    (lambda x: np.array([[2.0] * len(x)]), "returned an array of shape (1, 2)"),
])
def test_bad_returns_get_their_own_message(fn, message, capsys):
    ok, out = grade(fn, capsys)
    assert ok is False and message in out


def test_input_modified_in_place_is_reported(capsys):
    def in_place(x):
        for i in range(len(x)):
            x[i] *= 2
        return x
    ok, out = grade(in_place, capsys)
    assert ok is False and "changed its input `x` in place" in out


def test_not_a_function(capsys):
    ok = check_function("double", [2, -4], CASES, reference, lambda v, c: None)
    assert ok is False and "expected a function" in capsys.readouterr().out


def test_even_system_exit_does_not_escape(capsys):
    def leaves(x):
        raise SystemExit(3)
    ok, out = grade(leaves, capsys)
    assert ok is False and "raised SystemExit: 3" in out


def test_run_never_shares_inputs_with_the_caller():
    args = {"x": [1.0, 2.0]}
    outcome = run(lambda x: x.append(3.0), args)
    assert args == {"x": [1.0, 2.0]} and outcome.mutated == ["x"]


def test_array_problem_messages():
    assert array_problem(np.zeros((2, 3), np.float32), (2, 3), np.float32) is None
    assert "shape (3, 2)" in array_problem(np.zeros((3, 2)), (2, 3), shape_hints={(3, 2): "transposed?"})
    assert "transposed?" in array_problem(np.zeros((3, 2)), (2, 3), shape_hints={(3, 2): "transposed?"})
    assert "dtype float64" in array_problem(np.zeros((2, 3)), (2, 3), np.float32)
    assert "NaN" in array_problem(np.full((2, 3), np.inf), (2, 3))
    assert "list" in array_problem([[0.0]], (1, 1))


def test_fmt_is_short_and_stable():
    assert fmt([1.0, -0.5, 2]) == "[1, -0.5, 2]"
    assert fmt(np.float32(1 / 3)) == "0.3333"
    assert fmt(np.arange(20.0)).startswith("array of shape (20,) starting [0, 1, 2, 3")
    assert close([1.0, 2.0], (1.0, 2.0 + 1e-12)) and not close([1.0], [1.0, 2.0]) and not close("a", [1.0])


def test_no_possibly_from_a_mistake_that_gets_the_failing_case_right(capsys):
    # Correct values, but the input is changed in place: the "sign flipped" mutant is wrong on every case and
    # must not be offered; "squared" gets case "small"'s second entry wrong too. Nothing should be guessed.
    def in_place(x):
        x.append(0.0)
        return [2 * v for v in x[:-1]]
    ok = check_function("double", in_place, CASES, reference,
                        lambda v, c: vector_problem(v, len(c.args["x"])), MISTAKES, fallback_hint="think")
    out = capsys.readouterr().out
    assert ok is False and "in place" in out and "Possibly" not in out and "Likely" not in out
    assert "Hint" not in out  # a hint about the computation does not help with a changed input


def test_a_mistake_with_a_malformed_result_is_named_when_the_learner_shares_it(capsys):
    one_short = Mistake("last element dropped", "Keep every element.", lambda x: [2 * v for v in x][:-1])
    ok = check_function("double", lambda x: [2 * v for v in x[:-1]], CASES, reference,
                        lambda v, c: vector_problem(v, len(c.args["x"])), [one_short])
    out = capsys.readouterr().out
    assert ok is False and "Likely mistake: last element dropped" in out


def test_functions_and_objects_passed_as_inputs_are_not_reported_as_changed():
    from dataclasses import dataclass
    from functools import partial

    @dataclass
    class Expert:
        W: np.ndarray

    args = {"expert": Expert(np.ones((2, 2))), "act": partial(np.maximum, 0)}
    assert run(lambda expert, act: act(expert.W).sum(), args).mutated == []
    assert run(lambda expert, act: expert.W.fill(3.0), args).mutated == ["expert"]


def test_an_unrelated_exception_of_the_same_type_is_not_blamed_on_a_mistake(capsys):
    raises = Mistake("index past the end", "Stop at len(x).", lambda x: [x[i + 1] for i in range(len(x))])
    ok = check_function("double", lambda x: (_ for _ in ()).throw(IndexError("my own message")), CASES,
                        reference, lambda v, c: vector_problem(v, len(c.args["x"])), [raises])
    out = capsys.readouterr().out
    assert ok is False and "raised IndexError: my own message" in out and "index past the end" not in out


def test_the_same_failure_with_other_sizes_is_matched(capsys):
    raises = Mistake("index past the end", "Stop at len(x).", lambda x: [x[i + 1] for i in range(len(x))])
    ok = check_function("double", lambda x: [2 * x[i + 1] for i in range(len(x))], CASES, reference,
                        lambda v, c: vector_problem(v, len(c.args["x"])), [raises])
    assert ok is False and "Likely mistake: index past the end" in capsys.readouterr().out


def test_a_stub_called_from_a_finished_function_names_the_stub(capsys):
    def helper(v):
        raise NotImplementedError("your code here")

    def double(x):
        return [2 * helper(v) for v in x]
    ok, out = grade(double, capsys)
    assert ok is False and "not implemented yet" not in out
    assert "raised NotImplementedError: your code here (line 2 of helper" in out


def test_objects_are_described_by_kind_never_by_address():
    assert fmt(v for v in []) == "a generator" and "0x" not in fmt(object())
    from helpers.checks._core import a_kind, plural
    assert a_kind(3) == "an int" and a_kind({}) == "a dict" and plural(1, "number") == "1 number"


# A reference reached another way than by the learner's own call is still the reference.
def _batched_through_chunking(x, W1, b1, W2, b2):
    from helpers import chunking
    return chunking.ffn_chunked(x, W1, b1, W2, b2, chunk=len(x))      # helpers.chunking calls helpers.ffn.ffn


def _relu_backward_through_numpy(z, dh):
    from helpers.ffn import relu_grad
    return dh * np.apply_along_axis(relu_grad, -1, z)                   # NumPy makes the call


def _relu_backward_in_a_thread(z, dh):
    from concurrent.futures import ThreadPoolExecutor
    from helpers.ffn import relu_grad
    with ThreadPoolExecutor(1) as pool:
        return dh * pool.submit(relu_grad, z).result()                  # another thread makes the call


def _collapse_through_stack(W1, b1, W2, b2):
    from helpers.collapse import collapse_stack
    return collapse_stack([(W1, b1), (W2, b2)])


@pytest.mark.parametrize("fn, watch, reference", [
    (_batched_through_chunking, "ffn_batched", "helpers.ffn.ffn (through helpers.chunking.ffn_chunked)"),
    (_relu_backward_through_numpy, "relu_backward", "helpers.ffn.relu_grad"),
    (_relu_backward_in_a_thread, "relu_backward", "helpers.ffn.relu_grad"),
    (_collapse_through_stack, "collapse", "helpers.collapse.collapse_affine (through helpers.collapse.collapse_stack)"),
])
def test_a_reference_reached_indirectly_is_still_noticed(fn, watch, reference):
    rng = np.random.default_rng(0)
    if watch == "ffn_batched":
        args = dict(x=rng.normal(size=(3, 2)), W1=rng.normal(size=(2, 4)), b1=rng.normal(size=4),
                    W2=rng.normal(size=(4, 2)), b2=rng.normal(size=2))
    elif watch == "collapse":
        args = dict(W1=rng.normal(size=(2, 3)), b1=rng.normal(size=3), W2=rng.normal(size=(3, 2)),
                    b2=rng.normal(size=2))
    else:
        args = dict(z=rng.normal(size=(2, 3)), dh=rng.normal(size=(2, 3)))
    outcome = run(fn, args, watch=watch)
    assert not outcome.raised, outcome.error
    assert reference in outcome.references, outcome.references
    assert not run(fn, args).references                                  # nothing is watched without `watch`


def test_huge_ints_are_described_not_raised():
    huge = 10 ** 5000                                                  # str() refuses it, float() overflows
    assert fmt(huge) == "an int of about 5001 digits"
    assert fmt(-huge).startswith("-an int of about")
    assert "too large for a float" in vector_problem([1.0, huge], 2)
    assert not close([huge], [1.0])


def _exact(x):
    return x * np.pi


@pytest.mark.parametrize("answer, words", [
    (lambda x: np.round(x * np.pi, 5), "agree to about"),
    (lambda x: (x * np.float32(np.pi)).astype(np.float32), "your result is float32"),
    (lambda x: (x.astype(np.float32) * np.float32(np.pi)).astype(np.float64), "a float32 or float16 step"),
])
def test_a_result_off_only_in_its_last_digits_says_so(answer, words, capsys):
    cases = [Case("three numbers", {"x": np.array([1.1, -2.3, 3.7])})]
    result = check_function("scaled", answer, cases, _exact, validate=lambda v, c: None,
                            compare=lambda a, b: close(a, b, rtol=1e-12, atol=0))
    out = capsys.readouterr().out
    assert not result
    assert words in out, out


def test_a_result_far_off_gets_no_precision_note(capsys):
    cases = [Case("three numbers", {"x": np.array([1.1, -2.3, 3.7])})]
    assert not check_function("scaled", lambda x: x * 3, cases, _exact, validate=lambda v, c: None)
    out = capsys.readouterr().out
    assert "significant digits" not in out and "expected" in out
    assert precision_note([1.0, 2.0], [1.0, 2.0]) == ""               # equal: nothing to say
    assert precision_note(["a"], [1.0]) == ""                          # not numbers: nothing to say


def _moe_with_the_checks_reference(x, W_router, experts, k):
    from helpers.checks.lesson07 import _reference_moe
    return _reference_moe(x, W_router, experts, k)


def test_a_checks_private_reference_is_noticed_but_a_handed_in_callable_is_not():
    from helpers.checks import lesson07
    from helpers.moe import make_experts
    rng = np.random.default_rng(1)
    args = dict(x=rng.normal(size=(3, 4)), W_router=rng.normal(size=(4, 3)),
                experts=make_experts(rng, 3, 4, 6), k=2)
    outcome = run(_moe_with_the_checks_reference, args, watch="moe_forward")
    assert outcome.references == ["helpers.checks.lesson07._reference_moe"], outcome.references
    handed = dict(f=lesson07._reference_moe, args=args)              # a callable handed in may be called
    assert not run(lambda f, args: f(**args), handed, watch="moe_forward").references


def test_results_that_print_the_same_say_where_they_differ(capsys):
    """A row past the first few, or a digit past the fourth: the message names the place and both numbers."""
    from helpers.checks._core import largest_difference
    expected = np.arange(30.0).reshape(10, 3)
    got = expected.copy()
    got[7, 2] += 1.0
    assert "at index (7, 2), expected 23, got 24" in largest_difference(got, expected)
    cases = [Case("ten rows", {"x": expected})]
    wrong = lambda x: np.where(np.arange(30).reshape(10, 3) == 23, x + 1, x)   # noqa: E731
    assert not check_function("rows", wrong, cases, lambda x: x, validate=lambda v, c: None)
    out = capsys.readouterr().out
    assert "the largest difference is at index (7, 2), expected 23, got 24" in out, out
    assert largest_difference("a", 1.0) == "" and largest_difference([1.0], [1.0, 2.0]) == ""


@pytest.mark.parametrize("error", [NameError("name 'math' is not defined"), AttributeError("no attribute 'sumprod'"),
                                   ModuleNotFoundError("No module named 'torch'")])
def test_a_name_or_import_error_gets_no_hint_about_the_computation(error, capsys):
    def fn(x):
        raise error
    cases = [Case("three numbers", {"x": np.array([1.0, 2.0, 3.0])})]
    assert not check_function("scaled", fn, cases, _exact, validate=lambda v, c: None,
                              fallback_hint="multiply by pi")
    out = capsys.readouterr().out
    assert type(error).__name__ in out and "Hint: multiply by pi" not in out, out


def test_a_value_error_still_gets_the_hint(capsys):
    def fn(x):
        raise ValueError("matmul: Input operand 1 has a mismatch in its core dimension 0")
    cases = [Case("three numbers", {"x": np.array([1.0, 2.0, 3.0])})]
    assert not check_function("scaled", fn, cases, _exact, validate=lambda v, c: None,
                              fallback_hint="multiply by pi")
    assert "Hint: multiply by pi" in capsys.readouterr().out


def test_facts_are_printed_under_each_failing_case_and_name_no_mistake(capsys):
    """facts(value, case): what a failing result does, one line each under its case; the diagnosis is unchanged."""
    def facts(value, case):
        return [f"sum {sum(value):g}"]
    ok = check_function("double", lambda x: [v * v for v in x], CASES, reference,
                        lambda v, c: vector_problem(v, len(c.args["x"])), MISTAKES, facts=facts)
    lines = capsys.readouterr().out.splitlines()
    assert not ok
    first = next(i for i, line in enumerate(lines) if line.startswith("  \u2718 small"))
    assert lines[first + 1] == "      sum 5"
    assert "      sum 9.25" in lines and "Likely mistake: squared instead of doubled" in "\n".join(lines)
    check_function("double", lambda x: [v + v for v in x], CASES, reference, lambda v, c: None, facts=facts)
    assert "sum" not in capsys.readouterr().out            # a pass shows no facts


def test_facts_that_cannot_be_read_are_left_out(capsys):
    def facts(value, case):
        raise ValueError("cannot read it")
    assert not check_function("double", lambda x: [v * v for v in x], CASES, reference, lambda v, c: None,
                              MISTAKES, facts=facts)
    assert "cannot read it" not in capsys.readouterr().out


def test_what_differs_over_some_failing_cases_says_which_and_what_the_others_did(capsys):
    """A trial learner's matvec returned too few numbers in some cases and raised IndexError in others; the
    report said "in the failing cases that returned numbers shaped right", though none was shaped right, and
    "in every failing case" of the short ones only. It says how many returned numbers, and what the rest did."""
    cases = [Case("two", {"x": [1.0, -2.0]}), Case("three", {"x": [0.5, 0.0, 3.0]}),
             Case("four", {"x": [1.0, 2.0, 3.0, 4.0]}), Case("one", {"x": [5.0]})]

    def cut(x):               # the last one dropped, where there are more than two; else past the end
        if len(x) > 2:
            return [2 * v for v in x[:-1]]
        return [2 * x[i] for i in range(3)]
    check_function("double", cut, cases, reference, lambda v, c: vector_problem(v, len(c.args["x"])))
    out = capsys.readouterr().out
    line = next(text for text in out.splitlines() if "What differs" in text)
    assert "shaped right" not in line and "in every failing case" not in line, line
    assert line.startswith("  What differs, in the 2 failing cases that returned numbers: yours stops short in "
                           "each of them"), line
    assert "the other 2 raised IndexError" in line, line


def test_what_differs_over_some_failing_cases_of_the_right_shape_says_shaped_right(capsys):
    cases = [Case("two", {"x": [1.0, -2.0]}), Case("three", {"x": [0.5, 0.0, 3.0]}), Case("one", {"x": [5.0]})]

    def off(x):              # 1 too much where it returns, None for one number
        return [2 * v + 1 for v in x] if len(x) > 1 else None
    check_function("double", off, cases, reference, lambda v, c: vector_problem(v, len(c.args["x"])))
    line = next(text for text in capsys.readouterr().out.splitlines() if "What differs" in text)
    assert "in the 2 failing cases that returned numbers shaped right: yours is 1 more than the right value in " \
           "every entry of each of them; the other one failed in another way" in line, line
