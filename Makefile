# dpdash developer tasks. GNU make; run from the repository root.
#
#   make venv      create .venv (if missing) and install requirements-dev.txt
#   make debian    install the Debian packages the tests run (chromium, postgresql, a Java runtime), if missing
#   make test      the whole pytest suite (browser tests included), then ruff
#   make check     the fast tier while you work: library and AppTest tests, no browser, Spark, PostgreSQL
#                  or test marked slow (WORKERS=N sets the parallel workers; default: every core)
#   make lint      ruff only
#   make run       the app at http://localhost:8501 (PORT=N for another port)
#   make bench     every bench/bench_*.py
#   make audit     the privacy audits with 10x the trials (tests/audit --audit=strong; minutes)
#   make clean     caches and test output (keeps .venv)
#   make distclean clean, and remove .venv too

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

PYTHON3  ?= python3
VENV     := .venv
PY       := $(VENV)/bin/python
STAMP    := $(VENV)/.installed
CHROMIUM := /usr/bin/chromium
PORT     ?= 8501

# We are root locally and in CI; fall back to sudo for anyone who is not.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
APT  := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get

export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Python keeps the bytecode it compiles (in __pycache__, ignored by git), even where the environment says
# PYTHONDONTWRITEBYTECODE: otherwise every test worker rewrites every test file again, and every server
# and script a test starts compiles dpdash, ui and pages again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: help venv debian chromium test check lint run bench audit clean distclean

help:
	@sed -n 's/^#   //p' $(firstword $(MAKEFILE_LIST))

# --- environment -------------------------------------------------------------

$(PY):
	$(PYTHON3) -m venv $(VENV)

# The stamp is newer than both requirement files once they are installed, so the
# install runs again only when a requirement file changes (or the venv is new).
# dpdash itself goes in too (editable, built by the pinned hatchling): the `dpdash` command, and a Python
# that imports dpdash from any folder (a downloaded reproduce_release.py runs where it was saved).
$(STAMP): requirements.txt requirements-dev.txt pyproject.toml | $(PY)
	$(PY) -m pip install --no-input --quiet -r requirements-dev.txt
	$(PY) -m pip install --no-input --quiet --no-deps --no-build-isolation --editable .
	touch $@

venv: $(STAMP)

# Debian's packages the suite runs for real, each installed only when missing (one `apt-get update`):
# chromium for the browser tests (Debian's own build only: never `playwright install` or any other
# browser download), postgresql for the PostgreSQL engine tests, a Java runtime for Spark (pyspark).
# Phony on purpose: as a file target, .DELETE_ON_ERROR could remove /usr/bin/chromium.
DEBIAN_PACKAGES := chromium postgresql openjdk-17-jre-headless

debian:
	@missing=$$(for p in $(DEBIAN_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing from Debian:" $$missing; \
		$(APT) update && $(APT) install -y $$missing; \
	fi
	@$(CHROMIUM) --version 2>/dev/null

chromium: debian

# --- checks ------------------------------------------------------------------

# Tests without a browser run on every core (pytest-xdist; the Spark tests keep to one worker and the
# PostgreSQL tests to one, so one Spark session and one cluster start). The browser tests then run on
# every core too, a file's tests on one worker (they share its server); a test marked `alone` (the race
# of first requests on fresh servers, whose timing is the point) runs last with nothing beside it. Both
# collect tests/app only, where every browser test lives (tests/test_suite_layout.py checks that).
WORKERS ?= $(shell nproc 2>/dev/null || echo 2)
PARALLEL := -n $(WORKERS) --dist loadgroup

test: venv debian
	$(PY) -m pytest -q $(PARALLEL) -m "not browser" --durations=15
	$(PY) -m pytest -q -n $(WORKERS) --dist loadfile -m "browser and not alone" --durations=10 tests/app
	$(PY) -m pytest -q -m alone tests/app
	$(PY) -m ruff check .

check: venv
	$(PY) -m pytest -q $(PARALLEL) -m "not browser and not postgres and not spark and not slow"
	$(PY) -m ruff check .

lint: venv
	$(PY) -m ruff check .

# --- running -----------------------------------------------------------------

# Streamlit's file watcher off (`dpdash run` sets it): nothing in a served app changes while it runs.
run: venv
	$(VENV)/bin/dpdash run --port $(PORT)

audit: venv
	$(PY) -m pytest -q tests/audit --audit=strong

bench: venv
	@shopt -s nullglob; files=(bench/bench_*.py); \
	if (( $${#files[@]} == 0 )); then echo "no bench/bench_*.py yet"; fi; \
	for f in "$${files[@]}"; do echo "== $$f"; PYTHONPATH=. $(PY) "$$f"; done

clean:
	rm -rf .pytest_cache .ruff_cache .hypothesis test-output
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
