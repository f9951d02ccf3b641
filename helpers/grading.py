"""Grading that the learner's code cannot reach: the verdicts of `make grade` and of the course's nbgrader
autograde come from a clean process, not from the learner's kernel.

A learner's notebook runs in a kernel where any cell can change anything: rebind `check_ffn_forward`, patch
helpers.checks, pop an environment variable. So the kernel's own check calls only show the learner what the
checks said. What counts is decided in three steps:

1. In the kernel, before the learner's first cell, `install(record_path)` wraps every check so that each call
   is recorded (a JSON line: status, counts, the function's source and what from helpers it uses) and the
   function checked is kept, and it notes the state of helpers.checks and of the grading switches.
2. After the learner's last cell, `dump(path, checks)` writes, for each exercise, the function its last check
   was given (the learner's own, named like the exercise, if there is one), pickled by value with
   cloudpickle, and what changed in helpers.checks or in the switches since step 1.
3. `grade_clean(dump, checks, secret)` starts a fresh Python (`python -m helpers.grading`) that imports the
   checks from disk, loads those functions and checks each, with the hidden cases drawn from `secret` (which
   the kernel never sees: a new one for every grading run unless the instructor sets one). One exercise that
   runs past its time limit, or kills the process, costs that exercise only: the process is replaced and
   goes on with the next one.

`scan(sources)` reads the learner's cells for the usual one-line forgeries (a check rebound, helpers.checks or
NumPy patched, the grading switches changed, errors silenced, the reference watch blinded): flags, for the
instructor to read, beside a verdict that does not depend on them.

What this defends against, and what not, is in README ("Grading: what it defends against").
"""
from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import io
import json
import os
import pickle
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import types
from contextlib import redirect_stdout
from importlib import import_module
from pathlib import Path

SECRET_ENV = "FFN_GRADING_SEED"      # an instructor's fixed secret (else a new one per grading run)
SWITCHES = ("NBGRADER_EXECUTION", "FFN_GRADING")
TAMPERED = "tampered with the checks"
MEMORISED = "memorised cases"
CHECK_TIMEOUT = 60.0                  # seconds one exercise's check may take in the clean process

# ----------------------------------------------------------------------------------------------------------
# In the learner's kernel: record, then dump
# ----------------------------------------------------------------------------------------------------------
_STATE: dict = {}


def _watched_modules() -> dict[str, types.ModuleType]:
    """The course's modules: the checks, the references they compare with, and this one."""
    return {name: module for name, module in list(sys.modules.items())
            if module is not None and (name == "helpers" or name.startswith("helpers.") or name == __name__)}


def fingerprint() -> dict[str, tuple[int, int]]:
    """Who is who in the course's modules (helpers.checks, the references, this one): every function, class and
    method, by identity and by code object. Data (caches, counters) is left out: it changes in honest use."""
    prints = {}

    def note(key, value):
        if callable(value) or isinstance(value, (staticmethod, classmethod, property)):
            code = getattr(getattr(value, "__func__", value), "__code__", None)
            prints[key] = (id(value), id(code))

    for name, module in _watched_modules().items():
        for attribute, value in list(vars(module).items()):
            if attribute.startswith("__") or isinstance(value, types.ModuleType):
                continue
            note(f"{name}.{attribute}", value)
            if isinstance(value, type) and value.__module__ == name:
                for inner, member in list(vars(value).items()):
                    if not (inner.startswith("__") and inner.endswith("__")) or inner in (
                            "__bool__", "__init__", "__call__", "__eq__", "__len__", "__getattr__"):
                        note(f"{name}.{attribute}.{inner}", member)
    return prints


def changed(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list[str]:
    """What of `before` was replaced or removed by `after` (helpers.checks.lesson02.check_matvec, say)."""
    return [key for key, value in before.items() if after.get(key) != value]


def _key(obj):
    """The name a helpers object has (module.qualname), or None for anything else."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__ if obj.__name__.split(".")[0] == "helpers" else None
    module = getattr(obj, "__module__", None) or ""
    if module.split(".")[0] == "helpers" and hasattr(obj, "__qualname__"):
        return f"{module}.{obj.__qualname__}"
    return None


def helpers_used(fn, seen=None) -> set[str]:
    """What from helpers `fn` (and the learner's own functions it names) uses or imports."""
    seen = set() if seen is None else seen
    used = set()
    fn = getattr(fn, "func", fn)                       # functools.partial
    if _key(fn):
        return {_key(fn)}
    code = getattr(fn, "__code__", None)
    if code is None or fn in seen:
        return used
    seen.add(fn)
    names, stack = set(), [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    namespace = getattr(fn, "__globals__", {})
    modules = []
    for name in names:
        if name.split(".")[0] == "helpers":            # an import inside the function
            used.add(name)
            if name in sys.modules:
                modules.append(sys.modules[name])
        obj = namespace.get(name)
        if _key(obj):
            used.add(_key(obj))
            if isinstance(obj, types.ModuleType):
                modules.append(obj)
        elif isinstance(obj, types.FunctionType) and obj.__module__ == "__main__":
            used |= helpers_used(obj, seen)
    for module in modules:                             # flat.ffn_forward, or from helpers.x import y
        for name in names:
            if _key(getattr(module, name, None)):
                used.add(_key(getattr(module, name)))
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            if _key(cell.cell_contents):
                used.add(_key(cell.cell_contents))
        except ValueError:
            pass
    return used


def _describe(fn, check: str) -> dict:
    from helpers.checks._verdict import course_function, is_the_exercise
    about = {"fn": getattr(fn, "__name__", ""), "own": is_the_exercise(fn, check.removeprefix("check_")),
             "course": course_function(fn)}
    # The course's function under a wrapper that has no frame of its own: deliberate, unlike a failed cell
    # that leaves the name meaning the reference imported above.
    about["wrapped"] = type(fn).__name__ if about["course"] and not isinstance(fn, types.FunctionType) else ""
    try:
        about["helpers"] = sorted(helpers_used(fn))
    except Exception:
        about["helpers"] = []
    from helpers.checks._verdict import unwrapped
    try:
        about["source"] = inspect.getsource(unwrapped(fn))[:20000]
    except Exception:                          # made by exec, or copied at run time: no cell holds it
        about["source"] = ""
    return about


def install(record_path: str) -> None:
    """Step 1, run in the kernel before the learner's first cell (see the module docstring)."""
    import helpers.checks as checks
    checked: dict[str, dict] = {}

    def recording(name, check):
        @functools.wraps(check)
        def recorded(*args, **kwargs):
            entry = {"check": name, "status": "error"}
            fn = args[0] if args else next(iter(kwargs.values()), None)
            try:
                verdict = check(*args, **kwargs)
            except KeyboardInterrupt:
                entry["status"] = "interrupted"
                raise
            except BaseException as error:
                entry["error"] = f"{type(error).__name__}: {error}"[:300]
                raise
            else:
                status = getattr(verdict, "status", None) or ("pass" if verdict else "fail")
                entry.update(status=status, passed=getattr(verdict, "passed", None),
                             total=getattr(verdict, "total", None), mistake=getattr(verdict, "mistake", ""))
                return verdict
            finally:                                   # described after the call: its imports are done
                try:
                    entry.update(_describe(fn, name))
                except Exception:
                    pass
                calls = checked.setdefault(name, [])
                calls.append(fn)
                entry["call"] = len(calls)           # the grader picks the call that counts by this number
                with open(record_path, "a") as record:
                    record.write(json.dumps(entry) + "\n")
        return recorded

    for module_name in checks.LESSON_MODULES:
        module = import_module(f"helpers.checks.{module_name}")
        for name in module.__all__:
            if name.startswith("check_"):
                wrapped = recording(name, getattr(module, name))
                setattr(module, name, wrapped)
                setattr(checks, name, wrapped)
    _STATE.update(checked=checked, fingerprint=fingerprint(),
                  switches={name: os.environ.get(name) for name in SWITCHES},
                  wrappers={name: getattr(checks, name) for name in dir(checks) if name.startswith("check_")})


def runtime_findings(namespace: dict) -> list[str]:
    """What the learner's cells changed since install(): checks rebound or replaced, switches changed."""
    if not _STATE:
        return ["the grader's recorder was removed"]
    found = [f"{name} was rebound in the notebook" for name, wrapper in _STATE["wrappers"].items()
             if name in namespace and namespace[name] is not wrapper]
    found += [f"{name} was replaced" for name in changed(_STATE["fingerprint"], fingerprint())]
    for name, before in _STATE["switches"].items():
        now = os.environ.get(name)
        if now != before:
            found.append(f"the environment variable {name} was " + ("removed" if now is None else "changed"))
    try:
        shell = namespace.get("get_ipython", lambda: None)()
        if shell is not None and getattr(shell, "custom_exceptions", ()):
            found.append("errors were silenced (set_custom_exc)")
    except Exception:
        pass
    return found


def dump(path: str, checks: list[str]) -> None:
    """Step 2, run in the kernel after the learner's last cell: every function each check was given (call
    number -> the function pickled by value, or why it could not be), and what changed since step 1."""
    import __main__
    import cloudpickle
    import linecache
    # The notebook's cells as the kernel keeps them (IPython files each cell's source in linecache under a name
    # that is no file on disk), so that the clean process can read the functions' source: some checks do
    # (lesson 02's lists-only rule, lesson 06's whole-W2 rule), and a function without one would slip past them.
    sources = {name: (entry[0], None, list(entry[2]), name) for name, entry in list(linecache.cache.items())
               if len(entry) == 4 and not os.path.exists(name)}
    data = {"findings": runtime_findings(vars(__main__)), "calls": {}, "sources": sources}
    for check in checks:
        pickled: dict[int, tuple] = {}
        calls = {}
        for number, fn in enumerate(_STATE.get("checked", {}).get(check, []), start=1):
            if id(fn) not in pickled:
                try:
                    pickled[id(fn)] = (getattr(fn, "__name__", ""), cloudpickle.dumps(fn), "")
                except Exception as error:
                    pickled[id(fn)] = (getattr(fn, "__name__", ""), None, f"{type(error).__name__}: {error}"[:300])
            calls[number] = pickled[id(fn)]
        data["calls"][check] = calls
    with open(path, "wb") as f:
        pickle.dump(data, f)


def read_findings(dump_path: str | Path) -> list[str] | None:
    """What dump() found changed in the kernel, or None when there is no dump (the notebook never got there)."""
    try:
        with open(dump_path, "rb") as f:
            return list(pickle.load(f)["findings"])
    except Exception:
        return None


def setup_source(record_path: str) -> str:
    return (f"from helpers.grading import install as _ffn_install\n_ffn_install({record_path!r})\n"
            "del _ffn_install")


def dump_source(dump_path: str, checks: list[str]) -> str:
    return (f"from helpers.grading import dump as _ffn_dump\n_ffn_dump({dump_path!r}, {list(checks)!r})\n"
            "del _ffn_dump")


# ----------------------------------------------------------------------------------------------------------
# The learner's cells, read: the usual forgeries
# ----------------------------------------------------------------------------------------------------------
_GUARDED_ROOTS = {"helpers", "np", "numpy", "builtins"}     # and whatever name the cells bind to these
_GUARDED_MODULES = {"helpers", "numpy", "builtins", "sys", "inspect", "cloudpickle", "pickle"}
_SILENCERS = {"set_custom_exc": "errors silenced (set_custom_exc)", "setprofile": "the checks' watch blinded",
              "settrace": "the checks' watch blinded", "reload": "a module reloaded"}
_ENV_METHODS = {"pop", "clear", "update", "setdefault", "popitem", "__delitem__", "__setitem__"}


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Subscript):
        return _dotted(node.value) + "[...]"
    return ".".join(reversed(parts))


def _python(source: str) -> str:
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(source)
    except Exception:
        return source


def _switch_key(node: ast.AST | None) -> bool:
    """An environment key that could be a grading switch: a string naming one, or anything not a constant."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.upper().startswith(("NBGRADER", "FFN_"))
    return True


def _guarded_names(trees: list[ast.AST]) -> set[str]:
    """The names the cells bind to the course's checks, NumPy or the interpreter (`import helpers.checks._verdict
    as v` makes `v` one): an assignment to an attribute of one of them is a change to the grader's world."""
    names = set(_GUARDED_ROOTS)
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {alias.asname or alias.name.split(".")[0] for alias in node.names
                          if alias.name.split(".")[0] in _GUARDED_MODULES}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in _GUARDED_MODULES:
                names |= {alias.asname or alias.name for alias in node.names}
    return names


def _check_names() -> set[str]:
    import helpers.checks
    return {name for name in helpers.checks.__all__ if name.startswith("check_")}


def _env_keys(call: ast.Call) -> list[ast.AST | None]:
    """The keys an os.environ.update(...) call sets: keyword names and a dict literal's keys (None: unknown)."""
    keys: list[ast.AST | None] = [ast.Constant(k.arg) if k.arg else None for k in call.keywords]
    for arg in call.args:
        keys += list(arg.keys) if isinstance(arg, ast.Dict) else [None]
    return keys


def _magic_key(line: str) -> ast.AST | None:
    """The variable `%env NAME=value` or `%set_env NAME value` sets (None for a bare `%env`, which only lists)."""
    words = line.replace("=", " ").split()
    return ast.Constant(words[0]) if words else None


def scan(sources: list[str]) -> list[str]:
    """The one-line forgeries in the learner's cells `sources`, in words (empty for honest cells)."""
    found = []
    checks = _check_names()
    trees = []
    for source in sources:
        try:
            trees.append(ast.parse(_python(source)))
        except (SyntaxError, ValueError):
            continue
    guarded = _guarded_names(trees)
    for tree in trees:
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, (ast.Assign, ast.Delete)):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in checks:
                found.append(f"redefines {node.name}")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                found += [f"rebinds {alias.asname}" for alias in node.names
                          if alias.asname in checks and alias.asname != alias.name]
            for target in targets:
                for leaf in ast.walk(target) if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                    name = _dotted(leaf)
                    if isinstance(leaf, ast.Name) and leaf.id in checks:
                        found.append(f"rebinds {leaf.id}")
                    elif isinstance(leaf, (ast.Attribute, ast.Subscript)):
                        root = name.split(".")[0].split("[")[0]
                        if name.startswith("os.environ") and (not isinstance(leaf, ast.Subscript)
                                                              or _switch_key(leaf.slice)):
                            found.append("changes os.environ")
                        elif root in guarded or name.rsplit(".", 1)[-1] in checks:
                            found.append(f"changes {name}")
            if isinstance(node, ast.Call):
                called = _dotted(node.func)
                last = called.rsplit(".", 1)[-1]
                if called.startswith("os.environ.") and last in _ENV_METHODS \
                        and (last in ("clear", "popitem")
                             or (last == "update" and any(_switch_key(k) for k in _env_keys(node)))
                             or (last != "update" and _switch_key(node.args[0] if node.args else None))):
                    found.append("changes os.environ")
                elif called in ("os.putenv", "os.unsetenv") and _switch_key(node.args[0] if node.args else None):
                    found.append("changes os.environ")
                elif last in _SILENCERS and (last != "reload" or "helpers" in ast.unparse(node)):
                    found.append(_SILENCERS[last])
                elif called in ("setattr", "delattr") and node.args:
                    name = _dotted(node.args[0])
                    if name.split(".")[0] in guarded or "checks" in name:
                        found.append(f"changes {name}")
                elif last == "run_line_magic" and len(node.args) > 1 and isinstance(node.args[0], ast.Constant) \
                        and node.args[0].value in ("env", "set_env") and isinstance(node.args[1], ast.Constant) \
                        and _magic_key(str(node.args[1].value)) is not None \
                        and ("=" in str(node.args[1].value) or node.args[0].value == "set_env") \
                        and _switch_key(_magic_key(str(node.args[1].value))):
                    found.append("changes os.environ (%env)")
    return list(dict.fromkeys(found))


def tampering(learner_cells: list[str], findings: list[str] | None, clean: dict[str, dict]) -> list[str]:
    """Everything found, once: what the cells say (scan), what changed in the kernel (dump's findings) and in the
    clean process; a rebinding the cells show is not said again as the kernel saw it."""
    said = scan(learner_cells)
    shown = {item.split()[-1] for item in said if item.startswith(("rebinds ", "redefines "))}
    seen = [item for item in (findings or []) if not (item.endswith(" was rebound in the notebook")
                                                       and item.split()[0] in shown)]
    return list(dict.fromkeys(said + seen + [f for result in clean.values() for f in result.get("findings", [])]))


# ----------------------------------------------------------------------------------------------------------
# The clean process
# ----------------------------------------------------------------------------------------------------------
def no_fresh_case_passed(result: dict) -> bool:
    """A clean check that failed every one of its fresh hidden cases (what passed may be a table of the public
    ones: all of them, or all but a few, to look like a slip)."""
    return result.get("status") == "fail" and bool(result.get("hidden")) and not result.get("hidden_passed")


def memorised(result: dict) -> bool:
    """No fresh case passed, and at least half the public ones did: what a table of the public cases does."""
    public = (result.get("total") or 0) - (result.get("hidden") or 0)
    return no_fresh_case_passed(result) and public > 0 and (result.get("passed") or 0) >= public / 2


def new_secret() -> str:
    """A secret for one grading run: the instructor's FFN_GRADING_SEED, else a fresh random one."""
    return os.environ.get(SECRET_ENV) or secrets.token_hex(16)


def secret_id(secret: str) -> str:
    """A short name for a secret that does not reveal it (to say which run a report is)."""
    return hashlib.sha256(secret.encode()).hexdigest()[:8]


def clean_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key not in SWITCHES + (SECRET_ENV, "NBGRADER_VALIDATING", "PYTEST_CURRENT_TEST")}
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(name, "1")
    return env


def grade_clean(dump_path: str | Path, plan: dict[str, int], secret: str,
                timeout: float = CHECK_TIMEOUT, python: str = sys.executable) -> dict[str, dict]:
    """Check the function of the call `plan[check]` (a call number from the records) for each check, in a fresh
    process; check name -> result (see _child). Never raises: a check past `timeout` seconds, or one that
    kills the process, is a fail that says so."""
    results: dict[str, dict] = {}
    checks = list(plan)
    todo = list(checks)
    with tempfile.TemporaryDirectory(prefix="ffn-clean-") as scratch:
        plan_path = Path(scratch) / "plan.json"
        plan_path.write_text(json.dumps(plan))
        while todo:
            out = Path(scratch) / f"results-{len(results)}.jsonl"
            process = subprocess.Popen([python, "-m", "helpers.grading", str(dump_path), str(plan_path), str(out),
                                        *todo],
                                       stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                       cwd=scratch, env=clean_env(), start_new_session=True)
            try:
                process.stdin.write((secret + "\n").encode())
                process.stdin.close()
            except OSError:
                pass
            current, started, offset = None, time.monotonic(), 0
            while True:
                lines, offset = read_new(out, offset)
                for line in lines:
                    if "start" in line:
                        current, started = line["start"], time.monotonic()
                    elif line.get("check") in todo:
                        results[line["check"]] = line
                        todo.remove(line["check"])
                        current = None
                if not todo:
                    break
                if process.poll() is not None:
                    lines, offset = read_new(out, offset)
                    if any(line.get("check") in todo or "start" in line for line in lines):
                        continue                      # read what it wrote before it ended
                    stderr = process.stderr.read().decode(errors="replace").strip().splitlines()
                    victim = current or todo[0]
                    results[victim] = _broken(victim, f"the grading process ended while checking it (exit code "
                                              f"{process.returncode}" + (f": {stderr[-1][:160]}" if stderr else "")
                                              + ")")
                    todo.remove(victim)
                    break
                if current is not None and time.monotonic() - started > timeout:
                    _kill(process)
                    results[current] = _broken(current, f"did not finish within {timeout:g} s: an endless loop?",
                                               timed_out=True)
                    todo.remove(current)
                    break
                time.sleep(0.02)
            _kill(process)
    return {check: results[check] for check in checks}


def _broken(check: str, why: str, timed_out: bool = False) -> dict:
    return {"check": check, "status": "fail", "passed": 0, "total": 0, "mistake": why, "detail": "",
            "report": f"{check.removeprefix('check_')}: {why}", "timed_out": timed_out, "findings": []}


def _kill(process: subprocess.Popen) -> None:
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            process.kill()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    if process.stderr:
        process.stderr.close()


def read_new(path: Path, offset: int) -> tuple[list[dict], int]:
    """The JSON lines written to `path` since `offset`, and the new offset (a line still being written waits)."""
    if not path.exists():
        return [], offset
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read()
    end = data.rfind(b"\n") + 1
    lines = []
    for raw in data[:end].splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            pass
    return lines, offset + end


class _Tampered(Exception):
    """Loading the learner's function changed the course's code."""


def _child(dump_path: str, plan_path: str, out_path: str, checks: list[str]) -> None:
    """The clean process: pristine checks from disk, the secret from stdin, one JSON line per exercise."""
    secret = sys.stdin.readline().strip()
    import cloudpickle  # noqa: F401 (pickle needs it to rebuild the functions)

    import helpers.checks as course_checks
    from helpers.checks import _verdict
    with open(dump_path, "rb") as f:
        data = pickle.load(f)
    plan = json.loads(Path(plan_path).read_text())
    import linecache
    linecache.cache.update(data.get("sources", {}))      # the notebook's cells: inspect.getsource reads them
    pristine = fingerprint()

    def emit(line: dict) -> None:
        with open(out_path, "a") as out:
            out.write(json.dumps(line) + "\n")

    for check in checks:
        emit({"start": check})
        name, blob, error = data["calls"].get(check, {}).get(plan.get(check), ("", None, "no call"))
        result = {"check": check, "name": name, "findings": []}
        if error == "no call":
            result.update(status="not run", passed=None, total=None, mistake="", detail="", report="")
        elif blob is None:
            why = f"the function could not be copied out of the notebook ({error})"
            result.update(status="fail", passed=0, total=0, mistake=why, detail="", report=why)
        else:
            printed = io.StringIO()
            try:
                fn = pickle.loads(blob)
                loaded = changed(pristine, fingerprint())
                if loaded:                       # the pickle ran code that changed the course as it was loaded
                    raise _Tampered(f"{', '.join(loaded)} changed as the function was loaded")
                _verdict.use_secret(secret)
                with redirect_stdout(printed):
                    verdict = getattr(course_checks, check)(fn)
                result.update(status=verdict.status, passed=verdict.passed, total=verdict.total,
                              mistake=verdict.mistake, detail=verdict.detail, hidden=verdict.hidden,
                              hidden_passed=verdict.hidden_passed, used=list(verdict.used))
            except _Tampered as error:
                result.update(status="fail", passed=0, total=0, detail="", mistake=f"{TAMPERED}: {error}")
            except BaseException as error:        # the learner's code ran while unpickling, or the check broke
                result.update(status="fail", passed=0, total=0, detail="",
                              mistake=f"could not be checked: {type(error).__name__}: {str(error)[:200]}")
            finally:
                _verdict.use_secret(None)
            result["report"] = printed.getvalue()[:20000]
            result["findings"] = [f"{name} was replaced while the check ran"
                                  for name in changed(pristine, fingerprint())]
            if result["findings"]:             # what the function changed is undone for the next exercise
                for name in list(sys.modules):
                    if name.startswith("helpers"):
                        del sys.modules[name]
                import helpers.checks as course_checks  # noqa: F811
                from helpers.checks import _verdict     # noqa: F811
                pristine = fingerprint()
        emit(result)


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
