"""The numbers a benchmark reports: the normalised score is 0 for ``random``'s rows and 1 for ``search``'s, the
aggregate is the interquartile mean of the cells, and its bootstrap interval is seeded and honest."""

from __future__ import annotations

import math

import numpy as np
import pytest

from friday13_env.benchmark import runner, scores
from friday13_env.benchmark.suite import Cell
from friday13_env.core.stats import Interval
from tests.benchmark.helpers import small_suite

pytest.importorskip("scipy")


def cells_with_means(means: list[float], deals: int = 12, seed: int = 0) -> list[np.ndarray]:
    """Per-deal win shares in [0, 1] whose means are exactly ``means`` (up to rounding), one array per cell."""
    rng = np.random.default_rng(seed)
    cells = []
    for mean in means:
        noise = rng.uniform(-0.05, 0.05, deals)
        cells.append(np.clip(mean + noise - noise.mean(), 0.0, 1.0))
    return cells


def normalised_means(cells: list[np.ndarray], low: list[float], high: list[float]) -> list[float]:
    return [(float(np.mean(c)) - lo) / (hi - lo) for c, lo, hi in zip(cells, low, high, strict=True)]


def test_the_iqm_of_four_cells_is_the_mean_of_the_middle_two() -> None:
    """With 4 cells the IQM drops the lowest and highest normalised means; the mean keeps all four."""
    low, high = [0.25, 0.1, 0.0, 0.05], [0.9, 0.5, 0.4, 0.3]
    cells = cells_with_means([0.8, 0.15, 0.35, 0.3])
    expected = sorted(normalised_means(cells, low, high))
    found = scores.aggregate(cells, low, high, seed=1)
    assert found["iqm"].value == pytest.approx((expected[1] + expected[2]) / 2, abs=1e-12)
    assert found["mean"].value == pytest.approx(sum(expected) / 4, abs=1e-12)
    assert found["iqm"].value != pytest.approx(found["mean"].value)


def test_the_iqm_of_three_cells_is_their_mean() -> None:
    """With 3 cells nothing is trimmed (a quarter of 3 is no whole cell)."""
    low, high = [0.0, 0.0, 0.0], [0.5, 0.5, 0.5]
    cells = cells_with_means([0.1, 0.2, 0.45])
    found = scores.aggregate(cells, low, high, seed=1)
    assert found["iqm"].value == pytest.approx(found["mean"].value, abs=1e-12)
    assert found["iqm"].value == pytest.approx(np.mean(normalised_means(cells, low, high)), abs=1e-12)


def test_the_anchors_own_rows_normalise_to_0_and_1() -> None:
    """Rows whose means are ``random``'s references score exactly 0, ``search``'s exactly 1, cell by cell too."""
    random_rows = cells_with_means([0.25, 0.0, 0.1, 0.05], seed=2)
    search_rows = cells_with_means([0.8, 0.4, 0.5, 0.3], seed=3)
    low = [float(np.mean(c)) for c in random_rows]
    high = [float(np.mean(c)) for c in search_rows]
    for rows, expected in ((random_rows, 0.0), (search_rows, 1.0)):
        found = scores.aggregate(rows, low, high, seed=5)
        assert found["iqm"].value == expected and found["mean"].value == expected
        for index, cell in enumerate(rows):
            win = scores.cell_interval(cell, (0.0, 1.0))
            assert scores.normalised_interval(win, low[index], high[index]).value == expected


def test_a_run_is_normalised_by_the_suite_references() -> None:
    """Through ``run_benchmark``: with references taken from two agents' own runs, the first scores 0 and the
    second 1 in every cell and in the aggregate, and a third agent's cells are ``(w - low) / (high - low)``."""
    suite = small_suite(
        (
            Cell("4p-vs-random", 4, "standard", ("random",) * 3),
            Cell("3p-vs-majority", 3, "standard", ("majority",) * 2),
        ),
        deals=6,
    )
    low = [cell["win_share"]["value"] for cell in runner.run_benchmark("random", suite, workers=1)["cells"]]
    high = [cell["win_share"]["value"] for cell in runner.run_benchmark("majority", suite, workers=1)["cells"]]
    assert all(lo != hi for lo, hi in zip(low, high, strict=True)), (low, high)
    scored = small_suite(suite.cells, deals=6, references={"random": low, "search": high})
    for agent, expected in (("random", 0.0), ("majority", 1.0)):
        result = runner.run_benchmark(agent, scored, workers=1)
        assert [cell["normalised"]["value"] for cell in result["cells"]] == [expected, expected]
        assert result["normalised"]["iqm"]["value"] == expected
        assert result["normalised"]["mean"]["value"] == expected
    cautious = runner.run_benchmark("cautious", scored, workers=1)
    for cell, lo, hi in zip(cautious["cells"], low, high, strict=True):
        assert cell["normalised"]["value"] == pytest.approx((cell["win_share"]["value"] - lo) / (hi - lo))
    interval = cautious["normalised"]["iqm"]
    assert interval["low"] <= interval["value"] <= interval["high"]


def test_the_bootstrap_interval_is_seeded_and_contains_the_estimate() -> None:
    """The same rows and seed give the same interval; another seed another one; each contains its estimate."""
    low, high = [0.25, 0.0, 0.1, 0.0], [0.9, 0.6, 0.5, 0.4]
    rng = np.random.default_rng(7)
    cells = [rng.choice([0.0, 0.5, 1.0], size=20) for _ in range(4)]
    first = scores.aggregate(cells, low, high, seed=11)
    assert first == scores.aggregate([c.copy() for c in cells], low, high, seed=11)
    assert first != scores.aggregate(cells, low, high, seed=12)
    for interval in first.values():
        assert interval.defined
        assert interval.low < interval.value < interval.high
        assert interval.high - interval.low < 2.0


def test_the_interval_narrows_with_more_deals() -> None:
    """Four times the deals (the same per-deal values repeated) give a clearly narrower interval."""
    low, high = [0.0] * 4, [1.0] * 4
    rng = np.random.default_rng(3)
    cells = [rng.choice([0.0, 1.0], size=10) for _ in range(4)]
    narrow = scores.aggregate([np.tile(c, 4) for c in cells], low, high, seed=1)["iqm"]
    wide = scores.aggregate(cells, low, high, seed=1)["iqm"]
    assert narrow.high - narrow.low < 0.75 * (wide.high - wide.low)


def test_one_deal_per_cell_has_no_interval() -> None:
    """With a single deal in a cell the bootstrap is undefined: NaN ends (``None`` in JSON), the value kept."""
    low, high = [0.0, 0.0], [1.0, 1.0]
    found = scores.aggregate([np.array([0.5]), np.array([0.25, 0.75])], low, high, seed=1)
    for interval in found.values():
        assert interval.value == 0.5
        assert math.isnan(interval.low) and math.isnan(interval.high) and not interval.defined
        assert interval.to_dict() == {"value": 0.5, "low": None, "high": None}


def test_equal_references_cannot_normalise() -> None:
    """A cell where ``random`` and ``search`` have the same reference is a ``ValueError``, not a division by 0."""
    with pytest.raises(ValueError, match=r"random and search the same score: it cannot be normalised"):
        scores.aggregate(cells_with_means([0.3, 0.4]), [0.25, 0.1], [0.8, 0.1], seed=1)


def test_a_cell_interval_stays_within_its_bounds() -> None:
    """A win share's Student-t interval is clipped to [0, 1]; a margin's is not clipped."""
    rows = np.array([0.0, 0.0, 0.0, 1.0])
    win = scores.cell_interval(rows, (0.0, 1.0))
    assert win.value == 0.25 and win.low == 0.0 and 0.25 < win.high <= 1.0
    margin = scores.cell_interval(rows)
    assert margin.low < 0.0
    assert scores.normalised_interval(Interval(0.5, 0.25, 0.75), 0.25, 0.75) == Interval(0.5, 0.0, 1.0)
