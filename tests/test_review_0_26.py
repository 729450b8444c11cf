"""A review of 0.26.0's docs against the code: the card game's ``random`` agent checks its observation as every
other agent does (docs/agents.md), and samples that are all the same value have no spread, whatever float
rounding makes of their mean (docs/evaluation.md: such a result prints "no spread", its half-width 0)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from friday13_env.core.stats import mean_interval
from friday13_env.friday13 import agents


def observation(vector_size: int = 146, mask_size: int = 18, fill: float = 0.0) -> dict[str, np.ndarray]:
    mask = np.zeros(mask_size, dtype=np.int8)
    mask[min(2, mask_size - 1)] = 1
    return {"observation": np.full(vector_size, fill, dtype=np.float32), "action_mask": mask}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (observation(vector_size=10), r"an observation of length 10 matches no deck"),
        (observation(fill=math.nan), r"non-finite values"),
        (observation(fill=-1.0), r"negative values"),
        (observation(mask_size=5), r"expected an action mask of shape \(18,\)"),
    ],
)
def test_the_random_agent_refuses_an_observation_no_game_shows(bad: dict[str, np.ndarray], message: str) -> None:
    for name in ("random", "cautious"):  # the same words as every other agent
        with pytest.raises(ValueError, match=message):
            agents.make(name, seed=0).act(bad)


def test_the_random_agent_still_plays_a_legal_move() -> None:
    import friday13_env

    env = friday13_env.env(num_players=4)
    env.reset(seed=3)
    agent = agents.make("random", seed=0)
    seen = env.observe(env.agent_selection)
    assert seen["action_mask"][agent.act(seen)] == 1


@pytest.mark.parametrize("value", [1 / 3, 0.1, 2 / 3, 0.0, 1.0])
def test_identical_samples_have_no_spread(value: float) -> None:
    estimate = mean_interval(np.full(100, value), bounds=(0.0, 1.0))
    assert estimate.half_width == 0.0 and estimate.mean == value
    assert estimate.formatted() == f"{value:.3f} (no spread in 100 samples)"


def test_an_agent_checked_twice_is_named_once() -> None:
    """The benchmark and the ratings wrap a user's agent (``CheckedAgent``) and the duplicate games check every agent
    again: what it raised is said once, not as an ``AgentRaisedError`` that an ``AgentRaisedError`` raised."""
    from friday13_env.core.agent import AgentRaisedError, CheckedAgent, checked_act

    class Raising:
        name = "raising"

        def act(self, observation: object) -> int:
            raise KeyError("no such card")

    with pytest.raises(AgentRaisedError) as raised:
        checked_act(CheckedAgent(Raising(), "in a game"), {}, "in seat player_0")
    assert str(raised.value) == "agent 'raising' raised KeyError: 'no such card' in a game"


def test_exact_array_reads_only_lists_and_tuples_entry_by_entry() -> None:
    """Other sequences numpy reads (a range, an ``array.array``) are not lists a bool can hide in: read as they are."""
    import array

    from friday13_env.core.checks import exact_array

    assert exact_array(range(3), "actions").tolist() == [0, 1, 2]
    assert exact_array(array.array("q", [4, 5]), "actions").tolist() == [4, 5]
    with pytest.raises(ValueError, match=r"actions hold a bool \(at index 1\)"):
        exact_array((3, np.bool_(True)), "actions")
    with pytest.raises(ValueError, match=r"actions hold a bool \(at index 2\)"):
        exact_array([[0, 1], [True, 2]], "actions")


def test_a_batched_agent_answering_a_bool_in_a_list_is_refused() -> None:
    from friday13_env.friday13.batched import make_batched
    from friday13_env.friday13.batched.agents import act_seated
    from friday13_env.friday13.batched.engine import GameBatch

    class BoolAnswers:
        name = "bool-answers"

        def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> list[object]:
            return [True, *[0] * (len(masks) - 1)]

    batch = GameBatch(2, 4, "standard", seed=0)
    seated = np.zeros((2, 6), dtype=np.int64)
    with pytest.raises(ValueError, match=r"batched agent 'bool-answers' answered .*a bool"):
        act_seated([BoolAnswers()], seated, batch, np.arange(2), np.random.default_rng(0))
    assert make_batched("cautious", "standard").name == "cautious"
