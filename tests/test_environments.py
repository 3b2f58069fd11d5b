"""The chapters on machines that differ from the build machine, simulated here.

- No C++ compiler: torch.compile's Inductor backend cannot build CPU kernels, so the chapters
  that compile must print why they skip instead of failing.
- The `forkserver` (Linux from Python 3.14) and `spawn` (macOS, Windows) start methods: a
  DataLoader worker must import the dataset class from a module, not from the notebook.
"""

import ast
import os
import re

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ENVIRONMENT_SEED_OFFSET, ipython_dir
from guide.book import notebooks
from guide.notebook import cell_text, load

pytestmark = pytest.mark.slow

WORKERS = re.compile(r"num_workers\s*=\s*(?!0\b)")


def needs_a_cpp_compiler(code):
    """Whether code compiles with Inductor: the shared compile block, AOTInductor, or a
    torch.compile / Module.compile call without a backend= of its own."""
    if "# ---- shared: compile" in code or "aoti_compile" in code:
        return True
    lines = [
        line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))
    ]
    for node in ast.walk(ast.parse("\n".join(lines))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "compile":
            if not any(k.arg == "backend" for k in node.keywords):
                return True
    return False


def all_code(path):
    """The chapter's Python code, without cell magics such as %%writefile."""
    cells = load(path)["cells"]
    code = [cell_text(c) for c in cells if c["cell_type"] == "code"]
    return "\n".join(text for text in code if not text.startswith("%%"))


def chapters_whose_code(test):
    return [path for path in notebooks() if test(all_code(path))]


def execute(path, tmp_path, env_overrides, startup=None):
    """Run a chapter top to bottom in a fresh kernel with extra environment variables (and an
    IPython startup script), its seeds shifted by ENVIRONMENT_SEED_OFFSET; returns the
    executed notebook. A failing cell raises."""
    env = dict(os.environ, BOOK_SEED_OFFSET=str(ENVIRONMENT_SEED_OFFSET))
    env.update(env_overrides)
    env["IPYTHONDIR"] = ipython_dir(tmp_path / "ipython", startup)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute(env=env)
    return nb


def outputs_text(nb):
    text = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text.append(
                out.get("text", "")
                if out["output_type"] == "stream"
                else str(out.get("data", ""))
            )
    return "\n".join(text)


@pytest.mark.parametrize(
    "path", chapters_whose_code(needs_a_cpp_compiler), ids=lambda p: p.stem
)
def test_compiling_chapters_run_without_a_cpp_compiler(path, tmp_path):
    env = {
        "CXX": "/nonexistent/c++",
        "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor"),
    }
    nb = execute(path, tmp_path, env)
    if any(
        "# ---- shared: compile" in c.source for c in nb.cells
    ):  # it compiles with Inductor
        assert "C++ compiler" in outputs_text(nb), (
            f"{path.stem} does not say why it skips compiling"
        )


@pytest.mark.parametrize("method", ["forkserver", "spawn"])
@pytest.mark.parametrize(
    "path", chapters_whose_code(WORKERS.search), ids=lambda p: p.stem
)
def test_worker_chapters_run_under_other_start_methods(path, method, tmp_path):
    startup = f"import multiprocessing\nmultiprocessing.set_start_method({method!r}, force=True)\n"
    nb = execute(path, tmp_path, {}, startup=startup)
    assert "Running on:" in outputs_text(nb)


def test_the_start_method_is_really_changed(tmp_path):
    """The simulation itself: the startup script sets the start method the kernel's workers use."""
    probe = nbformat.v4.new_notebook()
    probe.cells = [
        nbformat.v4.new_code_cell(
            "import multiprocessing\nprint(multiprocessing.get_start_method())"
        )
    ]
    path = tmp_path / "probe.ipynb"
    nbformat.write(probe, path)
    nb = execute(
        path,
        tmp_path,
        {},
        startup="import multiprocessing\nmultiprocessing.set_start_method('spawn', force=True)\n",
    )
    assert "spawn" in outputs_text(nb)
