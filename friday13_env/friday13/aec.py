"""Friday the 13th as a PettingZoo AEC environment: a thin adapter over ``engine``.

``raw_env`` is the bare environment (an illegal action raises a ``ValueError`` naming the legal
ones); ``env()`` is PettingZoo's standard wrapped form, where an illegal action ends the game with
a penalty for the offender, an out-of-range action is rejected and calls out of order are caught.

Both are built on PettingZoo's public API only (``AECEnv``, ``EnvLogger``): no private helper of
``AECEnv`` and no wrapper internals, which differ between PettingZoo releases, so the same code
runs on every PettingZoo from 1.24.0 on.

Infos: from ``reset`` on, every agent's ``infos`` holds every key, with a neutral value until it
means something (``INFO_KEYS``): ``round`` (the round the last card was played in), ``round_over``
(True on the step that ended a round), ``round_points`` (the agent's points of the round that just
ended; 0 on other steps), ``total_points`` (its total so far), ``winner`` (at the end of the game,
True for every player sharing the lowest total; False until then) and ``illegal_action`` (True for
the agent whose illegal action ended the game in ``env()``). Libraries that build their specs from
the first infos (TorchRL) see them all.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger

from friday13_env.core import checks
from friday13_env.core.registry import check_seed
from friday13_env.friday13.cards import check_deck_name, get_deck
from friday13_env.friday13.encoding import (
    encode_observation,
    encode_state,
    observation_bounds,
    observation_layout,
    state_bounds,
)
from friday13_env.friday13.engine import (
    GameState,
    IllegalActionError,
    Rules,
    action_mask,
    is_legal,
    legal_actions,
    new_game,
    next_round,
    play,
)
from friday13_env.friday13.options import check_choice, check_reset_options
from friday13_env.friday13.render import RENDER_MODES, check_render_mode, render_state
from friday13_env.friday13.render_image import TableCanvas, render_rgb
from friday13_env.friday13.rewards import REWARD_MODES, illegal_action_reward, table_rewards

NEUTRAL_INFO: dict[str, Any] = {
    "round": 0,
    "round_over": False,
    "round_points": 0,
    "total_points": 0,
    "winner": False,
    "illegal_action": False,
}
"""Every agent's info at ``reset``: each key the environment ever reports, with its neutral value."""
INFO_KEYS = tuple(NEUTRAL_INFO)


def agent_name(seat: int) -> str:
    return f"player_{seat}"


PETTINGZOO_PROBE_OPTION = "options"
"""The one reset option the AEC environments ignore: PettingZoo's ``api_test`` passes
``options={"options": 1}`` to check that ``reset`` takes an ``options`` argument."""


def as_action(action: object, game: GameState) -> int:
    """``action`` as an ``int`` of the action space: a Python or numpy integer, or a 0-d integer array.

    Anything else (floats, strings, bools even though Python counts them as ints, ``None``, arrays of
    other shapes or dtypes) and any number outside ``0..num_actions - 1`` is an ``IllegalActionError``
    (a ``ValueError``) naming the legal actions, so that ``0.99`` or ``"1"`` never plays a card.
    Whether the player holds the card is left to the engine.
    """
    return checks.as_action(
        action,
        game.rules.deck.num_actions,
        "action {action!r} is not in the action space Discrete({n}): an action is a Python or numpy integer"
        " (or a 0-d integer array) in 0..{last}; legal actions: {legal}",
        "action {action} is not in the action space Discrete({n}): out of range 0..{last}; legal actions: {legal}",
        legal=lambda: legal_actions(game),
        error=IllegalActionError,
    )


class raw_env(AECEnv):
    """Friday the 13th for 3-6 players; see docs/friday13.md for the observation and action reference."""

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
        check_deck_name(deck)
        check_choice("reward mode", reward, REWARD_MODES)
        check_render_mode(render_mode)
        self.rules = Rules(num_players=num_players, deck=get_deck(deck), num_rounds=num_rounds)
        self.reward_mode = reward
        self.illegal_action_reward = illegal_action_reward(reward, self.rules.deck, self.rules.num_rounds)
        """The offender's reward when ``env()`` ends a game on an illegal action (``rewards.illegal_action_reward``)."""
        self.render_mode = render_mode
        self.layout = observation_layout(self.rules.deck)
        self.canvas = TableCanvas.for_table(self.rules.deck, self.rules.num_players)
        """The ``rgb_array`` image's size: one shape for every position of this table."""
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
        return self.observation_spaces[self.possible_agents[self.seat_of(agent)]]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[self.possible_agents[self.seat_of(agent)]]

    def seat_of(self, agent: str) -> int:
        """The seat of an agent name; a ``ValueError`` naming the agents for any other name."""
        seat = self._seats.get(agent) if isinstance(agent, str) else None
        if seat is None:
            raise ValueError(f"no agent {agent!r}; agents: {self.possible_agents}")
        return seat

    # -- lifecycle ---------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game. A seed (``None`` or a non-negative int, else a ``ValueError`` before anything changes)
        re-seeds the environment's one ``numpy`` Generator; no options are taken (``check_reset_options``:
        PettingZoo's ``api_test`` probe is ignored, anything else is a ``ValueError``)."""
        check_seed(seed)
        check_reset_options(options, ignored=[PETTINGZOO_PROBE_OPTION])
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.game = new_game(self.rules, self._rng)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: dict(NEUTRAL_INFO) for agent in self.agents}
        self.agent_selection = self.possible_agents[self.game.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The player-relative observation of ``agent``; its mask is all zeros unless it is to move."""
        game = self._require_game()
        seat = self.seat_of(agent)
        if seat == game.current and not game.round_over and not self.terminations.get(agent, True):
            mask = np.array(action_mask(game), dtype=np.int8)
        else:
            mask = self._no_moves.copy()
        return {"observation": encode_observation(game, seat), "action_mask": mask}

    def state(self) -> np.ndarray:
        """The full state (every hand) for centralised critics; see ``encoding.state_layout``."""
        return encode_state(self._require_game())

    def step(self, action: int | np.integer | np.ndarray | None) -> None:
        """Play ``action`` for ``agent_selection``; a finished agent must step ``None`` (and is then removed).

        An illegal, out-of-range or non-integer action raises a ``ValueError`` naming the legal
        actions and changes nothing.
        """
        game = self._require_game()
        if not self.agents:
            raise RuntimeError("step() called after the game ended (every agent is done); call reset() first")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._remove_done_agent(action)
            return
        if action is None:
            raise IllegalActionError(f"{agent} is to move and must play a card; legal actions: {legal_actions(game)}")
        play(game, as_action(action, game))
        rewards = dict.fromkeys(self.agents, 0.0)
        infos = self._score_round(game, rewards) if game.round_over else self._infos(game)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = rewards
        self.infos = infos
        self.agent_selection = self.possible_agents[game.current]
        for name, reward in rewards.items():
            self._cumulative_rewards[name] += reward
        if self.render_mode == "human":
            self.render()

    def end_on_illegal_action(self) -> None:
        """End the game because ``agent_selection`` chose an illegal action (``env()``'s convention); nothing is played.

        The offender receives ``illegal_action_reward`` (below anything legal play reaches), the others 0; every
        agent is terminated and truncated, the offender's info says ``illegal_action``, and the finished agents
        then step ``None`` in turn as at the end of any game.
        """
        game = self._require_game()
        offender = self.agent_selection
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[offender] = self.illegal_action_reward
        self.infos = self._infos(game)
        self.infos[offender]["illegal_action"] = True
        self._cumulative_rewards[offender] = 0.0
        for name, reward in self.rewards.items():
            self._cumulative_rewards[name] += reward
        self.agent_selection = self.agents[0]

    def _remove_done_agent(self, action: object) -> None:
        """The step of a finished agent: it leaves ``agents``, and the next finished agent is selected."""
        if action is not None:
            raise ValueError(f"{self.agent_selection} is done: the only valid action is None, got {action!r}")
        agent = self.agent_selection
        for table in (self.terminations, self.truncations, self.rewards, self._cumulative_rewards, self.infos):
            del table[agent]
        self.agents.remove(agent)
        done = [name for name in self.agents if self.terminations[name] or self.truncations[name]]
        if done:
            self.agent_selection = done[0]
        self.rewards = dict.fromkeys(self.agents, 0.0)

    def _infos(self, game: GameState) -> dict[str, dict[str, Any]]:
        """Every agent's info for a step that ended no round: neutral values, the round and the totals."""
        scores = game.scores
        return {
            agent: {**NEUTRAL_INFO, "round": game.round, "total_points": scores[self._seats[agent]]}
            for agent in self.agents
        }

    def _score_round(self, game: GameState, rewards: dict[str, float]) -> dict[str, dict[str, Any]]:
        """Rewards and infos of a round end; deals the next round or ends the game."""
        points = game.last_round_points
        assert points is not None
        scores = game.scores
        best = min(scores)
        earned = table_rewards(points, scores, game.game_over, self.reward_mode)
        infos = {}
        for seat, agent in enumerate(self.possible_agents):
            infos[agent] = {
                **NEUTRAL_INFO,
                "round": game.round,
                "round_over": True,
                "round_points": points[seat],
                "total_points": scores[seat],
                "winner": game.game_over and scores[seat] == best,
            }
            rewards[agent] = earned[seat]
        if game.game_over:
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            next_round(game, self._rng)
        return infos

    def render(self) -> str | np.ndarray | None:
        """``ansi`` returns the table as text, ``rgb_array`` as a ``uint8`` (H, W, 3) image; ``human`` prints it.

        The hand shown is that of the player to move. Every image of this environment has the shape
        ``canvas.shape``.
        """
        if self.render_mode is None:
            checks.no_render_mode()
            return None
        game = self._require_game()
        if self.render_mode == "rgb_array":
            return render_rgb(game, self.canvas)
        text = render_state(game)
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


_SET_AT_RESET = frozenset(
    {"agent_selection", "agents", "terminations", "truncations", "rewards", "infos", "num_agents"}
)


class CheckedEnv(AECEnv):
    """PettingZoo's standard checks in one layer instead of three, so that they stay cheap.

    Behaves like ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(env)))``:
    calls before ``reset`` are errors, an out-of-range or non-integer action is a ``ValueError``,
    and a legal-range but illegal action ends the game with ``raw_env.illegal_action_reward`` for the
    offender and 0 for the others. It subclasses ``AECEnv`` itself, not PettingZoo's wrappers,
    whose internals change between releases: everything it reads of the wrapped ``raw_env`` is
    public, and ``unwrapped`` is that ``raw_env``.
    """

    def __init__(self, env: raw_env) -> None:
        super().__init__()
        self.env = env
        self.metadata = env.metadata
        self.possible_agents = env.possible_agents
        self.render_mode = env.render_mode
        self.state_space = env.state_space
        self._started = False
        self._updated = False

    @property
    def unwrapped(self) -> raw_env:
        return self.env

    def __getattr__(self, name: str) -> Any:
        """Public attributes of the wrapped environment (``rules``, ``game``, ``layout``...)."""
        env = self.__dict__.get("env")
        if name in _SET_AT_RESET:  # a property above raised: the environment is not reset yet
            raise AttributeError(f"{name} cannot be accessed before reset")
        if env is None or name.startswith("_"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(env, name)

    # -- the AEC attributes, readable after reset --------------------------------------------
    @property
    def agent_selection(self) -> str:
        self._check_reset("agent_selection")
        return self.env.agent_selection

    @property
    def agents(self) -> list[str]:
        self._check_reset("agents")
        return self.env.agents

    @property
    def terminations(self) -> dict[str, bool]:
        self._check_reset("terminations")
        return self.env.terminations

    @property
    def truncations(self) -> dict[str, bool]:
        self._check_reset("truncations")
        return self.env.truncations

    @property
    def rewards(self) -> dict[str, float]:
        self._check_reset("rewards")
        return self.env.rewards

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        self._check_reset("infos")
        return self.env.infos

    @property
    def _cumulative_rewards(self) -> dict[str, float]:
        """The AEC protocol's cumulative rewards (read by tools that expect PettingZoo's wrappers to pass them on)."""
        self._check_reset("_cumulative_rewards")
        return self.env._cumulative_rewards

    def _check_reset(self, name: str) -> None:
        if not self._started:
            raise AttributeError(f"{name} cannot be accessed before reset")

    # -- the AEC methods ---------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.env.observation_space(agent)

    def action_space(self, agent: str) -> spaces.Space:
        return self.env.action_space(agent)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self._started = True
        self._updated = True

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if not self._started:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    def state(self) -> np.ndarray:
        if not self._started:
            EnvLogger.error_state_before_reset()
        return self.env.state()

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self._check_reset("last()")
        return self.env.last(observe)

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:
        """The agent to move, until the game is over; ``step`` must be called between two agents."""
        if not self._started:
            EnvLogger.error_agent_iter_before_reset()
        return _OrderedAgentIterator(self, max_iter)

    def step(self, action: int | np.integer | np.ndarray | None) -> None:
        raw = self.env
        if not self._started:
            EnvLogger.error_step_before_reset()
        self._updated = True
        if not raw.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = raw.agent_selection
        if raw.terminations[agent] or raw.truncations[agent]:
            raw.step(action)
            return
        game = raw._require_game()
        action = as_action(action, game)
        if is_legal(game, action):
            raw.step(action)
            return
        EnvLogger.warn_on_illegal_move()
        raw.end_on_illegal_action()

    def render(self) -> str | np.ndarray | None:
        if not self._started:
            EnvLogger.error_render_before_reset()
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def __str__(self) -> str:
        return str(self.env)


class _OrderedAgentIterator(Iterator[str]):
    """``agent_iter``'s iterator: the agent to move, asserting that the loop stepped since the last one."""

    def __init__(self, env: CheckedEnv, max_iter: int) -> None:
        self.env = env
        self.left = max_iter

    def __iter__(self) -> _OrderedAgentIterator:
        return self

    def __next__(self) -> str:
        env = self.env
        if not env.agents or self.left <= 0:
            raise StopIteration
        self.left -= 1
        if not env._updated:
            raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
        env._updated = False
        return env.agent_selection


def env(**kwargs: Any) -> CheckedEnv:
    """The standard wrapped environment (PettingZoo's conventions); options as for ``raw_env``."""
    return CheckedEnv(raw_env(**kwargs))
