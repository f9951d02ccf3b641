"""One npm package at a pinned version and integrity, installed into a git-ignored folder under build/.

    install(package, version, integrity, folder)   npm install package@version into folder (once), checked

Used by tools/build_slides.py (reveal.js, copied into every deck folder) and by the accessibility tests
(axe-core, tests/a11y.py). Nothing is downloaded but the npm package itself: no install scripts run
(--ignore-scripts), and the lock entry npm writes must carry the pinned version and integrity, or the install
is refused. Two processes installing into one folder at once (the browser tests run two at a time) take turns:
the second waits on a lock file beside the folder, then finds the package installed.
"""
from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path


class NpmMissing(RuntimeError):
    """There is no npm on this machine to install the package with."""


def installed(package: str, folder: Path) -> dict | None:
    """npm's lock entry of `package` installed in `folder` (version, integrity, ...), or None."""
    lock = folder / "node_modules" / ".package-lock.json"
    if not lock.is_file() or not (folder / "node_modules" / package / "package.json").is_file():
        return None
    return json.loads(lock.read_text()).get("packages", {}).get(f"node_modules/{package}")


def install(package: str, version: str, integrity: str, folder: Path, timeout: int = 300) -> Path:
    """`folder`/node_modules/`package`, at `version` with `integrity`: installed with npm the first time (or
    when another version is there). Raises NpmMissing without npm, RuntimeError on a wrong version or
    integrity."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)          # released when the file closes
        return _install(package, version, integrity, folder, timeout)


def _install(package: str, version: str, integrity: str, folder: Path, timeout: int) -> Path:
    entry = installed(package, folder)
    if not entry or entry.get("version") != version:
        npm = shutil.which("npm")
        if npm is None:
            raise NpmMissing(f"no npm here to install {package} {version}: install Node.js and npm "
                             "(`apt-get install npm`, as root; .ci/run does)")
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        subprocess.run([npm, "install", "--prefix", str(folder), "--no-save", "--no-package-lock", "--no-audit",
                        "--no-fund", "--ignore-scripts", f"{package}@{version}"], check=True, timeout=timeout)
        entry = installed(package, folder)
    if not entry or entry.get("version") != version:
        raise RuntimeError(f"npm installed {entry}, not {package} {version}")
    if entry.get("integrity") != integrity:
        raise RuntimeError(f"{package} {version} has integrity {entry.get('integrity')}, not the pinned {integrity}")
    return folder / "node_modules" / package
