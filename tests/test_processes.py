"""Processes a chapter starts end when its kernel dies.

model_parallelism launches `torchrun`, which starts its workers in sessions of their own. A
kernel killed with SIGKILL (a crash, the out-of-memory killer, "restart" after a hang) runs no
`finally` block, so only the parent-death signal that the chapter asks Linux for ends them, and
the pid files it keeps let the next run sweep whatever an earlier run left. This test starts the
chapter in a real kernel, plants a leftover of a "dead" earlier run, runs the chapter until its
workers are up, kills the kernel and then looks for any process that still names the run.
"""

import ast
import getpass
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

from conftest import CHAPTERS

CHAPTER = CHAPTERS / "model_parallelism.ipynb"
# The chapter's fixed per-user folder: one subfolder per kernel, named by its process id.
RUN_ROOT = Path(
    tempfile.gettempdir(), f"pytorch-book-{getpass.getuser()}", "model_parallelism"
)
LAUNCH = "torchrun(workdir"  # the cell that starts torchrun and waits for it
REPS = 1000  # timed repeats: the workers would run for minutes if nothing ended them


def processes_naming(text):
    """Live processes whose command line contains `text` (a zombie has none): pid -> command."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:  # the process may end while we look
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if text.encode() in cmdline:
            found[int(entry.name)] = cmdline.replace(b"\0", b" ").decode()[:200]
    return found


def wait_until(condition, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def execute(client, code, timeout=180, **kwargs):
    reply = client.execute_interactive(
        code, timeout=timeout, output_hook=lambda msg: None, **kwargs
    )
    content = reply["content"]
    assert content["status"] == "ok", (
        f"{content.get('ename')}: {content.get('evalue')}\n{code[:300]}"
    )
    return content


def dead_pid():
    """A process id that belonged to a process that has ended (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture(scope="module")
def killed_run():
    """Run the chapter up to its launch, kill the kernel once the workers are up, and
    report what was still running afterwards."""
    code = [
        c.source
        for c in nbformat.read(CHAPTER, as_version=4).cells
        if c.cell_type == "code"
    ]
    launch = next(i for i, source in enumerate(code) if LAUNCH in source)
    # A leftover of an earlier run whose kernel is gone: a process naming that run's folder.
    stale_dir = RUN_ROOT / str(dead_pid())
    stale_dir.mkdir(parents=True, exist_ok=True)
    stale = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", str(stale_dir)]
    )
    (stale_dir / "worker0.pid").write_text(str(stale.pid))
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(CHAPTERS))
    run_dir = workdir = None
    try:
        ask = {"pid": "os.getpid()"}
        reply = execute(client, "import os", timeout=60, user_expressions=ask)
        kernel_pid = int(reply["user_expressions"]["pid"]["data"]["text/plain"])
        run_dir = RUN_ROOT / str(kernel_pid)
        for source in code[:launch]:
            execute(client, source)
        ask = {"workdir": "str(workdir)"}  # the chapter's temporary folder, to remove
        reply = execute(client, f'sizes["MP_REPS"] = {REPS}', user_expressions=ask)
        workdir = Path(
            ast.literal_eval(reply["user_expressions"]["workdir"]["data"]["text/plain"])
        )
        client.execute(code[launch])  # returns at once; the kernel is now busy
        pid_files = [
            run_dir / name for name in ("torchrun.pid", "worker0.pid", "worker1.pid")
        ]
        up = wait_until(
            lambda: all(f.exists() and f.read_text() for f in pid_files), 120
        )
        assert up, (
            f"the workers did not start: {sorted(p.name for p in run_dir.glob('*'))}"
        )
        started = [int(f.read_text()) for f in pid_files]
        swept = wait_until(lambda: stale.poll() is not None, 10)
        before_kill = processes_naming(str(run_dir))
        os.kill(kernel_pid, signal.SIGKILL)
        wait_until(lambda: not processes_naming(str(run_dir)), 15)
        yield {
            "started": started,
            "before_kill": before_kill,
            "left": processes_naming(str(run_dir)),
            "stale_swept": swept,
            "stale_dir_removed": not stale_dir.exists(),
        }
    finally:
        for pid in processes_naming(str(run_dir)) if run_dir else []:
            os.kill(pid, signal.SIGKILL)  # never leave strays, even when the test fails
        if stale.poll() is None:
            stale.kill()
        stale.wait()
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        for folder in (run_dir, stale_dir, workdir):
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)


needs_linux = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="the parent-death signal (prctl) and /proc are Linux only",
)


@needs_linux
def test_a_new_run_sweeps_what_a_dead_kernel_left(killed_run):
    assert killed_run["stale_swept"], "the leftover of a dead kernel's run still runs"
    assert killed_run["stale_dir_removed"]


@needs_linux
def test_no_process_outlives_a_killed_kernel(killed_run):
    assert set(killed_run["started"]) <= killed_run["before_kill"].keys(), (
        "torchrun and both workers must be running when the kernel is killed"
    )
    assert not killed_run["left"], (
        f"still running after the kernel was killed: {killed_run['left']}"
    )
