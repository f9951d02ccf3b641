"""Which names a notebook code cell binds and which it reads, for the tests that skip "Going further"
sections (tests/test_edition2.py: core cells against Going further; tests/test_lesson03_sections.py: the
Going further sections against each other)."""
import ast


def bound_and_used(source: str, arguments_bound: bool = False) -> tuple[set, set]:
    """Names the cell binds (assignments, defs, classes, imports; and its functions' parameters, with
    arguments_bound) and names it reads, anywhere in the cell. A cell that is not Python binds and reads nothing."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(), set()
    bound, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, (ast.Store, ast.Del)) else used).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif arguments_bound and isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound, used
