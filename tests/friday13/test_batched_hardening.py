"""The batched code under a hostile user (a review of 0.15.0): opponents that answer floats or illegal cards, the
``SameStep`` final infos, reset options of the wrong type, ``GameBatch``'s flags, scalar agents in a vector table."""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import friday13_env  # noqa: F401  (registers the Gymnasium ids)
from friday13_env.friday13.agents import CautiousAgent
from friday13_env.friday13.batched.engine import GameBatch
from friday13_env.friday13.batched.selfplay import SelfPlayTables
from friday13_env.friday13.batched.vector_env import Friday13VectorEnv
from friday13_env.friday13.engine import IllegalActionError


class Answer:
    """A batched opponent that answers ``answer(masks)``."""

    def __init__(self, name: str, answer: Any) -> None:
        self.name = name
        self.answer = answer

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.answer(masks)


def first_legal(masks: np.ndarray) -> np.ndarray:
    return masks.argmax(axis=1)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (lambda masks: first_legal(masks) + 0.9, r"batched agent 'floaty' answered float64 of shape \(\d+,\)"),
        (lambda masks: np.int64(first_legal(masks)[0]), r"batched agent 'floaty' answered int64 of shape \(\)"),
        (lambda masks: first_legal(masks)[:1].repeat(len(masks) + 1), r"answered int64 of shape"),
    ],
)
def test_an_opponent_that_answers_no_integer_per_game_is_refused_by_name(answer: Any, message: str) -> None:
    """A float was truncated into the card below it, and one 0-d action given to all the agent's games."""
    env = Friday13VectorEnv(num_envs=3, num_players=4, opponents=[Answer("floaty", answer)] * 3, seat=0)
    _, infos = env.reset(seed=0)
    with pytest.raises(ValueError, match=message):
        env.step(first_legal(infos["action_mask"]))


def test_an_opponents_illegal_card_names_the_opponent() -> None:
    illegal = Answer("illegal", lambda masks: (masks == 0).argmax(axis=1))
    env = Friday13VectorEnv(num_envs=2, num_players=4, opponents=[illegal] * 3, seat=0)
    _, infos = env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"opponent 'illegal' at player_1 of table \d: illegal action"):
        env.step(first_legal(infos["action_mask"]))


def test_same_step_final_info_masks_only_the_tables_that_ended_and_shares_no_array() -> None:
    """Gymnasium's ``_key`` convention: True where the key means something (the finished tables); and no mask is
    the ``terminated`` array itself, or another key's mask, so editing one changes nothing else."""
    env = Friday13VectorEnv(num_envs=3, num_players=[3, 6], num_rounds=1, autoreset_mode=AutoresetMode.SAME_STEP)
    _, infos = env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(200):
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in infos["action_mask"]])
        _, _, terminated, _, infos = env.step(actions)
        if terminated.any() and not terminated.all():
            break
    else:
        pytest.fail("no step ended some tables but not all")
    final = infos["final_info"]
    for key in (key for key in final if key.startswith("_")):
        np.testing.assert_array_equal(final[key], terminated)
    masks = [infos["_final_obs"], infos["_final_info"], *(final[k] for k in final if k.startswith("_"))]
    masks += [infos[k] for k in infos if k.startswith("_") and k not in ("_final_obs", "_final_info")]
    assert all(mask is not terminated for mask in masks)
    assert len({id(mask) for mask in masks}) == len(masks)


@pytest.mark.parametrize("options", [5, True, "reset_mask", ["reset_mask"]])
def test_reset_options_of_the_wrong_type_are_a_value_error(options: Any) -> None:
    env = gym.make_vec("friday13_env/Friday13-v0", num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match=r"options must be None or a dict such as \{'reset_mask': mask\}"):
        env.reset(seed=0, options=options)


@pytest.mark.parametrize("autoreset", ["no", None, 1])
def test_game_batch_takes_only_a_bool_for_autoreset(autoreset: Any) -> None:
    with pytest.raises(ValueError, match=r"autoreset must be True or False"):
        GameBatch(2, autoreset=autoreset)


def test_a_scalar_agent_object_is_told_where_it_plays() -> None:
    with pytest.raises(ValueError, match=r"CautiousAgent 'cautious' has no batched form: a batched table takes"):
        Friday13VectorEnv(num_envs=2, opponent_pool=[CautiousAgent()])


def test_self_play_turns_hold_their_own_writable_arrays_at_every_step() -> None:
    """``Turn.round_over``, ``game_over`` and ``final_scores`` were read-only views of one zero on steps that end no
    round and ordinary arrays on the others, so an in-place update (or ``torch.from_numpy``) failed now and then;
    after ``reset`` two of them were one array."""
    tables = SelfPlayTables(8, num_players=4, seed=0, num_rounds=1)
    turns = [tables.reset()]
    for _ in range(60):
        turns.append(tables.step(turns[-1].masks.argmax(axis=1)))
    assert any(turn.game_over.any() for turn in turns) and not all(turn.round_over.any() for turn in turns)
    for turn in turns:
        arrays = [getattr(turn, field.name) for field in dataclasses.fields(turn)]
        assert all(array.flags.writeable and array.flags.owndata for array in arrays)
        assert len({id(array) for array in arrays}) == len(arrays)


def test_step_results_are_read_only_at_every_step() -> None:
    """The engine's ``StepResult`` arrays are read-only whether the step ended a round or not (views of one zero,
    shared between fields, on the steps that did not), so a caller learns on the first step that it must copy."""
    batch = GameBatch(8, 4, seed=0, num_rounds=1, autoreset=False)
    rng = np.random.default_rng(0)
    ended = False
    while not batch.game_over.all():
        result = batch.step(batch.random_actions(rng))
        ended |= bool(result.round_over.any())
        assert not any(getattr(result, field.name).flags.writeable for field in dataclasses.fields(result))
    assert ended
