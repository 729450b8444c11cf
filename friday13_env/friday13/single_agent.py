"""Friday the 13th as a single-agent Gymnasium environment: one learner against scripted opponents.

``gymnasium.make("friday13_env/Friday13-v0", num_players=4, opponents=["cautious", "majority", "search"])``
seats the learner at one table seat and lets the opponents play every other seat between the
learner's moves, so any single-agent algorithm (PPO, DQN, MaskablePPO) can train on the game.

Why it is built the way it is:

- **Speed.** This environment is the training bottleneck, so opponents act directly on the bare
  ``aec.raw_env`` (no PettingZoo wrapper stack), and the learner's observation is encoded once per
  learner step, never for the opponents' plies in between.
- **One policy for every table size.** The observation is the AEC ``observation`` vector, whose size
  does not depend on the player count; ``num_players`` may therefore be drawn per episode.
- **Masks without surprises.** ``info["action_mask"]`` and ``action_masks()`` (found by sb3-contrib's
  MaskablePPO, also through ``gymnasium.make``'s wrappers and VecEnvs) give the legal actions, and
  ``action_space.sample()`` draws a legal action. An illegal action is never replaced by a legal
  one: it raises a ``ValueError`` naming the legal actions, and the episode can go on.
- **Reproducibility.** Every random choice (player count, seat, opponents, their seeds, the deals)
  is drawn from the Generator that ``reset(seed=...)`` seeds, so a seed and the learner's actions
  determine the whole episode.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeAlias

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from friday13_env.friday13 import agents
from friday13_env.friday13.aec import RENDER_MODES, raw_env
from friday13_env.friday13.agents import Agent
from friday13_env.friday13.encoding import encode_observation, observation_bounds
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS, GameState, IllegalActionError
from friday13_env.friday13.render import render_state

OpponentSpec: TypeAlias = "str | os.PathLike[str] | Agent | Callable[..., Agent]"
"""An opponent: a registered agent name, a checkpoint path, an ``Agent`` object (used as it is, in
every episode it is drawn for) or a factory called as ``factory(seed=...)`` once per episode."""

DEFAULT_OPPONENT_POOL = ("random",)
_SEED_BOUND = 2**32
"""Opponents and deals get seeds in ``0..2**32-1`` drawn from the environment's Generator."""


class LegalDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose plain ``sample()`` draws one of the actions legal right now.

    The environment updates ``legal_mask`` after every reset and step, so random rollouts and
    generic tools (Gymnasium's and Stable-Baselines3's ``check_env``) only ever try legal moves.
    An explicit ``mask`` or ``probability`` argument is honoured unchanged, and the space compares
    equal to ``Discrete(n)``, so saved models and VecEnvs treat it as one.
    """

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self.legal_mask: np.ndarray | None = None

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is None and probability is None and self.legal_mask is not None:
            mask = self.legal_mask
        return super().sample(mask=mask, probability=probability)


class Friday13Env(gym.Env[np.ndarray, np.int64]):
    """One learner seat at a Friday the 13th table; the other seats are played by opponents.

    Args:
        num_players: table size, an int in 3..6, or a sequence of them to draw from each episode.
        opponents: one opponent per other seat, in clockwise order from the learner (the first sits
            just after the learner). With a drawn ``num_players`` give ``max(num_players) - 1`` and a
            table of ``n`` players seats the first ``n - 1``. Exclusive with ``opponent_pool``.
        opponent_pool: each other seat draws its opponent uniformly from this pool every episode.
            The default, when neither option is given, is ``("random",)``.
        seat: the learner's seat (0-based; 0 starts the first round), or ``None`` to draw it each
            episode.
        deck, num_rounds, reward: passed to ``aec.raw_env``; the learner's reward for a step is the
            sum of the AEC rewards it received since its previous move (``reward`` mode ``points``:
            minus its bad-luck points when a round ends; ``win``; ``relative``).
        render_mode: ``"ansi"`` (``render()`` returns text) or ``"human"`` (printed every step).

    ``info`` always holds ``action_mask``. After a step in which a round ended it also holds the
    learner's AEC round info (``round``, ``round_points``, ``total_points``); at the end of the
    game also ``winner`` (shared wins count), ``rank`` (1 + players with a strictly lower total),
    ``final_scores`` (every seat's total, absolute seat order), and, like every ``reset`` info,
    ``num_players``, ``seat`` and ``opponents`` (``{"player_k": label}``).

    Self-play: ``env.unwrapped.set_opponent_pool(specs)`` (or ``vec_env.env_method(
    "set_opponent_pool", specs)``) swaps the opponents in from the next reset on.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": list(RENDER_MODES), "render_fps": 1}

    def __init__(
        self,
        num_players: int | Sequence[int] = 4,
        opponents: Sequence[OpponentSpec] | None = None,
        opponent_pool: Sequence[OpponentSpec] | None = None,
        seat: int | None = None,
        deck: str = "standard",
        num_rounds: int = 4,
        reward: str = "points",
        render_mode: str | None = None,
    ) -> None:
        self._player_counts = _player_counts(num_players)
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"unknown render_mode {render_mode!r}; allowed values: {[None, *RENDER_MODES]}")
        self.render_mode = render_mode
        # One bare AEC environment per table size; building them validates deck, rounds and reward.
        self._tables = {
            n: raw_env(num_players=n, deck=deck, num_rounds=num_rounds, reward=reward) for n in self._player_counts
        }
        self._seat_option = _check_seat(seat, self._player_counts)
        if opponents is not None and opponent_pool is not None:
            raise ValueError("give either opponents (one per seat) or opponent_pool (drawn per seat), not both")
        self._fixed_opponents: list[OpponentSpec] | None = None
        self._opponent_pool: list[OpponentSpec] = []
        if opponents is not None:
            self._fixed_opponents = _check_specs(opponents, "opponents")
            needed = max(self._player_counts) - 1
            if len(self._fixed_opponents) != needed:
                raise ValueError(
                    f"opponents must list one opponent per other seat: {needed} for "
                    f"{max(self._player_counts)} players, got {len(self._fixed_opponents)}"
                )
        else:
            self.set_opponent_pool(DEFAULT_OPPONENT_POOL if opponent_pool is None else opponent_pool)
        any_table = next(iter(self._tables.values()))
        # Same layout at every table size; the bounds (hand sizes) differ, so take the widest.
        high = np.maximum.reduce([observation_bounds(table.rules) for table in self._tables.values()])
        self.observation_space = spaces.Box(0.0, high, dtype=np.float32)
        self.action_space = LegalDiscrete(any_table.rules.deck.num_actions)
        self._raw: raw_env | None = None
        self._game: GameState | None = None
        self._players: list[Agent | None] = []
        self._labels: dict[str, str] = {}
        self._seat = 0
        self._agent = ""
        self._mask = np.zeros(self.action_space.n, dtype=np.int8)
        self._done = False

    @property
    def game(self) -> GameState:
        """The engine state of the current episode, for analysis and tests (read it, do not change it)."""
        return self._require_game()

    @property
    def seat(self) -> int:
        """The learner's seat in the current episode."""
        self._require_started()
        return self._seat

    # -- opponents ---------------------------------------------------------------------------
    def set_opponent_pool(self, specs: Sequence[OpponentSpec]) -> None:
        """Draw every opponent seat from ``specs`` from the next ``reset`` on (replaces any fixed list).

        The hook for self-play: pass frozen snapshots as ``Agent`` objects (used as they are) or as
        factories ``factory(seed=...) -> Agent`` (built afresh each episode with a seed from the
        environment's Generator, so episodes stay reproducible). Through a ``SubprocVecEnv``
        (``env_method("set_opponent_pool", specs)``) the entries must be picklable.
        """
        pool = _check_specs(specs, "opponent_pool")
        if not pool:
            raise ValueError("opponent_pool must hold at least one opponent")
        self._opponent_pool = pool
        self._fixed_opponents = None

    # -- gymnasium API -----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Draw table size, seat and opponents, deal, and play the opponents up to the learner's move."""
        super().reset(seed=seed)
        if seed is not None:
            self.action_space.seed(seed)  # so that rollouts of action_space.sample() are reproducible too
        if options:
            raise ValueError(f"reset() takes no options, got {sorted(options)}")
        rng = self.np_random
        counts = self._player_counts
        n = counts[0] if len(counts) == 1 else int(counts[rng.integers(len(counts))])
        seat = int(rng.integers(n)) if self._seat_option is None else self._seat_option
        if self._fixed_opponents is not None:
            specs = self._fixed_opponents[: n - 1]
        else:
            specs = [self._opponent_pool[i] for i in rng.integers(len(self._opponent_pool), size=n - 1)]
        seeds = rng.integers(_SEED_BOUND, size=n).tolist()
        raw = self._tables[n]
        raw.reset(seed=seeds[-1])
        self._raw, self._game = raw, raw.game
        self._seat, self._agent = seat, raw.possible_agents[seat]
        self._players = [None] * n
        self._labels = {}
        for offset, spec in enumerate(specs):
            other = (seat + 1 + offset) % n
            agent, label = _instantiate(spec, seeds[offset])
            self._players[other] = agent
            self._labels[raw.possible_agents[other]] = label
        self._done = False
        self._play_opponents()
        observation, info = self._observe()
        info.update(self._table_info())
        return observation, info

    def step(self, action: int | np.integer | np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Play the learner's card, then the opponents' until the learner is to move or the game ends.

        Raises ``ValueError`` for an illegal action (naming the legal ones; nothing is played) and
        ``RuntimeError`` after the episode ended or before the first reset.
        """
        raw = self._require_started()
        if self._done:
            raise RuntimeError("step() called after the episode ended; call reset() to start a new one")
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        raw.step(action)
        reward = raw.rewards[self._agent]
        round_info = raw.infos[self._agent]
        opponents_reward, opponents_round_info = self._play_opponents()
        observation, info = self._observe()
        info.update(round_info or opponents_round_info)
        if self._game.game_over:
            self._done = True
            info.update(self._final_info())
        return observation, reward + opponents_reward, self._done, False, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as booleans (sb3-contrib's MaskablePPO calls this)."""
        self._require_started()
        return self._mask.astype(bool)

    def render(self) -> str | None:
        """``ansi`` returns the table from the learner's seat as text; ``human`` prints it."""
        if self.render_mode is None:
            raise ValueError(f"render() needs a render_mode; allowed values: {list(RENDER_MODES)}")
        text = render_state(self._require_game(), show_hand_of=self._seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # -- internals ---------------------------------------------------------------------------
    def _play_opponents(self) -> tuple[float, dict[str, Any]]:
        """Let opponents move until the learner is to move or the game is over.

        Returns the learner's reward over those plies and its AEC round info if a round ended.
        """
        raw, game, me = self._raw, self._game, self._agent
        players, names = self._players, raw.possible_agents
        reward = 0.0
        round_info: dict[str, Any] = {}
        while game.current != self._seat and not game.game_over:
            name = names[game.current]
            action = players[game.current].act(raw.observe(name))
            try:
                raw.step(action)
            except IllegalActionError as error:
                raise ValueError(
                    f"opponent {self._labels[name]!r} at {name} chose an illegal action: {error}"
                ) from error
            reward += raw.rewards[me]
            round_info = raw.infos[me] or round_info
        return reward, round_info

    def _observe(self) -> tuple[np.ndarray, dict[str, Any]]:
        game = self._game
        self._mask = np.array(game.action_mask(), dtype=np.int8)
        self.action_space.legal_mask = self._mask
        if self.render_mode == "human":
            self.render()
        return encode_observation(game, self._seat), {"action_mask": self._mask.copy()}

    def _table_info(self) -> dict[str, Any]:
        return {"num_players": len(self._players), "seat": self._seat, "opponents": dict(self._labels)}

    def _final_info(self) -> dict[str, Any]:
        scores = self._game.scores
        mine = scores[self._seat]
        return {
            "final_scores": list(scores),
            "rank": 1 + sum(score < mine for score in scores),
            **self._table_info(),
        }

    def _require_started(self) -> raw_env:
        if self._raw is None:
            raise RuntimeError("the environment must be reset() before it is used")
        return self._raw

    def _require_game(self) -> GameState:
        self._require_started()
        assert self._game is not None
        return self._game


def _player_counts(num_players: int | Sequence[int]) -> tuple[int, ...]:
    """Validate ``num_players`` (an int or a non-empty sequence of ints in 3..6) as a sorted tuple."""
    allowed = list(range(MIN_PLAYERS, MAX_PLAYERS + 1))
    counts = [num_players] if isinstance(num_players, int | np.integer) else num_players
    if isinstance(counts, str) or not isinstance(counts, Sequence) or not counts:
        raise ValueError(f"num_players must be one of {allowed} or a non-empty list of them, got {num_players!r}")
    for count in counts:
        if isinstance(count, bool) or not isinstance(count, int | np.integer) or count not in allowed:
            raise ValueError(f"num_players must be one of {allowed} or a list of them, got {num_players!r}")
    return tuple(sorted({int(count) for count in counts}))


def _check_seat(seat: int | None, counts: tuple[int, ...]) -> int | None:
    if seat is None:
        return None
    if isinstance(seat, bool) or not isinstance(seat, int | np.integer) or not 0 <= seat < counts[0]:
        raise ValueError(f"seat must be None (drawn per episode) or an int in 0..{counts[0] - 1}, got {seat!r}")
    return int(seat)


def _check_specs(specs: Sequence[OpponentSpec], option: str) -> list[OpponentSpec]:
    """Validate opponent specs up front, so a typo fails at construction and not mid-training."""
    if isinstance(specs, str | os.PathLike) or not isinstance(specs, Sequence):
        raise ValueError(f"{option} must be a list of opponents, got {specs!r}")
    for spec in specs:
        if isinstance(spec, str | os.PathLike):
            agents.make(os.fspath(spec), seed=0)  # raises ValueError listing the registered agents
        elif not callable(spec) and not isinstance(spec, Agent):
            raise ValueError(
                f"{option} entries must be agent names {agents.names()}, checkpoint paths, Agent objects or "
                f"factories factory(seed=...) -> Agent; got {spec!r}"
            )
    return list(specs)


def _instantiate(spec: OpponentSpec, seed: int) -> tuple[Agent, str]:
    """The agent for one seat and one episode, with the label reported in ``info["opponents"]``."""
    if isinstance(spec, str | os.PathLike):
        name = os.fspath(spec)
        return agents.make(name, seed=seed), name
    if isinstance(spec, type) or not isinstance(spec, Agent):
        agent = spec(seed=seed)
        if not isinstance(agent, Agent):
            raise ValueError(f"opponent factory {spec!r} returned {agent!r}, which is not an Agent (name + act)")
        return agent, agent.name
    return spec, spec.name
