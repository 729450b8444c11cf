"""Checks of the solo agents' constructor options, so that a bad value (``budget="8"``, ``samples=2.5``,
``greedy="no"``) is a ``ValueError`` naming the option and what it takes, not a ``TypeError`` deep inside."""

from __future__ import annotations

import math

import numpy as np


def count_option(name: str, value: object, minimum: int = 1) -> int:
    """An integer option of at least ``minimum`` (bools and floats are refused, even ``8.0``)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def number_option(name: str, value: object) -> float:
    """A finite real-number option (an int or a float, not a bool or a string)."""
    if (
        isinstance(value, bool | np.bool_)
        or not isinstance(value, int | float | np.integer | np.floating)
        or not math.isfinite(value)
    ):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)
