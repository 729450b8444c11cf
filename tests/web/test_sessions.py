"""The pieces behind the web server, without HTTP: the round-end explanation and the seat view
(``friday13_env.web.views``), the session store's bounds, the sessions and options, the replay-record reader
(``friday13_env.web.record``) and the self-contained replay page (``friday13_env.web.replay_html``)."""

from __future__ import annotations

import copy
import json
import random
import re
from functools import cache
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette")

from friday13_env.friday import engine as solo_engine
from friday13_env.friday13 import engine as card_engine
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.engine import Rules
from friday13_env.friday13.scenario import from_hands
from friday13_env.web import record as records
from friday13_env.web import replay_html
from friday13_env.web.record import MAX_REPLAY_BYTES, ReplayError
from friday13_env.web.sessions import (
    CardSession,
    Options,
    RequestError,
    SessionStore,
    SoloSession,
    card_agent_names,
)
from friday13_env.web.views import card_frame, explain_round, seat_view
from tests.conftest import counts

STANDARD = get_deck("standard")
FOUR = Rules(num_players=4, deck=STANDARD, num_rounds=2)
SEATS = ["north", "east", "south", "west"]


# -- the round-end explanation --------------------------------------------------------------------------------
def finished_round(captured: list[list[int]], scores: list[int] | None = None) -> card_engine.GameState:
    """A 4-player round that ends with the last four cards played on empty piles (nothing more is captured), the
    seats having captured ``captured`` (cat, mirror, ladder, Friday) before: the engine scores it."""
    hands = [counts(STANDARD, name) for name in ("cat 1", "mirror 1", "ladder 1", "cat 2")]
    state = from_hands(FOUR, hands, captured=captured, scores=scores)
    while not state.round_over:
        card_engine.play(state, card_engine.legal_actions(state)[0])
    assert state.captured == captured
    return state


def test_a_sole_majority_holder_discards_that_type() -> None:
    state = finished_round([[5, 1, 0, 0], [2, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0]])
    explained = explain_round(state, SEATS)
    cats, mirrors, ladders = explained["types"]
    assert cats["counts"] == [5, 2, 0, 1]
    assert (cats["most"], cats["discarder"]) == (5, 0)
    assert "north has the most black cats (5) and discards them" in cats["text"]
    assert (mirrors["most"], mirrors["discarder"]) == (1, 0)  # one card is a sole majority too
    assert (ladders["most"], ladders["discarder"]) == (0, None)
    assert "Nobody" in ladders["text"]
    points = [row["points"] for row in explained["rows"]]
    assert points == [0, 2, 0, 1] == state.last_round_points
    assert explained["rows"][0]["kept"] == 0
    assert explained["rows"][1]["text"] == "east: 2 omen cards kept x 1 = 2 points"


def test_a_tie_for_the_most_means_nobody_discards() -> None:
    state = finished_round([[3, 0, 2, 0], [3, 0, 2, 0], [1, 0, 2, 0], [0, 0, 1, 0]])
    explained = explain_round(state, SEATS)
    cats, _, ladders = explained["types"]
    assert (cats["most"], cats["discarder"]) == (3, None)
    assert cats["text"] == "north and east tie for the most black cats (3): nobody discards them."
    assert ladders["discarder"] is None  # a three-way tie
    assert "north and east and south tie" in ladders["text"]
    assert [row["points"] for row in explained["rows"]] == [5, 5, 3, 1] == state.last_round_points
    assert [row["kept"] for row in explained["rows"]] == [5, 5, 3, 1]


def test_friday_cards_count_two_and_are_never_discarded() -> None:
    state = finished_round([[0, 0, 0, 3], [1, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 0]], scores=[10, 0, 4, 4])
    explained = explain_round(state, SEATS)
    rows = explained["rows"]
    assert [row["fridays"] for row in rows] == [3, 1, 0, 0]
    # The Friday holder with the most is not a discarder: only the three omen types are discarded.
    assert all(row["discarder"] != 0 for row in explained["types"])
    assert explained["types"][0]["discarder"] == 1  # east's one cat is the sole majority
    assert [row["points"] for row in rows] == [6, 2, 0, 0] == state.last_round_points
    assert [row["total"] for row in rows] == [16, 2, 4, 4] == state.scores
    assert rows[0]["text"] == "north: 0 omen cards kept x 1 + 3 Friday the 13th x 2 = 6 points"
    assert "Friday" not in rows[2]["text"]
    assert explained["round"] == 0


def test_the_explanation_of_a_three_player_round_built_by_hand() -> None:
    """``captured`` set directly on a dealt state, scored with the engine's rule."""
    rules = Rules(num_players=3, deck=STANDARD, num_rounds=1)
    state = card_engine.new_game(rules, np.random.default_rng(0)).copy()
    state.captured = [[4, 4, 0, 2], [4, 1, 3, 0], [0, 2, 1, 1]]
    state.last_round_points = card_engine.round_points(state.captured)
    state.scores = list(state.last_round_points)
    state.round_over = state.game_over = True
    explained = explain_round(state, ["a", "b", "c"])
    assert [row["discarder"] for row in explained["types"]] == [None, 0, 1]
    # a: 4 cats (tie, kept) + 0 mirrors (discarded) + 2 Fridays -> 8; b: 4 cats + 1 mirror -> 5; c: 3 + 2 -> 5.
    assert [row["points"] for row in explained["rows"]] == [8, 5, 5] == state.last_round_points


def test_an_explanation_that_disagrees_with_the_engine_is_an_error() -> None:
    state = finished_round([[2, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    state.last_round_points = [2, 1, 0, 0]  # as if the majority were not discarded
    with pytest.raises(AssertionError, match="seat 0"):
        explain_round(state, SEATS)


def test_the_frame_of_a_round_end_shows_no_current_player_and_no_legal_moves() -> None:
    state = finished_round([[0, 0, 0, 0]] * 4)
    frame = card_frame(state, None, explain_round(state, SEATS))
    assert frame["current"] is None
    assert frame["legal"] == []
    assert frame["round_end"]["types"][0]["discarder"] is None


# -- the seat view ------------------------------------------------------------------------------------------
def test_a_seat_sees_only_its_own_hand() -> None:
    rules = Rules(num_players=3, deck=STANDARD, num_rounds=1)
    state = card_engine.new_game(rules, np.random.default_rng(3))
    frame = card_frame(state)
    assert frame["dummy"] is not None
    original = copy.deepcopy(frame)
    for seat in range(3):
        view = seat_view(frame, seat)
        assert view["hands"][seat] == state.hands[seat]
        assert [hand is None for hand in view["hands"]] == [other != seat for other in range(3)]
        assert view["dummy"] is None
        assert view["hand_sizes"] == [sum(hand) for hand in state.hands]
        assert view["legal"] == (card_engine.legal_actions(state) if seat == state.current else [])
    assert frame == original  # the full frame is left as it was


# -- the store ----------------------------------------------------------------------------------------------
class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    "arguments",
    [
        {"max_sessions": 0},
        {"max_sessions": -1},
        {"max_sessions": True},
        {"max_sessions": 2.0},
        {"max_sessions": "2"},
        {"idle_seconds": 0},
        {"idle_seconds": -1},
        {"idle_seconds": True},
        {"idle_seconds": "60"},
        {"idle_seconds": float("nan")},
    ],
)
def test_the_store_refuses_bad_bounds(arguments: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(arguments))):
        SessionStore(**arguments)


def solo(seed: int = 0) -> SoloSession:
    return SoloSession(1, seed)


def add(store: SessionStore, session: SoloSession) -> str:
    """Keep ``session`` in ``store`` as the app does: in a place reserved before the game was built."""
    with store.reserved() as keep:
        return keep(session)


def test_the_store_holds_at_most_its_bound_and_drops_idle_games() -> None:
    clock = FakeClock()
    store = SessionStore(max_sessions=2, idle_seconds=10, clock=clock)
    first, second = solo(1), solo(2)
    one = add(store, first)
    clock.now = 5
    two = add(store, second)
    assert one != two
    assert len(one) >= 20  # unguessable
    with pytest.raises(RequestError) as refused:
        add(store, solo(3))
    assert refused.value.status == 503
    clock.now = 9
    assert store.get(one) is first  # used at 9: now the second is the oldest
    clock.now = 15.5
    three = add(store, solo(3))  # the second, idle 10.5 s, makes room
    with pytest.raises(RequestError) as gone:
        store.get(two)
    assert gone.value.status == 404
    assert store.get(one) is first
    store.remove(one)
    store.remove(one)  # twice is harmless
    assert len(store) == 1
    add(store, solo(4))
    assert store.get(three).seed == 3


def test_a_missing_game_is_a_404_that_does_not_echo_a_long_id() -> None:
    store = SessionStore()
    with pytest.raises(RequestError) as missing:
        store.get("k" * 10_000)
    assert missing.value.status == 404
    assert len(str(missing.value)) < 400


# -- sessions and options -----------------------------------------------------------------------------------
def test_the_agents_offered_at_each_table_can_sit_there() -> None:
    names = card_agent_names()
    assert {"random", "cautious", "majority", "search"} <= set(names["german"])
    assert {"random", "ppo-v4", "endgame"} <= set(names["standard"])
    assert not {"ppo-v4", "endgame", "ensemble-v1"} & set(names["german"])
    data = Options(card_agents=names).to_dict()
    assert data["friday13"]["rounds"][0] == 1
    assert data["friday13"]["advisers"]["standard"] == "ppo-v4"
    assert json.loads(json.dumps(data)) == data


def test_a_card_session_starts_with_the_bots_before_you_having_played() -> None:
    rules = Rules(num_players=4, deck=STANDARD, num_rounds=1)
    session = CardSession(rules, 2, {3: "random", 0: "random", 1: "random"}, seed=5)
    # Seat 0 starts round 0: seats 0 and 1 have played, and it is your turn.
    assert len(session.frames) == 3
    assert [frame["move"]["seat"] for frame in session.frames[1:]] == [0, 1]
    assert session.your_turn
    assert session.legal() == card_engine.legal_actions(session.state_)
    assert session.record().moves == [[frame["move"]["action"] for frame in session.frames[1:]]]
    with pytest.raises(RequestError) as refused:
        session.state(len(session.frames) + 1)
    assert refused.value.status == 422


def test_a_solo_session_refuses_an_illegal_move_and_keeps_its_position() -> None:
    session = solo(6)
    legal = session.legal()
    illegal = next(action for action in range(100) if action not in legal)
    with pytest.raises(RequestError) as refused:
        session.move(illegal)
    assert refused.value.status == 409
    assert refused.value.detail == {"legal": legal}
    assert len(session.frames) == 1
    assert session.record().moves == []


# -- replay records -----------------------------------------------------------------------------------------
@cache
def _played_card(players: int, rounds: int) -> dict[str, Any]:
    rules = Rules(num_players=players, deck=STANDARD, num_rounds=rounds)
    session = CardSession(rules, 0, dict.fromkeys(range(1, players), "random"), seed=123)
    rng = random.Random(0)
    while not session.over:
        session.move(rng.choice(session.legal()))
    return session.record().to_dict()


def played_card(players: int = 4, rounds: int = 2) -> dict[str, Any]:
    """The record of a finished card game (a fresh copy to spoil)."""
    return copy.deepcopy(_played_card(players, rounds))


@cache
def _played_solo() -> dict[str, Any]:
    session = SoloSession(2, 77)
    rng = random.Random(1)
    while not session.over:
        session.move(rng.choice(session.legal()))
    return session.record().to_dict()


def played_solo() -> dict[str, Any]:
    return copy.deepcopy(_played_solo())


def test_a_played_record_is_read_back_and_replayed() -> None:
    for data in (played_card(), played_card(3, 1), played_solo()):
        record = records.from_dict(data)
        assert record.to_dict() == data


def test_a_saved_record_loads(tmp_path) -> None:
    for name, data in (("card.json", played_card(3, 1)), ("solo.json", played_solo())):
        path = records.save(records.from_dict(data), tmp_path / name)
        loaded = records.load(path)
        assert loaded.to_dict() == data
    # The solo record's seed and moves rebuild the finished game.
    final = records.solo_positions(records.load(tmp_path / "solo.json"))[-1][0]
    assert final.done
    assert isinstance(solo_engine.final_score(final), int)


def spoiled(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**base, **changes}


CARD_REFUSALS: list[tuple[Any, str]] = [
    (lambda d: [d], "not a replay"),
    (lambda d: None, "not a replay"),
    (lambda d: spoiled(d, format="friday13-env replays"), "not a replay"),
    (lambda d: {k: v for k, v in d.items() if k != "format"}, "not a replay"),
    (lambda d: spoiled(d, format_version=2), "format version"),
    (lambda d: spoiled(d, format_version="1"), "format version"),
    (lambda d: spoiled(d, format_version=True), "format version"),
    (lambda d: spoiled(d, game="chess"), "'game'"),
    (lambda d: spoiled(d, game=["friday13"]), "'game'"),
    (lambda d: spoiled(d, players=7), "'players'"),
    (lambda d: spoiled(d, players="4"), "'players'"),
    (lambda d: spoiled(d, players=True), "'players'"),
    (lambda d: spoiled(d, players=4.0), "'players'"),
    (lambda d: spoiled(d, deck="french"), "'deck'"),
    (lambda d: spoiled(d, deck=["standard"]), "'deck'"),
    (lambda d: spoiled(d, deck={"standard": 1}), "'deck'"),
    (lambda d: spoiled(d, rounds=0), "'rounds'"),
    (lambda d: spoiled(d, rounds=10**6), "'rounds'"),
    (lambda d: spoiled(d, rounds=1), "1..1 rounds"),
    (lambda d: spoiled(d, seats=d["seats"][:3]), "'seats'"),
    (lambda d: spoiled(d, seats=[*d["seats"][:3], 4]), "'seats'"),
    (lambda d: spoiled(d, seats=[*d["seats"][:3], "x" * 81]), "'seats'"),
    (lambda d: spoiled(d, seats="abcd"), "'seats'"),
    (lambda d: spoiled(d, source={"k": 1}), "'source'"),
    (lambda d: spoiled(d, source=["k"]), "'source'"),
    (lambda d: spoiled(d, source={"k": "v" * 81}), "'source'"),
    (lambda d: spoiled(d, source={"k": "\ud800"}), "'source'"),  # a lone surrogate: no page can hold it
    (lambda d: spoiled(d, seats=[*d["seats"][:3], "\ud800"]), "'seats'"),
    (lambda d: spoiled(d, deals={}), "'deals'"),
    (lambda d: spoiled(d, moves="0,1"), "'deals'"),
    (lambda d: spoiled(d, moves=d["moves"][:1]), "'deals'"),
    (lambda d: spoiled(d, deals=[], moves=[]), "1..2 rounds"),
    (lambda d: spoiled(d, deals=[d["deals"][0]] * 3, moves=[d["moves"][0]] * 3), "1..2 rounds"),
    (lambda d: spoiled(d, moves=[d["moves"][0][:-1], d["moves"][1]]), "round 1 ends after"),
    (lambda d: spoiled(d, moves=[d["moves"][0], [*d["moves"][1], 0]]), "only 50 cards are dealt"),
    (lambda d: spoiled(d, moves=[d["moves"][0], [str(m) for m in d["moves"][1]]]), "round 2: moves must be"),
    (lambda d: spoiled(d, moves=[d["moves"][0], [True]]), "round 2: moves must be"),
    (lambda d: spoiled(d, moves=[d["moves"][0], [1.0]]), "round 2: moves must be"),
    (lambda d: spoiled(d, moves=[d["moves"][0], 5]), "round 2: moves must be"),
    (lambda d: spoiled(d, evil="x"), "holds fields a card-game replay does not: ['evil']"),
    (lambda d: spoiled(d, level=1), "holds fields a card-game replay does not: ['level']"),
]


@pytest.mark.parametrize(("spoil", "message"), CARD_REFUSALS)
def test_a_bad_card_record_is_refused(spoil, message: str) -> None:
    with pytest.raises(ReplayError, match=re.escape(message)):
        records.from_dict(spoil(played_card()))


def moved_card(data: dict[str, Any], round_index: int, seat: int, kind: int, to: int) -> dict[str, Any]:
    """``data`` with one card of ``kind`` moved from hand ``seat`` to hand ``to`` in a round's deal."""
    data["deals"][round_index][seat][kind] -= 1
    data["deals"][round_index][to][kind] += 1
    return data


def test_a_deal_that_is_not_a_deal_of_the_deck_is_refused() -> None:
    def refused(data: dict[str, Any], message: str = "round 1: the hands are not a deal of the standard deck") -> None:
        with pytest.raises(ReplayError, match=re.escape(message)):
            records.from_dict(data)

    data = played_card()
    held = next(kind for kind, count in enumerate(data["deals"][0][0]) if count)
    refused(moved_card(data, 0, 0, held, 1))  # a hand of 13 cards beside one of 11
    data = played_card()
    data["deals"][0][0][held] -= 1  # a card missing from the deck
    refused(data)
    data = played_card()
    spare = next(kind for kind, count in enumerate(data["deals"][0][0]) if count == 0)
    data["deals"][0][0][held] -= 1
    data["deals"][0][0][spare] += 1  # the right sizes, but not the deck's cards
    refused(data)
    data = played_card()
    data["deals"][1] = data["deals"][1][:3]
    refused(data, "round 2: a deal is 4 lists of 16 non-negative counts")
    for bad in (-1, True, 1.0, "1", None):
        data = played_card()
        data["deals"][0][2][0] = bad
        refused(data, "round 1: a deal is 4 lists of 16 non-negative counts")
    data = played_card()
    data["deals"][0][1] = data["deals"][0][1][:-1]
    refused(data, "round 1: a deal is 4 lists")
    # At 3 players the dummy hand is part of the deal.
    data = played_card(3, 1)
    assert len(data["deals"][0]) == 4
    data["deals"][0] = data["deals"][0][:3]
    refused(data, "round 1: a deal is 4 lists of 16")


@pytest.mark.parametrize(("players", "first", "second"), [(4, 0, 3), (3, 0, 3)])
def test_a_deal_with_the_extra_cards_in_other_hands_is_refused(players: int, first: int, second: int) -> None:
    """The round's start player and the seats after it get the extra cards (the dummy, at 3 players, is dealt
    last): hands swapped between a seat of the extra cards and another (or the dummy) are not a deal, even in an
    unfinished last round, where nothing else would notice (the game would stick with a player out of cards)."""
    data = played_card(players, 1)
    hands = data["deals"][0]
    assert sum(hands[first]) != sum(hands[second])
    hands[first], hands[second] = hands[second], hands[first]
    data["moves"][0] = []
    with pytest.raises(ReplayError, match=r"round 1: the hands are not a deal of the standard deck"):
        records.from_dict(data)


def test_a_new_record_refuses_a_label_that_is_not_valid_text() -> None:
    with pytest.raises(ValueError, match=r"labels must be valid Unicode text, got '\\ud800'"):
        records.new_card_record(Rules(num_players=3), ["ann", "\ud800", "cy"])


def test_an_illegal_move_names_its_round_and_number() -> None:
    data = played_card()
    _, steps = records.card_positions(records.from_dict(played_card()))
    index = len(data["moves"][0]) + 2  # the third move of round 2
    before = steps[index].before
    illegal = next(a for a in range(STANDARD.num_actions) if a not in card_engine.legal_actions(before))
    data["moves"][1][2] = illegal
    with pytest.raises(ReplayError, match=rf"round 2, move 3: .*\b{illegal}\b"):
        records.from_dict(data)
    data = played_card()
    data["moves"][0][0] = STANDARD.num_actions
    with pytest.raises(ReplayError, match=rf"round 1, move 1: action {STANDARD.num_actions} is out of range"):
        records.from_dict(data)
    data = played_card()
    data["moves"][0][0] = -1
    with pytest.raises(ReplayError, match="round 1, move 1"):
        records.from_dict(data)


SOLO_REFUSALS: list[tuple[Any, str]] = [
    (lambda d: spoiled(d, level=0), "'level'"),
    (lambda d: spoiled(d, level=5), "'level'"),
    (lambda d: spoiled(d, level=True), "'level'"),
    (lambda d: spoiled(d, level="2"), "'level'"),
    (lambda d: spoiled(d, level=[2]), "'level'"),
    (lambda d: spoiled(d, seed=-1), "'seed'"),
    (lambda d: spoiled(d, seed=2**64), "'seed'"),
    (lambda d: spoiled(d, seed="77"), "'seed'"),
    (lambda d: spoiled(d, seed=77.0), "'seed'"),
    (lambda d: spoiled(d, player=None), "'player'"),
    (lambda d: spoiled(d, player="p" * 81), "'player'"),
    (lambda d: spoiled(d, player="\udfff"), "'player'"),
    (lambda d: spoiled(d, moves="0"), "'moves'"),
    (lambda d: spoiled(d, moves=[0] * (records.MAX_SOLO_MOVES + 1)), "at most 5000"),
    (lambda d: spoiled(d, moves=[*d["moves"][:3], "1"]), "move 4: '1' is not an action"),
    (lambda d: spoiled(d, moves=[*d["moves"][:3], True]), "move 4"),
    (lambda d: spoiled(d, moves=[*d["moves"][:3], 1.0]), "move 4"),
    (lambda d: spoiled(d, moves=[*d["moves"], d["moves"][-1]]), "is not legal here; legal: []"),  # after the end
    (lambda d: spoiled(d, seats=["a"], notes=1), "holds fields a solo replay does not: ['notes', 'seats']"),
]


@pytest.mark.parametrize(("spoil", "message"), SOLO_REFUSALS)
def test_a_bad_solo_record_is_refused(spoil, message: str) -> None:
    with pytest.raises(ReplayError, match=re.escape(message)):
        records.from_dict(spoil(played_solo()))


def test_an_illegal_solo_move_names_its_number() -> None:
    data = played_solo()
    positions = records.solo_positions(records.from_dict(played_solo()))
    state = positions[4][0]
    illegal = next(a for a in range(200) if a not in solo_engine.legal_actions(state))
    data["moves"][4] = illegal
    with pytest.raises(ReplayError, match=rf"move 5: action {illegal} is not legal here"):
        records.from_dict(data)


def test_load_refuses_what_is_not_a_replay_file(tmp_path) -> None:
    def refused(content: bytes, message: str) -> None:
        path = tmp_path / "replay.json"
        path.write_bytes(content)
        with pytest.raises(ReplayError, match=message):
            records.load(path)

    refused(b" " * (MAX_REPLAY_BYTES + 1), "over the 2000000-byte limit; not read")
    refused(b"{not json", "is not JSON")
    refused(b"\xff\xfe{}", "is not JSON")
    refused(b"[" * 100_000 + b"]" * 100_000, "is not JSON")  # nesting deeper than the parser goes
    refused(b'{"a": ' * 50_000 + b"1" + b"}" * 50_000, "is not JSON")
    refused(b"[]", "not a replay")
    refused(b'{"seed": ' + b"1" * 5000 + b"}", "is not JSON")  # more digits than Python reads into an int
    bad = played_solo()
    bad["moves"].append(-7)
    refused(json.dumps(bad).encode(), rf"replay .*replay\.json: move {len(bad['moves'])}: action -7")
    with pytest.raises(ReplayError, match=r"replay .*missing\.json cannot be read"):
        records.load(tmp_path / "missing.json")


def test_load_of_a_folder_or_a_device_is_a_replay_error(tmp_path) -> None:
    """Only a regular file is read: a folder, or a link to a device that reports no size and never ends."""
    with pytest.raises(ReplayError, match="is not a regular file; not read"):
        records.load(tmp_path)
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    with pytest.raises(ReplayError, match="is not a regular file; not read"):
        records.load(tmp_path / "zero.json")


def test_a_record_just_under_the_size_cap_is_read(tmp_path) -> None:
    text = json.dumps(played_solo())
    path = tmp_path / "padded.json"
    path.write_text(text + " " * (MAX_REPLAY_BYTES - len(text)))
    assert path.stat().st_size == MAX_REPLAY_BYTES
    assert records.load(path).to_dict() == played_solo()


# -- the replay page ----------------------------------------------------------------------------------------
HOSTILE = "</script><script>alert(1)</script>"


def test_a_hostile_label_cannot_close_the_replay_pages_script() -> None:
    data = played_card(3, 1)
    plain = replay_html.render(records.from_dict(data))
    data["seats"][1] = HOSTILE
    data["source"] = {"note": HOSTILE, HOSTILE: "x"}
    html = replay_html.render(records.from_dict(data))
    assert HOSTILE not in html
    assert "<script>alert" not in html
    # Only the page's own script elements close: the same number as with harmless labels.
    assert html.lower().count("</script") == plain.lower().count("</script")
    assert html.lower().count("<script") == plain.lower().count("<script")
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the title and the header, escaped
    # The data still carries the label exactly, for the viewer to show as text.
    found = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html, re.S)
    assert found is not None
    shown = json.loads(found.group(1))
    assert shown["table"]["seats"][1] == HOSTILE
    assert any(HOSTILE in (frame["move"] or {}).get("text", "") for frame in shown["frames"])


def test_a_solo_replay_page_holds_every_frame() -> None:
    data = played_solo()
    html = replay_html.render(records.from_dict(data))
    found = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html, re.S)
    assert found is not None
    shown = json.loads(found.group(1))
    assert shown["table"] == {"game": "friday", "level": 2, "player": "you"}
    assert len(shown["frames"]) == len(data["moves"]) + 1
    assert shown["frames"][-1]["done"] is True
