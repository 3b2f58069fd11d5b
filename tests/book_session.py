"""The test session's setup, for every pytest run in the repository (a single chapter's
included): the root conftest.py loads this plugin. It gives the session a temp folder of
its own and makes the kernels shift every seed a chapter sets (tests/seed_shift.py)."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRATCH = pytest.StashKey[str]()  # the session's temp folder
# The run executes each chapter with other random numbers than the book build (see
# tests/seed_shift.py): nbval and the reader-path runs shift every seed a chapter sets by
# NBVAL_SEED_OFFSET (BOOK_SEED_OFFSET=k in the environment picks another, 0 none), the
# environment tests by ENVIRONMENT_SEED_OFFSET, and the book build by none, so the published
# page shows the seeds the chapter was written with.
NBVAL_SEED_OFFSET = 3
ENVIRONMENT_SEED_OFFSET = 7


def pytest_configure(config):
    """Give the session a temp folder of its own, and remove it at the end.

    nbval ends each notebook's kernel with SIGKILL, so the temporary folders that a chapter
    removes at a normal exit (and multiprocessing's `pymp-*` folders) would stay in the system
    temp folder, a few MB every run. Kernels, workers, the book build and the browser all
    inherit TMPDIR; pytest's own `tmp_path` folders stay where they were, for inspection."""
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", tempfile.gettempdir())
    scratch = tempfile.mkdtemp(prefix="pytorch-book-tests-")
    config.stash[SCRATCH] = scratch
    os.environ["TMPDIR"] = tempfile.tempdir = scratch
    os.environ.setdefault("BOOK_SEED_OFFSET", str(NBVAL_SEED_OFFSET))
    os.environ["IPYTHONDIR"] = ipython_dir(Path(scratch) / "ipython")


def ipython_dir(where, startup=None):
    """An IPython folder whose kernels shift the seeds (tests/seed_shift.py) and then run
    `startup`, a script of extra lines, if given. Returns its path."""
    folder = Path(where) / "profile_default" / "startup"
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "seed_shift.py", folder / "00-seed-shift.py")
    if startup is not None:
        (folder / "10-book-test.py").write_text(startup)
    return str(where)


def pytest_unconfigure(config):
    scratch = config.stash.get(SCRATCH, None)
    if scratch:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items):
    """Every executed notebook cell is slow: `make check` (-m "not slow") leaves them out."""
    for item in items:
        if type(item).__name__ == "IPyNbCell":
            item.add_marker(pytest.mark.slow)
