"""0.28.0's review of the evaluation's statistics: samples that are one value but for the rounding of a mean have no
spread, and an interval that one does have is never of width 1e-18."""

from __future__ import annotations

import numpy as np

from friday13_env.core.stats import mean_interval


def test_samples_equal_but_for_rounding_have_no_spread() -> None:
    """A three-way tie's share summed in another order (0.33333333333333326) is 1/3: 500 such deal means print
    "no spread", not ``0.333 ± 0.000`` with a half-width of 5e-18."""
    samples = np.array([1 / 3] * 499 + [0.33333333333333326])
    estimate = mean_interval(samples, (0.0, 1.0))
    assert estimate.half_width == 0.0, estimate
    assert estimate.formatted() == "0.333 (no spread in 500 samples)"


def test_samples_that_differ_keep_their_interval() -> None:
    """Real spread, however small next to the mean, still gives a Student-t interval."""
    estimate = mean_interval(np.array([0.5] * 99 + [0.5 + 1e-9]), (0.0, 1.0))
    assert 0.0 < estimate.half_width < 1e-9
