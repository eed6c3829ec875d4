# loadlab — `make` alone prints this help. Every target installs what it needs.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
LOADLAB := $(BIN)/loadlab
PYTEST_ARGS ?=
# The run's scale: smoke, quick or full. PROFILE is its old name, honoured for one release.
SCALE ?= $(or $(PROFILE),quick)

.PHONY: help setup browser engine images images-for-scale test test-fast reproduce report smoke clean-containers clean-venv

help: ## Print every target with one line of help
	@echo "loadlab: what does a concurrency runtime cost under load?"
	@echo
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  make %-18s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: env/requirements.txt pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r env/requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	$(BIN)/python -m ipykernel install --user --name loadlab --display-name "loadlab" >/dev/null
	touch $@

setup: $(VENV)/.installed ## Create .venv, install pinned requirements + the package, register the `loadlab` Jupyter kernel

# Not fatal when it cannot install: the browser tests then skip and say why.
browser: ## Make sure headless Chromium is installed for the browser tests (Debian's chromium, installed as root)
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium (headless browser tests)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
		echo "chromium is missing and cannot be installed here: run 'sudo apt-get install chromium' (Debian) or the browser tests skip"; \
	fi

engine: setup ## Make sure a Docker engine answers (installs docker.io and starts dockerd as root on Debian) and build the base image
	$(LOADLAB) engine

images: engine ## Build every server image (all variants) and the loadgen image
	$(LOADLAB) build --all --keep-going

test: engine browser ## Run the whole test suite (unit tests on captured fixtures + Docker integration) — the README's test command
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-fast: setup browser ## Run only the tests that need no Docker engine
	$(BIN)/python -m pytest -m "not docker" $(PYTEST_ARGS)

# The images the scale's experiments start, built before the first notebook (a failed build is reported up front):
# quick does not build java-threads:jdk25, which only full's 05-virtual-threads and 05-pinning start.
images-for-scale: engine
	$(LOADLAB) build --all --scale $(SCALE) --keep-going

reproduce: images-for-scale ## Reproduce the collection: build images, run every notebook (SCALE=quick), export HTML into reports/ (the README's main command)
	$(LOADLAB) notebooks --scale $(SCALE)

report: setup ## Re-run the analyses on the newest complete runs (no measuring) and re-export HTML into reports/
	$(LOADLAB) notebooks --scale $(SCALE) --run-id latest

smoke: images ## Every notebook at the smoke scale (minutes; what CI runs): proves the pipeline, not the claims
	$(LOADLAB) notebooks --scale smoke

clean-containers: setup ## Remove every leftover loadlab container (label loadlab.run)
	$(LOADLAB) clean

clean-venv: ## Remove .venv
	rm -rf $(VENV)
