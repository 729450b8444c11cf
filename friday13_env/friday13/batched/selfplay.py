"""Self-play on the batched engine: the caller plays every seat of N tables.

Each call gives the observation, legal mask and seat of the player to move at every table; the caller
answers with one action per table (from one shared policy, a population, snapshots, heuristics: its
choice, seat by seat), and gets every seat's reward back. Finished games are dealt afresh in the same
step, so the N tables never stop::

    tables = SelfPlayTables(4096, num_players=[3, 4, 5, 6], seed=0)
    turn = tables.reset()
    for _ in range(1000):
        actions = policy(turn.observations, turn.masks)          # the player to move at each table
        turn = tables.step(actions)
        learn(turn.rewards, turn.game_over)                      # (N, 6) per absolute seat, (N,)

Rewards follow the game's modes (:mod:`friday13_env.friday13.rewards`): ``points`` (minus each seat's
bad-luck points when a round ends), ``relative`` (the table's mean points minus the seat's own), ``rival`` (the
change of the seat's margin over its best rival) or ``win`` (1 for each seat sharing the lowest total at the
game's end). A seat's reward arrives on the step that ends the round, whoever played the last card, so a learner
credits it to that seat's latest move.

An exception part-way through ``step`` or ``reset`` (after the engine began to play: an interrupt, say) leaves the
tables refusing ``step`` until ``reset``; an action the engine refuses (nothing played) leaves them usable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from friday13_env.core.failures import FailureLatch
from friday13_env.friday13.batched.encoding import encode_observations, encode_states
from friday13_env.friday13.batched.engine import MAX_SEATS, GameBatch, check_num_games
from friday13_env.friday13.cards import check_deck_name, get_deck
from friday13_env.friday13.engine import Rules, check_player_counts
from friday13_env.friday13.options import check_choice
from friday13_env.friday13.rewards import REWARD_MODES, seat_rewards


@dataclass(frozen=True)
class Turn:
    """The tables after a reset or a step: who is to move and what they see, and what the last play did."""

    observations: np.ndarray
    """``(N, D)`` float32: the observation of the player to move at each table."""
    masks: np.ndarray
    """``(N, A)`` bool: that player's legal actions."""
    seats: np.ndarray
    """``(N,)``: that player's absolute seat."""
    num_players: np.ndarray
    """``(N,)``: each table's size (a new game may draw another one)."""
    rewards: np.ndarray
    """``(N, 6)`` float64: each absolute seat's reward from the last play (zeros after ``reset``)."""
    round_over: np.ndarray
    game_over: np.ndarray
    """``(N,)``: the last play ended the game; the table has been dealt a new one."""
    final_scores: np.ndarray
    """``(N, 6)``: each seat's total in a game that just ended (zeros elsewhere)."""


class SelfPlayTables:
    """N Friday the 13th tables whose every seat the caller plays.

    Args:
        num_tables: N.
        num_players: every table's size, or a list to draw each new game's size from.
        deck, num_rounds, reward: as in the AEC environment (``reward``: one of ``rewards.REWARD_MODES``).
        seed: seeds the one Generator behind every deal and drawn size.
    """

    def __init__(
        self,
        num_tables: int,
        num_players: int | Sequence[int] = 4,
        deck: str = "standard",
        num_rounds: int = 4,
        reward: str = "points",
        seed: int | None = None,
    ) -> None:
        check_num_games(num_tables, "num_tables")
        counts = check_player_counts(num_players)
        check_deck_name(deck)
        check_choice("reward mode", reward, REWARD_MODES)
        Rules(num_players=counts[0], num_rounds=num_rounds)  # validates num_rounds
        self.reward_mode = reward
        self._options = {
            "num_games": num_tables,
            "num_players": counts,
            "deck": get_deck(deck),
            "num_rounds": num_rounds,
        }
        self.batch = GameBatch(**self._options, seed=seed)  # type: ignore[arg-type]
        self._latch = FailureLatch("the tables may be left mid-turn, so their games cannot go on: call reset()")
        self._reset = False
        """Whether ``reset`` has dealt the tables: ``step`` refuses before it, as the RLlib tables do (the deal made
        here is not the one the first ``reset`` gives, so a step would play a game no ``Turn`` showed)."""

    @property
    def num_tables(self) -> int:
        return self.batch.num_games

    def reset(self, seed: int | None = None) -> Turn:
        """Deal a new game at every table (re-seeded when ``seed`` is given); unlocks tables an exception left
        mid-turn."""
        fresh = None if seed is None else GameBatch(**self._options, seed=seed)  # type: ignore[arg-type]
        self._reset = True
        self._latch.clear()
        with self._latch.guard("reset()"):
            if fresh is not None:
                self.batch = fresh
            else:
                self.batch.reset_games(np.arange(self.num_tables))
            zeros = np.zeros((self.num_tables, MAX_SEATS))
            no = np.zeros(self.num_tables, dtype=bool)
            return self._turn(zeros, no, no, zeros)

    def step(self, actions: np.ndarray) -> Turn:
        """Play one card at every table for the player to move (``IllegalActionError`` and nothing played
        if any is illegal). ``RuntimeError`` before the first ``reset``, and after an exception left the tables
        mid-turn, until ``reset``."""
        if not self._reset:
            raise RuntimeError("step() before reset(): call reset() first")
        self._latch.check()
        with self._latch.guard("step()", refusals=(ValueError,)):  # GameBatch.step refuses before it plays
            result = self.batch.step(actions)  # as given: the engine refuses what np.asarray would hide
        with self._latch.guard("step()"):
            return self._turn(
                seat_rewards(result, self.reward_mode), result.round_over, result.game_over, result.final_scores
            )

    def states(self) -> np.ndarray:
        """``(N, S)``: every table's global state (all hands), for centralised critics."""
        return encode_states(self.batch)

    def _turn(self, rewards: np.ndarray, round_over: np.ndarray, game_over: np.ndarray, final: np.ndarray) -> Turn:
        """A turn of arrays of its own, writable: the flags and scores are copied, as the engine's results are
        read-only, some of them views of one zero (``StepResult``)."""
        batch = self.batch
        return Turn(
            observations=encode_observations(batch),
            masks=batch.legal_mask(),
            seats=batch.current.copy(),
            num_players=batch.num_players.copy(),
            rewards=rewards,
            round_over=np.array(round_over),
            game_over=np.array(game_over),
            final_scores=np.array(final, dtype=np.int64),
        )
