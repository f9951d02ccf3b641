"""For the tests of hidden cases drawn from the grading secret (helpers.checks._verdict.hidden_rng): grading under a
secret as the clean grading process does, the cases a builder draws, a memorising forgery built the way a cheating
learner would build it, and the assertions every lesson makes with them.

A check's hidden cases are drawn from the secret, so they differ from one secret to the next and from the fixed
ones that FFN_GRADING=1 runs without a secret (which a learner's own copy of the course can run too)."""
import contextlib
import copy
import inspect
import io
import itertools
import os
import sys
import types
from unittest import mock

import numpy as np
import pytest

from helpers.checks import _verdict
from helpers.checks._core import _same

SECRETS = ("first secret", "second secret", "third secret")
FAILED = "\u2718"


@contextlib.contextmanager
def graded_under(secret):
    """Grade with FFN_GRADING=1 and `secret` (None: FFN_GRADING=1 alone, the fixed hidden cases); afterwards no
    secret again (use_secret(None)) and the environment as it was, whatever happens."""
    with mock.patch.dict(os.environ, {_verdict.GRADING_ENV: "1"}):
        _verdict.use_secret(secret)
        try:
            yield
        finally:
            _verdict.use_secret(None)


@contextlib.contextmanager
def _not_graded():
    """As a learner's copy runs a check: no FFN_GRADING, no secret (the public cases alone)."""
    with mock.patch.dict(os.environ):
        os.environ.pop(_verdict.GRADING_ENV, None)
        _verdict.use_secret(None)
        yield


def drawn(build, secret):
    """The hidden cases the builder `build` draws under `secret` (None: the tests' fixed ones)."""
    with graded_under(secret):
        return build()


def sizes(case) -> tuple:
    """A case's sizes: the shape of each array argument, and the other arguments as they are."""
    return tuple(np.shape(v) if isinstance(v, np.ndarray) else v for v in case.args.values())


def same_input(a, b) -> bool:
    """The learner's own lookup: arrays (and lists against arrays) equal in shape and values, sequences item by
    item, objects (an expert) field by field, functions (an FFN, f) by their names: a learner's table cannot see
    inside them."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and np.array_equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and same_input(list(a.values()), list(b.values()))
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(same_input, a, b))
    if isinstance(a, types.FunctionType):                          # known by its name
        return isinstance(b, types.FunctionType) and a.__qualname__ == b.__qualname__
    if hasattr(a, "__dict__"):                                      # an expert: its weights
        return type(a) is type(b) and same_input(vars(a), vars(b))
    return a == b


def same_repr(a, b) -> bool:
    """The inputs written out in full, alike: a lookup without NumPy (lesson 02's checks refuse a function that
    uses it, and follow the functions it calls)."""
    return repr(a) == repr(b)


def _plain(value):
    """The learner's view of an argument: plain arrays (a check may hand in a recording subclass), copied."""
    return np.array(value) if isinstance(value, np.ndarray) else copy.deepcopy(value)


def memorising_forgery(check, right, otherwise=None, replay=False, answer_afterwards=False, same=same_input):
    """A memorising forgery, built as a cheating learner would: run `check` once with FFN_GRADING=1 and no secret
    on a recording wrapper of a right answer (it must pass), keeping every input the check hands it (the public
    and the fixed hidden cases, and the probes' variants of them) with `right`'s answer at that moment (so a check
    that sets kv.THETA for a case is answered with it). The forgery gives that answer for exactly those inputs
    (looked up by `same`, same_input or same_repr; with `replay` it computes it again, for a check that watches how
    the numbers are made) and `otherwise` for any other input. It has the right answer's signature.
    `answer_afterwards`, for a course function as `right` (a check refuses a function that calls one): the
    wrapper only records, returning None (the check fails it), and `right` answers the recorded inputs after the
    run; an input it cannot take (a probe's W1 transposed: ValueError) stays out of the table."""
    table, replayed = [], right if replay else None

    def recording(*args):
        seen = tuple(_plain(a) for a in args)
        if answer_afterwards:
            table.append((seen, args))
            return None
        answer = right(*args)
        table.append((seen, copy.deepcopy(answer)))
        return answer

    def forgery(*args):
        found = next((answer for seen, answer in table if same(seen, args)), None)
        if found is None:
            return copy.deepcopy(otherwise)
        return replayed(*args) if replayed else copy.deepcopy(found)

    with contextlib.suppress(TypeError, ValueError):
        recording.__signature__ = forgery.__signature__ = inspect.signature(right)
    with graded_under(None), contextlib.redirect_stdout(io.StringIO()) as out:
        verdict = check(recording)
    if answer_afterwards:
        recorded, table[:] = table[:], []
        for seen, args in recorded:
            with contextlib.suppress(ValueError):
                table.append((seen, right(*args)))
    else:
        assert verdict, out.getvalue()
    return forgery


def assert_forgery_fails_under_every_secret(check, forgery, capsys, n_public=None, n_hidden=None, hidden_only=None,
                                            labelled=True):
    """Assert that `forgery` (from memorising_forgery) passes every public case (n_public of them, if given), and
    every hidden case drawn without a secret (n_hidden of them, if given: the hole a secret closes), but under every
    secret fails, on every hidden case and on hidden cases only. `hidden_only()` leaves the check's public cases out
    after the first run (they do not depend on the secret). `labelled`: the report names a hidden case "hidden: "
    (lessons 07 and 08 do not)."""
    with _not_graded():
        verdict = check(forgery)
    out = capsys.readouterr().out
    n_public = verdict.total if n_public is None else n_public
    assert verdict and verdict.hidden == 0 and verdict.total == n_public, out
    assert f"all {n_public} public cases pass" in out, out
    if hidden_only is not None:
        hidden_only()
    with graded_under(None):
        verdict = check(forgery)                                    # the fixed hidden cases: what it memorised
    out = capsys.readouterr().out
    assert verdict and verdict.hidden > 0 and verdict.hidden == (verdict.hidden if n_hidden is None else n_hidden), out
    assert hidden_only is not None or verdict.total - verdict.hidden == n_public, out
    n_hidden, n_public = verdict.hidden, verdict.total - verdict.hidden
    for secret in SECRETS:
        with graded_under(secret):
            verdict = check(forgery)
        out = capsys.readouterr().out
        assert not verdict and (verdict.passed, verdict.total, verdict.hidden) == (n_public, n_public + n_hidden,
                                                                                 n_hidden), out
        failed = [line for line in out.splitlines() if line.lstrip().startswith(FAILED)]
        assert len(failed) == n_hidden, out
        if labelled:
            assert all(line.lstrip().startswith(f"{FAILED} hidden: ") for line in failed), out
            assert out.count(f"{FAILED} hidden: ") == n_hidden, out


def assert_banks_pass_and_fail_under_secrets(check, build, right, wrong, n_public, capsys, shown=lambda out: out):
    """Right answers pass every case under every secret, hidden ones included, and wrong ones (pairs of an answer
    and the words its report must show, in `shown(out)`) still fail, with those words. The wrong answers take the
    secrets in turn, to stay fast (a failure runs every mutant): each secret meets a third of them. `n_public`: how
    many public cases the check has (None: as many as it runs)."""
    with _not_graded():
        public = check(right[0]).total
    capsys.readouterr()
    assert public == (n_public if n_public is not None else public) and public > 0
    for i, secret in enumerate(SECRETS):
        with graded_under(secret):
            n_hidden = len(build())
            assert n_hidden > 0
            for fn in right:
                verdict = check(fn)
                out = capsys.readouterr().out
                assert verdict and verdict.hidden == n_hidden, (fn, out)
                assert f"all {public + n_hidden} cases pass, {n_hidden} of them hidden" in out, (fn, out)
            for fn, words in wrong[i::len(SECRETS)]:
                verdict = check(fn)
                out = capsys.readouterr().out
                assert not verdict and verdict.hidden == n_hidden, (words, out)
                if words is None:        # no one mistake fits every failing case: none may be named
                    assert "Likely mistake" not in out and "Possibly" not in out, out
                else:
                    assert words in shown(out), (words, out)


def assert_drawn_afresh(build, every_case=True, labelled=True) -> list:
    """Assert that `build` draws the same cases twice under one secret (and without one), names them alike under
    every secret (a name tells the kind, never a drawn value; with `labelled` it says the case is a hidden one),
    and draws other cases under each: every two draws differ, and no case is the same in all of them; with
    `every_case`, every case differs between every two draws (without it, a case drawn from a few values, such as
    a model width, may repeat under two secrets). Returns the draws, the fixed one (no secret) first."""
    secrets = (None,) + SECRETS
    runs = [drawn(build, secret) for secret in secrets]
    for secret, cases in zip(secrets, runs):
        again = drawn(build, secret)
        assert [c.name for c in again] == [c.name for c in cases], secret
        assert _same([c.args for c in again], [c.args for c in cases]), secret
        assert same_input([c.args for c in again], [c.args for c in cases]), secret
    if labelled:
        assert all(case.name.startswith("hidden: ") for case in runs[0]), [case.name for case in runs[0]]

    def alike(one, other):
        return _same(one, other) or same_input(one, other)
    for (a, one), (b, other) in itertools.combinations(zip(secrets, runs), 2):
        assert [c.name for c in one] == [c.name for c in other], (a, b)
        assert not alike([c.args for c in one], [c.args for c in other]), (a, b)
        if every_case:                                                  # every kind drawn afresh
            assert not any(alike(case.args, redrawn.args) for case, redrawn in zip(one, other)), (a, b)
    for index, case in enumerate(runs[0]):
        assert not all(alike(case.args, run[index].args) for run in runs[1:]), case.name
    return runs


def assert_not_built_outside_grading(check, build, right, monkeypatch):
    """Outside grading `build` is never called, and a right answer passes on the public cases."""
    monkeypatch.delenv(_verdict.GRADING_ENV, raising=False)
    monkeypatch.setattr(sys.modules[build.__module__], build.__name__,
                        lambda: pytest.fail("hidden cases built outside grading"))
    assert check(right)


def assert_hidden_cases_are_drawn_from_the_secret(check, build, right, wrong, monkeypatch, capsys):
    """What every check with hidden cases must do under the grading secret: (a) right answers pass every case,
    (b) wrong ones (fn, the diagnosis the bank expects) still fail, with that diagnosis, (c) a table of the cases a
    learner's copy runs with FFN_GRADING=1 passes every public case and fails under every secret, (d) the secrets
    draw different cases and one secret the same cases twice; outside grading nothing is drawn."""
    assert_banks_pass_and_fail_under_secrets(check, build, right, wrong, None, capsys)
    assert_forgery_fails_under_every_secret(check, memorising_forgery(check, right[0]), capsys,
                                            n_hidden=len(drawn(build, None)), labelled=False)
    assert_drawn_afresh(build, labelled=False)
    assert_not_built_outside_grading(check, build, right[0], monkeypatch)
