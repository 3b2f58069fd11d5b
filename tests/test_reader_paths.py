"""Every way a reader runs the book: the checks `make` does first, `make lab`, the CPU-only
torch option, and a downloaded chapter in a fresh environment that has only torch, numpy,
matplotlib and a kernel (as on Colab)."""

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from guide.book import ROOT, pins
from guide.notebook import ANSI
from guide.plain_notebooks import plain_notebook

PREREQUISITES = ROOT / "scripts" / "check_prerequisites.py"


def run(cmd, **kwargs):
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, **kwargs)


def pinned(name):
    return pins()[name.lower()]


# ---------------------------------------------------------------------------------------------
# What `make install` checks first


def test_a_missing_cpp_compiler_is_named_with_what_it_costs():
    result = run(
        [sys.executable, str(PREREQUISITES)],
        env={**os.environ, "CXX": "/nonexistent/c++"},
    )
    assert result.returncode == 0, result.stderr
    assert "no C++ compiler found" in result.stdout
    assert "torch.compile demonstrations will be skipped" in result.stdout
    assert "apt-get install g++" in result.stdout or "xcode-select" in result.stdout


def test_a_present_compiler_gets_no_warning():
    cxx = os.environ.get("CXX") or "g++"
    if run(["which", cxx]).returncode != 0:
        pytest.skip(f"this machine has no {cxx}; the warning above is what it gets")
    result = run([sys.executable, str(PREREQUISITES)])
    assert "C++ compiler" not in result.stdout


def test_an_old_python_stops_the_install_with_the_fix():
    code = (
        "import importlib.util as u;"
        " s = u.spec_from_file_location('c', 'scripts/check_prerequisites.py');"
        " c = u.module_from_spec(s); s.loader.exec_module(c);"
        " c.MIN_PYTHON = (99, 0); c.main()"
    )
    result = run([sys.executable, "-c", code])
    assert result.returncode != 0
    assert (
        "Python 99.0 or newer is needed" in result.stderr and "PYTHON=" in result.stderr
    )


def test_torch_cpu_installs_from_pytorchs_cpu_index():
    result = run(["make", "-n", "-B", "install", "TORCH=cpu"])
    assert result.returncode == 0, result.stderr
    expected = f'--index-url https://download.pytorch.org/whl/cpu "{pinned("torch")}"'
    assert expected in result.stdout, result.stdout
    default = run(["make", "-n", "-B", "install"])
    assert "download.pytorch.org" not in default.stdout, (
        "the default install must use the plain PyPI pin"
    )
    bad = run(["make", "-n", "-B", "install", "TORCH=gpu"])
    assert bad.returncode != 0 and "TORCH must be 'default' or 'cpu'" in bad.stderr


# ---------------------------------------------------------------------------------------------
# make lab


def test_jupyterlab_myst_is_enabled_and_compatible():
    result = run([str(ROOT / ".venv" / "bin" / "jupyter"), "labextension", "list"])
    text = ANSI.sub("", result.stdout + result.stderr)
    line = next((line for line in text.splitlines() if "jupyterlab-myst" in line), "")
    assert "enabled" in line and "OK" in line, f"jupyterlab-myst is not usable:\n{text}"
    assert "not compatible" not in text, text


def get_json(url, attempts=20):
    """GET a JSON document from a server that may still be starting to listen."""
    for attempt in range(attempts):
        try:
            with urllib.request.urlopen(url, timeout=20) as response:
                return json.load(response)
        except urllib.error.URLError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.5)


@pytest.mark.slow
def test_make_lab_serves_jupyterlab_on_the_chapters():
    proc = subprocess.Popen(
        ["make", "lab", "LAB_PORT=0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline, url, log = time.time() + 90, None, []
        while url is None and time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            log.append(line)
            match = re.search(r"(http://127\.0\.0\.1:\d+)/lab\?token=(\w+)", line)
            if match:
                url, token = match.groups()
        assert url, "make lab printed no URL:\n" + "".join(log[-30:])
        assert not any("Opening in existing browser" in line for line in log), (
            "make lab opened a browser"
        )
        names = {
            item["name"]
            for item in get_json(f"{url}/api/contents?token={token}")["content"]
        }
        assert "autograd.ipynb" in names, (
            f"JupyterLab does not serve chapters/: {sorted(names)[:10]}"
        )
        extensions = {
            e["name"]: e for e in get_json(f"{url}/lab/api/extensions?token={token}")
        }
        assert extensions.get("jupyterlab-myst", {}).get("enabled"), (
            "the MyST renderer is not enabled"
        )
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


# ---------------------------------------------------------------------------------------------
# A downloaded chapter where only torch, numpy, matplotlib and a kernel are installed

DOWNLOADED = ["tensor_vs_variable", "nn_vs_autograd", "trainers_and_ecosystem"]
EXECUTE = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=600, kernel_name="python3").execute()
nbformat.write(nb, sys.argv[2])
"""


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory):
    """A fresh virtual environment, from the package registry, with torch, numpy, matplotlib
    and what it takes to run a kernel: none of the book's other packages."""
    env_dir = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    packages = [
        pinned(name) for name in ("torch", "numpy", "matplotlib", "ipykernel")
    ] + ["nbclient"]
    result = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            *packages,
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    probe = subprocess.run([str(python), "-c", "import myst_nb"], capture_output=True)
    assert probe.returncode != 0, "the bare environment must not have myst_nb"
    return python


@pytest.mark.slow
@pytest.mark.parametrize("name", DOWNLOADED)
def test_a_downloaded_chapter_runs_with_only_torch_numpy_and_matplotlib(
    bare_python, name, tmp_path
):
    source = json.loads(
        (ROOT / "chapters" / f"{name}.ipynb").read_text(encoding="utf-8")
    )
    downloaded, executed = tmp_path / f"{name}.ipynb", tmp_path / f"{name}.out.ipynb"
    downloaded.write_text(json.dumps(plain_notebook(source)), encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("JUPYTER", "PYTHON", "VIRTUAL_ENV"))
    }
    env["PATH"] = f"{bare_python.parent}:/usr/bin:/bin"
    result = subprocess.run(
        [str(bare_python), "-c", EXECUTE, str(downloaded), str(executed)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    texts = [
        out.get("text", "")
        for cell in json.loads(executed.read_text())["cells"]
        for out in cell.get("outputs", [])
    ]
    outputs = "\n".join(t if isinstance(t, str) else "".join(t) for t in texts)
    assert "Running on:" in outputs
    assert f"[{name}_hardware] = " in outputs, (
        "glued values are not shown without myst_nb"
    )
    if name == "trainers_and_ecosystem":
        assert f"Installing what this chapter needs: {pinned('lightning')}" in outputs
    else:
        assert "Installing what this chapter needs" not in outputs
