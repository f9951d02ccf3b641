"""No answer before a second failure (issue 21, section 2): what a check prints the first time an answer fails
holds no line of the exercise's solution. The answers are the labelled bank's wrong ones (tests/bank_named.py),
every exercise's, each run once in a fresh session; the solution lines are the code between the markers of
solutions/*.ipynb, compared without whitespace, trivial lines left out (a def, an import, `return h`,
`out = []`, a loop header).

A whole line is not the only way to hand over an answer: so is what it computes, `special.erf(z / math.sqrt(2))`
out of `Phi = 0.5 * (1 + special.erf(z / math.sqrt(2)))`, or a loop nest's order with the element it reads
("loop over j outside and i inside, and read M[i * n_cols + j]"). A first failure shows neither, unless the
lesson's own text gives it in code (lesson 02's section 3 writes `M[i * n_cols + j] * v[j]`)."""
import ast
import re
import textwrap
from dataclasses import dataclass
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


def tight(text: str) -> str:
    """text without backticks and without the spaces around operators and brackets, keeping one space between two
    words, so that a part of an answer is found after a word ("After int(2 * 4 * d / 3)" holds int(2*4*d/3),
    where `normal` would glue it to the word) and a comprehension keeps its "for j in"."""
    text = re.sub(r"\s+", " ", text.replace("`", ""))
    return re.sub(r" (?=\W)|(?<=\W) ", "", text)


def appears(line: str, text: str) -> bool:
    """Whether a solution line (without whitespace) is in the text as a whole line of code: not the start of a
    longer number or name (b = -1.0 is not in b = -1.0000001). Only an end that is a word or number is so
    bounded: a line ending in a bracket is whole before a sentence's full stop ("...: special.erf(z/math.sqrt(2)).")."""
    before = r"(?<![\w.])" if re.match(r"[\w.]", line) else ""
    after = r"(?![\w.])" if re.search(r"[\w.]$", line) else ""
    return re.search(before + re.escape(line) + after, text) is not None


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


def solution_cells():
    """(exercise, the solution's code between the markers, the lesson's markdown made tight) for every
    exercise of solutions/*.ipynb."""
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        markdown = tight(" ".join(cell.source for cell in cells if cell.cell_type == "markdown"))
        for cell in cells:
            if cell.cell_type == "code" and BEGIN in cell.source:
                name = re.search(r"^def (\w+)\(", cell.source, re.M).group(1)
                body = cell.source.split(BEGIN, 1)[1].split(END, 1)[0]
                yield name, textwrap.dedent(body), markdown


def _computes(node: ast.AST) -> bool:
    """Whether an expression does arithmetic of its own: an operator (+, @, /, a comparison, a minus on a
    name), not only a name, a call on names (range(n_cols), out.append(total)) or a constant such as -1."""
    return any(isinstance(n, (ast.BinOp, ast.Compare, ast.BoolOp))
               or isinstance(n, ast.UnaryOp) and not isinstance(n.operand, ast.Constant) for n in ast.walk(node))


# Computed parts that a lesson's text gives in its own notation, not in code: a check may repeat them too.
GIVEN_IN_WORDS = {
    "ffn_as_sum": ["h_k*W2[k]"],     # Exercise 1 asks for the terms $h_k u_k$; its Hint 2 says u_k is `W2[k]`
}


def answer_expressions() -> dict[str, list[str]]:
    """Each exercise's computed parts, tight (see tight): every call, subscript or operation in a solution line
    that does arithmetic and is at least 8 characters long (special.erf(z/math.sqrt(2)), z/math.sqrt(2),
    M[i*n_cols+j]), less those the lesson's markdown writes in code, or in its own notation (GIVEN_IN_WORDS):
    what the lesson gives, a check may repeat."""
    found: dict[str, list[str]] = {}
    for name, body, markdown in solution_cells():
        parts = set()
        for node in ast.walk(ast.parse(body)):
            if isinstance(node, (ast.Call, ast.Subscript, ast.BinOp)) and _computes(node):
                part = tight(ast.unparse(node))
                if len(part) >= 8 and part not in markdown and part not in GIVEN_IN_WORDS.get(name, ()):
                    parts.add(part)
        found[name] = sorted(parts)
    return found


ANSWER_EXPRESSIONS = answer_expressions()


@dataclass
class LoopOrder:
    """Two nested for-loops of a solution and what the inner one reads with both loop variables: the nest's
    order and its read together are an answer (transpose's j outside, i inside, reading M[i*n_cols+j]), even
    where the read alone is in the lesson's text."""
    outer: str
    inner: str
    read: str            # tight (see tight)
    comprehension: str   # the same nest as a list comprehension, tight

    def stated_in(self, text: str) -> bool:
        """Whether a sentence of `text` holds the read together with the order (the outer variable outside,
        or the inner one inside), or the text holds the nest as a comprehension."""
        if self.comprehension in tight(text):
            return True
        order = [rf"\b{self.outer}\b\s*(\([^)]*\))?\s*(is\s+)?(outside|outer|first)\b",
                 rf"\b{self.inner}\b\s*(\([^)]*\))?\s*(is\s+)?(inside|inner)\b"]
        return any(self.read in tight(sentence) and any(re.search(o, sentence) for o in order)
                   for sentence in re.split(r"(?<=[.;])\s+", text))


def loop_orders() -> dict[str, list[LoopOrder]]:
    """Each exercise's nests of two for-loops whose inner body reads an element with both loop variables."""
    found: dict[str, list[LoopOrder]] = {}
    for name, body, _ in solution_cells():
        orders = []
        for outer in ast.walk(ast.parse(body)):
            if not (isinstance(outer, ast.For) and isinstance(outer.target, ast.Name)):
                continue
            for inner in (n for statement in outer.body for n in ast.walk(statement)):
                if not (isinstance(inner, ast.For) and isinstance(inner.target, ast.Name)):
                    continue
                both = {outer.target.id, inner.target.id}
                for read in (n for statement in inner.body for n in ast.walk(statement)):
                    if isinstance(read, ast.Subscript) and both <= {n.id for n in ast.walk(read.slice)
                                                                    if isinstance(n, ast.Name)}:
                        text = ast.unparse(read)
                        orders.append(LoopOrder(outer.target.id, inner.target.id, tight(text), tight(
                            f"[{text} for {outer.target.id} in {ast.unparse(outer.iter)} "
                            f"for {inner.target.id} in {ast.unparse(inner.iter)}]")))
        found[name] = orders
    return found


LOOP_ORDERS = loop_orders()
# Where an exception came from, quoted from the learner's own code: "(line 4 of value_column: `return ...`)".
LEARNERS_LINE = re.compile(r"\(line \d+ of [\w <>]+: `[^`\n]*`\)")


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
        out = normal(LEARNERS_LINE.sub("", capsys.readouterr().out))   # the learner's own line quoted is theirs
        shown = [line for line in SOLUTIONS[exercise] if appears(line, out)]
        assert not shown, (exercise, answer.style, shown)


def test_the_computed_parts_and_loop_orders_are_found():
    """The scan below looks for what it should: the trial learners' two giveaways among them."""
    assert "special.erf(z/math.sqrt(2))" in ANSWER_EXPRESSIONS["gelu"]
    assert "M[i*n_cols+j]" not in ANSWER_EXPRESSIONS["transpose"]          # the lesson's text gives the read ...
    transpose = LOOP_ORDERS["transpose"]                                   # ... but not with the loop order
    assert [(o.outer, o.inner, o.read) for o in transpose] == [("j", "i", "M[i*n_cols+j]")]
    assert transpose[0].stated_in("Loop over j (the output's rows, M's columns) outside and i inside, and read "
                                  "M[i * n_cols + j].")
    assert transpose[0].stated_in("out = [M[i * n_cols + j] for j in range(n_cols) for i in range(n_rows)]")
    assert not transpose[0].stated_in("the loops the wrong way round (i outside, j inside) while reading "
                                      "M[i * n_cols + j]")
    assert not transpose[0].stated_in("Loop over j outside and i inside.")   # the order alone, no read
    assert "M[i*n_cols+j]*v[j]" not in ANSWER_EXPRESSIONS["matvec"]          # section 3 writes it


@pytest.mark.parametrize("exercise", sorted(SOLUTIONS))
def test_a_first_failure_shows_no_computed_part_of_the_solution_nor_its_loop_order(exercise, capsys):
    answers = [a for a in bank_named.BANK if a.exercise == exercise and not a.right and not a.graded]
    check = getattr(checks, f"check_{exercise}")
    for answer in answers:
        _verdict._FAILED_ATTEMPTS.clear()                 # each answer is a learner's first failure
        with np.errstate(all="ignore"):
            assert not check(answer.fn)
        out = LEARNERS_LINE.sub("", capsys.readouterr().out)
        shown = [part for part in ANSWER_EXPRESSIONS[exercise] if appears(part, tight(out))]
        shown += [f"{o.read} with {o.outer} outside and {o.inner} inside" for o in LOOP_ORDERS[exercise]
                  if o.stated_in(out)]
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
