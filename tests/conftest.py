"""Shared helpers for the book's tests: where things are, and how to read them."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
HTML = ROOT / "_build" / "html"
sys.path.insert(
    0, str(ROOT / "_ext")
)  # the book's Sphinx extension: chapter vocabulary and header lines
from book_pages import LINE, load_map  # noqa: E402
from tests.book_session import (  # noqa: E402, F401  (the session setup, re-exported)
    ENVIRONMENT_SEED_OFFSET,
    NBVAL_SEED_OFFSET,
    SCRATCH,
    ipython_dir,
)

# Pages that answer no question ID: front and back matter.
NON_QUESTION_PAGES = {
    "intro",
    "question_map",
    "cheat_sheet",
    "topics",
    "status",
    "measuring",
    "running",
    "drill",
    "gpu_reference",
}
ID_PATTERN = re.compile(r"\b(?:DS|IQ|RM|EX)-\d+\b")


def toc_files():
    """Every file named in _toc.yml (root included), as paths relative to the repository root."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for entry in part["chapters"]:
            files.append(entry["file"])
            files += [section["file"] for section in entry.get("sections", [])]
    return files


def load_notebook(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def cell_text(cell):
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def answered_ids(nb):
    """The IDs on the '**Answers:**' line of a notebook's first cell, or None if it has none."""
    match = LINE["Answers"].search(cell_text(nb["cells"][0]))
    return None if match is None else ID_PATTERN.findall(match.group(1))


def notebooks():
    return sorted(CHAPTERS.glob("*.ipynb"))


def pytest_generate_tests(metafunc):
    if "notebook" in metafunc.fixturenames:
        paths = notebooks()
        metafunc.parametrize("notebook", paths, ids=[p.stem for p in paths])


@pytest.fixture(scope="session")
def qmap():
    return load_map()


@pytest.fixture(scope="session")
def build():
    """Build the book exactly as `make book` does (the execution cache makes a rebuild cheap).

    A contributor iterating on the site tests can set BOOK_PREBUILT_HTML to a folder built
    earlier (for instance with execution off) to skip the build; CI never sets it."""
    prebuilt = os.environ.get("BOOK_PREBUILT_HTML")
    if prebuilt:
        return subprocess.CompletedProcess(["prebuilt", prebuilt], 0, "", "")
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jupyter_book), "build", "--all", "-W", "-n", "--keep-going", str(ROOT)]
    env = dict(os.environ, BOOK_SEED_OFFSET="0")  # the seeds as written
    return subprocess.run(
        cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600
    )


@pytest.fixture(scope="session")
def site(build):
    """The built HTML folder; fails every test that needs it when the build failed."""
    assert build.returncode == 0, (
        "the book build failed:\n" + build.stdout[-6000:] + build.stderr[-6000:]
    )
    return Path(os.environ.get("BOOK_PREBUILT_HTML") or HTML)
