"""For the tests of hidden cases drawn from the grading secret (helpers.checks._verdict.hidden_rng): a few
secrets to grade under, and the memorising forgery a learner could build from their own copy of the course."""
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
