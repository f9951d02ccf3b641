"""Each lesson's "Check your understanding" questions: lessonNN.py defines QUIZ (see helpers.quiz)."""
import pkgutil
import re

LESSONS = tuple(sorted(m.name.removeprefix("lesson") for m in pkgutil.iter_modules(__path__)
                       if re.fullmatch(r"lesson\d\d", m.name)))
