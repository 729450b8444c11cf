"""Games in progress on the server: one person against the bots, and the bounded store that keeps them.

A session holds one game: the engine's state, the seeded generator that deals or draws, the bots, the record
(so a finished game is a replay file) and the frames shown so far. Everything a request may change goes
through :meth:`Session.move`, under the session's own lock; sessions share nothing mutable (the networks'
weights are read-only), so one person's game cannot see or touch another's.

The store bounds what the server holds: at most ``max_sessions`` games, each dropped after ``idle_seconds``
without a request, and a game's frames are bounded by its length (the page offers at most ``MAX_WEB_ROUNDS``
rounds). A bot that raises, or plays an illegal move, ends its game with a message; the server goes on.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from friday13_env.core.agent import Agent
from friday13_env.core.seeds import derived_seed
from friday13_env.friday import engine as solo_engine
from friday13_env.friday.agents import REGISTRY as SOLO_REGISTRY
from friday13_env.friday.encoding import encode as encode_solo
from friday13_env.friday.levels import LEVELS
from friday13_env.friday13 import engine as card_engine
from friday13_env.friday13.agents import REGISTRY as CARD_REGISTRY
from friday13_env.friday13.agents.seating import deck_of_agent, make_seated
from friday13_env.friday13.cards import DECKS, get_deck
from friday13_env.friday13.encoding import mover_observation
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS, Rules
from friday13_env.web import hints, views
from friday13_env.web.record import CardRecord, CardStep, SoloRecord, new_card_record
from friday13_env.web.views import YOU

MAX_WEB_ROUNDS = 8
"""Most rounds a game on the page may have (4 by default), which bounds a session's frames."""
MAX_SEED = 2**63 - 1


class RequestError(ValueError):
    """A request the server refuses: ``status`` is the HTTP status, ``detail`` extra JSON (the legal moves)."""

    def __init__(self, message: str, status: int = 422, **detail: Any) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail


def card_agent_names() -> dict[str, list[str]]:
    """The agents a person may seat at each deck's table: every registered and zoo name that plays that deck
    (a network trained on the standard deck, and ``endgame`` built on one, cannot sit at a German table)."""
    names: dict[str, list[str]] = {deck: [] for deck in DECKS}
    for name in CARD_REGISTRY.names():
        deck = deck_of_agent(CARD_REGISTRY.make(name, seed=0))
        for table in [deck.name] if deck is not None else list(DECKS):
            names[table].append(name)
    return names


@dataclass
class Options:
    """What a page may ask for, sent once to the page (``/api/options``): every name it may send back."""

    card_agents: dict[str, list[str]]
    default_opponent: dict[str, str] = field(default_factory=lambda: dict(hints.CARD_ADVISERS))

    def to_dict(self) -> dict[str, Any]:
        return {
            "friday13": {
                "players": list(range(MIN_PLAYERS, MAX_PLAYERS + 1)),
                "decks": sorted(DECKS),
                "rounds": list(range(1, MAX_WEB_ROUNDS + 1)),
                "agents": self.card_agents,
                "default_opponent": self.default_opponent,
                "advisers": hints.CARD_ADVISERS,
            },
            "friday": {"levels": list(LEVELS), "adviser": hints.SOLO_ADVISER},
        }


def _integer(body: Mapping[str, Any], key: str, allowed: Sequence[int], default: int | None) -> int:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
        shown = f"{allowed[0]}..{allowed[-1]}" if len(allowed) > 8 else str(list(allowed))
        raise RequestError(f"{key} must be one of {shown}, got {value!r}")
    return value


def _seed(body: Mapping[str, Any]) -> int:
    seed = body.get("seed")
    if seed is None:
        return secrets.randbits(63)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise RequestError(f"seed must be an integer in 0..{MAX_SEED} or left out, got {seed!r}")
    return seed


def _check_keys(body: Mapping[str, Any], allowed: Sequence[str]) -> None:
    unknown = sorted(str(key) for key in body if key not in allowed)
    if unknown:
        raise RequestError(f"unknown field(s) {unknown}; allowed: {sorted(allowed)}")


class Session:
    """One game in progress; subclasses are the two games."""

    game: str

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.turn = asyncio.Lock()
        """Held by the request working on the game (one at a time); the others wait for it in the event loop."""
        self.waiting = 0
        """The requests for the game that hold or wait for ``turn`` (the server bounds them)."""
        self.frames: list[dict[str, Any]] = []
        self.error: str | None = None
        self.last_used = time.monotonic()
        self._hint: tuple[int, dict[str, Any]] | None = None

    @property
    def over(self) -> bool:
        raise NotImplementedError

    @property
    def your_turn(self) -> bool:
        raise NotImplementedError

    def table(self) -> dict[str, Any]:
        raise NotImplementedError

    def view(self, frame: dict[str, Any]) -> dict[str, Any]:
        """A frame as the person may see it."""
        return frame

    def legal(self) -> list[int]:
        raise NotImplementedError

    def _play(self, action: int) -> None:
        raise NotImplementedError

    def record(self) -> CardRecord | SoloRecord:
        raise NotImplementedError

    def move(self, action: object) -> None:
        """Play the person's ``action`` and let the bots answer; a ``RequestError`` for a move that is not allowed.

        Should anything fail past the checks (a bug, never bad input), the game ends with the reason: a half-made
        move is never played on.
        """
        if self.over:
            raise RequestError("the game is over; start a new one", 409, legal=[])
        legal = self.legal()
        if isinstance(action, bool) or not isinstance(action, int) or action not in legal:
            raise RequestError(f"{action!r} is not a legal move here; legal moves: {legal}", 409, legal=legal)
        try:
            self._play(action)
        except Exception as error:
            self.error = f"the game ended: the server failed to play the move ({_short(error)})"

    def hint(self) -> dict[str, Any]:
        """The adviser's hint for the position (computed once per position: asking again costs nothing)."""
        if not self.your_turn:
            raise RequestError("a hint is given when it is your turn", 409)
        key = len(self.frames)
        if self._hint is None or self._hint[0] != key:
            self._hint = (key, self._advise())
        return self._hint[1]

    def _advise(self) -> dict[str, Any]:
        raise NotImplementedError

    def check_since(self, since: object) -> int:
        """``since`` if it counts frames this game has (0..the number of frames), else a ``RequestError``."""
        if isinstance(since, bool) or not isinstance(since, int) or not 0 <= since <= len(self.frames):
            raise RequestError(f"since must be an integer in 0..{len(self.frames)}, got {since!r}")
        return since

    def state(self, since: int = 0) -> dict[str, Any]:
        """The response to the page: the frames from ``since`` on (as the person sees them) and the status."""
        self.check_since(since)
        return {
            "game": self.game,
            "table": self.table(),
            "since": since,
            "count": len(self.frames),
            "frames": [self.view(frame) for frame in self.frames[since:]],
            "status": {"over": self.over, "error": self.error, "your_turn": self.your_turn},
        }


class CardSession(Session):
    """Friday the 13th: the person in seat ``you``, a bot in every other seat."""

    game = "friday13"

    def __init__(self, rules: Rules, you: int, opponents: dict[int, str], seed: int) -> None:
        super().__init__(seed)
        self.rules = rules
        self.you = you
        self.bots: dict[int, Agent] = {
            seat: make_seated(name, derived_seed(seed, 1, seat), rules.deck) for seat, name in opponents.items()
        }
        labels = [YOU if seat == you else f"{opponents[seat]} ({seat + 1})" for seat in range(rules.num_players)]
        self.rng = np.random.default_rng(derived_seed(seed, 0))
        self.state_ = card_engine.new_game(rules, self.rng)
        self.recorded = new_card_record(rules, labels, {"seed": str(seed), "made by": "friday13 serve"})
        self.recorded.start_round(self.state_)
        self.frames.append(views.card_frame(self.state_))
        self._bots_play()

    @classmethod
    def from_request(cls, body: Mapping[str, Any], names: Mapping[str, list[str]]) -> CardSession:
        """A new game from the page's request, every field checked (names against ``names``)."""
        _check_keys(body, ("game", "players", "deck", "rounds", "seat", "opponents", "seed"))
        players = _integer(body, "players", range(MIN_PLAYERS, MAX_PLAYERS + 1), 4)
        deck = body.get("deck", "standard")
        if not isinstance(deck, str) or deck not in DECKS:
            raise RequestError(f"deck must be one of {sorted(DECKS)}, got {deck!r}")
        rounds = _integer(body, "rounds", range(1, MAX_WEB_ROUNDS + 1), 4)
        you = _integer(body, "seat", range(players), 0)
        wanted = body.get("opponents", [hints.CARD_ADVISERS[deck]])
        allowed = names[deck]
        if (
            not isinstance(wanted, list)
            or len(wanted) not in (1, players - 1)
            or not all(isinstance(name, str) and name in allowed for name in wanted)
        ):
            raise RequestError(
                f"opponents must list 1 or {players - 1} agent names for the {deck} deck, from {allowed}",
                allowed=allowed,
            )
        others = [(you + offset) % players for offset in range(1, players)]
        chosen = wanted * (players - 1) if len(wanted) == 1 else wanted
        rules = Rules(num_players=players, deck=get_deck(deck), num_rounds=rounds)
        return cls(rules, you, dict(zip(others, chosen, strict=True)), _seed(body))

    @property
    def labels(self) -> list[str]:
        """Each seat's label: ``you``, or the bot's name and seat number."""
        return self.recorded.seats

    @property
    def over(self) -> bool:
        return self.error is not None or self.state_.game_over

    @property
    def your_turn(self) -> bool:
        return not self.over and self.state_.current == self.you

    def table(self) -> dict[str, Any]:
        return views.card_table(self.rules, self.labels, self.you)

    def view(self, frame: dict[str, Any]) -> dict[str, Any]:
        return views.seat_view(frame, self.you)

    def legal(self) -> list[int]:
        return card_engine.legal_actions(self.state_) if self.your_turn else []

    def _play(self, action: int) -> None:
        self._apply(action)
        self._bots_play()

    def _apply(self, action: int) -> None:
        state = self.state_
        before = state.copy()
        taken = card_engine.play(state, action)
        self.recorded.move(action)
        self.frames.append(views.move_frame(CardStep(before, action, taken, state), self.labels))
        if state.round_over and not state.game_over:
            card_engine.next_round(state, self.rng)
            self.recorded.start_round(state)
            self.frames.append(views.card_frame(state))

    def _bots_play(self) -> None:
        state = self.state_
        while not self.over and state.current != self.you:
            bot = self.bots[state.current]
            try:
                action = bot.act(mover_observation(state))
                if not card_engine.is_legal(state, action):
                    raise ValueError(f"it played {action!r}, not a legal move ({card_engine.legal_actions(state)})")
            except Exception as error:  # a bot's failure ends its game, never the server
                self.error = f"{self.labels[state.current]} failed and the game ended: {_short(error)}"
                return
            self._apply(int(action))

    def _advise(self) -> dict[str, Any]:
        deck = self.rules.deck
        adviser = hints.CARD_ADVISERS[deck.name]
        hint = hints.advise(
            lambda name, seed: make_seated(name, seed, deck),
            adviser,
            mover_observation(self.state_),  # the person's: a hint is given on their turn
            derived_seed(self.seed, 2, len(self.frames)),
        )
        return hint.to_dict(deck.action_name)

    def record(self) -> CardRecord:
        return self.recorded


class SoloSession(Session):
    """Friday (solo) at one level."""

    game = "friday"

    def __init__(self, level: int, seed: int) -> None:
        super().__init__(seed)
        self.level = level
        self.rng = np.random.default_rng(seed)
        self.state_ = solo_engine.new_game(level, self.rng)
        self.recorded = SoloRecord(level, seed, YOU, source={"made by": "friday13 serve"})
        self.frames.append(views.solo_frame(self.state_))

    @classmethod
    def from_request(cls, body: Mapping[str, Any]) -> SoloSession:
        _check_keys(body, ("game", "level", "seed"))
        return cls(_integer(body, "level", list(LEVELS), 1), _seed(body))

    @property
    def over(self) -> bool:
        return self.error is not None or self.state_.done

    @property
    def your_turn(self) -> bool:
        return not self.over

    def table(self) -> dict[str, Any]:
        return views.solo_table(self.level, YOU)

    def legal(self) -> list[int]:
        return solo_engine.legal_actions(self.state_) if not self.over else []

    def _play(self, action: int) -> None:
        move = views.solo_move(self.state_, action)  # named before it is played
        solo_engine.apply_action(self.state_, action, self.rng)
        self.recorded.move(action)
        self.frames.append(views.solo_frame(self.state_, move))

    def _advise(self) -> dict[str, Any]:
        state = self.state_
        observation = {"observation": encode_solo(state), "action_mask": solo_engine.action_mask(state)}
        hint = hints.advise(
            SOLO_REGISTRY.make, hints.SOLO_ADVISER, observation, derived_seed(self.seed, 2, len(self.frames))
        )
        return hint.to_dict(lambda action: views.solo_label(state, action))  # named as its button is

    def record(self) -> SoloRecord:
        return self.recorded


def _short(error: Exception) -> str:
    """An exception as one short line for the page."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:200]}{'...' if len(text) > 200 else ''}"


class StoreFull(RequestError):
    pass


class SessionStore:
    """The games in progress, by unguessable id: at most ``max_sessions``, each dropped after ``idle_seconds``."""

    def __init__(
        self, max_sessions: int = 100, idle_seconds: float = 3600.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions < 1:
            raise ValueError(f"max_sessions must be a positive int, got {max_sessions!r}")
        if isinstance(idle_seconds, bool) or not isinstance(idle_seconds, int | float) or not idle_seconds > 0:
            raise ValueError(f"idle_seconds must be a positive number, got {idle_seconds!r}")
        self.max_sessions = max_sessions
        self.idle_seconds = float(idle_seconds)
        self.clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._reserved = 0
        """Places held for games being built (``reserved``): counted as games by the room check."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def _expire(self, now: float) -> None:
        while self._sessions:
            key, oldest = next(iter(self._sessions.items()))
            if now - oldest.last_used < self.idle_seconds:
                break
            del self._sessions[key]

    @contextmanager
    def reserved(self) -> Iterator[Callable[[Session], str]]:
        """A place for one game, taken now (a ``StoreFull``, 503, when ``max_sessions`` games are in progress or being
        built), before the game is built: a full server builds no game, even for requests that come together. The
        block gets ``keep(session)``, which stores the built game in that place and returns its id, once; a block
        that ends without it (the build failed) gives the place back."""
        with self._lock:
            self._make_room()
            self._reserved += 1
        kept = False

        def keep(session: Session) -> str:
            nonlocal kept
            if kept:
                raise RuntimeError("a reserved place keeps one game, once")
            with self._lock:
                kept = True
                self._reserved -= 1
                return self._store(session)

        try:
            yield keep
        finally:
            if not kept:
                with self._lock:
                    self._reserved -= 1

    def _make_room(self) -> None:
        self._expire(self.clock())
        if len(self._sessions) + self._reserved >= self.max_sessions:
            games = "game" if self.max_sessions == 1 else "games"
            raise StoreFull(
                f"the server holds {self.max_sessions} {games} already; try again when one has been left or has "
                f"expired ({self.idle_seconds / 60:.0f} minutes without a request)",
                503,
            )

    def _store(self, session: Session) -> str:
        """Keep ``session`` under a new id (the lock held, its place reserved)."""
        key = secrets.token_urlsafe(18)
        session.last_used = self.clock()
        self._sessions[key] = session
        return key

    def get(self, key: str) -> Session:
        """The session ``key`` (now counted as used), or a 404 ``RequestError``."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            session = self._sessions.get(key)
            if session is None:
                raise RequestError(
                    f"no game {key[:40]!r} on this server (a game is dropped {self.idle_seconds / 60:.0f} minutes "
                    "after its last request, and when the server restarts); start a new one",
                    404,
                )
            session.last_used = now
            self._sessions.move_to_end(key)
            return session

    def remove(self, key: str) -> None:
        with self._lock:
            self._sessions.pop(key, None)
