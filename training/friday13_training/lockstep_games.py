"""Friday games played in lockstep in one process, for PPO (stage 2 of ``training/train_friday.py``).

Each game is a ``FridayEnv`` (the environment users get, so the samples are exactly its games). A step plays
one move in every game, then the forced moves (a single legal action) until each game is at a real choice or
over: a forced move teaches nothing, so only choices become samples. A finished game is dealt anew at once,
at a level drawn from the run's levels, with a seed from the run's generator. A game the environment truncates
(``MAX_DECISIONS``: two exchange cards trading each other for ever) ends as a loss at the lowest score, so a policy
never gains by stalling.

Observations are kept sparse (:class:`SparseRows`): about 75 of a Friday observation's 2,175 entries are
non-zero, and the networks' first layer reads only those (``EmbeddingBag``). Numpy only: the DAgger workers
share its sparse rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from friday13_env.friday.actions import NUM_ACTIONS
from friday13_env.friday.engine import MIN_SCORE
from friday13_env.friday.env import FridayEnv

SEED_LIMIT = 2**31
"""Deal seeds are drawn below this."""


def row_starts(lengths: np.ndarray) -> np.ndarray:
    """Where each row's entries begin, for rows of ``lengths`` entries stored one after the other."""
    return np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)


def row_entries(lengths: np.ndarray, starts: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of ``rows``' entries, in order, and which of ``rows`` each belongs to (``starts``:
    ``row_starts(lengths)``, computed once by a caller that asks often)."""
    taken = lengths[rows]
    first = np.concatenate([[0], np.cumsum(taken)[:-1]])
    positions = np.repeat(starts[rows] - first, taken) + np.arange(int(taken.sum()))
    return positions, np.repeat(np.arange(len(rows)), taken)


@dataclass(frozen=True)
class SparseRows:
    """Observations by their non-zero entries: row ``k`` has ``lengths[k]`` entries, at ``columns`` and
    ``values`` from ``row_starts(lengths)[k]`` on."""

    columns: np.ndarray
    values: np.ndarray
    lengths: np.ndarray

    @staticmethod
    def of(observations: Sequence[np.ndarray]) -> SparseRows:
        nonzero = [np.flatnonzero(observation) for observation in observations]
        return SparseRows(
            columns=np.concatenate(nonzero).astype(np.int64),
            values=np.concatenate([o[c] for o, c in zip(observations, nonzero, strict=True)]).astype(np.float32),
            lengths=np.array([len(c) for c in nonzero], dtype=np.int64),
        )

    @staticmethod
    def concatenate(parts: Sequence[SparseRows]) -> SparseRows:
        return SparseRows(*(np.concatenate([getattr(part, name) for part in parts]) for name in _ROW_FIELDS))

    def __len__(self) -> int:
        return len(self.lengths)

    def take(self, rows: np.ndarray, starts: np.ndarray | None = None) -> SparseRows:
        """Rows ``rows``, in that order (``starts``: ``row_starts(self.lengths)``, if the caller has it)."""
        positions, _ = row_entries(self.lengths, row_starts(self.lengths) if starts is None else starts, rows)
        return SparseRows(self.columns[positions], self.values[positions], self.lengths[rows])


_ROW_FIELDS = ("columns", "values", "lengths")


@dataclass(frozen=True)
class Finished:
    """The games that ended in a step: their index, level, win and final score."""

    games: np.ndarray
    levels: np.ndarray
    won: np.ndarray
    scores: np.ndarray


class LockstepGames:
    """``count`` Friday games at levels drawn from ``levels``, dealt from ``rng`` (see the module doc)."""

    def __init__(self, count: int, levels: Sequence[int], rng: np.random.Generator) -> None:
        self.levels = list(levels)
        self.rng = rng
        self.envs = [FridayEnv(level=self.levels[0]) for _ in range(count)]
        self.level = np.zeros(count, dtype=np.int64)
        self.observation: list[np.ndarray] = [np.zeros(0, np.float32)] * count
        self.mask = np.zeros((count, NUM_ACTIONS), dtype=bool)
        for game in range(count):
            self._deal(game)
            self._play_forced(game, [])

    def observations(self) -> SparseRows:
        """Every game's current observation (each at a choice)."""
        return SparseRows.of(self.observation)

    def masks(self) -> np.ndarray:
        """Every game's legal moves, ``(count, NUM_ACTIONS)`` bool."""
        return self.mask.copy()

    def step(self, actions: np.ndarray) -> Finished:
        """Play ``actions[i]`` in game ``i`` (each legal), then the forced moves; the games that ended."""
        ended: list[tuple[int, int, bool, int]] = []
        for game, action in enumerate(actions.tolist()):
            endings: list[tuple[int, int, bool, int]] = []
            self._move(game, action, endings)
            self._play_forced(game, endings)
            ended += endings[:1]  # a later one: a game dealt and ended by forced moves alone, with no sample
        return Finished(
            games=np.array([e[0] for e in ended], dtype=np.int64),
            levels=np.array([e[1] for e in ended], dtype=np.int64),
            won=np.array([e[2] for e in ended], dtype=bool),
            scores=np.array([e[3] for e in ended], dtype=np.int64),
        )

    def _deal(self, game: int) -> None:
        level = int(self.rng.choice(self.levels))
        seed = int(self.rng.integers(SEED_LIMIT))
        observation, info = self.envs[game].reset(seed=seed, options={"level": level})
        self.level[game], self.observation[game] = level, observation
        self.mask[game] = info["action_mask"].astype(bool)

    def _move(self, game: int, action: int, ended: list[tuple[int, int, bool, int]]) -> None:
        if not self.mask[game, action]:
            raise ValueError(f"game {game}: action {action} is not legal; legal: {np.flatnonzero(self.mask[game])}")
        observation, _, terminated, truncated, info = self.envs[game].step(action)
        if terminated or truncated:
            won, score = (bool(info["won"]), int(info["score"])) if terminated else (False, MIN_SCORE)
            ended.append((game, int(self.level[game]), won, score))
            self._deal(game)
        else:
            self.observation[game] = observation
            self.mask[game] = info["action_mask"].astype(bool)

    def _play_forced(self, game: int, ended: list[tuple[int, int, bool, int]]) -> None:
        while self.mask[game].sum() == 1:
            self._move(game, int(np.flatnonzero(self.mask[game])[0]), ended)
