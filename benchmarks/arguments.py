"""Command-line checks shared by the benchmark scripts, so that each refuses a bad setting the same way.

A benchmark given a zero, negative or non-finite time or count, or a list naming one thing twice, used to divide by
zero, loop on nothing, time one candidate twice under one row, or write a ``NaN`` after minutes of measuring. Here
such a value is argparse's error (exit 2) naming the flag, what it takes and what it got, before anything is
measured: the argparse types come from the training scripts' ``bounded`` (a bound, and finite floats), so both kinds
of script word a refused number alike.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Hashable, Sequence

from friday13_training.runs import MAX_SEED
from friday13_training.script_args import bounded

from friday13_env.core.specs import first_repeat
from friday13_env.friday13.batched.engine import MAX_GAMES
from friday13_env.friday13.cards import DECKS
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS

COUNT = bounded(int, {"minimum": 1})
"""A count of at least 1: repeats, slices, positions, a budget."""


def count_up_to(maximum: int) -> Callable[[str], int]:
    """A count of 1 to ``maximum`` (argparse's ``type``): for a count each of which costs the machine something it
    has only so much of (connections, memory), refused before the run rather than met as a failure during it."""
    parse: Callable[[str], int] = bounded(int, {"minimum": 1, "maximum": maximum})
    return parse


POSITIVE = bounded(float, {"above": 0})
"""A finite number above 0: a time in seconds, a temperature."""
NON_NEGATIVE = bounded(float, {"minimum": 0})
"""A finite number of at least 0: a pause in seconds (0: none)."""
SEED = bounded(int, {"minimum": 0, "maximum": MAX_SEED})
"""A seed, as the training scripts take one: 0 to 2**32 - 1 (numpy refuses a negative one, deep inside a run)."""
TABLES = count_up_to(MAX_GAMES)
"""A number of tables played at once (a batch, ``num_envs``): 1 to the batched engine's ``MAX_GAMES``."""
PLAYER_COUNTS = range(MIN_PLAYERS, MAX_PLAYERS + 1)
"""The card game's table sizes, as argparse ``choices``."""
DECK_NAMES = sorted(DECKS)
"""The card game's decks, as argparse ``choices``."""


def check_distinct(parser: argparse.ArgumentParser, flag: str, values: Sequence[Hashable]) -> None:
    """argparse's error unless each of a list flag's ``values`` is there once: a value given twice would be measured
    twice under one name (the second row replacing the first), not measure anything more."""
    repeat = first_repeat(values)
    if repeat is not None:
        parser.error(f"argument {flag}: {values[repeat[0]]} is listed twice; list each value once")
