"""The batched code under a second hostile review (0.24.0): an agent class given where an agent is wanted, scalar
states that no game reaches loaded into a batch (and a refused one leaving the batch half-loaded), observers of an
unsigned dtype, heuristics asked to move in a finished game, and a random agent given no generator."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np
import pytest

from friday13_env.friday13.batched import GameBatch, encode_observations, make_batched
from friday13_env.friday13.batched.agents import BatchedCautious, BatchedRandom, act
from friday13_env.friday13.batched.vector_env import Friday13VectorEnv
from friday13_env.friday13.engine import Rules, new_game


def test_an_agent_class_is_refused_where_an_agent_is_wanted() -> None:
    """The class passed the protocol check, and the pool failed 50 steps later, leaving the environment unusable."""
    with pytest.raises(ValueError, match="BatchedCautious is a class, not an agent: give an instance"):
        make_batched(BatchedCautious, "standard")
    env = Friday13VectorEnv(2, opponent_pool=["cautious"])
    env.reset(seed=0)
    with pytest.raises(ValueError, match="BatchedCautious is a class"):
        env.set_opponent_pool([BatchedCautious])
    env.step(np.asarray(env.action_masks()).argmax(axis=1))  # the old pool plays on


def game_state(players: int = 4, seed: int = 0) -> Any:
    return new_game(Rules(num_players=players), np.random.default_rng(seed))


def changed(state: Any, **fields: Any) -> Any:
    other = dataclasses.replace(state)
    for name, value in fields.items():
        setattr(other, name, value)
    return other


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: changed(s, current=6), "current 6 is not a seat of its 4 players"),
        (lambda s: changed(s, plays_left=0), "plays_left 0, but its hands hold"),
        (lambda s: changed(s, hands=[[*s.hands[0][:-1], 200], *s.hands[1:]]), "more than the deck's 8"),
        (lambda s: changed(s, hands=[[-1, *s.hands[0][1:]], *s.hands[1:]]), "a negative count"),
        (lambda s: changed(s, hands=[s.hands[0][:3], *s.hands[1:]]), "hands[0] holds 3 counts, the deck 16 kinds"),
        (lambda s: changed(s, scores=[0, 0, -4, 0]), "a negative count"),
        (lambda s: changed(s, round=9), "round 9 is not one of its 4 rounds"),
    ],
)
def test_a_state_no_game_reaches_is_refused_before_any_slot_changes(change: Any, message: str) -> None:
    batch = GameBatch(3, num_players=4, seed=1)
    before = {name: np.copy(value) for name, value in vars(batch).items() if isinstance(value, np.ndarray)}
    good, bad = game_state(seed=2), change(game_state(seed=3))
    with pytest.raises(ValueError, match=rf"states\[1\] is no position of a game: .*{re.escape(message)}"):
        batch.load_states([good, bad])
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(batch, name), value, err_msg=name)


def test_a_true_state_still_loads() -> None:
    batch = GameBatch(2, num_players=[3, 5], seed=1)
    batch.load_states([game_state(players=3, seed=4), game_state(players=5, seed=5)])
    assert batch.num_players.tolist() == [3, 5]


def test_unsigned_observers_are_read_as_seats() -> None:
    batch = GameBatch(2, num_players=4, seed=0)
    expected = encode_observations(batch, [0, 1], np.array([1, 2]))
    np.testing.assert_array_equal(encode_observations(batch, [0, 1], np.array([1, 2], dtype=np.uint64)), expected)


@pytest.mark.parametrize("spec", ["cautious", "majority", "random"])
def test_no_agent_moves_in_a_finished_game(spec: str) -> None:
    """``cautious`` and ``majority`` answered action 0 where ``random`` and the networks refuse."""
    batch = GameBatch(1, num_players=3, num_rounds=1, seed=0, autoreset=False)
    rng = np.random.default_rng(0)
    while not batch.game_over[0]:
        batch.step(batch.random_actions(rng))
    with pytest.raises(ValueError, match="needs a legal action"):
        act(make_batched(spec, "standard"), batch, np.array([0]), rng)


@pytest.mark.parametrize("rng", [None, 7, np.random.RandomState(0)])
def test_the_random_agent_refuses_what_is_not_a_generator(rng: Any) -> None:
    masks = np.ones((2, 5), dtype=bool)
    with pytest.raises(ValueError, match=r"rng must be a numpy\.random\.Generator"):
        BatchedRandom(None).act_batch(None, masks, rng)  # type: ignore[arg-type]
