"""The notebook runner must be able to fail: a broken notebook fails, a good one passes."""

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from conftest import NBVAL_SEED_OFFSET, SCRATCH

pytestmark = pytest.mark.slow


def run_nbval(tmp_path, *cells, seed_offset=None):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    # The same flags as pytest.ini, run in a folder with no pytest config of its own.
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--nbval-lax",
        "--nbval-current-env",
        path.name,
    ]
    env = dict(os.environ)
    if seed_offset is not None:
        env["BOOK_SEED_OFFSET"] = str(seed_offset)
    return subprocess.run(
        cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    "bad_cell",
    [
        "assert 1 + 1 == 3, 'a false claim'",
        "import torch\ntorch.ones(2) @ torch.ones(3)",
    ],
    ids=["failed-assert", "runtime-error"],
)
def test_a_failing_notebook_fails(tmp_path, bad_cell):
    result = run_nbval(tmp_path, "x = 1", bad_cell)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed" in result.stdout, result.stdout


def test_a_good_notebook_passes_and_is_collected(tmp_path):
    result = run_nbval(
        tmp_path, "import torch", "assert torch.ones(2).sum().item() == 2"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout, result.stdout


def test_a_killed_kernel_leaves_its_temp_folders_in_the_sessions_own(tmp_path, request):
    """nbval kills each kernel, so no exit handler removes a chapter's temp folders: they
    must land in the session's temp folder, which the session removes (conftest.py)."""
    result = run_nbval(
        tmp_path,
        "import tempfile\n"
        "kept = tempfile.TemporaryDirectory()\n"
        "open('where.txt', 'w').write(kept.name)",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    left = Path((tmp_path / "where.txt").read_text())
    scratch = Path(request.config.stash[SCRATCH])
    assert left.parent == scratch, f"{left} is outside the session's folder {scratch}"


# A check that holds for the seed it was written with only: torch.rand(1) is 0.4963 after
# torch.manual_seed(0) and 0.0043 after torch.manual_seed(3).
SEED_LUCKY = "import torch\ntorch.manual_seed(0)\nassert torch.rand(1).item() > 0.25"


def test_a_check_that_holds_for_the_written_seed_only_fails_under_the_shift(tmp_path):
    assert run_nbval(tmp_path, SEED_LUCKY, seed_offset=0).returncode == 0
    result = run_nbval(tmp_path, SEED_LUCKY, seed_offset=NBVAL_SEED_OFFSET)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed" in result.stdout, result.stdout


def test_the_seed_shift_reaches_every_seeding_call_and_leaves_no_names(tmp_path):
    result = run_nbval(
        tmp_path,
        "import random\nimport numpy as np\nimport torch",
        "k = 5\ntorch.manual_seed(k)\nassert torch.initial_seed() == 5 + 3",
        "g = torch.Generator().manual_seed(1)\nassert g.initial_seed() == 4",
        "random.seed(0)\nassert random.random() == random.Random(3).random()",
        "r = np.random.default_rng(0).random()\nassert r == np.random.Generator(np.random.PCG64(3)).random()",
        "%%writefile seeded.py\nimport torch\ntorch.manual_seed(0)",
        "assert 'manual_seed(0)' in open('seeded.py').read()  # files are not shifted",
        "assert not {'ast', 'os', 'ShiftSeeds'} & set(dir())",
        seed_offset=3,
    )
    assert result.returncode == 0, result.stdout + result.stderr
