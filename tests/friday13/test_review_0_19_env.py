"""Defects a review of the card game's environments as a hostile user found (release 0.19.0); each test fails
without its fix."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from friday13_env import friday13_v0
from friday13_env.friday13.batched.engine import GameBatch, deck_tables
from friday13_env.friday13.batched.selfplay import SelfPlayTables
from friday13_env.friday13.batched.vector_env import Friday13VectorEnv
from friday13_env.friday13.cards import GERMAN_DECK, Deck
from friday13_env.friday13.encoding import encode_observation
from friday13_env.friday13.engine import Rules, new_game
from friday13_env.friday13.rewards import illegal_action_reward
from friday13_env.friday13.single_agent import Friday13Env


# -- a Deck object given to an environment -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda deck: friday13_v0.env(deck=deck),
        lambda deck: Friday13Env(deck=deck),
        lambda deck: Friday13VectorEnv(num_envs=2, deck=deck),
        lambda deck: SelfPlayTables(2, deck=deck),
    ],
    ids=["aec", "single-agent", "vector", "self-play"],
)
def test_an_environment_given_a_deck_object_says_it_takes_the_decks_name(make: Any) -> None:
    """The environments take a deck by name (their options are strings, as for ``gymnasium.make``); a ``Deck``
    object was "unknown deck Deck(name='german', ...)" while the names listed held 'german'."""
    with pytest.raises(ValueError, match=r"deck must be a deck's name, one of \['german', 'standard'\], got the "
                       r"Deck 'german' itself: pass deck='german'"):  # fmt: skip
        make(GERMAN_DECK)


def test_a_custom_deck_object_given_to_an_environment_is_named() -> None:
    custom = Deck("mine", (1, 2), (3, 3), friday_count=1)
    with pytest.raises(ValueError, match=r"got the Deck 'mine' itself; a deck that is not one of these plays in the "
                       r"batched engine \(GameBatch\)"):  # fmt: skip
        friday13_v0.env(deck=custom)


@pytest.mark.parametrize(
    "call",
    [
        lambda deck: Rules(num_players=4, deck=deck),
        lambda deck: illegal_action_reward("points", deck, 4),
        lambda deck: deck_tables(deck),
    ],
    ids=["Rules", "illegal_action_reward", "deck_tables"],
)
def test_the_rules_core_takes_a_deck_by_name_or_as_a_deck(call: Any) -> None:
    """``Rules(deck='german')`` and ``illegal_action_reward(..., 'german', ...)`` were ValueErrors and
    ``deck_tables('german')`` an ``AttributeError``, where ``GameBatch`` and the other functions take either."""
    assert call("german") == call(GERMAN_DECK)
    unknown = r"unknown deck 'nope'; allowed values: \['german', 'standard'\] \(or a Deck\)"
    with pytest.raises(ValueError, match=unknown):
        call("nope")


# -- table sizes given as bytes ------------------------------------------------------------------------------------
@pytest.mark.parametrize("sizes", [b"\x04\x06", bytearray(b"\x03\x06"), memoryview(b"\x05")])
@pytest.mark.parametrize(
    "make",
    [
        lambda sizes: Friday13Env(num_players=sizes),
        lambda sizes: Friday13VectorEnv(num_envs=2, num_players=sizes),
        lambda sizes: GameBatch(2, sizes),
        lambda sizes: SelfPlayTables(2, num_players=sizes),
    ],
    ids=["single-agent", "vector", "GameBatch", "self-play"],
)
def test_table_sizes_given_as_bytes_are_refused(make: Any, sizes: Any) -> None:
    """``b"\\x04\\x06"`` is a sequence of ints, and was taken as the table sizes 4 and 6."""
    with pytest.raises(ValueError, match=r"num_players must be one of \[3, 4, 5, 6\] or a non-empty list of them"):
        make(sizes)


# -- the observer of an observation -------------------------------------------------------------------------------
@pytest.mark.parametrize("observer", [-1, True, 4, 1.0, np.int64(-2), None])
def test_encode_observation_refuses_an_observer_that_is_not_a_seat(observer: Any) -> None:
    """``-1`` was the last seat and ``True`` seat 1 (Python's indexing); 4 an ``IndexError`` and 1.0 a
    ``TypeError``. The batched twin refuses them by name."""
    state = new_game(Rules(num_players=4), np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"observer must be a seat of the game, an int in 0\.\.3, got "):
        encode_observation(state, observer)


def test_encode_observation_takes_a_numpy_seat() -> None:
    state = new_game(Rules(num_players=4), np.random.default_rng(0))
    assert np.array_equal(encode_observation(state, np.int64(2)), encode_observation(state, 2))
