# Two commands set everything up on a machine with Python 3 and make:
#   make lab    start JupyterLab on the learner's workspace, work/ (made from notebooks/ the first time)
#   make test   run every test (unit tests, graders, nbval on solutions/ and notebooks/; never work/)
# `make help` lists the others (a static site, grading, an environment check, a real-browser test).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# JupyterLab refuses to run as root unless told; CI and containers run as root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
PYTEST_NB := --nbval --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg -n 2 --dist loadfile
BROWSER_STAMP := $(VENV)/.browser-installed
SOLUTIONS ?= 1
# make html: solutions folded behind toggles into site/; make html SOLUTIONS=0: the learner edition into site-learner/
SITE    ?= $(if $(filter 0,$(SOLUTIONS)),site-learner,site)
GRADES  ?= grades
TIMEOUT ?= 120
JOBS    ?= 1
WORK    ?= work

.PHONY: help lab update progress test unit nbval notebooks solutions bench lock clean html grade doctor test-browser test-a11y
help:
	@echo "make lab        start JupyterLab on work/, your copy of the lessons (made from notebooks/ the first time;"
	@echo "                sets up .venv the first time too)"
	@echo "make update     after git pull (or a newer zip): bring the course's changes into work/, keeping your work"
	@echo "make progress   your checks and quiz answers in work/, lesson by lesson, and what to do next"
	@echo "make test       run every test: helpers, graders, nbval on solutions/ and notebooks/"
	@echo "make notebooks  regenerate changed notebooks/ from solutions/ (RERUN=1: all; FORCE=1 backs up edited ones)"
	@echo "make solutions  re-execute solutions/ in place to refresh stored outputs"
	@echo "make bench      time the reference FFNs against their bare matmuls (ratios, not part of make test)"
	@echo "make lock       re-resolve requirements.in into the pinned requirements.txt"
	@echo "make html       build a static site into site/ (open site/index.html): each exercise's solution folded"
	@echo "                behind a Show solution toggle; SOLUTIONS=0: the learner edition, no solutions, in site-learner/"
	@echo "make grade SUBMISSIONS=path/   run learners' notebooks and their checks: grades/grades.csv"
	@echo "                (one subfolder or one .ipynb per learner; TIMEOUT=120 s per notebook, JOBS=1)"
	@echo "make doctor     check .venv, the pinned packages, helpers, the Jupyter kernel and work/, with fixes"
	@echo "make test-browser  run every learner notebook in JupyterLab in headless Chromium (needs chromium)"
	@echo "make test-a11y  axe-core on every page of both site editions, light and dark (needs chromium and npm)"

$(STAMP): requirements.txt pyproject.toml tools/check_python.py tools/ipython_kernel_config.py
	@$(PYTHON) tools/check_python.py
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@mkdir -p $(VENV)/etc/ipython && cp tools/ipython_kernel_config.py $(VENV)/etc/ipython/
	@touch $(STAMP)

# work/ is the learner's (git-ignored): made from notebooks/ the first time; a lesson already there is never
# overwritten. `make update` brings a new edition of the course into it (tools/workspace.py).
lab: $(STAMP)
	@$(PY) tools/workspace.py create --work $(WORK)
	$(VENV)/bin/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=$(WORK) \
		--LabApp.default_url=/lab/tree/01_hand_trace.ipynb $(ALLOW_ROOT)

update: $(STAMP)
	@$(PY) tools/workspace.py update --work $(WORK)

# No .venv needed to say that nothing has started yet (a fresh clone): the system Python will do.
progress:
	@$(or $(wildcard $(PY)),$(PYTHON)) -m helpers.progress --work $(WORK)

test: $(STAMP)
	$(PY) -m pytest $(PYTEST_NB) --ignore=tests/test_browser.py --ignore=tests/test_axe.py tests solutions notebooks

unit: $(STAMP)
	$(PY) -m pytest --ignore=tests/test_browser.py --ignore=tests/test_axe.py tests

nbval: $(STAMP)
	$(PY) -m pytest $(PYTEST_NB) solutions notebooks

notebooks: $(STAMP)
	$(PY) tools/notebooks.py generate $(if $(FORCE),--force,) $(if $(RERUN),--rerun,)

solutions: $(STAMP)
	$(PY) tools/notebooks.py execute

bench: $(STAMP)
	$(PY) benchmarks/ffn_bench.py

lock: $(STAMP)
	$(PYTHON) -m venv --clear build/lock-venv
	build/lock-venv/bin/pip install --quiet -r requirements.in
	{ echo "# The pinned set, generated from requirements.in by \`make lock\` (Python 3.11, Linux). Do not edit by hand."; \
	  build/lock-venv/bin/pip freeze --exclude-editable; } > requirements.txt

html: $(STAMP)
	$(PY) tools/build_site.py --solutions $(if $(filter 0,$(SOLUTIONS)),none,folded) --out $(SITE)

grade: $(STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=path/ [TIMEOUT=120] [JOBS=1] [GRADES=grades]"; exit 2; }
	$(PY) tools/grade.py "$(SUBMISSIONS)" --out $(GRADES) --timeout $(TIMEOUT) --jobs $(JOBS)

# Diagnoses .venv rather than building it, so it runs with the Python that would build it.
doctor:
	@$(PYTHON) tools/doctor.py --venv $(VENV) --work $(WORK)

# Playwright drives Debian's Chromium (apt-get install chromium); the course itself does not need it.
$(BROWSER_STAMP): requirements-browser.txt $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-browser.txt
	@touch $(BROWSER_STAMP)

test-browser: $(STAMP) $(BROWSER_STAMP)
	FFN_BROWSER_TEST=1 timeout -k 30 900 $(PY) -m pytest tests/test_browser.py -v -rs

# axe-core (pinned in tests/test_axe.py) is installed by the test itself with npm into build/axe/ (git-ignored).
test-a11y: $(STAMP) $(BROWSER_STAMP)
	FFN_BROWSER_TEST=1 timeout -k 30 900 $(PY) -m pytest tests/test_axe.py -v -rs

clean:
	rm -rf $(VENV) build site site-learner screenshots
