# JupyterHub configuration for the course's DEMO hub (`make hub`, `make test-hub`), started by tools/hub.py.
#
# FOR A DEMO ON ONE MACHINE ONLY. It signs people in with one shared student password and one (long) instructor
# password, and runs every user's server as the same system user (SimpleLocalProcessSpawner): any student
# can read any other's files. For a real class use a real authenticator and real isolation; docs/hub.md
# says which (GitHub/OAuth via oauthenticator, LTI 1.3 via ltiauthenticator, NativeAuthenticator or PAM
# on one VM, The Littlest JupyterHub, Zero to JupyterHub on Kubernetes).
#
# tools/hub.py lays out the hub's folder (homes, the nbgrader course folder, the exchange) and passes the
# settings in a JSON file named by $FFN_HUB_SETTINGS (ports, accounts, passwords, paths).
import json
import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821 (JupyterHub provides get_config)
settings = json.loads(Path(os.environ["FFN_HUB_SETTINGS"]).read_text())
folder = Path(settings["folder"])

# Only loopback: the proxy (the public side), its API and the hub itself listen on 127.0.0.1.
c.JupyterHub.bind_url = f"http://127.0.0.1:{settings['port']}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{settings['hub_port']}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings['proxy_api_port']}"
c.Spawner.ip = "127.0.0.1"                               # each user's server (JupyterHub's default, said here)
c.ConfigurableHTTPProxy.command = [settings["proxy"]]    # installed by the Makefile into build/hub-proxy/
c.ConfigurableHTTPProxy.pid_file = str(folder / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{folder / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(folder / "jupyterhub_cookie_secret")
c.JupyterHub.cleanup_servers = True                      # stopping the hub stops every user's server

# DEMO ONLY: one shared password for the students, a separate one (32 characters or more) for the
# instructor. The instructor is the hub's admin, so the students' password cannot sign in as them.
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = settings["student_password"]
c.SharedPasswordAuthenticator.admin_password = settings["instructor_password"]
c.Authenticator.admin_users = {settings["instructor"]}
c.Authenticator.allowed_users = set(settings["students"])    # the class list; nobody else signs in

# DEMO ONLY: every server runs as this process's system user, in a home of its own under the hub's folder.
# nbgrader tells the students apart by their hub account (their nbgrader_config.py, written by tools/hub.py).
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(folder / "home" / "{username}")
# The course's environment (.venv-hub: requirements.txt, nbgrader and jupyterhub, with `helpers`) and its kernel.
c.Spawner.cmd = [str(Path(sys.executable).parent / "jupyterhub-singleuser")]
c.Spawner.args = ["--allow-root"] if os.geteuid() == 0 else []
c.Spawner.default_url = "/lab"
c.Spawner.environment = {"FFN_HUB_RUN": settings["run_id"]}   # tools/hub.py finds what to stop by it
c.Spawner.start_timeout = 120                            # a 2-core machine starting three servers at once
c.Spawner.http_timeout = 120
