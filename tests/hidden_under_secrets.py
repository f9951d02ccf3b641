"""For the tests of hidden cases drawn from the grading secret (helpers.checks._verdict.hidden_rng): grading under a
secret, the draws a builder makes, and a memorising forgery built the way a cheating learner would build it."""
import contextlib
import copy
import inspect
import io
import itertools

import numpy as np

from helpers.checks import _verdict
from helpers.checks._core import _same

SECRETS = ("first secret", "second secret", "third secret")


@contextlib.contextmanager
def graded_under(secret):
    """Grading as the clean grading process does, with `secret` (None: the fixed cases); no secret afterwards."""
    _verdict.use_secret(secret)
    try:
        yield
    finally:
        _verdict.use_secret(None)


def drawn(build, secret):
    """The hidden cases the builder `build` draws under `secret` (None: the tests' fixed ones)."""
    with graded_under(secret):
        return build()


def sizes(case) -> tuple:
    """A case's sizes: the shape of each array argument, and the other arguments as they are."""
    return tuple(np.shape(v) if isinstance(v, np.ndarray) else v for v in case.args.values())


def assert_drawn_afresh(build) -> list:
    """Assert that `build` draws the same cases twice under one secret (and without one), names them alike under
    every secret (a name tells the kind, never a drawn value), and draws other cases under each: every two draws
    differ, and no case is the same in all of them. Returns the draws, the fixed one (no secret) first."""
    runs = [drawn(build, secret) for secret in (None,) + SECRETS]
    for secret, cases in zip((None,) + SECRETS, runs):
        assert _same([c.args for c in drawn(build, secret)], [c.args for c in cases]), secret
    for one, other in itertools.combinations(runs, 2):
        assert [c.name for c in one] == [c.name for c in other]
        assert not _same([c.args for c in one], [c.args for c in other])
    for index, case in enumerate(runs[0]):
        assert not all(_same(case.args, run[index].args) for run in runs[1:]), case.name
    return runs


def _inputs(args) -> tuple:
    """What a learner's table keys a call by: each array by its dtype, shape and bytes, anything else as it is."""
    return tuple((a.dtype.str, a.shape, a.tobytes()) if isinstance(a, np.ndarray) else a for a in args)


def memorised(check, right, monkeypatch, replay=False):
    """A memorising forgery, built as a cheating learner would: run the check once with FFN_GRADING=1 and no
    secret on a recording wrapper of a right answer, keeping every input the check hands it with the answer;
    the forgery gives that answer for exactly those inputs (with `replay` it computes it, for a check that
    watches how the numbers are made) and None for anything else. It has the right answer's signature."""
    table = {}

    def recording(*args):
        table[_inputs(args)] = answer = right(*args)
        return answer

    def forgery(*args):
        answer = table.get(_inputs(args))
        return None if answer is None else right(*args) if replay else copy.deepcopy(answer)

    recording.__signature__ = forgery.__signature__ = inspect.signature(right)
    monkeypatch.setenv("FFN_GRADING", "1")
    with contextlib.redirect_stdout(io.StringIO()):
        assert check(recording)
    monkeypatch.delenv("FFN_GRADING")
    return forgery


def assert_forgery_fails_under_every_secret(check, forgery, n_hidden, capsys, monkeypatch, hidden_only=None):
    """Assert that `forgery` (from memorised) passes every public case, and every hidden case drawn without a
    secret (the hole a secret closes), and fails under every secret, on hidden cases only. `hidden_only`, given the
    monkeypatch, leaves the check's public cases out from then on (they do not depend on the secret)."""
    result = check(forgery)
    assert result and result.hidden == 0 and "public cases pass" in capsys.readouterr().out
    if hidden_only is not None:
        hidden_only(monkeypatch)
    monkeypatch.setenv("FFN_GRADING", "1")
    result = check(forgery)
    assert result and result.hidden == n_hidden
    monkeypatch.delenv("FFN_GRADING")
    for secret in SECRETS:
        with graded_under(secret):
            result = check(forgery)
        out = capsys.readouterr().out
        assert not result and result.hidden == n_hidden and result.passed >= result.total - result.hidden, out
