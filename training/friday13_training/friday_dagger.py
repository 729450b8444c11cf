"""Teacher-labelled Friday games for DAgger (``training/train_friday.py``): numpy only, run in worker processes.

DAgger (Ross, Gordon and Bagnell, 2011) trains a policy on the states *it* reaches, each labelled with
the teacher's move there, so the student learns to recover from its own mistakes instead of only
copying the teacher's trajectories (where a plain behaviour clone drifts off after a few errors in a
game of 150-250 decisions). A game of iteration ``i`` is played move by move by the teacher with
probability ``beta`` and by the student otherwise; the teacher labels every decision with more than
one legal move either way (a forced move teaches nothing).

Observations are stored sparsely (the column and value of each non-zero entry): a Friday observation has
2,175 entries of which about 75 are non-zero, so a million labelled decisions fit in about 500 MB.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from friday13_env.core.agent import Agent, IllegalMoveError, Observation, checked_act
from friday13_env.core.checks import as_action
from friday13_env.friday import encoding
from friday13_env.friday.actions import NUM_ACTIONS
from friday13_env.friday.agents import load, make
from friday13_env.friday.env import MAX_DECISIONS, FridayEnv, observation_dict
from friday13_env.friday.evaluation import agent_seed
from friday13_env.friday.levels import LEVELS
from friday13_training.lockstep_games import row_entries, row_starts

MASK_BYTES = (NUM_ACTIONS + 7) // 8
"""Bytes of a bit-packed legal mask."""


@dataclass(frozen=True, slots=True)
class GameTask:
    """One game to play and label: its level and seed, the teacher's spec, the student (a ``.npz`` path; empty
    while there is none) and the chance ``beta`` that the teacher, not the student, plays each move."""

    level: int
    seed: int
    teacher: str
    student: str
    beta: float


@dataclass(slots=True)
class LabelledGames:
    """Labelled decisions of one or more games, observations stored sparsely.

    Decision ``k``'s observation has ``lengths[k]`` non-zero entries, at ``columns[starts[k]:...]`` with
    ``values[starts[k]:...]``; ``masks`` are the legal moves bit-packed (``np.packbits``), ``actions`` the
    teacher's moves, ``games`` which game of the set each decision belongs to. Per game:
    ``levels``, ``won``, ``scores`` and ``student_share`` (the share of its moves the student made).
    """

    columns: np.ndarray
    values: np.ndarray
    lengths: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    games: np.ndarray
    levels: np.ndarray
    won: np.ndarray
    scores: np.ndarray
    student_share: np.ndarray

    def __len__(self) -> int:
        return len(self.actions)

    @property
    def starts(self) -> np.ndarray:
        """Where each decision's entries begin in ``columns`` and ``values``."""
        return row_starts(self.lengths)

    def entries(self, rows: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The positions in ``columns`` / ``values`` of decisions ``rows``' entries, in order, and which of
        ``rows`` each belongs to (``starts``: ``self.starts``, computed once by a caller that asks often)."""
        return row_entries(self.lengths, starts, rows)

    def dense(self, rows: np.ndarray) -> np.ndarray:
        """The observations of decisions ``rows`` as a dense float32 ``(len(rows), OBS_SIZE)`` array."""
        positions, owners = self.entries(rows, self.starts)
        out = np.zeros((len(rows), encoding.OBS_SIZE), dtype=np.float32)
        out[owners, self.columns[positions]] = self.values[positions]
        return out

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """The legal-move masks of decisions ``rows`` as a bool ``(len(rows), NUM_ACTIONS)`` array."""
        return np.unpackbits(self.masks[rows], axis=1, count=NUM_ACTIONS).astype(bool)

    def problem(self) -> str | None:
        """What makes these arrays no set of labelled games, or None: checked when a round's file is read back, as a
        damaged or tampered one would otherwise fail deep in the fit (an ``embedding_bag`` index out of range) or
        train on garbage. Per decision: a length, a mask row of ``MASK_BYTES`` with the teacher's move legal in it,
        and a game of the set; per entry a column of the observation and a finite value, as many as the lengths add
        up to; per game a level of ``LEVELS``, a result, a score and the student's share of the moves (0 to 1)."""
        arrays = {name: getattr(self, name) for name in FIELDS}
        kinds = {"values": "f", "student_share": "f", "won": "b", "masks": "u"}
        for name, array in arrays.items():
            kind = kinds.get(name, "iu")
            if not isinstance(array, np.ndarray) or array.dtype.kind not in kind:
                return f"{name} is not an array of {'booleans' if kind == 'b' else 'numbers'} of its kind"
            if array.ndim != (2 if name == "masks" else 1):
                return f"{name} has {array.ndim} dimensions"
        decisions, games = len(self.lengths), len(self.levels)
        if (self.lengths < 0).any() or int(self.lengths.sum(dtype=np.int64)) != len(self.columns):
            return f"lengths add up to {int(self.lengths.sum(dtype=np.int64)):,}, not the {len(self.columns):,} entries"
        sizes = {
            "values": (len(self.values), len(self.columns)), "masks": (len(self.masks), decisions),
            "actions": (len(self.actions), decisions), "games": (len(self.games), decisions),
            **{name: (len(arrays[name]), games) for name in ("won", "scores", "student_share")},
        }  # fmt: skip
        for name, (found, wanted) in sizes.items():
            if found != wanted:
                return f"{name} has {found:,} rows, not {wanted:,}"
        if self.masks.shape[1] != MASK_BYTES:
            return f"a mask has {self.masks.shape[1]} bytes, not {MASK_BYTES}"
        if len(self.columns) and not 0 <= self.columns.min() <= self.columns.max() < encoding.OBS_SIZE:
            return f"a column is not one of the observation's {encoding.OBS_SIZE:,} entries"
        if not np.isfinite(self.values).all() or not np.isfinite(self.student_share).all():
            return "values or student_share hold NaN or an infinity"
        if decisions and not 0 <= self.actions.min() <= self.actions.max() < NUM_ACTIONS:
            return f"an action is not one of the {NUM_ACTIONS} actions"
        if decisions and not self.legal(np.arange(decisions))[np.arange(decisions), self.actions].all():
            return "a teacher's move is not legal in its mask"
        if decisions and not 0 <= self.games.min() <= self.games.max() < games:
            return f"a decision's game is not one of the {games} games"
        if not np.isin(self.levels, list(LEVELS)).all():
            return f"a level is not one of {sorted(LEVELS)}"
        if not ((self.student_share >= 0) & (self.student_share <= 1)).all():
            return "a student's share of the moves is not from 0 to 1"
        return None

    @staticmethod
    def concatenate(parts: Sequence[LabelledGames]) -> LabelledGames:
        """One set holding ``parts`` in order, game numbers renumbered to stay distinct."""
        arrays = {name: np.concatenate([getattr(part, name) for part in parts]) for name in FIELDS}
        first_games = np.cumsum([0, *(len(part.levels) for part in parts[:-1])])
        arrays["games"] = np.concatenate([part.games + first for part, first in zip(parts, first_games, strict=True)])
        return LabelledGames(**arrays)


FIELDS = tuple(field.name for field in dataclasses.fields(LabelledGames))
"""The arrays of a ``LabelledGames``, in order (what ``np.savez`` stores)."""


def play_labelled_game(task: GameTask) -> LabelledGames:
    """Play one game of ``task`` and return its labelled decisions (the worker processes' job). Every move the teacher
    or the student makes is checked (``checked_move``): one that fails is an error naming who made it and where, never
    a label or a game ended as lost."""
    env = FridayEnv(level=task.level)
    observation, info = env.reset(seed=task.seed)
    teacher = make(task.teacher, seed=agent_seed(task.seed))  # a key of its own: its draws are not the deal's
    student = load(task.student) if task.student else None
    chooser = np.random.default_rng([task.seed, 1])
    columns: list[np.ndarray] = []
    values: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    student_moves = 0
    done = False
    decision = 0
    while not done:
        view = observation_dict(observation, info)
        legal = info["action_mask"].astype(bool)
        where = f"at decision {decision} of the level-{task.level} game of seed {task.seed}"
        if legal.sum() > 1:
            label = checked_move(teacher, f"--teacher {task.teacher}", view, legal, where)
            nonzero = np.flatnonzero(observation)
            columns.append(nonzero.astype(np.uint16))
            values.append(observation[nonzero].astype(np.float32))
            masks.append(np.packbits(legal))
            actions.append(label)
            if student is not None and chooser.random() >= task.beta:
                move = checked_move(student, f"the student {task.student}", view, legal, where)
                student_moves += 1
            else:
                move = label
        else:
            move = int(np.flatnonzero(legal)[0])
        observation, _, done, truncated, info = env.step(move)
        decision += 1
        if truncated:
            raise RuntimeError(
                f"{task.teacher} and the student kept a level-{task.level} game (seed {task.seed}) going for "
                f"{MAX_DECISIONS:,} decisions without an end: the game has no result to label"
            )
    return LabelledGames(
        columns=np.concatenate(columns) if columns else np.zeros(0, np.uint16),
        values=np.concatenate(values) if values else np.zeros(0, np.float32),
        lengths=np.array([len(c) for c in columns], dtype=np.int32),
        masks=np.array(masks, dtype=np.uint8).reshape(len(masks), MASK_BYTES),
        actions=np.array(actions, dtype=np.int16),
        games=np.zeros(len(actions), dtype=np.int32),
        levels=np.array([task.level], dtype=np.int8),
        won=np.array([bool(info["won"])]),
        scores=np.array([int(info["score"])], dtype=np.int32),
        student_share=np.array([student_moves / max(len(actions), 1)], dtype=np.float32),
    )


def checked_move(agent: Agent, who: str, view: Observation, legal: np.ndarray, where: str) -> int:
    """``agent``'s move at ``view`` (whose legal moves are ``legal``, a bool mask), checked as an evaluation checks it
    (``evaluation.play_game``): what its ``act`` raises is an ``AgentRaisedError``, a move that is not an integer or not
    legal an ``IllegalMoveError``, each naming ``who`` played it (the ``--teacher`` spec, the student's file) and
    ``where``. A round's labels so never hold an illegal move, and its game never ends on one as a lost game."""
    move = checked_act(agent, view, f"{where} ({who})")
    try:
        action = as_action(move, NUM_ACTIONS, "{action!r} ({type}), not an integer action")
    except ValueError as error:
        raise IllegalMoveError(
            f"{who} played {error} {where} (legal actions: {np.flatnonzero(legal).tolist()})"
        ) from None
    if not 0 <= action < NUM_ACTIONS or not legal[action]:
        raise IllegalMoveError(
            f"{who} played an illegal move {action} {where} (legal actions: {np.flatnonzero(legal).tolist()})"
        )
    return action
