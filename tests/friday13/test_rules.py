"""Hand-written rule scenarios with exact expected values, checked against the rulebook and CONVENTIONS.md.

The first half drives the pure engine (``friday13_env.friday13.engine``) through positions built with
``from_hands``; the second half checks what the AEC environment adds on top: rewards, infos,
illegal-action handling, the observation and state layouts and the text rendering.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from friday13_env import env, raw_env
from friday13_env.friday13.cards import GERMAN_DECK, STANDARD_DECK, get_deck
from friday13_env.friday13.encoding import MAX_SEATS, encode_state, state_layout
from friday13_env.friday13.engine import (
    GameOverError,
    GameState,
    IllegalActionError,
    Rules,
    action_mask,
    deal,
    deal_sizes,
    is_legal,
    legal_actions,
    new_game,
    next_round,
    play,
    round_points,
    start_player,
    winners,
)
from friday13_env.friday13.scenario import from_hands
from tests.conftest import action, choose, counts, kind, pile, play_through

STD = STANDARD_DECK
THREE = Rules(num_players=3)
FOUR = Rules(num_players=4)


def three_player_position(*hands: list[int], **options: object) -> GameState:
    """A 3-player standard-deck position (no dummy cards) with the given seat hands."""
    return from_hands(THREE, list(hands), **options)  # type: ignore[arg-type]


def play_random_round(state: GameState, rng: np.random.Generator) -> int:
    """Play the current round to its end with random legal moves; returns the number of plays."""
    plays = 0
    while not state.round_over:
        play(state, choose(action_mask(state), rng))
        plays += 1
    return plays


# -- captures ------------------------------------------------------------------------------------
def test_pile_reaching_exactly_13_captures_nothing() -> None:
    state = three_player_position(
        counts(STD, "cat 4"),
        counts(STD, "mirror 1"),
        counts(STD, "ladder 1"),
        piles=[pile(STD, "cat 7", "cat 2"), [], []],
    )
    assert play(state, action(STD, "cat 4")) == 0
    assert state.piles[0] == pile(STD, "cat 7", "cat 2", "cat 4")
    assert state.pile_totals == [13, 0, 0]
    assert state.captured == [[0, 0, 0, 0]] * 3
    assert state.current == 1


def test_pile_exceeding_13_is_captured_and_restarted_by_the_played_card() -> None:
    state = three_player_position(
        counts(STD, "cat 5"),
        counts(STD, "mirror 1"),
        counts(STD, "ladder 1"),
        piles=[pile(STD, "cat 5", "f13"), pile(STD, "mirror 7"), []],
    )
    assert play(state, action(STD, "cat 5")) == 2  # 5 + 4 + 5 = 14 > 13
    assert state.captured == [[1, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 0]]  # by type: cat, mirror, ladder, f13
    assert state.played == counts(STD, "cat 5", "cat 5", "f13", "mirror 7")
    assert state.piles == [pile(STD, "cat 5"), pile(STD, "mirror 7"), []]
    assert state.pile_totals == [5, 7, 0]
    assert state.hands[0] == [0] * STD.num_kinds


def test_friday_card_on_an_empty_pile_starts_it_without_a_fourth_pile() -> None:
    state = three_player_position(counts(STD, "f13"), counts(STD, "cat 1"), counts(STD, "cat 2"))
    assert play(state, action(STD, "f13 mirror")) == 0
    assert state.piles == [[], pile(STD, "f13"), []]
    assert state.pile_totals == [0, 4, 0]


def test_friday_card_on_a_full_pile_of_another_type_captures_it() -> None:
    state = three_player_position(
        counts(STD, "mirror 1"),
        counts(STD, "f13"),
        counts(STD, "ladder 1"),
        piles=[pile(STD, "cat 7", "cat 2", "f13"), [], []],
        current=1,
    )
    assert state.pile_totals == [13, 0, 0]
    assert play(state, action(STD, "f13 cat")) == 3
    assert state.captured[1] == [2, 0, 0, 1]
    assert state.piles[0] == pile(STD, "f13")
    assert state.pile_totals == [4, 0, 0]
    assert state.current == 2


def test_german_zero_card_on_a_pile_at_13_keeps_it_at_13() -> None:
    rules = Rules(num_players=3, deck=GERMAN_DECK)
    g = GERMAN_DECK
    state = from_hands(
        rules,
        [counts(g, "ladder 0"), counts(g, "cat 1"), counts(g, "cat 2")],
        piles=[[], [], pile(g, "ladder 7", "ladder 2", "ladder 4")],
    )
    assert play(state, action(g, "ladder 0")) == 0
    assert state.pile_totals == [0, 0, 13]
    assert state.piles[2] == pile(g, "ladder 7", "ladder 2", "ladder 4", "ladder 0")


# -- legal moves ---------------------------------------------------------------------------------
def test_omen_cards_only_go_on_their_own_pile() -> None:
    state = three_player_position(
        counts(STD, "cat 7", "mirror 1", "mirror 1"),
        counts(STD, "cat 1", "cat 2", "cat 4"),
        counts(STD, "cat 1", "cat 2", "cat 4"),
    )
    assert legal_actions(state) == [kind(STD, "cat 7"), kind(STD, "mirror 1")]
    expected_mask = [0] * STD.num_actions
    expected_mask[action(STD, "cat 7")] = expected_mask[action(STD, "mirror 1")] = 1
    assert action_mask(state) == expected_mask


def test_a_friday_card_adds_all_three_friday_actions() -> None:
    state = three_player_position(
        counts(STD, "ladder 5", "f13"), counts(STD, "cat 1", "cat 2"), counts(STD, "cat 1", "cat 2")
    )
    assert legal_actions(state) == [13, 15, 16, 17]
    assert [STD.action_name(a) for a in legal_actions(state)] == ["ladder 5", "f13 cat", "f13 mirror", "f13 ladder"]
    assert action_mask(state) == [0] * 13 + [1, 0, 1, 1, 1]


# -- scoring -------------------------------------------------------------------------------------
def test_rulebook_three_player_scoring_example() -> None:
    """German rulebook: Michelle 8, Jasmin 10, Tom 11.

    Captured by type (cat, mirror, ladder, f13). Cats 2/5/5: Jasmin and Tom tie, nobody discards;
    mirrors 4/1/3: Michelle discards; ladders 0/4/3: Jasmin discards.
    """
    michelle, jasmin, tom = [2, 4, 0, 3], [5, 1, 4, 2], [5, 3, 3, 0]
    assert round_points([michelle, jasmin, tom]) == [8, 10, 11]


@pytest.mark.parametrize(
    ("type_counts", "expected"),
    [
        ((3, 1, 0), [0, 1, 0]),  # sole majority discards
        ((2, 2, 1), [2, 2, 1]),  # two tie for the most: nobody discards
        ((2, 2, 2), [2, 2, 2]),  # three-way tie
        ((0, 4, 0), [0, 0, 0]),  # alone holding the type: discards
        ((0, 0, 0), [0, 0, 0]),
        ((1, 3, 3, 2), [1, 3, 3, 2]),  # 4 players, tie at the top
        ((1, 0, 2, 1, 1, 0), [1, 0, 0, 1, 1, 0]),  # 6 players
    ],
)
@pytest.mark.parametrize("omen_type", [0, 1, 2])
def test_majority_discard_per_type(type_counts: tuple[int, ...], expected: list[int], omen_type: int) -> None:
    captured = [[held if t == omen_type else 0 for t in range(4)] for held in type_counts]
    assert round_points(captured) == expected


def test_friday_cards_score_two_and_are_never_discarded() -> None:
    # Player 0 holds the most cats and the most Friday cards: the cats go, the Friday cards stay.
    assert round_points([[2, 0, 0, 4], [1, 0, 0, 0], [0, 0, 0, 1]]) == [8, 1, 2]


def test_types_are_scored_independently() -> None:
    # Cats: player 0 discards; mirrors: player 1 discards; ladders 0/1/1: tie, both keep theirs.
    assert round_points([[2, 1, 0, 0], [1, 2, 1, 0], [0, 0, 1, 1]]) == [1, 2, 3]


@pytest.mark.parametrize(
    ("scores", "expected"), [([10, 8, 8, 12], [1, 2]), ([3, 4, 5], [0]), ([7, 7, 7, 7, 7], [0, 1, 2, 3, 4])]
)
def test_winners_share_ties_for_the_lowest_total(scores: list[int], expected: list[int]) -> None:
    assert winners(scores) == expected


# -- dealing and rounds --------------------------------------------------------------------------
# CONVENTIONS.md's table: hand sizes in deal order (start player first), dummy last with 3 players.
DEAL_TABLE = {
    (3, "standard"): [13, 13, 12, 12],
    (3, "german"): [14, 13, 13, 13],
    (4, "standard"): [13, 13, 12, 12],
    (4, "german"): [14, 13, 13, 13],
    (5, "standard"): [10, 10, 10, 10, 10],
    (5, "german"): [11, 11, 11, 10, 10],
    (6, "standard"): [9, 9, 8, 8, 8, 8],
    (6, "german"): [9, 9, 9, 9, 9, 8],
}


@pytest.mark.parametrize(("num_players", "deck_name"), sorted(DEAL_TABLE))
def test_deal_sizes_follow_the_conventions_table(num_players: int, deck_name: str) -> None:
    deck = get_deck(deck_name)
    rules = Rules(num_players=num_players, deck=deck)
    table = DEAL_TABLE[num_players, deck_name]
    assert sum(table) == deck.size
    assert deal_sizes(rules) == table[:num_players]
    rng = np.random.default_rng(7)
    for round_index in range(num_players + 1):  # wraps around once
        hands = deal(rules, round_index, rng)
        start = round_index % num_players
        sizes = [sum(hand) for hand in hands]
        assert sizes[:num_players] == [table[(seat - start) % num_players] for seat in range(num_players)]
        assert sizes[num_players:] == table[num_players:]  # the dummy hand, dealt last
        assert np.sum(hands, axis=0).tolist() == list(deck.kind_counts)


def test_deal_is_reproducible_from_the_generator_seed() -> None:
    first = deal(FOUR, 0, np.random.default_rng(11))
    assert deal(FOUR, 0, np.random.default_rng(11)) == first
    assert deal(FOUR, 0, np.random.default_rng(12)) != first


@pytest.mark.parametrize("num_players", [3, 4, 5, 6])
def test_start_player_rotates_and_scores_accumulate_over_four_rounds(num_players: int) -> None:
    rules = Rules(num_players=num_players)
    rng = np.random.default_rng(num_players)
    state = new_game(rules, rng)
    totals = [0] * num_players
    table = DEAL_TABLE[num_players, "standard"]
    for round_index in range(4):
        start = round_index % num_players
        assert (state.round, state.current, start_player(state)) == (round_index, start, start)
        sizes = [sum(hand) for hand in state.hands]
        assert sizes == [table[(seat - round_index) % num_players] for seat in range(num_players)]
        assert play_random_round(state, rng) == sum(sizes)
        assert legal_actions(state) == []
        assert action_mask(state) == [0] * STD.num_actions
        assert state.last_round_points == round_points(state.captured)
        totals = [a + b for a, b in zip(totals, state.last_round_points, strict=True)]
        assert state.scores == totals
        assert state.game_over == (round_index == 3)
        if not state.game_over:
            next_round(state, rng)
    with pytest.raises(GameOverError, match="no more cards"):
        play(state, 0)
    with pytest.raises(GameOverError, match="after round 4 of 4"):
        next_round(state, rng)


def test_num_rounds_option_ends_the_game_early() -> None:
    rng = np.random.default_rng(3)
    state = new_game(Rules(num_players=5, num_rounds=2), rng)
    play_random_round(state, rng)
    assert not state.game_over
    with pytest.raises(IllegalActionError, match="next_round"):
        play(state, 0)
    next_round(state, rng)
    assert (state.round, state.current) == (1, 1)
    with pytest.raises(RuntimeError, match="still being played"):
        next_round(state, rng)
    play_random_round(state, rng)
    assert state.game_over


def test_round_ends_exactly_when_the_last_hand_empties() -> None:
    state = three_player_position(
        counts(STD, "cat 1", "cat 7"), counts(STD, "cat 2", "f13"), counts(STD, "mirror 7", "mirror 7")
    )
    moves = ["cat 7", "cat 2", "mirror 7", "cat 1", "f13 cat"]
    for move in moves:
        play(state, action(STD, move))
        assert not state.round_over
    assert play(state, action(STD, "mirror 7")) == 1  # 7 + 7 = 14: player 2 takes its own mirror 7
    assert state.round_over and not state.game_over
    assert state.last_round_points == [0, 0, 0]  # player 2 alone holds mirrors: discarded
    # cat pile: 7, 2, 1 = 10, then f13 makes 14 > 13: player 1 took the three cats.
    assert state.captured == [[0, 0, 0, 0], [3, 0, 0, 0], [0, 1, 0, 0]]


# -- copies and errors ---------------------------------------------------------------------------
def snapshot(state: GameState) -> dict[str, object]:
    """Every slot of a state, deep-copied through ``repr`` (all fields are builtins)."""
    return {name: repr(getattr(state, name)) for name in GameState.__slots__}


def test_copy_is_independent_of_the_original() -> None:
    rng = np.random.default_rng(5)
    state = new_game(Rules(num_players=3), rng)
    for _ in range(20):
        play(state, choose(action_mask(state), rng))
    before = snapshot(state)
    copy = state.copy()
    assert snapshot(copy) == before
    play_random_round(copy, rng)
    next_round(copy, rng)
    copy.hands[0][0] += 5
    copy.captured[1][2] += 1
    copy.played[3] += 1
    copy.piles[0].append(0)
    copy.dummy[0] += 1  # type: ignore[index]
    copy.scores[2] = 99
    assert snapshot(state) == before


def test_illegal_action_names_the_action_and_the_legal_ones() -> None:
    assert issubclass(IllegalActionError, ValueError)
    state = three_player_position(
        counts(STD, "cat 7", "mirror 1"), counts(STD, "cat 1", "cat 2"), counts(STD, "cat 1", "cat 2")
    )
    with pytest.raises(IllegalActionError) as error:
        play(state, action(STD, "cat 4"))
    message = str(error.value)
    assert "illegal action 2 (cat 4)" in message
    assert "legal actions: [4 (cat 7), 5 (mirror 1)]" in message
    with pytest.raises(IllegalActionError, match=r"17 \(f13 ladder\)"):
        play(state, 17)
    assert state.hands[0] == counts(STD, "cat 7", "mirror 1")  # nothing was played


@pytest.mark.parametrize("bad", [-1, 18, 100])
def test_out_of_range_actions_are_rejected(bad: int) -> None:
    state = three_player_position(counts(STD, "f13"), counts(STD, "cat 1"), counts(STD, "cat 2"))
    with pytest.raises(IllegalActionError, match=rf"action {bad} is out of range: actions are 0\.\.17"):
        play(state, bad)


@pytest.mark.parametrize("bad", [1.0, "3", True, None])
def test_non_integer_actions_are_rejected(bad: object) -> None:
    state = three_player_position(counts(STD, "cat 2"), counts(STD, "cat 1"), counts(STD, "cat 2"))
    with pytest.raises(IllegalActionError, match=r"action must be an int in 0\.\.17"):
        play(state, bad)  # type: ignore[arg-type]


def test_is_legal_is_true_exactly_for_what_play_accepts() -> None:
    """In range, ``is_legal`` is the mask; one past the last action (which would read the Friday count), negative
    actions and whatever ``play`` refuses (floats such as 15.0, bools, strings, None, 0-d arrays) are never legal,
    though the player holds a Friday card and a cat 2 (kind 1, so ``True`` would read it)."""
    state = three_player_position(counts(STD, "f13", "cat 2"), counts(STD, "cat 1"), counts(STD, "cat 2"))
    friday = STD.friday_kind
    assert [int(is_legal(state, a)) for a in range(STD.num_actions)] == action_mask(state)
    assert is_legal(state, friday + 2) and is_legal(state, np.int64(friday)) and is_legal(state, np.uint8(1))
    refused = [STD.num_actions, STD.num_actions + 1, -1, -STD.num_actions, 15.0, 16.5, 1.0, True, "15", None]
    for bad in [*refused, np.array(15), np.float64(15.0), np.bool_(True)]:
        assert is_legal(state, bad) is False, bad  # type: ignore[arg-type]
        with pytest.raises(IllegalActionError):
            play(state.copy(), bad)  # type: ignore[arg-type]
    play(state, friday)
    play(state, action(STD, "cat 1"))
    play(state, action(STD, "cat 2"))
    play(state, action(STD, "cat 2"))
    assert state.round_over
    assert not any(is_legal(state, a) for a in range(-1, STD.num_actions + 2))


def test_numpy_integer_actions_are_accepted() -> None:
    state = three_player_position(counts(STD, "cat 2"), counts(STD, "cat 1"), counts(STD, "cat 2"))
    assert play(state, np.int64(action(STD, "cat 2"))) == 0
    assert state.pile_totals == [2, 0, 0]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"num_players": 2}, r"\[3, 4, 5, 6\]"),
        ({"num_players": 7}, r"\[3, 4, 5, 6\]"),
        ({"num_players": "4"}, r"3\.\.6"),
        ({"num_players": True}, r"3\.\.6"),
        ({"deck": "french"}, r"\['german', 'standard'\]"),
        ({"num_rounds": 0}, r"num_rounds must be a positive int in 1\.\.100, got 0"),
        ({"num_rounds": 2.5}, "positive int"),
        ({"reward": "score"}, r"\['points', 'relative', 'rival', 'win'\]"),
        ({"render_mode": "rgb"}, r"\[None, 'ansi', 'human', 'rgb_array'\]"),
    ],
)
@pytest.mark.parametrize("factory", [raw_env, env])
def test_invalid_env_options_name_the_allowed_values(factory: object, options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory(**options)  # type: ignore[operator]


def test_rules_takes_a_deck_or_its_name_and_rejects_anything_else() -> None:
    assert Rules(deck="standard").deck is STD  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unknown deck 'french'; allowed values: \['german', 'standard'\]"):
        Rules(deck="french")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unknown deck None"):
        Rules(deck=None)  # type: ignore[arg-type]


def empty() -> list[int]:
    return [0] * STD.num_kinds


# -- the AEC environment -------------------------------------------------------------------------
@pytest.mark.parametrize("reward", ["points", "win", "relative", "rival"])
def test_rewards_and_round_infos_match_an_independent_recount(reward: str) -> None:
    """Replays each move on a copy of the engine state to recompute round points, then checks the env."""
    aec = raw_env(num_players=4, reward=reward)
    aec.reset(seed=21)
    rng = np.random.default_rng(21)
    totals = [0, 0, 0, 0]
    seen = dict.fromkeys(aec.possible_agents, 0.0)  # rewards as the agents see them through last()
    emitted = dict.fromkeys(aec.possible_agents, 0.0)  # sum of env.rewards over every step
    round_ends = 0
    for agent in aec.agent_iter():
        observation, cumulative, terminated, _, _ = aec.last()
        seen[agent] += cumulative
        if terminated:
            aec.step(None)
            continue
        chosen = choose(observation["action_mask"], rng)
        after = aec.game.copy()  # type: ignore[union-attr]
        play(after, chosen)
        aec.step(chosen)
        for name, value in aec.rewards.items():
            emitted[name] += value
        if not after.round_over:
            assert set(aec.rewards.values()) == {0.0}
            # Every key from reset on (PettingZoo wrappers that build specs from the first infos see them all).
            assert aec.infos == {
                name: {
                    "round": round_ends,
                    "round_over": False,
                    "round_points": 0,
                    "total_points": totals[seat],
                    "winner": False,
                    "illegal_action": False,
                }
                for seat, name in enumerate(aec.possible_agents)
            }
            continue
        round_ends += 1
        points = round_points(after.captured)
        before, totals = totals, [a + b for a, b in zip(totals, points, strict=True)]
        game_over = round_ends == 4
        for seat, name in enumerate(aec.possible_agents):
            info = aec.infos[name]
            assert (info["round_points"], info["total_points"], info["round"]) == (
                points[seat],
                totals[seat],
                round_ends - 1,
            )
            assert info["round_over"] is True and info["illegal_action"] is False
            assert info["winner"] is (game_over and totals[seat] == min(totals))
            if reward == "points":
                expected = -points[seat]
            elif reward == "relative":
                expected = sum(points) / 4 - points[seat]
            elif reward == "rival":
                rivals_after = min(totals[:seat] + totals[seat + 1 :])
                rivals_before = min(before[:seat] + before[seat + 1 :])
                expected = (rivals_after - totals[seat]) - (rivals_before - before[seat])
            else:
                expected = float(totals[seat] == min(totals)) if game_over else 0.0
            assert aec.rewards[name] == pytest.approx(expected, abs=1e-12)
        if reward == "relative":
            assert sum(aec.rewards.values()) == pytest.approx(0.0, abs=1e-9)
    assert round_ends == 4
    assert aec.agents == []
    assert seen == pytest.approx(emitted)
    if reward == "points":
        assert emitted == {name: -float(total) for name, total in zip(aec.possible_agents, totals, strict=True)}
    if reward == "win":
        assert sum(emitted.values()) >= 1
    if reward == "rival":  # the rewards of a game sum to its final margin over the best rival
        assert emitted == {
            name: float(min(totals[:seat] + totals[seat + 1 :]) - totals[seat])
            for seat, name in enumerate(aec.possible_agents)
        }


def test_win_reward_is_shared_by_players_tied_for_the_lowest_total() -> None:
    aec = raw_env(num_players=3, reward="win")
    aec.reset(seed=0)
    aec.game = from_hands(
        aec.rules,
        [counts(STD, "cat 1"), counts(STD, "mirror 1"), counts(STD, "ladder 1")],
        round_index=3,
        scores=[10, 10, 12],
    )
    aec.agent_selection = "player_0"
    for _ in range(3):
        aec.step(int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])[0]))
    assert aec.rewards == {"player_0": 1.0, "player_1": 1.0, "player_2": 0.0}
    assert [aec.infos[name]["winner"] for name in aec.possible_agents] == [True, True, False]
    assert all(aec.terminations.values())


def test_raw_env_raises_on_an_illegal_action_naming_the_legal_ones() -> None:
    aec = raw_env(num_players=3)
    aec.reset(seed=4)
    legal = legal_actions(aec.game)  # type: ignore[arg-type]
    illegal = next(a for a in range(STD.num_actions) if a not in legal)
    with pytest.raises(ValueError, match=re.escape(", ".join(f"{a} ({STD.action_name(a)})" for a in legal))):
        aec.step(illegal)
    with pytest.raises(ValueError, match=re.escape(f"legal actions: {legal}")):
        aec.step(None)


def test_wrapped_env_ends_the_game_on_an_illegal_action() -> None:
    aec = env(num_players=4)
    aec.reset(seed=4)
    offender = aec.agent_selection
    mask = aec.last()[0]["action_mask"]
    aec.step(int(np.flatnonzero(mask == 0)[0]))
    assert all(aec.terminations.values())
    penalty = aec.unwrapped.illegal_action_reward  # type: ignore[attr-defined]
    assert penalty == -232.0  # the points mode's: the standard deck's 58 points a round, 4 rounds
    assert aec.rewards == {name: (penalty if name == offender else 0.0) for name in aec.possible_agents}
    final = {}
    for agent in aec.agent_iter():
        _, reward, terminated, _, _ = aec.last()
        assert terminated
        final[agent] = reward
        aec.step(None)
    assert final == {name: (penalty if name == offender else 0.0) for name in aec.possible_agents}
    assert aec.agents == []


@pytest.mark.parametrize("bad", [-1, 18, 2.0])
def test_wrapped_env_rejects_actions_outside_the_action_space(bad: object) -> None:
    aec = env(num_players=4)
    aec.reset(seed=4)
    with pytest.raises(ValueError, match=re.escape("is not in the action space Discrete(18)")):
        aec.step(bad)  # type: ignore[arg-type]
    assert not any(aec.terminations.values())


def test_raw_env_step_after_the_game_ended_raises() -> None:
    aec = raw_env(num_players=5, num_rounds=1)
    aec.reset(seed=8)
    for _ in play_through(aec, np.random.default_rng(8)):
        pass
    assert aec.agents == []
    with pytest.raises(RuntimeError, match="after the game ended"):
        aec.step(0)


def test_terminated_agents_accept_only_none() -> None:
    aec = raw_env(num_players=3, num_rounds=1)
    aec.reset(seed=8)
    rng = np.random.default_rng(8)
    while not aec.terminations[aec.agent_selection]:
        aec.step(choose(aec.observe(aec.agent_selection)["action_mask"], rng))
    with pytest.raises(ValueError, match="None"):
        aec.step(0)


def play_steps(aec: raw_env, steps: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        aec.step(choose(aec.observe(aec.agent_selection)["action_mask"], rng))


@pytest.mark.parametrize(("num_players", "deck_name"), [(3, "german"), (5, "standard"), (6, "german")])
def test_observation_views_are_player_relative(num_players: int, deck_name: str) -> None:
    aec = raw_env(num_players=num_players, deck=deck_name)
    deck = get_deck(deck_name)
    aec.reset(seed=13)
    play_steps(aec, deck.size + 7, seed=13)  # into the second round: scores and captures differ
    game = aec.game
    assert game is not None and game.round == 1
    assert len(set(game.scores)) > 1 and len({sum(hand) for hand in game.hands}) > 1
    kinds = deck.num_kinds
    padding = MAX_SEATS - num_players
    for p, agent in enumerate(aec.possible_agents):
        vector = aec.observe(agent)["observation"]
        views = aec.layout.views(vector)
        assert {name: view.shape for name, view in views.items()} == {
            "hand": (kinds,),
            "pile_totals": (3,),
            "pile_cards": (3, kinds),
            "captured": (MAX_SEATS, 4),
            "unseen": (kinds,),
            "hand_sizes": (MAX_SEATS,),
            "round": (2,),
            "scores": (MAX_SEATS,),
            "seat_present": (MAX_SEATS,),
            "dummy": (1,),
            "capture_preview": (deck.num_actions,),
        }
        assert vector[:kinds].tolist() == game.hands[p]
        seats = [(p + k) % num_players for k in range(num_players)]
        assert views["captured"].tolist() == [game.captured[s] for s in seats] + [[0] * 4] * padding
        assert views["scores"].tolist() == [game.scores[s] for s in seats] + [0] * padding
        assert views["hand_sizes"].tolist() == [sum(game.hands[s]) for s in seats] + [0] * padding
        assert views["seat_present"].tolist() == [1] * num_players + [0] * padding
        assert views["round"].tolist() == [1, 3]
        assert views["dummy"].tolist() == [int(num_players == 3)]
        assert views["pile_totals"].tolist() == game.pile_totals
        assert views["pile_cards"].tolist() == [[pile_.count(k) for k in range(kinds)] for pile_ in game.piles]


def test_capture_preview_counts_the_cards_each_play_would_take() -> None:
    # cat pile 7+5 = 12 (2 cards), mirror pile 4 + f13 = 8 (2 cards), ladder empty.
    state = three_player_position(
        counts(STD, "cat 1", "cat 2"),
        counts(STD, "mirror 1"),
        counts(STD, "ladder 1"),
        piles=[pile(STD, "cat 7", "cat 5"), pile(STD, "mirror 4", "f13"), []],
    )
    aec = raw_env(num_players=3)
    aec.reset(seed=0)
    aec.game = state
    preview = aec.layout.views(aec.observe("player_0")["observation"])["capture_preview"]
    expected = {
        "cat 1": 0,  # 13: safe
        "cat 2": 2, "cat 4": 2, "cat 5": 2, "cat 7": 2,
        "mirror 1": 0, "mirror 2": 0, "mirror 4": 0, "mirror 5": 0,  # 8 + 5 = 13: safe
        "mirror 7": 2,
        "f13 cat": 2, "f13 mirror": 0, "f13 ladder": 0,
    }  # fmt: skip
    for name, taken in expected.items():
        assert preview[action(STD, name)] == taken, name
    assert preview[action(STD, "ladder 7")] == 0
    # Every preview matches what the engine then does, for every legal action of this hand.
    for legal in legal_actions(state):
        assert play(state.copy(), legal) == preview[legal]


def test_only_the_agent_to_move_has_a_nonzero_mask() -> None:
    aec = raw_env(num_players=4)
    aec.reset(seed=2)
    for agent, _ in play_through(aec, np.random.default_rng(2)):
        for other in aec.possible_agents:
            mask = aec.observe(other)["action_mask"]
            expected = action_mask(aec.game) if other == agent else [0] * STD.num_actions  # type: ignore[arg-type]
            assert mask.dtype == np.int8
            assert mask.tolist() == expected


@pytest.mark.parametrize("num_players", [3, 4])
def test_state_holds_every_hand(num_players: int) -> None:
    aec = raw_env(num_players=num_players)
    aec.reset(seed=6)
    play_steps(aec, 9, seed=6)
    game = aec.game
    assert game is not None
    views = state_layout(STD).views(aec.state())
    assert views["hands"].tolist() == game.hands + [empty()] * (MAX_SEATS - num_players)
    assert views["dummy_hand"].tolist() == (game.dummy if num_players == 3 else empty())
    assert views["to_move"].tolist() == [int(seat == game.current) for seat in range(MAX_SEATS)]
    assert views["captured"].tolist()[:num_players] == game.captured


def encoded_state_of_a_finished_round(round_index: int) -> tuple[GameState, np.ndarray]:
    """The last round-0 position of ``test_round_ends_exactly_when_the_last_hand_empties`` (player 2 plays the
    last card) as round ``round_index`` of a 2-round game with earlier scores, played out; and the exact
    ``encode_state`` expected of it, block by block, with ``to_move`` left at zero."""
    rules = Rules(num_players=3, num_rounds=2)
    hands = [counts(STD, "cat 1", "cat 7"), counts(STD, "cat 2", "f13"), counts(STD, "mirror 7", "mirror 7")]
    state = from_hands(rules, hands, round_index=round_index, current=0, scores=[3, 1, 4])
    for move in ["cat 7", "cat 2", "mirror 7", "cat 1", "f13 cat", "mirror 7"]:
        play(state, action(STD, move))
    assert state.round_over and state.current == 2
    layout = state_layout(STD)
    blocks = {block.name: np.zeros(block.shape, dtype=np.float32) for block in layout.blocks}
    blocks["pile_totals"][:] = [4, 7, 0]
    blocks["pile_cards"][0, kind(STD, "f13")] = 1
    blocks["pile_cards"][1, kind(STD, "mirror 7")] = 1
    blocks["captured"][1] = [3, 0, 0, 0]  # player 1's f13 took the cat pile
    blocks["captured"][2] = [0, 1, 0, 0]  # player 2's mirror 7 took the other one
    blocks["round"][:] = [round_index, 2 - round_index]
    blocks["scores"][:3] = [3, 1, 4]  # each type's sole holder discards it: no new points
    blocks["seat_present"][:3] = 1
    blocks["dummy"][:] = 1
    return state, np.concatenate([blocks[block.name].reshape(-1) for block in layout.blocks])


def test_encode_state_between_two_rounds_marks_the_player_who_ended_the_round() -> None:
    """Round over, game not: the exact global state, whose ``to_move`` still marks the last card's player (seat 2),
    as ``current`` does until ``next_round``; only the game's end clears it."""
    state, expected = encoded_state_of_a_finished_round(0)
    assert not state.game_over
    state_layout(STD).views(expected)["to_move"][2] = 1
    np.testing.assert_array_equal(encode_state(state), expected)


def test_encode_state_at_the_game_end_marks_nobody_to_move() -> None:
    state, expected = encoded_state_of_a_finished_round(1)
    assert state.game_over
    np.testing.assert_array_equal(encode_state(state), expected)


def test_ansi_render_shows_piles_the_hand_to_move_and_scores() -> None:
    aec = raw_env(num_players=3, render_mode="ansi")
    aec.reset(seed=0)
    aec.game = from_hands(
        aec.rules,
        [counts(STD, "cat 1", "f13"), counts(STD, "cat 7", "mirror 1", "mirror 1"), counts(STD, "ladder 2", "cat 2")],
        round_index=1,
        current=1,
        piles=[pile(STD, "cat 4", "f13", "cat 2"), [], pile(STD, "ladder 5")],
        scores=[5, 12, 0],
    )
    text = aec.render()
    assert isinstance(text, str)
    assert re.search(r"black cat\s+total\s+10\b", text)
    assert re.search(r"broken mirror\s+total\s+0\b", text)
    assert re.search(r"ladder\s+total\s+5\b", text)
    hand_line = next(line for line in text.splitlines() if line.startswith("Hand of player_1:"))
    assert "cat 7" in hand_line and "mirror 1" in hand_line
    assert "f13" not in hand_line and "ladder" not in hand_line
    for seat, score in enumerate([5, 12, 0]):
        assert re.search(rf"^\W*player_{seat}\s.*\s{score}\s*$", text, re.MULTILINE)
