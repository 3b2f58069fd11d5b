# Two commands a reader needs: `make book` builds the site, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# The venv's tools come first, and Jupyter prefers the venv's kernels over any in the user's home.
export PATH := $(CURDIR)/$(BIN):$(PATH)
export JUPYTER_PREFER_ENV_PATH := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: book test serve strip clean install

install: $(STAMP)

$(STAMP): requirements.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed (found " + sys.version.split()[0] + "); set PYTHON=...")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -r requirements.txt
	touch $@

book: install
	$(BIN)/jupyter-book build -W -n --keep-going .
	@echo "The book is in _build/html: open _build/html/index.html, or run 'make serve'."

test: install
	$(BIN)/python -m pytest

serve:
	@test -f _build/html/index.html || { echo "No site yet: run 'make book' first."; exit 1; }
	@echo "Serving the book on http://127.0.0.1:8000 (Ctrl-C to stop)"
	$(BIN)/python -m http.server 8000 --bind 127.0.0.1 --directory _build/html

strip:
	$(BIN)/python scripts/strip_notebooks.py

clean:
	rm -rf _build
