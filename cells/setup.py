# The book's setup: the device, chosen once, the hardware line, and the helpers the
# chapters share: glue, sync, expect_error, time_interleaved, wall_times, spread,
# compare and show_table.
import contextlib
import platform
import re
import statistics
import time
import types

import IPython.display
import matplotlib.pyplot as plt
import matplotlib_inline.backend_inline
import torch
from torch.utils import benchmark

try:
    from myst_nb import glue  # the book's build keeps each glued value for the text
except ImportError:  # plain Jupyter or Colab: show each value where it is computed

    def glue(name, variable, display=True):
        """Stand-in for myst_nb.glue: show the value under the name the text uses."""
        if hasattr(variable, "savefig"):
            IPython.display.display(variable)
        else:
            print(f"[{name}] = {variable}")


torch.manual_seed(0)
device = torch.accelerator.current_accelerator(check_available=True) or torch.device(
    "cpu"
)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            return next(
                line.split(":", 1)[1].strip() for line in f if "model name" in line
            )
    except (OSError, StopIteration):  # not Linux: the platform's own description
        return platform.processor() or platform.machine()


def describe_device(dev):
    """The accelerator's name where its backend reports one, else the CPU's."""
    if dev.type != "cpu":
        name = getattr(torch.get_device_module(dev), "get_device_name", None)
        if name is not None:
            return name(dev)
        return f"{dev.type} GPU beside {cpu_name()}"
    return cpu_name()


device_name = describe_device(device)
hardware = (
    f"{device.type} ({device_name}), torch {torch.__version__}, "
    f"{torch.get_num_threads()} CPU threads"
)
glue("{{chapter}}_hardware", hardware, display=False)
print("Running on:", hardware)

# One house style for plots: SVG, and type large enough to read on a phone.
matplotlib_inline.backend_inline.set_matplotlib_formats("svg")
plt.rcParams.update(
    {
        "figure.figsize": (6.4, 3.6),
        "font.size": 12,
        "axes.titlesize": 12,
        "legend.fontsize": 11,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "svg.fonttype": "none",
    }
)


def sync():
    """Wait for the work queued on the accelerator, so a clock reads finished work."""
    if device.type != "cpu":
        torch.accelerator.synchronize()


@contextlib.contextmanager
def expect_error(kinds, *fragments):
    """The block must raise `kinds` with every fragment in its message. The message is
    printed and kept in `.error` of the value bound by `as`; no error, or another one,
    fails the cell."""
    caught = types.SimpleNamespace(error=None)
    try:
        yield caught
    except kinds as e:
        caught.error = e
        message = re.sub(r"\x1b\[[0-9;]*m", "", str(e))  # no terminal colour codes
        shown = message if len(message) <= 500 else message[:500] + " [...]"
        print(f"{type(e).__name__}: {shown}")
        missing = [fragment for fragment in fragments if fragment not in message]
        assert not missing, f"the message lacks {missing}: {message}"
    else:
        raise AssertionError(f"expected {kinds}, but the block raised nothing")


def time_interleaved(variants, rounds=3, min_run_time=0.2, num_threads=1):
    """Timings of short calls: each zero-argument callable in `variants` (a dict name ->
    fn) is timed with benchmark.Timer, the variants taking turns for `rounds` rounds so
    that load from other processes hits them alike. `num_threads` is one count for all,
    or a dict name -> count. Returns name -> merged Measurement (median, iqr, times)."""
    measured = {name: [] for name in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            threads = (
                num_threads[name] if isinstance(num_threads, dict) else num_threads
            )
            timer = benchmark.Timer(
                "fn()", globals={"fn": fn}, num_threads=threads, description=name
            )
            measured[name].append(timer.blocked_autorange(min_run_time=min_run_time))
    return {name: benchmark.Measurement.merge(ms)[0] for name, ms in measured.items()}


def wall_times(variants, repeats=5, warmup=1):
    """Seconds per call of whole loops (an epoch, a training run): each callable in
    `variants` runs `warmup` times, then `repeats` times taking turns, with the device
    synchronized around every call. Returns name -> list of seconds."""
    for fn in variants.values():
        for _ in range(warmup):
            fn()
    times = {name: [] for name in variants}
    for _ in range(repeats):
        for name, fn in variants.items():
            sync()
            start = time.perf_counter()
            fn()
            sync()
            times[name].append(time.perf_counter() - start)
    return times


def spread(times):
    """The band a timing falls in: quartiles of 8 or more values, else min and max."""
    times = list(getattr(times, "times", times))
    if len(times) >= 8:
        quartiles = statistics.quantiles(times, n=4)
        return quartiles[0], quartiles[2]
    return min(times), max(times)


def compare(times_a, times_b, name_a, name_b):
    """A verdict computed from two sets of timings (seconds, or Measurements): `name_a`
    is faster or slower than `name_b` only when their bands (see `spread`) do not
    overlap. Returns (ratio of medians a / b, sentence)."""
    a = list(getattr(times_a, "times", times_a))
    b = list(getattr(times_b, "times", times_b))
    ratio = statistics.median(a) / statistics.median(b)
    (low_a, high_a), (low_b, high_b) = spread(a), spread(b)
    if high_a < low_b:
        return ratio, f"{name_a} was faster than {name_b}, taking {ratio:.2f}× its time"
    if low_a > high_b:
        return ratio, f"{name_a} was slower than {name_b}, taking {ratio:.2f}× its time"
    return ratio, (
        f"{name_a} took {ratio:.2f}× the median time of {name_b}, but their spreads "
        "overlap, so the difference is within noise"
    )


def show_table(header, rows):
    """Show rows as a table: Markdown, which the book renders as an HTML table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    IPython.display.display(IPython.display.Markdown("\n".join(lines)))
