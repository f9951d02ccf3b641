"""Refuse an unsupported Python with one line instead of a pip traceback.

Run by the Makefile with the interpreter that will build .venv. Keep SUPPORTED in step with
`requires-python` in pyproject.toml (tests/test_environment.py checks that). Written so that even a very old
Python can run it and print its one line: no f-strings, no annotations.
"""
from __future__ import print_function

import sys

SUPPORTED = ((3, 11), (3, 14))  # oldest and newest minor versions the pinned packages have wheels for


def problem(version=sys.version_info):
    """Return a one-line complaint about `version`, or None when it is supported."""
    (lo_major, lo_minor), (hi_major, hi_minor) = SUPPORTED
    if (lo_major, lo_minor) <= tuple(version[:2]) <= (hi_major, hi_minor):
        return None
    have = ".".join(str(part) for part in version[:3])
    return ("This course needs Python {0}.{1} to {2}.{3}; `{4}` is Python {5}. "
            "Run `make PYTHON=python3.12` (or another supported one).").format(
                lo_major, lo_minor, hi_major, hi_minor, sys.executable, have)


if __name__ == "__main__":
    message = problem()
    if message:
        print(message, file=sys.stderr)
        sys.exit(1)
