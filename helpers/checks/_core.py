"""The grader protocol that every check in helpers.checks follows.

A check runs the learner's function on named cases, compares each result with a trusted reference and
prints one line per case. When a case fails it says what was expected, what came back and, where it can,
which known mistake produced that result: it runs each known wrong implementation (a "mutant") on the same
cases and names the one whose outputs the learner's function reproduces.

A check never raises. NotImplementedError gives "not implemented yet"; any other exception is reported with
its type, message and the learner's line; None, a wrong type or length, NaN and inputs changed in place each
get their own message. A check returns True only when every case passes.
"""
from __future__ import annotations

import copy
import linecache
import math
import re
import sys
import sysconfig
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from helpers.checks._verdict import copied_from, current_tally, held_before, hidden_cases, not_the_learners
from helpers.checks._verdict import hidden_rng  # noqa: F401  (the lessons' hidden cases draw from it)

PASS, FAIL = "\u2714", "\u2718"  # check mark, ballot x
NOT_IMPLEMENTED = "not implemented yet"
_LIBRARY_DIRS = tuple({str(Path(__file__).resolve().parents[1])} |
                      {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")})


# --------------------------------------------------------------------------------------------------------
# Calling the learner's code safely
# --------------------------------------------------------------------------------------------------------
_MATMUL_MISMATCH = re.compile(r"mismatch in its core dimension|shapes \([^)]*\) and \([^)]*\) not aligned")


@dataclass
class Outcome:
    """What one call of a function did: the value it returned or the exception it raised."""
    value: Any = None
    error: BaseException | None = None
    where: str = ""                                   # the learner's line that raised, if any
    mutated: list[str] = field(default_factory=list)  # names of arguments changed in place
    references: list[str] = field(default_factory=list)  # course functions the learner's code called by name
    learner_frames: int = 0                           # frames of the learner's code the exception went through

    @property
    def raised(self) -> bool:
        return self.error is not None

    @property
    def not_implemented(self) -> bool:
        """The checked function is itself still a stub. A NotImplementedError from another unfinished function
        that it calls (two or more of the learner's frames) is reported as an ordinary exception instead,
        with that function's line, so the learner sees which one is not written yet."""
        return isinstance(self.error, NotImplementedError) and self.learner_frames <= 1

    def same_error(self, other: "Outcome") -> bool:
        """Both raised the same exception type with the same message up to its numbers: the same kind of
        failure (a matmul whose inner sizes differ), not merely any ValueError."""
        def gist(error):  # the message without its numbers and parenthesised shapes
            message = str(error)
            if _MATMUL_MISMATCH.search(message):     # @, np.matmul and np.dot say the same thing in other words
                return type(error), "the inner sizes of a matrix product differ"
            return type(error), re.sub(r"\d+", "#", re.sub(r"\([^()]*\)", "()", message))
        return self.raised and other.raised and gist(self.error) == gist(other.error)

    def describe_error(self) -> str:
        message = str(self.error)
        text = f"raised {type(self.error).__name__}" + (f": {message}" if message else "")
        return text + (f" ({self.where})" if self.where else "")


def is_library_file(filename: str) -> bool:
    """True for files of the course library, the standard library and installed packages: not the learner's."""
    return filename.startswith("<frozen") or any(filename.startswith(d) for d in _LIBRARY_DIRS)


def _learner_frames(error: BaseException) -> list[tuple[Any, int]]:
    """(code, line number) of each frame of the learner's own code that the exception passed through."""
    return [(frame.f_code, lineno) for frame, lineno in traceback.walk_tb(error.__traceback__)
            if not is_library_file(frame.f_code.co_filename)]


def _learner_line(frames: list[tuple[Any, int]]) -> str:
    """Where in the learner's own code (its frames, from _learner_frames) the exception came from, e.g.
    "line 4 of ffn_forward: `y[i] = ...`", counting lines from the function's `def` (in a notebook that is
    what the learner sees)."""
    if not frames:
        return ""
    code, lineno = frames[-1]
    text = linecache.getline(code.co_filename, lineno).strip()
    # A comprehension or lambda runs in a frame of its own: count from the function that holds it.
    named = [c for c, _ in frames if not c.co_name.startswith("<") and c.co_filename == code.co_filename]
    if named and code.co_name in ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"):
        code = named[-1]
    place = f"line {lineno - code.co_firstlineno + 1} of {code.co_name}" if not code.co_name.startswith("<") \
        else f"line {lineno - code.co_firstlineno + 1} of your {code.co_name.strip('<>')}"
    return place + (f": `{text}`" if text else "")


def _same(a: Any, b: Any) -> bool:
    """Exact equality that also works for NumPy arrays and for lists holding them."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if callable(a) and callable(b):
        return True  # a function passed in (an expert, an activation) is not data the learner could change
    if type(a) is type(b) and hasattr(a, "__dict__") and not isinstance(a, type):
        return _same(vars(a), vars(b))  # e.g. a dataclass holding arrays, compared field by field
    try:
        return bool(a == b) or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
    except Exception:  # an object whose == itself fails is not the same as anything
        return False


_COURSE_DIR = str(Path(__file__).resolve().parents[1])          # helpers/
_CHECKS_DIR = str(Path(__file__).resolve().parent)               # helpers/checks/
# Course functions that compute an exercise under another name than the exercise's own (the same name is
# always watched): a learner's function that calls one of them does not pass that exercise's check.
COURSE_VERSIONS = {
    "ffn_batched": ("ffn",),                       # helpers.ffn.ffn
    "count_ffn_params": ("ffn_params", "swiglu_params"),  # helpers.params: the count, or a third of SwiGLU's
    "collapse": ("collapse_affine", "apply_stack", "best_affine_fit"),   # helpers.collapse: the answer, or
    "residual_collapse": ("apply_stack", "best_affine_fit"),            # probing the stack for it
    "moe_forward": ("moe_ffn",),                   # helpers.ffn.moe_ffn
    "matvec": ("vecmat",),                         # helpers.flat.vecmat (lesson 02)
    "ffn_as_sum": ("contributions", "rebuild"),    # helpers.kv_memory: the references after Exercise 1
    "top_units": ("contributions",),               # helpers.kv_memory.contributions (kv.top_units calls it)
    "store_fact": ("build_memory",),               # helpers.kv_memory.build_memory builds the unit for you
    "relu_backward": ("relu_grad", "_relu_slope"), # helpers.ffn.relu_grad and the slope it applies
    "gelu_backward": ("gelu_grad", "_gelu_slope"), # helpers.ffn.gelu_grad and the slope it applies
}


def _handed_in(args: dict[str, Any]) -> set:
    """The code objects of every callable among the arguments (an expert, the function f of a gradient
    check, also inside lists, tuples and dicts): the learner's function may call those, wherever they live."""
    found, todo = set(), list(args.values())
    while todo:
        value = todo.pop()
        if isinstance(value, (list, tuple)):
            todo.extend(value)
        elif isinstance(value, dict):
            todo.extend(value.values())
        elif callable(value):
            for inner in (value, getattr(value, "func", None), getattr(type(value), "__call__", None)):
                if hasattr(inner, "__code__"):
                    found.add(inner.__code__)
    return found


def run(fn: Callable, args: dict[str, Any], watch: str = "", errors: dict | None = None) -> Outcome:
    """Call fn with copies of args (in order) and report what happened. Never raises. `errors`: NumPy's
    floating-point error settings to call fn with (np.geterr() of the learner's session), where the caller
    has changed them for its own arithmetic.

    With `watch` (an exercise's name), also note any function of the course library that computes that
    exercise (its own name, or one listed in COURSE_VERSIONS) and that runs on the learner's behalf, e.g.
    helpers.flat.ffn_forward called from the learner's ffn_forward, directly or through other code: the
    exercise is to write it, not to call the reference the later cells use.
    """
    copies = copy.deepcopy(args)
    called: list[str] = []
    used: set[str] = set()
    names = {watch, *COURSE_VERSIONS.get(watch, ())} if watch else set()
    handed = _handed_in(copies) if watch else set()    # only the watch needs it (mutants run unwatched)

    def made_by(frame):
        """Who made the call in `frame`: "check" (the checks' own code: a known mistake run as a mutant, a
        callable handed in), or the course function the learner's side called to get there ("" when the
        learner's own line, NumPy or a thread called the watched function directly)."""
        entry, back = "", frame.f_back
        while back is not None:
            where = back.f_code.co_filename
            if back.f_code is _RUN_CODE:
                break                                   # handed to the check as the learner's function itself
            if where.startswith(_CHECKS_DIR):
                return "check"
            if not where.startswith(_COURSE_DIR):
                if not is_library_file(where):
                    break                               # the learner's own code
            else:
                entry = f"{back.f_globals.get('__name__', 'helpers')}.{back.f_code.co_name}"
            back = back.f_back
        return entry

    def profile(frame, event, arg):
        # Any call of a watched course function while the learner's function runs counts, whoever makes it:
        # the learner's own line, another course function (collapse_stack calls collapse_affine), NumPy
        # (np.apply_along_axis(relu_grad, ...)) or a thread the learner starts; only the checks' own code
        # may call the reference. A check's own private reference (lesson07._reference_moe) called from the
        # learner's line counts too, unless it was handed in.
        if event != "call":
            return
        code = frame.f_code
        where = code.co_filename
        if (where.startswith(_COURSE_DIR) and not where.startswith(_CHECKS_DIR) and frame.f_back is not None
                and not is_library_file(frame.f_back.f_code.co_filename)):   # a course function the learner calls
            used.add(f"{frame.f_globals.get('__name__', 'helpers')}.{code.co_qualname}")
        if code.co_name in names and ((where.startswith(_COURSE_DIR) and not where.startswith(_CHECKS_DIR))
                                      or copied_from(code)):
            entry = made_by(frame)
            if entry != "check":
                name = f"{frame.f_globals.get('__name__', 'helpers')}.{code.co_name}"
                called.append(name + (f" (through {entry})" if entry and not entry.endswith(f".{code.co_name}")
                                      else ""))
        elif (watch and where.startswith(_CHECKS_DIR)                   # not a method (a recording array's)
              and "." not in code.co_qualname.rsplit("<locals>.", 1)[-1]  # but a check's closures and lambdas
              and code not in handed and frame.f_back is not None
              and not is_library_file(frame.f_back.f_code.co_filename)):
            called.append(f"{frame.f_globals.get('__name__', 'helpers.checks')}.{code.co_name}")

    previous, previous_threads = sys.getprofile(), threading.getprofile()
    try:
        if watch:
            sys.setprofile(profile)
            threading.setprofile(profile)
        with np.errstate(**(errors or np.geterr())):
            value = fn(*copies.values())
    except BaseException as error:  # the learner's code may raise anything, even SystemExit
        if isinstance(error, KeyboardInterrupt):
            raise
        frames = _learner_frames(error)
        return Outcome(error=error, where=_learner_line(frames), learner_frames=len(frames))
    finally:
        if watch:
            sys.setprofile(previous)
            threading.setprofile(previous_threads)
            current_tally().used.update(used)        # for the grader's flags: what from helpers the learner ran
    mutated = [name for name in args if not _same(args[name], copies[name])]
    return Outcome(value=value, mutated=mutated, references=list(dict.fromkeys(called)))  # first made first


# run's own frame: a watched course function whose caller is run itself was handed in as the learner's function
# (wrapped so that it has no frame of its own: functools.partial, a bound method, a class's __call__).
_RUN_CODE = run.__code__


# --------------------------------------------------------------------------------------------------------
# Formatting and validating what came back
# --------------------------------------------------------------------------------------------------------
def a_kind(value: Any) -> str:
    """The type of value with its article, for messages: "an int", "a dict", "a generator"."""
    name = type(value).__name__
    return ("an " if name[0].lower() in "aeiou" else "a ") + name


def plural(n: int, noun: str) -> str:
    """"1 number", "3 numbers"."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def fmt(value: Any, digits: int = 4, max_items: int = 8) -> str:
    """A short, stable rendering of numbers, sequences and arrays for verdict lines."""
    if isinstance(value, np.ndarray):
        if value.size > max_items:
            flat = ", ".join(fmt(v, digits) for v in value.ravel()[:4])
            return f"array of shape {value.shape} starting [{flat}, ...]"
        value = value.tolist()
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        n = int(value)
        if abs(n) >= 10 ** 18:  # str() of a huge int is slow, and refused beyond 4,300 digits
            return f"{'-' if n < 0 else ''}an int of about {int(n.bit_length() * math.log10(2)) + 1} digits"
        return str(n)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return "0" if value == 0 else f"{value:.{digits}g}"
    if isinstance(value, (list, tuple)):
        items = [fmt(v, digits) for v in value[:max_items]] + (["..."] if len(value) > max_items else [])
        return "[" + ", ".join(items) + "]"
    if not isinstance(value, (str, bytes, type(None))):
        return a_kind(value)  # a dict, generator or other object: its type says enough, the same every time
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def vector_problem(value: Any, length: int, length_hints: dict[int, str] | None = None) -> str | None:
    """Why `value` is not a flat sequence of `length` finite numbers, or None when it is.

    Lists, tuples and 1-D NumPy arrays are all fine. length_hints maps a wrong length to what it suggests.
    """
    if value is None:
        return "returned None. Did you forget the `return` statement at the end of your function?"
    if isinstance(value, (str, bytes)):
        return f"returned a string ({fmt(value)}); return a list of {length} numbers instead"
    if _is_number(value):
        return f"returned a single number ({fmt(value)}); return a list of {length} numbers instead"
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            return f"returned an array of shape {value.shape}; expected a flat sequence of {length} numbers"
        value = value.tolist()
    elif hasattr(value, "__next__"):
        return "returned a generator or iterator; wrap it in list(...) so it can be read more than once"
    elif not isinstance(value, (list, tuple)):
        return f"returned {a_kind(value)}; return a list (or tuple, or NumPy array) of {length} numbers"
    if len(value) != length:
        hint = (length_hints or {}).get(len(value), "")
        return f"returned {plural(len(value), 'number')}; expected {length}" + (f". {hint}" if hint else "")
    for i, x in enumerate(value):
        if not _is_number(x):
            return f"returned a sequence whose element {i} is {fmt(x)} ({type(x).__name__}), not a number"
        try:
            as_float = float(x)
        except OverflowError:
            return (f"returned a sequence whose element {i} is {fmt(x)}, too large for a float; look for a "
                    "power (**) where a product (*) belongs")
        if not math.isfinite(as_float):
            return (f"returned a sequence whose element {i} is {as_float}; every output should be a finite "
                    "number (look for a division by zero or an overflow)")
    return None


def int_problem(value: Any, what: str, float_hint: str, fraction_hint: str) -> str | None:
    """Why `value` is not a whole number given as an int (a count, a width), or None when it is.

    what names the quantity ("the number of parameters"); float_hint says how to turn a whole float into an
    int; fraction_hint what a fraction suggests went wrong.
    """
    if value is None:
        return "returned None. Did you forget the `return` statement at the end of your function?"
    if isinstance(value, (bool, np.bool_)):
        return f"returned {value}, a bool (a truth value); return {what} as an int"
    if isinstance(value, (float, np.floating)):
        if math.isfinite(value) and float(value).is_integer():
            return f"returned the float {float(value):.1f}; {what} is a whole number: return an int ({float_hint})"
        return f"returned {fmt(value, 8)}, which is not a whole number: {fraction_hint}"
    if not isinstance(value, (int, np.integer)):
        return f"returned {a_kind(value)} ({fmt(value)}); return one int, {what}"
    return None


def array_problem(value: Any, shape: tuple[int, ...], dtype: Any = None,
                  shape_hints: dict[tuple[int, ...], str] | None = None) -> str | None:
    """Why `value` is not a finite NumPy array of `shape` (and `dtype`, if given), or None when it is."""
    if value is None:
        return "returned None. Did you forget the `return` statement at the end of your function?"
    if not isinstance(value, np.ndarray):
        return f"returned {a_kind(value)}; expected a NumPy array of shape {shape}"
    if value.shape != tuple(shape):
        hint = (shape_hints or {}).get(value.shape, "")
        return f"returned shape {value.shape}; expected {tuple(shape)}" + (f". {hint}" if hint else "")
    if dtype is not None and value.dtype != np.dtype(dtype):
        return (f"returned dtype {value.dtype}; expected {np.dtype(dtype)} "
                "(an operation with a float64 constant or array can silently upcast)")
    if not np.issubdtype(value.dtype, np.number):
        return f"returned an array of {value.dtype}; expected numbers"
    if not np.all(np.isfinite(value)):
        return "returned NaN or infinity; look for a division by zero or an overflow"
    return None


def plain_arrays(value: Any, cls: type) -> Any:
    """value with every array of the recording subclass `cls` in it (also inside tuples, lists and dicts)
    viewed as a plain ndarray: what a check hands on after watching the learner's products."""
    if isinstance(value, cls):
        return value.view(np.ndarray)
    if isinstance(value, (list, tuple)):
        return type(value)(plain_arrays(v, cls) for v in value)
    if isinstance(value, dict):
        return {k: plain_arrays(v, cls) for k, v in value.items()}
    return value


def close(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    """Numerical agreement of two numbers, sequences or arrays of the same shape."""
    try:
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return False
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def close_float64(a: Any, b: Any) -> bool:
    """Agreement of two float64 results of one computation: the same sums in another order, or a formula written
    another way, agree to about 1e-15, so a relative 1e-9 leaves room for any of those and none for an answer
    rounded to 6 or 8 decimals, computed in float32, or off by a slip such as 5.000004 for 5."""
    return close(a, b, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------------------------------------
# Cases, mistakes and the report
# --------------------------------------------------------------------------------------------------------
@dataclass
class Case:
    """One named input. `args` are passed to the function positionally, in order; their names appear in
    messages about inputs changed in place."""
    name: str
    args: dict[str, Any]


@dataclass
class Mistake:
    """A known wrong implementation (a mutant) with the same signature as the learner's function."""
    name: str   # e.g. "one stride for both matrices"
    fix: str    # what to change, in a sentence or two
    fn: Callable
    later: str = ""   # what the fix says only after a second failure: a line of the solution (see tiered)


SECOND_TIER = "If the check finds this again, it shows the line to write."
SECOND_TIER_UNNAMED = "If the same failure comes back, the check shows the line to write."


def tiered(text: str, formulas: Sequence[str]) -> tuple[str, str]:
    """text split into what a first failure may say and what only a second may: the sentences that hold one of
    `formulas` (lines of the solution, compared without spaces) go to the second. No answer before a second
    failure (issue 21): the first says what is wrong and where, the second may show the line."""
    def bare(t):
        return re.sub(r"[\s`]", "", t)
    sentences = re.split(r"(?<=[.:;])\s+(?=[A-Z(`a-z])", text)
    held = [any(bare(f) in bare(t) for f in formulas) for t in sentences]
    # A sentence that ends in ":" or ";" before one held back ends there, with a full stop.
    first = [t[:-1] + "." if t[-1:] in ":;" and held[i + 1:i + 2] == [True] else t
             for i, t in enumerate(sentences) if not held[i]]
    later = [t for t, h in zip(sentences, held) if h]
    return " ".join(first), " ".join(later)


def with_tiers(mistakes: Sequence[Mistake], formulas: Sequence[str]) -> list[Mistake]:
    """The mistakes with every sentence of their fixes that shows a formula of `formulas` moved to `later`."""
    out = []
    for mistake in mistakes:
        first, later = tiered(mistake.fix, formulas)
        out.append(Mistake(mistake.name, first or "Look at that step again.", mistake.fn,
                           " ".join(t for t in (mistake.later, later) if t)))
    return out


def held_back(title: str, text: str | None, formulas: Sequence[str]) -> str | None:
    """A validator's message as the check of `title` may print it now: the first time it is found, without the
    sentences that show one of `formulas` (see tiered), saying that the line comes if it is found again; whole
    the second time (see held_before). A message that shows no formula, or None, comes back as it is (an
    Observed stays one)."""
    if not text:
        return text
    first, later = tiered(text, formulas)
    if not later or held_before(title, later):
        return text
    return type(text)(f"{first.rstrip('.;: ') or 'Look at that step again'}. {SECOND_TIER}")


class Report:
    """Prints a check's header, one line per case, and the closing verdict; tells the running check's tally
    (helpers.checks._verdict) what it printed, so the check's Verdict can carry the counts and the mistake."""

    def __init__(self, title: str, header: str = ""):
        self.title = title
        self.header = header  # printed before the first verdict, so a stub prints only "not implemented"
        self.ok = True
        self.tally = current_tally()

    def line(self, text: str) -> None:
        if self.header:
            print(f"{self.title}: {self.header}")
            self.header = ""
        print(f"  {text}")
        self.tally.note_line(text)

    def passed(self, name: str, detail: str = "") -> None:
        self.tally.passed += 1
        self.tally.outcomes.append(True)
        self.line(f"{PASS} {name}" + (f": {detail}" if detail else ""))

    def failed(self, name: str, message: str) -> None:
        self.ok = False
        self.tally.failed += 1
        self.tally.outcomes.append(False)
        if not self.tally.problem:       # the problem itself, without the case's name, so that like counts like
            self.tally.problem = " ".join(message.removeprefix("your function ").split())[:2000]
        self.line(f"{FAIL} {name}: {message}")

    def not_implemented(self) -> bool:
        self.tally.not_implemented = True
        print(f"{self.title}: {NOT_IMPLEMENTED} (replace the `raise NotImplementedError` line with your code).")
        return False

    def finish(self, n_cases: int, n_failed: int, hidden: int = 0, hidden_skipped: bool = False) -> bool:
        """The closing line. n_cases counts every case judged, `hidden` of them hidden ones; hidden_skipped
        says the check has hidden cases that did not run (outside grading)."""
        self.tally.total, self.tally.hidden = n_cases, hidden
        self.tally.passed = n_cases - n_failed
        if n_failed:
            print(f"{self.title}: {n_failed} of {n_cases} cases failed. Read the first {FAIL} above, fix, "
                  "and run the check again.")
        elif hidden_skipped:
            print(f"{self.title}: all {n_cases} public cases pass. When your work is graded, more cases run.")
        elif hidden:
            print(f"{self.title}: all {n_cases} cases pass, {hidden} of them hidden ones. Well done!")
        else:
            print(f"{self.title}: all {n_cases} cases pass. Well done!")
        return not n_failed


def not_a_function(title: str, fn: Any) -> bool:
    """Print why `fn` cannot be checked when it is not a function (usually its result was passed); False."""
    print(f"{title}: expected a function but got {fmt(fn)} ({type(fn).__name__}). Pass the function itself, "
          f"without calling it: check_{title}({title}), not check_{title}({title}(...)).")
    return False


def answer_of(report: Report, fn: Any) -> tuple[bool, Any]:
    """For exercises whose function takes no arguments and returns an answer: (True, answer), or
    (False, None) after printing why there is no answer (not a function, a stub, an exception)."""
    if not callable(fn):
        return not_a_function(report.title, fn), None
    outcome = run(fn, {})
    if outcome.not_implemented:
        report.not_implemented()
        return False, None
    if outcome.raised:
        print(f"{report.title}: your function {outcome.describe_error()}")
        return False, None
    return True, outcome.value


def _agree(outcome: Outcome, normalized: Any, other: Outcome, case: Case, validate, normalize, compare) -> bool:
    """Whether the learner's outcome on a case is the one a mistake produces there."""
    if outcome.raised or other.raised:
        return outcome.same_error(other)
    if other.mutated and outcome.mutated != other.mutated:   # a mistake that changes its inputs is matched by
        return False                                          # a learner who changes the same ones
    try:
        with not_the_learners():                     # said of results only compared here: nothing is held back
            theirs_problem = validate(other.value, case)
            if theirs_problem is not None:  # the mistake returns something malformed here ...
                # ... so it matches a learner whose result is malformed in the same way: the same values, and what
                # is wrong with them said in the same words (an input left moved by eps is not one off by rounding)
                return (normalized is None and _gist(str(validate(outcome.value, case))) == _gist(theirs_problem)
                        and (close(outcome.value, other.value) or _same(outcome.value, other.value)))
        if normalized is None:
            return False
        theirs = normalize(other.value)
        # On a case with float32 inputs, a learner and a mistake that round at different steps (np.sqrt(2 / np.pi)
        # is a float64 scalar, math.sqrt's is not) agree to float32's precision, not to float64's.
        return compare(normalized, theirs) or (_float32_inputs(case) and close(normalized, theirs, rtol=1e-4,
                                                                                 atol=1e-6))
    except Exception:  # a comparison that cannot be made is not a match
        return False


def _float32_inputs(case: Case) -> bool:
    """Whether any of the case's inputs is a float32 array."""
    return any(isinstance(v, np.ndarray) and v.dtype == np.float32 for v in case.args.values())


def _wrong(result: Outcome, case: Case, expected: Any, validate, normalize, compare) -> bool:
    """Whether a mistake's outcome on a case differs from the expected one."""
    try:
        with not_the_learners():
            return (result.raised or bool(result.mutated) or validate(result.value, case) is not None
                    or not compare(normalize(result.value), expected))
    except Exception:
        return True


def _diagnose(outcomes: list[tuple[Outcome, Any]], cases: Sequence[Case], mistakes: Sequence[Mistake],
              validate, normalize, compare, failures: Sequence[int],
              expected: Sequence[Any], right_values: Sequence[int] = ()) -> tuple[str, Mistake] | None:
    """Name the mistake whose outcomes are the learner's on every case the learner fails (never by a
    coincidence on one of them): "Likely mistake" when it also agrees on every case the learner passes,
    "Possibly" when it gets some of those wrong (the learner makes that mistake only in some cases). A
    mistake that gets a failing case right, or gives other numbers there, is never named (a case failed only
    for an input changed in place, with the right numbers, is among `right_values`: there a mistake agrees by
    giving the right numbers too)."""
    possibly = None
    for mistake in mistakes:
        results: dict[int, Outcome] = {}
        fits, shows = True, False
        for index in failures:       # the failing cases first: most mistakes drop out at the first of them
            results[index] = result = run(mistake.fn, cases[index].args)
            outcome, normalized = outcomes[index]
            wrong = _wrong(result, cases[index], expected[index], validate, normalize, compare)
            shows = shows or wrong
            if not (_agree(outcome, normalized, result, cases[index], validate, normalize, compare)
                    and (wrong or index in right_values)):
                fits = False
                break
        if not fits or not shows:
            continue
        if all(_agree(*outcomes[i], run(mistake.fn, case.args), case, validate, normalize, compare)
               for i, case in enumerate(cases) if i not in results):
            return "Likely mistake", mistake
        possibly = possibly or mistake
    return ("Possibly", possibly) if possibly else None


class Observed(str):
    """A validation message that only states what the learner's result does (which rows are wrong, and where
    they sit in the chunks), no cause: check_function shows it on its case whatever the diagnosis. Any other
    message of a validator that goes on to a cause is a diagnosis of its own (see check_function)."""


@dataclass
class _Judged:
    """One case's verdict before it is printed: kind is "pass", "raised", "mutated", "invalid", "reference"
    or "numbers" (valid but wrong values)."""
    case: Case
    outcome: Outcome
    normalized: Any
    expected: Any
    kind: str
    message: str | None
    observed: bool = False


def check_function(title: str, fn: Any, cases: Sequence[Case], reference: Callable,
                   validate: Callable[[Any, Case], str | None],
                   mistakes: Sequence[Mistake] = (),
                   compare: Callable[[Any, Any], bool] = close,
                   normalize: Callable[[Any], Any] = lambda v: v,
                   describe: Callable[[Any], str] = fmt,
                   fallback_hint: str | tuple[str, str] = "",
                   hidden: Sequence[Case] = (),
                   facts: Callable[[Any, Case], Sequence[str]] | None = None) -> bool:
    """Run `fn` on every case against `reference`, print the verdicts, and return True only if all pass.

    validate(value, case) returns a message when the value has the wrong kind or shape; normalize turns a
    valid value into what compare and describe expect (for example a list of floats). `hidden` cases (a list,
    or a function that builds them from hidden_rng) run only while the work is graded
    (helpers.checks._verdict.grading); otherwise a pass says "public cases". facts(value, case), if given,
    lists what a failing case's result does (a property it has or lacks, "✘ k @ W2_new = v_star: off by 0.5"),
    never a cause: each fact is printed on a line of its own under the case's verdict, whatever the diagnosis,
    and names no mistake (a value it cannot read gives no facts).

    Every case runs before anything is printed, so that what the lines say agrees with the diagnosis: a
    mistake is named only when it reproduces the learner's outcome on every failing case (_diagnose), and then
    the failing cases it explains show what came back, not another cause; a note about the cause (the last
    digits lost) is shown only when it holds on every failing case; and when no mistake fits, the report
    says what differs, without a name.
    """
    # The check's own arithmetic (the reference, the comparisons, the mistakes, what differs) may meet NaN, inf
    # or leftovers of np.empty in a learner's result: no NumPy RuntimeWarning of its own shows under the cell.
    # The learner's code runs with the settings it was called with, so its own warnings still show.
    learners = np.geterr()
    with np.errstate(all="ignore"):
        return _check_function(title, fn, cases, reference, validate, mistakes, compare, normalize, describe,
                               fallback_hint, hidden, learners, facts)


def _check_function(title, fn, cases, reference, validate, mistakes, compare, normalize, describe, fallback_hint,
                    hidden, learners, facts=None) -> bool:
    has_hidden = bool(hidden)
    hidden = hidden_cases(hidden)          # built now (drawn from the grading secret), or none outside grading
    run_hidden = bool(hidden)
    cases = list(cases) + hidden
    report = Report(title, f"checking {len(cases)} cases"
                    + (f", {len(hidden)} of them hidden" if run_hidden else ""))
    report.tally.total = len(cases)  # what a check stopped early (a stub, an exception) is out of
    if not callable(fn):
        return not_a_function(title, fn)
    judged: list[_Judged] = []
    for case in cases:
        outcome = run(fn, case.args, watch=title, errors=learners)
        if outcome.not_implemented:
            return report.not_implemented()
        expected = reference(*copy.deepcopy(case.args).values())
        normalized, kind, message, problem = None, "pass", None, None
        if outcome.raised:
            kind, message = "raised", f"your function {outcome.describe_error()}"
        elif outcome.mutated:
            # Before the value: a changed input is a fact, and wrong numbers may only follow from it.
            kind, message = "mutated", in_place_message(outcome.mutated, case.args)
            if (also := validate_quietly(validate, outcome.value, case)) is None:
                normalized = _try(normalize, outcome.value)
            else:
                message += f". Also, your function {also}"
        elif (problem := validate(outcome.value, case)) is not None:
            kind, message = "invalid", f"your function {problem}"
        else:
            normalized = normalize(outcome.value)
            if outcome.references:
                kind = "reference"
                message = (f"your function calls the course's own `{outcome.references[0]}`: the exercise is "
                           "to write that computation yourself (the reference is for the cells after it)")
                report.tally.mistake = report.tally.mistake or f"calls the course's own {outcome.references[0]}"
            elif not compare(normalized, expected):
                kind = "numbers"
        judged.append(_Judged(case, outcome, normalized, expected, kind, message,
                              observed=kind == "invalid" and isinstance(problem, Observed)))
    failures = [i for i, j in enumerate(judged) if j.kind != "pass"]
    found = None
    if failures and mistakes and not any(j.kind == "reference" for j in judged):   # a reference call is the mistake
        found = _diagnose([(j.outcome, j.normalized) for j in judged], cases, mistakes, validate, normalize,
                          compare, failures, [j.expected for j in judged],
                          [i for i in failures if judged[i].kind == "mutated" and judged[i].normalized is not None
                           and _try(lambda v: compare(v, judged[i].expected), judged[i].normalized)])
    # A validation message that goes on from what came back to a cause ("2 is the number of columns", "a cache
    # keyed on d") is a diagnosis of its own: it stays only when the same words fit every failing case.
    # Only a value with wrong numbers is re-read so (right numbers refused for how they were made, a loop or a
    # dtype, and results of the wrong kind or shape keep their messages).
    invalid = [judged[i] for i in failures if judged[i].kind == "invalid"]
    said_alike = bool(invalid) and len(invalid) == len(failures) and len({_gist(j.message) for j in invalid}) == 1
    if invalid and not said_alike:
        for j in invalid:
            if not j.observed and _comparable(normalize, j) \
                    and not _try(lambda v: compare(normalize(v), j.expected), j.outcome.value):
                j.kind, j.normalized = "numbers", normalize(j.outcome.value)
        # Of results of the wrong form said alike ("returned 2 numbers; expected 3"), a cause given for one and
        # not the others ("2 is the number of columns") is a guess from that one case: what came back stays.
        alike: dict[str, list[_Judged]] = {}
        for j in invalid:
            if j.kind == "invalid" and not j.observed:
                alike.setdefault(_gist(_first_sentence(j.message)), []).append(j)
        for group in alike.values():
            if len({_first_sentence(j.message) == j.message for j in group}) > 1:
                for j in group:
                    j.message = _first_sentence(j.message)
    numbers = [j for j in judged if j.kind == "numbers"]
    # What differs is said from every failing case that returned numbers, of the right form or not.
    readable = [(value, j.expected) for j in (judged[i] for i in failures)
                if (value := j.normalized if j.kind == "numbers" else
                    _try(normalize, j.outcome.value) if j.kind == "invalid" and j.outcome.value is not None
                    else None) is not None and _shaped_alike(value, j.expected)
                and not _try(lambda v: compare(v, j.expected), value)]     # right numbers refused otherwise
    # A note on the cause of a small difference holds for every failing case, or it is no diagnosis.
    notes = [precision_note(j.normalized, j.expected, j.outcome.value) for j in numbers]
    show_notes = bool(numbers) and not found and len(numbers) == len(failures) and all(notes)
    for j, note in zip(numbers, notes):
        _try(lambda v: compare(v, j.expected), j.normalized)   # a describe may read what compare saw last
        j.message = _expected_got(describe, j.expected, j.normalized) + (note if show_notes else "")
    wrong_values = any(j.kind == "numbers" or (j.kind == "invalid" and not _right_numbers(normalize, compare, j))
                       or (j.kind == "raised" and not isinstance(j.outcome.error, (NameError, AttributeError,
                                                                                  ImportError))) for j in judged)
    # A name not defined, an attribute that does not exist, a failed import: the code stops before any number
    # exists, so a hint about the computation would send the learner the wrong way. So would one after right
    # numbers refused for how they were made (a dtype, a loop over the tokens, the chunks taken), or after an
    # input changed in place: the case's own message says what to change, and the generic hint stays out.
    last_message, last_kind = None, None
    for j in judged:
        if j.message is None:
            report.passed(j.case.name)
            last_message = None      # "as above" refers to the line just above, never across a pass
            continue
        # The same words failure after failure (numbers aside) only bury the verdict; a plain "expected
        # ..., got ..." is short, and its numbers are the news, so it is always shown. "As above" is said only of
        # a message of the same kind (an error raised after an error, a problem with the result after one) and
        # with the same words; an error whose numbers differ (the shapes that did not broadcast, an index) is
        # another error, so it is shown whole.
        if (last_message is not None and j.kind == last_kind and _shown_as_above(j.message, last_message)
                and not j.message.startswith("expected ")
                and (j.message == last_message or j.kind != "raised")):
            shown = "the same as above" if j.message == last_message else "the same as above, with its own numbers"
        else:
            shown = j.message
        last_message, last_kind = j.message, j.kind
        report.failed(j.case.name, shown)
        if facts is not None and j.kind in ("numbers", "invalid", "mutated") and j.outcome.value is not None:
            for fact in _try(lambda v: list(facts(v, j.case)), j.outcome.value) or []:
                report.line(f"    {fact}")
    low = [_low_dtypes(j.outcome.value) for j in numbers]
    if found:
        label, mistake = found
        later = (mistake.later if held_before(title, mistake.name) else SECOND_TIER) if mistake.later else ""
        report.line(f"{label}: {mistake.name}. {mistake.fix}" + (f" {later}" if later else ""))
    elif numbers and len(numbers) == len(failures) and all(dt - {"float64"} for dt in low) and not show_notes \
            and all(_low_dtypes(j.case.args) == {"float64"} for j in numbers):
        dtype = sorted(set().union(*low) - {"float64"})[0]
        note = (f"your result is {dtype} in every failing case, where the inputs are float64: {dtype} keeps only "
                f"about {7 if dtype == 'float32' else 3} significant digits, so the numbers differ in their last "
                f"digits. Keep float64 through every step: no .astype(np.{dtype}) or np.{dtype}(...), and no "
                f"dtype={dtype} where an array is made")
        report.line(f"What differs: {note}.")
        report.tally.problem = note
        wrong_values = False              # the dtype is the thing to fix: a hint about the formula would mislead
    elif show_notes:
        report.tally.problem = notes[0].strip(" ()")
    elif readable and not show_notes and not said_alike and \
            (differs := what_differs(readable, among="" if len(readable) == len(failures) else "them")):
        some = rest = ""
        if len(readable) < len(failures):   # say which failing cases the words are about, and what the others did
            shaped = all(_parts(value, expected) or _try(lambda v: np.shape(v) == np.shape(expected), value)
                         for value, expected in readable)
            some = (f", in the {plural(len(readable), 'failing case')} that returned numbers"
                    + (" shaped right" if shaped else ""))
            rest = "; " + _the_others([judged[i] for i in failures], len(readable))
        report.line(f"What differs{some}: {differs}{rest}. No mistake this check knows gives your numbers on every "
                    "failing case.")
        if len(readable) == len(failures) or judged[failures[0]].kind == "numbers":
            report.tally.problem = differs
    if not found and wrong_values and fallback_hint:
        if isinstance(fallback_hint, tuple):   # (a first failure's nudge, what a second failure may show)
            fallback_hint = (fallback_hint[1] if held_before(title, fallback_hint[1])
                             else f"{fallback_hint[0]} {SECOND_TIER_UNNAMED}")
        report.line(f"Hint: {fallback_hint}")
    return report.finish(len(cases), len(failures), hidden=len(hidden) if run_hidden else 0,
                         hidden_skipped=has_hidden and not run_hidden)


def validate_quietly(validate, value: Any, case: Case) -> str | None:
    """validate(value, case), with a validator that itself fails counting as a problem."""
    try:
        return validate(value, case)
    except Exception as error:   # noqa: BLE001  (a malformed value may break a validator's own arithmetic)
        return f"could not be read ({type(error).__name__})"


def _try(function: Callable, value: Any) -> Any:
    try:
        return function(value)
    except Exception:   # noqa: BLE001
        return None


def _expected_got(describe, expected: Any, got: Any) -> str:
    shown_expected, shown_got = describe(expected), describe(got)
    return f"expected {shown_expected}, got {shown_got}" \
        + (largest_difference(got, expected) if shown_expected == shown_got else "")


def _first_sentence(text: str) -> str:
    """A message's first sentence ("your function returned 2 numbers; expected 3"), without what follows."""
    match = re.search(r"(?<!\be\.g)(?<!\bi\.e)\.(\s|$)", text)
    return text[:match.start()] if match else text


def _right_numbers(normalize, compare, judged: _Judged) -> bool:
    """Whether a value that validation refused still holds the expected numbers (refused for its dtype, or for
    how it was made)."""
    return _comparable(normalize, judged) and bool(_try(lambda v: compare(normalize(v), judged.expected),
                                                        judged.outcome.value))


def _comparable(normalize, judged: _Judged) -> bool:
    """Whether a value that validation refused is still numbers shaped like the expected result, so that what
    came back can be said as expected and got (and compared) instead of in the validator's words."""
    if judged.outcome.value is None:
        return False
    try:
        got = np.asarray(normalize(judged.outcome.value), dtype=float)
        expected = np.asarray(judged.expected, dtype=float)
    except Exception:   # noqa: BLE001  (a value of the wrong kind or shape)
        return False
    return got.shape == expected.shape and bool(np.all(np.isfinite(got)))


def _the_others(failing: Sequence[_Judged], n_readable: int) -> str:
    """What the failing cases that returned no numbers to compare did, after what_differs has spoken of the
    rest: "the other 3 raised IndexError", or that they failed otherwise (their own lines say how)."""
    others = len(failing) - n_readable
    raised = sorted({type(j.outcome.error).__name__ for j in failing if j.kind == "raised"})
    if raised and sum(j.kind == "raised" for j in failing) == others:
        return f"the other {others} raised {' or '.join(raised)}" if others > 1 else f"the other one raised {raised[0]}"
    return (f"the other {others} failed in other ways (their lines above say how)" if others > 1
            else "the other one failed in another way (its line above says how)")


def what_differs(pairs: Sequence[tuple[Any, Any]], among: str = "") -> str:
    """What the learner's numbers (got) do against the expected ones over the failing cases, (got, expected)
    pairs of one shape, said without naming a mistake: off by the same amount or factor everywhere, the sign
    flipped, which entries (rows, columns) differ and in which direction, and the largest gap. "" when the
    values are not numbers of matching shapes. `among` names the pairs when they are only some of the failing
    cases ("them", after "in the 2 failing cases that returned numbers"): "in each of them", not "in every
    failing case"."""
    if pairs and all(_parts(got, expected) for got, expected in pairs):     # several arrays returned, e.g. (W, b)
        n = len(pairs[0][0])
        wrong = [k for k in range(n) if any(not close(got[k], expected[k], rtol=1e-9, atol=1e-12)
                                            for got, expected in pairs)]
        ordinal = ["1st", "2nd", "3rd"] + [f"{k}th" for k in range(4, n + 1)]
        if wrong and len(wrong) < n:
            parts = " and ".join(ordinal[k] for k in wrong)
            inner = what_differs([(got[wrong[0]], expected[wrong[0]]) for got, expected in pairs
                                  if not close(got[wrong[0]], expected[wrong[0]], rtol=1e-9, atol=1e-12)], among)
            return (f"of the {n} values returned, only the {parts} {'is' if len(wrong) == 1 else 'are'} wrong"
                    + (f"; in the {ordinal[wrong[0]]}, {inner}" if inner else ""))
        return ""
    arrays = []
    for got, expected in pairs:
        try:
            g, e = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
        except (TypeError, ValueError, OverflowError):
            return ""
        if g.ndim == 1 and e.ndim == 1 and g.shape != e.shape or g.size == 0 or e.size == 0:
            return _which_items(pairs, among)
        if g.shape != e.shape or not (np.all(np.isfinite(g)) and np.all(np.isfinite(e))):
            return ""
        arrays.append((g, e))
    if not arrays:
        return ""
    scalar = all(g.size == 1 for g, _ in arrays)
    every = f"each of {among}" if among else "every failing case"
    where = f"in {every}" if scalar else f"in every entry of {every}"
    gaps = [g - e for g, e in arrays]
    largest = max((gap.ravel()[int(np.argmax(np.abs(gap)))] for gap in gaps), key=abs)
    if all(np.allclose(gap, largest, rtol=1e-9, atol=1e-12) for gap in gaps):
        more = "more" if largest > 0 else "less"
        return f"yours is {fmt(abs(float(largest)), 8)} {more} than the right value {where}"
    with np.errstate(all="ignore"):
        ratios = [np.where(e != 0, g / e, np.nan) for g, e in arrays]
    known = np.concatenate([r.ravel() for r in ratios])
    known = known[np.isfinite(known)]
    if known.size and all(np.allclose(g, known[0] * e, rtol=1e-9, atol=1e-12) for g, e in arrays):
        factor = float(known[0])
        if abs(factor + 1) < 1e-9:
            return f"yours has the opposite sign to the right values {where}"
        if abs(factor) < 1e-12:
            return "yours is 0 wherever the right value is not"
        return f"yours is {fmt(factor, 8)} times the right values {where}"
    g, e = arrays[0]
    wrong = ~np.isclose(g, e, rtol=1e-9, atol=1e-12)
    parts = []
    if g.size > 1:
        parts.append(f"in the first case with wrong numbers {int(wrong.sum())} of {g.size} entries differ"
                     + (" (the others are right)" if not wrong.all() else ""))
        if g.ndim == 2 and not wrong.all():
            rows = [int(i) for i in np.flatnonzero(wrong.any(axis=1))]
            columns = [int(i) for i in np.flatnonzero(wrong.any(axis=0))]
            if len(rows) < g.shape[0]:
                parts.append(f"only in {'row' if len(rows) == 1 else 'rows'} {fmt(rows, max_items=6)}")
            elif len(columns) < g.shape[1]:
                parts.append(f"only in {'column' if len(columns) == 1 else 'columns'} {fmt(columns, max_items=6)}")
    gap = (g - e)[wrong]
    if np.all(g[wrong] == 0):
        parts.append("yours is 0 there")
    elif np.all(gap > 0):
        parts.append("yours is too large " + ("there" if g.size > 1 else "in it"))
    elif np.all(gap < 0):
        parts.append("yours is too small " + ("there" if g.size > 1 else "in it"))
    elif np.allclose(g[wrong], -e[wrong], rtol=1e-9, atol=1e-12):
        parts.append("yours has the opposite sign there")
    else:
        parts.append("some too large, some too small")
    if g.size > 1:
        at = np.unravel_index(int(np.argmax(np.abs(g - e))), g.shape)
        index = at[0] if len(at) == 1 else tuple(int(i) for i in at)
        parts.append(f"the largest gap is at index {index}, where the right value is {fmt(e[at], 6)} and yours "
                     f"{fmt(g[at], 6)}")
    return "; ".join(parts)


def _low_dtypes(value: Any) -> set[str]:
    """The float dtypes of the arrays in a value (also inside a tuple, list or dict, one level down), with
    "float64" standing for any float64 one: {"float32"} for a result computed in float32."""
    values = list(value.values()) if isinstance(value, dict) else \
        list(value) if isinstance(value, (tuple, list)) else [value]
    found = {str(v.dtype) for v in values if isinstance(v, np.ndarray) and v.dtype.kind == "f"}
    return {"float64" if d == "float64" else d for d in found if d in ("float16", "float32", "float64")}


def _shaped_alike(got: Any, expected: Any) -> bool:
    """Whether a result can be set beside the expected one entry by entry: the same shape, several arrays
    shaped alike, or two flat sequences (of any lengths: what one leaves out, the other shows)."""
    if _parts(got, expected):
        return True
    try:
        g, e = np.shape(got), np.shape(expected)
    except (TypeError, ValueError):
        return False
    return g == e or (len(g) == 1 and len(e) == 1)


def _parts(got: Any, expected: Any) -> bool:
    """Whether a result is several arrays (a tuple such as (W, b)), each shaped as the expected one's."""
    # (a reference may carry more than the answer, such as route's logits after its experts and weights)
    return (isinstance(expected, (tuple, list)) and isinstance(got, (tuple, list)) and len(expected) >= len(got) > 1
            and all(isinstance(e, np.ndarray) for e in expected)
            and all(np.shape(g) == np.shape(e) for g, e in zip(got, expected)))


def _which_items(pairs: Sequence[tuple[Any, Any]], among: str = "") -> str:
    """what_differs for flat sequences of other lengths (a list of indices, a vector cut short): what yours
    leaves out or adds, said for every failing case (or each of `among`) when it is the same there."""
    kinds = []
    for got, expected in pairs:
        try:
            g, e = [float(v) for v in np.ravel(got)], [float(v) for v in np.ravel(expected)]
        except (TypeError, ValueError, OverflowError):
            return ""
        if not g:
            kinds.append(("empty", f"yours stops short: the first 0 of {len(e)} are right and the last {len(e)} "
                                   "missing"))
        elif len(g) < len(e) and np.allclose(g, e[:len(g)], rtol=1e-9, atol=1e-12):
            kinds.append(("short", f"yours stops short: the first {len(g)} of {len(e)} are right and "
                                   f"the last {len(e) - len(g)} missing"))
        elif len(g) > len(e) and np.allclose(g[:len(e)], e, rtol=1e-9, atol=1e-12):
            kinds.append(("long", f"yours goes on too long: {len(g)} where {len(e)} are right, the extra at the end"))
        elif set(g) < set(e):
            kinds.append(("fewer", f"yours leaves out {fmt(sorted(set(e) - set(g)))} and has nothing wrong"))
        elif set(g) > set(e):
            kinds.append(("more", f"yours has {fmt(sorted(set(g) - set(e)))} too, beside every right one"))
        else:
            kinds.append(("other", f"{len(g)} where {len(e)} are right"))
    if not kinds:
        return ""
    if {kind for kind, _ in kinds} == {"empty", "short"}:
        kinds = [("short", text) for _, text in kinds]     # nothing at all is the shortest of all
    first = kinds[0][1]
    if all(kind == kinds[0][0] for kind, _ in kinds) and kinds[0][0] in ("empty", "short", "long", "fewer", "more"):
        every = (f" in each of {among}" if among else " in every failing case") if len(kinds) > 1 else ""
        if kinds[0][0] == "empty":
            return "yours is empty" + every
        if kinds[0][0] == "short":
            lost = {int(k[1].split("the last ")[1].split()[0]) for k in kinds}
            return (f"yours stops short{every}, with the last {lost.pop()} missing and the rest right" if len(lost) == 1
                    else f"yours stops short{every} (the rest is right); in the first, {first.split(': ', 1)[1]}")
        return first + (f" (and alike{every})" if every else "")
    return f"in the first of {among} {first}" if among else f"in the first failing case {first}"


def largest_difference(got: Any, expected: Any) -> str:
    """Where two results that print the same differ most (rows cut off, or digits not shown), for a message;
    "" when they are not numbers of one shape."""
    try:
        g, e = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return ""
    if g.shape != e.shape or g.size == 0:
        return ""
    with np.errstate(all="ignore"):
        gaps = np.abs(g - e) / np.maximum(np.abs(e), 1e-300)
    gaps = np.where(np.isnan(g) & np.isnan(e), 0.0, np.nan_to_num(gaps, nan=np.inf))   # NaN where a number was
    where = np.unravel_index(int(np.argmax(gaps)), g.shape) if g.ndim else ()
    index = f" at index {where[0] if len(where) == 1 else tuple(int(i) for i in where)}" if where else ""
    return (f" (they differ where the print does not show: the largest difference is{index}, expected "
            f"{fmt(e[where], 10)}, got {fmt(g[where], 10)})")


def precision_note(got: Any, expected: Any, raw: Any = None) -> str:
    """For a result that is wrong only in its last digits (printed, the two often look the same): what is
    wrong. "" when the difference is larger than that, or the values are not numbers. A result of several arrays,
    such as (W, b), is read as all its numbers together, and any float32 or float16 array in it is named."""
    try:
        if _parts(got, expected):
            g = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in got])
            e = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in expected[:len(got)]])
        else:
            g, e = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return ""
    if g.shape != e.shape or g.size == 0 or not (np.all(np.isfinite(g)) and np.all(np.isfinite(e))):
        return ""
    scale = float(np.max(np.abs(e)))
    gap = float(np.max(np.abs(g - e)))
    if scale == 0 or gap == 0 or gap > 1e-5 * scale:    # float32 keeps about 7 digits; rounding, 4 or more
        return ""
    digits = max(1, int(-math.log10(gap / scale)))
    arrays = [v for v in (raw, got) if isinstance(v, np.ndarray)] + \
        [p for v in (raw, got) if isinstance(v, (tuple, list)) for p in v if isinstance(p, np.ndarray)]
    low = sorted({str(a.dtype) for a in arrays if a.dtype in (np.float16, np.float32)})
    if low:
        return (f" (the two agree to about {digits} significant digits: your result is {low[0]}, which keeps "
                f"only that many; keep float64, the inputs' dtype, through every step: no .astype(np.{low[0]}) "
                f"or np.{low[0]}(...), and no dtype={low[0]} where an array is made)")
    return (f" (the two agree to about {digits} significant digits, not to the last: a value rounded along the "
            "way, a float32 or float16 step, or an approximate formula where the exact one is asked?)")


def in_place_message(names: Sequence[str], args: dict[str, Any]) -> str:
    """What to say when the learner's function changed the inputs `names` (of the case `args`) in place."""
    shown = ", ".join(f"`{n}`" for n in names)
    first = names[0]
    if isinstance(args.get(first), np.ndarray):
        how = (f"`{first} += ...` or `{first}[...] = ...` writes into the caller's array itself; so does "
               f"`y += ...` after `y = {first}`, which makes a second name for it, not a copy (and a row or slice "
               f"such as `y = {first}[0]` is a view into it): start from a copy (`{first}.copy()`, "
               f"`{first}[0].copy()`) or compute a new array (`y = {first} + ...`)")
    else:
        how = f"`h = {first}` makes a second name for the same list, not a copy: `list({first})` copies it"
    return f"your function changed its input {shown} in place; leave the inputs as they are ({how})"


_NUMBER = r"[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?"


def _gist(message: str) -> str:
    """A message with its numbers blanked out, to tell when two messages say the same thing."""
    return re.sub(_NUMBER, "#", message)


def _shown_as_above(message: str, above: str) -> bool:
    """Whether a failure's message may be printed as "the same as above, with its own numbers": the same words
    with other numbers, where the digits of a name are words (a message about `W1` is not one about `W2`, nor
    one about float32 one about float64)."""
    def words(text: str) -> str:
        return re.sub(r"(?<![\w.])" + _NUMBER, "#", text)
    return words(message) == words(above)
