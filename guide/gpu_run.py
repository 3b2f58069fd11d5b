"""Execute every chapter notebook on this machine and write one reference file of the run.

Usage: python -m guide.gpu_run OUT.json [--jobs N] [--timeout S] [--chapters DIR]
                               [--keep-notebooks] [NAME ...]
   or: python3 guide/gpu_run.py ...   (the same, as a plain file: see below)

Runs the notebooks of DIR (default `chapters/`, every `*.ipynb`, Going deeper pages included;
NAME ... picks some by file stem) with nbclient, N at a time (default: the CPU cores // 2, at
least 1), each in a fresh kernel of this interpreter with the notebook's folder as its working
directory. A chapter stops at its first failing cell, or when it has run for S seconds in all
(default 900); the others go on. OUT.json is rewritten after each chapter, so an interrupted
run keeps what finished. It holds:

- `kind`: "cuda" when torch sees a CUDA device, else "cpu" (an MPS or XPU machine included);
- the machine: `date` (UTC), `accelerator` (the CUDA device's name and memory, or
  "CPU only: <cpu name>"), `torch`, `python`, `cpu_cores`, `jobs`, and `machine`, those as the
  three lines the GPU reference page (`{gpu-reference}`, guide/sphinx/pages.py) shows;
- `source`: the git commit of the chapters and whether the tree has changes (null fields, and
  `why`, where git or a checkout is absent);
- per chapter: `status` ("passed", or the error's last line), `seconds`, `glued` (every value
  glued with myst_nb.glue, as its text), `printed` (the stdout lines that mention CUDA, a GPU or
  the device, and the `Running on:` line; at most MAX_PRINTED, with `printed_left_out` counting
  the rest), `version` (a short hash of the source of its code cells) and `cpus`.

Pinning: on Linux each kernel starts under a wrapper that calls os.sched_setaffinity, so the
chapters that run at the same time get disjoint shares of the cores this process may use (when
N exceeds the cores, kernels share single cores in turn); torch sizes its thread pool to that
share. Where the OS has no sched_setaffinity (macOS, Windows) kernels are not pinned, they share
all cores, `pinned` is false in the file and `cpus` lists every core.

--keep-notebooks also writes the executed notebooks, outputs included, to
OUT.notebooks.tar.gz beside the file (OUT minus its .json suffix). The exit status is 0 when
every chapter passed, 1 when one failed (or torch cannot be imported), 2 when the arguments
are wrong.

This file imports only the standard library and nbclient (with nbformat, jupyter_client and
traitlets, which nbclient needs), and runs torch only in a subprocess (so that this process
holds no CUDA context): on a GPU machine that has torch but no Jupyter stack, install the
wheels of `scripts/gpu_kit.sh` and run it as a plain file, with no `guide` package.
"""

import argparse
import hashlib
import json
import os
import platform
import queue
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import datetime, timezone
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError
from traitlets import Int, List

ANSI = re.compile(
    r"\x1b\[[0-9;]*m"
)  # terminal colours in tracebacks (as guide.notebook)
MAX_PRINTED = 40  # lines kept per chapter
MAX_LINE = 300  # characters kept per line and per error
GPU_WORDS = ("cuda", "gpu")  # matched case-insensitively
DEFAULT_TIMEOUT_S = 900
PINNABLE = hasattr(os, "sched_setaffinity")

# Run before the kernel: pin this process to the cores in argv[1], then become the kernel.
PIN_AND_EXEC = (
    "import os, sys; "
    "os.sched_setaffinity(0, [int(c) for c in sys.argv[1].split(',')]); "
    "os.execv(sys.argv[2], sys.argv[2:])"
)

# What the run's torch sees, printed as JSON by a subprocess of this interpreter.
PROBE = """
import json, platform, torch
info = {"torch": torch.__version__, "python": platform.python_version(), "cuda": None}
if torch.cuda.is_available():
    props = torch.cuda.get_device_properties(0)
    info["cuda"] = {
        "name": props.name,
        "mib": props.total_memory // 2**20,
        "count": torch.cuda.device_count(),
        "version": torch.version.cuda,
    }
print(json.dumps(info))
"""


# ---- pure functions: what the file keeps of one executed notebook ----


def cell_source(cell):
    """A cell's source as one string (nbformat gives a string, raw JSON may give a list);
    guide.notebook.cell_text's twin, since this file runs without the package."""
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def chapter_version(nb):
    """A 12-digit hash of the source of the notebook's code cells, in order."""
    code = [cell_source(c) for c in nb["cells"] if c["cell_type"] == "code"]
    return hashlib.sha256("\0".join(code).encode()).hexdigest()[:12]


def glued_values(nb):
    """key -> the glued value's text, from a notebook executed with myst-nb's glue."""
    values = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            text = out.get("data", {}).get("application/papermill.record/text/plain")
            if name and text is not None:
                values[name] = text
    return values


def stdout_lines(nb):
    """Every line the notebook's code printed to stdout, colour codes removed."""
    lines = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stdout":
                lines += ANSI.sub("", cell_source({"source": out["text"]})).splitlines()
    return lines


def gpu_lines(lines, device_name=None):
    """The lines about the accelerator: those that mention CUDA or a GPU (any case), the
    device's name, or start with the setup cell's `Running on:`; each once, in order."""
    words = GPU_WORDS + ((device_name.lower(),) if device_name else ())
    kept = []
    for line in lines:
        line = line.strip()
        lower = line.lower()
        about_it = line.startswith("Running on:") or any(w in lower for w in words)
        if about_it and line[:MAX_LINE] not in kept:
            kept.append(line[:MAX_LINE])
    return kept


def error_line(kind, message):
    """A failure as one line: its kind and the last non-blank line of its message."""
    lines = [
        ln.strip() for ln in ANSI.sub("", message or "").splitlines() if ln.strip()
    ]
    return (f"{kind}: {lines[-1]}" if lines else kind)[:MAX_LINE]


def core_groups(cores, jobs):
    """`jobs` lists of cores, disjoint and as even as can be; with fewer cores than jobs,
    each list is one core, used in turn."""
    cores = sorted(cores)
    if jobs > len(cores):
        return [[cores[i % len(cores)]] for i in range(jobs)]
    n = len(cores)
    return [cores[i * n // jobs : (i + 1) * n // jobs] for i in range(jobs)]


# ---- running ----


class PinnedKernelManager(AsyncKernelManager):
    """A kernel of this interpreter (whatever kernelspec `python3` names), started pinned to
    `cpus` where the OS allows."""

    cpus = List(Int(), help="the cores the kernel may run on").tag(config=True)

    def format_kernel_cmd(self, extra_arguments=None):
        kernel = [sys.executable, "-m", "ipykernel_launcher", "-f"]
        kernel += [os.path.realpath(self.connection_file), *(extra_arguments or [])]
        if not PINNABLE:
            return kernel
        cores = ",".join(map(str, self.cpus))
        return [sys.executable, "-c", PIN_AND_EXEC, cores, *kernel]


def execute(path, cpus, timeout_s):
    """Execute one notebook; returns (the executed notebook, status, seconds)."""
    nb = nbformat.read(path, as_version=4)
    start = time.monotonic()
    deadline = start + timeout_s
    client = NotebookClient(
        nb,
        km=PinnedKernelManager(kernel_name="python3", cpus=cpus),
        timeout_func=lambda cell: max(deadline - time.monotonic(), 1.0),
        shutdown_kernel="immediate",
        resources={"metadata": {"path": str(path.parent)}},
    )
    try:
        client.execute(cleanup_kc=True)  # cleanup_kc: shut down the kernel we passed in
        status = "passed"
    except CellTimeoutError:
        status = f"timed out: the chapter ran past its {timeout_s} s"
    except CellExecutionError as e:
        status = error_line(e.ename, e.evalue)
    except Exception as e:  # a dead kernel, a failed start: record it, run the others
        status = error_line(type(e).__name__, str(e))
    return nb, status, round(time.monotonic() - start, 1)


def chapter_result(nb, status, seconds, cpus, device_name):
    """What the reference file keeps of one executed chapter."""
    printed = gpu_lines(stdout_lines(nb), device_name)
    result = {
        "status": status,
        "seconds": seconds,
        "glued": glued_values(nb),
        "printed": printed[:MAX_PRINTED],
        "version": chapter_version(nb),
        "cpus": cpus,
    }
    if len(printed) > MAX_PRINTED:
        result["printed_left_out"] = len(printed) - MAX_PRINTED
    return result


def run_chapters(paths, jobs, timeout_s, device_name, on_result):
    """Execute `paths`, `jobs` at a time, each on a core group of its own; calls
    on_result(path, result, executed notebook) in this thread as each one ends."""
    cores = os.sched_getaffinity(0) if PINNABLE else range(os.cpu_count() or 1)
    groups = queue.Queue()
    for group in core_groups(cores, jobs) if PINNABLE else [list(cores)] * jobs:
        groups.put(group)

    def one(path):
        cpus = groups.get()
        try:
            nb, status, seconds = execute(path, cpus, timeout_s)
        finally:
            groups.put(cpus)
        return nb, chapter_result(nb, status, seconds, cpus, device_name)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(one, path): path for path in paths}
        for future in as_completed(futures):
            nb, result = future.result()
            on_result(futures[future], result, nb)


# ---- the machine and the source ----


def cpu_name():
    """The CPU's model name (Linux), else the platform's description of it."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(ln.split(":", 1)[1].strip() for ln in f if "model name" in ln)
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def probe_torch():
    """What torch reports in a subprocess of this interpreter (see PROBE)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        sys.exit(f"gpu_run: cannot import torch with {sys.executable}:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def machine(jobs):
    """The file's description of this machine; the device's name for gpu_lines."""
    info = probe_torch()
    cuda = info["cuda"]
    if cuda:
        more = f" (1 of {cuda['count']})" if cuda["count"] > 1 else ""
        accelerator = f"{cuda['name']}, {cuda['mib']} MiB{more}"
        software = f"torch {info['torch']} cuda {cuda['version']}"
    else:
        accelerator, software = f"CPU only: {cpu_name()}", f"torch {info['torch']}"
    cores = len(os.sched_getaffinity(0)) if PINNABLE else os.cpu_count()
    date = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    summary = (
        f"{software}, python {info['python']}, {cores} CPU cores,"
        f" {jobs} chapters at a time{'' if PINNABLE else ' (not pinned)'}"
    )
    return {
        "kind": "cuda" if cuda else "cpu",
        "date": date,
        "accelerator": accelerator,
        "torch": info["torch"],
        "python": info["python"],
        "cpu_cores": cores,
        "jobs": jobs,
        "pinned": PINNABLE,
        "machine": [date, accelerator, summary],
    }, (cuda["name"] if cuda else None)


def git_source(folder):
    """The commit of `folder`'s checkout and whether its tree has changes."""

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short=12", "HEAD")
        changes = bool(git("status", "--porcelain", "--untracked-files=no"))
    except FileNotFoundError:
        return {"commit": None, "changes": None, "why": "git is not installed"}
    except subprocess.CalledProcessError as e:
        return {"commit": None, "changes": None, "why": e.stderr.strip()[:MAX_LINE]}
    return {"commit": commit, "changes": changes}


# ---- the command ----


def default_jobs():
    """Half the cores this process may use, at least 1."""
    cores = len(os.sched_getaffinity(0)) if PINNABLE else os.cpu_count() or 1
    return max(1, cores // 2)


def chapter_paths(folder, names):
    """The notebooks to run: all of `folder`'s, or those named; ValueError says what is not
    there."""
    found = {p.stem: p for p in sorted(folder.glob("*.ipynb"))}
    unknown = [n for n in names if n not in found]
    if not found:
        raise ValueError(f"no notebooks in {folder}")
    if unknown:
        raise ValueError(f"no {', '.join(unknown)} in {folder} (names are file stems)")
    return [found[n] for n in names] if names else list(found.values())


def parse_args(argv):
    """The command line, checked; `paths` is added: the notebooks to run."""
    parser = argparse.ArgumentParser(prog="gpu_run", description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="the reference file to write (.json)")
    parser.add_argument("names", nargs="*", help="chapters to run (default: all)")
    parser.add_argument("--jobs", type=int, default=default_jobs())
    parser.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_S)
    parser.add_argument("--chapters", type=Path, default=Path("chapters"))
    parser.add_argument("--keep-notebooks", action="store_true")
    args = parser.parse_intermixed_args(argv)
    if args.out.suffix != ".json":
        parser.error(f"OUT must end in .json, not {args.out.name!r}")
    if args.jobs < 1 or args.timeout < 1:
        parser.error("--jobs and --timeout must be at least 1")
    if not args.chapters.is_dir():
        parser.error(f"no chapters folder {args.chapters} (run from the book's root)")
    try:
        args.paths = chapter_paths(args.chapters, args.names)
    except ValueError as e:
        parser.error(str(e))
    return args


def write_json(path, data):
    """Write `data` to `path` whole (a temporary file, then a rename)."""
    text = json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def main(argv=None):
    """Run the chapters, write the reference file; returns the exit status."""
    args = parse_args(argv)
    paths = args.paths
    about, device_name = machine(args.jobs)
    print(f"{len(paths)} chapters on {about['accelerator']}, {args.jobs} at a time")
    reference = {**about, "source": git_source(args.chapters), "chapters": {}}
    start = time.monotonic()

    def on_result(path, result, nb):
        reference["chapters"][path.stem] = result
        reference["wall_seconds"] = round(time.monotonic() - start, 1)
        write_json(args.out, reference)
        if executed is not None:
            nbformat.write(nb, executed / path.name)
        print(
            f"{result['seconds']:7.1f} s  {path.stem}: {result['status']}", flush=True
        )

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpu-run-") as folder:
        executed = Path(folder) if args.keep_notebooks else None
        run_chapters(paths, args.jobs, args.timeout, device_name, on_result)
        if executed is not None:
            tar_path = args.out.with_suffix(".notebooks.tar.gz")
            with tarfile.open(tar_path, "w:gz") as tar:
                tar.add(executed, arcname="executed")
            print(f"executed notebooks: {tar_path}")
    results = reference["chapters"].values()
    passed = sum(r["status"] == "passed" for r in results)
    print(
        f"{passed}/{len(paths)} passed in {reference['wall_seconds']} s;"
        f" written to {args.out}"
    )
    return 0 if passed == len(paths) else 1


if __name__ == "__main__":
    sys.exit(main())
