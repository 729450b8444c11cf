"""Friday the 13th's rewards: the reward modes and the one computation of each seat's reward when a round ends.

Every environment of the game takes a ``reward`` mode from ``REWARD_MODES``, and every one of them computes it
here: ``seat_rewards`` for many tables at once (the vector environment, self-play, the training scripts) and
``table_rewards``, the same function on one table's row, for the PettingZoo environment (and through it the
single-agent one), so the scalar and the batched environments cannot drift apart by a bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from friday13_env.core.checks import check_choice
from friday13_env.friday13.cards import FRIDAY_POINTS, OMEN_POINTS, Deck, as_deck
from friday13_env.friday13.engine import Rules, winning_seats

REWARD_MODES: dict[str, str] = {
    "points": "every agent receives minus its bad-luck points at the end of each round",
    "win": "at the end of the game, 1 for every player sharing the lowest total, else 0",
    "relative": "at the end of each round, the table's mean points minus the agent's own (zero-sum)",
    "rival": (
        "at the end of each round, the change of the agent's margin over its best rival (the lowest total of the "
        "others minus its own): a game's rewards sum to its final margin, positive when it wins alone"
    ),
}


def illegal_action_reward(mode: str, deck: Deck | str, num_rounds: int) -> float:
    """The reward of a player whose illegal action ends its game, where the environment ends games so
    (``illegal_action="end"``; the others receive 0, PettingZoo's convention).

    It lies below every return legal play can still reach from any point of any game with this deck and number of
    rounds, so an agent that learns without the action mask never gains by an illegal move (a fixed -1 beat
    playing on under every mode but ``win``). No round scores more than the deck's points (1 per omen card, 2 per
    Friday the 13th card), so no game's ``points`` or ``relative`` rewards sum below ``-num_rounds`` times that;
    a game's ``rival`` rewards from any point sum to the final margin minus the current one, each within that
    bound, hence twice it; ``win`` rewards are never negative.
    """
    check_choice("reward mode", mode, REWARD_MODES)
    deck = as_deck(deck)
    rules = Rules(deck=deck, num_rounds=num_rounds)
    round_bound = (deck.size - deck.friday_count) * OMEN_POINTS + deck.friday_count * FRIDAY_POINTS
    game_bound = float(rules.num_rounds * round_bound)
    return {"win": -1.0, "points": -game_bound, "relative": -game_bound, "rival": -2 * game_bound}[mode]


class RoundScores(Protocol):
    """What one play did to the scores of ``m`` tables, per absolute seat (rows padded with zeros to the widest
    table); ``GameBatch.step``'s ``StepResult`` is one."""

    @property
    def num_players(self) -> np.ndarray:
        """``(m,)``: each table's size."""

    @property
    def round_over(self) -> np.ndarray:
        """``(m,)`` bool: the play ended the table's round."""

    @property
    def game_over(self) -> np.ndarray:
        """``(m,)`` bool: the play ended the table's game."""

    @property
    def round_points(self) -> np.ndarray:
        """``(m, seats)``: each seat's bad-luck points of the round that ended (zeros elsewhere)."""

    @property
    def round_totals(self) -> np.ndarray:
        """``(m, seats)``: each seat's total after the round that ended (zeros elsewhere)."""


def seat_rewards(result: RoundScores, mode: str) -> np.ndarray:
    """``(m, seats)`` float64: each absolute seat's reward from one play, in one of ``REWARD_MODES`` (0 for empty
    seats and for tables whose round went on; never ``-0.0``)."""
    points = result.round_points.astype(np.float64)
    seats = np.arange(points.shape[1])
    if mode == "points":
        return 0.0 - points
    present = seats[None, :] < result.num_players[:, None]
    if mode == "relative":
        mean = points.sum(axis=1) / present.sum(axis=1)
        return np.where(result.round_over[:, None] & present, mean[:, None] - points, 0.0)
    if mode == "rival":
        rewards = np.zeros_like(points)
        rows = np.flatnonzero(result.round_over)
        after = result.round_totals[rows].astype(np.float64)
        rewards[rows] = rival_margins(after, present[rows]) - rival_margins(after - points[rows], present[rows])
        return rewards
    if mode != "win":  # every mode is checked where an environment is built; this is the last line of defence
        raise ValueError(f"reward mode must be one of {sorted(REWARD_MODES)}, got {mode!r}")
    return (result.game_over[:, None] & winning_seats(result.round_totals, result.num_players)).astype(np.float64)


def rival_margins(totals: np.ndarray, present: np.ndarray) -> np.ndarray:
    """``(m, seats)``: each present seat's margin over its best rival, the lowest total of the other present seats
    minus its own (the ``rival`` reward's running sum)."""
    others = np.where(present[:, None, :] & ~np.eye(totals.shape[1], dtype=bool), totals[:, None, :], np.inf)
    return np.where(present, others.min(axis=2) - totals, 0.0)


def table_rewards(points: Sequence[int], totals: Sequence[int], game_over: bool, mode: str) -> list[float]:
    """Each seat's reward at the end of one table's round (``points``: the round's, ``totals``: the totals after
    it): ``seat_rewards`` on that table's row, as Python floats."""
    row = _OneRound(
        num_players=np.array([len(points)]),
        round_over=np.array([True]),
        game_over=np.array([game_over]),
        round_points=np.array([points]),
        round_totals=np.array([totals]),
    )
    return seat_rewards(row, mode)[0].tolist()


@dataclass(frozen=True)
class _OneRound:
    """One table's ``RoundScores``, for ``table_rewards``."""

    num_players: np.ndarray
    round_over: np.ndarray
    game_over: np.ndarray
    round_points: np.ndarray
    round_totals: np.ndarray
