"""The options of Friday the 13th's environments, checked once and in the game's wording.

The PettingZoo environment, the single-agent ``Friday13-v0``, its vector form and self-play all take some of the
same options; their checks live here so that each option is refused with the same words everywhere.
:class:`LearnerTable` holds the options of a table where one learner plays against opponents (table sizes,
the learner's seat, a fixed line-up or a pool of opponents), shared by ``Friday13-v0`` and its vector form.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from friday13_env.core import checks
from friday13_env.friday13.engine import check_player_counts

ILLEGAL_ACTION_MODES = ("end", "raise")
"""What an illegal action does: end the episode (the AEC ``env()`` convention, as in the solo game) or raise."""
DEFAULT_OPPONENT_POOL = ("random",)
"""The opponents of a learner's table when neither ``opponents`` nor ``opponent_pool`` is given."""

Spec = TypeVar("Spec")
"""What an environment takes as an opponent (an agent spec, an agent, a factory...)."""


def check_choice(option: str, value: object, allowed: Collection[Any]) -> None:
    """A ``ValueError`` naming the allowed values unless ``value`` is one (never a ``TypeError``, whatever it is)."""
    checks.check_choice(option, value, allowed, checks.UNKNOWN_VALUE)


def check_reset_options(options: object, *, ignored: Collection[str] = ()) -> None:
    """No environment of this game takes reset options: anything but ``None`` or ``{}`` is a ``ValueError``.

    ``ignored`` names keys that are accepted and ignored (the AEC environments pass PettingZoo's probe option);
    every other key is refused, so a misspelt or imagined option never passes silently.
    """
    if options is None or (isinstance(options, Mapping) and not (options.keys() - set(ignored))):
        return
    named = sorted(map(str, options.keys() - set(ignored))) if isinstance(options, Mapping) else options
    raise ValueError(f"reset() takes no options, got {named!r}; configure the environment when making it")


def check_seat(seat: int | None, counts: tuple[int, ...]) -> int | None:
    """``seat`` (``None``: drawn per episode, or a seat of the smallest table size) as an int, or a ``ValueError``."""
    if seat is None:
        return None
    if isinstance(seat, bool) or not isinstance(seat, int | np.integer) or not 0 <= seat < counts[0]:
        raise ValueError(f"seat must be None (drawn per episode) or an int in 0..{counts[0] - 1}, got {seat!r}")
    return int(seat)


def check_pool(specs: Sequence[Spec]) -> tuple[Spec, ...]:
    """An opponent pool as a tuple, or a ``ValueError`` unless it is a non-empty list (its entries are the
    environment's to check)."""
    if isinstance(specs, str | os.PathLike) or not isinstance(specs, Sequence) or not specs:
        raise ValueError(f"opponent_pool must be a non-empty list of opponents (at least one to draw), got {specs!r}")
    return tuple(specs)


@dataclass(frozen=True)
class LearnerTable(Generic[Spec]):
    """Who sits at a learner's table: its sizes, the learner's seat and the opponents, checked once
    (``checked``); the environment checks each opponent entry itself, as only it knows what it can seat."""

    player_counts: tuple[int, ...]
    """The table sizes drawn from, sorted."""
    seat: int | None
    """The learner's seat, or ``None`` to draw it per game."""
    opponents: tuple[Spec, ...] | None
    """A fixed line-up, one opponent per other seat clockwise from the learner (the first sits just after it), for
    the largest table size (a smaller table seats the first ones); ``None``: each seat draws from the pool."""
    opponent_pool: tuple[Spec, ...]
    """What each other seat draws its opponent from, per game (empty with a fixed line-up)."""

    @classmethod
    def checked(
        cls,
        num_players: int | Sequence[int],
        opponents: Sequence[Spec] | None,
        opponent_pool: Sequence[Spec] | None,
        seat: int | None,
        default_pool: Sequence[Spec],
    ) -> LearnerTable[Spec]:
        """The options as the environments take them, or a ``ValueError`` naming the first bad one: a size in 3..6
        (or a list of them), a seat of the smallest size, ``opponents`` (one per other seat) or ``opponent_pool``
        but not both; neither draws from ``default_pool``."""
        counts = check_player_counts(num_players)
        checked_seat = check_seat(seat, counts)
        if opponents is not None and opponent_pool is not None:
            raise ValueError("give either opponents (one per seat) or opponent_pool (drawn per seat), not both")
        if opponents is None:
            return cls(counts, checked_seat, None, check_pool(default_pool if opponent_pool is None else opponent_pool))
        needed, most = counts[-1] - 1, counts[-1]
        if isinstance(opponents, str | os.PathLike) or not isinstance(opponents, Sequence):
            raise ValueError(
                f"opponents must be a list with one opponent per other seat: {needed} for {most} players, "
                f"got {opponents!r}"
            )
        if len(opponents) != needed:
            raise ValueError(
                f"opponents must list one opponent per other seat: {needed} for {most} players, got {len(opponents)}"
            )
        return cls(counts, checked_seat, tuple(opponents), ())

    def with_pool(self, specs: Sequence[Spec]) -> LearnerTable[Spec]:
        """The same table with every opponent seat drawn from ``specs`` (a fixed line-up is dropped)."""
        return dataclasses.replace(self, opponents=None, opponent_pool=check_pool(specs))
