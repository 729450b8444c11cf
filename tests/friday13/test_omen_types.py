"""The omen types are interchangeable: ``omen_type_groups`` against the engine's own positions, relabelled."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from friday13_env.friday13.cards import NUM_PILES, get_deck
from friday13_env.friday13.encoding import encode_observation, observation_layout, omen_type_groups
from friday13_env.friday13.engine import GameState, Rules, action_mask, legal_actions, new_game, play
from tests.friday13.test_features import positions

PERMUTATIONS = list(itertools.permutations(range(NUM_PILES)))


def relabelled(state: GameState, order: tuple[int, ...]) -> GameState:
    """``state`` with omen type ``t`` renamed ``order[t]`` everywhere: hands, piles, captured cards, played cards."""
    deck = state.rules.deck
    kind = [order[k // deck.num_values] * deck.num_values + k % deck.num_values for k in range(deck.friday_kind)]
    kind.append(deck.friday_kind)

    def counts(old: list[int]) -> list[int]:
        new = [0] * deck.num_kinds
        for k, count in enumerate(old):
            new[kind[k]] = count
        return new

    other = state.copy()
    other.hands = [counts(hand) for hand in state.hands]
    other.dummy = None if state.dummy is None else counts(state.dummy)
    other.played = counts(state.played)
    for pile in range(NUM_PILES):
        other.piles[order[pile]] = [kind[k] for k in state.piles[pile]]
        other.pile_totals[order[pile]] = state.pile_totals[pile]
    for seat, stack in enumerate(state.captured):
        for omen_type in range(NUM_PILES):
            other.captured[seat][order[omen_type]] = stack[omen_type]
    return other


@pytest.mark.parametrize("deck_name", ["standard", "german"])
def test_every_observation_entry_is_in_exactly_one_group(deck_name: str) -> None:
    deck = get_deck(deck_name)
    groups = omen_type_groups(deck)
    every = np.concatenate([groups.own.reshape(-1), groups.shared, groups.unused])
    assert sorted(every.tolist()) == list(range(observation_layout(deck).size))
    assert groups.own.shape == (NUM_PILES, 4 * deck.num_values + 9)
    assert sorted(groups.actions.reshape(-1).tolist()) == list(range(deck.num_actions))
    assert [deck.action_kind_and_pile(int(action))[1] for action in groups.actions[:, -1]] == [0, 1, 2]


@pytest.mark.parametrize("deck_name", ["standard", "german"])
@pytest.mark.parametrize("num_players", [3, 4, 6])
def test_relabelling_the_omen_types_moves_each_types_entries_and_actions_and_nothing_else(
    num_players: int, deck_name: str
) -> None:
    """For every position of a game and every relabelling of the types, the engine's observation and legal moves
    of the relabelled position are the original's with each type's entries and actions moved to its new name."""
    deck = get_deck(deck_name)
    groups = omen_type_groups(deck)
    for state in positions(num_players, deck_name, seed=num_players):
        observation = encode_observation(state, state.current)
        mask = np.array(action_mask(state))
        assert not observation[groups.unused].any()
        for order in PERMUTATIONS:
            other = relabelled(state, order)
            moved = encode_observation(other, other.current)
            moved_mask = np.array(action_mask(other))
            for omen_type in range(NUM_PILES):
                np.testing.assert_array_equal(moved[groups.own[order[omen_type]]], observation[groups.own[omen_type]])
                np.testing.assert_array_equal(
                    moved_mask[groups.actions[order[omen_type]]], mask[groups.actions[omen_type]]
                )
            np.testing.assert_array_equal(moved[groups.shared], observation[groups.shared])
            assert not moved[groups.unused].any()


def test_a_relabelled_game_plays_to_the_same_scores() -> None:
    """The rules do not tell the types apart: a position and its relabelling, each played on with the same
    moves (relabelled), end the round with the same points."""
    deck = get_deck("standard")
    groups = omen_type_groups(deck)
    rename = {int(action): (t, j) for t, row in enumerate(groups.actions) for j, action in enumerate(row)}
    rng = np.random.default_rng(7)
    state = new_game(Rules(num_players=4, deck=deck), rng)
    order = (2, 0, 1)
    other = relabelled(state, order)
    while not state.round_over:
        action = int(rng.choice(legal_actions(state)))
        t, j = rename[action]
        play(state, action)
        play(other, int(groups.actions[order[t], j]))
    assert other.round_over and other.scores == state.scores
