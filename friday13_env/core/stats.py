"""95% confidence intervals for evaluations, with no game in them: a mean with its Student-t interval
(:func:`mean_interval`, an :class:`Estimate`) and a proportion with its Wilson score interval
(:func:`wilson_interval`, an :class:`Interval`).

The t intervals assume independent samples; an interval is clipped to the values its metric can take
(a win rate to [0, 1], a rank to [1, n], points to [0, inf)): near a bound the t interval would otherwise
promise a win rate above 1. Student-t quantiles are exact (a closed-form distribution function and
bisection), so no special-function library (scipy) is needed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

CONFIDENCE = 0.95
"""The confidence level of every interval here."""
Z_95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""


UNDEFINED = "interval undefined: n < 2"
"""What is printed instead of an interval that one sample cannot give (never ``nan``)."""


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with the ends of its 95% confidence interval; both ends are ``nan`` where the
    interval is undefined (the mean of a single sample)."""

    value: float
    low: float
    high: float

    @property
    def defined(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))

    def formatted(self, digits: int, scale: float = 1.0, unit: str = "", width: int = 0) -> str:
        """``value [low, high]`` (each times ``scale`` and padded to ``width``, ``unit`` after the value), or the
        value and ``(interval undefined: n < 2)``."""
        value = f"{scale * self.value:{width}.{digits}f}{unit}"
        if not self.defined:
            return f"{value} ({UNDEFINED})"
        return f"{value} [{scale * self.low:{width}.{digits}f}, {scale * self.high:{width}.{digits}f}]"

    def to_dict(self) -> dict[str, float | None]:
        """JSON-ready: undefined ends become ``None`` because JSON has no NaN."""
        defined = self.defined
        return {"value": self.value, "low": self.low if defined else None, "high": self.high if defined else None}


@dataclass(frozen=True)
class Estimate:
    """A sample mean with the half-width of its 95% confidence interval.

    ``half_width`` is ``nan`` for fewer than two samples: one sample says nothing about spread.
    ``low`` and ``high`` are the interval's ends, clipped to ``[lowest, highest]``, the values the
    metric can take (unbounded by default).
    """

    mean: float
    half_width: float
    samples: int
    lowest: float = -math.inf
    highest: float = math.inf

    @property
    def low(self) -> float:
        """The interval's lower end, clipped to ``lowest``; ``nan`` where it is undefined (one sample)."""
        return math.nan if math.isnan(self.half_width) else max(self.mean - self.half_width, self.lowest)

    @property
    def high(self) -> float:
        """The interval's upper end, clipped to ``highest``; ``nan`` where it is undefined (one sample)."""
        return math.nan if math.isnan(self.half_width) else min(self.mean + self.half_width, self.highest)

    @property
    def clipped(self) -> bool:
        """Whether a bound cut the interval, so that it is no longer ``mean ± half_width``."""
        return self.mean - self.half_width < self.lowest or self.mean + self.half_width > self.highest

    @property
    def interval(self) -> Interval:
        """The mean and the interval's ends (``nan`` for a single sample: the interval is undefined)."""
        return Interval(self.mean, self.low, self.high)

    def formatted(self, digits: int = 3) -> str:
        """``mean ± half-width``, ``mean [low, high]`` where a bound clipped the interval, the mean and
        ``(interval undefined: n < 2)`` for a single sample (never ``nan``), or the mean and ``(no spread in n
        samples)`` where every sample was the same: a t interval of width 0 would claim a certainty it has not
        measured (the rate is at or near a bound; more samples are the remedy)."""
        if math.isnan(self.half_width):
            return f"{self.mean:.{digits}f} ({UNDEFINED})"
        if self.half_width == 0:
            return f"{self.mean:.{digits}f} (no spread in {self.samples} samples)"
        if self.clipped:
            return f"{self.mean:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"
        return f"{self.mean:.{digits}f} ± {self.half_width:.{digits}f}"

    def __str__(self) -> str:
        return self.formatted()

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


NO_SPREAD = 1e-12
"""Samples that differ by no more than this are one value (no spread): a tie's share summed over seatings and seats
in another order (1/3 as 0.33333333333333326) is the same sample, and gives no interval of width 1e-18."""


def mean_interval(
    samples: Sequence[float] | np.ndarray, bounds: tuple[float, float] = (-math.inf, math.inf)
) -> Estimate:
    """Mean and 95% Student-t interval ``t(0.975, m-1) * s / sqrt(m)`` of ``m`` independent samples,
    its ends clipped to ``bounds`` (the values the metric can take, e.g. ``(0, 1)`` for a win rate)."""
    values = np.asarray(samples, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"need a non-empty 1-d sample, got shape {values.shape}")
    lowest, highest = bounds
    if not lowest <= highest:
        raise ValueError(f"bounds must be (low, high) with low <= high, got {bounds}")
    if values.size < 2:
        return Estimate(float(values[0]), math.nan, 1, lowest, highest)
    if float(values.max() - values.min()) <= NO_SPREAD:  # every sample the same, but for the rounding of a mean
        return Estimate(float(values[0]), 0.0, int(values.size), lowest, highest)
    mean = float(values.mean())
    spread = float(values.std(ddof=1)) / math.sqrt(values.size)
    half_width = t_quantile_975(values.size - 1) * spread
    return Estimate(mean, half_width, int(values.size), lowest, highest)


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> Interval:
    """Wilson score interval for a binomial proportion (good at rates near 0 or 1, always inside [0, 1])."""
    if trials <= 0:
        raise ValueError(f"trials must be positive, got {trials}")
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in 0..{trials}, got {successes}")
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return Interval(p, min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half)))


def t_quantile_975(dof: int) -> float:
    """The two-sided 95% Student-t quantile ``t(0.975, dof)`` (``inf`` for ``dof`` < 1)."""
    return t_quantile(0.975, dof) if dof >= 1 else math.inf


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
