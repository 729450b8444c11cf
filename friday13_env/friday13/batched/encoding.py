"""Observations, global states and masks of a ``GameBatch``, row for row what the scalar encoder gives.

``encode_observations(batch, games, observers)`` is :func:`friday13_env.friday13.encoding.encode_observation`
for many games at once (same layout, same player-relative seats, same padding), and
``encode_states`` is :func:`~friday13_env.friday13.encoding.encode_state`. Both fill one
preallocated ``float32`` array block by block through the layout's named slices.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from friday13_env.core.checks import exact_array
from friday13_env.core.layout import Layout
from friday13_env.friday13.batched.engine import DUMMY_SLOT, HAND_SLOTS, MAX_SEATS, GameBatch
from friday13_env.friday13.cards import CAPTURE_LIMIT, NUM_PILES, Deck
from friday13_env.friday13.encoding import observation_layout, state_layout
from friday13_env.friday13.engine import DUMMY_PLAYER_COUNT, MAX_PLAYERS


@cache
def relative_seats() -> np.ndarray:
    """``[n, observer, offset]``: the absolute seat at ``offset`` places clockwise from ``observer`` at a
    table of ``n``; offsets from ``n`` on point at empty seats (``offset`` itself), which hold nothing."""
    seats = np.zeros((MAX_PLAYERS + 1, MAX_SEATS, MAX_SEATS), dtype=np.int64)
    for n in range(1, MAX_PLAYERS + 1):
        for observer in range(n):
            seats[n, observer] = [(observer + offset) % n if offset < n else offset for offset in range(MAX_SEATS)]
    return seats


def encode_observations(
    batch: GameBatch, games: np.ndarray | None = None, observers: np.ndarray | None = None
) -> np.ndarray:
    """``(m, D)`` float32: the observation of seat ``observers[i]`` (absolute) in game ``games[i]``.

    ``observers`` defaults to the player to move in each game.
    """
    games = batch.game_indices(games)
    observers = batch.current[games] if observers is None else exact_array(observers, "observers")
    if observers.shape != games.shape or observers.dtype.kind not in "iu":
        raise ValueError(
            f"expected one observer (an integer seat) per game, shape {games.shape}, "
            f"got {observers.dtype} {observers.shape}"
        )
    if ((observers < 0) | (observers >= batch.num_players[games])).any():
        raise ValueError("an observer must be a seat of its game: 0..num_players - 1")
    observers = observers.astype(np.int64)  # (numpy makes int64 + uint64 a float)
    layout = observation_layout(batch.deck)
    out = np.zeros((games.size, layout.size), dtype=np.float32)
    views = _views(out, layout)
    own = batch.hands.reshape(-1, batch.deck.num_kinds).take(games * HAND_SLOTS + observers, axis=0)
    views["hand"][:] = own
    views["unseen"][:] = batch.tables.kind_counts - batch.played.take(games, axis=0) - own
    seats = relative_seats()[batch.num_players[games], observers]
    _fill_public(batch, games, seats, views)
    return out


def encode_states(batch: GameBatch, games: np.ndarray | None = None) -> np.ndarray:
    """``(m, S)`` float32: the global state of each game (every hand, absolute seats), for centralised critics."""
    games = batch.game_indices(games)
    layout = state_layout(batch.deck)
    out = np.zeros((games.size, layout.size), dtype=np.float32)
    views = _views(out, layout)
    hands = batch.hands[games]
    views["hands"][:] = hands[:, :MAX_SEATS]
    views["dummy_hand"][:] = hands[:, DUMMY_SLOT]
    playing = np.flatnonzero(~batch.game_over[games])
    views["to_move"][playing, batch.current[games[playing]]] = 1
    seats = relative_seats()[batch.num_players[games], 0]
    _fill_public(batch, games, seats, views)
    return out


def _views(out: np.ndarray, layout: Layout) -> dict[str, np.ndarray]:
    """Named views of every row of ``out`` (``(m, *block shape)``), for writing block by block."""
    return {block.name: out[:, layout.slices[block.name]].reshape(-1, *block.shape) for block in layout.blocks}


def _fill_public(batch: GameBatch, games: np.ndarray, seats: np.ndarray, views: dict[str, np.ndarray]) -> None:
    """The public blocks, per-seat ones in the order ``seats`` (``(m, 6)`` absolute seats, padding past ``n``)."""
    deck = batch.deck
    n = batch.num_players[games]
    by_seat = games[:, None] * MAX_SEATS + seats  # flat (game, seat) rows of the per-seat arrays
    totals = batch.pile_totals[games]
    views["pile_totals"][:] = totals
    _fill_pile_cards(views["pile_cards"], batch.pile_cards[games], deck)
    views["captured"][:] = batch.captured.reshape(-1, batch.captured.shape[2]).take(by_seat, axis=0)
    views["hand_sizes"][:] = batch.hand_sizes.take(games[:, None] * HAND_SLOTS + seats)
    views["round"][:, 0] = batch.round[games]
    views["round"][:, 1] = batch.num_rounds - batch.round[games]
    views["scores"][:] = batch.scores.take(by_seat)
    views["seat_present"][:] = np.arange(MAX_SEATS) < n[:, None]
    views["dummy"][:, 0] = n == DUMMY_PLAYER_COUNT
    if "capture_preview" in views:
        tables = batch.tables
        sizes = batch.pile_sizes[games]
        pile = tables.action_pile
        views["capture_preview"][:] = np.where(totals[:, pile] + tables.action_value > CAPTURE_LIMIT, sizes[:, pile], 0)


def _fill_pile_cards(out: np.ndarray, pile_cards: np.ndarray, deck: Deck) -> None:
    """Spread each pile's ``(V + 1)`` column counts over the observation's ``(3, K)`` card kinds."""
    values = deck.num_values
    for pile in range(NUM_PILES):
        out[:, pile, pile * values : (pile + 1) * values] = pile_cards[:, pile, :values]
        out[:, pile, deck.friday_kind] = pile_cards[:, pile, values]


__all__ = ["encode_observations", "encode_states", "relative_seats"]
