"""For the tests of hidden cases drawn from the grading secret (helpers.checks._verdict.hidden_rng): a few
secrets to grade under, the memorising forgery a learner could build from their own copy of the course, and
the assertions every lesson makes with them."""
import contextlib
import copy

import numpy as np

from helpers.checks import _verdict

SECRETS = ("first secret", "second secret", "third secret")


@contextlib.contextmanager
def secret(value):
    """Grade as the clean grading process does, with the hidden cases drawn from `value`."""
    _verdict.use_secret(value)
    try:
        yield
    finally:
        _verdict.use_secret(None)


def _plain(value):
    """The learner's view of an argument: plain arrays (a check may hand in a recording subclass)."""
    return np.array(value) if isinstance(value, np.ndarray) else copy.deepcopy(value)


def _same_inputs(a, b) -> bool:
    return len(a) == len(b) and all(np.shape(x) == np.shape(y) and np.array_equal(x, y) for x, y in zip(a, b))


def same_case(a, b) -> bool:
    """Two Cases with the same name and the same arguments, in shape and value."""
    return a.name == b.name and a.args.keys() == b.args.keys() and _same_inputs(list(a.args.values()),
                                                                                 list(b.args.values()))


def drawn_twice(draw):
    """A hidden-case builder's cases under two secrets, each drawn twice: [(first, again), (first, again)]."""
    pairs = []
    for value in SECRETS[:2]:
        with secret(value):
            pairs.append((draw(), draw()))
    return pairs


def memorising_forgery(check, answer, monkeypatch):
    """What a learner who reads the course's files can build: run `check` once with FFN_GRADING=1 and no
    secret, recording every input it passes and the right answer there (`answer`, run at that moment, so a
    check that sets kv.THETA for a case is answered with it), then a function that answers from that table
    and returns None for any input it has not seen."""
    table = []

    def recorder(*args):
        args = tuple(_plain(a) for a in args)
        table.append((args, answer(*copy.deepcopy(args))))
        return None

    monkeypatch.setenv("FFN_GRADING", "1")
    check(recorder)
    monkeypatch.delenv("FFN_GRADING")

    def forgery(*args):
        for inputs, result in table:
            if _same_inputs(inputs, args):
                return copy.deepcopy(result)
        return None
    return forgery


def assert_banks_pass_and_fail_under_secrets(check, draw, right, wrong, n_public, capsys, shown=lambda out: out):
    """Right answers pass every case, hidden ones included, and wrong ones are still named (`wrong`: pairs of an
    answer and the words its report must show, in `shown(out)`). The banks take the secrets in turn, to stay
    fast (a failure runs every mutant): each secret meets a third of the right answers, in several styles,
    and a third of the wrong ones."""
    for index, fn in enumerate(right):
        with secret(SECRETS[index % len(SECRETS)]):
            n_hidden = len(draw())
            verdict = check(fn)
        out = capsys.readouterr().out
        assert verdict and f"all {n_public + n_hidden} cases pass, {n_hidden} of them hidden" in out, out
    for index, (fn, words) in enumerate(wrong):
        with secret(SECRETS[index % len(SECRETS)]):
            verdict = check(fn)
        out = capsys.readouterr().out
        assert not verdict and words in shown(out), (words, out)


def assert_a_memorising_forgery_fails_under_secrets(check, answer, n_public, capsys, monkeypatch):
    """The table of every case a learner's own copy runs with FFN_GRADING=1 passes every public case (and those
    fixed hidden ones), and fails every hidden case under each secret."""
    forgery = memorising_forgery(check, answer, monkeypatch)
    verdict = check(forgery)
    assert verdict and f"all {n_public} public cases pass" in capsys.readouterr().out
    monkeypatch.setenv("FFN_GRADING", "1")
    assert check(forgery)                                        # the fixed hidden cases: what it memorised
    monkeypatch.delenv("FFN_GRADING")
    for value in SECRETS:
        with secret(value):
            verdict = check(forgery)
        out = capsys.readouterr().out
        assert not verdict and (verdict.passed, verdict.total) == (n_public, n_public + verdict.hidden), out
        assert verdict.hidden >= 1 and out.count("\u2718 hidden: ") == verdict.hidden, out


def assert_drawn_afresh_for_each_secret(draw):
    """A builder's cases differ under two secrets (every one of them, in values or shapes), are the same when
    built twice under one (every use in a grading run sees the same cases), and are named as hidden ones."""
    (first, again), (other, _) = drawn_twice(draw)
    assert len(first) == len(again) and all(same_case(a, b) for a, b in zip(first, again))
    assert all(case.name.startswith("hidden: ") for case in first)
    assert not any(same_case(a, b) for a, b in zip(first, other))
