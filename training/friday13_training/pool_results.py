"""The learner's recent results against each member of its opponent pool, and the draw weights of prioritised
fictitious self-play (PFSP, AlphaStar: Vinyals et al. 2019) read from them.

A member is known by its name (an ``--opponents`` spec, or a snapshot's name): a spec listed twice shares one
record and, as in a uniform draw, is drawn twice as often. Each finished game against the pool adds the learner's
win share (``1/k`` for a win shared by ``k``) to every member at its table. The sums age by ``DECAY`` each rollout,
so the estimate follows the learner as it changes; ``PRIOR_GAMES`` games at the equal share of the run's table
sizes stand in for the games not yet played, so a new member starts as an equal and a member no longer drawn drifts
back to that and is drawn again.

A member's weight is ``(1 - x) ** power``, ``x`` the learner's estimated win share against it: the members the
learner still loses to are drawn most (power 0: uniform).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from friday13_env.friday13.batched.engine import MAX_SEATS
from friday13_env.friday13.engine import winning_seats

DECAY = 0.9
"""What one rollout leaves of the sums before it (a half-life of about 6.6 rollouts)."""
PRIOR_GAMES = 20.0
"""Games at the equal share that every member's estimate starts from."""


class PoolResults:
    """Aged sums of the learner's win shares and games against each member, by name."""

    def __init__(self, players: Sequence[int], state: dict[str, list[float]] | None = None) -> None:
        self.equal_share = float(np.mean([1.0 / size for size in players]))
        self.sums: dict[str, list[float]] = {
            name: [float(won), float(games)] for name, (won, games) in (state or {}).items()
        }

    def state(self) -> dict[str, list[float]]:
        """The sums as a run's record keeps them (JSON: name -> [won, games])."""
        return {name: list(sums) for name, sums in self.sums.items()}

    def age(self, members: Sequence[str]) -> None:
        """One rollout on: every sum times ``DECAY``; the records of names no longer in the pool leave."""
        self.sums = {name: [won * DECAY, games * DECAY] for name, (won, games) in self.sums.items() if name in members}

    def add(self, name: str, won: float, games: int) -> None:
        """``games`` more finished games against ``name`` in which the learner won ``won`` in all."""
        sums = self.sums.setdefault(name, [0.0, 0.0])
        sums[0] += won
        sums[1] += games

    def win_share(self, name: str) -> float:
        """The learner's estimated win share against ``name``."""
        won, games = self.sums.get(name, (0.0, 0.0))
        return (won + PRIOR_GAMES * self.equal_share) / (games + PRIOR_GAMES)

    def weights(self, members: Sequence[str], power: float) -> np.ndarray:
        """The probability of drawing each entry of ``members`` (a name listed twice counts twice)."""
        raw = np.array([(1.0 - self.win_share(name)) ** power for name in members])
        if raw.sum() <= 0:  # the learner wins every game against every member: no one is preferred
            raw = np.ones(len(members))
        return raw / raw.sum()


def state_problem(state: object) -> str | None:
    """What is wrong with a record's pool results (``PoolResults.state``), or ``None``: an object of names, each with
    two finite numbers, the games at least the win shares and neither below 0."""
    if not isinstance(state, dict):
        return f"pool_results is {type(state).__name__}, not an object of names"
    for name, sums in state.items():
        numbers = isinstance(sums, list) and len(sums) == 2
        numbers = numbers and all(type(value) is float or (type(value) is int and abs(value) < 2**53) for value in sums)
        if not numbers or not all(math.isfinite(value) for value in sums) or not 0 <= sums[0] <= sums[1]:
            return f"pool_results[{name!r}] is {sums!r}, not [won, games] with 0 <= won <= games (finite numbers)"
    return None


def learner_shares(scores: np.ndarray, sizes: np.ndarray, learner: np.ndarray) -> np.ndarray:
    """The learner's win share in each finished game: ``scores`` ``(g, 6)`` final totals (padded past each game's
    ``sizes``), ``learner`` ``(g, 6)`` its seats; the lowest total wins, ``k`` tied seats get ``1/k`` each."""
    top = winning_seats(scores, sizes)
    return (top & learner).sum(axis=1) / top.sum(axis=1)


def record_games(
    results: PoolResults, members: Sequence[str], seated: np.ndarray, learner: np.ndarray, shares: np.ndarray,
    sizes: np.ndarray,
) -> None:  # fmt: skip
    """Add finished pool games to ``results``: ``seated`` ``(g, 6)`` the pool index at each seat, ``learner`` the
    learner's seats, ``shares`` its win share in each game; every member at a table (once, however many seats it
    holds) gets the game."""
    others = ~learner & (np.arange(MAX_SEATS) < sizes[:, None])
    present: dict[str, np.ndarray] = {}
    for index, name in enumerate(members):
        at_table = (others & (seated == index)).any(axis=1)
        present[name] = present[name] | at_table if name in present else at_table
    for name, at_table in present.items():
        if at_table.any():
            results.add(name, float(shares[at_table].sum()), int(at_table.sum()))
