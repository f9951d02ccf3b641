"""helpers' modules import each other without a cycle: helpers.progress reads the quizzes, helpers.quiz records
answers through helpers.progress_log, and helpers.quiz_widget is lent what it needs by the quiz."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HELPERS = ROOT / "helpers"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, modules: set[str]) -> set[str]:
    """The helpers modules that `path` imports anywhere in it (at the top or inside a function)."""
    name, found = module_name(path), set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    # A module imports its package's __init__ whatever it says: only edges to other modules count.
    return {m for m in found if m in modules and m != name and m != "helpers"}


def graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in HELPERS.rglob("*.py")}
    return {name: imports(path, set(paths)) for name, path in paths.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle found by a depth-first walk (each reported once, from where the walk met it)."""
    found, done = [], set()

    def walk(node, path):
        for nxt in sorted(edges.get(node, ())):
            if nxt in path:
                found.append(path[path.index(nxt):] + [nxt])
            elif nxt not in done:
                walk(nxt, path + [nxt])
        done.add(node)

    for start in sorted(edges):
        if start not in done:
            walk(start, [start])
    return found


def test_the_cycle_finder_finds_a_cycle():
    """The check below could fail: the finder sees a cycle of three and a self-contained graph has none."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_import_graph_sees_imports_inside_functions():
    edges = graph()
    assert "helpers.quiz" in edges["helpers.progress"]             # progress reads the quizzes (in a function)
    assert "helpers.progress_log" in edges["helpers.quiz"]         # answers are recorded through progress_log


def test_no_helpers_module_imports_itself_back():
    assert cycles(graph()) == []


@pytest.mark.parametrize("module, absent", [
    ("helpers.quiz", ["helpers.progress"]),
    ("helpers.progress", ["helpers.quiz", "helpers.quiz_widget"]),
    ("helpers.progress_log", ["helpers.progress", "helpers.quiz"]),
    ("helpers.quiz_widget", ["helpers.quiz"]),
])
def test_each_imports_alone_in_a_fresh_interpreter(module, absent):
    code = (f"import sys, {module}\n"
            f"print(sorted(m for m in {absent!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"importing {module} also imported {done.stdout.strip()}"
