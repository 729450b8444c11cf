"""A review of 0.27.0: what a user's agent raises in its ``reset(seed)`` hook is named as what its ``act`` raises
(an ``AgentRaisedError`` naming the agent), in the card game's and the solo game's evaluations and environments."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from friday13_env.core.agent import AgentRaisedError, Observation, reseeded
from friday13_env.friday.evaluation import evaluate as evaluate_friday
from friday13_env.friday13.evaluation import Matchup, evaluate


class FailsOnReset:
    """A user's agent whose per-episode hook fails."""

    name = "fails-on-reset"

    def reset(self, seed: int | None = None) -> None:
        raise KeyError("no such table")

    def act(self, observation: Observation) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_reseeded_names_the_agent_and_the_hook() -> None:
    with pytest.raises(
        AgentRaisedError, match=r"agent 'fails-on-reset' raised KeyError: 'no such table' in its reset\(seed=3\)"
    ):
        reseeded(FailsOnReset(), 3)


def test_the_card_game_evaluation_names_an_agent_whose_reset_fails() -> None:
    with pytest.raises(AgentRaisedError, match=r"agent 'fails-on-reset' raised KeyError"):
        evaluate([Matchup.versus(FailsOnReset(), "random")], num_games=4, num_players=4, seed=0)


def test_the_solo_evaluation_names_an_agent_whose_reset_fails() -> None:
    with pytest.raises(AgentRaisedError, match=r"agent 'fails-on-reset' raised KeyError"):
        evaluate_friday(FailsOnReset(), level=1, games=1, seed=0)


def test_the_single_agent_env_names_an_opponent_whose_reset_fails() -> None:
    env = gym.make("friday13_env/Friday13-v0", num_players=3, opponents=[FailsOnReset(), "random"])
    with pytest.raises(AgentRaisedError, match=r"agent 'fails-on-reset' raised KeyError"):
        env.reset(seed=0)
