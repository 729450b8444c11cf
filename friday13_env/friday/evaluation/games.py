"""Play a Friday agent's evaluation games at one level: wins, scores and time per decision, as a
:class:`LevelResult` with 95% confidence intervals (Wilson for the win rate, Student-t for the mean score, both
from :mod:`friday13_env.core.stats`; undefined for one game).

Game ``g`` of a run with seed ``s`` resets the environment with seed ``d = s * 1_000_003 + g`` and plays it
with an agent built from the spec with seed ``derived_seed(d, AGENT_KEY)`` (``make(spec, seed=...)``; a key of its
own, so the agent's draws are not the deal's), so results are reproducible and every agent faces the same deals.
An agent object instead of a spec plays every game; its optional ``reset(seed)`` hook, if it has one, is called
with that seed. An illegal move is an
error naming the agent, never a game scored as lost: a result only counts games played to their end.
Games are played one at a time and only their scores are kept (8 bytes a game), so any ``games`` starts at once.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from friday13_env.core import stats
from friday13_env.core.agent import Agent, IllegalMoveError, checked_act, reseeded
from friday13_env.core.options import MAX_GAMES, count_option
from friday13_env.core.seeds import AGENT_KEY, derived_seed
from friday13_env.core.specs import AgentSpec, parse_spec, shown
from friday13_env.core.stats import Interval, wilson_interval
from friday13_env.friday.agents import REGISTRY, make
from friday13_env.friday.env import FridayEnv, observation_dict
from friday13_env.friday.levels import check_level


@dataclass(frozen=True, slots=True)
class LevelResult:
    """Results of one agent at one level."""

    agent: str
    level: int
    games: int
    wins: int
    win_rate: Interval
    mean_score: Interval
    mean_steps: float
    ms_per_decision: float
    """Wall time per decision, agent and environment together (depends on the machine and its load)."""


def mean_interval(values: Sequence[float]) -> Interval:
    """Mean with a Student-t 95% interval (undefined, ``nan`` ends, for fewer than two values)."""
    return stats.mean_interval(values).interval


def game_seed(seed: int, game: int) -> int:
    """Seed of game ``game`` in a run seeded with ``seed``."""
    return seed * 1_000_003 + game


def agent_seed(game_seed: int) -> int:
    """Seed of the agent that plays the game dealt from ``game_seed``."""
    return derived_seed(game_seed, AGENT_KEY)


def play_game(env: FridayEnv, agent: Agent, seed: int) -> tuple[bool, int, int]:
    """Play one game with ``agent`` as it is; returns (won, score, number of decisions).

    A move the environment refuses is a ``ValueError`` naming the agent, whichever ``illegal_action`` the
    environment has: its own error under ``"raise"``, and under ``"end"`` the episode it ended, which is not
    returned as a lost game."""
    obs, info = env.reset(seed=seed)
    steps, done = 0, False
    while not done:
        mask = info["action_mask"]
        action = checked_act(agent, observation_dict(obs, info), f"at decision {steps}")
        try:
            obs, _, done, truncated, info = env.step(action)
        except ValueError as error:
            raise IllegalMoveError(f"agent {agent.name!r} played an illegal move: {error}") from error
        if info["illegal_action"]:
            legal = np.flatnonzero(mask).tolist()
            raise IllegalMoveError(
                f"agent {agent.name!r} played an illegal move: illegal action {int(action)}; legal actions: {legal} "
                "(the environment ended the episode, so the game has no result)"
            )
        steps += 1
        if truncated:
            raise IllegalMoveError(
                f"agent {agent.name!r} kept the game going for {steps:,} decisions without an end (the environment "
                "truncates such an episode: docs/friday.md), so the game has no result"
            )
    return bool(info["won"]), int(info["score"]), steps


def evaluate(
    agent: str | AgentSpec | Agent,
    level: int | np.integer,
    games: int | np.integer,
    seed: int | np.integer = 0,
    progress: Callable[[int], None] | None = None,
) -> LevelResult:
    """Play ``games`` games at ``level`` and summarise them.

    ``agent`` is a spec (``"search:budget=16"``, a zoo name, a checkpoint path: one agent is built per
    game, seeded with ``agent_seed`` of the game's seed) or an agent object (its ``reset(seed)`` hook, if any, is
    called with that seed before each game). Rows are labelled with the spec, or the agent's ``name`` (a non-empty
    ``str``). Anything else as ``agent``, or a ``progress`` that is neither None nor callable (it is called with the
    games played after each game), is a ``ValueError`` before any game; an illegal move is one naming the agent
    (:func:`play_game`). ``games`` (positive, at most ``MAX_GAMES``) and ``seed`` (non-negative) are ints, numpy
    integers too, as ``reset`` and ``make`` take them; a bool or a float is a ``ValueError``.
    """
    level = check_level(level)
    games = count_option("games", games, maximum=MAX_GAMES, takes=f"a positive int, at most {MAX_GAMES:,}")
    seed = count_option("seed", seed, minimum=0, takes="a non-negative int")
    if progress is not None and not callable(progress):
        raise ValueError(
            f"progress must be None or a callable taking the number of games played so far, got {shown(progress)}"
        )
    if isinstance(agent, str | AgentSpec):
        spec = REGISTRY.check(parse_spec(agent))
        label = spec.label

        def agent_for(game_seed: int) -> Agent:
            return make(spec, seed=game_seed)
    elif isinstance(agent, Agent) and callable(agent.act):
        if not isinstance(agent.name, str) or not agent.name:
            raise ValueError(
                f"agent.name must be a non-empty str (it labels the result's row), got {shown(agent.name)}"
            )
        label = agent.name

        def agent_for(game_seed: int) -> Agent:
            reseeded(agent, game_seed)
            return agent
    else:
        raise ValueError(
            "agent must be an agent spec (a string such as 'search:budget=16', or an AgentSpec) or an object with a "
            f"name and an act(observation) method, got {shown(agent)}"
        )

    env = FridayEnv(level=level, illegal_action="raise")
    wins, steps, scores = 0, 0, array("q")  # the scores, in game order, for the interval; 8 bytes a game
    start = time.perf_counter()
    for game in range(games):
        number = game_seed(seed, game)
        won, score, n = play_game(env, agent_for(agent_seed(number)), number)
        wins += won
        scores.append(score)
        steps += n
        if progress is not None:
            progress(game + 1)
    return LevelResult(
        label,
        level,
        games,
        wins,
        wilson_interval(wins, games),
        mean_interval(scores),
        steps / games,
        1000.0 * (time.perf_counter() - start) / max(steps, 1),
    )


@dataclass(frozen=True, slots=True)
class LevelUnit:
    """One agent's ``games`` games at one level, from run seed ``seed``: a unit of work for a worker process."""

    spec: AgentSpec
    level: int
    games: int
    seed: int


def play_level(unit: LevelUnit) -> tuple[LevelResult, float]:
    """``evaluate`` of the unit, with its wall time in seconds (module-level, so a process pool can run it)."""
    start = time.perf_counter()
    result = evaluate(unit.spec, unit.level, unit.games, unit.seed)
    return result, time.perf_counter() - start
