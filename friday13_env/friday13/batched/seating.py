"""Who sits where when new games start at batched tables: the one draw of a learner's seat and its opponents.

The vector environment (``Friday13VectorEnv``), the training scripts' self-play tables and the RLlib adapter all
seat a learner at new games the same way, from their own Generator: ``seat_learners`` makes the draws, in one
order, so that a seed seats the same players wherever it is used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from friday13_env.friday13.batched.engine import MAX_SEATS


@dataclass(frozen=True)
class Seating:
    """The outcome of ``seat_learners``: at ``games`` the learner holds one seat and opponents the others; every
    other game given is pure self-play (the learner at every seat)."""

    games: np.ndarray
    """``(g,)``: the games seated against opponents (a subset of those given, in their order)."""
    learner_seats: np.ndarray
    """``(g,)``: the learner's seat at each."""
    opponents: np.ndarray | None
    """``(g, 6)``: the index of the opponent drawn for each absolute seat (that of the learner's seat and of empty
    seats is drawn too, and means nothing); ``None`` when no opponents were drawn (a fixed line-up)."""

    @property
    def learner_mask(self) -> np.ndarray:
        """``(g, 6)`` bool: the learner's seat at each game."""
        return np.arange(MAX_SEATS)[None, :] == self.learner_seats[:, None]


def seat_learners(
    rng: np.random.Generator,
    games: np.ndarray,
    num_players: np.ndarray,
    *,
    pool_size: int | None,
    share: float | None = None,
    seat: int | None = None,
    per_seat: bool = True,
    weights: np.ndarray | None = None,
) -> Seating:
    """Draw who plays the new ``games`` (of sizes ``num_players``), each draw only when it is needed, in this order:

    1. with a ``share``, ``rng.random(games.size)``: the games below it seat the learner once against opponents,
       the others are pure self-play (without a ``share``, every game seats it once);
    2. if no game is left, or ``pool_size`` is 0 (no opponents to draw), nothing more;
    3. without a fixed ``seat``, ``rng.integers(n)``: the learner's seat at each game left;
    4. with a ``pool_size`` (not ``None``: a fixed line-up draws nothing), ``rng.integers(pool_size, size=(g, 6))``
       (``per_seat``: an opponent for each seat) or ``size=(g, 1)`` (one for the whole table); with ``weights``
       (the probability of each pool member) ``rng.choice(pool_size, size=..., p=weights)`` instead.
    """
    if weights is not None and (pool_size is None or np.shape(weights) != (pool_size,)):
        raise ValueError(f"weights of shape {np.shape(weights)} for a pool of {pool_size} members: give one per member")
    chosen, sizes = games, num_players
    if share is not None:
        picked = rng.random(games.size) < share
        chosen, sizes = games[picked], num_players[picked]
    if chosen.size == 0 or pool_size == 0:
        nothing = np.zeros(0, dtype=np.int64)
        return Seating(nothing, nothing, None if pool_size is None else np.zeros((0, MAX_SEATS), dtype=np.int64))
    learner_seats = rng.integers(sizes) if seat is None else np.full(chosen.size, seat)
    opponents = None
    if pool_size is not None:
        shape = (chosen.size, MAX_SEATS if per_seat else 1)
        drawn = rng.integers(pool_size, size=shape) if weights is None else rng.choice(pool_size, size=shape, p=weights)
        opponents = np.broadcast_to(drawn, (chosen.size, MAX_SEATS))
    return Seating(chosen, learner_seats, opponents)
