"""Processes a chapter starts end when its kernel dies.

model_parallelism launches `torchrun`, which starts the workers. A process does not end when its
parent dies, whatever its session: it is handed to a new parent and runs on (and `torchrun` puts
each worker in a session of its own, so a signal to `torchrun`'s process group misses them). A
kernel killed with SIGKILL (a crash, the out-of-memory killer, "restart" after a hang) runs no
`finally` block, so only the parent-death signals that the chapter asks Linux for end them: its
wrapper asks for one before it becomes `torchrun`, each worker in its first lines. The pid files
it keeps let the next run sweep whatever an earlier run left. The first tests start the chapter
in a real kernel, plant a leftover of a "dead" earlier run, run the chapter until its workers are
up, kill the kernel and then look for any process that still names the run. The last one checks
that the wrapper and a worker give up at once when their parent is already gone.
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

from guide.book import CHAPTERS

pytestmark = pytest.mark.slow

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


def writefile_cells(name):
    """The code of the %%writefile cells that create `name` (not those that append)."""
    cells = nbformat.read(CHAPTER, as_version=4).cells
    return [
        c.source.split("\n", 1)[1]
        for c in cells
        if c.cell_type == "code"
        and c.source.startswith(f"%%writefile {{workdir}}/{name}")
    ]


@needs_linux
def test_wrapper_and_worker_stop_when_their_parent_is_gone(tmp_path):
    """A parent that died before the prctl call sends no signal: both scripts must notice
    (the kernel's pid no longer their parent's; a parent that is not torchrun) and exit
    before doing anything else. Here the parent is pytest, which plays the part."""
    (wrapper,) = writefile_cells("start_torchrun.py")
    (worker_head,) = writefile_cells("mp_worker.py")  # the lines before `import torch`
    (tmp_path / "wrapper.py").write_text(wrapper)
    (tmp_path / "worker.py").write_text(worker_head)
    not_the_kernel = str(dead_pid())
    run = [sys.executable, str(tmp_path / "wrapper.py"), not_the_kernel, "--version"]
    done = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "torch" not in done.stdout + done.stderr
    env = {**os.environ, "RANK": "0", "WORLD_SIZE": "2"}
    run = [sys.executable, str(tmp_path / "worker.py"), str(tmp_path)]
    done = subprocess.run(run, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1 and "torchrun ended" in done.stderr
    assert not (tmp_path / "worker0.pid").exists()  # it stopped before writing it
