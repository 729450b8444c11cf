"""A review of the solo agents as a hostile user (release 0.17.0): a Monte-Carlo option without an upper bound
passed the checks and then allocated a sample per play, crashing (``budget=10**20``) or exhausting memory and time
(``budget=10**9``) at the first move, where every other bad option is a ``ValueError`` before any game."""

from __future__ import annotations

from typing import Any

import pytest

from friday13_env.friday import agents
from friday13_env.friday.agents.expert import MAX_SAMPLES


@pytest.mark.parametrize(
    ("name", "option"), [("search", "budget"), ("search", "rollout_samples"), ("heuristic", "samples")]
)
@pytest.mark.parametrize("value", [MAX_SAMPLES + 1, 10**9, 99999999999999999999])
def test_a_sample_count_above_the_maximum_is_refused_when_the_agent_is_made(name: str, option: str, value: Any) -> None:
    with pytest.raises(ValueError, match=rf"{name} option {option} must be an integer from 1 to 10,000, got"):
        agents.make(name, seed=0, **{option: value})
    with pytest.raises(ValueError, match=rf"{option} must be an integer from 1 to 10,000"):
        agents.make(f"{name}:{option}={value}", seed=0)


@pytest.mark.parametrize(
    ("name", "option"), [("search", "budget"), ("search", "rollout_samples"), ("heuristic", "samples")]
)
def test_the_maximum_itself_is_allowed(name: str, option: str) -> None:
    agents.make(name, seed=0, **{option: MAX_SAMPLES})


def test_a_horizon_past_the_end_of_any_game_is_allowed() -> None:
    agents.make("search", seed=0, horizon=10**30)
