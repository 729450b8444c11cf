"""Derived policy inputs (``majority_preview``) against the rules engine's own moves and scoring."""

from __future__ import annotations

import numpy as np
import pytest

from friday13_env.core.mlp import RAW_INPUT
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import MAX_SEATS, encode_observation
from friday13_env.friday13.engine import GameState, Rules, legal_actions, new_game, next_round, play, round_points
from friday13_env.friday13.features import MajorityPreview, input_features, majority_preview


def relative_points(state: GameState, observer: int) -> np.ndarray:
    """The engine's round points of ``state``'s captured stacks, seats from ``observer`` clockwise, padded to 6."""
    n = state.rules.num_players
    points = round_points(state.captured)
    return np.array([points[(observer + k) % n] for k in range(n)] + [0] * (MAX_SEATS - n), dtype=np.float32)


def positions(num_players: int, deck_name: str, seed: int) -> list[GameState]:
    """Every position of one random game (all rounds), before each card is played."""
    rng = np.random.default_rng(seed)
    state = new_game(Rules(num_players=num_players, deck=get_deck(deck_name)), rng)
    seen: list[GameState] = []
    while not state.game_over:
        if state.round_over:
            next_round(state, rng)
        seen.append(state.copy())
        play(state, int(rng.choice(legal_actions(state))))
    return seen


@pytest.mark.parametrize("deck_name", ["standard", "german"])
@pytest.mark.parametrize("num_players", [3, 4, 5, 6])
def test_the_preview_is_the_engines_scoring_now_and_after_every_legal_move(num_players: int, deck_name: str) -> None:
    deck = get_deck(deck_name)
    preview = majority_preview(deck)
    checked_changes = 0
    for state in positions(num_players, deck_name, seed=num_players):
        observer = state.current
        features = preview(encode_observation(state, observer))
        now, change = features[:MAX_SEATS], features[MAX_SEATS:].reshape(deck.num_actions, MAX_SEATS)
        np.testing.assert_array_equal(now, relative_points(state, observer))
        for action in legal_actions(state):
            after = state.copy()
            taken = play(after, action)
            expected = relative_points(after, observer) - now
            np.testing.assert_array_equal(change[action], expected, err_msg=f"action {action}")
            if taken == 0:
                assert not change[action].any()
            checked_changes += int(expected.any())
    assert checked_changes > 10  # captures that move someone's points were met, not only quiet moves


def test_a_capture_that_breaks_a_rivals_majority_charges_the_rival() -> None:
    """Seat 1 alone holds the most cats (3, discarded); the observer captures 3 cats: the tie makes seat 1 score its
    3 and the observer its own 3, and a 4th cat would have given the observer the majority instead."""
    deck = get_deck("standard")
    preview = majority_preview(deck)
    layout = preview.slices
    observation = np.zeros(preview.observation_size, dtype=np.float32)
    captured = np.zeros((MAX_SEATS, 4), dtype=np.float32)
    captured[1, 0] = 3
    captured[2, 3] = 1  # a Friday the 13th card: 2 points whoever holds the majorities
    observation[layout["captured"]] = captured.reshape(-1)
    observation[layout["seat_present"]] = [1, 1, 1, 1, 0, 0]
    piles = np.zeros((3, deck.num_kinds), dtype=np.float32)
    piles[0, [0, 1, 2]] = 1  # cat 1, 2, 4 on the cat pile: total 7
    observation[layout["pile_cards"]] = piles.reshape(-1)
    observation[layout["pile_totals"]] = [7, 0, 0]
    features = preview(observation)
    np.testing.assert_array_equal(features[:MAX_SEATS], [0, 0, 2, 0, 0, 0])
    change = features[MAX_SEATS:].reshape(deck.num_actions, MAX_SEATS)
    cat_7 = 4  # 7 + 7 > 13: captures the three cats
    np.testing.assert_array_equal(change[cat_7], [3, 3, 0, 0, 0, 0])
    cat_5 = 3  # 7 + 5 = 12: safe
    assert not change[cat_5].any()
    friday_on_cats = 3 * deck.num_values  # 7 + 4 = 11: safe
    assert not change[friday_on_cats].any()


def test_batched_and_single_observations_give_the_same_preview() -> None:
    deck = get_deck("german")
    states = positions(5, "german", seed=7)[:40]
    observations = np.stack([encode_observation(state, state.current) for state in states])
    preview = majority_preview(deck)
    batched = preview(observations.reshape(4, 10, -1))
    for index, observation in enumerate(observations):
        np.testing.assert_array_equal(batched.reshape(40, -1)[index], preview(observation))


def test_an_observation_of_another_size_is_refused_naming_both() -> None:
    preview = majority_preview(get_deck("standard"))
    with pytest.raises(ValueError, match=r"146 entries, got shape \(164,\)"):
        preview(np.zeros(164, dtype=np.float32))


def test_unknown_input_features_are_refused_listing_the_allowed_ones() -> None:
    assert input_features(RAW_INPUT, get_deck("standard")) is None
    assert isinstance(input_features("majority_preview", get_deck("standard")), MajorityPreview)
    with pytest.raises(
        ValueError, match=r"unknown input features 'hands'; allowed: \['observation', 'majority_preview'\]"
    ):
        input_features("hands", get_deck("standard"))
