"""A demo JupyterHub for the course on this machine, with nbgrader: `make hub` (`python tools/hub.py serve`).

FOR A DEMO ON ONE MACHINE ONLY: shared passwords, and every user's server runs as this process's system user
(see hub/jupyterhub_config.py). docs/hub.md says what to use for a real class.

Lays out a folder (default build/hub/, git-ignored), starts JupyterHub behind configurable-http-proxy on
127.0.0.1 and prints the URL and the accounts:

    DIR/settings.json                  ports, accounts, passwords (mode 600), read by hub/jupyterhub_config.py
    DIR/exchange/                      nbgrader's exchange, writable by all like /srv/nbgrader/exchange
    DIR/home/<user>/                   each user's home, the root of their server
    DIR/home/<instructor>/ffn-course/  the nbgrader course folder, written by tools/nbgrader_course.py
    DIR/home/<user>/.jupyter/          nbgrader_config.py: the instructor's loads the course folder's own
                                       nbgrader_config.py and adds the exchange; a student's names the course,
                                       the exchange and the student (their hub account); students get no
                                       formgrader (jupyter_server_config.json, labconfig/page_config.json)

The students are `--students FILE` (one account name a line, or nbgrader's class-list CSV with an `id`
column and optional first_name, last_name, email), else three demo accounts. They are added to the
course's gradebook too. Stop with Ctrl+C: the hub stops every server and the proxy, and anything of this
run still alive after that (found by the FFN_HUB_RUN variable each of its processes carries) is killed.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbgrader_course  # tools/nbgrader_course.py: the course folder and its nbgrader_config.py

ROOT = Path(__file__).resolve().parent.parent
HUB_CONFIG = ROOT / "hub" / "jupyterhub_config.py"
DEMO_STUDENTS = ({"id": "alice", "first_name": "Alice", "last_name": "Demo"},
                 {"id": "bob", "first_name": "Bob", "last_name": "Demo"},
                 {"id": "carol", "first_name": "Carol", "last_name": "Demo"})
INSTRUCTOR = "instructor"
COURSE_FOLDER = "ffn-course"
# A hub account that nbgrader can use as a student id: JupyterHub's names are lower case, nbgrader's ids
# may not hold '+' or '*', and a name is also a folder name.
ACCOUNT = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")

STUDENT_NBGRADER_CONFIG = '''\
# nbgrader settings of a student of the course's demo hub, written by tools/hub.py.
import os
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
# Every server of the demo hub runs as one system user, and nbgrader 0.9.6 names a submitter after the
# system user (unless that is "jovyan"): name the student after their hub account instead.
c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]
'''
INSTRUCTOR_NBGRADER_CONFIG = '''\
# nbgrader settings of the instructor of the course's demo hub, written by tools/hub.py.
c = get_config()  # noqa: F821
# The course's own settings, as tools/nbgrader_course.py writes them into the course folder.
load_subconfig({course_config!r})  # noqa: F821
c.CourseDirectory.root = {course!r}
c.Exchange.root = {exchange!r}
'''
# Students fetch, validate, submit and fetch feedback; the formgrader and its tools are the instructor's.
STUDENT_SERVER_CONFIG = {"ServerApp": {"jpserver_extensions": {
    "nbgrader.server_extensions.formgrader": False, "nbgrader.server_extensions.course_list": False}}}
STUDENT_LAB_CONFIG = {"disabledExtensions": {
    "@jupyter/nbgrader:formgrader": True, "@jupyter/nbgrader:create-assignment": True,
    "@jupyter/nbgrader:course-list": True}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_free(port: int) -> bool:
    """Nothing listens on the port (connections of the past, in TIME_WAIT, do not count: a server could bind)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def read_class_list(path: Path) -> list[dict]:
    """Students from a file: one account a line, or a CSV with an `id` column (nbgrader's class list)."""
    text = path.read_text()
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    if "," in first and "id" in [h.strip().lower() for h in first.split(",")]:
        rows = [{k.strip().lower(): (v or "").strip() for k, v in row.items()}
                for row in csv.DictReader(text.lstrip().splitlines())]
        students = [row for row in rows if row.get("id")]
    else:
        students = [{"id": line.split("#", 1)[0].strip()} for line in text.splitlines()]
        students = [s for s in students if s["id"]]
    bad = [s["id"] for s in students if not ACCOUNT.fullmatch(s["id"])]
    if bad:
        sys.exit(f"{path}: not usable as hub accounts and nbgrader student ids (lower-case letters, digits, "
                 f"'_', '.', '-'; no '+'): {', '.join(bad)}")
    if not students:
        sys.exit(f"{path}: no students in it")
    return students


class Hub:
    """The demo hub in `folder`: prepare() lays it out, start() runs it, stop() ends it and all it started."""

    def __init__(self, folder: Path, proxy: Path, students: list[dict] | None = None,
                 instructor: str = INSTRUCTOR, port: int | None = None):
        self.folder = Path(folder).resolve()
        self.proxy = Path(proxy).resolve()
        self.students = list(students or DEMO_STUDENTS)
        self.instructor = instructor
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.log_path = self.folder / "jupyterhub.log"
        # This environment's commands first on PATH, for the hub, every server and nbgrader (which runs
        # `alembic` to open a gradebook), as if the environment were activated.
        bin_dir = str(Path(sys.executable).parent)
        if os.environ.get("PATH", "").split(os.pathsep)[0] != bin_dir:
            os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")

    # ---- where things are ----
    def home(self, user: str) -> Path:
        return self.folder / "home" / user

    @property
    def course(self) -> Path:
        return self.home(self.instructor) / COURSE_FOLDER

    @property
    def exchange(self) -> Path:
        return self.folder / "exchange"

    @property
    def student_names(self) -> list[str]:
        return [s["id"] for s in self.students]

    # ---- laying out the folder ----
    def prepare(self) -> dict:
        """Homes, the course folder (every lesson in source/), the exchange, each user's nbgrader config and
        the hub's settings; return the settings (passwords included)."""
        names = self.student_names
        if self.instructor in names or len(set(names)) != len(names):
            sys.exit(f"the students' accounts must be distinct and not the instructor's ({self.instructor})")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.exchange.mkdir(exist_ok=True)
        os.chmod(self.exchange, 0o1777)     # nbgrader's exchange is writable by all, like /tmp
        nbgrader_course.write_course(self.course)
        self._add_students_to_gradebook()
        exchange = str(self.exchange)
        self._write_user_config(self.instructor, INSTRUCTOR_NBGRADER_CONFIG.format(
            course_config=str(self.course / "nbgrader_config.py"), course=str(self.course), exchange=exchange))
        for name in names:
            self._write_user_config(name, STUDENT_NBGRADER_CONFIG.format(
                course_id=nbgrader_course.COURSE_ID, exchange=exchange), student=True)
        settings_path = self.folder / "settings.json"
        old = json.loads(settings_path.read_text()) if settings_path.exists() else {}
        settings = {
            "folder": str(self.folder), "proxy": str(self.proxy), "run_id": secrets.token_hex(8),
            "port": self.port, "hub_port": free_port(), "proxy_api_port": free_port(),
            "instructor": self.instructor, "students": names,
            # kept from the last run of this folder, so the accounts stay as handed out
            "student_password": old.get("student_password") or secrets.token_urlsafe(9),
            "instructor_password": old.get("instructor_password") or secrets.token_urlsafe(32),
        }
        settings_path.touch(mode=0o600)
        settings_path.write_text(json.dumps(settings, indent=1))
        self.settings = settings
        return settings

    def _write_user_config(self, user: str, nbgrader_config: str, student: bool = False) -> None:
        config = self.home(user) / ".jupyter"
        config.mkdir(parents=True, exist_ok=True)
        (config / "nbgrader_config.py").write_text(nbgrader_config)
        if student:
            (config / "jupyter_server_config.json").write_text(json.dumps(STUDENT_SERVER_CONFIG, indent=1))
            (config / "labconfig").mkdir(exist_ok=True)
            (config / "labconfig" / "page_config.json").write_text(json.dumps(STUDENT_LAB_CONFIG, indent=1))

    def _add_students_to_gradebook(self) -> None:
        from nbgrader.api import Gradebook
        with Gradebook(f"sqlite:///{self.course / 'gradebook.db'}") as gradebook:
            for student in self.students:
                details = {k: student[k] for k in ("first_name", "last_name", "email") if student.get(k)}
                gradebook.update_or_create_student(student["id"], **details)

    # ---- running it ----
    def start(self) -> None:
        env = {**os.environ, "FFN_HUB_SETTINGS": str(self.folder / "settings.json"),
               "FFN_HUB_RUN": self.settings["run_id"]}
        self._log = open(self.log_path, "a")
        # A session of its own: Ctrl+C in `make hub` reaches the hub through serve(), which stops it cleanly.
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(HUB_CONFIG)], cwd=self.folder, env=env,
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_until_up(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterHub exited with code {self.process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base}/hub/api/", timeout=5) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.5)
        raise RuntimeError(f"JupyterHub did not answer on {self.base} within {timeout} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def processes(self, user: str | None = None) -> list:
        """This run's processes (the hub's, the proxy, each server and its kernels), or one user's."""
        import psutil
        found = []
        for process in psutil.process_iter():
            try:
                env = process.environ()
            except (psutil.Error, OSError):
                continue
            if env.get("FFN_HUB_RUN") == self.settings["run_id"] and (user is None or env.get("JUPYTERHUB_USER") == user):
                found.append(process)
        return found

    def stop(self) -> list[str]:
        """Stop the hub (it stops the servers and the proxy), then kill anything of this run still alive;
        return what had to be killed (empty when the hub shut down cleanly)."""
        import psutil
        if self.process is None:
            return []
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        killed = []
        for _ in range(3):
            leftovers = self.processes()
            if not leftovers:
                break
            for process in leftovers:
                try:
                    killed.append(" ".join(process.cmdline()[:3]))
                    group = os.getpgid(process.pid)
                    if group != os.getpgrp():          # its own group (the hub, proxy, servers, kernels)
                        os.killpg(group, signal.SIGKILL)
                    else:
                        process.kill()
                except (psutil.Error, OSError):
                    pass
            psutil.wait_procs(leftovers, timeout=10)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        self._log.close()
        self.process = None                     # stopped: a second stop() has nothing to do
        return killed


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def serve(args: argparse.Namespace) -> int:
    students = read_class_list(args.students) if args.students else None
    hub = Hub(args.dir, args.proxy, students, args.instructor, args.port)
    settings = hub.prepare()
    hub.start()
    signal.signal(signal.SIGTERM, _interrupt)          # `kill` or `timeout` stops it as cleanly as Ctrl+C
    try:
        hub.wait_until_up()
        print(f"""
The course's demo JupyterHub is up: {hub.base}/   (this machine only; Ctrl+C stops it)
DEMO ONLY: shared passwords, and every server runs as this system user; see docs/hub.md for a real class.

  instructor  {settings['instructor']:<12} password {settings['instructor_password']}
              formgrader: {hub.base}/user/{settings['instructor']}/formgrader
              the course folder: {hub.course}
  students    {', '.join(settings['students'])}
              password (shared) {settings['student_password']}
              Nbgrader > Assignment List in JupyterLab: fetch, validate, submit, fetch feedback

The passwords stay in {hub.folder / 'settings.json'} for the next `make hub` on this folder.
The hub's log: {hub.log_path}""", flush=True)
        while hub.process.poll() is None:
            time.sleep(1)
        print(f"JupyterHub exited with code {hub.process.returncode}:\n{hub.log_tail()}")
        return 1
    except KeyboardInterrupt:
        print("\nStopping the hub and every server ...")
        return 0
    finally:
        killed = hub.stop()
        if killed:
            print("killed what the hub left running: " + "; ".join(killed))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("serve", help="lay out the hub's folder, start the hub and wait for Ctrl+C")
    run.add_argument("--proxy", type=Path, required=True, help="the configurable-http-proxy command")
    run.add_argument("--dir", type=Path, default=ROOT / "build" / "hub", help="the hub's folder (build/hub)")
    run.add_argument("--students", type=Path, help="the class list: one account a line, or a CSV with an id column")
    run.add_argument("--instructor", default=INSTRUCTOR, help="the instructor's account (instructor)")
    run.add_argument("--port", type=int, help="the port on 127.0.0.1 (default: a free one)")
    args = parser.parse_args(argv)
    if args.instructor and not ACCOUNT.fullmatch(args.instructor):
        parser.error(f"--instructor {args.instructor!r}: lower-case letters, digits, '_', '.', '-'")
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
