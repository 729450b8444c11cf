"""A hostile review of the batched API (0.26.0): what ``np.asarray`` would hide is refused before anything is played
(a bool among the ints of a list, read as card 0 or 1; a masked array, whose masked entries it reads as they are),
by every entry point that takes actions, game indices or seats; ``to_sb3`` refuses a wrapped vector environment
(SB3 would step past the wrapper); the SB3 adapter refuses what it cannot honour (per-table ``indices`` for a method
that acts on every table, reset options); a masked reset marks only the tables it reset, and a mask that resets
none is refused, as Gymnasium's own vector environments do."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import friday13_env  # noqa: F401  (registers the Gymnasium ids)
from friday13_env.friday13.batched.encoding import encode_observations
from friday13_env.friday13.batched.engine import GameBatch
from friday13_env.friday13.batched.selfplay import SelfPlayTables
from friday13_env.friday13.batched.vector_env import Friday13VectorEnv
from friday13_env.friday13.cards import STANDARD_DECK

ENV_ID = "friday13_env/Friday13-v0"


def make(num_envs: int = 3, **options: Any) -> Friday13VectorEnv:
    env = gym.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode="vector_entry_point", **options)
    assert isinstance(env, Friday13VectorEnv)
    return env


def legal_list(masks: np.ndarray) -> list[int]:
    return [int(np.flatnonzero(mask)[0]) for mask in masks]


def with_a_bool(actions: list[int]) -> list[Any]:
    """``actions`` with its first entry a bool (True for any card but 0): a list numpy reads as ints."""
    return [actions[0] != 0, *actions[1:]]


def test_the_vector_env_refuses_a_bool_in_a_list_of_actions() -> None:
    env = make(opponents=["cautious"] * 3, seat=0)
    env.reset(seed=1)
    before = env.unwrapped.batch.hands.copy()
    actions = legal_list(env.action_masks())
    for hostile in (with_a_bool(actions), [np.bool_(True), *actions[1:]], tuple(with_a_bool(actions))):
        with pytest.raises(ValueError, match=r"actions hold a bool \(at index 0\).*integers"):
            env.step(hostile)
    np.testing.assert_array_equal(env.unwrapped.batch.hands, before)  # nothing played
    env.step(actions)  # a list of ints is fine


def test_the_vector_env_refuses_a_masked_array() -> None:
    env = make(opponents=["cautious"] * 3, seat=0)
    env.reset(seed=1)
    actions = np.array(legal_list(env.action_masks()))
    with pytest.raises(ValueError, match=r"actions are a masked array"):
        env.step(np.ma.masked_array(actions, mask=[True, False, False]))


def test_the_engine_refuses_bools_in_actions_games_and_seats() -> None:
    batch = GameBatch(4, 4, STANDARD_DECK, seed=0)
    actions = legal_list(batch.legal_mask())
    before = batch.hands.copy()
    with pytest.raises(ValueError, match=r"actions hold a bool"):
        batch.step(with_a_bool(actions))
    with pytest.raises(ValueError, match=r"games hold a bool"):
        batch.step(actions[:2], games=[True, 2])
    with pytest.raises(ValueError, match=r"games are a masked array"):
        batch.current_hands(np.ma.masked_array([0, 1], mask=[False, True]))
    np.testing.assert_array_equal(batch.hands, before)
    with pytest.raises(ValueError, match=r"observers hold a bool"):
        encode_observations(batch, np.arange(4), [True, 0, 0, 0])


def test_self_play_tables_refuse_a_bool_in_actions() -> None:
    tables = SelfPlayTables(4, 4, seed=0)
    turn = tables.reset()
    actions = legal_list(turn.masks)
    with pytest.raises(ValueError, match=r"actions hold a bool"):
        tables.step(with_a_bool(actions))
    tables.step(actions)


def test_a_masked_reset_marks_only_the_tables_it_reset_and_refuses_an_empty_mask() -> None:
    env = make(4, opponents=["cautious"] * 3, autoreset_mode="Disabled")
    env.reset(seed=0)
    mask = np.array([True, False, True, False])
    _, infos = env.reset(options={"reset_mask": mask})
    marks = [key for key in infos if key.startswith("_")]
    assert marks
    for key in marks:
        np.testing.assert_array_equal(infos[key], mask)
    with pytest.raises(ValueError, match=r"reset_mask resets no table: it must hold at least one True"):
        env.reset(options={"reset_mask": np.zeros(4, dtype=bool)})


def test_to_sb3_refuses_a_wrapped_vector_env() -> None:
    pytest.importorskip("stable_baselines3")
    from gymnasium.wrappers.vector import TransformReward

    from friday13_env.friday13.batched.sb3 import to_sb3

    wrapped = TransformReward(make(autoreset_mode="SameStep"), lambda reward: reward * 2)
    with pytest.raises(
        ValueError, match=r"to_sb3 takes the vector environment itself, not one wrapped in TransformReward"
    ):
        to_sb3(wrapped)


def test_the_sb3_adapter_refuses_what_it_cannot_honour() -> None:
    pytest.importorskip("stable_baselines3")
    from friday13_env.friday13.batched.sb3 import to_sb3

    env = make(opponent_pool=["cautious", "majority"], autoreset_mode="SameStep")
    venv = to_sb3(env)
    venv.reset()
    with pytest.raises(ValueError, match=r"set_opponent_pool acts on every table at once: call it with indices=None"):
        venv.env_method("set_opponent_pool", ["random"], indices=[0])
    assert env.opponent_names == ["cautious", "majority"]  # nothing changed
    venv.env_method("set_opponent_pool", ["random"], indices=[0, 1, 2])  # every table, listed: fine
    with pytest.raises(ValueError, match=r"takes no reset options"):
        venv.set_options({"bogus": 1})
    venv.set_options(None)
    venv.set_options([{}, {}, {}])  # nothing to pass: fine
    venv.step_async(np.array(legal_list(env.action_masks())))
    venv.step_wait()
    with pytest.raises(ValueError, match=r"actions hold a bool"):
        venv.step_async([True, 0, 0])
