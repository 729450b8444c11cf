"""PettingZoo conformance of every configuration, in one shared test.

Runs PettingZoo's own ``api_test``, ``seed_test`` and ``render_test``, then checks what those do
not: every observation lies in its ``observation_space`` and every ``state()`` in ``state_space``
at every step, and a pickled mid-game copy plays on exactly like the original (its Generator
included). ``max_cycles_test`` is not applicable: it needs a ``max_cycles`` option, and a game here
ends by itself after a fixed number of plays. ``performance_benchmark`` belongs in ``benchmarks/``.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from friday13_env import env, raw_env
from friday13_env.friday13.aec import CheckedEnv
from friday13_env.friday13.cards import DECKS
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS
from tests.conftest import choose

PLAYER_COUNTS = range(MIN_PLAYERS, MAX_PLAYERS + 1)
CONFIGS = [
    *({"num_players": n, "deck": deck} for n in PLAYER_COUNTS for deck in sorted(DECKS)),
    {"num_players": 4, "deck": "standard", "reward": "win"},
    {"num_players": 3, "deck": "german", "reward": "relative"},
    {"num_players": 6, "deck": "german", "reward": "win", "num_rounds": 1},
    {"num_players": 5, "deck": "standard", "reward": "relative", "num_rounds": 2},
]


def config_id(options: dict[str, Any]) -> str:
    return "-".join(str(value) for value in options.values())


def check_spaces_at_every_step(aec: CheckedEnv, seed: int) -> None:
    aec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = 0
    for _ in aec.agent_iter():
        for name in aec.agents:
            observation = aec.observe(name)
            assert aec.observation_space(name).contains(observation), f"{name}'s observation left its space"
        assert aec.state_space.contains(aec.state()), "state() left state_space"
        observation, _, terminated, truncated, _ = aec.last()
        aec.step(None if terminated or truncated else choose(observation["action_mask"], rng))
        steps += 1
    assert steps > aec.unwrapped.rules.num_rounds * aec.unwrapped.rules.cards_per_round


def play_steps(aec: CheckedEnv, rng: np.random.Generator, steps: int) -> list[tuple[Any, ...]]:
    """Play ``steps`` steps (or to the end) and record everything every agent could see."""
    record = []
    for agent in aec.agent_iter(steps):
        observation, reward, terminated, truncated, info = aec.last()
        record.append((agent, reward, terminated, info, aec.state().tolist()))
        record.extend((name, aec.observe(name)["observation"].tolist()) for name in aec.agents)
        aec.step(None if terminated or truncated else choose(observation["action_mask"], rng))
    return record


def check_pickle_round_trip(aec: CheckedEnv, seed: int) -> None:
    aec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    play_steps(aec, rng, 17)
    clone: CheckedEnv = pickle.loads(pickle.dumps(aec))
    assert clone.agent_selection == aec.agent_selection
    # Past at least one more round end, so the reshuffle must come from an identical Generator.
    horizon = 2 * aec.unwrapped.rules.cards_per_round
    expected = play_steps(aec, np.random.default_rng(seed + 1), horizon)
    assert play_steps(clone, np.random.default_rng(seed + 1), horizon) == expected


# api_test warns about any Dict observation, yet {"observation", "action_mask"} is exactly the form
# PettingZoo's own classic games use for masked actions.
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be:UserWarning")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning")
@pytest.mark.parametrize("options", CONFIGS, ids=config_id)
def test_pettingzoo_conformance(options: dict[str, Any]) -> None:
    api_test(env(**options), num_cycles=1000)
    api_test(raw_env(**options), num_cycles=1000)
    seed_test(lambda: env(**options), num_cycles=1000)
    render_test(lambda render_mode=None: env(**options, render_mode=render_mode))
    check_spaces_at_every_step(env(**options), seed=11)
    check_pickle_round_trip(env(**options), seed=3)


# 3V+1 hand, 3 pile totals, 3x(3V+1) pile cards, 6x4 captured, 3V+1 unseen, 6 hand sizes, 2 round,
# 6 scores, 6 seat flags, 1 dummy flag.
OBSERVATION_SIZES = {"standard": 146, "german": 164}


@pytest.mark.parametrize("deck", sorted(DECKS))
def test_observation_size_does_not_depend_on_the_player_count(deck: str) -> None:
    """One policy network can play every table size (Pgx-style): seats are padded to six."""
    observation_sizes = set()
    state_sizes = set()
    for num_players in PLAYER_COUNTS:
        aec = raw_env(num_players=num_players, deck=deck)
        aec.reset(seed=0)
        for agent in aec.possible_agents:
            observation_sizes.add(aec.observation_space(agent)["observation"].shape)
            observation_sizes.add(aec.observe(agent)["observation"].shape)
        state_sizes.add(aec.state_space.shape)
        state_sizes.add(aec.state().shape)
    assert observation_sizes == {(OBSERVATION_SIZES[deck],)}
    assert len(state_sizes) == 1
