"""The rules of Friday the 13th as a small, fast, RL-agnostic state machine.

This module knows nothing about PettingZoo or Gymnasium (like ``board.py`` in PettingZoo's
tictactoe): it deals, validates and applies plays, captures piles and scores rounds exactly as the
rulebook and ``CONVENTIONS.md`` say. Environments, agents and benchmarks are thin layers on top.

Representation, chosen for speed and cheap copies (search agents clone states thousands of times
per move): hands are plain ``list[int]`` counts per card kind, captured stacks counts per type,
piles short lists of card kinds in play order, and every field is a builtin. ``GameState.copy`` is therefore a
handful of list copies.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from friday13_env.core.checks import as_action
from friday13_env.friday13.cards import (
    CAPTURE_LIMIT,
    FRIDAY_POINTS,
    FRIDAY_TYPE,
    NUM_PILES,
    NUM_TYPES,
    OMEN_POINTS,
    STANDARD_DECK,
    Deck,
)

MIN_PLAYERS = 3
MAX_PLAYERS = 6
MAX_ROUNDS = 100
"""Most rounds a game may have (4 by default): every environment and batch takes ``num_rounds`` through ``Rules``,
so a typo such as ``10**9`` (a game no one would finish) is refused everywhere."""
DUMMY_PLAYER_COUNT = 3
"""With exactly this many players a fourth, dummy hand is dealt and never played."""


class IllegalActionError(ValueError):
    """An action that is out of range or not playable from the current hand."""


class GameOverError(RuntimeError):
    """A play was attempted after the last round ended."""


@dataclass(frozen=True)
class Rules:
    """The fixed configuration of one game; validated once so the hot path never re-checks it."""

    num_players: int = 4
    deck: Deck = STANDARD_DECK
    num_rounds: int = 4
    # Derived, cached for the hot path.
    num_hands: int = field(init=False, repr=False)
    cards_per_round: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.num_players, bool) or not isinstance(self.num_players, int | np.integer):
            raise ValueError(f"num_players must be an int in {MIN_PLAYERS}..{MAX_PLAYERS}, got {self.num_players!r}")
        if not MIN_PLAYERS <= self.num_players <= MAX_PLAYERS:
            raise ValueError(
                f"num_players must be one of {list(range(MIN_PLAYERS, MAX_PLAYERS + 1))}, got {self.num_players}"
            )
        rounds = self.num_rounds
        if isinstance(rounds, bool) or not isinstance(rounds, int | np.integer) or not 1 <= rounds <= MAX_ROUNDS:
            raise ValueError(f"num_rounds must be a positive int in 1..{MAX_ROUNDS}, got {rounds!r}")
        if not isinstance(self.deck, Deck):
            raise ValueError(f"deck must be a Deck (see friday13_env.friday13.cards.DECKS), got {self.deck!r}")
        object.__setattr__(self, "num_players", int(self.num_players))
        object.__setattr__(self, "num_rounds", int(self.num_rounds))
        hands = self.num_players + (1 if self.has_dummy else 0)
        object.__setattr__(self, "num_hands", hands)
        object.__setattr__(self, "cards_per_round", sum(deal_sizes(self)))

    @property
    def has_dummy(self) -> bool:
        return self.num_players == DUMMY_PLAYER_COUNT


def check_player_counts(num_players: int | Sequence[int]) -> tuple[int, ...]:
    """``num_players`` (an int in 3..6 or a non-empty sequence of them) as a sorted tuple, or a ``ValueError``
    naming the allowed values (for the environments that draw a table size per game)."""
    allowed = list(range(MIN_PLAYERS, MAX_PLAYERS + 1))
    counts = [num_players] if isinstance(num_players, int | np.integer) else num_players
    if isinstance(counts, str) or not isinstance(counts, Sequence) or not counts:
        raise ValueError(f"num_players must be one of {allowed} or a non-empty list of them, got {num_players!r}")
    for count in counts:
        if isinstance(count, bool) or not isinstance(count, int | np.integer) or count not in allowed:
            raise ValueError(f"num_players must be one of {allowed} or a list of them, got {num_players!r}")
    return tuple(sorted({int(count) for count in counts}))


def deal_sizes(rules: Rules) -> list[int]:
    """Hand sizes in deal order (start player first, dummy last): the first hands get the extras."""
    base, extra = divmod(rules.deck.size, rules.num_players + (1 if rules.has_dummy else 0))
    sizes = [base + (1 if i < extra else 0) for i in range(rules.num_players + (1 if rules.has_dummy else 0))]
    return sizes[: rules.num_players]


def round_points(captured: Sequence[Sequence[int]]) -> list[int]:
    """Bad-luck points of one round from every player's captured cards by type.

    ``captured[player]`` counts (black cat, broken mirror, ladder, Friday the 13th). For each omen
    type the player with strictly the most cards of it discards them; on a tie for the most nobody
    does. Remaining omen cards score 1 each, Friday the 13th cards 2 each; card values never count.
    """
    points = [stack[FRIDAY_TYPE] * FRIDAY_POINTS for stack in captured]
    for omen_type in range(NUM_PILES):
        counts = [player[omen_type] for player in captured]
        most = max(counts)
        sole_majority = counts.count(most) == 1
        for player, count in enumerate(counts):
            if not (sole_majority and count == most):
                points[player] += count * OMEN_POINTS
    return points


def stacked_round_points(stacks: np.ndarray) -> np.ndarray:
    """``round_points`` of many tables at once: ``(seats, 4, ...) -> (seats, ...)``, seats first so that the
    reductions over seats run over whole rows of tables. Empty seats hold nothing, so they never tie for a most
    above zero (and an all-zero type has three or more holders: nobody discards it). Keeps integer stacks integer.
    """
    omens = stacks[:, :NUM_PILES]
    most = omens.max(axis=0)
    at_most = omens == most
    sole = at_most.sum(axis=0, dtype=np.int8) == 1
    kept = np.where(at_most & sole, 0, omens)
    return kept.sum(axis=1) * OMEN_POINTS + stacks[:, FRIDAY_TYPE] * FRIDAY_POINTS


def winners(scores: Sequence[int]) -> list[int]:
    """Players tied for the lowest total: they share the win."""
    best = min(scores)
    return [player for player, score in enumerate(scores) if score == best]


class GameState:
    """The complete state of a game in progress; mutable, with a cheap ``copy``.

    Seats are absolute here (``0..n-1``, clockwise = increasing index); player-relative views are
    the encoder's job. Captured stacks are kept *by type* (cat, mirror, ladder, Friday), which is
    all that scoring needs, and ``played`` counts every card kind played this round, which is all
    that a player with perfect memory knows beyond their own hand.
    """

    __slots__ = (
        "captured",
        "current",
        "dummy",
        "game_over",
        "hands",
        "last_round_points",
        "pile_totals",
        "piles",
        "played",
        "plays_left",
        "round",
        "round_over",
        "rules",
        "scores",
    )

    rules: Rules
    round: int
    current: int
    hands: list[list[int]]
    dummy: list[int] | None
    piles: list[list[int]]
    pile_totals: list[int]
    captured: list[list[int]]
    played: list[int]
    scores: list[int]
    plays_left: int
    last_round_points: list[int] | None
    round_over: bool
    game_over: bool

    @property
    def start_player(self) -> int:
        """Round ``r`` is started by ``player_{r mod n}``: the start rotates clockwise."""
        return self.round % self.rules.num_players

    def copy(self) -> GameState:
        """An independent copy; cheap because every field is a builtin or a list of ints."""
        other = GameState.__new__(GameState)
        other.rules = self.rules
        other.round = self.round
        other.current = self.current
        other.hands = [hand[:] for hand in self.hands]
        other.dummy = None if self.dummy is None else self.dummy[:]
        other.piles = [pile[:] for pile in self.piles]
        other.pile_totals = self.pile_totals[:]
        other.captured = [stack[:] for stack in self.captured]
        other.played = self.played[:]
        other.scores = self.scores[:]
        other.plays_left = self.plays_left
        other.last_round_points = None if self.last_round_points is None else self.last_round_points[:]
        other.round_over = self.round_over
        other.game_over = self.game_over
        return other

    # -- legal moves -------------------------------------------------------------------------
    def legal_actions(self) -> list[int]:
        """The playable actions of the player to move, ascending; empty once the round is over."""
        if self.round_over:
            return []
        hand = self.hands[self.current]
        friday = self.rules.deck.friday_kind
        actions = [kind for kind in range(friday) if hand[kind]]
        if hand[friday]:
            actions.extend((friday, friday + 1, friday + 2))
        return actions

    def is_legal(self, action: int) -> bool:
        """Whether ``play(action)`` would play a card: ``False`` for whatever ``play`` refuses, so out of range,
        floats (``15.0`` is not the Friday action), bools and anything but a Python or numpy integer."""
        if action.__class__ is not int and (isinstance(action, bool) or not isinstance(action, int | np.integer)):
            return False
        if self.round_over or not 0 <= action < self.rules.deck.num_actions:
            return False
        friday = self.rules.deck.friday_kind
        return self.hands[self.current][action if action < friday else friday] > 0

    def action_mask(self) -> list[int]:
        """``legal_actions`` as a 0/1 list over the whole action space."""
        if self.round_over:
            return [0] * self.rules.deck.num_actions
        hand = self.hands[self.current]
        friday = self.rules.deck.friday_kind
        mask = [1 if count else 0 for count in hand]
        mask.append(mask[friday])
        mask.append(mask[friday])
        return mask

    # -- playing -----------------------------------------------------------------------------
    def play(self, action: int) -> int:
        """Play ``action`` for the player to move and return how many cards they captured.

        When the last card of the round is played the round is scored at once
        (``last_round_points``, ``scores``) and ``round_over`` is set; call ``next_round`` to deal
        the next one. Raises ``IllegalActionError`` for a card the player does not hold.
        """
        if self.round_over:
            if self.game_over:
                raise GameOverError("the game is over: no more cards can be played")
            raise IllegalActionError("the round is over: call next_round() before playing")
        deck = self.rules.deck
        friday = deck.friday_kind
        player = self.current
        hand = self.hands[player]
        if action.__class__ is not int:
            action = _as_action(action, deck.num_actions)
        if action < friday:
            if action < 0 or not hand[action]:
                raise self.illegal_action_error(action)
            kind = action
            pile_index = action // deck.num_values
        else:
            if action > friday + 2 or not hand[friday]:
                raise self.illegal_action_error(action)
            kind = friday
            pile_index = action - friday
        hand[kind] -= 1
        self.played[kind] += 1
        value = deck.kind_values[kind]
        total = self.pile_totals[pile_index] + value
        taken = 0
        if total > CAPTURE_LIMIT:
            pile = self.piles[pile_index]
            stack = self.captured[player]
            kind_types = deck.kind_types
            for card in pile:
                stack[kind_types[card]] += 1
            taken = len(pile)
            self.piles[pile_index] = [kind]
            self.pile_totals[pile_index] = value
        else:
            self.piles[pile_index].append(kind)
            self.pile_totals[pile_index] = total
        self.plays_left -= 1
        if self.plays_left:
            self.current = player + 1 if player + 1 < self.rules.num_players else 0
        else:
            self._end_round()
        return taken

    def illegal_action_error(self, action: int) -> IllegalActionError:
        """The error ``play(action)`` raises for an action it refuses: what is wrong, and the legal actions."""
        deck = self.rules.deck
        if not 0 <= action < deck.num_actions:
            return IllegalActionError(
                f"action {action} is out of range: actions are 0..{deck.num_actions - 1} "
                f"(legal now: {self.legal_actions()})"
            )
        legal = self.legal_actions()
        names = ", ".join(f"{a} ({deck.action_name(a)})" for a in legal)
        return IllegalActionError(
            f"illegal action {action} ({deck.action_name(action)}): player_{self.current} holds no such card; "
            f"legal actions: [{names}]"
        )

    def _end_round(self) -> None:
        points = round_points(self.captured)
        self.last_round_points = points
        self.scores = [score + gained for score, gained in zip(self.scores, points, strict=True)]
        self.round_over = True
        self.game_over = self.round + 1 >= self.rules.num_rounds

    def next_round(self, rng: np.random.Generator) -> None:
        """Reshuffle the whole deck and deal the next round (call after ``round_over``)."""
        if not self.round_over:
            raise RuntimeError("next_round() called while the round is still being played")
        if self.game_over:
            raise GameOverError(f"the game ended after round {self.round + 1} of {self.rules.num_rounds}")
        _start_round(self, self.round + 1, deal(self.rules, self.round + 1, rng))

    def cards_accounted(self) -> list[int]:
        """Every card of the deck counted once per kind: in a hand, the dummy, or played.

        Equals ``rules.deck.kind_counts`` in every reachable state; ``accounting_errors`` also
        checks that the played cards are exactly those in the piles and the captured stacks.
        """
        stacks = [*self.hands, self.played] + ([self.dummy] if self.dummy is not None else [])
        return [sum(column) for column in zip(*stacks, strict=True)]

    def accounting_errors(self) -> list[str]:
        """Every broken bookkeeping invariant, in words; an empty list for a consistent state."""
        deck = self.rules.deck
        errors = []
        if self.cards_accounted() != list(deck.kind_counts):
            errors.append(f"cards per kind {self.cards_accounted()} != deck {list(deck.kind_counts)}")
        played_by_type = [0] * NUM_TYPES
        for kind, count in enumerate(self.played):
            played_by_type[deck.kind_types[kind]] += count
        on_table = [sum(stack[t] for stack in self.captured) for t in range(NUM_TYPES)]
        for pile in self.piles:
            for kind in pile:
                on_table[deck.kind_types[kind]] += 1
        if on_table != played_by_type:
            errors.append(f"piles + captured by type {on_table} != played by type {played_by_type}")
        for index, pile in enumerate(self.piles):
            total = sum(deck.kind_values[kind] for kind in pile)
            if total != self.pile_totals[index] or total > CAPTURE_LIMIT:
                errors.append(f"pile {index} total {self.pile_totals[index]} != its cards' sum {total}, or > 13")
        return errors


def _as_action(action: object, num_actions: int) -> int:
    """Accept numpy integers, reject everything else with a message naming the action space (the range is
    checked by ``play``)."""
    return as_action(
        action,
        num_actions,
        "action must be an int in 0..{last}, got {action!r}",
        error=IllegalActionError,
        arrays=False,
    )


def deal(rules: Rules, round_index: int, rng: np.random.Generator) -> list[list[int]]:
    """Shuffle and deal one card at a time from the round's start player clockwise, dummy last.

    Returns one count list per *seat* (absolute order ``0..n-1``), plus the dummy hand last when
    there are 3 players.
    """
    deck = rules.deck
    cards = np.repeat(np.arange(deck.num_kinds), deck.kind_counts)
    order = rng.permutation(cards)
    num_hands = rules.num_hands
    in_deal_order = [np.bincount(order[i::num_hands], minlength=deck.num_kinds).tolist() for i in range(num_hands)]
    start = round_index % rules.num_players
    n = rules.num_players
    seats = [in_deal_order[(seat - start) % n] for seat in range(n)]
    if rules.has_dummy:
        seats.append(in_deal_order[n])
    return seats


def _start_round(state: GameState, round_index: int, hands: list[list[int]]) -> None:
    rules = state.rules
    state.round = round_index
    state.hands = [hand[:] for hand in hands[: rules.num_players]]
    state.dummy = hands[rules.num_players][:] if rules.has_dummy else None
    state.piles = [[] for _ in range(NUM_PILES)]
    state.pile_totals = [0] * NUM_PILES
    state.captured = [[0] * NUM_TYPES for _ in range(rules.num_players)]
    state.played = [0] * rules.deck.num_kinds
    state.plays_left = sum(sum(hand) for hand in state.hands)
    state.current = round_index % rules.num_players
    state.round_over = False
    state.game_over = False


def new_game(rules: Rules, rng: np.random.Generator) -> GameState:
    """A fresh game with round 0 dealt from ``rng``."""
    return from_hands(rules, deal(rules, 0, rng))


def from_hands(
    rules: Rules,
    hands: Sequence[Sequence[int]],
    *,
    round_index: int = 0,
    current: int | None = None,
    piles: Sequence[Sequence[int]] | None = None,
    captured: Sequence[Sequence[int]] | None = None,
    played: Sequence[int] | None = None,
    scores: Sequence[int] | None = None,
) -> GameState:
    """Build a state from given hands (tests, and search agents that sample the unseen cards).

    ``hands`` holds one count list per seat, plus the dummy hand last with 3 players (it may be
    omitted, then the dummy holds nothing). ``piles`` are lists of card kinds in play order and
    ``captured`` per seat the cards taken this round by type (cat, mirror, ladder, Friday).
    ``played`` (per kind) defaults to the cards in the piles; give it when captured cards matter
    for bookkeeping. Unlike a real deal the counts need not add up to the whole deck, so partial
    positions can be set up; every list is validated.
    """
    deck = rules.deck
    n = rules.num_players
    expected = (n, n + 1) if rules.has_dummy else (n,)
    if len(hands) not in expected:
        raise ValueError(f"expected {' or '.join(map(str, expected))} hands for {n} players, got {len(hands)}")
    for hand in hands:
        _check_counts(hand, deck, "hand")
    state = GameState.__new__(GameState)
    state.rules = rules
    state.scores = [0] * n if scores is None else [int(s) for s in scores]
    if len(state.scores) != n:
        raise ValueError(f"expected {n} scores, got {len(state.scores)}")
    state.last_round_points = None
    padded = [list(hand) for hand in hands]
    if rules.has_dummy and len(padded) == n:
        padded.append([0] * deck.num_kinds)
    if not 0 <= round_index < rules.num_rounds:
        raise ValueError(f"round_index must be in 0..{rules.num_rounds - 1}, got {round_index}")
    _start_round(state, round_index, padded)
    if current is not None:
        if not 0 <= current < n:
            raise ValueError(f"current must be a seat in 0..{n - 1}, got {current}")
        state.current = current
    if piles is not None:
        if len(piles) != NUM_PILES:
            raise ValueError(f"expected {NUM_PILES} piles, got {len(piles)}")
        state.piles = [[int(kind) for kind in pile] for pile in piles]
        for pile_index, pile in enumerate(state.piles):
            for kind in pile:
                if not 0 <= kind < deck.num_kinds:
                    raise ValueError(f"pile {pile_index} holds unknown card kind {kind}")
                if kind != deck.friday_kind and deck.kind_types[kind] != pile_index:
                    raise ValueError(f"{deck.kind_name(kind)} cannot lie on pile {pile_index}")
        state.pile_totals = [sum(deck.kind_values[kind] for kind in pile) for pile in state.piles]
        for pile in state.piles:
            for kind in pile:
                state.played[kind] += 1
        if max(state.pile_totals) > CAPTURE_LIMIT:
            raise ValueError(f"pile totals {state.pile_totals} exceed {CAPTURE_LIMIT}")
    if captured is not None:
        if len(captured) != n:
            raise ValueError(f"expected {n} captured stacks, got {len(captured)}")
        for stack in captured:
            if len(stack) != NUM_TYPES or min(stack) < 0:
                raise ValueError(f"a captured stack needs {NUM_TYPES} non-negative counts by type, got {list(stack)}")
        state.captured = [list(stack) for stack in captured]
    if played is not None:
        _check_counts(played, deck, "played list")
        state.played = list(played)
    if state.plays_left == 0:
        raise ValueError("every hand is empty: there is nothing left to play this round")
    _check_turn_order(state)
    return state


def _check_turn_order(state: GameState) -> None:
    """Hands in turn order must shrink by at most one card from the player to move onwards.

    That is what a real deal produces, and it guarantees that play never reaches an empty hand
    before the round ends.
    """
    n = state.rules.num_players
    sizes = [sum(state.hands[(state.current + offset) % n]) for offset in range(n)]
    in_order = all(a >= b for a, b in itertools.pairwise(sizes))
    if not in_order or sizes[0] - sizes[-1] > 1:
        raise ValueError(
            f"hand sizes {sizes} (in turn order from player_{state.current}) cannot occur in play: "
            "they must not grow and may differ by at most one card"
        )


def _check_counts(counts: Sequence[int], deck: Deck, what: str) -> None:
    if len(counts) != deck.num_kinds:
        raise ValueError(f"a {what} needs {deck.num_kinds} counts (one per card kind), got {len(counts)}")
    if any(count < 0 for count in counts):
        raise ValueError(f"a {what} cannot hold negative counts: {list(counts)}")
