"""The rules of Friday the 13th for B games at once, held as numpy arrays (Pgx's batched ``step`` in numpy).

``GameBatch`` plays one card in each of a set of games per ``step`` call, by the player to move in each
game, exactly as :mod:`friday13_env.friday13.engine` plays one: captures, the sole-majority scoring at
the round's end, the next deal, the game's end and (optionally) the re-deal of finished games are all
array operations, with no Python loop over games anywhere.

Layout, chosen so each play touches a few small rows: hands are ``(B, 7, K)`` card counts per seat
(seats 0-5, padded with empty seats, then the 3-player dummy hand in slot ``DUMMY_SLOT``); a pile is a
total and counts of its cards by *column* (``(B, 3, V + 1)``: the pile's own ``V`` omen values, then
Friday the 13th), which is all that the observation and a capture need: the order of a pile's cards
never matters to the rules. Captured stacks are ``(B, 6, 4)`` counts by type.

The table size may differ from game to game (``num_players`` may be a list to draw from for each new
game); the deck is one per batch. All randomness (deals, table sizes) comes from one seeded
``numpy.random.Generator``: the same seed gives the same batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from friday13_env.core.checks import check_rng, counted, exact_array
from friday13_env.core.registry import check_seed
from friday13_env.core.specs import shown
from friday13_env.friday13.cards import (
    CAPTURE_LIMIT,
    CARD_COUNT_DTYPE,
    NUM_PILES,
    NUM_TYPES,
    STANDARD_DECK,
    Deck,
    as_deck,
)
from friday13_env.friday13.engine import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    GameState,
    IllegalActionError,
    Rules,
    check_player_counts,
    deal_sizes,
    pile_total_errors,
    stacked_round_points,
)

MAX_SEATS = MAX_PLAYERS
DUMMY_SLOT = MAX_SEATS
"""Hand slot of the 3-player dummy hand (slots ``0..5`` are seats)."""
HAND_SLOTS = MAX_SEATS + 1
MAX_GAMES = 1 << 20
"""Largest batch accepted: a guard against a typo that would allocate gigabytes."""


_ZERO = np.zeros((), dtype=np.int64)
_FALSE = np.zeros((), dtype=bool)
"""The one zero integer and the one False that every step ending no round reports (as read-only views)."""


@dataclass(frozen=True)
class DeckTables:
    """Per-action and per-kind lookup tables of one deck, so a step is a handful of ``take`` calls."""

    deck: Deck
    action_kind: np.ndarray
    """Card kind each action plays."""
    action_pile: np.ndarray
    action_value: np.ndarray
    action_friday: np.ndarray
    """1 for the three Friday the 13th actions, else 0."""
    action_column: np.ndarray
    """Column of the played card in its pile's ``(V + 1)`` counts: its value index, or ``V`` for Friday."""
    kind_actions: np.ndarray
    """``(K, A)`` float32: 1 where holding a card kind makes an action legal (one per omen kind, three for Friday)."""
    legal_prefix: np.ndarray
    """``kind_actions`` times an upper-triangular matrix of ones: held kinds -> legal actions up to each action."""
    action_piles: np.ndarray
    """``(A, 3)`` float32: 1 at each action's pile."""
    first_action_of_pile: np.ndarray
    """The lowest action that plays on each pile (its omen kind of the lowest value)."""
    kind_counts: np.ndarray
    """Copies of each card kind in the deck."""
    cards: np.ndarray
    """The whole deck as card kinds (``deck.size`` entries), the row that every deal shuffles."""
    hand_sizes: np.ndarray
    """``[n * 6 + start]``: each hand slot's size after the deal of a round started by ``start`` at a table of ``n``."""
    plays_per_round: np.ndarray
    """Cards played in a round, by table size (index = number of players; 0 where no table has that size)."""
    deal_offsets: np.ndarray
    """``[n * 6 + start, j]``: ``slot * K`` for the hand slot dealt the ``j``-th card of a shuffled deck at
    a table of ``n`` whose round is started by seat ``start`` (one card at a time from the start player
    clockwise, dummy last), so ``offset + kind`` indexes a game's ``(7, K)`` hands."""


def deck_tables(deck: Deck | str) -> DeckTables:
    """The lookup tables of ``deck`` (a ``Deck`` or a deck's name), built once per deck."""
    return _deck_tables(as_deck(deck))


@cache
def _deck_tables(deck: Deck) -> DeckTables:
    actions = range(deck.num_actions)
    kinds_piles = [deck.action_kind_and_pile(action) for action in actions]
    kinds = np.array([kind for kind, _ in kinds_piles], dtype=np.int64)
    friday = (kinds == deck.friday_kind).astype(np.int64)
    plays = np.zeros(MAX_PLAYERS + 1, dtype=np.int64)
    offsets = np.zeros(((MAX_PLAYERS + 1) * MAX_PLAYERS, deck.size), dtype=np.int64)
    sizes = np.zeros(((MAX_PLAYERS + 1) * MAX_PLAYERS, HAND_SLOTS), dtype=np.int64)
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        rules = Rules(num_players=n, deck=deck)
        plays[n] = sum(deal_sizes(rules))
        hand = np.arange(deck.size) % rules.num_hands
        for start in range(n):
            slots = np.where(hand < n, (start + hand) % n, DUMMY_SLOT)
            offsets[n * MAX_PLAYERS + start] = slots * deck.num_kinds
            sizes[n * MAX_PLAYERS + start] = np.bincount(slots, minlength=HAND_SLOTS)
    kind_actions = np.zeros((deck.num_kinds, deck.num_actions), dtype=np.float32)
    kind_actions[kinds, np.arange(deck.num_actions)] = 1
    return DeckTables(
        deck=deck,
        kind_actions=kind_actions,
        legal_prefix=kind_actions @ np.triu(np.ones((deck.num_actions, deck.num_actions), dtype=np.float32)),
        action_piles=np.eye(NUM_PILES, dtype=np.float32)[[pile for _, pile in kinds_piles]],
        first_action_of_pile=np.array([pile * deck.num_values for pile in range(NUM_PILES)]),
        action_kind=kinds,
        action_pile=np.array([pile for _, pile in kinds_piles], dtype=np.int64),
        action_value=np.array([deck.kind_values[kind] for kind in kinds], dtype=np.int64),
        action_friday=friday,
        action_column=np.where(friday == 1, deck.num_values, kinds % deck.num_values),
        kind_counts=np.array(deck.kind_counts, dtype=np.int64),
        cards=np.repeat(np.arange(deck.num_kinds), deck.kind_counts).astype(np.int64),
        plays_per_round=plays,
        deal_offsets=offsets,
        hand_sizes=sizes,
    )


@dataclass(frozen=True)
class StepResult:
    """What one ``step`` did, one row per stepped game (in the order of the ``games`` given).

    ``round_points``, ``round_totals`` and ``final_scores`` are per absolute seat (padded with zeros to 6);
    rows of games whose round (game) did not end are zero. Every array is read-only: on a step that ends no round
    the zero fields are views of one zero, shared between fields, so they cost nothing whatever sizes are stepped;
    copy one (``np.array``) to write to it.
    """

    captured: np.ndarray
    """Cards the player took with this play (0 when the pile stayed at 13 or below)."""
    num_players: np.ndarray
    """Each stepped game's table size (that of the game played, even if it was dealt afresh since)."""
    round_over: np.ndarray
    round_points: np.ndarray
    game_over: np.ndarray
    final_scores: np.ndarray
    """Each seat's total at the end of a game that ended with this play."""
    round_totals: np.ndarray
    """Each seat's total after a round that ended with this play (the final totals if it ended the game)."""

    def __post_init__(self) -> None:
        for array in vars(self).values():
            array.setflags(write=False)


def nth_from_prefix(prefix: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """The ``floor(u * L)``-th legal action of each row, from ``prefix[:, a]`` = legal actions up to and including
    ``a`` (float32 counts, ``L`` the last column, at least 1): the rule of ``GameBatch.nth_legal_actions`` and of
    the batched ``random`` agent, counted with a matrix product (exact on these small integers, and much faster
    than numpy's reductions over short rows)."""
    counts = prefix[:, -1]
    picks = np.minimum(np.floor(uniforms * counts), counts - 1)
    before = (prefix <= picks[:, None]).astype(np.float32)
    return (before @ np.ones(prefix.shape[1], dtype=np.float32)).astype(np.int64)


def check_num_games(num_games: object, option: str = "num_games") -> int:
    """``num_games`` as an int in 1..``MAX_GAMES``, or a ``ValueError`` naming ``option``."""
    if isinstance(num_games, bool) or not isinstance(num_games, int | np.integer) or not 1 <= num_games <= MAX_GAMES:
        raise ValueError(f"{option} must be an int in 1..{MAX_GAMES}, got {num_games!r}")
    return int(num_games)


class GameBatch:
    """``num_games`` games of Friday the 13th played in lockstep: one card per game per ``step``.

    Args:
        num_games: B, from 1 to ``MAX_GAMES``.
        num_players: the table size of every game, or a list to draw each new game's size from.
        deck: the deck of every game, a ``Deck`` or a deck's name (as the environments take it).
        num_rounds: rounds per game, 1 to ``MAX_ROUNDS``.
        seed: seeds the one Generator behind every deal and every drawn table size: ``None`` or a
            non-negative int.
        autoreset: a game that ends is dealt afresh in the same ``step`` (its final scores are in the
            ``StepResult``); with ``False`` it stays over, as the scalar engine leaves it, until
            ``reset_games``.

    The arrays are public for reading (observations, agents, tests); change them only through the methods.
    Every method that takes ``games`` reads them through ``game_indices``.
    """

    def __init__(
        self,
        num_games: int,
        num_players: int | Sequence[int] = 4,
        deck: Deck | str = STANDARD_DECK,
        num_rounds: int = 4,
        seed: int | None = None,
        autoreset: bool = True,
    ) -> None:
        self.num_games = check_num_games(num_games)
        self.player_counts = check_player_counts(num_players)
        deck = as_deck(deck)
        Rules(num_players=self.player_counts[0], deck=deck, num_rounds=num_rounds)  # validates the rounds
        check_seed(seed)
        self.deck = deck
        self.num_rounds = int(num_rounds)
        if not isinstance(autoreset, bool | np.bool_):
            raise ValueError(f"autoreset must be True or False, got {autoreset!r}")
        self.autoreset = bool(autoreset)
        self.tables = deck_tables(deck)
        self.rng = np.random.default_rng(seed)
        b, kinds = self.num_games, deck.num_kinds
        self.num_players = np.zeros(b, dtype=np.int64)
        self.hands = np.zeros((b, HAND_SLOTS, kinds), dtype=CARD_COUNT_DTYPE)
        self.hand_sizes = np.zeros((b, HAND_SLOTS), dtype=np.int64)
        self.played = np.zeros((b, kinds), dtype=CARD_COUNT_DTYPE)
        """Cards of each kind played this round (as the scalar engine's ``played``)."""
        self.pile_totals = np.zeros((b, NUM_PILES), dtype=np.int64)
        self.pile_sizes = np.zeros((b, NUM_PILES), dtype=np.int64)
        self.pile_cards = np.zeros((b, NUM_PILES, deck.num_values + 1), dtype=CARD_COUNT_DTYPE)
        self.captured = np.zeros((b, MAX_SEATS, NUM_TYPES), dtype=CARD_COUNT_DTYPE)
        self.scores = np.zeros((b, MAX_SEATS), dtype=np.int64)
        self.round = np.zeros(b, dtype=np.int64)
        self.current = np.zeros(b, dtype=np.int64)
        self.plays_left = np.zeros(b, dtype=np.int64)
        self.game_over = np.zeros(b, dtype=bool)
        self._all = np.arange(b)
        self._start_games(self._all)

    # -- reading -----------------------------------------------------------------------------
    def game_indices(self, games: np.ndarray | Sequence[int] | None, *, distinct: bool = False) -> np.ndarray:
        """``games`` as int64 indices of this batch's games (every game for ``None``), or a ``ValueError`` naming
        the allowed values, before anything reads or changes a game: a 1-d integer array (or list) in
        ``0..num_games - 1`` (``-1`` is not the last game, and ``0.7`` not game 0). With ``distinct`` no game
        may appear twice: a method that changes games would change a repeated one once in some arrays and twice
        in others. The one check of every method (and batched encoder) that takes ``games``."""
        if games is None:
            return self._all
        array = exact_array(games, "games")
        last = self.num_games - 1
        if array.ndim != 1 or (array.dtype.kind not in "iu" and array.size):
            raise ValueError(
                f"games must be a 1-d array of game indices (integers in 0..{last}), got {array.dtype} {array.shape}"
            )
        outside = (array < 0) | (array > last)
        if outside.any():
            raise ValueError(f"game indices must be in 0..{last}, got {array[outside][0]}")
        indices = array.astype(np.int64, copy=False)
        if distinct and np.bincount(indices, minlength=1).max() > 1:
            raise ValueError("games must not repeat a game: each game is changed once")
        return indices

    def current_hands(self, games: np.ndarray | None = None) -> np.ndarray:
        """The hand of the player to move in each game, ``(m, K)`` counts."""
        games = self.game_indices(games)
        rows = games * HAND_SLOTS + self.current[games]
        return self.hands.reshape(-1, self.deck.num_kinds).take(rows, axis=0)

    def legal_mask(self, games: np.ndarray | None = None) -> np.ndarray:
        """``(m, A)`` booleans: the actions the player to move may play (none in a finished game, whose
        hands are empty)."""
        return self._held_kinds(games) @ self.tables.kind_actions > 0

    def random_actions(self, rng: np.random.Generator, games: np.ndarray | None = None) -> np.ndarray:
        """A uniformly drawn legal action for the player to move in each game (none may be over):
        ``nth_legal_actions`` of uniforms drawn from ``rng``, a ``numpy.random.Generator`` (anything else is a
        ``ValueError``, before any draw: a seed is not a Generator, nor is a legacy ``RandomState``)."""
        check_rng(rng)
        games = self.game_indices(games)
        return self.nth_legal_actions(rng.random(games.size), games)

    def nth_legal_actions(self, uniforms: np.ndarray, games: np.ndarray | None = None) -> np.ndarray:
        """The ``floor(u * L)``-th legal action in ascending order for each game (``L`` legal actions).

        With ``u`` uniform in [0, 1) that is a uniform legal move, and the scalar rule is the same
        (``legal_actions()[int(u * len(legal))]``). Counted with two small float32 matrix products,
        which are exact on these small integers and much faster than numpy's reductions over short rows
        (``nth_from_prefix``). ``uniforms`` must be floats, one per game, each in [0, 1) (so not NaN).
        """
        games = self.game_indices(games)
        uniforms = np.asarray(uniforms)
        if uniforms.shape != games.shape or uniforms.dtype.kind != "f":
            raise ValueError(
                f"uniforms must be a float array of shape {games.shape} (one per game), "
                f"got {uniforms.dtype} {uniforms.shape}"
            )
        uniforms = uniforms.astype(np.float64, copy=False)  # float32 uniforms draw as they always did
        outside = ~((uniforms >= 0) & (uniforms < 1))  # NaN compares false both ways: outside
        if outside.any():
            raise ValueError(f"uniforms must lie in [0, 1), got {uniforms[outside][0]}")
        prefix = self._held_kinds(games) @ self.tables.legal_prefix  # legal actions up to and including each one
        if not prefix[:, -1].all():
            raise ValueError("a finished game has no legal action: reset it (reset_games) before drawing one")
        return nth_from_prefix(prefix, uniforms)

    def _held_kinds(self, games: np.ndarray | None) -> np.ndarray:
        """``(m, K)`` float32: 1 for each card kind the player to move holds."""
        return (self.current_hands(games) > 0).astype(np.float32)

    # -- playing -----------------------------------------------------------------------------
    def step(self, actions: np.ndarray, games: np.ndarray | None = None) -> StepResult:
        """Play ``actions[i]`` for the player to move in game ``games[i]`` (every game when ``None``).

        ``games`` must not repeat a game (``game_indices``). Raises ``IllegalActionError`` (nothing played in any game)
        for an action out of range, a card the player does not hold, or a game that is over.
        """
        tables = self.tables
        games = self.game_indices(games, distinct=True)
        actions = self._checked_actions(actions, games)
        current = self.current.take(games)
        kind = tables.action_kind.take(actions)
        hand_index = (games * HAND_SLOTS + current) * self.deck.num_kinds + kind
        hands = self.hands.reshape(-1)
        held = hands.take(hand_index)
        if not held.all() or self.game_over.take(games).any():
            raise self._illegal(actions, games, held)
        hands[hand_index] = held - 1
        self.hand_sizes.reshape(-1)[games * HAND_SLOTS + current] -= 1
        self.played.reshape(-1)[games * self.deck.num_kinds + kind] += 1

        pile = tables.action_pile.take(actions)
        value = tables.action_value.take(actions)
        pile_index = games * NUM_PILES + pile
        totals = self.pile_totals.reshape(-1)
        sizes = self.pile_sizes.reshape(-1)
        total = totals.take(pile_index) + value
        size = sizes.take(pile_index)
        captures = total > CAPTURE_LIMIT
        columns = self.pile_cards.shape[2]
        taken = self._zeros(games.size)[0]
        if captures.any():
            which = np.flatnonzero(captures)
            rows = pile_index.take(which)
            fridays = self.pile_cards.reshape(-1).take(rows * columns + (columns - 1))
            taken = np.zeros(games.size, dtype=np.int64)
            taken[which] = size.take(which)
            stack = (games.take(which) * MAX_SEATS + current.take(which)) * NUM_TYPES
            captured = self.captured.reshape(-1)
            captured[stack + pile.take(which)] += (size.take(which) - fridays).astype(CARD_COUNT_DTYPE)
            captured[stack + NUM_PILES] += fridays
            self.pile_cards.reshape(-1, columns)[rows] = 0
            total[which] = value.take(which)
            size[which] = 0
        totals[pile_index] = total
        sizes[pile_index] = size + 1
        self.pile_cards.reshape(-1)[pile_index * columns + tables.action_column.take(actions)] += 1

        plays_left = self.plays_left.take(games) - 1
        sizes = self.num_players.take(games)
        following = current + 1
        following[following == sizes] = 0
        self.plays_left[games] = plays_left
        self.current[games] = following

        round_over = plays_left == 0
        if not round_over.any():
            _, points, over = self._zeros(games.size)
            return StepResult(taken, sizes, over, points, over, points, points)
        round_points = np.zeros((games.size, MAX_SEATS), dtype=np.int64)
        game_over = np.zeros(games.size, dtype=bool)
        round_totals = np.zeros((games.size, MAX_SEATS), dtype=np.int64)
        which = np.flatnonzero(round_over)
        ended = games[which]
        round_points[which] = self._score_rounds(ended)
        over = self.round[ended] + 1 >= self.num_rounds
        game_over[which] = over
        round_totals[which] = self.scores[ended]
        final_scores = np.where(game_over[:, None], round_totals, 0)
        going_on = ended[~over]
        self.round[going_on] += 1
        self._deal(going_on)
        if self.autoreset:
            self._start_games(ended[over])
        else:  # left as the scalar engine leaves a finished game: the last player still "to move"
            self.game_over[ended[over]] = True
            self.current[ended[over]] = current[which[over]]
        return StepResult(taken, sizes, round_over, round_points, game_over, final_scores, round_totals)

    def reset_games(self, games: np.ndarray | Sequence[int]) -> None:
        """Start new games in slots ``games`` (distinct indices, ``game_indices``): table size (drawn when several
        are allowed), scores, first deal."""
        self._start_games(self.game_indices(games, distinct=True))

    def _start_games(self, games: np.ndarray) -> None:
        """``reset_games`` of checked indices."""
        if games.size == 0:
            return
        counts = self.player_counts
        if len(counts) == 1:
            self.num_players[games] = counts[0]
        else:
            self.num_players[games] = np.asarray(counts)[self.rng.integers(len(counts), size=games.size)]
        self.scores[games] = 0
        self.round[games] = 0
        self.game_over[games] = False
        self._deal(games)

    def _deal(self, games: np.ndarray) -> None:
        """Shuffle the whole deck and deal the round ``self.round`` of each game (piles and stacks cleared)."""
        if games.size == 0:
            return
        tables = self.tables
        n = self.num_players[games]
        start = self.round[games] % n
        order = self.rng.permuted(np.broadcast_to(tables.cards, (games.size, tables.cards.size)), axis=1)
        table = n * MAX_PLAYERS + start
        if table.min() == table.max():  # the usual case: every game at the same table size and round
            offsets = tables.deal_offsets[table[0]]
        else:
            offsets = tables.deal_offsets.take(table, axis=0)
        order += offsets
        order += (np.arange(games.size) * (HAND_SLOTS * self.deck.num_kinds))[:, None]
        counts = np.bincount(order.reshape(-1), minlength=games.size * HAND_SLOTS * self.deck.num_kinds)
        self.hands[games] = counts.reshape(games.size, HAND_SLOTS, self.deck.num_kinds)
        self.hand_sizes[games] = tables.hand_sizes[table]
        self.played[games] = 0
        self.pile_totals[games] = 0
        self.pile_sizes[games] = 0
        self.pile_cards[games] = 0
        self.captured[games] = 0
        self.current[games] = start
        self.plays_left[games] = tables.plays_per_round[n]

    def _score_rounds(self, games: np.ndarray) -> np.ndarray:
        """Bad-luck points of the round just ended in ``games`` (added to their scores), ``(m, 6)``.

        The rules engine's scoring of many tables (:func:`friday13_env.friday13.engine.stacked_round_points`).
        """
        stacks = np.ascontiguousarray(self.captured[games].transpose(1, 2, 0), dtype=np.int64)  # (seat, type, game)
        points = stacked_round_points(stacks).T
        self.scores[games] += points
        return points

    @staticmethod
    def _zeros(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Read-only zero results (captures, points, flags) for ``size`` games, for steps that end no round: views
        of one zero (``broadcast_to``), so they cost no memory whatever sizes are stepped (a cache per size grew
        with every new subset size the vector environment's opponents stepped)."""
        return (
            np.broadcast_to(_ZERO, (size,)),
            np.broadcast_to(_ZERO, (size, MAX_SEATS)),
            np.broadcast_to(_FALSE, (size,)),
        )

    def _checked_actions(self, actions: np.ndarray, games: np.ndarray) -> np.ndarray:
        actions = exact_array(actions, "actions")
        if actions.shape != games.shape:
            raise ValueError(f"expected one action per stepped game, shape {games.shape}, got {actions.shape}")
        if actions.dtype.kind not in "iu":
            raise IllegalActionError(f"actions must be integers in 0..{self.deck.num_actions - 1}, got {actions.dtype}")
        if games.size and (actions.min() < 0 or actions.max() >= self.deck.num_actions):
            raise IllegalActionError(
                f"actions must be in 0..{self.deck.num_actions - 1}, got values from {actions.min()} to {actions.max()}"
            )
        return actions.astype(np.int64, copy=False)

    def _illegal(self, actions: np.ndarray, games: np.ndarray, held: np.ndarray) -> IllegalActionError:
        over = np.flatnonzero(self.game_over[games])
        if over.size:
            return IllegalActionError(
                f"game {games[over[0]]} is over ({over.size} of the {games.size} stepped games "
                f"{'is' if over.size == 1 else 'are'}): reset it before playing"
            )
        bad = int(np.flatnonzero(held == 0)[0])
        game = int(games[bad])
        legal = np.flatnonzero(self.legal_mask(np.array([game]))[0]).tolist()
        return IllegalActionError(
            f"illegal action {int(actions[bad])} ({self.deck.action_name(int(actions[bad]))}) in game {game}: "
            f"player_{self.current[game]} holds no such card; legal actions: {legal} "
            f"({counted(int((held == 0).sum()), 'illegal action')} in all, nothing played)"
        )

    # -- conversions -------------------------------------------------------------------------
    def load_states(self, states: Sequence[GameState], games: np.ndarray | None = None) -> None:
        """Copy scalar engine states into slots ``games`` (the first ``len(states)`` when ``None``).

        For tests, and for starting batched rollouts from given positions. ``states`` is a list (or tuple) of
        ``GameState`` objects, which must use this batch's deck and number of rounds, and be in play (a state whose
        round is over has nothing to play); anything else is a ``ValueError`` before any slot changes.
        """
        if not isinstance(states, list | tuple):
            raise ValueError(f"states must be a list (or tuple) of GameState objects, got {type(states).__name__}")
        for index, state in enumerate(states):
            if not isinstance(state, GameState):
                raise ValueError(f"states[{index}] is of type {type(state).__name__}, not a GameState")
        games = self.game_indices(np.arange(len(states)) if games is None else games, distinct=True)
        if games.shape != (len(states),):
            raise ValueError(f"expected one game slot per state ({len(states)}), got shape {games.shape}")
        for index, state in enumerate(states):  # every state checked before any slot changes
            rules = state.rules
            if rules.deck != self.deck or rules.num_rounds != self.num_rounds:
                raise ValueError(
                    f"a state of deck {rules.deck.name!r} with {rules.num_rounds} rounds cannot join a batch of "
                    f"deck {self.deck.name!r} with {self.num_rounds} rounds"
                )
            if state.round_over:
                raise ValueError("a state whose round is over cannot be loaded: call next_round() first")
            problem = reachable_problem(state)
            if problem is not None:
                raise ValueError(f"states[{index}] is no position of a game: {problem}")
        values = self.deck.num_values
        for game, state in zip(games.tolist(), states, strict=True):
            n = state.rules.num_players
            self.num_players[game] = n
            self.hands[game] = 0
            self.hands[game, :n] = state.hands
            if state.dummy is not None:
                self.hands[game, DUMMY_SLOT] = state.dummy
            self.hand_sizes[game] = self.hands[game].sum(axis=1)
            self.played[game] = state.played
            self.pile_totals[game] = state.pile_totals
            self.pile_sizes[game] = [len(cards) for cards in state.piles]
            self.pile_cards[game] = 0
            for pile, cards in enumerate(state.piles):
                for kind in cards:
                    column = values if kind == self.deck.friday_kind else kind % values
                    self.pile_cards[game, pile, column] += 1
            self.captured[game] = 0
            self.captured[game, :n] = state.captured
            self.scores[game] = 0
            self.scores[game, :n] = state.scores
            self.round[game] = state.round
            self.current[game] = state.current
            self.plays_left[game] = state.plays_left
            self.game_over[game] = False


def reachable_problem(state: GameState) -> str | None:
    """Why ``state`` is no position a game of its rules could be in, in words, or None: the shapes of its lists,
    counts that are whole and at least 0, no more cards of a kind in hands and played than the deck holds, piles
    whose totals are their cards', the round, the player to move and the plays left (the cards in the players'
    hands). A partial position (``scenario.from_hands``: some cards nowhere) is one. ``GameBatch.load_states`` checks
    it for every state before any slot changes: a state past these would play a game no deal leads to (a dummy
    moving, a round without end)."""
    rules, deck = state.rules, state.rules.deck
    n = rules.num_players
    hands = [*state.hands, *([state.dummy] if state.dummy is not None else [])]
    shapes = [("hands", state.hands, n, deck.num_kinds), ("captured", state.captured, n, NUM_TYPES)]
    for name, rows, count, width in shapes:
        if not isinstance(rows, list) or len(rows) != count:
            return f"its {name} hold {shown(rows)}, not one list per player ({count})"
        for seat, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != width:
                held = len(row) if isinstance(row, list) else shown(row)
                return f"{name}[{seat}] holds {held} counts, the deck {width} {'kinds' if name == 'hands' else 'types'}"
    if rules.has_dummy != (state.dummy is not None) or (state.dummy is not None and len(state.dummy) != deck.num_kinds):
        return f"its dummy hand is {shown(state.dummy)}: a {n}-player game {'has' if rules.has_dummy else 'has none'}"
    if len(state.played) != deck.num_kinds or len(state.scores) != n or len(state.pile_totals) != NUM_PILES:
        return "its played cards, scores or pile totals are not one count per kind, player and pile"
    if len(state.piles) != NUM_PILES or not all(
        isinstance(pile, list) and all(type(kind) is int and 0 <= kind < deck.num_kinds for kind in pile)
        for pile in state.piles
    ):
        return f"its piles are {shown(state.piles)}, not {NUM_PILES} lists of the deck's card kinds"
    counts = [*(c for row in (*hands, *state.captured) for c in row), *state.played, *state.scores, *state.pile_totals]
    if not all(type(count) is int and count >= 0 for count in counts):
        return "it holds a negative count (or one that is not an int)"
    for kind, (held, most) in enumerate(zip(np.sum([*hands, state.played], axis=0), deck.kind_counts, strict=True)):
        if held > most:
            return f"it holds {held} cards of kind {kind} in hands and played, more than the deck's {most}"
    if errors := pile_total_errors(state):
        return errors[0]
    if type(state.round) is not int or not 0 <= state.round < rules.num_rounds:
        return f"round {shown(state.round)} is not one of its {rules.num_rounds} rounds"
    if type(state.current) is not int or not 0 <= state.current < n:
        return f"current {shown(state.current)} is not a seat of its {n} players"
    in_hands = sum(sum(hand) for hand in state.hands)
    if state.plays_left != in_hands:
        return f"plays_left {shown(state.plays_left)}, but its hands hold {in_hands} cards"
    return None
