"""Grading as the clean grading process does, under a secret, for the tests of hidden cases: a check's hidden
cases are drawn from the secret (helpers.checks._verdict.hidden_rng), so they differ from one secret to the next
and from the fixed ones that FFN_GRADING=1 runs without a secret (which a learner's own copy can run too)."""
import contextlib
import io
import os
from unittest import mock

from helpers.checks import _verdict

SECRETS = ("first secret", "second secret", "third secret")


@contextlib.contextmanager
def graded_under(secret):
    """Grade with `secret` (None: FFN_GRADING=1 alone, the fixed cases); the secret is always reset after."""
    with mock.patch.dict(os.environ, {"FFN_GRADING": "1"}):
        _verdict.use_secret(secret)
        try:
            yield
        finally:
            _verdict.use_secret(None)


def by_repr(*args):
    """The inputs written out in full: a key for a table of lists of floats and ints."""
    return repr(args)


def memorising_forgery(check, reference, key=by_repr, otherwise=None):
    """What a cheating learner can build: the inputs their own copy of `check` passes with FFN_GRADING=1 and no
    secret (the public and the fixed hidden cases, and the probes' variants of them), recorded by a wrapper,
    with the reference's answers where it has one. The forgery answers those inputs (looked up by key(*args))
    and gives `otherwise` for any other input."""
    seen = []

    def recorder(*args):
        seen.append(args)
    with graded_under(None), contextlib.redirect_stdout(io.StringIO()):
        check(recorder)
    table = {}
    for args in seen:
        with contextlib.suppress(ValueError):    # a probe's input that the reference cannot take (W1 transposed)
            table[key(*args)] = reference(*args)

    def forgery(*args):
        answer = table.get(key(*args), otherwise)
        return None if answer is None else list(answer)
    return forgery


def assert_caught_by_every_secret(check, forgery, n_public, n_hidden, capsys):
    """The forgery passes where its table was made (FFN_GRADING=1, no secret) and, under each secret, every
    public case but fails: on hidden cases only."""
    with graded_under(None):
        assert check(forgery), capsys.readouterr().out                  # the table is right where it was made
    for secret in SECRETS:
        with graded_under(secret):
            verdict = check(forgery)
        out = capsys.readouterr().out
        assert not verdict and verdict.hidden == n_hidden and verdict.passed == n_public, out
        failed = [line for line in out.splitlines() if line.lstrip().startswith("\u2718")]
        assert failed and all(line.lstrip().startswith("\u2718 hidden: ") for line in failed), out
