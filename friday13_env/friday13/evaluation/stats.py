"""Per-game outcomes and their confidence intervals, kept free of any game playing.

Three numbers describe how a seat did in one game: its *win share* (1 for a sole winner, ``1/k``
for each of ``k`` players tied for the lowest total, else 0, so the shares of a game always sum to
1), its bad-luck points, and its *rank* (1 = lowest total; tied players get the average of the
ranks they span, so the ranks of a game always sum to ``n(n+1)/2``). Both conventions keep a
shared result from being counted as a full win or a full loss for everybody involved.

Intervals are Student-t intervals on independent samples. The tournament feeds them one sample
per *deal* (the mean over every seat rotation of that deal), because the rotations of one deal
share its cards and are therefore not independent of each other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from friday13_env.friday13.engine import winners

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Estimate:
    """A sample mean with the half-width of its 95% confidence interval.

    ``half_width`` is ``nan`` for fewer than two samples: one sample says nothing about spread.
    """

    mean: float
    half_width: float
    samples: int

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def __str__(self) -> str:
        return f"{self.mean:.3f} ± {self.half_width:.3f}"

    def to_dict(self) -> dict[str, float | int | None]:
        """JSON-ready: ``nan`` becomes ``None`` because JSON has no NaN."""
        finite = not math.isnan(self.half_width)
        return {
            "mean": self.mean,
            "ci_low": self.low if finite else None,
            "ci_high": self.high if finite else None,
            "half_width": self.half_width if finite else None,
            "samples": self.samples,
        }


def win_shares(scores: Sequence[int]) -> list[float]:
    """Each seat's share of the win: the ``k`` players tied for the lowest total get ``1/k`` each."""
    best = winners(scores)
    share = 1.0 / len(best)
    return [share if seat in best else 0.0 for seat in range(len(scores))]


def average_ranks(scores: Sequence[int]) -> list[float]:
    """Rank 1 for the lowest total; tied seats share the mean of the ranks they occupy."""
    ranks = []
    for score in scores:
        below = sum(other < score for other in scores)
        tied = sum(other == score for other in scores)
        ranks.append(below + (tied + 1) / 2)
    return ranks


def mean_interval(samples: Sequence[float] | np.ndarray) -> Estimate:
    """Mean and 95% Student-t interval ``t(0.975, m-1) * s / sqrt(m)`` of ``m`` independent samples."""
    values = np.asarray(samples, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"need a non-empty 1-d sample, got shape {values.shape}")
    mean = float(values.mean())
    if values.size < 2:
        return Estimate(mean, math.nan, 1)
    spread = float(values.std(ddof=1)) / math.sqrt(values.size)
    return Estimate(mean, t_quantile((1 + CONFIDENCE) / 2, values.size - 1) * spread, int(values.size))


def t_cdf(t: float, df: int) -> float:
    """Student-t distribution function for an integer ``df``, in closed form (Abramowitz & Stegun 26.7.3-4).

    With ``theta = atan(t / sqrt(df))`` the distribution is a finite trigonometric series, so no
    special-function library (scipy) is needed for exact quantiles.
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be a positive int, got {df}")
    theta = math.atan(t / math.sqrt(df))
    cos2 = math.cos(theta) ** 2
    if df % 2:
        series, term = 0.0, 1.0
        for k in range(1, (df - 1) // 2 + 1):
            series += term
            term *= cos2 * (2 * k) / (2 * k + 1)
        return 0.5 + (theta + math.sin(theta) * math.cos(theta) * series) / math.pi
    series, term = 0.0, 1.0
    for k in range(1, df // 2 + 1):
        series += term
        term *= cos2 * (2 * k - 1) / (2 * k)
    return 0.5 + 0.5 * math.sin(theta) * series


@cache
def t_quantile(probability: float, df: int) -> float:
    """The ``probability`` quantile (> 0.5) of Student's t with ``df`` degrees of freedom, by bisection."""
    if not 0.5 < probability < 1:
        raise ValueError(f"probability must be in (0.5, 1), got {probability}")
    low, high = 0.0, 1.0
    while t_cdf(high, df) < probability:
        low, high = high, 2 * high
    for _ in range(100):
        middle = (low + high) / 2
        if t_cdf(middle, df) < probability:
            low = middle
        else:
            high = middle
    return (low + high) / 2
