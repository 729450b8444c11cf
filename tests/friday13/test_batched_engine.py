"""The batched engine (``friday13.batched``) against the scalar rules it must equal, card for card.

Every check drives a ``GameBatch`` and one scalar ``GameState`` per game with the same cards: the scalar
states are built from the batch's own deals (``from_hands``), so every field of every game can be
compared after every play, together with the encoded observations (from every seat), global states and
legal masks. The rest covers the deal, autoreset, determinism, the uniform move draw, scoring corner
cases loaded through ``load_states``, and the errors raised before anything changes.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest

from friday13_env.friday13.batched.encoding import encode_observations, encode_states
from friday13_env.friday13.batched.engine import DUMMY_SLOT, HAND_SLOTS, MAX_GAMES, MAX_SEATS, GameBatch, StepResult
from friday13_env.friday13.cards import DECKS, GERMAN_DECK, NUM_PILES, NUM_TYPES, STANDARD_DECK, Deck
from friday13_env.friday13.encoding import encode_observation, encode_state
from friday13_env.friday13.engine import (
    GameState,
    IllegalActionError,
    Rules,
    action_mask,
    deal_sizes,
    legal_actions,
    new_game,
    next_round,
    play,
    round_points,
)
from friday13_env.friday13.scenario import from_hands
from tests.conftest import action, counts, pile

SIZES = [3, 4, 5, 6]
ARRAY_FIELDS = (
    "num_players",
    "hands",
    "hand_sizes",
    "played",
    "pile_totals",
    "pile_sizes",
    "pile_cards",
    "captured",
    "scores",
    "round",
    "current",
    "plays_left",
    "game_over",
)
"""Every per-game array of a ``GameBatch``, compared with the scalar state's fields."""


# -- scalar mirror ---------------------------------------------------------------------------------
def scalar_from(batch: GameBatch, game: int) -> GameState:
    """A scalar state holding the batch's deal of ``game`` (its round, scores and hands, dummy included)."""
    n = int(batch.num_players[game])
    rules = Rules(num_players=n, deck=batch.deck, num_rounds=batch.num_rounds)
    hands = batch.hands[game, :n].tolist()
    if rules.has_dummy:
        hands.append(batch.hands[game, DUMMY_SLOT].tolist())
    return from_hands(rules, hands, round_index=int(batch.round[game]), scores=batch.scores[game, :n].tolist())


def expected_arrays(states: list[GameState], deck: Deck) -> dict[str, np.ndarray]:
    """The scalar states as the batch lays its arrays out (padded seats, dummy slot, piles by column)."""
    values = deck.num_values
    rows: dict[str, list] = {name: [] for name in ARRAY_FIELDS}
    for state in states:
        n = state.rules.num_players
        hands = np.zeros((HAND_SLOTS, deck.num_kinds), dtype=np.int64)
        hands[:n] = state.hands
        if state.dummy is not None:
            hands[DUMMY_SLOT] = state.dummy
        columns = np.zeros((NUM_PILES, values + 1), dtype=np.int64)
        for index, cards in enumerate(state.piles):
            for kind in cards:
                columns[index, values if kind == deck.friday_kind else kind % values] += 1
        captured = np.zeros((MAX_SEATS, NUM_TYPES), dtype=np.int64)
        captured[:n] = state.captured
        scores = np.zeros(MAX_SEATS, dtype=np.int64)
        scores[:n] = state.scores
        rows["num_players"].append(n)
        rows["hands"].append(hands)
        rows["hand_sizes"].append(hands.sum(axis=1))
        rows["played"].append(state.played)
        rows["pile_totals"].append(state.pile_totals)
        rows["pile_sizes"].append([len(cards) for cards in state.piles])
        rows["pile_cards"].append(columns)
        rows["captured"].append(captured)
        rows["scores"].append(scores)
        rows["round"].append(state.round)
        rows["current"].append(state.current)
        rows["plays_left"].append(state.plays_left)
        rows["game_over"].append(state.game_over)
    return {name: np.array(values) for name, values in rows.items()}


def assert_same_state(batch: GameBatch, states: list[GameState], games: np.ndarray) -> None:
    """Every array of ``games`` equals the scalar states' fields."""
    expected = expected_arrays([states[g] for g in games], batch.deck)
    for name, want in expected.items():
        np.testing.assert_array_equal(getattr(batch, name)[games], want, err_msg=name)


def assert_same_encodings(batch: GameBatch, states: list[GameState], games: np.ndarray) -> None:
    """Observations (of the player to move and of every seat), global states and masks equal the scalar ones."""
    if games.size == 0:
        return
    chosen = [states[g] for g in games]
    seat_games = np.array([g for g in games for _ in range(states[g].rules.num_players)], dtype=np.int64)
    seats = np.array([seat for g in games for seat in range(states[g].rules.num_players)], dtype=np.int64)
    every_seat = np.array([encode_observation(states[g], seat) for g, seat in zip(seat_games, seats, strict=True)])
    np.testing.assert_array_equal(encode_observations(batch, seat_games, seats), every_seat, err_msg="observers")
    movers = seats == np.array([states[g].current for g in seat_games])
    assert movers.sum() == games.size
    np.testing.assert_array_equal(encode_observations(batch, games), every_seat[movers], err_msg="mover")
    global_states = np.array([encode_state(state) for state in chosen])
    np.testing.assert_array_equal(encode_states(batch, games), global_states, err_msg="global state")
    masks = np.array([action_mask(state) for state in chosen], dtype=bool)
    np.testing.assert_array_equal(batch.legal_mask(games), masks, err_msg="legal mask")


def assert_fresh_deal(batch: GameBatch, game: int) -> None:
    """``game`` holds a new deal of its round: the whole deck in the hands and dummy, the rotated
    ``deal_sizes``, the start player to move, and empty piles and stacks."""
    n = int(batch.num_players[game])
    rules = Rules(num_players=n, deck=batch.deck)
    start = int(batch.round[game]) % n
    sizes = np.zeros(HAND_SLOTS, dtype=np.int64)
    for position, size in enumerate(deal_sizes(rules)):
        sizes[(start + position) % n] = size
    if rules.has_dummy:
        sizes[DUMMY_SLOT] = batch.deck.size - sum(deal_sizes(rules))
    assert batch.hands[game].sum(axis=0).tolist() == list(batch.deck.kind_counts)
    assert batch.hands[game].sum(axis=1).tolist() == sizes.tolist()
    assert batch.hand_sizes[game].tolist() == sizes.tolist()
    assert int(batch.current[game]) == start
    assert int(batch.plays_left[game]) == sum(deal_sizes(rules))
    for name in ("played", "pile_totals", "pile_sizes", "pile_cards", "captured"):
        assert not getattr(batch, name)[game].any(), name
    assert not batch.game_over[game]


@dataclass
class Tally:
    """What a drive went through, so tests can assert it covered what they claim."""

    plays: int = 0
    captures: int = 0
    rounds: int = 0
    games: int = 0
    sizes: Counter = field(default_factory=Counter)


def drive(
    batch: GameBatch,
    states: list[GameState],
    rng: np.random.Generator,
    max_steps: int = 10_000,
    observers: bool = True,
) -> Tally:
    """Play random cards in every game of ``batch`` and the same cards in ``states``, comparing everything
    after every play, until every game is over (``autoreset=False``) or ``max_steps`` steps."""
    tally = Tally()
    everyone = np.arange(batch.num_games)
    assert_same_state(batch, states, everyone)
    assert_same_encodings(batch, states, everyone)
    for _ in range(max_steps):
        games = np.flatnonzero(~batch.game_over)
        if games.size == 0:
            break
        actions = batch.random_actions(rng, games)
        played_sizes = batch.num_players[games].copy()
        result = batch.step(actions, games)
        check_result_shapes(result, games.size)
        np.testing.assert_array_equal(result.num_players, played_sizes)
        for i, g in enumerate(games.tolist()):
            state = states[g]
            n = state.rules.num_players
            taken = play(state, int(actions[i]))
            assert int(result.captured[i]) == taken
            tally.plays += 1
            tally.captures += taken > 0
            assert bool(result.round_over[i]) == state.round_over
            assert bool(result.game_over[i]) == state.game_over
            if not state.round_over:
                assert not result.round_points[i].any() and not result.final_scores[i].any()
                continue
            tally.rounds += 1
            assert result.round_points[i, :n].tolist() == state.last_round_points
            assert not result.round_points[i, n:].any()
            if state.game_over:
                tally.games += 1
                tally.sizes[n] += 1
                assert result.final_scores[i, :n].tolist() == state.scores
                assert not result.final_scores[i, n:].any()
                if batch.autoreset:  # dealt afresh in the same step: round 0, no points yet
                    assert int(batch.round[g]) == 0 and not batch.scores[g].any()
                    assert_fresh_deal(batch, g)
                    states[g] = scalar_from(batch, g)
            else:
                assert not result.final_scores[i].any()
                assert batch.scores[g, :n].tolist() == state.scores
                assert int(batch.round[g]) == state.round + 1
                assert_fresh_deal(batch, g)
                states[g] = scalar_from(batch, g)
        assert_same_state(batch, states, everyone)
        if observers:
            assert_same_encodings(batch, states, np.flatnonzero(~batch.game_over))
    assert_same_encodings(batch, states, everyone)  # finished games too: nobody to move, empty masks
    return tally


def check_result_shapes(result: StepResult, size: int) -> None:
    assert result.captured.shape == result.round_over.shape == result.game_over.shape == (size,)
    assert result.round_points.shape == result.final_scores.shape == (size, MAX_SEATS)


def snapshot(batch: GameBatch) -> dict[str, object]:
    """Copies of every array of the batch and its generator's state."""
    arrays = {name: value.copy() for name, value in vars(batch).items() if isinstance(value, np.ndarray)}
    return {**arrays, "rng": batch.rng.bit_generator.state}


def assert_unchanged(batch: GameBatch, before: dict[str, object]) -> None:
    after = snapshot(batch)
    assert after.keys() == before.keys()
    for name, value in before.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(after[name], value, err_msg=name)
        else:
            assert after[name] == value, name


def chi_square_bound(dof: int, z: float = 3.29) -> float:
    """Upper ``p ~ 0.0005`` quantile of the chi-square distribution (Wilson-Hilferty approximation)."""
    c = 2.0 / (9.0 * dof)
    return dof * (1.0 - c + z * math.sqrt(c)) ** 3


def scalar_midgame(rules: Rules, rng: np.random.Generator, plays: int) -> GameState:
    """A scalar game after ``plays`` random cards (across rounds), stopped where a card is still to be played."""
    state = new_game(rules, rng)
    for _ in range(plays):
        legal = legal_actions(state)
        play(state, legal[int(rng.integers(len(legal)))])
        if state.round_over:
            if state.game_over:
                return scalar_midgame(rules, rng, plays // 2)
            next_round(state, rng)
    return state


# -- exactness -------------------------------------------------------------------------------------
@pytest.mark.parametrize("deck", sorted(DECKS))
@pytest.mark.parametrize("num_players", SIZES)
def test_batch_plays_every_card_exactly_like_the_scalar_engine(num_players: int, deck: str) -> None:
    """64 whole games: every field, capture, round's points, final score, observation (every seat),
    global state and mask equals the scalar engine's after every play."""
    batch = GameBatch(64, num_players, deck=DECKS[deck], seed=num_players, autoreset=False)
    states = [scalar_from(batch, g) for g in range(batch.num_games)]
    tally = drive(batch, states, np.random.default_rng(100 + num_players))
    assert batch.game_over.all()
    assert tally.games == 64 and tally.rounds == 64 * 4
    assert tally.plays == 64 * 4 * sum(deal_sizes(Rules(num_players=num_players, deck=DECKS[deck])))
    assert tally.captures > tally.plays // 20


@pytest.mark.slow
@pytest.mark.parametrize("deck", sorted(DECKS))
@pytest.mark.parametrize("num_players", SIZES)
def test_batch_plays_exactly_like_the_scalar_engine_at_scale(num_players: int, deck: str) -> None:
    """The exactness check on 512 games per table size and deck."""
    batch = GameBatch(512, num_players, deck=DECKS[deck], seed=1000 + num_players, autoreset=False)
    states = [scalar_from(batch, g) for g in range(batch.num_games)]
    tally = drive(batch, states, np.random.default_rng(num_players))
    assert batch.game_over.all() and tally.games == 512


@pytest.mark.parametrize("deck", [STANDARD_DECK, GERMAN_DECK], ids=["standard", "german"])
def test_mixed_table_sizes_in_one_batch_play_exactly(deck: Deck) -> None:
    """A batch drawing its table sizes from [3, 4, 5, 6] holds all four, and every game plays as the scalar engine."""
    batch = GameBatch(64, [3, 4, 5, 6], deck=deck, seed=5, autoreset=False)
    assert set(batch.num_players.tolist()) == set(SIZES)
    states = [scalar_from(batch, g) for g in range(batch.num_games)]
    tally = drive(batch, states, np.random.default_rng(6))
    assert batch.game_over.all()
    assert set(tally.sizes) == set(SIZES) and sum(tally.sizes.values()) == 64


def test_autoreset_restarts_finished_games_and_reports_their_final_scores() -> None:
    """With ``autoreset`` a finished game is dealt afresh (round 0, zero scores, a table size drawn again)
    in the same step, and its ``final_scores`` are the scalar game's totals."""
    batch = GameBatch(32, [3, 4, 5, 6], num_rounds=2, seed=11, autoreset=True)
    states = [scalar_from(batch, g) for g in range(batch.num_games)]
    tally = drive(batch, states, np.random.default_rng(12), max_steps=320)
    assert not batch.game_over.any()
    assert tally.games > 64 and set(tally.sizes) == set(SIZES)


def test_load_states_continues_scalar_midgame_states_exactly() -> None:
    """Scalar states some random plays into a game (any round, any size, both decks) loaded into
    chosen slots play on exactly as the scalar engine, through the following deals to the game's end."""
    rng = np.random.default_rng(21)
    for deck in DECKS.values():
        batch = GameBatch(40, 4, deck=deck, seed=22, autoreset=False)
        slots = rng.permutation(batch.num_games)[:32]
        loaded = [
            scalar_midgame(Rules(num_players=SIZES[i % 4], deck=deck), rng, int(rng.integers(0, 150)))
            for i in range(slots.size)
        ]
        assert {state.round for state in loaded} >= {0, 1, 2}
        assert any(state.captured != [[0] * NUM_TYPES] * state.rules.num_players for state in loaded)
        batch.load_states([state.copy() for state in loaded], slots)
        by_slot = dict(zip(slots.tolist(), loaded, strict=True))
        states = [by_slot[g] if g in by_slot else scalar_from(batch, g) for g in range(batch.num_games)]
        tally = drive(batch, states, np.random.default_rng(23))
        assert batch.game_over.all() and tally.games == 40


def test_load_states_refuses_states_it_cannot_hold() -> None:
    """Another deck, another number of rounds, a finished round and a slot count mismatch are ValueErrors."""
    batch = GameBatch(4, 4, seed=0)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"deck 'german'.*deck 'standard'"):
        batch.load_states([new_game(Rules(num_players=4, deck=GERMAN_DECK), rng)])
    with pytest.raises(ValueError, match="2 rounds"):
        batch.load_states([new_game(Rules(num_players=4, num_rounds=2), rng)])
    over = from_hands(Rules(num_players=4), [counts(STANDARD_DECK, "cat 1"), [0] * 16, [0] * 16, [0] * 16])
    play(over, 0)
    with pytest.raises(ValueError, match="round is over"):
        batch.load_states([over])
    with pytest.raises(ValueError, match="one game slot per state"):
        batch.load_states([new_game(Rules(num_players=4), rng)], np.array([0, 1]))


# -- deals -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("deck", sorted(DECKS))
@pytest.mark.parametrize("num_players", SIZES)
def test_every_round_deals_the_whole_deck_from_the_start_player(num_players: int, deck: str) -> None:
    """Each round's hands and dummy hold the whole deck, in ``deal_sizes`` rotated to the start player
    ``round % n``, who moves first; deals differ between games and between rounds."""
    batch = GameBatch(128, num_players, deck=DECKS[deck], seed=31, autoreset=False)
    rng = np.random.default_rng(32)
    deals = [batch.hands.copy()]
    for g in range(batch.num_games):
        assert_fresh_deal(batch, g)
    while not batch.game_over.all():
        games = np.flatnonzero(~batch.game_over)
        result = batch.step(batch.random_actions(rng, games), games)
        dealt = games[result.round_over & ~result.game_over]
        for g in dealt.tolist():
            assert_fresh_deal(batch, g)
        if dealt.size:
            assert set(batch.round[dealt].tolist()) == {len(deals)}
            deals.append(batch.hands.copy())
    assert len(deals) == 4
    assert len({deal[g].tobytes() for deal in deals for g in range(128)}) == 4 * 128


# -- determinism -----------------------------------------------------------------------------------
def run_batch(seed: int, steps: int) -> tuple[GameBatch, list[StepResult]]:
    batch = GameBatch(32, [3, 4, 5, 6], deck=GERMAN_DECK, num_rounds=1, seed=seed)
    rng = np.random.default_rng(0)
    return batch, [batch.step(batch.random_actions(rng)) for _ in range(steps)]


def test_same_seed_gives_identical_batches() -> None:
    """Two batches with one seed and the same moves hold identical arrays and results after 150 steps
    (several autoresets, table sizes drawn again); another seed deals otherwise."""
    first, first_results = run_batch(7, 150)
    second, second_results = run_batch(7, 150)
    assert sum(int(result.game_over.sum()) for result in first_results) > 32
    for name in ARRAY_FIELDS:
        np.testing.assert_array_equal(getattr(first, name), getattr(second, name), err_msg=name)
    for one, other in zip(first_results, second_results, strict=True):
        for name in ("captured", "num_players", "round_over", "round_points", "game_over", "final_scores"):
            np.testing.assert_array_equal(getattr(one, name), getattr(other, name), err_msg=name)
    third = GameBatch(32, [3, 4, 5, 6], deck=GERMAN_DECK, num_rounds=1, seed=8)
    fresh = GameBatch(32, [3, 4, 5, 6], deck=GERMAN_DECK, num_rounds=1, seed=7)
    assert not np.array_equal(third.hands, fresh.hands)
    assert not np.array_equal(third.num_players, fresh.num_players)


# -- drawing moves ---------------------------------------------------------------------------------
def loaded_batch(deck: Deck, count: int, seed: int) -> tuple[GameBatch, list[GameState]]:
    """A mixed-size batch loaded with scalar mid-game states (the scalar legal actions are then at hand)."""
    rng = np.random.default_rng(seed)
    states = [
        scalar_midgame(Rules(num_players=SIZES[i % 4], deck=deck), rng, int(rng.integers(0, 120))) for i in range(count)
    ]
    batch = GameBatch(count, 4, deck=deck, seed=seed, autoreset=False)
    batch.load_states(states)
    return batch, states


@pytest.mark.parametrize("deck", [STANDARD_DECK, GERMAN_DECK], ids=["standard", "german"])
def test_nth_legal_actions_follow_the_scalar_rule(deck: Deck) -> None:
    """``nth_legal_actions(u)`` is ``legal_actions()[int(u * len(legal))]``, at the ends of [0, 1) too."""
    batch, states = loaded_batch(deck, 200, seed=41)
    rng = np.random.default_rng(42)
    edges = [np.zeros(200), np.full(200, np.nextafter(1.0, 0.0)), np.full(200, 0.5)]
    for uniforms in [*edges, *(rng.random(200) for _ in range(20))]:
        actions = batch.nth_legal_actions(uniforms)
        expected = [
            legal_actions(state)[int(u * len(legal_actions(state)))] for state, u in zip(states, uniforms, strict=True)
        ]
        assert actions.tolist() == expected
    games = np.array([5, 17, 3])
    subset = batch.nth_legal_actions(np.array([0.9, 0.1, 0.6]), games)
    expected = [
        legal_actions(states[g])[int(u * len(legal_actions(states[g])))]
        for g, u in zip(games, [0.9, 0.1, 0.6], strict=True)
    ]
    assert subset.tolist() == expected


def test_random_actions_are_uniform_over_the_legal_cards() -> None:
    """20,000 draws for one position hit only its legal actions, each about equally often (chi-square)."""
    rng = np.random.default_rng(51)
    state = new_game(Rules(num_players=6, deck=GERMAN_DECK), rng)
    legal = legal_actions(state)
    assert len(legal) >= 6
    batch = GameBatch(1, 6, deck=GERMAN_DECK, seed=0, autoreset=False)
    batch.load_states([state])
    draws = batch.random_actions(np.random.default_rng(52), np.zeros(20_000, dtype=np.int64))
    assert set(draws.tolist()) == set(legal)
    observed = np.bincount(draws, minlength=GERMAN_DECK.num_actions)[legal]
    expected = draws.size / len(legal)
    statistic = float(((observed - expected) ** 2 / expected).sum())
    assert statistic < chi_square_bound(len(legal) - 1)


def test_random_actions_refuse_a_finished_game() -> None:
    batch = GameBatch(2, 4, num_rounds=1, seed=0, autoreset=False)
    rng = np.random.default_rng(0)
    while not batch.game_over[0]:
        batch.step(batch.random_actions(rng, np.array([0])), np.array([0]))
    with pytest.raises(ValueError, match="finished game"):
        batch.random_actions(rng)
    assert batch.random_actions(rng, np.array([1])).shape == (1,)


# -- errors ----------------------------------------------------------------------------------------
def illegal_pick(batch: GameBatch, friday: bool) -> tuple[int, int]:
    """A game and an action its player to move cannot play (an omen card, or a Friday card, not held)."""
    masks = batch.legal_mask()
    friday_action = batch.deck.friday_kind + 1
    for game, mask in enumerate(masks):
        if friday and not mask[friday_action]:
            return game, friday_action
        if not friday and not mask[: batch.deck.friday_kind].all():
            return game, int(np.flatnonzero(~mask[: batch.deck.friday_kind])[0])
    raise AssertionError("no game has an illegal action of that kind")


@pytest.mark.parametrize("friday", [False, True], ids=["omen", "friday"])
def test_a_card_not_held_is_refused_before_anything_changes(friday: bool) -> None:
    """One illegal card among legal ones raises, naming the game, the card and the legal actions, and no game moves."""
    batch = GameBatch(16, 5, seed=61)
    rng = np.random.default_rng(62)
    game, bad = illegal_pick(batch, friday)
    actions = batch.random_actions(rng)
    actions[game] = bad
    before = snapshot(batch)
    plays_left = int(batch.plays_left.sum())
    legal = np.flatnonzero(batch.legal_mask(np.array([game]))[0]).tolist()
    with pytest.raises(IllegalActionError) as error:
        batch.step(actions)
    message = str(error.value)
    assert f"illegal action {bad} ({batch.deck.action_name(bad)}) in game {game}" in message
    assert f"legal actions: {legal}" in message
    assert_unchanged(batch, before)
    batch.step(np.where(np.arange(16) == game, legal[0], actions))  # the same batch still plays
    assert int(batch.plays_left.sum()) == plays_left - 16


@pytest.mark.parametrize(
    ("value", "dtype", "error", "pattern"),
    [
        (18, np.int64, IllegalActionError, r"actions must be in 0\.\.17, got values from \d+ to 18"),
        (-1, np.int64, IllegalActionError, r"actions must be in 0\.\.17, got values from -1"),
        (255, np.int16, IllegalActionError, r"actions must be in 0\.\.17"),
        (0.0, np.float64, IllegalActionError, r"actions must be integers in 0\.\.17, got float64"),
        (True, np.bool_, IllegalActionError, r"actions must be integers"),
    ],
)
def test_bad_action_values_are_refused_before_anything_changes(
    value: object, dtype: type, error: type[Exception], pattern: str
) -> None:
    """Out-of-range, float and bool actions raise with the action range, leaving the batch as it was."""
    batch = GameBatch(8, 4, seed=71)
    actions = batch.random_actions(np.random.default_rng(72)).astype(dtype)
    actions[3] = value
    before = snapshot(batch)
    with pytest.raises(error, match=pattern):
        batch.step(actions)
    assert_unchanged(batch, before)


@pytest.mark.parametrize("shape", [(7,), (9,), (8, 1), ()])
def test_actions_of_the_wrong_shape_are_refused(shape: tuple[int, ...]) -> None:
    batch = GameBatch(8, 4, seed=73)
    before = snapshot(batch)
    with pytest.raises(ValueError, match=r"one action per stepped game, shape \(8,\)"):
        batch.step(np.zeros(shape, dtype=np.int64))
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        batch.step(np.zeros(3, dtype=np.int64), np.array([0, 1]))
    assert_unchanged(batch, before)


def test_stepping_a_finished_game_is_refused_before_anything_changes() -> None:
    """Without autoreset a finished game stays over; stepping it (alone or with games in play) raises."""
    batch = GameBatch(4, 3, num_rounds=1, seed=81, autoreset=False)
    rng = np.random.default_rng(82)
    while not batch.game_over[2]:
        batch.step(batch.random_actions(rng, np.array([2])), np.array([2]))
    assert batch.game_over.tolist() == [False, False, True, False]
    before = snapshot(batch)
    for games in (np.array([2]), np.array([0, 2, 3])):
        actions = np.zeros(games.size, dtype=np.int64)
        with pytest.raises(IllegalActionError, match="game 2 is over"):
            batch.step(actions, games)
        assert_unchanged(batch, before)
    batch.reset_games(np.array([2]))
    assert not batch.game_over.any()
    assert_fresh_deal(batch, 2)


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"num_games": 0}, "num_games must be an int in 1"),
        ({"num_games": True}, "num_games must be an int in 1"),
        ({"num_games": MAX_GAMES + 1}, "num_games must be an int in 1"),
        ({"num_games": 2.0}, "num_games must be an int in 1"),
        ({"num_players": 2}, r"num_players must be one of \[3, 4, 5, 6\]"),
        ({"num_players": 7}, r"num_players must be one of \[3, 4, 5, 6\]"),
        ({"num_players": "4"}, r"num_players must be one of \[3, 4, 5, 6\]"),
        ({"num_players": []}, r"num_players must be one of \[3, 4, 5, 6\]"),
        ({"num_players": [3, 7]}, r"num_players must be one of \[3, 4, 5, 6\]"),
        ({"num_players": True}, r"num_players must be one of \[3, 4, 5, 6\]"),
        ({"num_rounds": 0}, "num_rounds must be a positive int"),
        ({"num_rounds": "4"}, "num_rounds must be a positive int"),
        ({"num_rounds": 1.5}, "num_rounds must be a positive int"),
        ({"num_rounds": False}, "num_rounds must be a positive int"),
        ({"deck": "french"}, r"unknown deck 'french'; allowed values: \['german', 'standard'\] \(or a Deck\)"),
        ({"deck": None}, r"unknown deck None; allowed values"),
    ],
)
def test_bad_constructor_input_is_a_value_error(kwargs: dict[str, object], pattern: str) -> None:
    arguments: dict[str, object] = {"num_games": 4, **kwargs}
    with pytest.raises(ValueError, match=pattern):
        GameBatch(**arguments)  # type: ignore[arg-type]


# -- scoring ---------------------------------------------------------------------------------------
D = STANDARD_DECK


@dataclass(frozen=True)
class LastCard:
    """A round's last card, played by ``player_0`` (the only card left), and what the round must score."""

    name: str
    card: str
    play: str
    piles: list[list[str]]
    captured: list[list[int]]
    taken: int
    points: list[int]


LAST_CARDS = [
    LastCard(
        "tie_for_most_nobody_discards",
        "cat 7",
        "cat 7",
        [["cat 5", "cat 2"], [], []],
        [[1, 0, 0, 0], [3, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
        taken=2,
        points=[3, 3, 0, 0],
    ),
    LastCard(
        "sole_majority_discards",
        "cat 7",
        "cat 7",
        [["cat 5", "cat 2"], [], []],
        [[2, 0, 0, 0], [3, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0]],
        taken=2,
        points=[0, 3, 0, 1],
    ),
    LastCard(
        "fridays_always_score_two",
        "cat 7",
        "cat 7",
        [["cat 5", "f13"], [], []],
        [[0, 0, 0, 2], [0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]],
        taken=2,
        points=[6, 0, 2, 0],
    ),
    LastCard(
        "friday_card_captures_a_ladder_pile",
        "f13",
        "f13 ladder",
        [[], ["mirror 4"], ["ladder 5", "ladder 4", "f13"]],
        [[0, 0, 1, 0], [0, 2, 1, 0], [0, 2, 0, 0], [0, 0, 0, 0]],
        taken=3,
        points=[2, 3, 2, 0],
    ),
    LastCard(
        "thirteen_exactly_captures_nothing",
        "mirror 7",
        "mirror 7",
        [[], ["mirror 5", "mirror 1"], []],
        [[0, 0, 0, 0], [0, 2, 0, 0], [0, 2, 0, 1], [0, 1, 1, 0]],
        taken=0,
        points=[0, 2, 4, 1],
    ),
]


@pytest.mark.parametrize("round_index", [1, 3], ids=["mid_game", "last_round"])
@pytest.mark.parametrize("case", LAST_CARDS, ids=[case.name for case in LAST_CARDS])
def test_round_points_of_a_loaded_last_card(case: LastCard, round_index: int) -> None:
    """The batch scores the round its loaded last card ends as written (ties keep, a sole majority
    discards, Friday cards cost 2) and as ``engine.round_points``; the game ends after the last round."""
    scores = [5, 0, 7, 1]
    state = from_hands(
        Rules(num_players=4),
        [counts(D, case.card), [0] * D.num_kinds, [0] * D.num_kinds, [0] * D.num_kinds],
        round_index=round_index,
        current=0,
        piles=[pile(D, *cards) for cards in case.piles],
        captured=case.captured,
        scores=scores,
    )
    batch = GameBatch(3, 4, seed=91, autoreset=False)
    batch.load_states([state], np.array([1]))
    result = batch.step(np.array([action(D, case.play)]), np.array([1]))
    scalar = state.copy()
    assert play(scalar, action(D, case.play)) == case.taken
    assert int(result.captured[0]) == case.taken
    assert result.round_over.tolist() == [True]
    assert result.round_points[0, :4].tolist() == case.points == round_points(scalar.captured)
    totals = [score + points for score, points in zip(scores, case.points, strict=True)]
    assert batch.scores[1, :4].tolist() == totals
    last = round_index == 3
    assert result.game_over.tolist() == [last] and batch.game_over[1] == last
    assert result.final_scores[0, :4].tolist() == (totals if last else [0, 0, 0, 0])
    if not last:
        assert int(batch.round[1]) == round_index + 1
        assert_fresh_deal(batch, 1)


def test_three_players_score_without_the_dummy_hand() -> None:
    """At 3 players the dummy hand holds cards but scores nothing; the last card's capture is scored."""
    dummy = counts(D, "mirror 7", "mirror 7", "f13")
    state = from_hands(
        Rules(num_players=3),
        [counts(D, "ladder 7"), [0] * D.num_kinds, [0] * D.num_kinds, dummy],
        round_index=3,
        current=0,
        piles=[[], [], pile(D, "ladder 5", "ladder 2")],
        captured=[[0, 0, 1, 0], [0, 0, 2, 0], [1, 1, 0, 1]],
    )
    batch = GameBatch(1, 4, seed=0, autoreset=False)
    batch.load_states([state])
    assert batch.hands[0, DUMMY_SLOT].tolist() == dummy and int(batch.num_players[0]) == 3
    result = batch.step(np.array([action(D, "ladder 7")]))
    assert int(result.captured[0]) == 2
    # player_0: 3 ladders, sole majority, discarded; player_2 discards its lone cat and mirror, keeps the Friday.
    assert result.round_points[0].tolist() == [0, 2, 2, 0, 0, 0]
    assert result.final_scores[0].tolist() == [0, 2, 2, 0, 0, 0]
    assert batch.game_over.tolist() == [True]


def test_stepping_subsets_of_many_sizes_holds_no_memory_per_size() -> None:
    """The vector environment steps its opponents on subsets whose size changes every step; a cache of zero results
    per size grew without bound (57 bytes a game for every size ever stepped)."""
    import tracemalloc

    batch = GameBatch(512, num_players=4, seed=0)
    rng = np.random.default_rng(0)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for size in range(1, 300):
            games = np.sort(rng.choice(batch.num_games, size=min(size, batch.num_games), replace=False))
            masks = batch.legal_mask(games)
            batch.step(np.array([rng.choice(np.flatnonzero(mask)) for mask in masks]), games)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 200_000, f"{held:,} bytes held after stepping 299 subset sizes"
