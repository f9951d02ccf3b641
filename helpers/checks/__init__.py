"""One grader per exercise: `check_<exercise>(your_function) -> bool`.

Every check follows the protocol in helpers.checks._core: it never raises, prints one line per case, names
the likely mistake when a case fails, and returns True only when every case passes. Each lesson's checks
live in their own module (lesson01.py, lesson02.py, ...) and list their public names in __all__; this
package re-exports all of them, so a notebook writes `from helpers.checks import check_hand_trace`.
"""
from importlib import import_module

LESSON_MODULES = ("lesson01", "lesson02", "lesson03", "lesson04", "lesson05", "lesson06", "lesson07")



def _reexport() -> list[str]:
    names = []
    for module_name in LESSON_MODULES:
        module = import_module(f"{__name__}.{module_name}")
        for name in module.__all__:
            globals()[name] = getattr(module, name)
            names.append(name)
    return names


__all__ = _reexport()
