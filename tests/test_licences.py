"""The licences: README, LICENSE and LICENSE-text name the same parts of the course under each, every part of
the repository is under one of them, and each lesson carries a notice that stands on its own."""
import re
import subprocess
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent

# What each licence covers, as README, LICENSE and LICENSE-text all name it.
CODE = ["helpers/", "tools/", "tests/", "benchmarks/", "hub/", "Makefile", ".ci/run", "pyproject.toml",
        "environment.yml", "requirements*", "code cells of the notebooks"]
TEXT = ["markdown cells of the notebooks", "figures", "conventions", "README.md", "CONTRIBUTING.md", "docs/",
        "`make html`", "`make slides`"]
# Every top-level entry of the repository, and the words that put it under a licence.
COVERED = {"helpers": "helpers/", "tools": "tools/", "tests": "tests/", "benchmarks": "benchmarks/", "hub": "hub/",
           "Makefile": "Makefile", ".ci": ".ci/run", "pyproject.toml": "pyproject.toml",
           "environment.yml": "environment.yml", "README.md": "README.md", "CONTRIBUTING.md": "CONTRIBUTING.md",
           "docs": "docs/", "solutions": "notebooks", "notebooks": "notebooks"}
NOT_COVERED = {"LICENSE", "LICENSE-text", ".gitignore"}       # the licences themselves, and git's own file

# The notice that ends each lesson's first cell: enough to reuse the lesson without this repository.
NOTICE = ('*From "The feed-forward network, from hand trace to mixture of experts" (the FFN course), © 2026 the '
          'authors of the FFN course. Its text and figures are under '
          '[CC BY 4.0](https://creativecommons.org/licenses/by/4.0/) and its code under the '
          '[MIT licence](https://opensource.org/license/mit): you may share and adapt this lesson if you name the '
          'course and its authors, link these licences and say what you changed. Keep this notice in every copy.*')
LESSONS = sorted(ROOT.glob("solutions/[0-9][0-9]_*.ipynb")) + sorted(ROOT.glob("notebooks/[0-9][0-9]_*.ipynb"))


def flat(text: str) -> str:
    return " ".join(text.split())


def readme_licence() -> str:
    readme = (ROOT / "README.md").read_text()
    return flat(readme[readme.index("## Licence"):readme.index("## Contributing")])


def scope(name: str) -> str:
    """The paragraphs of LICENSE or LICENSE-text that say what it covers (before CC BY's own text)."""
    text = (ROOT / name).read_text()
    return flat(text.split("-----")[0] if name == "LICENSE-text" else text.split("SOFTWARE.")[-1])


@pytest.mark.parametrize("where", ["README", "LICENSE", "LICENSE-text"])
def test_each_licence_file_and_readme_name_the_same_parts(where):
    text = readme_licence() if where == "README" else scope(where)
    for part in CODE + TEXT:
        assert part in text, f"{where} does not name {part!r} under its licence"


def test_readme_puts_each_part_under_the_right_licence():
    text = readme_licence()
    code, words = text.index("**Code**"), text.index("**Text and figures**")
    assert code < words
    for part in CODE:
        assert code < text.index(part) < words, f"README lists {part!r} outside the code licence"
    for part in TEXT:
        assert text.index(part, words) > words, f"README lists {part!r} outside the text licence"


def test_every_part_of_the_repository_is_under_a_licence():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    top = {path.split("/", 1)[0] for path in tracked}
    top = {re.sub(r"^requirements.*", "requirements*", name) for name in top}
    unlicensed = sorted(name for name in top - NOT_COVERED if name != "requirements*" and name not in COVERED)
    assert unlicensed == [], f"not named by README's licence list (nor by LICENSE's): {unlicensed}"
    for name in top & set(COVERED):
        assert COVERED[name] in readme_licence(), name


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_lesson_carries_the_notice_that_stands_on_its_own(path):
    first = next(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
    assert first.rstrip().endswith(NOTICE), f"{path.name}: its first cell should end with the course's notice"


def test_the_notice_says_what_a_copy_needs():
    """Title, authors, both licences by name with a link to their text, and the credit asked for."""
    for words in ("The feed-forward network", "the authors of the FFN course", "CC BY 4.0",
                  "https://creativecommons.org/licenses/by/4.0/", "MIT", "https://opensource.org/license/mit",
                  "say what you changed"):
        assert words in NOTICE
    assert "LICENSE" not in NOTICE, "a notice that points at the repository's files says nothing once it travels"
