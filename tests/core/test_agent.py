"""What a policy agent is handed is checked first: a malformed observation is a ``ValueError`` naming the problem.

Both the game-agnostic :class:`PolicyAgent` and the card game's :class:`Friday13PolicyAgent` (the zoo's
``ensemble-v1``, as ``agents.make`` builds it) are shown each broken observation; neither may
answer with a move, a ``KeyError``/``IndexError`` from deep inside, or a forward pass over garbage.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from friday13_env import agents, raw_env
from friday13_env.core.agent import checked_observation, legal_actions, observation_arrays
from friday13_env.core.mlp import PolicyAgent
from friday13_env.friday13.agents.policy import Friday13PolicyAgent


def policy_agent(kind: str) -> PolicyAgent:
    card = agents.make("ensemble-v1", seed=0)
    assert isinstance(card, Friday13PolicyAgent)
    return card if kind == "card" else PolicyAgent(card.policy, name="core", seed=0)


def table_observation() -> dict[str, np.ndarray]:
    env = raw_env(num_players=4)
    env.reset(seed=0)
    return dict(env.observe(env.agent_selection))


VALID = table_observation()
VECTOR, MASK = VALID["observation"], VALID["action_mask"]
GERMAN_SIZE = 164

BROKEN: dict[str, tuple[Any, str]] = {
    "an array": (VECTOR, r"an agent needs the observation dict .*got ndarray"),
    "a list": (list(VECTOR), r"an agent needs the observation dict .*got list"),
    "None": (None, r"an agent needs the observation dict .*got NoneType"),
    "no action mask": ({"observation": VECTOR}, r"has no 'action_mask' entry \(its keys: \['observation'\]\)"),
    "no observation": ({"action_mask": MASK}, r"'observation' entry"),
    "an empty dict": (
        {},
        r"the 'observation' entry is missing \(got \[\]\)"
        r"|has no 'observation' and no 'action_mask' entry \(its keys: \[\]\)",
    ),
    "a short vector": (
        {"observation": VECTOR[:10], "action_mask": MASK},
        r"an observation of length 10 matches no deck|vector of shape \(146,\), got \(10,\)",
    ),
    "the other deck's length": (
        {"observation": np.zeros(GERMAN_SIZE, dtype=np.float32), "action_mask": MASK},
        r"trained for the 'standard' deck, but this table plays the 'german' deck|shape \(146,\), got \(164,\)",
    ),
    "a batch of one": ({"observation": VECTOR[None, :], "action_mask": MASK}, r"\(1, 146\)"),
    "a NaN": ({"observation": np.where(np.arange(VECTOR.size) == 3, np.nan, VECTOR), "action_mask": MASK}, "NaN"),
    "an inf": ({"observation": np.where(np.arange(VECTOR.size) == 3, np.inf, VECTOR), "action_mask": MASK}, "inf"),
    "text": ({"observation": VECTOR.astype(str), "action_mask": MASK}, r"non-numeric values \(dtype <U"),
    "a short mask": ({"observation": VECTOR, "action_mask": MASK[:-1]}, r"action mask of shape \(18,\), got \(17,\)"),
    "no legal action": ({"observation": VECTOR, "action_mask": np.zeros_like(MASK)}, "no legal action"),
    "a text mask": ({"observation": VECTOR, "action_mask": MASK.astype(str)}, "action mask holds non-numeric"),
}


@pytest.mark.parametrize("kind", ["card", "core"])
def test_a_valid_observation_gets_a_legal_move(kind: str) -> None:
    agent = policy_agent(kind)
    action = agent.act(VALID)
    assert isinstance(action, int) and MASK[action] == 1
    legal, logits = agent.legal_logits(VALID)
    assert legal.tolist() == np.flatnonzero(MASK).tolist() and np.all(np.isfinite(logits))


@pytest.mark.parametrize("kind", ["card", "core"])
@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_observation_is_a_value_error_naming_the_problem(kind: str, case: str) -> None:
    observation, message = BROKEN[case]
    agent = policy_agent(kind)
    with pytest.raises(ValueError, match=message):
        agent.act(observation)
    with pytest.raises(ValueError, match=message):
        agent.legal_logits(observation)


def test_the_core_checks_name_the_agent() -> None:
    with pytest.raises(ValueError, match=r"^bot: expected an observation vector of shape \(5,\)"):
        checked_observation(VALID, 5, 18, agent="bot")
    with pytest.raises(ValueError, match=r"^bot: an agent needs the observation dict"):
        observation_arrays([1, 2], agent="bot")
    with pytest.raises(ValueError, match=r"^bot: the observation dict has no 'action_mask' entry"):
        legal_actions({"observation": VECTOR}, agent="bot")
    assert legal_actions(VALID).tolist() == np.flatnonzero(MASK).tolist()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_a_float_vector_is_refused_for_any_non_finite_entry_and_passed_with_huge_finite_ones(dtype: type) -> None:
    """The finite check of a float vector that may be negative (one pass) must neither miss a NaN or inf
    anywhere nor refuse the largest finite values."""
    mask = np.ones(3, dtype=np.int8)
    huge = np.finfo(dtype).max
    vector, legal = checked_observation({"observation": np.array([huge, -huge, 1], dtype), "action_mask": mask}, 3, 3)
    assert legal.tolist() == [0, 1, 2] and vector.dtype == dtype
    for bad in (np.nan, np.inf, -np.inf):
        for index in range(3):
            values = np.array([0.5, -1.0, 2.0], dtype)
            values[index] = bad
            with pytest.raises(ValueError, match=r"non-finite values \(NaN or inf\)"):
                checked_observation({"observation": values, "action_mask": mask}, 3, 3)
