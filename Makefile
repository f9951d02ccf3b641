# Two commands set everything up on a machine with Python 3 and make:
#   make lab    start JupyterLab on the learner's workspace, work/ (made from notebooks/ the first time)
#   make test   run every test (unit tests, graders, nbval on solutions/ and notebooks/; never work/)
# `make help` lists the others (a static site, grading, an environment check, a real-browser test).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# What .venv is built from. Compared by content, not by time (tools/install_stamp.py): after unpacking a newer
# zip over the folder every file is newer, but .venv is rebuilt only if one of these changed, so make works
# offline whenever the pins did not change.
INSTALL_INPUTS := requirements.txt pyproject.toml tools/check_python.py tools/ipython_kernel_config.py
INPUTS := $(VENV)/.inputs
# JupyterLab refuses to run as root unless told; CI and containers run as root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
# Tests of their own targets (a browser, nbgrader's environment): make test leaves them out.
NOT_IN_TEST := --ignore=tests/test_browser.py --ignore=tests/test_axe.py --ignore=tests/test_slides_browser.py \
	--ignore=tests/test_nbgrader_roundtrip.py --ignore=tests/test_forgeries.py --ignore=tests/test_hub.py \
	--ignore=tests/test_going_further.py
PYTEST_NB := --nbval --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg -n 2 --dist loadfile
BROWSER_STAMP := $(VENV)/.browser-installed
# The class's environment, .venv-hub: the course's pinned set plus nbgrader's and jupyterhub's. `make hub` and
# `make test-hub` run a real JupyterHub in it, behind configurable-http-proxy from npm (installed at the versions
# locked in hub/proxy/ into build/hub-proxy/); `make test-nbgrader` runs nbgrader's round trip in it too, so
# that CI builds one environment for both.
HUB_VENV  := .venv-hub
HUB_PY    := $(HUB_VENV)/bin/python
HUB_STAMP := $(HUB_VENV)/.installed
# What .venv-hub is built from, compared by content as for .venv (tools/install_stamp.py).
HUB_INSTALL_INPUTS := requirements.txt requirements-nbgrader.txt requirements-hub.txt pyproject.toml \
	tools/check_python.py tools/ipython_kernel_config.py
HUB_INPUTS := $(HUB_VENV)/.inputs
HUB_BROWSER_STAMP := $(HUB_VENV)/.browser-installed
CHP       := build/hub-proxy/node_modules/.bin/configurable-http-proxy
SOLUTIONS ?= 1
# make html: solutions folded behind toggles into site/; make html SOLUTIONS=0: the learner edition into site-learner/
SITE    ?= $(if $(filter 0,$(SOLUTIONS)),site-learner,site)
GRADES  ?= grades
TIMEOUT ?= 60
NOTEBOOK_TIMEOUT ?= 600
JOBS    ?= 1
WORK    ?= work
SLIDES  ?= slides

.PHONY: FORCE help lab update reset progress test unit nbval notebooks solutions bench bench-grade train-lm lock lock-nbgrader clean \
	html slides grade grade-merge doctor test-going-further test-browser test-a11y test-browsers test-nbgrader hub test-hub lock-hub
help:
	@echo "make lab        start JupyterLab on work/, your copy of the lessons (made from notebooks/ the first time;"
	@echo "                sets up .venv the first time too)"
	@echo "make update     after git pull (or a newer zip): bring the course's changes into work/, keeping your work"
	@echo "make reset LESSON=02  start one lesson over: back your copy in work/ up to work/.backups/<date-time>/,"
	@echo "                then take a fresh one from notebooks/"
	@echo "make progress   your checks and quiz answers in work/, lesson by lesson, and what to do next"
	@echo "make test       run every test: helpers, graders, nbval on solutions/ and notebooks/"
	@echo "make notebooks  regenerate changed notebooks/ from solutions/ (RERUN=1: all; FORCE=1 backs up edited ones)"
	@echo "make solutions  re-execute solutions/ in place to refresh stored outputs"
	@echo "make bench      time the reference FFNs, and lesson 09's model, against their bare matmuls (ratios, not"
	@echo "                part of make test), and lesson 09's training (seconds per 1,000 steps)"
	@echo "make train-lm   retrain lesson 09's language model from scratch into build/lm/ (a few minutes) and compare"
	@echo "                it with the shipped one; REPLACE=1 replaces the shipped weights in helpers/data/"
	@echo "make lock       re-resolve requirements.in into the pinned requirements.txt"
	@echo "make html       build a static site into site/ (open site/index.html): each exercise's solution folded"
	@echo "                behind a Show solution toggle; SOLUTIONS=0: the learner edition, no solutions, in site-learner/"
	@echo "make slides     a reveal.js deck per lesson from solutions/ into slides/ (open slides/index.html): the"
	@echo "                cells tagged slide, with figures and speaker notes, never a solution (needs npm)"
	@echo "make grade SUBMISSIONS=path/   grade learners' notebooks: grades/grades.csv and grades/report.html"
	@echo "                (a subfolder, an .ipynb or <learner>_<NN_lesson>.ipynb files per learner;"
	@echo "                TIMEOUT=60 s per cell, NOTEBOOK_TIMEOUT=600,"
	@echo "                JOBS=1 at a time, LESSONS=\"01 02\" the lessons set, SEED=secret for the hidden cases"
	@echo "                (default: a new one each run); SHARD=i/n grades a slice into"
	@echo "                grades/shard-i-of-n/, then make grade-merge combines the shards)"
	@echo "make bench-grade  grade a generated class (LEARNERS=40, every lesson) with JOBS=1 and 2: s/notebook"
	@echo "make doctor     check .venv, the pinned packages, helpers, the Jupyter kernel and work/, with fixes"
	@echo "make test-going-further  each lesson's Going further sections, alone after the core path, in both orders"
	@echo "make test-browser  run every learner notebook in JupyterLab in headless Chromium (needs chromium)"
	@echo "make test-a11y  axe-core on every page of both site editions, light and dark, and on every slide of the"
	@echo "                decks, which it also drives from the keyboard (needs chromium and npm)"
	@echo "make test-browsers  test-browser and test-a11y in one run, two Chromiums at a time (what CI runs)"
	@echo "make test-nbgrader  a real nbgrader round trip for every lesson, in .venv-hub"
	@echo "make lock-nbgrader  re-resolve requirements-nbgrader.in into requirements-nbgrader.txt (after make lock)"
	@echo "make hub        a demo JupyterHub on 127.0.0.1 with nbgrader: an instructor and demo students (STUDENTS=file"
	@echo "                for a class list); prints the URL, the accounts and the demo password (docs/hub.md)"
	@echo "make test-hub   the hub end to end in headless Chromium: release, fetch, submit, autograde, feedback, make grade"
	@echo "make lock-hub   re-resolve requirements-hub.in into requirements-hub.txt (after make lock-nbgrader)"
	@echo "Teaching a class: docs/teaching.md (lessons 01-04 as one session, 05-09 as follow-ups), with make slides,"
	@echo "                make grade and make reset"

# Runs every time (under make -n too: the +); rewrites $(INPUTS) only when the inputs' contents changed, and only
# then is $(STAMP) older than it.
$(INPUTS): FORCE
	+@$(PYTHON) tools/install_stamp.py $(INPUTS) $(INSTALL_INPUTS)

$(STAMP): $(INPUTS)
	@$(PYTHON) tools/check_python.py
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt || { echo "Could not install" \
		"the packages pinned in requirements.txt into $(VENV) (it changed since $(VENV) was built, so they are" \
		"downloaded: is there a network?). Your work/ is untouched; run the command again when online."; exit 1; }
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

# One lesson started over: the learner's copy is backed up to work/.backups/<time>/ first (tools/workspace.py,
# standard library only, so no .venv is needed).
reset:
	@test -n "$(LESSON)" || { echo "usage: make reset LESSON=02   (backs your work/ copy of the lesson up to" \
		"$(WORK)/.backups/<date-time>/, then takes a fresh copy from notebooks/)"; exit 2; }
	@$(or $(wildcard $(PY)),$(PYTHON)) tools/workspace.py reset "$(LESSON)" --work $(WORK)

# No .venv needed to say that nothing has started yet (a fresh clone): the system Python will do.
progress:
	@$(or $(wildcard $(PY)),$(PYTHON)) -m helpers.progress --work $(WORK)

test: $(STAMP)
	$(PY) -m pytest $(PYTEST_NB) $(NOT_IN_TEST) tests solutions notebooks

unit: $(STAMP)
	$(PY) -m pytest $(NOT_IN_TEST) tests

nbval: $(STAMP)
	$(PY) -m pytest $(PYTEST_NB) solutions notebooks

notebooks: $(STAMP)
	$(PY) tools/notebooks.py generate $(if $(FORCE),--force,) $(if $(RERUN),--rerun,)

solutions: $(STAMP)
	$(PY) tools/notebooks.py execute

# Both benchmarks run; the target fails if either misses a goal.
bench: $(STAMP)
	$(PY) benchmarks/ffn_bench.py; status=$$?; $(PY) benchmarks/lm_bench.py && exit $$status

# Lesson 09's model: trained into build/lm/ and compared with helpers/data/ (REPLACE=1 writes helpers/data/ instead).
train-lm: $(STAMP)
	$(PY) tools/train_lm.py $(if $(OUT),--out $(OUT),) $(if $(filter 1,$(REPLACE)),--replace,)

LEARNERS ?= 40
bench-grade: $(STAMP)
	$(PY) benchmarks/grade_bench.py --learners $(LEARNERS)

lock: $(STAMP)
	$(PYTHON) -m venv --clear build/lock-venv
	build/lock-venv/bin/pip install --quiet -r requirements.in
	{ echo "# The pinned set, generated from requirements.in by \`make lock\` (Python 3.11, Linux). Do not edit by hand."; \
	  build/lock-venv/bin/pip freeze --exclude-editable; } > requirements.txt

html: $(STAMP)
	$(PY) tools/build_site.py --solutions $(if $(filter 0,$(SOLUTIONS)),none,folded) --out $(SITE)

# reveal.js (pinned in tools/build_slides.py) is installed with npm into build/reveal/ and copied into $(SLIDES)/.
slides: $(STAMP)
	$(PY) tools/build_slides.py --out $(SLIDES)

grade: $(STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=path/ [TIMEOUT=60] [NOTEBOOK_TIMEOUT=600]" \
		"[JOBS=1] [LESSONS=\"01 02\"] [SEED=...] [SHARD=i/n] [GRADES=grades]"; exit 2; }
	$(if $(SEED),FFN_GRADING_SEED="$(SEED)" ,)$(PY) tools/grade.py "$(SUBMISSIONS)" --cell-timeout $(TIMEOUT) --timeout $(NOTEBOOK_TIMEOUT) --jobs $(JOBS) \
		$(if $(LESSONS),--lessons $(LESSONS),) \
		$(if $(SHARD),--shard $(SHARD) --out $(GRADES)/shard-$(subst /,-of-,$(SHARD)),--out $(GRADES))

# Combines the shards that `make grade SHARD=i/n` wrote into $(GRADES)/shard-i-of-n/. A shard missing (or without
# its grades.json) fails the target, after writing what it could merge, so that a CI matrix notices.
grade-merge: $(STAMP)
	@test -n "$(wildcard $(GRADES)/shard-*-of-*)" || { echo "No shards in $(GRADES)/: run make grade SHARD=i/n first"; exit 2; }
	$(PY) tools/grade.py merge $(wildcard $(GRADES)/shard-*-of-*) --out $(GRADES)

# Diagnoses .venv rather than building it, so it runs with the Python that would build it.
doctor:
	@$(PYTHON) tools/doctor.py --venv $(VENV) --work $(WORK)

# Every lesson's Going further sections after its core path, forward and in reverse (about 90 s: CI runs it once).
test-going-further: $(STAMP)
	$(PY) -m pytest tests/test_going_further.py -q -n 2

# Playwright drives Debian's Chromium (apt-get install chromium); the course itself does not need it.
$(BROWSER_STAMP): requirements-browser.txt $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-browser.txt
	@touch $(BROWSER_STAMP)

test-browser: $(STAMP) $(BROWSER_STAMP)
	FFN_BROWSER_TEST=1 timeout -k 30 900 $(PY) -m pytest tests/test_browser.py -v -rs

# axe-core (pinned in tests/a11y.py) is installed by the test itself with npm into build/axe/ (git-ignored), and
# reveal.js (pinned in tools/build_slides.py) into build/reveal/ for the slides' test.
test-a11y: $(STAMP) $(BROWSER_STAMP)
	FFN_BROWSER_TEST=1 timeout -k 30 1800 $(PY) -m pytest tests/test_axe.py tests/test_slides_browser.py -v -rs

# Both of the above in one run, the tests shared between two workers, a Chromium each (what CI runs).
test-browsers: $(STAMP) $(BROWSER_STAMP)
	FFN_BROWSER_TEST=1 timeout -k 30 1800 $(PY) -m pytest tests/test_browser.py tests/test_axe.py \
		tests/test_slides_browser.py -v -rs -n 2 --dist load

test-nbgrader: $(HUB_STAMP)
	FFN_NBGRADER_TEST=1 timeout -k 30 1800 $(HUB_PY) -m pytest tests/test_nbgrader.py \
		tests/test_nbgrader_roundtrip.py tests/test_forgeries.py -v -rs -n 2 --dist loadgroup

lock-nbgrader:
	$(PYTHON) -m venv --clear build/lock-nbgrader
	build/lock-nbgrader/bin/pip install --quiet -r requirements.txt -r requirements-nbgrader.in
	{ echo "# What nbgrader needs beyond requirements.txt, generated from requirements-nbgrader.in by"; \
	  echo "# \`make lock-nbgrader\` (Python 3.11, Linux). Do not edit by hand."; \
	  build/lock-nbgrader/bin/pip freeze --all --exclude-editable | grep -v -i -x -F -f requirements.txt \
	  | grep -v -i -E '^(pip|wheel)=='; } > requirements-nbgrader.txt

# The class's environment: requirements.txt, nbgrader's pins and jupyterhub's (requirements-hub.txt).
$(HUB_INPUTS): FORCE
	+@$(PYTHON) tools/install_stamp.py $(HUB_INPUTS) $(HUB_INSTALL_INPUTS)

$(HUB_STAMP): $(HUB_INPUTS)
	@$(PYTHON) tools/check_python.py
	@test -x $(HUB_PY) || $(PYTHON) -m venv $(HUB_VENV)
	$(HUB_PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-nbgrader.txt \
		-r requirements-hub.txt
	$(HUB_PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@mkdir -p $(HUB_VENV)/etc/ipython && cp tools/ipython_kernel_config.py $(HUB_VENV)/etc/ipython/
	@touch $(HUB_STAMP)

$(HUB_BROWSER_STAMP): requirements-browser.txt $(HUB_STAMP)
	$(HUB_PY) -m pip install --quiet --disable-pip-version-check -r requirements-browser.txt
	@touch $(HUB_BROWSER_STAMP)

# configurable-http-proxy and its dependencies at the versions (and integrity hashes) of hub/proxy/package-lock.json.
$(CHP): hub/proxy/package.json hub/proxy/package-lock.json
	@command -v npm >/dev/null || { echo "make hub needs npm (Node.js 20 or newer): apt-get install npm"; exit 2; }
	@mkdir -p build/hub-proxy && cp hub/proxy/package.json hub/proxy/package-lock.json build/hub-proxy/
	npm ci --prefix build/hub-proxy --no-audit --no-fund --ignore-scripts --loglevel=error
	@touch $(CHP)

hub: $(HUB_STAMP) $(CHP)
	$(HUB_PY) tools/hub.py serve --proxy $(CHP) $(if $(STUDENTS),--students "$(STUDENTS)",) \
		$(if $(HUB_PORT),--port $(HUB_PORT),) $(if $(HUB_DIR),--dir "$(HUB_DIR)",)

# Without npm (or Chromium) the test skips and says why; with npm the proxy is installed first.
test-hub: $(HUB_STAMP) $(HUB_BROWSER_STAMP)
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory $(CHP); fi
	FFN_HUB_TEST=1 FFN_HUB_PROXY=$(CHP) timeout -k 30 900 $(HUB_PY) -m pytest tests/test_hub.py -v -rsP

lock-hub:
	$(PYTHON) -m venv --clear build/lock-hub
	build/lock-hub/bin/pip install --quiet -r requirements.txt -r requirements-nbgrader.txt -r requirements-hub.in
	{ echo "# What .venv-hub needs beyond requirements.txt and requirements-nbgrader.txt, generated from"; \
	  echo "# requirements-hub.in by \`make lock-hub\` (Python 3.11, Linux). Do not edit by hand."; \
	  build/lock-hub/bin/pip freeze --all --exclude-editable | grep -v -i -x -F -f requirements.txt \
	  | grep -v -i -x -F -f requirements-nbgrader.txt | grep -v -i -E '^(pip|wheel)=='; } > requirements-hub.txt

FORCE:

clean:
	rm -rf $(VENV) .venv-nbgrader $(HUB_VENV) build site site-learner slides screenshots
