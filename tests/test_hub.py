"""A real JupyterHub with nbgrader, end to end, in headless Chromium (`make test-hub`, in .venv-hub).

tools/hub.py lays out a hub in a temporary folder and starts it on 127.0.0.1 (a free port): JupyterHub 5.5
behind configurable-http-proxy (npm, build/hub-proxy/), the demo's shared-password accounts, every server in
the course's environment (.venv-hub) with its kernel, and the nbgrader course folder that
tools/nbgrader_course.py writes, in the instructor's home. Then, step by step:

 0. everyone signs in through the hub's login page at once (a browser context each): the instructor and
    three students, alice, bob and carol; their servers start side by side;
 1. the instructor releases lesson 02 (02_pure_python) in the formgrader (browser: its own page in the
    instructor's server, Generate then Release), which runs on the course folder that the instructor's
    nbgrader_config.py names and loads the settings of;
 2. alice and bob (who get no formgrader: 404) each open Nbgrader > Assignment List and press Fetch, open
    the lesson, type the answer into each exercise cell (alice every solution; bob the same, but for
    `ffn_forward` the one-stride bug of tests/test_nbgrader_roundtrip.py), Run > Run All Cells, File > Save,
    press Validate (alice's passes; bob's names one failed cell, the exercise's check, and "one stride") and
    Submit (all in the browser); the exchange's inbound tells them apart;
 3. the instructor, in the formgrader (browser), collects, autogrades each submission (Manage Submissions),
    generates and releases the feedback; alice scores full marks, bob loses exactly the exercise's points
    (read from the gradebook);
 4. each student presses Fetch Feedback in the Assignment List (browser), opens the feedback page their
    server serves (browser): each gets one feedback page, their own (bob's names "one stride" in the
    exercise's test cell, scored 0; alice's passes it, full points);
 5. `make grade` (with .venv-hub's Python: `make -o .venv/.installed grade PY=...`, so no .venv is built)
    runs tools/grade.py on the collected submissions (submitted/<student>/02_pure_python/): grades.csv says
    pass for alice's ffn_forward and fail, one stride, for bob's, and alice passed every core exercise;
 6. a third student, carol, runs lesson 03 (solutions/03_numpy_position_wise.ipynb, copied into her home)
    top to bottom in JupyterLab (browser); the resident memory (RSS) of her server and its kernel is
    measured, printed and written to screenshots/hub-memory.txt, and must sit well under the memory limit
    the Kubernetes values in hub/k8s/ give a student;
 7. every listening socket of the run (hub, proxy, servers, kernels) is on 127.0.0.1;
 8. stopping the hub stops every server, kernel and the proxy (nothing of the run is left to kill) and frees
    the port; the temporary folder is removed. The fixtures stop and clean up whatever failed.

No step uses nbgrader's command line. Screenshots, the hub's log and the measured memory go to screenshots/
(git-ignored). `make test` does not collect this file; under `make test-hub` (FFN_HUB_TEST=1) it runs, and
skips only where there is no Chromium, or no npm to install the proxy.
"""
from __future__ import annotations

import csv
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests"))
SHOTS = ROOT / "screenshots"
ASSIGNMENT = "02_pure_python"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
EXERCISE = "02-ffn_forward"                 # grade ids from tools/notebooks.py
CHECK = "02-check_ffn_forward"
STUDENTS = {"alice": "right", "bob": "one stride", "carol": "lesson 03 only"}
MEMORY_LESSON = "03_numpy_position_wise.ipynb"
SPAWN_TIMEOUT = 180_000                     # ms: a server starting on a busy 2-core machine
RUN_TIMEOUT = 240                           # s: Run All of one lesson
# bob's answer: W2 read with W1's stride, D (the classic mistake tests/test_nbgrader_roundtrip.py uses).
ONE_STRIDE = textwrap.dedent('''\
    def ffn_forward(x, W1, b1, W2, b2):
        D, H = len(x), len(b1)
        h = [max(0.0, sum(W1[k * D + j] * x[j] for j in range(D)) + b1[k]) for k in range(H)]
        return [sum(W2[i * D + k] * h[k] for k in range(H)) + b2[i] for i in range(D)]''')

if os.environ.get("FFN_HUB_TEST") != "1":
    pytest.skip("the JupyterHub test runs under `make test-hub`", allow_module_level=True)
import hub as hubtool  # noqa: E402  (tools/hub.py: needs nbgrader, which .venv-hub has)
from test_browser import (click_menu, headless_chromium, save, wait_for_kernel, wait_for_run_all,  # noqa: E402
                          write_lab_settings)  # (the JupyterLab steps of `make test-browser`, on a hub user's server)


def _raise_keyboard_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def solution_answers() -> dict[str, str]:
    """Every exercise cell's answer in solutions/ (grade id -> source, the solution markers dropped)."""
    nb = nbformat.read(ROOT / "solutions" / NOTEBOOK, as_version=4)
    return {c.metadata["nbgrader"]["grade_id"]: re.sub(r"\n *### (BEGIN|END) SOLUTION", "", c.source)
            for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")}


# alice answers every exercise as the solutions do; bob too, but for ffn_forward the one-stride bug.
ANSWERS = {"alice": solution_answers(), "bob": {**solution_answers(), EXERCISE: ONE_STRIDE}}


@pytest.fixture(scope="module")
def hub():
    previous = signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)   # teardown runs on `timeout` too
    SHOTS.mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="ffn-hub-"))
    proxy = Path(os.environ.get("FFN_HUB_PROXY", ROOT / "build" / "hub-proxy" / "node_modules" / ".bin"
                                / "configurable-http-proxy"))
    if not proxy.exists():
        if shutil.which("npm") is None:
            pytest.skip("no npm here to install configurable-http-proxy, the hub's proxy: install Node.js 20+ and "
                        "npm (`apt-get install npm`, as root; .ci/run does), then run `make test-hub` again")
        pytest.fail(f"no configurable-http-proxy at {proxy}: `make test-hub` installs it with npm")
    server = hubtool.Hub(folder, proxy)              # the demo's students, as `make hub` has them
    assert server.student_names == list(STUDENTS)
    try:
        server.prepare()
        for name in [server.instructor, *STUDENTS]:
            write_lab_settings(server.home(name) / ".jupyter" / "lab" / "user-settings")
        server.start()
        server.wait_until_up()
        yield server
    finally:
        server.stop()
        if server.log_path.exists():
            shutil.copyfile(server.log_path, SHOTS / "hub-jupyterhub.log")
        shutil.rmtree(folder, ignore_errors=True)
        signal.signal(signal.SIGTERM, previous)


@pytest.fixture(scope="module")
def browser():
    with headless_chromium("test-hub") as chromium:
        yield chromium


@pytest.fixture(scope="module")
def people(browser, hub):
    """Everyone signs in at once (their servers start side by side): the instructor and the three students."""
    passwords = {hub.instructor: hub.settings["instructor_password"]}
    sessions = {}
    try:
        for user in [hub.instructor, *STUDENTS]:
            sessions[user] = Session(browser, hub, user, passwords.get(user, hub.settings["student_password"]))
        for session in sessions.values():
            session.wait_until_in()
        yield sessions
    finally:
        for session in sessions.values():
            session.close()


class Session:
    """One person signed in to the hub, in a browser context of their own (their own cookies)."""

    def __init__(self, browser, hub, user: str, password: str):
        """Open the hub's login page and sign in; wait_until_in() waits for the server and JupyterLab."""
        self.hub, self.user = hub, user
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.context.set_default_timeout(60_000)
        self.page = self.context.new_page()
        self.base = f"{hub.base}/user/{user}"
        self.started = time.monotonic()
        page = self.page
        page.goto(f"{hub.base}/hub/login")
        page.fill("#username_input", user)
        page.fill("#password_input", password)
        page.click("#login_submit", no_wait_after=True)

    def wait_until_in(self) -> None:
        self.page.wait_for_url(re.compile(rf"/user/{self.user}/lab"), timeout=SPAWN_TIMEOUT)
        self.page.locator(".jp-LabShell").wait_for(timeout=SPAWN_TIMEOUT)
        print(f"{self.user} signed in, server up, JupyterLab shown: {time.monotonic() - self.started:.1f} s")

    def shot(self, name: str) -> None:
        self.page.screenshot(path=str(SHOTS / f"hub-{self.user}-{name}.png"))

    def api(self, path: str):
        response = self.page.request.get(f"{self.base}/api/{path}")
        assert response.ok, f"{self.user}: GET /api/{path}: {response.status}"
        return response.json()

    def open_assignment_list(self):
        page = self.page
        page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
        page.get_by_role("menuitem", name="Assignment List", exact=True).click()
        page.locator("#released_assignments_list").wait_for()
        return page

    def row(self, listing: str, text: str):
        return self.page.locator(f"#{listing} .list_item").filter(has_text=text).first

    def open_notebook(self, path: str) -> None:
        self.page.goto(f"{self.base}/lab/tree/{path}?reset")
        self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first.wait_for()
        wait_for_kernel(self, path, time.monotonic() + RUN_TIMEOUT)

    def session(self, path: str) -> dict | None:
        """The server's session of the notebook at `path` (its kernel's state), as `Lab.session` has it."""
        return next((s for s in self.api("sessions") if s["path"] == path), None)

    def run_all_and_save(self, path: str, on_disk: Path) -> None:
        """Run > Run All Cells, wait until every cell ran, File > Save (as `make test-browser` does)."""
        deadline = time.monotonic() + RUN_TIMEOUT
        click_menu(self.page, "Run", "runmenu:run-all")
        wait_for_run_all(self, self.page, path, deadline)
        save(self.page, on_disk, deadline)

    def close(self) -> None:
        self.context.close()


class Formgrader:
    """nbgrader's formgrader in the instructor's server, a page of its own: press an action's button in a row
    and wait for the dialog that reports how it went."""

    def __init__(self, session: Session):
        self.page = session.context.new_page()
        self.base = f"{session.base}/formgrader"

    def act(self, path: str, key: str, row: str, action: str, timeout: float = RUN_TIMEOUT) -> str:
        """On formgrader/`path`, in the table row whose `key` cell says `row`, press the `action` column's button;
        return the success dialog's text (an error dialog fails the test, showing its log)."""
        page = self.page
        page.goto(f"{self.base}/{path}")
        line = page.locator("tr").filter(has=page.locator(f"td.{key}", has_text=row))
        line.locator(f"td.{action} a").click()
        dialog = page.locator("#success-modal, #error-modal")
        dialog.wait_for(state="visible", timeout=timeout * 1000)
        text = dialog.inner_text()
        page.screenshot(path=str(SHOTS / f"hub-formgrader-{action}-{row}.png"))
        assert dialog.get_attribute("id") == "success-modal", f"formgrader, {action} of {row}:\n{text}"
        dialog.locator(".modal-footer button").click()
        dialog.wait_for(state="detached")
        return text


def cell_index(nb, grade_id: str) -> int:
    return next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def cell_text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []))


TIMINGS: dict[str, float] = {}


def test_a_lesson_goes_round_the_class(browser, hub, people):   # browser first: no hub when it skips
    start = time.monotonic()
    # ---- 1. the instructor (signed in, like everyone, by the fixture) releases lesson 02 in the formgrader ----
    people[hub.instructor].shot("lab")
    formgrader = Formgrader(people[hub.instructor])
    assert "Successfully created the student version" in formgrader.act("manage_assignments", "name", ASSIGNMENT, "assign")
    assert "Successfully released" in formgrader.act("manage_assignments", "name", ASSIGNMENT, "release")
    assert (hub.exchange / "ffn-course" / "outbound" / ASSIGNMENT / NOTEBOOK).exists()
    TIMINGS["instructor signed in, lesson released"] = time.monotonic() - start

    # ---- 2. two students fetch it, answer, run, validate and submit ----
    students = {name: people[name] for name in ("alice", "bob")}
    for student in students.values():        # the formgrader is the instructor's alone
        assert student.page.request.get(f"{student.base}/formgrader").status == 404
    for name, student in students.items():
        page = student.open_assignment_list()
        student.row("released_assignments_list", ASSIGNMENT).get_by_role("button", name="Fetch").click()
        student.row("fetched_assignments_list", ASSIGNMENT).wait_for()
        fetched = hub.home(name) / ASSIGNMENT / NOTEBOOK
        assert fetched.exists(), f"{name}: Fetch did not put {NOTEBOOK} in their home"
        student.shot("fetched")

        student.open_notebook(f"{ASSIGNMENT}/{NOTEBOOK}")
        release = nbformat.read(fetched, as_version=4)
        cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell")
        for grade_id, answer in ANSWERS[name].items():
            cells.nth(cell_index(release, grade_id)).locator(".cm-content").click()
            page.keyboard.press("Control+a")
            page.keyboard.insert_text(answer)           # typed as text: no auto-indent on the way
        index = cell_index(release, EXERCISE)
        student.run_all_and_save(f"{ASSIGNMENT}/{NOTEBOOK}", fetched)
        student.shot("answered")
        saved = nbformat.read(fetched, as_version=4)
        assert saved.cells[index].source.strip() == ANSWERS[name][EXERCISE].strip(), f"{name}: the answer did not land"
        report = cell_text(saved.cells[cell_index(saved, CHECK)])
        if name == "alice":
            assert "one stride" not in report and "fail" not in report.lower(), report
        else:
            assert "one stride, D, used for both matrices" in report, report

        page = student.open_assignment_list()
        fetched = page.locator("#fetched_assignments_list")
        fetched.get_by_text(ASSIGNMENT, exact=True).first.click()      # unfolds the lesson's notebooks
        fetched.get_by_role("button", name="Validate").first.click()
        dialog = page.locator(".jp-Dialog")
        dialog.wait_for(timeout=RUN_TIMEOUT * 1000)
        verdict = dialog.inner_text()
        student.shot("validated")
        if name == "alice":
            assert "Success" in verdict and "passes all" in verdict, verdict
        else:                                           # one failed cell: the exercise's check, naming the bug
            assert verdict.count("The following cell failed") == 1 and "check_ffn_forward(ffn_forward)" in verdict
            assert "one stride, D, used for both matrices" in verdict, verdict
        dialog.get_by_role("button").last.click()
        dialog.wait_for(state="detached")
        fetched_row = student.row("fetched_assignments_list", ASSIGNMENT)
        fetched_row.get_by_role("button", name="Submit").click()
        student.row("submitted_assignments_list", ASSIGNMENT).wait_for()
        student.shot("submitted")
    inbound = sorted(p.name.split("+")[0] for p in (hub.exchange / "ffn-course" / "inbound").iterdir())
    assert inbound == ["alice", "bob"], f"the exchange's inbound holds {inbound}: students not told apart"
    TIMINGS["two students fetched, answered, validated, submitted"] = time.monotonic() - start

    # ---- 3. the instructor collects, autogrades and releases feedback, in the formgrader ----
    assert "Successfully collected" in formgrader.act("manage_assignments", "name", ASSIGNMENT, "collect")
    for name in students:
        assert "Successfully autograded" in formgrader.act(f"manage_submissions/{ASSIGNMENT}", "student-id", name,
                                                           "autograde")
    assert "Successfully generated feedback" in formgrader.act("manage_assignments", "name", ASSIGNMENT, "generate-feedback")
    assert "Successfully released feedback" in formgrader.act("manage_assignments", "name", ASSIGNMENT, "release-feedback")
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{hub.course / 'gradebook.db'}") as gradebook:
        scores = {n: (gradebook.find_submission(ASSIGNMENT, n).score, gradebook.find_submission(ASSIGNMENT, n).max_score)
                  for n in students}
        points = gradebook.find_grade_cell(CHECK, ASSIGNMENT, ASSIGNMENT).max_score
    assert scores["alice"][0] == scores["alice"][1] > 0, scores
    assert scores["bob"][0] == scores["bob"][1] - points, scores
    TIMINGS["collected, autograded, feedback released"] = time.monotonic() - start

    # ---- 4. each student fetches and reads their own feedback ----
    for name, student in students.items():
        page = student.open_assignment_list()
        submitted = student.row("submitted_assignments_list", ASSIGNMENT)
        submitted.get_by_role("button", name="Fetch Feedback").click()
        submitted.get_by_text("(view feedback)").wait_for()
        student.shot("feedback-fetched")
        feedback = sorted((hub.home(name) / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html"))
        assert len(feedback) == 1, f"{name}: feedback files {feedback}"
        relative = feedback[0].relative_to(hub.home(name)).as_posix()
        page.goto(f"{student.base}/files/{relative}")
        shown = page.locator("body").inner_text()
        student.shot("feedback")
        assert f"{ASSIGNMENT}" in shown and "Score" in shown
        test_cell = feedback_cell(feedback[0].read_text(), CHECK)
        got, points = re.search(r"Score: ([\d.]+) / ([\d.]+)", test_cell).groups()
        if name == "alice":
            assert "one stride" not in test_cell and got == points, test_cell
        else:                               # the check's report names the mistake; the cell scores nothing
            assert "one stride, D, used for both matrices" in test_cell, test_cell
            assert float(got) == 0 < float(points), test_cell
    assert not (hub.home("carol") / ASSIGNMENT).exists()
    TIMINGS["feedback fetched and read"] = time.monotonic() - start

    # ---- 5. make grade on the collected submissions ----
    grades = hub.folder / "grades"
    done = subprocess.run(
        ["make", "-o", ".venv/.installed", "grade", f"PY={sys.executable}",
         f"SUBMISSIONS={hub.course / 'submitted'}", f"GRADES={grades}", "LESSONS=02"],
        cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:]
    with open(grades / "grades.csv", newline="") as f:
        rows = {row["learner"]: row for row in csv.DictReader(f)}
    assert set(rows) == {"alice", "bob"}, rows.keys()
    # an exercise's verdict column is named after it, and its mistake column after that (tools/grade_report.py)
    column = next(c for c in rows["alice"] if "ffn_forward" in c and f"{c} mistake" in rows["alice"])
    assert rows["alice"][column] == "pass" and rows["bob"][column] == "fail", rows
    assert rows["bob"][f"{column} mistake"] == "one stride, D, used for both matrices", rows["bob"]
    assert rows["alice"]["passed"] == rows["alice"]["exercises"], rows["alice"]      # every core exercise
    assert int(rows["bob"]["passed"]) == int(rows["alice"]["passed"]) - 1, rows["bob"]
    TIMINGS["make grade"] = time.monotonic() - start
    print("\n".join(f"{t:6.1f} s  {what}" for what, t in TIMINGS.items()))


def feedback_cell(page_html: str, grade_id: str) -> str:
    """The text of one graded code cell of nbgrader's feedback page, its outputs included: the cell around the
    anchor <a name="GRADE_ID"> that nbgrader's feedback template puts in the cell's heading."""
    from bs4 import BeautifulSoup
    anchor = BeautifulSoup(page_html, "html.parser").find("a", attrs={"name": grade_id})
    assert anchor is not None, f"the feedback has no cell {grade_id}"
    return anchor.find_parent("div", class_="code_cell").get_text()


def values_memory() -> dict[str, int]:
    import yaml
    from test_hub_files import memory_bytes
    memory = yaml.safe_load((ROOT / "hub" / "k8s" / "values.yaml").read_text())["singleuser"]["memory"]
    return {k: memory_bytes(v) for k, v in memory.items()}


def test_memory_of_a_student_server_with_lesson_03_run(browser, hub, people):
    """carol runs lesson 03 top to bottom (the solutions, so every cell does its full work); then the resident
    memory of her server and its kernel is summed (RSS: each process's shared libraries counted once per
    process, so an upper bound of what the two need together)."""
    shutil.copyfile(ROOT / "solutions" / MEMORY_LESSON, hub.home("carol") / MEMORY_LESSON)
    carol = people["carol"]
    carol.open_notebook(MEMORY_LESSON)
    carol.run_all_and_save(MEMORY_LESSON, hub.home("carol") / MEMORY_LESSON)
    carol.shot("lesson03")
    ran = nbformat.read(hub.home("carol") / MEMORY_LESSON, as_version=4)
    errors = [o.ename for c in ran.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.output_type == "error"]
    assert not errors, f"lesson 03 raised in carol's server: {errors}"
    processes = hub.processes("carol")
    names = {p.pid: "kernel" if "ipykernel" in " ".join(p.cmdline()) else "server" for p in processes}
    assert sorted(names.values()) == ["kernel", "server"], [p.cmdline() for p in processes]
    rss = {names[p.pid]: p.memory_info().rss for p in processes}
    uss = {names[p.pid]: p.memory_full_info().uss for p in processes}
    report = (f"student server + kernel after lesson 03 run top to bottom: RSS {sum(rss.values()) / 1e6:.0f} MB "
              f"(server {rss['server'] / 1e6:.0f} MB, kernel {rss['kernel'] / 1e6:.0f} MB); "
              f"USS {sum(uss.values()) / 1e6:.0f} MB (server {uss['server'] / 1e6:.0f}, kernel {uss['kernel'] / 1e6:.0f})")
    rss = sum(rss.values())
    print(report)
    (SHOTS / "hub-memory.txt").write_text(report + "\n")
    memory = values_memory()
    assert rss * 1.2 < memory["guarantee"] and 2 * rss < memory["limit"], \
        f"hub/k8s/values.yaml's memory {memory} does not fit the measured {rss / 1e6:.0f} MB: resize it"


def test_everything_listens_on_loopback_only(hub, people):
    """The hub, the proxy, every user's server and every kernel of the run: each listening socket is on 127.0.0.1."""
    import psutil
    listening = {}
    for process in hub.processes():
        try:
            sockets = process.net_connections(kind="inet")
        except psutil.Error:
            continue
        for s in sockets:
            if s.status == psutil.CONN_LISTEN:
                listening[(s.laddr.ip, s.laddr.port)] = " ".join(process.cmdline()[:2])
    assert len(listening) >= 2 + len(people), listening      # the proxy's two, the hub's and a server a person
    assert {ip for ip, _ in listening} == {"127.0.0.1"}, listening
    assert ("127.0.0.1", hub.port) in listening


def test_stopping_the_hub_stops_everything_it_started(hub, people):
    port = hub.port
    assert hub.processes(), "nothing of the hub's run is alive to stop"
    killed = hub.stop()
    assert killed == [], f"the hub left these running; they had to be killed: {killed}"
    assert not hub.processes()
    assert hubtool.port_is_free(port), f"port {port} is still taken after the hub stopped"
