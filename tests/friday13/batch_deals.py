"""The deals of a ``GameBatch``, recorded and handed to the scalar engine, so that a batched game and the
scalar game of the same table can be played side by side on the same cards (test_vector_env, test_selfplay)."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Container
from dataclasses import dataclass

import numpy as np

from friday13_env.friday13 import engine
from friday13_env.friday13.batched.agents import BatchedCautious
from friday13_env.friday13.batched.engine import DUMMY_SLOT, GameBatch
from friday13_env.friday13.batched.selfplay import SelfPlayTables
from friday13_env.friday13.batched.vector_env import Friday13VectorEnv
from friday13_env.friday13.cards import Deck, get_deck

BATCH_ARRAYS = (
    "num_players", "hands", "hand_sizes", "played", "pile_totals", "pile_sizes", "pile_cards",
    "captured", "scores", "round", "current", "plays_left", "game_over",
)  # fmt: skip
"""Every public array of ``GameBatch``: what "changes nothing" compares."""


def batch_snapshot(owner: Friday13VectorEnv | SelfPlayTables) -> dict[str, np.ndarray]:
    """Copies of every public array of the engine behind ``owner``."""
    return {name: getattr(owner.batch, name).copy() for name in BATCH_ARRAYS}


def assert_same_arrays(before: dict[str, np.ndarray], after: dict[str, np.ndarray], rows: object = slice(None)) -> None:
    """Two ``batch_snapshot`` s agree (in ``rows`` only, when given)."""
    for name, array in before.items():
        np.testing.assert_array_equal(array[rows], after[name][rows], err_msg=name)  # type: ignore[index]


class FailingOpponent:
    """A batched ``cautious`` (the same moves) whose ``act_batch`` raises on the calls numbered in ``fail_at``
    (counted from 1): a user's opponent failing part-way through a step."""

    name = "failing"

    def __init__(self, fail_at: Container[int], deck: Deck | None = None) -> None:
        self.inner = BatchedCautious(deck or get_deck("standard"))
        self.fail_at = fail_at
        self.calls = 0

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        self.calls += 1
        if self.calls in self.fail_at:
            raise RuntimeError(f"opponent crashed on call {self.calls}")
        return self.inner.act_batch(observations, masks, rng)


@dataclass(frozen=True)
class Deal:
    """One round's deal at one table, as the batch made it."""

    round: int
    num_players: int
    hands: np.ndarray
    """``(7, K)``: seats 0-5, then the dummy slot."""

    def seat_hands(self) -> list[list[int]]:
        """The deal as ``engine.deal`` gives it: one count list per seat, then the dummy hand at 3 players."""
        n = self.num_players
        hands = [row.tolist() for row in self.hands[:n]]
        if n == engine.DUMMY_PLAYER_COUNT:
            hands.append(self.hands[DUMMY_SLOT].tolist())
        else:
            assert not self.hands[n:].any(), "cards dealt to an empty seat or to a dummy at more than 3 players"
        return hands


class DealLog:
    """Every deal any ``GameBatch`` makes, queued per (batch, table) until a replay takes it."""

    def __init__(self) -> None:
        self.queues: dict[tuple[int, int], deque[Deal]] = defaultdict(deque)
        self.batches: list[GameBatch] = []
        """Kept alive so that no two batches share an id."""

    def record(self, batch: GameBatch, games: np.ndarray) -> None:
        if not any(known is batch for known in self.batches):
            self.batches.append(batch)
        for game in np.asarray(games).tolist():
            deal = Deal(int(batch.round[game]), int(batch.num_players[game]), batch.hands[game].copy())
            self.queues[id(batch), game].append(deal)

    def pop(self, batch: GameBatch, table: int) -> Deal:
        queue = self.queues[id(batch), table]
        assert queue, f"table {table} was not dealt a new round"
        return queue.popleft()

    def keep_latest(self, batch: GameBatch) -> None:
        """Forget all but each table's latest deal (a seeded reset deals in the new batch, then again)."""
        for (owner, _), queue in self.queues.items():
            while owner == id(batch) and len(queue) > 1:
                queue.popleft()

    def pending(self, batch: GameBatch) -> dict[int, int]:
        """Deals not replayed yet, per table."""
        return {table: len(queue) for (owner, table), queue in self.queues.items() if owner == id(batch) and queue}


class ScalarDeals:
    """Stands in for ``engine.deal``: the scalar games of table ``table`` are dealt that table's batch deals."""

    def __init__(self, log: DealLog) -> None:
        self.log = log
        self.batch: GameBatch | None = None
        self.table = -1

    def __call__(self, rules: engine.Rules, round_index: int, rng: np.random.Generator) -> list[list[int]]:
        assert self.batch is not None
        deal = self.log.pop(self.batch, self.table)
        assert (deal.round, deal.num_players) == (round_index, rules.num_players)
        assert deal.hands.sum(axis=0).tolist() == list(rules.deck.kind_counts), "not the whole deck"
        return deal.seat_hands()
