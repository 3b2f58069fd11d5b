"""The shared helpers (guide/cells/setup.py, imported as a module) on synthetic timings: each verdict must be given
when, and only when, the paired per-round ratios call for it."""

import importlib
import random

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config


@pytest.fixture(scope="module")
def helpers():
    # The setup cell's plot style makes an IPython shell: keep its history in memory, as
    # the session's IPython folder is gone by the time the shell exits.
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    InteractiveShell.instance(config=config)
    return vars(importlib.import_module("guide.cells.setup"))


def test_load_that_hits_both_variants_of_a_round_cancels(helpers):
    # a takes 0.8 of b's time in every round, while the rounds themselves vary fourfold:
    # unpaired, the spreads overlap; paired, the ratio is exact.
    b = [1.0, 2.0, 4.0, 1.5, 3.0, 2.5]
    a = [0.8 * t for t in b]
    ratio, sentence = helpers["compare"](a, b, "a", "b")
    assert ratio == pytest.approx(0.8)
    assert sentence.startswith("a was faster than b, taking 0.80× its time")


def test_slower_and_within_noise(helpers):
    compare = helpers["compare"]
    slower = compare([2.1, 2.0, 2.2, 2.1, 2.0, 2.3], [1.0] * 6, "a", "b")[1]
    assert slower.startswith("a was slower than b")
    _, noise = compare([0.9, 1.1, 1.0, 0.95, 1.05, 1.0], [1.0] * 6, "a", "b")
    assert noise.endswith("so the difference is within noise")
    assert "95 % interval 0.9× to 1.1×, 6 paired rounds" in noise


def test_too_few_rounds_give_no_verdict(helpers):
    # five ratios all below 1 happen by chance one time in sixteen: not called
    _, sentence = helpers["compare"]([0.5] * 5, [1.0] * 5, "a", "b")
    assert "5 paired rounds are too few to tell a difference from noise" in sentence


def test_the_same_call_timed_twice_is_called_different_at_most_one_time_in_twenty(
    helpers,
):
    # an A/A test: both variants draw from one distribution, whose load varies by round
    rng = random.Random(0)
    trials, wrong = 4000, 0
    for _ in range(trials):
        load = [rng.lognormvariate(0, 0.5) for _ in range(6)]
        a = [t * rng.lognormvariate(0, 0.1) for t in load]
        b = [t * rng.lognormvariate(0, 0.1) for t in load]
        wrong += "within noise" not in helpers["compare"](a, b, "a", "b")[1]
    assert wrong / trials <= 0.05, wrong / trials


@pytest.mark.parametrize("n, k", [(5, None), (6, 1), (8, 1), (9, 2), (16, 4), (50, 18)])
def test_the_median_band_is_the_sign_tests_interval(helpers, n, k):
    band = helpers["median_band"](range(1, n + 1))
    assert band == (None if k is None else (k, n + 1 - k))


@pytest.mark.parametrize("a, b", [([1.0], [1.0]), ([1.0, 2.0], [1.0, 2.0, 3.0])])
def test_unpaired_timings_are_refused(helpers, a, b):
    with pytest.raises(ValueError, match="paired ratios need two or more rounds"):
        helpers["compare"](a, b, "a", "b")


def test_time_interleaved_keeps_each_rounds_median(helpers):
    measured = helpers["time_interleaved"](
        {"x": lambda: sum(range(100)), "y": lambda: sum(range(200))},
        rounds=6,
        min_run_time=0.005,
    )
    assert len(measured["x"].rounds) == 6
    assert len(helpers["paired_ratios"](measured["x"], measured["y"])) == 6


@pytest.mark.parametrize(
    "ratios, verdict",
    [
        ([1.80, 1.85, 1.90, 1.95, 1.88, 1.83], "agrees"),
        # the H200 autograd case: 1.22 measured against 1.875 predicted
        ([1.15, 1.20, 1.25, 1.22, 1.21, 1.19], "disagrees"),
        ([1.16, 1.50, 2.02, 1.7, 1.4, 1.9], "too noisy"),  # wider than 25 % of 1.875
        ([1.85, 1.87, 1.9], "too noisy"),  # three rounds: no 95 % interval
    ],
)
def test_against_prediction_gives_each_verdict(helpers, ratios, verdict):
    got, sentence = helpers["against_prediction"](ratios, 1.875, "the backward")
    assert got == verdict, sentence


def test_a_wide_interval_that_excludes_the_prediction_still_disagrees(helpers):
    # variable_length_sequences' case: 0.46x to 0.66x measured, 0.30x predicted
    ratios = [0.46, 0.5, 0.55, 0.6, 0.66, 0.52]
    assert helpers["against_prediction"](ratios, 0.30, "packed")[0] == "disagrees"


def test_expect_error_passes_only_for_the_named_error_with_every_fragment(helpers):
    expect_error = helpers["expect_error"]
    with expect_error(ValueError, "bad", "shape") as caught:
        raise ValueError("a bad shape")
    assert isinstance(caught.error, ValueError)
    with pytest.raises(AssertionError, match="raised nothing"):
        with expect_error(ValueError):
            pass
    with pytest.raises(AssertionError, match="lacks"):
        with expect_error(ValueError, "dtype"):
            raise ValueError("a bad shape")
    with pytest.raises(KeyError):  # another error is not caught
        with expect_error(ValueError):
            raise KeyError("x")


def test_spread_is_the_quartiles_of_eight_or_more_and_the_range_below(helpers):
    spread = helpers["spread"]
    assert spread([3.0, 1.0, 2.0]) == (1.0, 3.0)
    low, high = spread(list(range(1, 10)))
    assert 1 < low < 5 < high < 9


def chapter_importing(code):
    cells = [
        "# ---- shared: install · x ----\nNEEDED = {}\n# ---- end shared: install ----",
        "# ---- shared: setup · x ----\n# ---- end shared: setup ----",
        code,
    ]
    return {"cells": [{"cell_type": "code", "source": c} for c in cells]}


def test_the_install_block_lists_the_pinned_third_party_modules_a_chapter_imports():
    from guide.book import pins
    from guide.sync import needed

    text = needed(chapter_importing("import numpy as np\nimport json"), "probe")
    assert f'"numpy": "{pins()["numpy"]}"' in text and "json" not in text
    assert '"matplotlib"' in text  # the setup block imports it
    with pytest.raises(SystemExit, match="does not know"):
        needed(chapter_importing("import pandas"), "probe")
    # a module the chapter writes itself (%%writefile model.py) is not installed
    written = chapter_importing("import mymodel")
    written["cells"].append({"cell_type": "code", "source": "%%writefile mymodel.py\n"})
    assert "mymodel" not in needed(written, "probe")


def test_ratios_print_only_the_figures_the_rounds_support(helpers):
    times_text = helpers["times_text"]
    assert [times_text(r) for r in (0.8, 1.224, 9.994, 36.18, 125.4)] == [
        "0.80",
        "1.22",
        "9.99",
        "36",
        "125",
    ]
    a, b = [36.0 + 0.1 * i for i in range(6)], [1.0] * 6
    assert "taking 36× its time" in helpers["compare"](a, b, "a", "b")[1]
