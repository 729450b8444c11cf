"""Property tests: invariants that must hold after every step of random games of every size.

Games are drawn by hypothesis (seed, player count, deck) and moves by a ``numpy`` Generator seeded
from the drawn seed, so a failing example shrinks to a small, replayable game. Captures and scores
are checked against ``ReferenceTable``, a deliberately naive re-implementation of the table that
keeps every card by kind, so that an engine bug cannot hide behind its own helpers.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from friday13_env.friday13.aec import raw_env
from friday13_env.friday13.cards import Deck, get_deck
from friday13_env.friday13.encoding import encode_observation, observation_layout
from friday13_env.friday13.engine import (
    GameState,
    IllegalActionError,
    Rules,
    accounting_errors,
    action_mask,
    cards_accounted,
    is_legal,
    legal_actions,
    new_game,
    next_round,
    play,
)
from tests.conftest import choose

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
PLAYERS = st.integers(min_value=3, max_value=6)
DECKS = st.sampled_from(["standard", "german"])


class ReferenceTable:
    """Piles and captured cards per kind, following the rulebook word for word."""

    def __init__(self, deck: Deck, num_players: int) -> None:
        self.deck = deck
        self.piles: list[list[int]] = [[], [], []]
        self.taken: list[list[int]] = [[0] * deck.num_kinds for _ in range(num_players)]

    def play(self, player: int, action: int) -> None:
        deck = self.deck
        friday = deck.num_kinds - 1
        card = min(action, friday)
        pile = action - friday if action >= friday else deck.kind_types[action]
        total = sum(deck.kind_values[k] for k in self.piles[pile]) + deck.kind_values[card]
        if total > 13:
            for taken in self.piles[pile]:
                self.taken[player][taken] += 1
            self.piles[pile] = []
        self.piles[pile].append(card)

    def by_type(self, player: int) -> list[int]:
        """(cat, mirror, ladder, Friday) counts of a player's captured cards."""
        counts = [0, 0, 0, 0]
        for card, held in enumerate(self.taken[player]):
            counts[self.deck.kind_types[card]] += held
        return counts

    def round_points(self) -> list[int]:
        """Sole majority of a type discards it; omen cards 1 point, Friday cards 2."""
        stacks = [self.by_type(player) for player in range(len(self.taken))]
        points = [2 * stack[3] for stack in stacks]
        for omen in range(3):
            held = [stack[omen] for stack in stacks]
            leaders = [player for player, count in enumerate(held) if count == max(held)]
            for player, count in enumerate(held):
                if leaders != [player]:
                    points[player] += count
        return points


def check_mask_is_exactly_the_legal_moves(state: GameState) -> None:
    mask = action_mask(state)
    assert legal_actions(state) == np.flatnonzero(mask).tolist()
    for candidate, allowed in enumerate(mask):
        trial = state.copy()
        assert is_legal(trial, candidate) == bool(allowed)
        if allowed:
            play(trial, candidate)
        else:
            try:
                play(trial, candidate)
            except IllegalActionError:
                pass
            else:
                raise AssertionError(f"masked-out action {candidate} was playable")


def others_cards(state: GameState, observer: int) -> list[int]:
    """Every card in the other players' hands and the dummy, per kind."""
    stacks = [hand for seat, hand in enumerate(state.hands) if seat != observer]
    if state.dummy is not None:
        stacks.append(state.dummy)
    return np.sum(stacks, axis=0).tolist()


def check_table(state: GameState, table: ReferenceTable) -> None:
    deck = state.rules.deck
    assert cards_accounted(state) == list(deck.kind_counts)
    assert accounting_errors(state) == []
    assert state.piles == table.piles
    assert state.pile_totals == [sum(deck.kind_values[k] for k in pile) for pile in table.piles]
    assert state.captured == [table.by_type(player) for player in range(state.rules.num_players)]
    # Every card once: in a hand, the dummy, a captured stack or a pile (the reference's own count).
    everywhere = np.sum([*state.hands, *table.taken], axis=0)
    if state.dummy is not None:
        everywhere += state.dummy
    for pile in table.piles:
        for card in pile:
            everywhere[card] += 1
    assert everywhere.tolist() == list(deck.kind_counts)


@settings(max_examples=50, deadline=None)
@given(seed=SEEDS, num_players=PLAYERS, deck_name=DECKS)
def test_engine_invariants_hold_after_every_step(seed: int, num_players: int, deck_name: str) -> None:
    deck = get_deck(deck_name)
    rng = np.random.default_rng(seed)
    state = new_game(Rules(num_players=num_players, deck=deck, num_rounds=4), rng)
    layout = observation_layout(deck)
    scores = [0] * num_players
    while True:
        table = ReferenceTable(deck, num_players)
        check_table(state, table)
        while not state.round_over:
            check_mask_is_exactly_the_legal_moves(state)
            player = state.current
            chosen = choose(action_mask(state), rng)
            preview = layout.views(encode_observation(state, player))["capture_preview"]
            table.play(player, chosen)
            assert play(state, chosen) == preview[chosen]
            check_table(state, table)
            for observer in range(num_players):
                views = layout.views(encode_observation(state, observer))
                assert views["hand"].tolist() == state.hands[observer]
                assert views["unseen"].tolist() == others_cards(state, observer)
        assert action_mask(state) == [0] * deck.num_actions
        points = table.round_points()
        scores = [a + b for a, b in zip(scores, points, strict=True)]
        assert state.last_round_points == points
        assert state.scores == scores
        if state.game_over:
            return
        next_round(state, rng)


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS, num_players=PLAYERS, deck_name=DECKS)
def test_aec_invariants_hold_after_every_step(seed: int, num_players: int, deck_name: str) -> None:
    aec = raw_env(num_players=num_players, deck=deck_name)
    aec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    deck = aec.rules.deck
    table = ReferenceTable(deck, num_players)
    scores = [0] * num_players
    for agent in aec.agent_iter():
        observation, _, terminated, _, _ = aec.last()
        if terminated:
            aec.step(None)
            continue
        game = aec.game
        assert game is not None
        seat = aec.possible_agents.index(agent)
        assert seat == game.current
        check_table(game, table)
        assert observation["action_mask"].tolist() == action_mask(game)
        for observer, name in enumerate(aec.possible_agents):
            views = aec.layout.views(aec.observe(name)["observation"])
            assert views["hand"].tolist() == game.hands[observer]
            assert views["unseen"].tolist() == others_cards(game, observer)
        chosen = choose(observation["action_mask"], rng)
        table.play(seat, chosen)
        aec.step(chosen)
        if aec.infos[agent]["round_over"]:
            points = table.round_points()
            scores = [a + b for a, b in zip(scores, points, strict=True)]
            assert [aec.infos[name]["round_points"] for name in aec.possible_agents] == points
            assert [aec.infos[name]["total_points"] for name in aec.possible_agents] == scores
            assert aec.rewards == {name: -float(p) for name, p in zip(aec.possible_agents, points, strict=True)}
            table = ReferenceTable(deck, num_players)
    assert aec.game is not None and aec.game.game_over
    assert aec.game.scores == scores
