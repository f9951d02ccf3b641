"""No answer before a second failure (issue 21, section 2): what a check prints the first time an answer fails
holds no line of the exercise's solution. The answers are the labelled bank's wrong ones (tests/bank_named.py),
every exercise's, each run once in a fresh session; the solution lines are the code between the markers of
solutions/*.ipynb, compared without whitespace, trivial lines left out (a def, an import, `return h`,
`out = []`, a loop header)."""
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

import bank_named
from helpers import checks
from helpers.checks import _verdict

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
TRIVIAL = re.compile(r"^(def .*|import .*|from .*|return[\w,() ]*|\w+ = (\[\]|0\.0|0|\w+\.copy\(\)|len\(\w+\))|"
                     r"for .*:|if .*:|else:|pass|\w+ = \w+(\.\w+)?)$")


def normal(text: str) -> str:
    return re.sub(r"[\s`]", "", text)


def appears(line: str, text: str) -> bool:
    """Whether a solution line (without whitespace) is in the text as a whole line of code: not the start of a
    longer number or name (b = -1.0 is not in b = -1.0000001)."""
    return re.search(r"(?<![\w.])" + re.escape(line) + r"(?![\w.])", text) is not None


def solution_lines() -> dict[str, list[str]]:
    """Each exercise's non-trivial solution lines, comments dropped, by the exercise's function name."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code" or BEGIN not in cell.source:
                continue
            name = re.search(r"^def (\w+)\(", cell.source, re.M).group(1)
            body = cell.source.split(BEGIN, 1)[1].split(END, 1)[0]
            lines = [line.split("#", 1)[0].strip() for line in body.splitlines()]
            found[name] = [normal(line) for line in lines if line and not TRIVIAL.match(line)]
    return found


SOLUTIONS = solution_lines()


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    for name in ("FFN_GRADING", "NBGRADER_EXECUTION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(_verdict, "_FAILED_ATTEMPTS", {})


def test_every_exercise_has_solution_lines_to_look_for():
    exercises = {name.removeprefix("check_") for name in checks.__all__}
    assert exercises <= set(SOLUTIONS), exercises - set(SOLUTIONS)


@pytest.mark.parametrize("exercise", sorted(SOLUTIONS))
def test_a_first_failure_shows_no_line_of_the_solution(exercise, capsys):
    answers = [a for a in bank_named.BANK if a.exercise == exercise and not a.right and not a.graded]
    assert answers, exercise
    check = getattr(checks, f"check_{exercise}")
    for answer in answers:
        _verdict._FAILED_ATTEMPTS.clear()                 # each answer is a learner's first failure
        with np.errstate(all="ignore"):                   # the answers' own overflows (a naive exp)
            assert not check(answer.fn)
        out = normal(capsys.readouterr().out)
        shown = [line for line in SOLUTIONS[exercise] if appears(line, out)]
        assert not shown, (exercise, answer.style, shown)


def test_the_second_failure_may_say_more(capsys):
    """ffn_backward's chain rule, line by line, comes after a second failure in the session."""
    answer = next(a for a in bank_named.BANK if a.exercise == "ffn_backward" and not a.right and a.label is None)
    checks.check_ffn_backward(answer.fn)
    first = capsys.readouterr().out
    checks.check_ffn_backward(answer.fn)
    second = capsys.readouterr().out
    assert "dW2 = h.T @ dy" not in first and "dW2 = h.T @ dy" in second, (first, second)


# Lines of an answer written other than as in the solution (in words, or another way to the same line): the
# solution-line scan above cannot see them, so they are listed here, by exercise, as a first failure must not
# show them either.
PARAPHRASED = {
    "route": ["np.argsort(-logits, axis=-1)[:, :k]", "np.argsort(-logits, axis=-1)"],
    "ffn_forward": ["z[i] = sum over j of W1[i*D + j] * x[j]", "y[k] = sum over i of W2[k*H + i] * h[i]"],
    "ffn_chunked": ["range(0, T, chunk)", "y[s:s + chunk] = ffn(x[s:s + chunk]"],
    "swiglu_ffn": ["silu(x @ W_gate) * (x @ W_up)", "silu(x @ W_gate)"],
    "swiglu_hidden": ["math.ceil(h / m)", "-(-h // m)", "math.ceil(h / multiple_of)"],
    "residual_block": ["x + ffn(layer_norm(x))", "ffn(layer_norm(x))"],     # the solution names h = layer_norm(x)
    "value_logits": ["(v - v.mean()) * lnf_g", "(v - mean) * lnf_g", "(value - value.mean()) * lnf_g",
                     "W2[unit] - W2[unit].mean()", "v - v.mean()"],
}


# Where an exception came from, quoted from the learner's own code: "(line 4 of value_column: `return ...`)".
LEARNERS_LINE = re.compile(r"\(line \d+ of [\w <>]+: `[^`\n]*`\)")


@pytest.mark.parametrize("exercise", sorted(PARAPHRASED))
def test_a_first_failure_shows_no_answer_written_another_way(exercise, capsys):
    answers = [a for a in bank_named.BANK if a.exercise == exercise and not a.right and not a.graded]
    check = getattr(checks, f"check_{exercise}")
    for answer in answers:
        _verdict._FAILED_ATTEMPTS.clear()
        with np.errstate(all="ignore"):
            assert not check(answer.fn)
        out = normal(LEARNERS_LINE.sub("", capsys.readouterr().out))      # the learner's own line is theirs
        shown = [line for line in PARAPHRASED[exercise] if normal(line) in out]
        assert not shown, (exercise, answer.style, shown)


def stubs():
    """(notebook, exercise, the stub cell's source) for every exercise stub in notebooks/."""
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            found = re.search(r"^def (\w+)\(", cell.source, re.M) if cell.cell_type == "code" else None
            if found and found.group(1) in SOLUTIONS and "NotImplementedError" in cell.source:
                yield path.name, found.group(1), cell.source


def answer_parts(line: str) -> list[str]:
    """A solution line, and what it computes (the right side of an assignment or a return), long enough to be
    an answer and not a name: `gate = silu(x @ W_gate)` gives itself and `silu(x@W_gate)`."""
    parts = [line]
    right = re.match(r"^(?:[\w\[\]:+*, ]+?[-+*/]?=(?!=)|return)(.+)$", line)
    if right:
        parts.append(right.group(1))
    return [part for part in parts if len(part) >= 8]


def test_no_stub_holds_a_line_of_its_solution():
    """The learner's copy keeps the docstring and signature: they describe the exercise in words and shapes,
    never with a line (or the computed part of one) of its solution, nor with one written another way."""
    found = []
    for notebook, exercise, source in stubs():
        text = normal(source)
        lines = [part for line in SOLUTIONS[exercise] for part in answer_parts(line)]
        lines += [normal(line) for line in PARAPHRASED.get(exercise, [])]
        found += [(notebook, exercise, line) for line in lines if appears(line, text)]
    assert not found, found
    assert len(list(stubs())) >= len(SOLUTIONS), "some exercise has no stub in notebooks/"
