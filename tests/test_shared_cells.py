"""The shared helpers (cells/setup.py) on synthetic timings: each verdict must be given
when, and only when, the paired per-round ratios call for it."""

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from conftest import ROOT


@pytest.fixture(scope="module")
def helpers():
    # The setup cell's plot style makes an IPython shell: keep its history in memory, as
    # the session's IPython folder is gone by the time the shell exits.
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    InteractiveShell.instance(config=config)
    namespace = {}
    source = (ROOT / "cells" / "setup.py").read_text().replace("{{chapter}}", "probe")
    exec(compile(source, "cells/setup.py", "exec"), namespace)
    return namespace


def test_load_that_hits_both_variants_of_a_round_cancels(helpers):
    # a takes 0.8 of b's time in every round, while the rounds themselves vary fourfold:
    # unpaired, the spreads overlap; paired, the ratio is exact.
    b = [1.0, 2.0, 4.0, 1.5]
    a = [0.8 * t for t in b]
    ratio, sentence = helpers["compare"](a, b, "a", "b")
    assert ratio == pytest.approx(0.8)
    assert sentence.startswith("a was faster than b, taking 0.80× its time")


def test_slower_and_within_noise(helpers):
    compare = helpers["compare"]
    assert (
        "a was slower than b" in compare([2.1, 2.0, 2.2], [1.0, 1.0, 1.0], "a", "b")[1]
    )
    _, noise = compare([0.9, 1.1, 1.0], [1.0, 1.0, 1.0], "a", "b")
    assert noise.endswith("so the difference is within noise")
    assert "0.90× to 1.10× over 3 paired rounds" in noise


def test_one_outlying_round_does_not_decide_with_many_rounds(helpers):
    # eight or more rounds: the band is the ratios' quartiles, not their extremes
    ratios = [0.7] * 7 + [1.3]
    ratio, sentence = helpers["compare"](ratios, [1.0] * 8, "a", "b")
    assert "faster" in sentence and ratio == pytest.approx(0.7)


@pytest.mark.parametrize("a, b", [([1.0], [1.0]), ([1.0, 2.0], [1.0, 2.0, 3.0])])
def test_unpaired_timings_are_refused(helpers, a, b):
    with pytest.raises(ValueError, match="paired ratios need two or more rounds"):
        helpers["compare"](a, b, "a", "b")


def test_time_interleaved_keeps_each_rounds_median(helpers):
    measured = helpers["time_interleaved"](
        {"x": lambda: sum(range(100)), "y": lambda: sum(range(200))},
        rounds=3,
        min_run_time=0.01,
    )
    assert len(measured["x"].rounds) == 3
    assert len(helpers["paired_ratios"](measured["x"], measured["y"])) == 3


@pytest.mark.parametrize(
    "ratios, verdict",
    [
        ([1.80, 1.85, 1.90, 1.95], "agrees"),
        (
            [1.15, 1.20, 1.25, 1.22],
            "disagrees",
        ),  # the H200 autograd case: 1.22 vs 1.875
        ([1.16, 1.50, 2.02], "too noisy"),  # a band wider than 25 % of the prediction
    ],
)
def test_against_prediction_gives_each_verdict(helpers, ratios, verdict):
    got, sentence = helpers["against_prediction"](ratios, 1.875, "the backward")
    assert got == verdict, sentence
