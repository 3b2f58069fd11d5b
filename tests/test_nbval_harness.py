"""The notebook runner must be able to fail: a broken notebook fails, a good one passes."""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from conftest import SCRATCH


def run_nbval(tmp_path, *cells):
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
    return subprocess.run(
        cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300
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
