"""The GPU run (guide/gpu_run.py): its pure functions, then the runner itself on a fixture of
two tiny chapters written in tmp_path, one that glues a value and prints a GPU line and one
that fails. The slow test runs it as the GPU machine does, as a plain file, with the `guide`
package, yaml and sphinx made unimportable."""

import json
import subprocess
import sys
import tarfile

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from guide import gpu_run

OK_CODE = """import os
from myst_nb import glue

glue("ok_ratio", 0.25, display=False)
print("GPU check: cores", sorted(os.sched_getaffinity(0)))
print("a line about nothing")"""
# Runs the runner as a plain file where these packages cannot be imported.
PLAIN_FILE = (
    "import runpy, sys\n"
    "for name in ('guide', 'yaml', 'sphinx'):\n"
    "    sys.modules[name] = None\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def notebook(*code, markdown="# A chapter"):
    return new_notebook(cells=[new_markdown_cell(markdown), *map(new_code_cell, code)])


def executed_cell(*outputs):
    return {"cell_type": "code", "source": "", "outputs": list(outputs)}


# ---- the pure functions ----


def test_the_version_changes_with_code_only():
    nb = notebook("x = 1", "print(x)")
    assert len(gpu_run.chapter_version(nb)) == 12
    assert gpu_run.chapter_version(nb) == gpu_run.chapter_version(
        notebook("x = 1", "print(x)", markdown="# Retitled")
    )
    for changed in [("x = 2", "print(x)"), ("x = 1print(x)",), ("print(x)", "x = 1")]:
        assert gpu_run.chapter_version(nb) != gpu_run.chapter_version(
            notebook(*changed)
        )


def test_glued_values_are_the_papermill_records_by_scrapbook_name():
    record = {
        "output_type": "display_data",
        "metadata": {"scrapbook": {"name": "a_ratio"}},
        "data": {"application/papermill.record/text/plain": "0.25"},
    }
    shown = {"output_type": "display_data", "metadata": {}, "data": {"text/plain": "9"}}
    nb = {"cells": [executed_cell(record, shown), {"cell_type": "markdown"}]}
    assert gpu_run.glued_values(nb) == {"a_ratio": "0.25"}


def test_only_stdout_lines_about_the_accelerator_are_kept():
    stdout = {
        "output_type": "stream",
        "name": "stdout",
        "text": "Running on: cpu (X)\nno CUDA device: skipped\n"
        "on the gpu: 3 ms\nloss 0.5\nthe NVIDIA H200 took 2 ms\n\x1b[31mGPU\x1b[0m red\n"
        "no CUDA device: skipped\n",
    }
    stderr = {"output_type": "stream", "name": "stderr", "text": "GPU warning\n"}
    lines = gpu_run.stdout_lines({"cells": [executed_cell(stdout, stderr)]})
    assert "GPU warning" not in lines and "GPU red" in lines
    assert gpu_run.gpu_lines(lines, "NVIDIA H200") == [
        "Running on: cpu (X)",
        "no CUDA device: skipped",
        "on the gpu: 3 ms",
        "the NVIDIA H200 took 2 ms",
        "GPU red",
    ]
    assert "the NVIDIA H200 took 2 ms" not in gpu_run.gpu_lines(lines, None)


def test_an_error_is_its_kind_and_its_last_line():
    message = "\x1b[31mfirst line\nthe last line \n\n"
    assert gpu_run.error_line("ValueError", message) == "ValueError: the last line"
    assert gpu_run.error_line("DeadKernelError", "") == "DeadKernelError"
    assert len(gpu_run.error_line("E", "x" * 1000)) == gpu_run.MAX_LINE


def test_core_groups_are_disjoint_and_even_or_shared_in_turn():
    assert gpu_run.core_groups(range(16), 8) == [[i, i + 1] for i in range(0, 16, 2)]
    assert gpu_run.core_groups([5, 1, 3, 7, 9], 2) == [[1, 3], [5, 7, 9]]
    assert gpu_run.core_groups([0, 1], 3) == [[0], [1], [0]]


# ---- the runner ----


def run_plain_file(cwd, *args):
    """The runner as a plain file, as on the GPU machine: returns the finished process."""
    return subprocess.run(
        [sys.executable, "-c", PLAIN_FILE, gpu_run.__file__, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_the_runner_writes_one_reference_file_of_the_run(tmp_path):
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    nbformat.write(notebook(OK_CODE), chapters / "ok.ipynb")
    failing = notebook("print('about to fail')", "raise ValueError('on purpose')")
    nbformat.write(failing, chapters / "broken.ipynb")

    done = run_plain_file(tmp_path, "out.json", "--jobs", "2", "--keep-notebooks")
    assert done.returncode == 1, done.stdout + done.stderr  # 1: a chapter failed
    ref = json.loads((tmp_path / "out.json").read_text())
    assert ref["kind"] == "cpu" and ref["accelerator"].startswith("CPU only: ")
    assert ref["jobs"] == 2 and ref["machine"][0] == ref["date"]
    assert sorted(ref["chapters"]) == ["broken", "ok"]
    ok, broken = ref["chapters"]["ok"], ref["chapters"]["broken"]
    assert ok["status"] == "passed" and ok["glued"] == {"ok_ratio": "0.25"}
    assert ok["printed"] == [f"GPU check: cores {ok['cpus']}"]  # pinned as recorded
    assert broken["status"] == "ValueError: on purpose" and broken["printed"] == []
    if ref["pinned"] and ref["cpu_cores"] >= 2:
        assert not set(ok["cpus"]) & set(broken["cpus"])
    with tarfile.open(tmp_path / "out.notebooks.tar.gz") as tar:
        assert sorted(tar.getnames())[1:] == [
            "executed/broken.ipynb",
            "executed/ok.ipynb",
        ]

    version = ok["version"]
    assert version == gpu_run.chapter_version(nbformat.read(chapters / "ok.ipynb", 4))
    nbformat.write(notebook(OK_CODE + "\nx = 1"), chapters / "ok.ipynb")
    done = run_plain_file(tmp_path, "again.json", "ok")
    assert done.returncode == 0, done.stdout + done.stderr
    again = json.loads((tmp_path / "again.json").read_text())["chapters"]
    assert list(again) == ["ok"] and again["ok"]["version"] != version
