"""docs/teaching.md cannot drift from the course: every lesson in solutions/ has its section; every mistake it
quotes is a name in that lesson's checks module (helpers/checks/lessonNN.py) and every exercise it names is
one of the lesson's; the cells it names by their first line exist; its times are README's and its poll sizes
the quizzes'."""
import ast
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import notebooks as nbtool  # noqa: E402

from helpers.quiz import lesson_quiz  # noqa: E402

GUIDE = ROOT / "docs" / "teaching.md"
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
LESSONS = [p.name.split("_", 1)[0] for p in SOLUTIONS]
SECTION = re.compile(r"^### Lesson (\d\d) · .*\((\w+\.ipynb)\)\s*$", re.MULTILINE)


def words(text: str) -> str:
    return " ".join(text.split())


def sections() -> dict[str, str]:
    """Lesson number -> the text of its section in the guide (up to the next heading of level 2 or 3)."""
    text = GUIDE.read_text(encoding="utf-8")
    found = {}
    for match in SECTION.finditer(text):
        rest = text[match.end():]
        end = re.search(r"^#{2,3} ", rest, re.MULTILINE)
        found[match.group(1)] = (match.group(2), rest[:end.start()] if end else rest)
    return found


def bullets(section: str) -> list[str]:
    """The section's list items, each joined into one line."""
    items, current = [], None
    for line in section.splitlines():
        if line.startswith("- "):
            current = [line[2:]]
            items.append(current)
        elif current is not None and line.startswith("  ") and line.strip():
            current.append(line.strip())
        else:
            current = None
    return [words(" ".join(item)) for item in items]


def mistake_names(lesson: str) -> set[str]:
    """Every string constant of helpers/checks/lessonNN.py (the mutant tables' names among them), whitespace
    collapsed."""
    tree = ast.parse((ROOT / "helpers" / "checks" / f"lesson{lesson}.py").read_text(encoding="utf-8"))
    return {words(n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def exercises(path: Path) -> dict[str, str]:
    """Function an exercise cell defines -> the number of the exercise heading above it ("3")."""
    numbers, number = {}, ""
    for cell in nbformat.read(path, as_version=4).cells:
        heading = re.search(r"^#+\s*Exercise (\d+)", cell.source, re.MULTILINE) if cell.cell_type == "markdown" else None
        number = heading.group(1) if heading else number
        if nbtool.is_exercise(cell):
            numbers.update({name: number for name in nbtool.DEFINES.findall(cell.source)})
    return numbers


def test_every_lesson_in_solutions_has_its_section():
    found = sections()
    missing = [p.name for p in SOLUTIONS if p.name.split("_", 1)[0] not in found]
    assert not missing, f"docs/teaching.md has no section '### Lesson NN · ... (NN_name.ipynb)' for {missing}"
    for path in SOLUTIONS:
        name, _ = found[path.name.split("_", 1)[0]]
        assert name == path.name, f"the guide's lesson {name} is {path.name} in solutions/"


@pytest.mark.parametrize("lesson", LESSONS)
def test_quoted_mistakes_are_names_in_the_lessons_checks(lesson):
    _, section = sections()[lesson]
    names = mistake_names(lesson)
    block = section.split("**Mistakes the checks expect:**", 1)[1].split("\n**", 1)[0]
    quoted = [q for item in bullets(block) for q in re.findall(r'"([^"]+)"', item)]
    assert len(quoted) >= 2, f"lesson {lesson}: quote at least two of its checks' named mistakes"
    unknown = [q for q in quoted if q not in names]
    assert not unknown, f"lesson {lesson}: not mistake names in helpers/checks/lesson{lesson}.py: {unknown}"


@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.stem for p in SOLUTIONS])
def test_named_exercises_and_cells_are_the_lessons(path):
    _, section = sections()[path.name.split("_", 1)[0]]
    defined = exercises(path)
    named = re.findall(r"Exercises? (\d+),? \(?`(\w+)`", words(section))
    named += re.findall(r"and (\d+) \(`(\w+)`\)", words(section))
    assert named, f"{path.name}: the guide names none of its exercises"
    wrong = [(n, f) for n, f in named if defined.get(f) != n]
    assert not wrong, f"{path.name}: not its exercises (number, function): {wrong}; it has {defined}"
    nb = nbformat.read(path, as_version=4)
    first_lines = [next((line.strip() for line in c.source.splitlines() if line.strip()), "") for c in nb.cells]
    for start in re.findall(r"starting `([^`]+)`", words(section)):
        assert any(line.startswith(start) for line in first_lines), f"{path.name}: no cell starts with {start!r}"
    headings = {words(line.lstrip("#").strip()).replace("$", "") for c in nb.cells if c.cell_type == "markdown"
                for line in c.source.splitlines() if line.startswith("#")}
    for quoted in re.findall(r'"(\d\. [^"]+)"', words(section)):
        assert any(h.startswith(quoted.replace("$", "")) for h in headings), f"{path.name}: no heading {quoted!r}"


def test_times_are_readmes():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    guide = GUIDE.read_text(encoding="utf-8")
    for path in SOLUTIONS:
        core, further = re.search(rf"`{path.name}` \|.*\| (\d+) min \(\+ (\d+) optional\) \|", readme).groups()
        lesson = path.name.split("_", 1)[0]
        assert re.search(rf"^\| {lesson} [^|]+\| {core} min \| {further} min \|$", guide, re.MULTILINE), \
            f"docs/teaching.md's times for lesson {lesson} are not README's {core} + {further}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_poll_has_the_quizs_questions(lesson):
    _, section = sections()[lesson]
    count = int(re.search(r"\*\*Poll\*\* \((\d+) questions", section).group(1))
    assert count == len(lesson_quiz(lesson).questions)
