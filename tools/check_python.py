"""Refuse an unsupported Python with one line instead of a pip traceback.

Run by the Makefile with the interpreter that will build .venv. Keep SUPPORTED in step with
`requires-python` in pyproject.toml (tests/test_environment.py checks that).
"""
import sys

SUPPORTED = ((3, 11), (3, 14))  # oldest and newest minor versions the pinned packages have wheels for


def problem(version=sys.version_info):
    """Return a one-line complaint about `version`, or None when it is supported."""
    (lo_major, lo_minor), (hi_major, hi_minor) = SUPPORTED
    if (lo_major, lo_minor) <= tuple(version[:2]) <= (hi_major, hi_minor):
        return None
    have = ".".join(str(part) for part in version[:3])
    return (f"This course needs Python {lo_major}.{lo_minor} to {hi_major}.{hi_minor}; "
            f"`{sys.executable}` is Python {have}. Run `make PYTHON=python3.12` (or another supported one).")


if __name__ == "__main__":
    message = problem()
    if message:
        print(message, file=sys.stderr)
        sys.exit(1)
