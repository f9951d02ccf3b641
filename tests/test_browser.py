"""A real browser runs every learner notebook through JupyterLab's own UI (`make test-browser`).

For each notebooks/*.ipynb (found when the test starts), in a copy so nothing tracked changes: open it in
JupyterLab, click Run > Run All Cells, wait for the kernel to finish, save through File > Save, and assert on
the saved file that every code cell ran and no cell produced an error. Where a notebook shows the explorer
(helpers.explorer), the widget must render and work from the keyboard alone (a slider with the arrow keys and
Home, an activation button with Enter, the preset menu with Alt+ArrowDown, ArrowUp and Enter), redrawing its
picture and a summary line that states the count in words.

Headless Debian Chromium is driven by Playwright (the PyPI package, pinned in requirements-browser.txt) at
/usr/bin/chromium, or wherever $CHROMIUM points; no browser is downloaded. Screenshots and the server's log
go to screenshots/ (git-ignored). `make test` skips this module; `make test-browser` runs it.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SHOTS = ROOT / "screenshots"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SERVER_START_TIMEOUT = 120    # seconds for JupyterLab to answer
NOTEBOOK_TIMEOUT = 180        # seconds for one notebook to open, run and save
WIDGET_TIMEOUT = 30           # seconds for the explorer to redraw after a change
EXPLORER = ".ffn-explorer"    # the class helpers.explorer.FFNExplorer adds to its outermost box
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"   # the notebook on show (one tab at a time: ?reset below)

pytestmark = pytest.mark.skipif(os.environ.get("FFN_BROWSER_TEST") != "1",
                                reason="the real-browser test runs with `make test-browser`")


def chromium_path() -> str | None:
    for candidate in (os.environ.get("CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@contextmanager
def headless_chromium(target: str):
    """Debian's Chromium, headless, launched by Playwright (one definition of how Chromium runs, for the browser,
    accessibility and hub tests); where there is none, the test skips and says how to get one for `make target`."""
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium here: install Debian's (`apt-get install chromium`, as root; .ci/run does) "
                    f"or point $CHROMIUM at one, then run `make {target}` again")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()


def write_lab_settings(settings: Path) -> None:
    """JupyterLab's user settings for a test: every cell in the DOM (no virtual scrolling), a kernel started
    on open, no news pop-up."""
    for plugin, values in {
        "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none", "autoStartDefaultKernel": True},
        "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    }.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server on 127.0.0.1 serving a copy of notebooks/, with its own settings and config."""

    def __init__(self, workdir: Path):
        self.root = workdir / "notebooks"
        shutil.copytree(ROOT / "notebooks", self.root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        settings = workdir / "settings"
        write_lab_settings(settings)
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        SHOTS.mkdir(exist_ok=True)
        self.log_path = SHOTS / "jupyterlab-server.log"
        self._log = open(self.log_path, "w")
        env = dict(os.environ, JUPYTER_CONFIG_DIR=str(workdir / "config"),
                   JUPYTER_RUNTIME_DIR=str(workdir / "runtime"))
        # Same process group as pytest: a `timeout` that kills the test run kills the server too, and the
        # kernels (ipykernel) exit when their parent does.
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={self.root}",
             f"--LabApp.user_settings_dir={settings}", f"--LabApp.workspaces_dir={workdir / 'workspaces'}",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
            + (["--allow-root"] if os.geteuid() == 0 else []),
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=workdir)

    def api(self, path: str, method: str = "GET"):
        request = urllib.request.Request(f"{self.base}/api/{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def wait_until_up(self) -> None:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with code {self.process.returncode}:\n{self.log_tail()}")
            try:
                self.api("status")
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)
        raise RuntimeError(f"JupyterLab did not answer within {SERVER_START_TIMEOUT} s:\n{self.log_tail()}")

    def session(self, name: str) -> dict | None:
        return next((s for s in self.api("sessions") if s["path"] == name), None)

    def log_tail(self, lines: int = 30) -> str:
        self._log.flush()
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """Shut down gracefully (kernels first), then kill whatever is left of the server and its kernels."""
        try:
            import psutil
            leftovers = psutil.Process(self.process.pid).children(recursive=True)
        except Exception:                      # the server is already gone, or psutil cannot see it
            psutil, leftovers = None, []
        if self.process.poll() is None:
            try:
                self.api("shutdown", method="POST")
                self.process.wait(timeout=20)
            except Exception:
                self.process.kill()
                self.process.wait(timeout=10)
        for child in leftovers:
            try:
                child.kill()
            except Exception:
                pass
        self._log.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    previous = signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)   # teardown runs on `timeout` too
    SHOTS.mkdir(exist_ok=True)
    for old in SHOTS.glob("*.png"):
        old.unlink()
    server = Lab(tmp_path_factory.mktemp("lab"))
    try:
        server.wait_until_up()
        yield server
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous)


def _raise_keyboard_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium here: install Debian's (`apt-get install chromium`, as root; .ci/run does) "
                    "or point $CHROMIUM at one, then run `make test-browser` again")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=executable, headless=True,
            args=CHROMIUM_FLAGS, viewport={"width": 1280, "height": 900})
        context.set_default_timeout(60_000)
        try:
            yield context
        finally:
            context.close()


def test_there_are_learner_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebooks to run"


def prompts(page) -> list[str]:
    return page.eval_on_selector_all(f"{PANEL} .jp-CodeCell .jp-InputPrompt",
                                     "nodes => nodes.map(n => n.textContent.trim())")


def wait_for_kernel(lab: Lab, name: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        session = lab.session(name)
        if session and session["kernel"]["execution_state"] == "idle":
            return
        time.sleep(0.5)
    raise AssertionError(f"{name}: no idle kernel before the deadline")


def wait_for_run_all(lab: Lab, page, name: str, deadline: float) -> None:
    """Until no cell is queued or running ([*]) and the kernel has been idle for two polls in a row."""
    idle_polls = 0
    while time.monotonic() < deadline:
        busy = any(p.startswith("[*]") for p in prompts(page))
        session = lab.session(name)
        idle = session is not None and session["kernel"]["execution_state"] == "idle"
        idle_polls = idle_polls + 1 if idle and not busy else 0
        if idle_polls >= 2:
            return
        time.sleep(0.5)
    raise AssertionError(f"{name}: Run All did not finish within {NOTEBOOK_TIMEOUT} s; prompts {prompts(page)}")


def click_menu(page, menu: str, command: str) -> None:
    page.get_by_role("menuitem", name=menu, exact=True).click()
    page.locator(f'li[data-command="{command}"]').click()


def save(page, path: Path, deadline: float) -> None:
    before = path.stat().st_mtime_ns
    click_menu(page, "File", "docmanager:save")
    while time.monotonic() < deadline:
        dirty = page.locator(".lm-TabBar-tab.lm-mod-current.jp-mod-dirty").count()
        if path.stat().st_mtime_ns != before and not dirty:
            return
        time.sleep(0.25)
    raise AssertionError(f"{path.name}: File > Save did not write the notebook")


def zeroed_count(text: str) -> int:
    """The count in the explorer's summary line, which states it in words ("zeroes three of eight")."""
    from helpers.explorer import NUMBER_WORDS
    match = re.search(r"zeroes (\w+) of (\w+) hidden units", text)
    assert match, f"the explorer's summary line does not say how many units are zeroed: {text!r}"
    assert match.group(1) in NUMBER_WORDS and match.group(2) == "eight", f"the count is not in words: {text!r}"
    return NUMBER_WORDS.index(match.group(1))


def wait_for_redraw(explorer, summary, before: tuple[str, str], what: str, text_changes: bool = True):
    """Until the picture (and, if asked, the summary line) differ from `before`; return the new pair."""
    deadline = time.monotonic() + WIDGET_TIMEOUT
    while time.monotonic() < deadline:
        now = summary.inner_text(), explorer.locator("img").get_attribute("src")
        if now[1] != before[1] and (now[0] != before[0] or not text_changes):
            return now
        time.sleep(0.25)
    raise AssertionError(f"the explorer did not redraw after {what}: summary {summary.inner_text()!r}")


def exercise_explorer(page, stem: str) -> None:
    """The widget rendered, and works from the keyboard alone: a focused slider moves with the arrow keys and
    Home, an activation button presses with Enter, the preset menu opens with Alt+ArrowDown. Each change
    redraws the picture, and the summary line (counts in words) matches helpers.explorer for the new state;
    the picture's alt text carries the same line."""
    from helpers.explorer import PRESETS, TOKEN, describe
    explorer = page.locator(f"{PANEL} {EXPLORER}").first
    explorer.locator("img").wait_for(state="visible", timeout=WIDGET_TIMEOUT * 1000)
    explorer.scroll_into_view_if_needed()
    summary = explorer.locator(".widget-html-content").first
    state = summary.inner_text(), explorer.locator("img").get_attribute("src")
    x = [float(v) for v in PRESETS[TOKEN]]
    assert state[0] == describe(x, "ReLU"), state[0]
    assert explorer.locator("img").get_attribute("alt").endswith(state[0])
    explorer.screenshot(path=str(SHOTS / f"{stem}-explorer-before.png"))

    # The slider's handle: ipywidgets does not tie its label to it, so find it through the label's row.
    row = explorer.locator(".widget-slider").filter(has=page.locator("label", has_text="x[3]"))
    handle = row.get_by_role("slider")
    handle.focus()
    assert handle.evaluate("h => h === document.activeElement"), "the x[3] slider does not take focus"
    page.keyboard.press("ArrowLeft")                            # one step, 0.1: the picture changes, the count not
    state = wait_for_redraw(explorer, summary, state, "ArrowLeft on x[3]", text_changes=False)
    assert explorer.locator(".widget-readout").nth(3).inner_text().replace("\u2212", "-") == f"{x[3] - 0.1:+.1f}"
    assert handle.get_attribute("aria-valuenow") == f"{x[3] - 0.1:.1f}"
    page.keyboard.press("Home")                                 # to the slider's minimum, -2.0
    before = state[0]
    state = wait_for_redraw(explorer, summary, state, "Home on x[3]")
    x[3] = -2.0
    assert state[0] == describe(x, "ReLU"), f"summary {state[0]!r} after Home on x[3]"
    print(f"explorer, keyboard: {before!r} -> {state[0]!r} ({zeroed_count(before)} -> {zeroed_count(state[0])} zeroed)")

    gelu = explorer.get_by_role("button", name="GELU")
    gelu.focus()
    page.keyboard.press("Enter")
    state = wait_for_redraw(explorer, summary, state, "Enter on the GELU button")
    assert state[0] == describe(x, "GELU"), f"summary {state[0]!r} after Enter on GELU"

    # JupyterLab's command-mode shortcuts take plain arrow keys and letters from a focused <select> (ArrowUp
    # moves to the cell above); Alt+ArrowDown opens the list, whose arrow keys and Enter then work.
    menu = explorer.get_by_role("combobox", name="preset")      # labelled: its <label for> names it
    menu.focus()
    page.keyboard.press("Alt+ArrowDown")
    page.keyboard.press("ArrowUp")                              # from "(your own input)" to the last preset
    page.keyboard.press("Enter")
    state = wait_for_redraw(explorer, summary, state, "ArrowUp in the preset menu")
    last = list(PRESETS)[-1]
    assert state[0] == describe(PRESETS[last], "GELU"), f"summary {state[0]!r} after choosing {last!r}"
    assert explorer.locator("img").get_attribute("alt").endswith(state[0])
    explorer.screenshot(path=str(SHOTS / f"{stem}-explorer-after.png"))


@pytest.mark.parametrize("name", [p.name for p in NOTEBOOKS])
def test_run_all_in_jupyterlab(browser, lab, name):   # browser first: no server when it skips
    deadline = time.monotonic() + NOTEBOOK_TIMEOUT
    stem, path = Path(name).stem, lab.root / name
    shows_explorer = "helpers.explorer" in path.read_text()
    page = browser.new_page()
    console_errors: list[str] = []
    page.on("console", lambda message: message.type == "error" and console_errors.append(message.text))
    try:
        # ?reset: a fresh workspace, so JupyterLab does not reopen the notebooks of the tests before.
        page.goto(f"{lab.base}/lab/tree/{name}?reset&token={lab.token}")
        page.locator(f"{PANEL} .jp-Cell").first.wait_for()
        wait_for_kernel(lab, name, deadline)
        click_menu(page, "Run", "runmenu:run-all")
        wait_for_run_all(lab, page, name, deadline)
        page.screenshot(path=str(SHOTS / f"{stem}.png"))
        save(page, path, deadline)

        ran = nbformat.read(path, as_version=4)
        code = [(i + 1, c) for i, c in enumerate(ran.cells) if c.cell_type == "code" and c.source.strip()]
        errors = [f"cell {i}: {o.ename}: {o.evalue}" for i, c in code for o in c.outputs
                  if o.output_type == "error"]
        assert not errors, f"{name}: errors in the browser run:\n" + "\n".join(errors)
        not_run = [i for i, c in code if c.execution_count is None]
        assert not not_run, f"{name}: cells {not_run} did not run"
        error_outputs = f"{PANEL} .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']"
        assert not page.locator(error_outputs).count(), f"{name}: an error output shows in the page"
        if shows_explorer:
            exercise_explorer(page, stem)
    except BaseException:
        try:
            page.screenshot(path=str(SHOTS / f"{stem}-failure.png"))
        except Exception as error:             # the page itself may be what broke
            print(f"no failure screenshot: {error}")
        print(f"console errors: {console_errors}\nserver log:\n{lab.log_tail()}")
        raise
    finally:
        session = lab.session(name)
        if session:
            lab.api(f"sessions/{session['id']}", method="DELETE")    # stop the kernel before the next one
        page.close()


# ---- "Check your understanding" (issue 12): lesson 01's quiz answers wrong, then right ------------------------
QUIZ = ".ffn-quiz"                     # the class helpers.quiz_widget.QuizWidget adds to its outermost box
QUIZ_TIMEOUT = 30                      # seconds for the feedback to show after Check


def _plain(text: str) -> str:
    """Text as the page shows it: `code` spans lose their backticks, runs of white space are one space."""
    return " ".join(text.replace("`", "").split())


def _wait_for_text(locator, wanted: list[str], what: str) -> str:
    deadline = time.monotonic() + QUIZ_TIMEOUT
    shown = ""
    while time.monotonic() < deadline:
        shown = _plain(locator.inner_text()) if locator.count() else ""
        if all(_plain(w) in shown for w in wanted):
            return shown
        time.sleep(0.25)
    raise AssertionError(f"{what}: expected {wanted!r} in the feedback, which shows {shown!r}")


def test_quiz_in_lesson_01_gives_feedback_on_a_wrong_then_a_right_answer(browser, lab):
    """Run lesson 01 in JupyterLab, choose a wrong option of its first one-answer question and press Check:
    that option's feedback shows; choose the right one: the right answer's feedback shows. The options and
    their feedback are read from helpers.quizzes.lesson01 now, so the test follows the quiz as it changes."""
    from helpers.quiz import LETTERS, Choice, lesson_quiz
    name = next(p.name for p in NOTEBOOKS if p.name.startswith("01_"))
    assert (ROOT / "helpers" / "quizzes" / "lesson01.py").exists(), "lesson 01 has no quiz yet (helpers.quizzes)"
    cells = nbformat.read(lab.root / name, as_version=4).cells
    assert any("lesson_quiz" in c.source for c in cells if c.cell_type == "code"), f"{name} does not show its quiz"
    quiz = lesson_quiz("01")
    number, question = next((n, q) for n, q in enumerate(quiz.questions, 1) if isinstance(q, Choice) and not q.several)
    wrong = next(i for i, o in enumerate(question.options) if not o.correct)
    right = next(i for i, o in enumerate(question.options) if o.correct)
    stem = "01-quiz"
    deadline = time.monotonic() + NOTEBOOK_TIMEOUT
    page = browser.new_page()
    try:
        page.goto(f"{lab.base}/lab/tree/{name}?reset&token={lab.token}")
        page.locator(f"{PANEL} .jp-Cell").first.wait_for()
        wait_for_kernel(lab, name, deadline)
        click_menu(page, "Run", "runmenu:run-all")
        wait_for_run_all(lab, page, name, deadline)
        widget = page.locator(f"{PANEL} {QUIZ}").first
        widget.wait_for(state="visible", timeout=QUIZ_TIMEOUT * 1000)
        box = widget.locator(".ffn-quiz-question").nth(number - 1)
        box.scroll_into_view_if_needed()
        radios = box.locator("input[type=radio]")
        assert radios.count() == len(question.options), f"question {number} shows {radios.count()} options"
        feedback = box.locator("[role=status]")

        radios.nth(wrong).check()
        box.get_by_role("button", name="Check").click()
        shown = _wait_for_text(feedback, ["Not yet", f"{LETTERS[wrong]}: not quite.",
                                          question.options[wrong].feedback], "a wrong answer")
        assert "Right" not in shown.split(".")[0]
        box.screenshot(path=str(SHOTS / f"{stem}-wrong.png"))

        radios.nth(right).check()
        box.get_by_role("button", name="Check").click()
        _wait_for_text(feedback, ["Right", question.options[right].feedback], "the right answer")
        assert _plain(question.options[wrong].feedback) not in _plain(feedback.inner_text()), \
            "the wrong answer's feedback stayed after the right answer"
        box.screenshot(path=str(SHOTS / f"{stem}-right.png"))

        # The same from the keyboard alone. ipywidgets' radio buttons are not one radio group (they have no
        # shared name), so each option is a tab stop of its own: Tab / Shift+Tab reach it, Space chooses it,
        # and Tab goes on to Check, which Enter presses.
        radios.nth(right).focus()
        key = "Tab" if wrong > right else "Shift+Tab"
        for _ in range(abs(wrong - right)):
            page.keyboard.press(key)
        page.keyboard.press("Space")
        assert radios.nth(wrong).is_checked(), "Tab and Space did not choose the option"
        check = box.get_by_role("button", name="Check")
        for _ in range(len(question.options) + 1):
            if check.evaluate("b => b === document.activeElement"):
                break
            page.keyboard.press("Tab")
        assert check.evaluate("b => b === document.activeElement"), "Tab from the options does not reach Check"
        page.keyboard.press("Enter")
        _wait_for_text(feedback, ["Not yet", question.options[wrong].feedback], "a wrong answer from the keyboard")
        print(f"quiz: question {number}, {LETTERS[wrong]} (wrong) then {LETTERS[right]} (right): both feedbacks "
              "shown; the keyboard alone chose and checked an answer too")
    except BaseException:
        try:
            page.screenshot(path=str(SHOTS / f"{stem}-failure.png"))
        except Exception as error:
            print(f"no failure screenshot: {error}")
        print(f"server log:\n{lab.log_tail()}")
        raise
    finally:
        session = lab.session(name)
        if session:
            lab.api(f"sessions/{session['id']}", method="DELETE")
        page.close()
