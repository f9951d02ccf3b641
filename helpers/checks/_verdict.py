"""What every check call returns, and what happens around it.

Each public check is wrapped by `grader`:

    @grader
    def check_ffn_forward(fn) -> bool: ...      # prints its report, returns True only if every case passed

The wrapper returns a `Verdict` instead of the bool. A Verdict is truthy only when every case passed, so
`assert check_ffn_forward(ffn_forward)` works, but it displays nothing: a check cell shows the report the
check printed and no `Out: True`. The Verdict also says how many cases passed, and the named mistake (or,
where no mistake was named, the first specific problem), for the grading tools and the learner's progress.

Where the check runs decides what else happens (one rule, the same for every check):
- in a learner's workspace (work/, marked by a `.ffn-workspace` file): the verdict is added to their
  progress (helpers.progress) when the function checked is the exercise's own (`check_detector(detector)`;
  a check of some other function is an experiment); never under tests, nbval or grading.
- under `nbgrader autograde` or `nbgrader validate` (nbgrader sets NBGRADER_EXECUTION): a failed check of
  the exercise's own function raises CheckFailed after printing its report, so nbgrader fails the test cell
  (a lesson's demonstration, `check_ffn_forward(ffn_one_stride)`, raises nothing); warnings and stderr output
  of the learner's code become notes on stdout, since nbgrader gives no points to a cell that wrote to
  stderr. Everywhere else a check never raises: a learner sees the report, never a traceback.
- hidden cases (cases a check runs only when grading) run only in the clean grading process of `make grade`
  and of the course's nbgrader autograde (helpers.grading), drawn fresh from a secret each run (hidden_rng);
  FFN_GRADING=1 runs them from fixed seeds (the tests). Otherwise a passing learner reads "all N public
  cases pass", never a promise of full marks.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import io
import os
import re
import sys
import warnings
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

PASSED, FAILED, NOT_ATTEMPTED = "pass", "fail", "not attempted"
NBGRADER_ENV = "NBGRADER_EXECUTION"   # nbgrader sets it to "autograde" or "validate" while it runs a notebook
GRADING_ENV = "FFN_GRADING"           # tools/grade.py sets it to "1"


def nbgrader_mode() -> str:
    """'autograde', 'validate', or '' outside nbgrader."""
    mode = os.environ.get(NBGRADER_ENV, "").strip().lower()
    return mode if mode in ("autograde", "validate") else ""


# The grading secret: set only inside the clean grading process (helpers.grading), never in a learner's kernel.
_SECRET: str | None = None


def use_secret(secret: str | None) -> None:
    """Draw hidden cases from `secret` from now on (helpers.grading's clean process calls it; None: the fixed
    cases again). Nothing that ships with the course or runs in a learner's kernel knows the secret, so the
    hidden cases of a grading run cannot be predicted, only described by kind."""
    global _SECRET
    _SECRET = secret or None


def grading() -> bool:
    """True while an instructor's tool marks the work: hidden cases run then, and only then (the clean
    grading process, which holds a secret; FFN_GRADING=1 runs them from the course's fixed seeds, for tests).
    A learner's kernel under nbgrader runs only the public cases: the course's autograde preprocessor runs
    the hidden ones in a clean process afterwards (helpers.nbgrader_plugin)."""
    return _SECRET is not None or os.environ.get(GRADING_ENV) == "1"


def hidden_rng(label: int | str):
    """The random generator for a check's hidden cases named `label` (an int seed, or a name). Under the
    grading secret it is drawn from (secret, label), fresh for every grading run; otherwise from the label
    alone, so tests and FFN_GRADING=1 see fixed cases."""
    import hashlib

    import numpy as np
    if _SECRET is None:
        return np.random.default_rng(label if isinstance(label, int) else
                                     int.from_bytes(hashlib.sha256(str(label).encode()).digest()[:8], "little"))
    digest = hashlib.sha256(f"{_SECRET}\x00{label}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


def hidden_cases(hidden):
    """A check's hidden cases: a list, or a function that builds them (called only while grading, so that
    cases drawn from hidden_rng are drawn at grading time)."""
    if not grading():
        return []
    return list(hidden() if callable(hidden) else hidden)


class CheckFailed(AssertionError):
    """Raised by a failed check under nbgrader only, so that nbgrader marks its test cell as failed."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check call. Truthy only when every case (hidden ones included, if they ran) passed."""
    exercise: str                 # e.g. "ffn_forward"
    lesson: str                   # e.g. "02"
    status: str                   # "pass", "fail" or "not attempted"
    passed: int = 0               # cases passed
    total: int = 0                # cases judged (0 when the function could not be run at all)
    mistake: str = ""             # the named mistake, else the first specific problem; "" on a pass
    hidden: int = 0               # how many of the cases were hidden ones
    detail: str = ""              # what the first failing case returned (its shape, say), beside the mistake
    hidden_passed: int = 0        # how many of the hidden cases passed
    used: tuple[str, ...] = ()    # the course's functions the learner's code called while it was checked

    def __bool__(self) -> bool:
        return self.status == PASSED

    @property
    def score(self) -> float:
        """Cases passed / cases judged: 0.0 to 1.0."""
        return self.passed / self.total if self.total else 0.0

    def _ipython_display_(self) -> None:
        """Show nothing: the check has printed its report already (so a check cell has no `Out:` line)."""

    def summary(self) -> str:
        """One line for logs and exceptions."""
        if self.status == PASSED:
            return f"{self.exercise}: pass ({self.passed} of {self.total} cases)"
        if self.status == NOT_ATTEMPTED:
            return f"{self.exercise}: not attempted (the function still raises NotImplementedError)"
        return f"{self.exercise}: fail ({self.passed} of {self.total} cases pass)" + \
            (f": {self.mistake}" if self.mistake else "")


# ----------------------------------------------------------------------------------------------------------
# The tally: what the report of the check now running has said so far
# ----------------------------------------------------------------------------------------------------------
@dataclass
class Tally:
    passed: int = 0
    failed: int = 0
    total: int | None = None       # set by Report.finish: the cases the check judged
    hidden: int = 0
    not_implemented: bool = False
    mistake: str = ""              # from a "Likely mistake: ..." or "Possibly: ..." line
    problem: str = ""              # the first failed case's message
    outcomes: list[bool] = field(default_factory=list)   # each case judged, in order: passed or not
    used: set[str] = field(default_factory=set)          # course functions the learner's code called
    lines: list[str] = field(default_factory=list)
    held: set[str] = field(default_factory=set)          # what this run held back for a second time (see held_before)

    def note_line(self, text: str) -> None:
        text = text.strip()
        for label in ("Likely mistake:", "Possibly:"):
            if text.startswith(label) and not self.mistake:
                self.mistake = first_sentence(text[len(label):])


_COURSE_DIR = str(Path(__file__).resolve().parents[1])          # helpers/
_CHECKS_DIR = str(Path(__file__).resolve().parent)               # helpers/checks/
_CURRENT: contextvars.ContextVar[Tally | None] = contextvars.ContextVar("ffn_check_tally", default=None)


def current_tally() -> Tally:
    """The tally of the check now running (a throwaway one outside a check, e.g. in the core's own tests)."""
    return _CURRENT.get() or Tally()


def first_sentence(text: str, limit: int = 200) -> str:
    """The text up to its first full stop that ends a sentence, trimmed to `limit` characters."""
    text = " ".join(text.split())
    match = re.search(r"(?<!\be\.g)(?<!\bi\.e)\.(\s|$)", text)
    sentence = text[:match.start()] if match else text
    return sentence if len(sentence) <= limit else sentence[:limit - 3] + "..."


class _Tee(io.TextIOBase):
    """Writes through to the real stdout and keeps a copy, to read a check's printed words afterwards."""

    def __init__(self, target):
        self.target, self.copy = target, io.StringIO()

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.target.write(text)

    def flush(self) -> None:
        self.target.flush()


# Failed attempts per exercise in this kernel: pencil and design exercises reveal the answer after the second.
_FAILED_ATTEMPTS: dict[str, int] = {}


def failed_attempts(exercise: str) -> int:
    """How many times the check of `exercise` has failed so far in this kernel (not counting the current call)."""
    return _FAILED_ATTEMPTS.get(exercise, 0)


# Set while a check judges a known mistake's result (a mutant's), not the learner's: what a validator would hold
# back for such a result is no line the learner was shown, so it must not count as held (see held_before).
_NOT_THE_LEARNERS: contextvars.ContextVar[bool] = contextvars.ContextVar("ffn_not_the_learners", default=False)


@contextlib.contextmanager
def not_the_learners():
    """Within it, held_before records nothing: the check is reading a mutant's result (helpers.checks._core's
    _agree and _wrong), and a validator's message about it is never printed."""
    token = _NOT_THE_LEARNERS.set(True)
    try:
        yield
    finally:
        _NOT_THE_LEARNERS.reset(token)


def held_before(exercise: str, key: str) -> bool:
    """Whether an earlier failed run of `exercise`'s check, in this kernel, already held back the line keyed
    `key` (a named mistake's name, or the held text itself). A line of the solution comes on the second time
    the same mistake is found, not after any second failure: a learner who makes a new slip gets its first tier.
    The keys live in _FAILED_ATTEMPTS, under "exercise: key", so clearing that clears them too. A key met while
    the check reads a mutant's result (not_the_learners) is not recorded: the learner saw no message about it."""
    if not _NOT_THE_LEARNERS.get():
        current_tally().held.add(key)
    return _FAILED_ATTEMPTS.get(f"{exercise}: {key}", 0) >= 1


def grader(check: Callable[..., bool]) -> Callable[..., Verdict]:
    """Wrap a check_<exercise> function of a lessonNN module so that it returns a Verdict (see the module doc)."""
    exercise = check.__name__.removeprefix("check_")
    match = re.search(r"lesson(\d+)$", check.__module__)
    lesson = match.group(1) if match else ""

    @functools.wraps(check)
    def wrapped(*args: Any, **kwargs: Any) -> Verdict:
        tally = Tally()
        token = _CURRENT.set(tally)
        tee = _Tee(sys.stdout)
        graded = bool(nbgrader_mode())
        reference = course_function(_checked(args, kwargs))
        copy = reference and not _in_course(_checked(args, kwargs))
        try:
            with redirect_stdout(tee), _stderr_as_notes(graded):
                ok = _refuse_reference(exercise, reference, tally, copy) if reference else check(*args, **kwargs)
        finally:
            _CURRENT.reset(token)
        verdict = _verdict(exercise, lesson, bool(ok), tally, tee.copy.getvalue())
        own = _is_the_exercise(args, kwargs, exercise)
        if verdict.status == FAILED:      # a stub's "not attempted" is no attempt
            for key in [exercise] + [f"{exercise}: {held}" for held in sorted(tally.held)]:
                _FAILED_ATTEMPTS[key] = _FAILED_ATTEMPTS.get(key, 0) + 1
        if own:
            _record(verdict)
        # Under nbgrader only the exercise's own check fails its cell: a lesson's demonstration
        # (`check_ffn_forward(ffn_one_stride)`) shows its report and raises nothing.
        if graded and own and not verdict:
            raise CheckFailed(verdict.summary()) from None
        return verdict

    wrapped.exercise, wrapped.lesson = exercise, lesson
    return wrapped


def _verdict(exercise: str, lesson: str, ok: bool, tally: Tally, printed: str) -> Verdict:
    used = tuple(sorted(tally.used))
    if ok:
        total = tally.total if tally.total is not None else tally.passed
        return Verdict(exercise, lesson, PASSED, total, total, "", tally.hidden, hidden_passed=tally.hidden, used=used)
    if tally.not_implemented:
        return Verdict(exercise, lesson, NOT_ATTEMPTED, 0, tally.total or 0)
    total = tally.total if tally.total is not None else tally.passed + tally.failed
    passed = max(0, min(tally.passed, total))
    what, diagnosis = split_problem(tally.problem)
    mistake = tally.mistake or diagnosis or what or _first_printed_problem(printed, exercise)
    hidden_passed = sum(tally.outcomes[-tally.hidden:]) if tally.hidden else 0
    return Verdict(exercise, lesson, FAILED, passed, total, mistake, tally.hidden,
                   detail=what if mistake != what else "", hidden_passed=hidden_passed, used=used)


def split_problem(message: str) -> tuple[str, str]:
    """A failed case's message as (what came back, the check's diagnosis of it): "returned ... db1 an array of
    shape (1, 2); expected (2,). db1 was not summed over the tokens: ..." gives the shape sentence and "db1 was
    not summed over the tokens: ...". Only a first sentence about a shape, length or dtype is a detail; the
    diagnosis is "" when the message says only what came back, or its first sentence names the mistake."""
    text = " ".join(message.split())
    first = first_sentence(text, limit=10 ** 6)
    rest = text[len(first):].lstrip(". ").strip()
    if rest and re.match(r"(returned|expected|gave|got)\b", first) and re.search(r"\b(shape|length|dtype)\b", first):
        return first_sentence(first), first_sentence(rest)
    return first_sentence(first), ""


def _first_printed_problem(printed: str, exercise: str) -> str:
    """For a check that stopped before judging any case: its first printed line, less the title."""
    for line in printed.splitlines():
        line = line.strip()
        if line:
            return first_sentence(line.removeprefix(f"{exercise}:").strip())
    return ""


def _in_course(fn: Any) -> bool:
    """Whether fn's code (under any wrapper) lives in the course's files, not a copy compiled elsewhere."""
    code = getattr(unwrapped(fn), "__code__", None)
    return code is not None and str(Path(code.co_filename).resolve()).startswith(_COURSE_DIR)


def _refuse_reference(exercise: str, reference: str, tally: Tally, copy: bool = False) -> bool:
    """The check was handed the course's own function, not the learner's: say why that happens."""
    if copy:
        tally.mistake = "a copy of the course's reference was checked, not the learner's function"
        print(f"{exercise}: this is a copy of the course's own `{reference}` (the same code, compiled again), not "
              "your function. The exercise is to write that computation yourself: the reference is for the cells "
              "after it.")
        return False
    name = reference.rsplit(".", 1)[-1]
    tally.mistake = "the course's reference was checked, not the learner's function"
    print(f"{exercise}: this is the course's own `{reference}`, not your function, so there is nothing of yours "
          f"to check. Did your exercise cell run? If it stopped with an error (a syntax error, say) or was "
          f"deleted, the name `{name}` still means the course's version imported above. Run your cell, fix "
          "its error, and check again.")
    return False


@contextlib.contextmanager
def _stderr_as_notes(active: bool):
    """Under nbgrader, what the learner's code writes to stderr (a RuntimeWarning, a print to stderr) goes to
    stdout as a note instead: nbgrader gives no points to a test cell with any stderr output, even a passing one."""
    if not active:
        yield
        return
    with warnings.catch_warnings(record=True) as caught, redirect_stderr(sys.stdout):
        warnings.simplefilter("always")
        yield
    for warning in caught[:3]:
        print(f"  Note: your code raised a {warning.category.__name__}: {warning.message}")


def _checked(args: tuple, kwargs: dict) -> Any:
    return args[0] if args else next(iter(kwargs.values()), None)


def unwrapped(fn: Any) -> Any:
    """fn seen through its wrappers: functools.partial, decorators (__wrapped__), bound methods."""
    for _ in range(20):
        inner = getattr(fn, "func", None) if isinstance(fn, functools.partial) else \
            getattr(fn, "__wrapped__", None) or getattr(fn, "__func__", None)
        if inner is None:
            break
        fn = inner
    return fn


def course_function(fn: Any) -> str:
    """"helpers.ffn.gelu" when fn is a function of the course library (not of helpers.checks), else ""."""
    fn = unwrapped(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return ""
    where = str(Path(code.co_filename).resolve())
    if where.startswith(_COURSE_DIR) and not where.startswith(_CHECKS_DIR):
        return f"{getattr(fn, '__module__', 'helpers')}.{getattr(fn, '__qualname__', code.co_name)}"
    return copied_from(code)


_MIN_COPY_BYTES = 100         # shorter code (a one-liner: 36 to 60 bytes) an honest learner may write the same way
_COURSE_CODES: dict[tuple, str] = {}


def _code_key(code) -> tuple:
    """What a copy shares with its original, wherever and whenever it was compiled (nested code objects, such
    as a comprehension's, by their own keys, not by their addresses and files)."""
    consts = tuple(_code_key(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts)
    return (code.co_code, code.co_names, code.co_varnames, consts)


def copied_from(code) -> str:
    """"helpers.flat.matvec" when `code` is a copy of a course function's code (compiled again from its source,
    or its code object put in a new function): the same bytecode, names, local names and constants, and more
    than a one-liner. "" otherwise."""
    if len(code.co_code) < _MIN_COPY_BYTES:
        return ""
    modules = [(name, module) for name, module in list(sys.modules.items())
               if module is not None and name.startswith("helpers.") and not name.startswith("helpers.checks")]
    if _COURSE_CODES.get(("modules",)) != len(modules):          # a course module imported since: index again
        _COURSE_CODES.clear()
        _COURSE_CODES[("modules",)] = len(modules)
        for name, module in modules:
            for value in list(vars(module).values()):
                inner = getattr(value, "__code__", None)
                if inner is not None and getattr(value, "__module__", None) == name \
                        and len(inner.co_code) >= _MIN_COPY_BYTES:
                    _COURSE_CODES.setdefault(_code_key(inner), f"{name}.{value.__qualname__}")
    return _COURSE_CODES.get(_code_key(code), "")


def is_the_exercise(fn: Any, exercise: str) -> bool:
    """Whether `fn` stands for the learner's answer to `exercise`: named like it (`check_detector(detector)`).
    A check of a function with another name is a demonstration or an experiment: it is not the learner's
    progress, fails no nbgrader cell, and `make grade` does not count it. (The course's own function of that
    name counts as the answer, and fails: it is what the name means when the learner's cell did not run.)"""
    return getattr(fn, "__name__", None) == exercise


def _is_the_exercise(args: tuple, kwargs: dict, exercise: str) -> bool:
    return is_the_exercise(_checked(args, kwargs), exercise)


def _record(verdict: Verdict) -> None:
    try:
        from helpers import progress
        progress.record_check(verdict)
    except Exception:  # progress is a convenience: it must never break or slow a check
        pass
