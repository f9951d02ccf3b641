"""The pinned set is one set: requirements.txt, environment.yml and pyproject.toml agree."""
import re
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import check_python  # noqa: E402


def pins(lines):
    found = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            name, _, version = line.partition("==")
            found[re.sub(r"[-_.]+", "-", name).lower()] = version
    return found


def test_every_requirement_is_pinned_exactly():
    lines = [l for l in (ROOT / "requirements.txt").read_text().splitlines() if l and not l.startswith("#")]
    assert lines and all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[A-Za-z0-9_.+\-]+", l) for l in lines), lines


def test_direct_requirements_are_in_the_pinned_set():
    wanted = pins((ROOT / "requirements.in").read_text().splitlines())
    pinned = pins((ROOT / "requirements.txt").read_text().splitlines())
    assert set(wanted) <= set(pinned), set(wanted) - set(pinned)


def test_environment_yml_installs_exactly_the_pinned_set():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-r requirements.txt" in pip_section
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pinned = pins((ROOT / "requirements.txt").read_text().splitlines())
    # Anything environment.yml names itself, besides python and pip, must carry requirements.txt's pin.
    for spec in conda + [p for p in pip_section if not p.startswith("-")]:
        name = re.split(r"[<>=! ]", spec, maxsplit=1)[0].lower()
        if name not in ("python", "pip"):
            assert pinned.get(name) and f"={pinned[name]}" in spec, f"{spec} differs from requirements.txt"


def test_python_ranges_agree():
    (lo_major, lo_minor), (hi_major, hi_minor) = check_python.SUPPORTED
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == f">={lo_major}.{lo_minor},<{hi_major}.{hi_minor + 1}"
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert f"python{requires}" in env["dependencies"]


@pytest.mark.parametrize("version, ok", [((3, 10, 12), False), ((3, 11, 0), True), ((3, 14, 1), True),
                                         ((3, 15, 0), False), ((2, 7, 18), False)])
def test_unsupported_python_gets_one_line(version, ok):
    message = check_python.problem(version)
    assert (message is None) == ok
    if message:
        assert "\n" not in message and "3.11 to 3.14" in message and ".".join(map(str, version)) in message
