"""What .venv was built from, by content, so that `make` reinstalls only when the pins change.

    python3 tools/install_stamp.py .venv/.inputs requirements.txt pyproject.toml ...

The Makefile builds .venv when its stamp (.venv/.installed) is older than .venv/.inputs, and runs this first,
every time: it writes the hash of the inputs' contents to .venv/.inputs only when that hash changed. So a file
that is merely newer, as after unpacking a newer zip of the course over the old one, leaves .venv/.inputs as it
was and reinstalls nothing (pip would need the network); a change of requirements.txt does reinstall.

The same serves .venv-hub (.venv-hub/.inputs, from requirements.txt, requirements-nbgrader.txt and
requirements-hub.txt). An environment built before this file existed has a stamp and no .inputs: if every pin
of its requirements files is installed at its version there, the hash is written with the stamp's own time
(nothing to reinstall); otherwise it is written now, and make reinstalls.

Standard library only; it runs with the Python that would build .venv.
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doctor import canonical, read_pins  # noqa: E402  (standard library only)


def digest(inputs: list[Path]) -> str:
    """The hash of the inputs' names and contents (a missing input counts as empty)."""
    sha = hashlib.sha256()
    for path in inputs:
        sha.update(path.name.encode() + b"\0")
        sha.update(path.read_bytes() if path.is_file() else b"")
        sha.update(b"\0")
    return sha.hexdigest()


def installed(venv: Path) -> dict[str, str]:
    """canonical name -> version of every distribution in the environment's site-packages."""
    found = {}
    for metadata in venv.glob("lib/python3*/site-packages/*.dist-info/METADATA"):
        name = version = None
        for line in metadata.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("Name:"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("Version:"):
                version = line.split(":", 1)[1].strip()
            elif not line.strip():
                break
        if name and version:
            found[canonical(name)] = version
    return found


def pins_installed(requirements: list[Path], venv: Path) -> bool:
    """Whether every pin of every requirements file is installed in `venv` at its version."""
    have = installed(venv)
    pins = {}
    for path in requirements:
        pins.update(read_pins(path) if path.is_file() else {})
    return bool(pins) and all(have.get(key) == version for key, (_, version) in pins.items())


def update(target: Path, inputs: list[Path], stamp: Path | None = None) -> str:
    """Write the inputs' hash to `target` if it changed. Returns what was done: "same", "changed", or
    "adopted" (a .venv built before hashes were kept, whose pins are all installed)."""
    new = digest(inputs)
    try:
        old = target.read_text().strip()
    except OSError:
        old = None
    if old == new:
        return "same"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(new + "\n")
    requirements = [p for p in inputs if p.name.startswith("requirements") and p.suffix == ".txt"]
    if old is None and stamp is not None and stamp.is_file() and requirements \
            and pins_installed(requirements, target.parent):
        before = stamp.stat().st_mtime - 1
        os.utime(target, (before, before))
        return "adopted"
    return "changed"


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    target = Path(argv[0])
    update(target, [Path(a) for a in argv[1:]], stamp=target.parent / ".installed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
