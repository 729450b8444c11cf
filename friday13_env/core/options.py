"""Checks of agents' constructor options, for both games, so that a bad value (``budget="8"``,
``samples=2.5``, ``margin="high"``) is a ``ValueError`` naming the option and what it takes, not a
``TypeError`` deep inside.

``owner`` names the agent in the message (``"search option budget must be ..."``) and ``takes`` says
what the option takes in the agent's own words (``"a positive int (simulated card plays per move)"``).
``available_cpus`` is the bound of a ``workers`` option: more processes than CPUs only add overhead.
"""

from __future__ import annotations

import math
import os

import numpy as np

from friday13_env.core.specs import shown

__all__ = ["MAX_GAMES", "available_cpus", "count_option", "number_option"]

MAX_GAMES = 1_000_000
"""The most games an evaluation plays per matchup and table size (the card game's ``--games``) or per agent and level
(the solo game's): days of play for the slower agents, and about 24 MB of the card game's samples per matchup and
table size (a deal has at least as many games as agents, each 3 numbers of 8 bytes). More is refused before any
game, as ``ratings --tables`` is over its cap."""


def available_cpus() -> int:
    """The CPUs this process may run on: ``os.process_cpu_count()`` (Python 3.13+), else the size of its
    affinity mask where the system has one, else ``os.cpu_count()``; at least 1."""
    process_cpu_count = getattr(os, "process_cpu_count", None)
    if process_cpu_count is not None:
        count = process_cpu_count()
    elif hasattr(os, "sched_getaffinity"):
        count = len(os.sched_getaffinity(0))
    else:
        count = os.cpu_count()
    return max(1, count or 1)


def pool_size(workers: int, units: int) -> int:
    """The processes a run of ``units`` units of work plays on: ``workers``, at most the CPUs this process may use and
    no more than there are units (one process more would have nothing to play)."""
    return min(workers, available_cpus(), units)


def count_option(
    name: str,
    value: object,
    minimum: int = 1,
    *,
    maximum: int | None = None,
    owner: str | None = None,
    takes: str | None = None,
) -> int:
    """An integer option of at least ``minimum`` and at most ``maximum`` if one is given (bools and floats are
    refused, even ``8.0``)."""
    if (
        isinstance(value, bool | np.bool_)
        or not isinstance(value, int | np.integer)
        or value < minimum
        or (maximum is not None and value > maximum)
    ):
        allowed = f"an integer >= {minimum}" if maximum is None else f"an integer from {minimum} to {maximum:,}"
        raise ValueError(_message(name, value, owner, takes or allowed))
    return int(value)


def number_option(
    name: str,
    value: object,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    owner: str | None = None,
    takes: str | None = None,
) -> float:
    """A finite real-number option (an int or a float, not a bool or a string) in ``[low, high]``."""
    if (
        isinstance(value, bool | np.bool_)
        or not isinstance(value, int | float | np.integer | np.floating)
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        raise ValueError(_message(name, value, owner, takes or "a finite number"))
    return float(value)


def _message(name: str, value: object, owner: str | None, takes: str) -> str:
    option = name if owner is None else f"{owner} option {name}"
    return f"{option} must be {takes}, got {shown(value)}"
