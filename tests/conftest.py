"""The tests' fixtures: the notebooks to parametrize over, the question map, the site build.
What a notebook or the book is comes from guide/ (guide.notebook, guide.book)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from guide.book import ROOT, load_map, notebooks
from tests.book_session import (  # noqa: F401  (the session setup, re-exported)
    ENVIRONMENT_SEED_OFFSET,
    NBVAL_SEED_OFFSET,
    SCRATCH,
    ipython_dir,
)

HTML = ROOT / "_build" / "html"


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
