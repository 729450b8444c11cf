"""A review of the environments as a hostile user (release 0.17.0): what a user's own opponents and a call to
``render()`` without a render mode broke.

- An opponent factory passed as an object was always called with ``seed=``, where a spec string names the same
  factory and calls it with ``seed=`` only if it takes one: a factory without a seed failed at the first ``reset``.
- An agent object whose ``reset`` hook takes no seed was accepted, then failed with a bare ``TypeError`` at the
  first ``reset``; it is refused when the environment is built, and the evaluations refuse it too.
- ``render()`` with ``render_mode=None`` raised in the card game where Gymnasium, PettingZoo and the solo game
  return ``None`` with a warning.
- ``decode_observation`` took a ``Deck`` only, where every environment takes the deck by name.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import friday13_env  # noqa: F401  (registers the Gymnasium ids)
from friday13_env.core.agent import reseeded
from friday13_env.friday.env import FridayEnv
from friday13_env.friday13.aec import raw_env
from friday13_env.friday13.cards import STANDARD_DECK
from friday13_env.friday13.encoding import decode_observation
from friday13_env.friday13.single_agent import Friday13Env


class SeedlessAgent:
    """A user's agent class that takes no seed: it plays the first legal card."""

    name = "seedless"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


class ResetWithoutSeed(SeedlessAgent):
    """An agent whose per-episode ``reset`` hook takes no seed."""

    name = "reset-without-seed"

    def reset(self) -> None:
        """Forget the episode (a common hook; not the environments' ``reset(seed)``)."""


class ResetWithSeed(SeedlessAgent):
    name = "reset-with-seed"

    def __init__(self) -> None:
        self.seeds: list[int | None] = []

    def reset(self, seed: int | None = None) -> None:
        self.seeds.append(seed)


def test_a_factory_without_a_seed_passed_as_an_object_plays_as_its_spec_string_does() -> None:
    environment = gym.make("friday13_env/Friday13-v0", opponent_pool=[SeedlessAgent])
    _, info = environment.reset(seed=0)
    assert set(info["opponents"].values()) == {"seedless"}
    environment.step(int(np.flatnonzero(info["action_mask"])[0]))


def test_a_factory_that_raises_is_a_value_error_naming_it() -> None:
    def broken(seed: int | None = None) -> Any:
        raise RuntimeError("no table today")

    environment = Friday13Env(opponent_pool=[broken])
    with pytest.raises(ValueError, match=r"broken.*raised RuntimeError: no table today"):
        environment.reset(seed=0)


def test_an_agent_whose_reset_takes_no_seed_is_refused_when_the_environment_is_built() -> None:
    with pytest.raises(ValueError, match=r"reset-without-seed.*reset\(seed\)"):
        Friday13Env(opponent_pool=[ResetWithoutSeed()])


def test_reseeded_refuses_a_reset_hook_without_a_seed_and_calls_one_with_it() -> None:
    with pytest.raises(ValueError, match=r"reset-without-seed.*reset\(seed\)"):
        reseeded(ResetWithoutSeed(), 3)
    agent = ResetWithSeed()
    assert reseeded(agent, 3)
    assert agent.seeds == [3]
    assert not reseeded(SeedlessAgent(), 3)


def test_evaluation_refuses_an_agent_whose_reset_takes_no_seed_before_any_game() -> None:
    from friday13_env.friday13.evaluation import focus_matchups
    from friday13_env.friday13.evaluation.tournament import check_config

    with pytest.raises(ValueError, match=r"reset\(seed\)"):
        check_config(focus_matchups(ResetWithoutSeed(), ["random"]), num_games=4, counts=[4])


@pytest.mark.parametrize("build", [lambda: raw_env(), lambda: Friday13Env(), lambda: FridayEnv()])
def test_render_without_a_render_mode_warns_and_returns_none(build: Any, caplog: pytest.LogCaptureFixture) -> None:
    assert_render_warns_and_returns_none(build(), caplog)


def assert_render_warns_and_returns_none(environment: Any, caplog: pytest.LogCaptureFixture) -> None:
    """``render()`` of an environment made without a render mode: ``None``, and a warning that names it."""
    environment.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with caplog.at_level(logging.WARNING), warnings.catch_warnings(record=True) as caught:
            assert environment.render() is None
    messages = [str(warning.message) for warning in caught] + [record.getMessage() for record in caplog.records]
    assert any("render_mode" in message for message in messages), messages


def test_decode_observation_takes_the_deck_by_name_as_the_environments_do() -> None:
    environment = raw_env(deck="standard")
    environment.reset(seed=0)
    observation = environment.observe(environment.agent_selection)["observation"]
    by_name = decode_observation(observation, "standard")
    by_deck = decode_observation(observation, STANDARD_DECK)
    assert by_name.keys() == by_deck.keys()
    assert all(np.array_equal(by_name[key], by_deck[key]) for key in by_name)
    with pytest.raises(ValueError, match="unknown deck 'tarot'; allowed values"):
        decode_observation(observation, "tarot")
