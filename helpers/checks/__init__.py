"""One grader per exercise: `check_<exercise>(your_function) -> bool`.

Every check follows the protocol in helpers.checks._core: it never raises, prints one line per case, names
the likely mistake when a case fails, and returns True only when every case passes. Each lesson's checks
live in their own module (lesson01.py, lesson02.py, ...) and list their public names in __all__; this
package finds every module named lessonNN and re-exports those names, so a notebook writes
`from helpers.checks import check_hand_trace`. A new lesson's module needs no registration here.
"""
import pkgutil
import re
from importlib import import_module

LESSON_MODULES = tuple(sorted(module.name for module in pkgutil.iter_modules(__path__)
                              if re.fullmatch(r"lesson\d\d", module.name)))



def _reexport() -> list[str]:
    names = []
    for module_name in LESSON_MODULES:
        module = import_module(f"{__name__}.{module_name}")
        for name in module.__all__:
            if name in names:  # two lessons exporting one name: the second would silently win
                raise ImportError(f"helpers.checks.{module_name} exports {name}, which another lesson exports too")
            globals()[name] = getattr(module, name)
            names.append(name)
    return names


__all__ = _reexport()
