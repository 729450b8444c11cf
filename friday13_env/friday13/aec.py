"""Friday the 13th as a PettingZoo AEC environment: a thin adapter over ``engine``.

``raw_env`` is the bare environment (an illegal action raises a ``ValueError`` naming the legal
ones); ``env()`` is PettingZoo's standard wrapped form, where an illegal action ends the game with
a penalty for the offender, an out-of-range action is rejected and calls out of order are caught.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import (
    encode_observation,
    encode_state,
    observation_bounds,
    observation_layout,
    state_bounds,
)
from friday13_env.friday13.engine import GameState, IllegalActionError, Rules, new_game
from friday13_env.friday13.render import render_state

REWARD_MODES: dict[str, str] = {
    "points": "every agent receives minus its bad-luck points at the end of each round",
    "win": "at the end of the game, 1 for every player sharing the lowest total, else 0",
    "relative": "at the end of each round, the table's mean points minus the agent's own (zero-sum)",
}
RENDER_MODES = ("ansi", "human")
ILLEGAL_ACTION_REWARD = -1.0
"""Penalty of the wrapped ``env()`` for an illegal action, PettingZoo's classic convention."""


def agent_name(seat: int) -> str:
    return f"player_{seat}"


class raw_env(AECEnv):
    """Friday the 13th for 3-6 players; see the README for the observation and action reference."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "friday13_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        num_players: int = 4,
        deck: str = "standard",
        num_rounds: int = 4,
        reward: str = "points",
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if reward not in REWARD_MODES:
            raise ValueError(f"unknown reward mode {reward!r}; allowed values: {sorted(REWARD_MODES)}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"unknown render_mode {render_mode!r}; allowed values: {[None, *RENDER_MODES]}")
        self.rules = Rules(num_players=num_players, deck=get_deck(deck), num_rounds=num_rounds)
        self.reward_mode = reward
        self.render_mode = render_mode
        self.layout = observation_layout(self.rules.deck)
        self.possible_agents = [agent_name(seat) for seat in range(self.rules.num_players)]
        self._seats = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        num_actions = self.rules.deck.num_actions
        observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, observation_bounds(self.rules), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(num_actions,), dtype=np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, spaces.Discrete(num_actions))
        self.state_space = spaces.Box(0.0, state_bounds(self.rules), dtype=np.float32)
        self._no_moves = np.zeros(num_actions, dtype=np.int8)
        self._rng = np.random.default_rng()
        self.game: GameState | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # -- lifecycle ---------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game. A seed re-seeds the environment's one ``numpy`` Generator."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.game = new_game(self.rules, self._rng)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[self.game.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The player-relative observation of ``agent``; its mask is all zeros unless it is to move."""
        game = self._require_game()
        seat = self._seats[agent]
        if seat == game.current and not game.round_over and not self.terminations[agent]:
            mask = np.array(game.action_mask(), dtype=np.int8)
        else:
            mask = self._no_moves.copy()
        return {"observation": encode_observation(game, seat), "action_mask": mask}

    def state(self) -> np.ndarray:
        """The full state (every hand) for centralised critics; see ``encoding.state_layout``."""
        return encode_state(self._require_game())

    def step(self, action: int | None) -> None:
        game = self._require_game()
        if not self.agents:
            raise RuntimeError("step() called after the game ended (every agent is done); call reset() first")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(f"{agent} is to move and must play a card; legal actions: {game.legal_actions()}")
        game.play(action)
        self._cumulative_rewards[agent] = 0.0
        rewards = dict.fromkeys(self.agents, 0.0)
        infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        if game.round_over:
            self._score_round(game, rewards, infos)
        self.rewards = rewards
        self.infos = infos
        self.agent_selection = self.possible_agents[game.current]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _score_round(self, game: GameState, rewards: dict[str, float], infos: dict[str, dict[str, Any]]) -> None:
        """Rewards and infos of a round end; deals the next round or ends the game."""
        points = game.last_round_points
        assert points is not None
        mean = sum(points) / len(points)
        for seat, agent in enumerate(self.possible_agents):
            infos[agent] = {"round_points": points[seat], "total_points": game.scores[seat], "round": game.round}
            if self.reward_mode == "points":
                rewards[agent] = float(-points[seat])
            elif self.reward_mode == "relative":
                rewards[agent] = mean - points[seat]
        if game.game_over:
            best = min(game.scores)
            for seat, agent in enumerate(self.possible_agents):
                infos[agent]["winner"] = game.scores[seat] == best
                if self.reward_mode == "win":
                    rewards[agent] = 1.0 if game.scores[seat] == best else 0.0
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            game.next_round(self._rng)

    def render(self) -> str | None:
        """``ansi`` returns the table as text; ``human`` prints it."""
        if self.render_mode is None:
            raise ValueError(f"render() needs a render_mode; allowed values: {list(RENDER_MODES)}")
        text = render_state(self._require_game())
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release: the environment holds no external resources."""

    def _require_game(self) -> GameState:
        if self.game is None:
            raise RuntimeError("the environment must be reset() before it is used")
        return self.game


class CheckedEnv(OrderEnforcingWrapper):
    """PettingZoo's standard checks in one layer instead of three, so that they stay cheap.

    Behaves like ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(env)))``:
    calls before ``reset`` are errors, an out-of-range action is rejected, and a legal-range but
    illegal action ends the game with ``ILLEGAL_ACTION_REWARD`` for the offender and 0 for the
    others. The hot attributes are forwarded by properties, not ``__getattr__`` chains.
    """

    def __init__(self, env: raw_env) -> None:
        super().__init__(env)
        self._raw = env
        self._num_actions = env.rules.deck.num_actions

    @property
    def agent_selection(self) -> str:  # type: ignore[override]
        self._check_reset("agent_selection")
        return self._raw.agent_selection

    @property
    def agents(self) -> list[str]:  # type: ignore[override]
        self._check_reset("agents")
        return self._raw.agents

    @property
    def terminations(self) -> dict[str, bool]:  # type: ignore[override]
        self._check_reset("terminations")
        return self._raw.terminations

    @property
    def truncations(self) -> dict[str, bool]:  # type: ignore[override]
        self._check_reset("truncations")
        return self._raw.truncations

    @property
    def rewards(self) -> dict[str, float]:  # type: ignore[override]
        self._check_reset("rewards")
        return self._raw.rewards

    @property
    def infos(self) -> dict[str, dict[str, Any]]:  # type: ignore[override]
        self._check_reset("infos")
        return self._raw.infos

    @property
    def _cumulative_rewards(self) -> dict[str, float]:  # type: ignore[override]
        return self._raw._cumulative_rewards

    def _check_reset(self, name: str) -> None:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        raw = self._raw
        self._check_reset("last()")
        agent = raw.agent_selection
        observation = raw.observe(agent) if observe else None
        return (
            observation,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            raw.infos[agent],
        )

    def step(self, action: int | None) -> None:
        raw = self._raw
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        self._has_updated = True
        if not raw.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = raw.agent_selection
        if raw.terminations[agent] or raw.truncations[agent]:
            raw._was_dead_step(action)
            return
        if not (action.__class__ is int or isinstance(action, np.integer)) or not 0 <= action < self._num_actions:
            raise ValueError(f"action {action!r} is not in the action space Discrete({self._num_actions})")
        if raw._require_game().is_legal(action):
            raw.step(action)
            return
        EnvLogger.warn_on_illegal_move()
        raw._cumulative_rewards[agent] = 0.0
        raw.terminations = dict.fromkeys(raw.agents, True)
        raw.truncations = dict.fromkeys(raw.agents, True)
        raw.rewards = dict.fromkeys(raw.agents, 0.0)
        raw.rewards[agent] = ILLEGAL_ACTION_REWARD
        raw.infos = {name: {"illegal_action": {"agent": agent, "action": int(action)}} for name in raw.agents}
        raw._accumulate_rewards()
        raw._deads_step_first()

    def __str__(self) -> str:
        return str(self._raw)


def env(**kwargs: Any) -> CheckedEnv:
    """The standard wrapped environment (PettingZoo's conventions); options as for ``raw_env``."""
    return CheckedEnv(raw_env(**kwargs))
