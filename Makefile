# Two commands set everything up on a machine with Python 3 and make:
#   make lab    start JupyterLab on the learner's notebooks
#   make test   run every test (unit tests, graders, nbval on solutions/ and notebooks/)
# `make help` lists the others (a static site, grading, an environment check, a real-browser test).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# JupyterLab refuses to run as root unless told; CI and containers run as root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
PYTEST_NB := --nbval --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg -n 2 --dist loadfile
BROWSER_STAMP := $(VENV)/.browser-installed
# `make test-nbgrader` has an environment of its own: the course's pinned set plus nbgrader's.
NBG_VENV  := .venv-nbgrader
NBG_PY    := $(NBG_VENV)/bin/python
NBG_STAMP := $(NBG_VENV)/.installed
SITE    ?= site
GRADES  ?= grades
TIMEOUT ?= 60
NOTEBOOK_TIMEOUT ?= 600
JOBS    ?= 1

.PHONY: help lab test unit nbval notebooks solutions bench bench-grade lock lock-nbgrader clean html grade \
	grade-merge doctor \
	test-browser test-nbgrader
help:
	@echo "make lab        start JupyterLab on notebooks/ (sets up .venv the first time)"
	@echo "make test       run every test: helpers, graders, nbval on solutions/ and notebooks/"
	@echo "make notebooks  regenerate changed notebooks/ from solutions/ (RERUN=1: all; FORCE=1 backs up edited ones)"
	@echo "make solutions  re-execute solutions/ in place to refresh stored outputs"
	@echo "make bench      time the reference FFNs against their bare matmuls (ratios, not part of make test)"
	@echo "make lock       re-resolve requirements.in into the pinned requirements.txt"
	@echo "make html       build a static site of the executed solutions into site/ (open site/index.html)"
	@echo "make grade SUBMISSIONS=path/   grade learners' notebooks: grades/grades.csv and grades/report.html"
	@echo "                (one subfolder or one .ipynb per learner; TIMEOUT=60 s per cell, NOTEBOOK_TIMEOUT=600,"
	@echo "                JOBS=1 at a time, LESSONS=\"01 02\" the lessons set; SHARD=i/n grades a slice into"
	@echo "                grades/shard-i-of-n/, then make grade-merge combines the shards)"
	@echo "make bench-grade  grade a generated class (LEARNERS=40, every lesson) with JOBS=1 and 2: s/notebook"
	@echo "make doctor     check .venv, the pinned packages, helpers and the Jupyter kernel, with fixes"
	@echo "make test-browser  run every learner notebook in JupyterLab in headless Chromium (needs chromium)"
	@echo "make test-nbgrader  a real nbgrader round trip for every lesson, in .venv-nbgrader"
	@echo "make lock-nbgrader  re-resolve requirements-nbgrader.in into requirements-nbgrader.txt (after make lock)"

$(STAMP): requirements.txt pyproject.toml tools/check_python.py
	@$(PYTHON) tools/check_python.py
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $(STAMP)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=notebooks \
		--LabApp.default_url=/lab/tree/01_hand_trace.ipynb $(ALLOW_ROOT)

test: $(STAMP)
	$(PY) -m pytest $(PYTEST_NB) --ignore=tests/test_browser.py --ignore=tests/test_nbgrader_roundtrip.py \
		tests solutions notebooks

unit: $(STAMP)
	$(PY) -m pytest --ignore=tests/test_browser.py --ignore=tests/test_nbgrader_roundtrip.py tests

nbval: $(STAMP)
	$(PY) -m pytest $(PYTEST_NB) solutions notebooks

notebooks: $(STAMP)
	$(PY) tools/notebooks.py generate $(if $(FORCE),--force,) $(if $(RERUN),--rerun,)

solutions: $(STAMP)
	$(PY) tools/notebooks.py execute

bench: $(STAMP)
	$(PY) benchmarks/ffn_bench.py

LEARNERS ?= 40
bench-grade: $(STAMP)
	$(PY) benchmarks/grade_bench.py --learners $(LEARNERS)

lock: $(STAMP)
	$(PYTHON) -m venv --clear build/lock-venv
	build/lock-venv/bin/pip install --quiet -r requirements.in
	{ echo "# The pinned set, generated from requirements.in by \`make lock\` (Python 3.11, Linux). Do not edit by hand."; \
	  build/lock-venv/bin/pip freeze --exclude-editable; } > requirements.txt

html: $(STAMP)
	$(PY) tools/build_site.py --out $(SITE)

grade: $(STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=path/ [TIMEOUT=60] [NOTEBOOK_TIMEOUT=600]" \
		"[JOBS=1] [LESSONS=\"01 02\"] [SHARD=i/n] [GRADES=grades]"; exit 2; }
	$(PY) tools/grade.py "$(SUBMISSIONS)" --cell-timeout $(TIMEOUT) --timeout $(NOTEBOOK_TIMEOUT) --jobs $(JOBS) \
		$(if $(LESSONS),--lessons $(LESSONS),) \
		$(if $(SHARD),--shard $(SHARD) --out $(GRADES)/shard-$(subst /,-of-,$(SHARD)),--out $(GRADES))

# Combines the shards that `make grade SHARD=i/n` wrote into $(GRADES)/shard-i-of-n/.
grade-merge: $(STAMP)
	@test -n "$(wildcard $(GRADES)/shard-*-of-*)" || { echo "No shards in $(GRADES)/: run make grade SHARD=i/n first"; exit 2; }
	$(PY) tools/grade.py merge $(wildcard $(GRADES)/shard-*-of-*) --out $(GRADES)

# Diagnoses .venv rather than building it, so it runs with the Python that would build it.
doctor:
	@$(PYTHON) tools/doctor.py --venv $(VENV)

# Playwright drives Debian's Chromium (apt-get install chromium); the course itself does not need it.
$(BROWSER_STAMP): requirements-browser.txt $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-browser.txt
	@touch $(BROWSER_STAMP)

test-browser: $(STAMP) $(BROWSER_STAMP)
	FFN_BROWSER_TEST=1 timeout -k 30 900 $(PY) -m pytest tests/test_browser.py -v -rs

# nbgrader 0.9.6 and what it needs beyond requirements.txt, pinned; the helpers package so the lessons run.
$(NBG_STAMP): requirements.txt requirements-nbgrader.txt pyproject.toml tools/check_python.py
	@$(PYTHON) tools/check_python.py
	@test -x $(NBG_PY) || $(PYTHON) -m venv $(NBG_VENV)
	$(NBG_PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-nbgrader.txt
	$(NBG_PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $(NBG_STAMP)

test-nbgrader: $(NBG_STAMP)
	FFN_NBGRADER_TEST=1 timeout -k 30 1800 $(NBG_PY) -m pytest tests/test_nbgrader.py \
		tests/test_nbgrader_roundtrip.py -v -rs -n 2

lock-nbgrader:
	$(PYTHON) -m venv --clear build/lock-nbgrader
	build/lock-nbgrader/bin/pip install --quiet -r requirements.txt -r requirements-nbgrader.in
	{ echo "# What .venv-nbgrader needs beyond requirements.txt, generated from requirements-nbgrader.in by"; \
	  echo "# \`make lock-nbgrader\` (Python 3.11, Linux). Do not edit by hand."; \
	  build/lock-nbgrader/bin/pip freeze --all --exclude-editable | grep -v -i -x -F -f requirements.txt \
	  | grep -v -i -E '^(pip|wheel)=='; } > requirements-nbgrader.txt

clean:
	rm -rf $(VENV) $(NBG_VENV) build site screenshots
