"""From per-deal rows to the numbers a benchmark reports: per-cell means, normalised scores, and one aggregate.

Per cell: the mean win share (and margin) with a Student-t 95% interval over deals (each deal is one
independent sample: its seat rotations share its cards). The *normalised score* of a cell is
``(w - w_random) / (w_search - w_random)`` with the anchors' reference win shares of that cell: 0 plays like
``random``, 1 like ``search``, above 1 better than ``search``. The suite's aggregate is the interquartile mean
(IQM) of the cells' normalised scores, as rliable recommends for few tasks (with 4 cells: the mean of the
middle two; with 3 or fewer: the mean), and its 95% interval is a percentile bootstrap that resamples the
deals within each cell (stratified), both from ``scipy.stats`` (``trim_mean``, ``bootstrap``). The references
are constants of the suite version, like Atari's human and random scores: their own sampling error is not in
the interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from friday13_env.core.extras import BENCHMARK_EXTRA, missing_extra
from friday13_env.core.stats import Interval, mean_interval

BOOTSTRAP_RESAMPLES = 2_000
IQM_TRIM = 0.25


def cell_interval(rows: np.ndarray, bounds: tuple[float, float] = (-math.inf, math.inf)) -> Interval:
    """Mean of one column of a cell's per-deal rows, with its Student-t 95% interval."""
    return mean_interval(rows, bounds).interval


def normalise(value: float, random_score: float, search_score: float) -> float:
    return (value - random_score) / (search_score - random_score)


def normalised_interval(win: Interval, random_score: float, search_score: float) -> Interval:
    """A cell's win-share interval on the normalised scale (an affine map of its ends)."""
    return Interval(
        normalise(win.value, random_score, search_score),
        normalise(win.low, random_score, search_score),
        normalise(win.high, random_score, search_score),
    )


def scipy_stats() -> Any:
    """``scipy.stats``, or a ``ModuleNotFoundError`` of one line naming the ``benchmark`` extra."""
    try:
        from scipy import stats
    except ModuleNotFoundError as error:
        missing_extra(error, "the benchmark's aggregate scores", BENCHMARK_EXTRA)
        raise
    return stats


def aggregate(
    cells: Sequence[np.ndarray], random_scores: Sequence[float], search_scores: Sequence[float], seed: int
) -> dict[str, Interval]:
    """IQM and mean of the cells' normalised win shares, each with a stratified percentile-bootstrap interval.

    ``cells[c]`` holds the per-deal win shares of cell ``c``; the bootstrap is seeded with ``seed``, so the
    same rows give the same intervals.
    """
    stats = scipy_stats()
    data = tuple(np.asarray(cell, dtype=np.float64) for cell in cells)
    results = {}
    for name, statistic in _statistics(stats, random_scores, search_scores).items():
        value = float(statistic(*data))
        if min(len(cell) for cell in data) < 2:
            results[name] = Interval(value, math.nan, math.nan)
            continue
        bootstrap = stats.bootstrap(
            data,
            statistic,
            n_resamples=BOOTSTRAP_RESAMPLES,
            vectorized=True,
            paired=False,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
        interval = bootstrap.confidence_interval
        results[name] = Interval(value, float(interval.low), float(interval.high))
    return results


Statistic = Callable[..., np.ndarray]


def _statistics(stats: Any, random_scores: Sequence[float], search_scores: Sequence[float]) -> dict[str, Statistic]:
    """The aggregate's statistics over per-cell samples (vectorised along ``axis``, as ``scipy.stats.bootstrap``
    calls them): the IQM and the mean of the cells' normalised means."""
    low = np.asarray(random_scores, dtype=np.float64)
    span = np.asarray(search_scores, dtype=np.float64) - low
    if np.any(span == 0):
        raise ValueError("a cell's references give random and search the same score: it cannot be normalised")

    def normalised_means(samples: Sequence[np.ndarray], axis: int) -> np.ndarray:
        means = np.stack([np.mean(sample, axis=axis) for sample in samples], axis=-1)
        return (means - low) / span

    def iqm(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
        return stats.trim_mean(normalised_means(samples, axis), IQM_TRIM, axis=-1)

    def mean(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(normalised_means(samples, axis), axis=-1)

    return {"iqm": iqm, "mean": mean}
