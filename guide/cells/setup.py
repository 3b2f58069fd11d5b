"""The setup block: the second code cell of every chapter. Written into each chapter by
`make sync`, which fills in the chapter's name; imported as a module by the helpers' unit
tests (tests/test_shared_cells.py)."""

# ---- copied into the chapters from here ----
# The book's setup: the device, chosen once, the hardware line, and the helpers the
# chapters share: glue, sync, expect_error, time_interleaved, wall_times, spread,
# paired_ratios, median_band, compare, against_prediction and show_table.
import contextlib
import math
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


def time_interleaved(variants, rounds=6, min_run_time=0.1, num_threads=1):
    """Timings of short calls: each zero-argument callable in `variants` (a dict name ->
    fn) is timed with benchmark.Timer, the variants taking turns for `rounds` rounds (in
    reverse order every other round) so that load from other processes hits them alike.
    `num_threads` is one count for all, or a dict name -> count. Returns name -> merged
    Measurement (median, iqr, times), with `.rounds`, the median of each round, which
    `compare` pairs across variants."""
    measured = {name: [] for name in variants}
    for r in range(rounds):
        turns = list(variants.items())[:: -1 if r % 2 else 1]  # A B, then B A
        for name, fn in turns:
            threads = (
                num_threads[name] if isinstance(num_threads, dict) else num_threads
            )
            timer = benchmark.Timer(
                "fn()", globals={"fn": fn}, num_threads=threads, description=name
            )
            measured[name].append(timer.blocked_autorange(min_run_time=min_run_time))
    merged = {name: benchmark.Measurement.merge(ms)[0] for name, ms in measured.items()}
    for name, ms in measured.items():  # each round's median, for paired comparisons
        merged[name].rounds = [m.median for m in ms]
    return merged


def wall_times(variants, repeats=6, warmup=1):
    """Seconds per call of whole loops (an epoch, a training run): each callable in
    `variants` runs `warmup` times, then `repeats` times taking turns (in reverse order
    every other round), with the device synchronized around every call. Returns name ->
    list of seconds."""
    for fn in variants.values():
        for _ in range(warmup):
            fn()
    times = {name: [] for name in variants}
    for r in range(repeats):
        turns = list(variants.items())[:: -1 if r % 2 else 1]  # A B, then B A
        for name, fn in turns:
            sync()
            start = time.perf_counter()
            fn()
            sync()
            times[name].append(time.perf_counter() - start)
    return times


def spread(times):
    """The band a timing (or a ratio) falls in: quartiles of 8 or more values, else min
    and max."""
    times = list(getattr(times, "times", times))
    if len(times) >= 8:
        quartiles = statistics.quantiles(times, n=4)
        return quartiles[0], quartiles[2]
    return min(times), max(times)


def paired_ratios(times_a, times_b):
    """Round-by-round ratios a / b of two variants that took turns: the `.rounds` of
    time_interleaved's Measurements, or two lists from wall_times (one value a round).
    Load that lasts through a round slows both of its variants alike and cancels here;
    a shorter burst hits one variant only, and shows as scatter in the ratios."""
    a = list(getattr(times_a, "rounds", times_a))
    b = list(getattr(times_b, "rounds", times_b))
    if len(a) != len(b) or len(a) < 2:
        raise ValueError(
            f"paired ratios need two or more rounds of each variant, taken in turns: "
            f"got {len(a)} and {len(b)} values"
        )
    return [x / y for x, y in zip(a, b)]


def median_band(values, confidence=0.95):
    """A distribution-free confidence interval of the median of `values` (the sign
    test's order statistics): the k-th smallest to the k-th largest value, with the
    largest k whose coverage is at least `confidence`. None when there are too few
    values for that confidence (fewer than six at 95 %)."""
    values, n = sorted(values), len(values)
    k, tails = 0, 0.0
    for j in range(n // 2):  # tails: P(at most j of n fall below the median), twice
        tails += 2 * math.comb(n, j) / 2**n
        if tails > 1 - confidence:
            break
        k = j + 1
    return (values[k - 1], values[n - k]) if k else None


def times_text(ratio):
    """A ratio as the verdicts print it: two decimals below 10 (0.80, 1.22), whole above
    (36, not 36.18: the rounds do not know the third figure)."""
    return f"{ratio:.2f}" if ratio < 10 else f"{ratio:.0f}"


def compare(times_a, times_b, name_a, name_b):
    """A verdict computed from two variants' interleaved timings (see paired_ratios):
    `name_a` is faster or slower than `name_b` only when the 95 % interval of the
    median per-round ratio (see median_band) lies wholly below or above 1, so that
    two runs of the same call get a verdict other than "within noise" at most one time
    in twenty. Returns (median ratio a / b, sentence)."""
    ratios = paired_ratios(times_a, times_b)
    ratio, band = statistics.median(ratios), median_band(ratios)
    if band is None:
        return ratio, (
            f"{name_a} took {times_text(ratio)}× the time of {name_b}, but "
            f"{len(ratios)} paired rounds are too few to tell a difference from noise "
            "(it takes six)"
        )
    low, high = band
    interval = f"95 % interval {low:.3g}× to {high:.3g}×, {len(ratios)} paired rounds"
    if high < 1 or low > 1:
        word = "faster" if high < 1 else "slower"
        return ratio, (
            f"{name_a} was {word} than {name_b}, taking {times_text(ratio)}× its time "
            f"({interval})"
        )
    return ratio, (
        f"{name_a} took {times_text(ratio)}× the time of {name_b} ({interval}): the "
        "interval includes 1, so the difference is within noise"
    )


def against_prediction(ratios, predicted, what, width=0.25):
    """A verdict on a measured ratio (a list of per-round ratios) against a `predicted`
    one: "disagrees" when the 95 % interval of the median ratio (see median_band)
    excludes the prediction, "agrees" when it holds it and is at most `width` times the
    prediction wide, else "too noisy" (no interval, or one too wide to confirm it).
    Returns (verdict, sentence)."""
    ratios = list(ratios)
    band = median_band(ratios)
    interval = f"95 % interval {band[0]:.3g}× to {band[1]:.3g}×, " if band else ""
    measured = (
        f"{what} was {times_text(statistics.median(ratios))}× ({interval}{len(ratios)} "
        f"paired rounds), against a predicted {times_text(predicted)}×"
    )
    if band is None:
        return "too noisy", f"{measured}: too few rounds to test the prediction"
    if not band[0] <= predicted <= band[1]:
        return "disagrees", f"{measured}: the prediction lies outside the interval"
    if band[1] - band[0] > width * predicted:
        return "too noisy", f"{measured}: the interval is too wide to confirm it"
    return "agrees", f"{measured}: the prediction lies within the interval"


def show_table(header, rows):
    """Show rows as a table: Markdown, which the book renders as an HTML table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    IPython.display.display(IPython.display.Markdown("\n".join(lines)))
