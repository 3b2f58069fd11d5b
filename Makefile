# Two commands a reader needs: `make book` builds the site, `make test` runs every test.
# `make lab` opens the chapters in JupyterLab; the other targets are for contributors.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# TORCH=cpu installs PyTorch's small CPU-only build from its own wheel index instead of the
# default PyPI build (which, on Linux x86-64, is the CUDA build with its NVIDIA libraries).
TORCH ?= default
CPU_INDEX := https://download.pytorch.org/whl/cpu
TORCH_PIN := $(shell grep -E '^torch==' requirements.txt)

# The venv's tools come first, and Jupyter prefers the venv's kernels over any in the user's home.
export PATH := $(CURDIR)/$(BIN):$(PATH)
export JUPYTER_PREFER_ENV_PATH := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: book check test lab serve install sync lint format strip chapter clean gpu-kit

install: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) scripts/check_prerequisites.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
ifeq ($(TORCH),cpu)
	$(BIN)/python -m pip install --disable-pip-version-check --index-url $(CPU_INDEX) "$(TORCH_PIN)"
else ifneq ($(TORCH),default)
	$(error TORCH must be 'default' or 'cpu', not '$(TORCH)')
endif
	$(BIN)/python -m pip install --disable-pip-version-check -r requirements.txt
	# the book's own code (guide/), editable; setuptools comes with the requirements
	$(BIN)/python -m pip install --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

# --all re-reads every page (execution stays cached): an incremental Sphinx build drops the
# search index's entries for the pages it does not re-read.
book: install
	$(BIN)/jupyter-book build --all -W -n --keep-going .
	@echo "The book is in _build/html: open _build/html/index.html, or run 'make serve'."

# `make check`: the static tier, in under a minute (lint, spelling, shared cells, structure,
# code rules, the helpers' unit tests, a two-chapter fixture book). `make test` runs it first,
# then the slow tests in two runs: the chapters under nbval and the environment reruns, two
# kernels at a time (nothing they measure is published: a notebook's cells stay on one worker),
# then the rest one at a time, the site build among them, which executes every chapter alone
# so that its published timings have the machine to themselves.
check: install
	$(BIN)/python -m pytest -m "not slow" tests

test: check
	$(BIN)/python -m pytest -m slow -n 2 --dist loadfile chapters tests/test_environments.py
	$(BIN)/python -m pytest -m slow tests --ignore=tests/test_environments.py

# JupyterLab on the chapters, from the book's environment; it prints the URL to open.
# (Jupyter refuses to run as root without --allow-root; containers and CI often are root.)
LAB_PORT ?= 8888
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: install
	$(BIN)/jupyter lab --no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port=$(LAB_PORT) --ServerApp.root_dir=chapters $(ALLOW_ROOT)

serve:
	@test -f _build/html/index.html || { echo "No site yet: run 'make book' first."; exit 1; }
	@echo "Serving the book on http://127.0.0.1:8000 (Ctrl-C to stop)"
	$(BIN)/python -m http.server 8000 --bind 127.0.0.1 --directory _build/html

# Contributors: write the shared cells into every chapter, then format, lint and strip.
sync: install
	$(BIN)/python -m guide.sync

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
	$(BIN)/python -m guide.strip

lint: install
	$(BIN)/python -m guide.sync --check
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/codespell

strip:
	$(BIN)/python -m guide.strip

# make chapter NAME=losses TITLE="How ...?" IDS="EX-1 EX-16" TOPIC=Training LEVEL=Intermediate
chapter: install
	$(BIN)/python -m guide.new_chapter "$(NAME)" --title "$(TITLE)" --ids "$(IDS)" --topic "$(TOPIC)" --level "$(LEVEL)"

# make gpu-kit [KIT=DIR]: the wheels and the runner for executing every chapter on a GPU
# machine without the Jupyter stack (README: Running the chapters on a GPU machine).
gpu-kit: install
	scripts/gpu_kit.sh $(or $(KIT),_build/gpu-kit)

clean:
	rm -rf _build
