"""A named mistake is the learner's (issue 21, section 1): the labelled bank of tests/bank_named.py, and the
examples trial learners met, each of which used to name a mistake the learner did not make."""
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import special

import bank_named
from helpers import checks
from helpers.ffn import relu, silu


@pytest.fixture(autouse=True)
def not_grading(monkeypatch):
    for name in ("FFN_GRADING", "NBGRADER_EXECUTION"):
        monkeypatch.delenv(name, raising=False)


def test_the_bank_covers_every_exercise_in_several_styles():
    exercises = {name.removeprefix("check_") for name in checks.__all__}
    wrong = [a for a in bank_named.BANK if not a.right]
    assert {a.exercise for a in wrong} == exercises
    assert {a.exercise for a in bank_named.BANK if a.right} == exercises
    assert {a.label is None for a in wrong} == {True, False}                 # "none of the named ones" too
    assert any("combined" in a.style for a in wrong) and any("place" in a.style for a in wrong)
    assert any("float32" in a.style for a in wrong) and any("transpose" in a.style for a in wrong)


def test_every_wrong_answer_is_rejected_every_right_one_passes_and_every_name_is_the_right_one():
    results = bank_named.run_bank()
    shares = bank_named.shares(results)
    accepted = [(r.answer.exercise, r.answer.style) for r in results if not r.answer.right and r.passed]
    refused = [(r.answer.exercise, r.answer.style, r.out) for r in results if r.answer.right and not r.passed]
    assert not accepted and not refused, (accepted, refused)
    misnamed = [(r.answer.exercise, r.answer.style, r.answer.label, r.named) for r in shares["misnamed"]]
    assert not misnamed, misnamed
    assert shares["named_right"] == shares["named"] > 0.7 * shares["wrong"]   # and most mistakes are named
    # README quotes these figures: they follow the bank
    readme = " ".join((Path(__file__).resolve().parent.parent / "README.md").read_text().split())
    per_lesson = {}
    for r in results:
        if not r.answer.right:
            lesson = bank_named.lesson_of(r.answer.exercise)
            per_lesson[lesson] = per_lesson.get(lesson, 0) + 1
    counts = [str(per_lesson[lesson]) for lesson in sorted(per_lesson)]
    for phrase in (f"`tests/bank_named.py`: {shares['wrong']} wrong answers",
                   f"(lesson by lesson {', '.join(counts[:-1])} and {counts[-1]})",
                   f"and {shares['right']} right answers",
                   f"{shares['named']} of the {shares['wrong']} get a name, all {shares['named']} the right one",
                   f"The other {shares['wrong'] - shares['named']} are told what differs"):
        assert phrase in readme, phrase


def test_a_named_mistake_is_what_progress_records():
    """The summary names what the report names: the recorded mistake is the Likely mistake line's first sentence,
    and with no name, what differs (never a bare expected/got)."""
    for r in bank_named.run_bank([a for a in bank_named.BANK if not a.right]):
        if r.named:
            assert r.recorded == r.named.split(". ")[0].rstrip("."), (r.answer.exercise, r.recorded, r.named)
        assert not r.recorded.startswith("expected "), (r.answer.exercise, r.answer.style, r.recorded)


# ---- the examples of issue 21, section 1 ---------------------------------------------------------------------
def run(check, fn, name, capsys):
    fn.__name__ = name
    verdict = check(fn)
    return verdict, capsys.readouterr().out


def first_failure(out):
    return next(line for line in out.splitlines() if line.startswith("  \u2718"))


def collapse_in_place(W1, b1, W2, b2):
    b2 += b1 @ W2
    return W1 @ W2, b2


def count_one_more(d, d_ff, bias=True):
    return 2 * d * d_ff + (d + d_ff if bias else 0) + 1


def count_4d(d, d_ff, bias=True):
    return 8 * d * d + (5 * d if bias else 0)


def swiglu_both_transposed(x, W_gate, W_up, W_down):
    return (silu(x @ W_gate.T) * (x @ W_up.T)) @ W_down


def gelu_negatives_clamped(z):
    z = np.maximum(z, 0)
    return z * 0.5 * (1 + special.erf(z / math.sqrt(2)))


def matvec_last_row_dropped(M, v):
    n = len(v)
    return [sum(M[i * n + j] * v[j] for j in range(n)) for i in range(len(M) // n - 1)]


def batched_changes_x(x, W1, b1, W2, b2):
    h = relu(x @ W1 + b1)
    x *= 1.0000001                      # an input changed in place; the numbers are right
    return h @ W2 + b2


@pytest.mark.parametrize("check, fn, name, must, must_not", [
    (checks.check_collapse, collapse_in_place, "collapse", "changed its input `b2` in place", "rounded"),
    (checks.check_count_ffn_params, count_one_more, "count_ffn_params", "1 more than the right value",
     "float32 or float16 step"),
    (checks.check_swiglu_ffn, swiglu_both_transposed, "swiglu_ffn", "Hint:", "W_down transposed"),
    (checks.check_hand_trace, lambda: ([5, -1], [4, 0], [4, -1]), "hand_trace", "another order", "b1 left out"),
    (checks.check_firing_units, lambda x, W1, b1: [], "firing_units", "yours is empty", "threshold"),
    (checks.check_gelu, gelu_negatives_clamped, "gelu", "yours is 0 there", "rounded"),
    (checks.check_relu_backward, lambda z, dh: np.maximum(dh, 0) * (z > 0), "relu_backward", "What differs",
     "inverted"),
    (checks.check_matvec, matvec_last_row_dropped, "matvec", "the last 1 missing", "number of columns"),
    (checks.check_ffn_batched, batched_changes_x, "ffn_batched", "changed its input `x` in place", "precision"),
    (checks.check_detector, lambda: ([1, -1.0000000001], -1), "detector", "w = [1, -1.0000000001]",
     "the bias off by a hair"),
])
def test_the_issues_examples_name_no_mistake_the_learner_did_not_make(check, fn, name, must, must_not, capsys):
    verdict, out = run(check, fn, name, capsys)
    assert not verdict and must in out, out
    assert must_not not in out and must_not not in verdict.mistake, out


def test_a_first_failure_never_names_another_mistake_than_the_summary(capsys):
    """count_ffn_params with d_ff taken as 4d: the first failure used to blame a cache keyed on d."""
    verdict, out = run(checks.check_count_ffn_params, count_4d, "count_ffn_params", capsys)
    assert verdict.mistake == "d_ff assumed to be 4 * d"
    assert "cache" not in out and first_failure(out).endswith("expected 2,211,840, got 3,276,800"), out


def test_swiglu_with_both_gate_matrices_transposed_says_where_it_fails(capsys):
    verdict, out = run(checks.check_swiglu_ffn, swiglu_both_transposed, "swiglu_ffn", capsys)
    assert "Likely mistake" not in out and "Possibly" not in out
    assert "matrix product differ" in verdict.mistake or "mismatch" in verdict.mistake, verdict.mistake
