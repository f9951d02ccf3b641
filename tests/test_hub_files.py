"""The hub's files that cannot run here (no docker registry, no cluster) are checked as far as they can be:
hub/Dockerfile installs exactly the course's pins and the helpers package, hub/k8s/values.yaml uses only keys
the Zero to JupyterHub chart documents (CHART_KEYS below, from the chart's values schema at 4.4.0),
the manifests are valid YAML of the right kinds, and the pins of the hub's environment and proxy hold.
The hub itself runs under `make test-hub` (tests/test_hub.py)."""
from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
HUB = ROOT / "hub"
DOCKERFILE = HUB / "Dockerfile"
CHART_VERSION = "4.4.0"             # the chart whose keys CHART_KEYS lists
CHART_JUPYTERHUB = "5.5.0"          # ... and the JupyterHub it runs (its appVersion)


def pins(path: Path) -> dict[str, str]:
    lines = [line.split("#", 1)[0].strip() for line in path.read_text().splitlines()]
    return {name.lower(): version for name, version in (line.split("==", 1) for line in lines if line)}


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#")))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line.strip() else "")
            for line in joined.splitlines() if line.strip()]


def pip_installs(text: str) -> list[list[str]]:
    """The arguments of every `pip install` in the Dockerfile's RUN instructions."""
    found = []
    for instruction, args in dockerfile_instructions(text):
        if instruction != "RUN":
            continue
        for command in re.split(r"&&|;", args):
            words = shlex.split(command)
            if "pip" in [Path(w).name for w in words[:3]] and "install" in words:
                found.append(words[words.index("install") + 1:])
    return found


def test_dockerfile_installs_exactly_the_courses_pins_and_the_helpers_package():
    installs = pip_installs(DOCKERFILE.read_text())
    requirement_files, packages = [], []
    for args in installs:
        words = iter(args)
        for word in words:
            if word == "-r":
                requirement_files.append(next(words))
            elif not word.startswith("-"):
                packages.append((word, "--no-deps" in args))
    assert sorted(requirement_files) == ["requirements-hub.txt", "requirements-nbgrader.txt", "requirements.txt"]
    # the helpers package (this folder, where pyproject.toml and helpers/ were copied), without dependencies
    assert packages == [(".", True)], packages
    copied = " ".join(a for i, a in dockerfile_instructions(DOCKERFILE.read_text()) if i == "COPY")
    for needed in ("requirements.txt", "requirements-nbgrader.txt", "requirements-hub.txt", "pyproject.toml", "helpers"):
        assert needed in copied.split(), f"hub/Dockerfile does not copy {needed}"


def test_dockerfile_starts_from_a_pinned_python_and_runs_the_single_user_server_as_jovyan():
    instructions = dockerfile_instructions(DOCKERFILE.read_text())
    bases = [args.split()[0] for i, args in instructions if i == "FROM"]
    assert re.fullmatch(r"python:3\.11(\.\d+)?-slim-\w+", bases[0]), bases    # the Python the pins were locked on
    text = DOCKERFILE.read_text()
    assert "ARG NB_USER=jovyan" in text and "ARG NB_UID=1000" in text
    assert 'CMD ["jupyterhub-singleuser"]' in text


def test_the_hubs_jupyterhub_is_the_charts():
    assert pins(ROOT / "requirements-hub.txt")["jupyterhub"] == CHART_JUPYTERHUB
    assert f"jupyterhub=={CHART_JUPYTERHUB}" in (ROOT / "requirements-hub.in").read_text()
    assert f"--version {CHART_VERSION}" in (HUB / "k8s" / "values.yaml").read_text()


def test_hub_requirements_are_pinned_exactly_and_pin_nothing_the_course_pins():
    lines = [l for l in (ROOT / "requirements-hub.txt").read_text().splitlines() if l and l[0] != "#"]
    assert lines and all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[A-Za-z0-9_.+\-]+", l) for l in lines), lines
    course = set(pins(ROOT / "requirements.txt")) | set(pins(ROOT / "requirements-nbgrader.txt"))
    assert not course & set(pins(ROOT / "requirements-hub.txt"))


# The keys of the chart's values that hub/k8s/values.yaml may use, with the JSON types the chart's values schema
# (jupyterhub/values.schema.yaml at chart 4.4.0) gives each; every level above them admits no other key there
# (additionalProperties: false). Written out here, not copied: the list is what this course uses, checked
# against the chart's documentation (z2jh.jupyter.org, "Configuration Reference"). A key not listed is an error,
# so a typo (`limits` for `limit`) fails; hub.config holds any JupyterHub traitlets, which the chart passes on.
CHART_KEYS = {
    "hub.config": dict,
    "singleuser.image.name": str, "singleuser.image.tag": str, "singleuser.image.pullPolicy": (str, type(None)),
    "singleuser.uid": (int, type(None)), "singleuser.fsGid": (int, type(None)),
    "singleuser.defaultUrl": (str, type(None)),
    "singleuser.memory.guarantee": (int, float, str, type(None)), "singleuser.memory.limit": (int, float, str, type(None)),
    "singleuser.cpu.guarantee": (int, float, type(None)), "singleuser.cpu.limit": (int, float, type(None)),
    "singleuser.storage.capacity": (str, type(None)),
    "singleuser.storage.extraVolumes": (list, dict, type(None)), "singleuser.storage.extraVolumeMounts": (list, dict, type(None)),
    "singleuser.extraFiles": dict,
    "cull.enabled": bool, "cull.timeout": (int, type(None)),
}
# singleuser.extraFiles: each entry has a mountPath and exactly one of data (any object), stringData or
# binaryData (strings), and optionally a numeric mode.
EXTRA_FILE_KEYS = {"mountPath", "data", "stringData", "binaryData", "mode"}


def undocumented(values: dict) -> list[str]:
    """The keys of a values file that CHART_KEYS does not list, or whose value has another type."""
    problems = []

    def walk(node, path):
        if path in CHART_KEYS:
            if not isinstance(node, CHART_KEYS[path]):
                problems.append(f"{path}: a {type(node).__name__}")
            elif path == "singleuser.extraFiles":
                for name, entry in node.items():
                    keys = set(entry)
                    forms = keys & {"data", "stringData", "binaryData"}
                    if keys - EXTRA_FILE_KEYS or "mountPath" not in keys or len(forms) != 1:
                        problems.append(f"{path}.{name}: keys {sorted(keys)}")
            return
        if not isinstance(node, dict) or not any(k.startswith(path + ".") for k in CHART_KEYS) and path:
            problems.append(path)
            return
        for key, value in node.items():
            walk(value, f"{path}.{key}" if path else key)

    walk(values, "")
    return problems


def test_helm_values_use_only_keys_the_chart_documents():
    values = yaml.safe_load((HUB / "k8s" / "values.yaml").read_text())
    assert undocumented(values) == []


def test_the_key_check_catches_a_key_the_chart_does_not_know():
    values = yaml.safe_load((HUB / "k8s" / "values.yaml").read_text())
    values["singleuser"]["memory"]["limits"] = "1G"          # a typo: the chart's key is `limit`
    assert undocumented(values) == ["singleuser.memory.limits"]
    values = yaml.safe_load((HUB / "k8s" / "values.yaml").read_text())
    values["singleuser"]["image"]["pullPolicyy"] = "Always"
    values["cull"]["timeout"] = "an hour"
    assert undocumented(values) == ["singleuser.image.pullPolicyy", "cull.timeout: a str"]
    values = yaml.safe_load((HUB / "k8s" / "values.yaml").read_text())
    values["singleuser"]["extraFiles"]["nbgrader-config"]["data"] = {}          # two forms at once
    assert undocumented(values) == ["singleuser.extraFiles.nbgrader-config: keys ['data', 'mountPath', 'stringData']"]


def test_helm_values_mount_the_exchange_nbgrader_is_told_about():
    values = yaml.safe_load((HUB / "k8s" / "values.yaml").read_text())
    storage = values["singleuser"]["storage"]
    claim = storage["extraVolumes"][0]["persistentVolumeClaim"]["claimName"]
    mount = storage["extraVolumeMounts"][0]["mountPath"]
    assert storage["extraVolumes"][0]["name"] == storage["extraVolumeMounts"][0]["name"]
    config = values["singleuser"]["extraFiles"]["nbgrader-config"]["stringData"]
    assert f'c.Exchange.root = "{mount}"' in config
    sys.path.insert(0, str(ROOT / "tools"))
    import nbgrader_course
    assert f'c.CourseDirectory.course_id = "{nbgrader_course.COURSE_ID}"' in config
    pvc = yaml.safe_load((HUB / "k8s" / "nbgrader-exchange.yaml").read_text())
    assert (pvc["kind"], pvc["metadata"]["name"], pvc["spec"]["accessModes"]) == \
        ("PersistentVolumeClaim", claim, ["ReadWriteMany"])


def memory_bytes(quantity: str) -> int:
    """A Kubernetes memory quantity (the chart's 1G, 384M, 2Gi) in bytes."""
    number, unit = re.fullmatch(r"([\d.]+)\s*([KMGT]i?)?", str(quantity)).groups()
    scale = {None: 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
             "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}[unit]
    return int(float(number) * scale)


def test_the_memory_guarantee_and_limit_are_ordered():
    memory = yaml.safe_load((HUB / "k8s" / "values.yaml").read_text())["singleuser"]["memory"]
    assert 0 < memory_bytes(memory["guarantee"]) < memory_bytes(memory["limit"])
    assert memory_bytes("1G") == 10**9 and memory_bytes("512Mi") == 512 * 2**20


def test_grade_job_runs_make_grade_one_shard_per_index():
    job = yaml.safe_load((HUB / "k8s" / "grade-job.yaml").read_text())
    spec = job["spec"]
    assert (job["apiVersion"], job["kind"], spec["completionMode"]) == ("batch/v1", "Job", "Indexed")
    command = " ".join(spec["template"]["spec"]["containers"][0]["args"])
    n = spec["completions"]
    assert f"SHARD=$((JOB_COMPLETION_INDEX + 1))/{n}" in command and command.startswith("make grade ")
    sbatch = (HUB / "grade-array.sbatch").read_text()
    assert "#SBATCH --array=1-" in sbatch and 'SHARD="${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}"' in sbatch


def test_proxy_is_pinned_with_its_whole_tree():
    package = json.loads((HUB / "proxy" / "package.json").read_text())
    lock = json.loads((HUB / "proxy" / "package-lock.json").read_text())
    wanted = package["dependencies"]["configurable-http-proxy"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", wanted), "configurable-http-proxy is not pinned to one version"
    packages = {k: v for k, v in lock["packages"].items() if k}
    assert packages["node_modules/configurable-http-proxy"]["version"] == wanted
    assert all(v.get("integrity", "").startswith("sha512-") for v in packages.values())


def test_hub_config_listens_on_loopback_only():
    config = (HUB / "jupyterhub_config.py").read_text()
    urls = re.findall(r"_url = f\"http://([^:]+):", config)
    assert sorted(urls) == ["127.0.0.1"] * 3, urls
    assert 'c.Spawner.ip = "127.0.0.1"' in config
    assert "DEMO ONLY" in config


def test_make_test_hub_is_wired_into_ci_with_test_nbgrader_and_kept_out_of_make_test():
    ci = (ROOT / ".ci" / "run").read_text()
    commands = [line.split("#")[0] for line in ci.splitlines()]
    # Both run in CI after .venv-hub is prepared (the prepare step builds it), the hub's test beside nbgrader's.
    assert any("make test-hub" in c for c in commands) and any("make test-nbgrader" in c for c in commands)
    assert ci.index("prepare >build/ci/prepare.log") < ci.index("make test-hub >")
    makefile = (ROOT / "Makefile").read_text()
    test_recipe = makefile.split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    left_out = makefile.split("\nNOT_IN_TEST := ", 1)[1].split("\nPYTEST_NB", 1)[0]
    assert "$(NOT_IN_TEST)" in test_recipe and "--ignore=tests/test_hub.py" in left_out
    assert ".venv-hub/" in (ROOT / ".gitignore").read_text().splitlines()


def test_a_class_list_is_one_account_a_line_or_nbgraders_csv(tmp_path):
    sys.path.insert(0, str(ROOT / "tools"))
    import hub
    plain = tmp_path / "plain.txt"
    plain.write_text("ada\n# a comment line\nalan   # and a comment after a name\n\n")
    assert hub.read_class_list(plain) == [{"id": "ada"}, {"id": "alan"}]
    table = tmp_path / "class.csv"
    table.write_text("id,first_name,last_name,email\nada,Ada,Lovelace,ada@example.org\nalan,Alan,Turing,\n")
    assert hub.read_class_list(table) == [
        {"id": "ada", "first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.org"},
        {"id": "alan", "first_name": "Alan", "last_name": "Turing", "email": ""}]
    for bad in ("Ada\n", "ada+1\n", "ada lovelace\n", "\n"):
        plain.write_text(bad)
        with pytest.raises(SystemExit):
            hub.read_class_list(plain)
