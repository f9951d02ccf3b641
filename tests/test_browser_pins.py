"""requirements-browser.txt, the browser test's driver, is pinned like requirements.txt and agrees with it."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pins(path):
    lines = [l.split("#", 1)[0].strip() for l in path.read_text().splitlines()]
    return dict(l.split("==", 1) for l in lines if l)


def test_browser_requirements_are_pinned_exactly_and_include_playwright():
    lines = [l for l in (ROOT / "requirements-browser.txt").read_text().splitlines() if l and l[0] != "#"]
    assert lines and all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[A-Za-z0-9_.+\-]+", l) for l in lines), lines
    assert "playwright" in pins(ROOT / "requirements-browser.txt")


def test_no_package_is_pinned_differently_from_the_course_set():
    canon = lambda name: re.sub(r"[-_.]+", "-", name).lower()  # noqa: E731
    course = {canon(k): v for k, v in pins(ROOT / "requirements.txt").items()}
    for name, version in pins(ROOT / "requirements-browser.txt").items():
        assert course.get(canon(name), version) == version, f"{name}=={version} vs requirements.txt"
