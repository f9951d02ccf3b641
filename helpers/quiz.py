""""Check your understanding": a lesson's closing questions, with feedback on every option.

Each lesson's questions live in helpers/quizzes/lessonNN.py as `QUIZ = Quiz("NN", [...])`, out of the
learner's sight, and a notebook cell shows them:

    from helpers.quiz import lesson_quiz
    quiz = lesson_quiz("01")
    quiz                      # the questions: buttons in JupyterLab, text in any other kernel
    quiz.answer(1, "B")       # answer in code instead: feedback is printed

Three kinds of question:
- Choice: one correct option among several; every option carries feedback (for a wrong one, the
  misconception behind it; for the right one, why it is right).
- Choice(..., several=True): choose every option that applies (one or more are correct); the learner is told
  about each wrong pick and each correct option left out.
- Numeric: a number within a tolerance (or to a number of decimal places); a known slip (a value worked out
  from the question's quantities, or a test) gets its own feedback, an answer right to fewer places than
  asked is told so, and any other number which way it is off and why.

Wherever the quiz is shown it says the same questions: JupyterLab gets a widget (choose, Check, read the
feedback, try again), any other kernel the text, and an HTML page (`make html`) the questions with answers
and feedback folded in <details>. The text part is the same on every run (nbval compares it). Every answer
given in a learner's workspace is recorded in their progress (helpers.progress).
"""
from __future__ import annotations

import dataclasses
import hashlib
import html
import importlib
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Sequence

from helpers import progress_log

LETTERS = "ABCDEFGH"


def _inline_html(text: str) -> str:
    """Plain text with `code` spans, as HTML."""
    parts = re.split(r"`([^`]*)`", html.escape(text, quote=False))
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


@dataclass(frozen=True)
class Option:
    text: str
    feedback: str          # for a wrong option: the misconception behind it; for a right one: why it is right
    correct: bool = False


@dataclass(frozen=True)
class Feedback:
    """The outcome of one answer: truthy when right. Displays nothing (the feedback was printed)."""
    correct: bool
    text: str
    mistake: str = ""      # what was wrong, for progress: "chose A", "answered 4718592"

    def __bool__(self) -> bool:
        return self.correct

    def _ipython_display_(self) -> None:
        pass


@dataclass(frozen=True)
class Choice:
    """A multiple-choice question. The options are written in any order (the right one first, say); a Quiz shows
    them arranged (see arranged) so that which letter is right follows no pattern a learner could guess
    from, the same on every run, in the notebook, on the site and in the slides."""
    id: str
    prompt: str
    options: Sequence[Option]
    several: bool = False  # "choose every option that applies"
    shuffle: bool = True   # False keeps the written order (options that refer to each other's place)

    def __post_init__(self):
        if not 2 <= len(self.options) <= len(LETTERS):
            raise ValueError(f"question {self.id!r}: give 2 to {len(LETTERS)} options")
        right = sum(o.correct for o in self.options)
        if right == 0 or (right > 1 and not self.several):
            raise ValueError(f"question {self.id!r}: {right} correct options; a single-answer question needs "
                             "exactly one (or set several=True)")
        for o in self.options:
            if not o.feedback.strip():
                raise ValueError(f"question {self.id!r}: option {o.text!r} has no feedback")

    @property
    def kind(self) -> str:
        return "several" if self.several else "one"

    def reordered(self, order: Sequence[int]) -> "Choice":
        """The same question with its options shown in `order` (their written positions)."""
        return dataclasses.replace(self, options=tuple(self.options[i] for i in order), shuffle=False)

    def right_at(self, position: int) -> "Choice":
        """A single-answer question with its right option shown at `position` and the others in written order."""
        right = next(i for i, o in enumerate(self.options) if o.correct)
        others = [i for i in range(len(self.options)) if i != right]
        position = min(position, len(others))
        return self.reordered(others[:position] + [right] + others[position:])

    def letters(self) -> str:
        return LETTERS[:len(self.options)]

    def correct_letters(self) -> str:
        return "".join(L for L, o in zip(LETTERS, self.options) if o.correct)

    def instruction(self) -> str:
        return "Choose every answer that applies." if self.several else "Choose one answer."

    def parse(self, answer: Any) -> tuple[str | None, str]:
        """The chosen letters (sorted, no repeats) or None with what is wrong with the answer."""
        if isinstance(answer, (list, tuple, set)):
            answer = "".join(str(a) for a in answer)
        if not isinstance(answer, str):
            return None, f"answer with the option's letter, for example \"{self.letters()[0]}\""
        chosen = re.sub(r"[\s,;]", "", answer).upper()
        unknown = sorted(set(chosen) - set(self.letters()))
        if not chosen or unknown:
            return None, (f"the options are {', '.join(self.letters())}; answer with their letters"
                          + (f" (not {', '.join(unknown)})" if unknown else ""))
        if len(chosen) > 1 and not self.several:
            return None, "this question has one answer: choose a single letter"
        return "".join(sorted(set(chosen))), ""

    def judge(self, answer: Any) -> Feedback:
        chosen, problem = self.parse(answer)
        if chosen is None:
            return Feedback(False, f"Not read: {problem}.", "unreadable answer")
        right = self.correct_letters()
        by_letter = dict(zip(LETTERS, self.options))
        if chosen == right:
            lines = [f"Right. {_unprefixed(by_letter[L].feedback)}" if len(right) == 1
                     else f"{L}: right. {_unprefixed(by_letter[L].feedback)}" for L in right]
            return Feedback(True, "\n".join(lines))
        lines = [f"{L}: not quite. {by_letter[L].feedback}" for L in chosen if L not in right]
        kept = [L for L in chosen if L in right]
        missed = [L for L in right if L not in chosen]
        if self.several:
            lines += [f"{L}: right." for L in kept]
            if missed:
                lines.append(f"You left out {plural_letters(len(missed))} that {'is' if len(missed) == 1 else 'are'} "
                             "also correct. Read the options again.")
        lines.append("Try again.")
        return Feedback(False, "\n".join(lines), f"chose {chosen}")


def _unprefixed(feedback: str) -> str:
    """An option's feedback without its own leading "Right." (the judge says it once)."""
    rest = re.sub(r"^(right|correct|yes)\b[.:!,]?\s*", "", feedback, flags=re.IGNORECASE)
    if not rest:
        return feedback
    # A sentence starts with a capital, but not a variable or a formula ("z = 2 ...", "relu'(0) ...").
    return rest[0].upper() + rest[1:] if re.match(r"[a-z]{2,}\s+(?![=<>+\-*/^(])", rest) else rest


def arranged(lesson: str, questions: Sequence[Question]) -> list[Question]:
    """The questions with their options in the order shown. The k-th single-answer question (k from 0) has its
    right option at position (lesson + (n - 1) k) mod n, so that within a lesson the right letter moves on every
    time (B, A, D, ... for lesson 01's four-option questions; never the same letter twice running) and lessons
    start at different letters; a question with several right answers is shuffled by its id. A Choice with
    shuffle=False keeps its written order."""
    offset = int(lesson) if str(lesson).isdigit() else 0
    out, k, previous = [], 0, None
    for q in questions:
        if isinstance(q, Choice) and q.shuffle:
            if q.several:
                q = q.reordered(shown_order(q.id, len(q.options)))
            else:
                n = len(q.options)
                position = (offset + (n - 1) * k) % n          # n - 1 and n share no factor: a new place each time
                position = (position + 1) % n if position == previous else position   # (also when n changes)
                q, previous = q.right_at(position), position
                k += 1
        out.append(q)
    return out


def shown_order(question_id: str, n: int) -> list[int]:
    """A permutation of range(n) fixed by the question's id: the options' written positions in the order shown."""
    return sorted(range(n), key=lambda i: hashlib.sha256(f"{question_id}:{i}".encode()).hexdigest())


def plural_letters(n: int) -> str:
    return "an option" if n == 1 else f"{n} options"


@dataclass(frozen=True)
class Slip:
    """A known wrong answer to a numeric question and what it is: the slip, never the answer.

    Either the `value` the slip gives, worked out from the question's quantities (matched within the question's
    tolerance, and a non-whole value also when the learner rounded it to the digits they gave), or a `test` that
    recognises a family of answers ("not a multiple of 256"), with `shown` naming it on the site. `says` is the
    feedback, or a function of the learner's number that returns it."""
    says: str | Callable[[float], str]
    value: float | None = None
    test: Callable[[float], bool] | None = None
    shown: str = ""

    def __post_init__(self):
        if (self.value is None) == (self.test is None):
            raise ValueError(f"a slip needs a value or a test, not both: {self.says!r}")
        if self.test is not None and not self.shown.strip():
            raise ValueError(f"a slip found by a test needs `shown`, what the site calls it: {self.says!r}")
        if isinstance(self.says, str) and not self.says.strip():
            raise ValueError(f"the slip {self.value if self.test is None else self.shown!r} has no feedback")

    def text(self, value: float) -> str:
        return self.says(value) if callable(self.says) else self.says

    def label(self) -> str:
        return _number(self.value) if self.test is None else self.shown


def _number(value: float) -> str:
    """A number for the site: whole numbers with all their digits, others to four decimal places at most."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4f}".rstrip("0").rstrip(".")


def decimals(answer: Any) -> int:
    """How many decimal places the learner wrote: "0.880" has 3, 0.88 and "8.8e-1" have 2, 4722432 has 0."""
    text = re.sub(r"[\s,_]", "", answer) if isinstance(answer, str) else repr(float(answer))
    try:
        exponent = Decimal(text).normalize().as_tuple().exponent if not isinstance(answer, str) else \
            Decimal(text).as_tuple().exponent
    except (InvalidOperation, ValueError):
        return 0
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _rounded_to_fewer_digits(value: float, target: float, given: int) -> bool:
    """Whether `value`, written with `given` decimal places, is `target` rounded (or cut off) to those places,
    when `target` needs more and the rounding still keeps two significant figures."""
    if target == round(target, given):
        return False
    unit = 10.0 ** -given
    return abs(value - target) <= unit * (1 + 1e-9) and 0.5 * unit <= 0.05 * abs(target)


def _cut_off(value: float, target: float, given: int) -> bool:
    """Whether `value` is `target` with its digits after the `given`-th decimal place dropped (truncated)."""
    scale = 10 ** given
    return math.isclose(value, math.trunc(target * scale) / scale, rel_tol=0, abs_tol=0.01 / scale)


@dataclass(frozen=True)
class Numeric:
    """A question answered with a number. Right within the tolerance: `tolerance` (absolute) and
    `rel_tolerance`, or `places`, which asks for that many decimal places and accepts what lies within half a
    unit of the last one (the question states it). A wrong number is told, in this order: which known slip it
    is (`wrong`: value -> feedback, and `slips`, see Slip); that it agrees with the answer to fewer decimal
    places than asked; else which way it is off (`low`, `high`), which must hold for every number on that
    side, whatever the slip."""
    id: str
    prompt: str
    answer: float
    why: str                                          # why the answer is right
    tolerance: float = 0.0                            # absolute
    rel_tolerance: float = 0.0                        # relative to the answer
    wrong: dict[float, str] = field(default_factory=dict)  # common wrong values -> the misconception
    low: str = "That is too small."
    high: str = "That is too large."
    slips: Sequence[Slip] = ()                        # more known slips: values worked out, or tests
    places: int | None = None                         # decimal places asked for (sets the tolerance)
    whole: bool = False                               # a count: the question asks for a whole number

    def __post_init__(self):
        if not self.why.strip() or not self.low.strip() or not self.high.strip():
            raise ValueError(f"question {self.id!r}: why, low and high all need feedback")
        if self.whole and not float(self.answer).is_integer():
            raise ValueError(f"question {self.id!r}: whole=True, but the answer {self.answer} is not whole")
        if self.places is not None:
            if self.tolerance or self.rel_tolerance:
                raise ValueError(f"question {self.id!r}: places sets the tolerance; give one or the other")
            object.__setattr__(self, "tolerance", 0.5 * 10.0 ** -self.places * (1 + 1e-9))
        for value, text in self.wrong.items():
            if not text.strip():
                raise ValueError(f"question {self.id!r}: the wrong value {value} has no feedback")
        for slip in self.known():
            if slip.test is None and self._near(slip.value, self.answer):
                raise ValueError(f"question {self.id!r}: the wrong value {slip.value} is within the tolerance")
            if slip.test is not None and slip.test(self.answer):
                raise ValueError(f"question {self.id!r}: the slip {slip.shown!r} would catch the right answer")

    kind = "number"

    def known(self) -> list[Slip]:
        """Every known slip: the `wrong` values first, then `slips`, in the order they are tried."""
        return [Slip(text, value=value) for value, text in self.wrong.items()] + list(self.slips)

    def instruction(self) -> str:
        if self.places is not None:
            return (f"Answer with a number to {self.places} decimal places (within "
                    f"{0.5 * 10.0 ** -self.places:g} of the exact value).")
        if self.whole:
            return "Answer with a whole number."
        return "Answer with a number" + (f" (within {self.tolerance:g})." if self.tolerance else ".")

    def _near(self, value: float, target: float) -> bool:
        return math.isclose(value, target, rel_tol=self.rel_tolerance, abs_tol=self.tolerance)

    @staticmethod
    def parse(answer: Any) -> tuple[float | None, str]:
        if isinstance(answer, bool):
            return None, "answer with a number, not True or False"
        if isinstance(answer, str):
            text = re.sub(r"[\s,_]", "", answer)
            try:
                answer = float(text)
            except ValueError:
                return None, f"{answer!r} is not a number (write it like 4722432 or 4.7e6)"
        try:
            value = float(answer)
        except (TypeError, ValueError):
            return None, "answer with a number"
        if not math.isfinite(value):
            return None, "answer with a finite number"
        return value, ""

    def slip(self, value: float, given: int) -> Slip | None:
        """The known slip `value` is (written with `given` decimal places), or None."""
        slips = self.known()
        for slip in slips:                    # a value worked out, within the tolerance
            if slip.test is None and self._near(value, slip.value):
                return slip
        for slip in slips:                    # ... or rounded to the digits the learner gave
            if slip.test is None and _rounded_to_fewer_digits(value, slip.value, given):
                return slip
        for slip in slips:
            if slip.test is not None and slip.test(value):
                return slip
        return None

    def judge(self, answer: Any) -> Feedback:
        value, problem = self.parse(answer)
        if value is None:
            return Feedback(False, f"Not read: {problem}.", "unreadable answer")
        shown = f"{value:,.10g}"
        if self._near(value, self.answer):
            return Feedback(True, f"Right. {self.why}")
        given = decimals(answer)
        known = self.slip(value, given)
        if known is not None:
            text = known.text(value)
        elif self.places is not None and given < self.places and _rounded_to_fewer_digits(value, self.answer, given):
            text = (f"Right to {given} decimal place{'s' if given != 1 else ''}, but the question asks for "
                    f"{self.places}: carry more digits through, then round the last one to the nearest (do not "
                    "cut it off).")
        elif self.places is not None and _cut_off(value, self.answer, max(given, self.places)):
            text = (f"Those digits are right, but the last one is cut off, not rounded: round to the nearest at "
                    f"{self.places} decimal places (the next digit decides).")
        else:
            text = self.low if value < self.answer else self.high
        return Feedback(False, f"Not quite: {shown}. {text}\nTry again.", f"answered {shown}")


Question = Choice | Numeric


class Quiz:
    """A lesson's questions. Display it to show them; `answer(number, answer)` to answer in code."""

    inline_html = staticmethod(_inline_html)      # for helpers.quiz_widget, which does not import this module

    def __init__(self, lesson: str, questions: Sequence[Question], title: str = "Check your understanding",
                 shuffle: bool = True):
        ids = [q.id for q in questions]
        if len(set(ids)) != len(ids):
            raise ValueError(f"lesson {lesson}: question ids repeat: {ids}")
        # shuffle=False shows every question's options as written (the quiz mechanics' own tests)
        self.questions = arranged(lesson, questions) if shuffle else list(questions)
        self.lesson, self.title = lesson, title
        self._widget = None

    def __len__(self) -> int:
        return len(self.questions)

    def question(self, number: int) -> Question:
        return self.questions[number - 1]

    # ---- answering -------------------------------------------------------------------------------------
    def judge(self, number: Any, answer: Any) -> Feedback:
        """The feedback for an answer to question `number` (from 1), recorded in the learner's progress."""
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(self.questions):
            return Feedback(False, f"There is no question {number!r}: the questions are numbered 1 to "
                                   f"{len(self.questions)}.", "no such question")
        question = self.question(number)
        feedback = question.judge(answer)
        if feedback.mistake != "unreadable answer":
            note = progress_log.not_recorded(progress_log.append("quiz", self.lesson, question.id,
                                                                 "pass" if feedback else "fail", feedback.mistake))
            if note:        # said with the feedback, in the widget too: recording never breaks an answer
                feedback = Feedback(feedback.correct, f"{feedback.text}\n{note}", feedback.mistake)
        return feedback

    def answer(self, number: Any, answer: Any) -> Feedback:
        """Answer question `number` (from 1) in code; prints the feedback. Returns it (truthy when right)."""
        feedback = self.judge(number, answer)
        print(f"Question {number}: {feedback.text}")
        return feedback

    # ---- showing ---------------------------------------------------------------------------------------
    def intro(self) -> str:
        return (f"{self.title}: {len(self.questions)} questions on this lesson's key ideas. In JupyterLab "
                "choose and press Check; in any kernel answer in code with quiz.answer(question, answer): the "
                "answer is a letter such as \"B\", letters such as \"AC\" where several apply, or a number "
                "such as 4096.")

    def text(self) -> str:
        """The questions as plain text, the same on every run."""
        lines = [self.intro()]
        for n, q in enumerate(self.questions, start=1):
            lines.append(f"{n}. {q.prompt} {q.instruction()}")
            if isinstance(q, Choice):
                lines += [f"   {L}. {o.text}" for L, o in zip(LETTERS, q.options)]
        return "\n".join(lines)

    def html(self) -> str:
        """The questions for a page without a kernel: answers and feedback folded, one <details> each."""
        items = []
        for n, q in enumerate(self.questions, start=1):
            parts = [f"<p>{_inline_html(q.prompt)} <em>{q.instruction()}</em></p>"]
            if isinstance(q, Choice):
                parts.append('<ol type="A">' + "".join(f"<li>{_inline_html(o.text)}</li>" for o in q.options)
                             + "</ol>")
                notes = "".join(f"<li><strong>{L}</strong> ({'right' if o.correct else 'wrong'}): "
                                f"{_inline_html(o.feedback)}</li>" for L, o in zip(LETTERS, q.options))
                answer = ", ".join(q.correct_letters())
            else:
                notes = "".join(f"<li>{_inline_html(slip.label())}"
                                + (f": {_inline_html(slip.says)}" if isinstance(slip.says, str) else "") + "</li>"
                                for slip in q.known())
                if q.places is not None:
                    notes += (f"<li>The answer to fewer than {q.places} decimal places: right so far, and asked "
                              "for more digits.</li>")
                answer = (f"{q.answer:,.{q.places}f}" if q.places is not None else _number(q.answer)) \
                    + (f" (within {q.tolerance:.2g})" if q.tolerance else "")
                notes = f"<li>{_inline_html(q.why)}</li>" + notes
            parts.append(f"<details><summary>Answer and feedback, question {n}</summary>"
                         f"<p>Answer: {html.escape(answer)}</p><ul>{notes}</ul></details>")
            items.append("<li>" + "".join(parts) + "</li>")
        return (f'<section class="ffn-quiz" aria-label="{html.escape(self.title)}">'
                f"<p><strong>{html.escape(self.title)}</strong>: {len(self.questions)} questions. "
                "Answer them in JupyterLab; here each answer is folded under its question.</p>"
                f"<ol>{''.join(items)}</ol></section>")

    def __repr__(self) -> str:
        return self.text()

    def _repr_mimebundle_(self, **kwargs):
        bundle = {}
        widget = self.widget()
        if widget is not None:
            bundle.update(widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.text()
        bundle["text/html"] = self.html()
        return bundle

    def widget(self):
        """The questions as ipywidgets (built once), or None where ipywidgets is missing."""
        if self._widget is None:
            try:
                from helpers.quiz_widget import QuizWidget
            except ImportError:
                return None
            self._widget = QuizWidget(self)
        return self._widget


def lesson_quiz(lesson: str) -> Quiz:
    """The quiz of a lesson ("01", "02", ...), from helpers/quizzes/lessonNN.py."""
    module = importlib.import_module(f"helpers.quizzes.lesson{lesson}")
    return module.QUIZ
