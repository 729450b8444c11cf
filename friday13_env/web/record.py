"""Game records: what a replay file holds, how tools write one while they play, and the checked reader.

A record is the smallest exact account of a game, from which every position is rebuilt by the engine:

* the card game (``"game": "friday13"``): the table (players, deck, rounds), a label per seat, the hands dealt
  at the start of every round (one count list per seat, the dummy hand last at 3 players) and the moves of
  every round in play order. Storing the deals rather than a seed keeps a file independent of how a tool
  shuffled.
* the solo game (``"game": "friday"``): the level, the seed of the game's generator (``np.random.default_rng``,
  which is what ``FridayEnv.reset(seed=...)`` builds too) and the moves. The engine draws from that generator as
  the game goes, so the seed and the moves fix the whole game.

Reading a file trusts nothing: a size cap before the read, every field checked for its type and range, a
deal checked to be a real deal of the deck, and every move replayed through the engine (an illegal move is
an error naming the round and the move). The reader never imports or executes anything a file names.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from friday13_env.core.checks import has_control_character, printable
from friday13_env.core.files import atomic_write_text, read_capped
from friday13_env.core.specs import shown
from friday13_env.friday import engine as solo_engine
from friday13_env.friday.levels import LEVELS
from friday13_env.friday.state import State
from friday13_env.friday13 import engine as card_engine
from friday13_env.friday13.cards import DECKS, get_deck
from friday13_env.friday13.engine import MAX_PLAYERS, MAX_ROUNDS, MIN_PLAYERS, GameState, Rules

FORMAT = "friday13-env replay"
CARD_FIELDS = ("players", "deck", "rounds", "seats", "deals", "moves")
SOLO_FIELDS = ("level", "seed", "player", "moves")
"""A replay's fields beside its format, version, game and source: a file with any other is refused, as a result
file is (a field this version does not read would be kept by no one and shown by nothing)."""
FORMAT_VERSION = 1
MAX_REPLAY_BYTES = 2_000_000
"""A replay of the longest game is a few tens of kilobytes; anything over this is refused unread."""
MAX_LABEL = 80
"""Seat labels and source values longer than this are refused (they are shown on a page)."""
LABEL = f"a text of at most {MAX_LABEL} characters (valid Unicode, no control character)"
"""What a label (a seat, the solo player, a source key or value) must be, as the errors say."""
MAX_SOLO_MOVES = 5_000
"""No solo game needs more decisions than this (a long one takes a few hundred)."""
MAX_SEED = 2**64 - 1
GAMES = ("friday13", "friday")


class ReplayError(ValueError):
    """A replay file or record that cannot be read or replayed, with the reason."""


@dataclass
class CardRecord:
    """One game of Friday the 13th: the table, who sat where, every deal and every move."""

    players: int
    deck: str
    rounds: int
    seats: list[str]
    deals: list[list[list[int]]] = field(default_factory=list)
    """Per round played: one count list per seat (the dummy hand last at 3 players), as ``engine.deal`` gives."""
    moves: list[list[int]] = field(default_factory=list)
    """Per round played: the actions in play order."""
    source: dict[str, str] = field(default_factory=dict)
    """Where the game comes from (the command, the deal seed, ...): shown, never interpreted."""

    game = "friday13"

    def __post_init__(self) -> None:
        check_labels(self)

    @property
    def rules(self) -> Rules:
        return Rules(num_players=self.players, deck=get_deck(self.deck), num_rounds=self.rounds)

    def start_round(self, state: GameState) -> None:
        """Note the hands of the round ``state`` has just dealt."""
        dummy = [] if state.dummy is None else [state.dummy[:]]
        self.deals.append([hand[:] for hand in state.hands] + dummy)
        self.moves.append([])

    def move(self, action: int) -> None:
        """Note a move of the round in play."""
        self.moves[-1].append(int(action))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "game": self.game,
            "players": self.players,
            "deck": self.deck,
            "rounds": self.rounds,
            "seats": list(self.seats),
            "deals": [[hand[:] for hand in deal] for deal in self.deals],
            "moves": [moves[:] for moves in self.moves],
            "source": dict(self.source),
        }


@dataclass
class SoloRecord:
    """One game of Friday (solo): the level, the generator's seed, who played and every move."""

    level: int
    seed: int
    player: str
    moves: list[int] = field(default_factory=list)
    source: dict[str, str] = field(default_factory=dict)

    game = "friday"

    def __post_init__(self) -> None:
        check_labels(self)

    def move(self, action: int) -> None:
        self.moves.append(int(action))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "game": self.game,
            "level": self.level,
            "seed": self.seed,
            "player": self.player,
            "moves": list(self.moves),
            "source": dict(self.source),
        }


Record = CardRecord | SoloRecord


def new_card_record(rules: Rules, seats: Sequence[str], source: Mapping[str, object] | None = None) -> CardRecord:
    """An empty record of a game at ``rules`` with these seat labels (labels longer than ``MAX_LABEL`` are cut; a
    label that is not valid Unicode text or holds a control character, which no replay can hold, is a
    ``ValueError``)."""
    for text in [*map(str, seats), *(str(item) for pair in (source or {}).items() for item in pair)]:
        if not _label(text[:MAX_LABEL]):
            kind = "hold no control character" if has_control_character(text) else "be valid Unicode text"
            raise ValueError(f"a replay's labels must {kind}, got {text[:MAX_LABEL]!r}")
    return CardRecord(
        rules.num_players,
        rules.deck.name,
        rules.num_rounds,
        [str(seat)[:MAX_LABEL] for seat in seats],
        source={str(k)[:MAX_LABEL]: str(v)[:MAX_LABEL] for k, v in (source or {}).items()},
    )


def check_labels(record: Record) -> None:
    """A ``ValueError`` naming the field when one of ``record``'s labels (seats, player, source) is one that
    :func:`load` would refuse (longer than ``MAX_LABEL``, not valid Unicode text, or holding a control character):
    checked when a record is built and again when it is saved, so that no file is written that cannot be read
    back."""
    labels = ("seats", record.seats) if isinstance(record, CardRecord) else ("player", [record.player])
    for name, texts in (labels, ("source", [item for pair in record.source.items() for item in pair])):
        bad = next((text for text in texts if not _label(text)), None)
        if bad is not None:
            raise ValueError(f"a replay's {name!r}: a label is {LABEL}, got {shown(bad)}")


def save(record: Record, path: str | Path) -> Path:
    """Write ``record`` to ``path`` as JSON (atomically); returns the path. A label :func:`load` would refuse is a
    ``ValueError`` (:func:`check_labels`), and nothing is written."""
    check_labels(record)
    path = Path(path)
    atomic_write_text(path, json.dumps(record.to_dict(), separators=(",", ":")) + "\n")
    return path


def load(path: str | Path) -> Record:
    """The record in a replay file, checked and replayed (see the module doc); a ``ReplayError`` says what is wrong.

    Only a regular file is opened (not a device, a pipe or a folder), and no more than ``MAX_REPLAY_BYTES`` of it is
    read."""
    path = Path(path)
    raw = read_capped(path, MAX_REPLAY_BYTES, "replay", ReplayError)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:  # ValueError: a JSONDecodeError, or a number
        # of more digits than Python reads
        raise ReplayError(f"replay {printable(str(path))} is not JSON: {error}") from None
    try:
        return from_dict(data)
    except ReplayError as error:
        raise ReplayError(f"replay {printable(str(path))}: {error}") from None


def _label(value: object) -> TypeGuard[str]:
    """Whether ``value`` is a label a replay may hold: a text of at most ``MAX_LABEL`` characters that is valid
    Unicode (JSON's escapes can write a lone surrogate, which no page or file can hold) and holds no control
    character (``friday13 replay`` prints the seat labels: an escape sequence in a file would drive the terminal)."""
    if not isinstance(value, str) or len(value) > MAX_LABEL or has_control_character(value):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def from_dict(data: object) -> Record:
    """A record from its JSON form, checked field by field and replayed through the engine."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReplayError(f"not a replay (its 'format' is not {FORMAT!r})")
    if type(data.get("format_version")) is not int or data.get("format_version") != FORMAT_VERSION:
        raise ReplayError(f"format version {shown(data.get('format_version'))}; this package reads {FORMAT_VERSION}")
    game = data.get("game")
    if game not in GAMES:
        raise ReplayError(f"'game' must be one of {list(GAMES)}, got {shown(game)}")
    fields = {"format", "format_version", "game", "source", *(CARD_FIELDS if game == "friday13" else SOLO_FIELDS)}
    if extra := sorted(str(key) for key in set(data) - fields):
        kind = "card-game" if game == "friday13" else "solo"
        raise ReplayError(f"it holds fields a {kind} replay does not: {shown(extra)}")
    source = data.get("source", {})
    if not isinstance(source, dict) or not all(_label(k) and _label(v) for k, v in source.items()):
        raise ReplayError(f"'source' must map labels to labels, each {LABEL}")
    record: Record = _card_record(data, source) if game == "friday13" else _solo_record(data, source)
    replay(record)
    return record


def _card_record(data: dict[str, Any], source: dict[str, str]) -> CardRecord:
    players = _integer(data, "players", MIN_PLAYERS, MAX_PLAYERS)
    deck = data.get("deck")
    if not isinstance(deck, str) or deck not in DECKS:
        raise ReplayError(f"'deck' must be one of {sorted(DECKS)}, got {shown(deck)}")
    rounds = _integer(data, "rounds", 1, MAX_ROUNDS)
    seats = data.get("seats")
    if not isinstance(seats, list) or len(seats) != players or not all(_label(seat) for seat in seats):
        raise ReplayError(f"'seats' must list {players} labels, each {LABEL}")
    deals, moves = data.get("deals"), data.get("moves")
    if not isinstance(deals, list) or not isinstance(moves, list) or len(deals) != len(moves):
        raise ReplayError("'deals' and 'moves' must be lists with one entry per round played")
    if not 1 <= len(deals) <= rounds:
        raise ReplayError(f"a replay holds 1..{rounds} rounds (its 'rounds'), got {len(deals)}")
    return CardRecord(players, deck, rounds, list(seats), deals, moves, dict(source))


def _solo_record(data: dict[str, Any], source: dict[str, str]) -> SoloRecord:
    level = data.get("level")
    if isinstance(level, bool) or not isinstance(level, int) or level not in LEVELS:
        raise ReplayError(f"'level' must be one of {list(LEVELS)}, got {shown(level)}")
    seed = _integer(data, "seed", 0, MAX_SEED)
    player = data.get("player")
    if not _label(player):
        raise ReplayError(f"'player' must be {LABEL}")
    moves = data.get("moves")
    if not isinstance(moves, list) or len(moves) > MAX_SOLO_MOVES:
        raise ReplayError(f"'moves' must be a list of at most {MAX_SOLO_MOVES} actions")
    return SoloRecord(level, seed, player, moves, dict(source))


def _integer(data: dict[str, Any], key: str, low: int, high: int) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ReplayError(f"{key!r} must be an integer in {low}..{high}, got {shown(value)}")
    return value


# -- replaying ---------------------------------------------------------------------------------------------
@dataclass
class CardStep:
    """One move of a card game as the engine played it: the position before it, and what happened."""

    before: GameState
    action: int
    taken: int
    after: GameState


def card_positions(record: CardRecord) -> tuple[list[GameState], list[CardStep]]:
    """The position at the start of every round and every move, rebuilt by the engine from ``record``.

    A ``ReplayError`` names the first deal or move the rules refuse.
    """
    rules = record.rules
    starts: list[GameState] = []
    steps: list[CardStep] = []
    scores = [0] * rules.num_players
    for index, (hands, moves) in enumerate(zip(record.deals, record.moves, strict=True)):
        _check_deal(rules, index, hands)
        if not isinstance(moves, list) or not all(type(move) is int for move in moves):
            raise ReplayError(f"round {index + 1}: moves must be a list of integers")
        state = card_engine.dealt_state(rules, [list(hand) for hand in hands], round_index=index, scores=scores)
        starts.append(state.copy())
        if len(moves) > state.plays_left:
            raise ReplayError(f"round {index + 1}: {len(moves)} moves, but only {state.plays_left} cards are dealt")
        for number, action in enumerate(moves, start=1):
            before = state.copy()
            try:
                taken = card_engine.play(state, action)
            except card_engine.IllegalActionError as error:
                raise ReplayError(f"round {index + 1}, move {number}: {error}") from None
            steps.append(CardStep(before, action, taken, state.copy()))
        if index + 1 < len(record.deals) and not state.round_over:
            raise ReplayError(f"round {index + 1} ends after {len(moves)} moves, before every card was played")
        scores = list(state.scores)
    return starts, steps


def _check_deal(rules: Rules, index: int, hands: object) -> None:
    """``hands`` is a deal of ``rules``' deck: one count list per hand, every card dealt once, each seat's hand of
    its size in this round's deal."""
    deck = rules.deck
    if (
        not isinstance(hands, list)
        or len(hands) != rules.num_hands
        or not all(
            isinstance(hand, list)
            and len(hand) == deck.num_kinds
            and all(type(count) is int and count >= 0 for count in hand)
            for hand in hands
        )
    ):
        raise ReplayError(
            f"round {index + 1}: a deal is {rules.num_hands} lists of {deck.num_kinds} non-negative counts"
        )
    totals = [sum(column) for column in zip(*hands, strict=True)]
    if totals != list(deck.kind_counts) or [sum(hand) for hand in hands] != _hand_sizes(rules, index):
        raise ReplayError(f"round {index + 1}: the hands are not a deal of the {deck.name} deck")


def _hand_sizes(rules: Rules, round_index: int) -> list[int]:
    """Each seat's hand size in round ``round_index``'s deal (the dummy's last): the round's start player and the
    seats after it get the extra cards."""
    in_deal_order, players = card_engine.deal_sizes(rules), rules.num_players
    start = round_index % players
    sizes = [in_deal_order[(seat - start) % players] for seat in range(players)]
    return sizes + ([_dummy_size(rules)] if rules.has_dummy else [])


def _dummy_size(rules: Rules) -> int:
    return rules.deck.size - sum(card_engine.deal_sizes(rules))


def solo_positions(record: SoloRecord) -> list[tuple[State, int | None]]:
    """Every decision of a solo game as ``(state before, action)``, and the final state with ``None``."""
    rng = np.random.default_rng(record.seed)
    state = solo_engine.new_game(record.level, rng)
    positions: list[tuple[State, int | None]] = []
    for number, action in enumerate(record.moves, start=1):
        if type(action) is not int:
            raise ReplayError(f"move {number}: {shown(action)} is not an action (an integer)")
        legal = solo_engine.legal_actions(state)
        if action not in legal:
            raise ReplayError(f"move {number}: action {action} is not legal here; legal: {legal}")
        positions.append((state.copy(), action))
        solo_engine.apply_action(state, action, rng)
    positions.append((state, None))
    return positions


def replay(record: Record) -> None:
    """Replay ``record`` through the engine; a ``ReplayError`` names the first thing the rules refuse."""
    if isinstance(record, CardRecord):
        card_positions(record)
    else:
        solo_positions(record)
