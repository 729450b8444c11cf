"""The rules of Friday the 13th as a small, fast, RL-agnostic state machine.

This module knows nothing about PettingZoo or Gymnasium (like ``board.py`` in PettingZoo's
tictactoe): it deals, validates and applies plays, captures piles and scores rounds exactly as the
rulebook and ``CONVENTIONS.md`` say. Environments, agents and benchmarks are thin layers on top.

The rules are free functions over a ``GameState`` that holds only data (``legal_actions(state)``,
``play(state, action)``, ``next_round(state, rng)``), the solo game's engine idiom; a move keeps the game's own
word, ``play``, rather than the solo ``apply_action``, because playing a card never draws (only ``next_round``
deals), so it takes no rng. Hand-made positions are built by :mod:`friday13_env.friday13.scenario`.

Usage::

    rng = np.random.default_rng(seed)
    state = new_game(Rules(num_players=4), rng)
    while True:
        play(state, some_action_in(legal_actions(state)))
        if state.round_over:
            if state.game_over:
                break
            next_round(state, rng)
    winners(state.scores)

Representation, chosen for speed and cheap copies (search agents clone states thousands of times
per move): hands are plain ``list[int]`` counts per card kind, captured stacks counts per type,
piles short lists of card kinds in play order, and every field is a builtin. ``GameState.copy`` is therefore a
handful of list copies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from friday13_env.core.agent import IllegalMoveError
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
    as_deck,
)

MIN_PLAYERS = 3
MAX_PLAYERS = 6
MAX_ROUNDS = 100
"""Most rounds a game may have (4 by default): every environment and batch takes ``num_rounds`` through ``Rules``,
so a typo such as ``10**9`` (a game no one would finish) is refused everywhere."""
DUMMY_PLAYER_COUNT = 3
"""With exactly this many players a fourth, dummy hand is dealt and never played."""


class IllegalActionError(IllegalMoveError):
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
        object.__setattr__(self, "deck", as_deck(self.deck))
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
    if isinstance(counts, str | bytes | bytearray | memoryview) or not isinstance(counts, Sequence) or not counts:
        raise ValueError(f"num_players must be one of {allowed} or a non-empty list of them, got {num_players!r}")
    for count in counts:
        if isinstance(count, bool) or not isinstance(count, int | np.integer) or count not in allowed:
            raise ValueError(f"num_players must be one of {allowed} or a list of them, got {num_players!r}")
    if len(set(counts)) < len(counts):
        raise ValueError(
            f"num_players lists a table size more than once: {list(counts)!r}; list each size once (a table size "
            "is drawn uniformly from the sizes listed)"
        )
    return tuple(sorted(int(count) for count in counts))


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


def winning_seats(totals: np.ndarray, num_players: np.ndarray) -> np.ndarray:
    """``winners`` for many tables at once: ``(g, seats)`` bools marking the seats tied for the lowest of ``totals``
    among each table's first ``num_players`` seats (the seats past them, padding, never win)."""
    present = np.arange(totals.shape[1]) < np.asarray(num_players)[:, None]
    totals = np.where(present, totals, np.iinfo(np.int64).max)
    return present & (totals == totals.min(axis=1, keepdims=True))


@dataclass(slots=True, eq=False)
class GameState:
    """The complete state of a game in progress: data only, mutable, with a cheap ``copy``.

    Seats are absolute here (``0..n-1``, clockwise = increasing index); player-relative views are
    the encoder's job. Captured stacks are kept *by type* (cat, mirror, ladder, Friday), which is
    all that scoring needs, and ``played`` counts every card kind played this round, which is all
    that a player with perfect memory knows beyond their own hand. Compared by identity (``eq=False``): a game in
    progress is one object, changed in place by the rules.
    """

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


def start_player(state: GameState) -> int:
    """Round ``r`` is started by ``player_{r mod n}``: the start rotates clockwise."""
    return state.round % state.rules.num_players


# -- legal moves -----------------------------------------------------------------------------
def legal_actions(state: GameState) -> list[int]:
    """The playable actions of the player to move, ascending; empty once the round is over."""
    if state.round_over:
        return []
    hand = state.hands[state.current]
    friday = state.rules.deck.friday_kind
    actions = [kind for kind in range(friday) if hand[kind]]
    if hand[friday]:
        actions.extend((friday, friday + 1, friday + 2))
    return actions


def is_legal(state: GameState, action: int) -> bool:
    """Whether ``play(state, action)`` would play a card: ``False`` for whatever ``play`` refuses, so out of range,
    floats (``15.0`` is not the Friday action), bools and anything but a Python or numpy integer."""
    if action.__class__ is not int and (isinstance(action, bool) or not isinstance(action, int | np.integer)):
        return False
    if state.round_over or not 0 <= action < state.rules.deck.num_actions:
        return False
    friday = state.rules.deck.friday_kind
    return state.hands[state.current][action if action < friday else friday] > 0


def action_mask(state: GameState) -> list[int]:
    """``legal_actions`` as a 0/1 list over the whole action space."""
    if state.round_over:
        return [0] * state.rules.deck.num_actions
    hand = state.hands[state.current]
    friday = state.rules.deck.friday_kind
    mask = [1 if count else 0 for count in hand]
    mask.append(mask[friday])
    mask.append(mask[friday])
    return mask


# -- playing ---------------------------------------------------------------------------------
def play(state: GameState, action: int) -> int:
    """Play ``action`` for the player to move and return how many cards they captured.

    When the last card of the round is played the round is scored at once
    (``last_round_points``, ``scores``) and ``round_over`` is set; call ``next_round`` to deal
    the next one. Raises ``IllegalActionError`` for a card the player does not hold.
    """
    if state.round_over:
        if state.game_over:
            raise GameOverError("the game is over: no more cards can be played")
        raise IllegalActionError("the round is over: call next_round() before playing")
    deck = state.rules.deck
    friday = deck.friday_kind
    player = state.current
    hand = state.hands[player]
    if action.__class__ is not int:
        action = _as_action(action, deck.num_actions)
    if action < friday:
        if action < 0 or not hand[action]:
            raise illegal_action_error(state, action)
        kind = action
        pile_index = action // deck.num_values
    else:
        if action > friday + 2 or not hand[friday]:
            raise illegal_action_error(state, action)
        kind = friday
        pile_index = action - friday
    hand[kind] -= 1
    state.played[kind] += 1
    value = deck.kind_values[kind]
    total = state.pile_totals[pile_index] + value
    taken = 0
    if total > CAPTURE_LIMIT:
        pile = state.piles[pile_index]
        stack = state.captured[player]
        kind_types = deck.kind_types
        for card in pile:
            stack[kind_types[card]] += 1
        taken = len(pile)
        state.piles[pile_index] = [kind]
        state.pile_totals[pile_index] = value
    else:
        state.piles[pile_index].append(kind)
        state.pile_totals[pile_index] = total
    state.plays_left -= 1
    if state.plays_left:
        state.current = player + 1 if player + 1 < state.rules.num_players else 0
    else:
        _end_round(state)
    return taken


def illegal_action_error(state: GameState, action: int) -> IllegalActionError:
    """The error ``play(state, action)`` raises for an action it refuses: what is wrong, and the legal actions."""
    deck = state.rules.deck
    if not 0 <= action < deck.num_actions:
        return IllegalActionError(
            f"action {action} is out of range: actions are 0..{deck.num_actions - 1} "
            f"(legal now: {legal_actions(state)})"
        )
    names = ", ".join(f"{a} ({deck.action_name(a)})" for a in legal_actions(state))
    return IllegalActionError(
        f"illegal action {action} ({deck.action_name(action)}): player_{state.current} holds no such card; "
        f"legal actions: [{names}]"
    )


def _end_round(state: GameState) -> None:
    points = round_points(state.captured)
    state.last_round_points = points
    state.scores = [score + gained for score, gained in zip(state.scores, points, strict=True)]
    state.round_over = True
    state.game_over = state.round + 1 >= state.rules.num_rounds


def next_round(state: GameState, rng: np.random.Generator) -> None:
    """Reshuffle the whole deck and deal the next round (call after ``round_over``)."""
    if not state.round_over:
        raise RuntimeError("next_round() called while the round is still being played")
    if state.game_over:
        raise GameOverError(f"the game ended after round {state.round + 1} of {state.rules.num_rounds}")
    _start_round(state, state.round + 1, deal(state.rules, state.round + 1, rng))


# -- bookkeeping checks ----------------------------------------------------------------------
def cards_accounted(state: GameState) -> list[int]:
    """Every card of the deck counted once per kind: in a hand, the dummy, or played.

    Equals ``rules.deck.kind_counts`` in every reachable state; ``accounting_errors`` also
    checks that the played cards are exactly those in the piles and the captured stacks.
    """
    stacks = [*state.hands, state.played] + ([state.dummy] if state.dummy is not None else [])
    return [sum(column) for column in zip(*stacks, strict=True)]


def accounting_errors(state: GameState) -> list[str]:
    """Every broken bookkeeping invariant, in words; an empty list for a consistent state."""
    deck = state.rules.deck
    errors = []
    if cards_accounted(state) != list(deck.kind_counts):
        errors.append(f"cards per kind {cards_accounted(state)} != deck {list(deck.kind_counts)}")
    played_by_type = [0] * NUM_TYPES
    for kind, count in enumerate(state.played):
        played_by_type[deck.kind_types[kind]] += count
    on_table = [sum(stack[t] for stack in state.captured) for t in range(NUM_TYPES)]
    for pile in state.piles:
        for kind in pile:
            on_table[deck.kind_types[kind]] += 1
    if on_table != played_by_type:
        errors.append(f"piles + captured by type {on_table} != played by type {played_by_type}")
    return errors + pile_total_errors(state)


def pile_total_errors(state: GameState) -> list[str]:
    """Every pile whose total is not its cards' sum, or is over 13, in words (part of ``accounting_errors``; the
    batched engine checks a loaded partial position with it, where the cards need not all be accounted for)."""
    values = state.rules.deck.kind_values
    errors = []
    for index, pile in enumerate(state.piles):
        total = sum(values[kind] for kind in pile)
        if total != state.pile_totals[index] or total > CAPTURE_LIMIT:
            errors.append(f"pile {index} total {state.pile_totals[index]} != its cards' sum {total}, or > 13")
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
    """Set ``state`` to the start of round ``round_index`` with ``hands`` dealt (scores and rules untouched)."""
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
    return dealt_state(rules, deal(rules, 0, rng))


def dealt_state(
    rules: Rules, hands: list[list[int]], *, round_index: int = 0, scores: Sequence[int] | None = None
) -> GameState:
    """The state at the start of round ``round_index`` with ``hands`` just dealt, before anyone plays.

    ``hands`` holds one count list per seat, plus the dummy hand last with 3 players; ``scores`` are the totals
    carried in (zero by default). Nothing is validated: ``new_game`` passes a real deal, and
    ``scenario.from_hands`` checks its inputs first.
    """
    state = GameState.__new__(GameState)
    state.rules = rules
    state.scores = [0] * rules.num_players if scores is None else list(scores)
    state.last_round_points = None
    _start_round(state, round_index, hands)
    return state
