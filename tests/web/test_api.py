"""The web server's HTTP API (``friday13_env.web.app``): whole games played through it and checked against the
engine replaying their records, hidden information, the round-end explanation, every kind of bad request
answered with a 4xx JSON error, isolation between games, the store's bounds, failing bots, hints, determinism
and the static page."""

from __future__ import annotations

import math
from typing import Any

import pytest

pytest.importorskip("starlette")

from friday13_env.friday import engine as solo_engine
from friday13_env.friday13 import engine as card_engine
from friday13_env.friday13.cards import NUM_PILES, get_deck
from friday13_env.web import record as records
from friday13_env.web import sessions
from friday13_env.web.app import MAX_BODY_BYTES, create_app
from friday13_env.web.sessions import Options, SessionStore
from friday13_env.web.views import card_frames, seat_view, solo_frames
from tests.web.helpers import Game, chooser, client, create, options, raw_request


@pytest.fixture(scope="module")
def api():
    with client() as test_client:
        yield test_client


def card_game(api, **body: Any) -> Game:
    return Game(api, create(api, game="friday13", **body))


def solo_game(api, **body: Any) -> Game:
    return Game(api, create(api, game="friday", **body))


def error_of(response, status: int) -> str:
    """The error message of a refused request, after checking its status and JSON shape."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert isinstance(body, dict)
    assert isinstance(body.get("error"), str)
    assert body["error"]
    return body["error"]


# -- whole card games -----------------------------------------------------------------------------------------
def check_hidden(frame: dict[str, Any], you: int, players: int) -> None:
    """What a live client may see: its own hand only, no dummy, every hand size, legal moves on its turn only."""
    assert len(frame["hands"]) == players
    for seat, hand in enumerate(frame["hands"]):
        if seat == you:
            assert isinstance(hand, list)
            assert sum(hand) == frame["hand_sizes"][seat]
        else:
            assert hand is None, f"seat {seat}'s hand was sent to seat {you}"
    assert frame["dummy"] is None
    if frame["current"] != you:
        assert frame["legal"] == []


def check_round_ends(frames: list[dict[str, Any]], players: int) -> int:
    """Every round-end explanation agrees with the captured cards and the change of the scores; the number of
    round ends."""
    previous = [0] * players
    ends = 0
    for frame in frames:
        explained = frame["round_end"]
        if explained is None:
            continue
        ends += 1
        assert explained["round"] == frame["round"]
        captured = frame["captured"]
        for omen, row in enumerate(explained["types"]):
            counts = [stack[omen] for stack in captured]
            assert row["counts"] == counts
            most = max(counts)
            assert row["most"] == most
            expected = counts.index(most) if most > 0 and counts.count(most) == 1 else None
            assert row["discarder"] == expected
        assert len(explained["types"]) == NUM_PILES
        assert [row["seat"] for row in explained["rows"]] == list(range(players))
        gained = [now - before for now, before in zip(frame["scores"], previous, strict=True)]
        assert [row["points"] for row in explained["rows"]] == gained
        assert [row["total"] for row in explained["rows"]] == frame["scores"]
        for row in explained["rows"]:
            assert row["fridays"] == captured[row["seat"]][3]
            assert row["points"] == row["kept"] + 2 * row["fridays"]
        previous = frame["scores"]
    return ends


@pytest.mark.parametrize(
    ("players", "deck", "rounds", "seat", "opponents"),
    [
        (4, "standard", 2, 0, ["random"]),
        (4, "standard", 1, 2, ["random", "cautious", "majority"]),
        (3, "standard", 1, 1, ["cautious"]),
        (6, "standard", 1, 5, ["random"]),
        (4, "german", 1, 1, ["cautious"]),
        (3, "german", 1, 0, ["random"]),
    ],
)
def test_whole_card_game_matches_the_engine_replaying_its_record(
    api, players: int, deck: str, rounds: int, seat: int, opponents: list[str]
) -> None:
    game = card_game(
        api, players=players, deck=deck, rounds=rounds, seat=seat, opponents=opponents, seed=1000 + players
    )
    table = game.table
    assert (table["players"], table["deck"], table["rounds"], table["you"]) == (players, deck, rounds, seat)
    assert table["seats"][seat] == "you"
    assert len(table["actions"]) == get_deck(deck).num_actions
    game.play_out(chooser(players))
    assert game.status == {"over": True, "error": None, "your_turn": False}
    last = game.frames[-1]
    assert last["game_over"] is True
    assert last["round"] == rounds - 1

    for frame in game.frames:
        check_hidden(frame, seat, players)
    assert check_round_ends(game.frames, players) == rounds

    response = api.get(f"/api/games/{game.id}/replay")
    assert response.status_code == 200
    assert "attachment" in response.headers["content-disposition"]
    record = records.from_dict(response.json())
    assert isinstance(record, records.CardRecord)
    assert (record.players, record.deck, record.rounds) == (players, deck, rounds)
    assert record.seats == table["seats"]
    assert len(record.deals) == rounds
    if players == 3:
        assert all(len(deal) == 4 for deal in record.deals)  # the dummy hand is recorded too

    # The engine, replaying the record, reaches the same scores; and every frame the client saw is exactly
    # that seat's view of the engine's frame.
    _, steps = records.card_positions(record)
    assert steps[-1].after.game_over
    assert steps[-1].after.scores == last["scores"]
    replayed = card_frames(record)
    assert replayed[-1]["scores"] == last["scores"]
    assert [seat_view(frame, seat) for frame in replayed] == game.frames
    # The full frames hold every hand: the client's were really hidden, not empty.
    assert any(
        hand is not None and sum(hand) for hand in replayed[0]["hands"][seat + 1 :] + replayed[0]["hands"][:seat]
    )

    page = api.get(f"/api/games/{game.id}/replay.html")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "replay-data" in page.text


def test_the_engine_final_scores_equal_a_fresh_engine_game_on_the_recorded_deals(api) -> None:
    """Independent of the web views: the engine alone, fed the recorded deals and moves, gives the last frame's
    scores."""
    game = card_game(api, players=4, rounds=2, opponents=["random"], seed=77)
    game.play_out(chooser(5))
    data = api.get(f"/api/games/{game.id}/replay").json()
    rules = card_engine.Rules(num_players=4, deck=get_deck("standard"), num_rounds=2)
    scores = [0, 0, 0, 0]
    for index, (deal, moves) in enumerate(zip(data["deals"], data["moves"], strict=True)):
        state = card_engine.dealt_state(rules, deal, round_index=index, scores=scores)
        for action in moves:
            card_engine.play(state, action)
        assert state.round_over
        scores = state.scores
    assert state.game_over
    assert scores == game.frames[-1]["scores"]


@pytest.mark.parametrize("level", [1, 4])
def test_whole_solo_game_matches_the_engine_replaying_its_record(api, level: int) -> None:
    game = solo_game(api, level=level, seed=40 + level)
    assert game.table == {"game": "friday", "level": level, "player": "you"}
    game.play_out(chooser(level))
    last = game.frames[-1]
    assert last["done"] is True
    assert game.status == {"over": True, "error": None, "your_turn": False}
    assert last["legal"] == []
    assert isinstance(last["score"], int)

    data = api.get(f"/api/games/{game.id}/replay").json()
    record = records.from_dict(data)
    assert isinstance(record, records.SoloRecord)
    assert record.level == level
    assert len(record.moves) == len(game.frames) - 1
    positions = records.solo_positions(record)
    final = positions[-1][0]
    assert final.done
    assert solo_engine.final_score(final) == last["score"]
    assert solo_frames(record) == game.frames


def test_the_replay_is_refused_while_the_game_is_in_play(api) -> None:
    for game in (card_game(api, opponents=["random"], seed=5), solo_game(api, seed=5)):
        assert not game.status["over"]
        for path in ("replay", "replay.html"):
            message = error_of(api.get(f"/api/games/{game.id}/{path}"), 409)
            assert "over" in message


def test_options_list_what_the_page_may_send(api) -> None:
    data = api.get("/api/options").json()
    card = data["friday13"]
    assert card["players"] == [3, 4, 5, 6]
    assert card["decks"] == ["german", "standard"]
    assert {"random", "cautious", "ppo-v4"} <= set(card["agents"]["standard"])
    assert "random" in card["agents"]["german"]
    assert "ppo-v4" not in card["agents"]["german"]  # a standard-deck network cannot sit at a German table
    assert card["default_opponent"]["standard"] in card["agents"]["standard"]
    assert card["default_opponent"]["german"] in card["agents"]["german"]
    assert data["friday"]["levels"] == [1, 2, 3, 4]


def test_opponents_sit_in_turn_order_after_you(api) -> None:
    game = card_game(api, players=4, seat=1, opponents=["random", "cautious", "majority"], seed=3)
    assert game.table["seats"] == ["majority (1)", "you", "random (3)", "cautious (4)"]


# -- bad requests ---------------------------------------------------------------------------------------------
NEW_CARD = {"game": "friday13", "players": 4, "rounds": 1, "opponents": ["random"], "seed": 1}


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"game": "chess"}, "game"),
        ({}, "game"),
        ({"game": None}, "game"),
        ({**NEW_CARD, "players": 2}, "players"),
        ({**NEW_CARD, "players": 7}, "players"),
        ({**NEW_CARD, "players": "4"}, "players"),
        ({**NEW_CARD, "players": 4.0}, "players"),
        ({**NEW_CARD, "players": True}, "players"),
        ({**NEW_CARD, "players": None}, "players"),
        ({**NEW_CARD, "deck": "french"}, "deck"),
        ({**NEW_CARD, "deck": 1}, "deck"),
        ({**NEW_CARD, "deck": ["standard"]}, "deck"),
        ({**NEW_CARD, "rounds": 0}, "rounds"),
        ({**NEW_CARD, "rounds": 9}, "rounds"),
        ({**NEW_CARD, "rounds": 10**30}, "rounds"),
        ({**NEW_CARD, "rounds": "1"}, "rounds"),
        ({**NEW_CARD, "seat": 4}, "seat"),
        ({**NEW_CARD, "seat": -1}, "seat"),
        ({**NEW_CARD, "seat": "0"}, "seat"),
        ({**NEW_CARD, "seat": False}, "seat"),
        ({**NEW_CARD, "players": 3, "seat": 3}, "seat"),
        ({**NEW_CARD, "seed": -1}, "seed"),
        ({**NEW_CARD, "seed": 2**63}, "seed"),
        ({**NEW_CARD, "seed": "1"}, "seed"),
        ({**NEW_CARD, "seed": 1.5}, "seed"),
        ({**NEW_CARD, "seed": True}, "seed"),
        ({**NEW_CARD, "opponents": ["nobody"]}, "opponents"),
        ({**NEW_CARD, "opponents": "random"}, "opponents"),
        ({**NEW_CARD, "opponents": []}, "opponents"),
        ({**NEW_CARD, "opponents": ["random", "random"]}, "opponents"),
        ({**NEW_CARD, "opponents": ["random"] * 4}, "opponents"),
        ({**NEW_CARD, "opponents": [1]}, "opponents"),
        ({**NEW_CARD, "opponents": [None]}, "opponents"),
        ({**NEW_CARD, "opponents": {"random": 1}}, "opponents"),
        ({**NEW_CARD, "opponents": ["search:budget=1"]}, "opponents"),
        ({**NEW_CARD, "opponents": ["checkpoints/policy.npz"]}, "opponents"),
        ({**NEW_CARD, "opponents": ["/etc/passwd"]}, "opponents"),
        ({**NEW_CARD, "opponents": ["friday13_env.friday13.agents:RandomAgent"]}, "opponents"),
        ({**NEW_CARD, "opponents": ["os:system"]}, "opponents"),
        ({**NEW_CARD, "deck": "german", "opponents": ["ppo-v4"]}, "opponents"),
        ({**NEW_CARD, "colour": "red"}, "unknown field"),
        ({**NEW_CARD, "level": 1}, "unknown field"),
        ({"game": "friday", "level": 0}, "level"),
        ({"game": "friday", "level": 5}, "level"),
        ({"game": "friday", "level": "1"}, "level"),
        ({"game": "friday", "level": True}, "level"),
        ({"game": "friday", "level": 1.0}, "level"),
        ({"game": "friday", "seed": -5}, "seed"),
        ({"game": "friday", "seed": "abc"}, "seed"),
        ({"game": "friday", "players": 4}, "unknown field"),
    ],
)
def test_a_bad_new_game_is_refused_naming_the_problem(api, body: dict[str, Any], named: str) -> None:
    store = api.app.state.store
    before = len(store)
    message = error_of(api.post("/api/games", json=body), 422)
    assert named in message
    assert len(store) == before  # nothing was kept


def test_a_refused_opponent_lists_the_allowed_names_and_builds_nothing(api, monkeypatch) -> None:
    built = []
    monkeypatch.setattr(sessions, "make_seated", lambda *args: built.append(args))
    response = api.post("/api/games", json={**NEW_CARD, "opponents": ["friday13_env.friday13.agents:RandomAgent"]})
    error_of(response, 422)
    assert "random" in response.json()["allowed"]
    assert "friday13_env.friday13.agents:RandomAgent" not in response.json()["allowed"]
    assert built == []


@pytest.mark.parametrize(
    ("content", "named"),
    [
        (b"{not json", "not JSON"),
        (b"\xff\xfe\x00", "not JSON"),
        (b"[1, 2]", "object"),
        (b'"friday13"', "object"),
        (b"null", "object"),
        (b"3", "object"),
        (b"[" * 2000 + b"]" * 2000, None),  # deep nesting: refused (as not JSON or not an object), never a 500
    ],
)
def test_a_body_that_is_not_a_json_object_is_refused(api, content: bytes, named: str | None) -> None:
    response = api.post("/api/games", content=content, headers={"content-type": "application/json"})
    message = error_of(response, 422)
    if named is not None:
        assert named in message


def test_a_long_body_is_refused_with_413(api) -> None:
    body = {"game": "friday", "level": 1, "padding": "x" * MAX_BODY_BYTES}
    assert str(MAX_BODY_BYTES) in error_of(api.post("/api/games", json=body), 413)

    def chunks():  # no content-length: the server must stop reading by itself
        for _ in range(10):
            yield b" " * 1000

    chunked = api.post("/api/games", content=chunks(), headers={"content-type": "application/json"})
    assert str(MAX_BODY_BYTES) in error_of(chunked, 413)
    game = solo_game(api, seed=1)
    error_of(api.post(f"/api/games/{game.id}/moves", json={"action": 0, "pad": "y" * 5000}), 413)
    assert api.get(f"/api/games/{game.id}").json()["count"] == 1


def test_a_body_just_under_the_limit_is_read(api) -> None:
    body = b'{"game": "friday", "level": 1}'
    padded = body + b" " * (MAX_BODY_BYTES - len(body))
    assert len(padded) == MAX_BODY_BYTES
    response = api.post("/api/games", content=padded, headers={"content-type": "application/json"})
    assert response.status_code == 201


@pytest.fixture
def card(api) -> Game:
    return card_game(api, players=4, rounds=1, opponents=["random"], seed=11)


def test_an_illegal_move_is_refused_with_the_legal_moves(api, card: Game) -> None:
    legal = card.legal
    illegal = next(action for action in range(get_deck("standard").num_actions) if action not in legal)
    response = api.post(f"/api/games/{card.id}/moves", json={"action": illegal, "since": len(card.frames)})
    message = error_of(response, 409)
    assert str(illegal) in message
    assert response.json()["legal"] == legal
    for action in (-1, 18, 10**12):
        response = api.post(f"/api/games/{card.id}/moves", json={"action": action, "since": len(card.frames)})
        error_of(response, 409)
        assert response.json()["legal"] == legal
    assert api.get(f"/api/games/{card.id}").json()["count"] == len(card.frames)  # nothing was played


@pytest.mark.parametrize(
    "spoil",
    [
        str,
        float,
        lambda action: True,
        lambda action: False,
        lambda action: None,
        lambda action: [action],
        lambda action: {"action": action},
    ],
    ids=["string", "float", "true", "false", "null", "list", "object"],
)
def test_a_move_that_is_not_an_integer_is_refused(api, card: Game, spoil) -> None:
    sent = spoil(card.legal[0])  # a legal move, sent as something other than an integer
    response = api.post(f"/api/games/{card.id}/moves", json={"action": sent, "since": len(card.frames)})
    error_of(response, 409)
    assert response.json()["legal"] == card.legal
    assert api.get(f"/api/games/{card.id}").json()["count"] == len(card.frames)


def test_a_bool_is_not_taken_for_action_one(api) -> None:
    """``True == 1`` in Python: a solo position where 1 is legal must still refuse ``true``."""
    game = solo_game(api, level=1, seed=2)
    assert 1 in game.legal
    error_of(api.post(f"/api/games/{game.id}/moves", json={"action": True, "since": 1}), 409)
    assert api.get(f"/api/games/{game.id}").json()["count"] == 1


@pytest.mark.parametrize(
    ("body", "status", "named"),
    [
        ({}, 422, "action"),
        ({"since": 0}, 422, "action"),
        ({"action": 0, "extra": 1}, 422, "unknown field"),
    ],
)
def test_a_malformed_move_is_refused(api, card: Game, body: dict[str, Any], status: int, named: str) -> None:
    assert named in error_of(api.post(f"/api/games/{card.id}/moves", json=body), status)
    assert api.get(f"/api/games/{card.id}").json()["count"] == len(card.frames)


def test_a_move_with_a_non_object_body_is_refused(api, card: Game) -> None:
    for content in (b"[3]", b"3", b"{"):
        sent = api.post(f"/api/games/{card.id}/moves", content=content, headers={"content-type": "application/json"})
        error_of(sent, 422)
    # Anything but JSON is refused before it is read (a form of another web site cannot post JSON unasked).
    assert "application/json" in error_of(api.post(f"/api/games/{card.id}/moves", content=b"action=3"), 415)
    form = api.post(f"/api/games/{card.id}/moves", data={"action": "3"})
    assert "application/json" in error_of(form, 415)
    assert api.get(f"/api/games/{card.id}").json()["count"] == len(card.frames)


@pytest.mark.parametrize("since", ["x", -1, 1.5, True, None, "1"])  # an integer ahead: 409 (test_review_0_16)
def test_a_move_with_a_bad_since_is_refused_and_not_played(api, card: Game, since: Any) -> None:
    response = api.post(f"/api/games/{card.id}/moves", json={"action": card.legal[0], "since": since})
    assert "since" in error_of(response, 422)
    # A refused request changes nothing: the move was not played.
    assert api.get(f"/api/games/{card.id}").json()["count"] == len(card.frames)


def test_moves_after_the_game_is_over_are_refused(api) -> None:
    game = card_game(api, players=3, rounds=1, opponents=["random"], seed=8)
    game.play_out(chooser(8))
    assert "over" in error_of(
        api.post(f"/api/games/{game.id}/moves", json={"action": 0, "since": len(game.frames)}), 409
    )
    assert api.get(f"/api/games/{game.id}").json()["count"] == len(game.frames)
    solo = solo_game(api, level=1, seed=8)
    solo.play_out(chooser(9))
    response = api.post(f"/api/games/{solo.id}/moves", json={"action": 0, "since": len(solo.frames)})
    assert "over" in error_of(response, 409)
    assert response.json()["legal"] == []


def test_a_hint_after_the_game_is_over_is_refused(api) -> None:
    game = card_game(api, players=3, rounds=1, opponents=["random"], seed=9)
    game.play_out(chooser(9))
    error_of(api.get(f"/api/games/{game.id}/hint"), 409)
    solo = solo_game(api, level=1, seed=9)
    solo.play_out(chooser(10))
    error_of(api.get(f"/api/games/{solo.id}/hint"), 409)


@pytest.mark.parametrize(
    ("method", "suffix"),
    [("get", ""), ("post", "/moves"), ("get", "/hint"), ("get", "/replay"), ("get", "/replay.html")],
)
@pytest.mark.parametrize("key", ["nope", "x" * 500, "%00", "' OR 1=1 --", "%2e%2e"])
def test_an_unknown_game_id_is_404(api, method: str, suffix: str, key: str) -> None:
    path = f"/api/games/{key}{suffix}"
    response = api.post(path, json={"action": 0}) if method == "post" else api.get(path)
    message = error_of(response, 404)
    assert len(message) < 400  # a long id is not echoed in full


@pytest.mark.parametrize("since", ["-1", "abc", "1.5", "", "1e3", "9999999", "0x1", " 1", "2"])
def test_a_bad_since_in_the_query_is_refused(api, since: str) -> None:
    game = solo_game(api, level=1, seed=12)
    assert game.responses[0]["count"] == 1
    assert "since" in error_of(api.get(f"/api/games/{game.id}", params={"since": since}), 422)


def test_since_returns_the_frames_from_there_on(api, card: Game) -> None:
    card.move(card.legal[0])
    full = api.get(f"/api/games/{card.id}").json()
    assert full["frames"] == card.frames
    assert full["count"] == len(card.frames)
    for since in range(len(card.frames) + 1):
        part = api.get(f"/api/games/{card.id}", params={"since": str(since)}).json()
        assert part["since"] == since
        assert part["frames"] == card.frames[since:]


def test_leaving_a_game_drops_it(api) -> None:
    game = solo_game(api, level=1, seed=13)
    assert api.delete(f"/api/games/{game.id}").status_code == 204
    error_of(api.get(f"/api/games/{game.id}"), 404)
    assert api.delete(f"/api/games/{game.id}").status_code == 204  # leaving twice is harmless


# -- isolation and determinism --------------------------------------------------------------------------------
def test_two_games_with_the_same_seed_do_not_affect_each_other(api) -> None:
    one = card_game(api, players=4, rounds=1, opponents=["random"], seed=2024)
    two = card_game(api, players=4, rounds=1, opponents=["random"], seed=2024)
    assert one.id != two.id
    assert one.frames == two.frames  # the same deal ...
    assert len(one.legal) >= 2
    first = api.get(f"/api/games/{one.id}").json()
    low, high = one.legal[0], one.legal[-1]
    one.move(low)
    two.move(high)  # ... played differently
    assert one.frames[1]["move"]["action"] == low
    assert two.frames[1]["move"]["action"] == high
    assert one.frames != two.frames
    one_after = api.get(f"/api/games/{one.id}").json()
    two_after = api.get(f"/api/games/{two.id}").json()
    assert one_after["frames"] == one.frames
    assert two_after["frames"] == two.frames
    # The first game's history is untouched by the second's moves.
    assert one_after["frames"][: first["count"]] == first["frames"]
    two.play_out(chooser(1))
    assert api.get(f"/api/games/{one.id}").json()["frames"] == one.frames
    assert not api.get(f"/api/games/{one.id}").json()["status"]["over"]
    # One game's id never reaches another's frames, and a near miss of an id is no id.
    assert api.get(f"/api/games/{two.id}").json()["frames"] == two.frames
    near = one.id[:-1] + ("A" if one.id[-1] != "A" else "B")
    error_of(api.get(f"/api/games/{near}"), 404)


def test_the_same_seed_and_moves_give_identical_frames(api) -> None:
    def played(seed: int) -> list[dict[str, Any]]:
        game = card_game(api, players=5, rounds=2, opponents=["random", "cautious", "majority", "ppo-v4"], seed=seed)
        game.play_out(chooser(99))
        return [{key: value for key, value in response.items() if key != "id"} for response in game.responses], api.get(
            f"/api/games/{game.id}/replay"
        ).json()

    first, first_record = played(31)
    second, second_record = played(31)
    assert first == second
    assert first_record == second_record
    other, _ = played(32)
    assert other[0]["frames"] != first[0]["frames"]

    def solo(seed: int) -> list[dict[str, Any]]:
        game = solo_game(api, level=2, seed=seed)
        game.play_out(chooser(7))
        return game.frames

    assert solo(5) == solo(5)


# -- the store's bounds ---------------------------------------------------------------------------------------
class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_store_refuses_a_game_over_its_bound_until_one_expires() -> None:
    clock = FakeClock()
    store = SessionStore(max_sessions=2, idle_seconds=10, clock=clock)
    with client(store) as api:
        first = solo_game(api, level=1, seed=1)
        clock.now += 4
        second = solo_game(api, level=1, seed=2)
        message = error_of(api.post("/api/games", json={"game": "friday", "level": 1}), 503)
        assert "2 games" in message
        assert len(store) == 2
        clock.now += 6.5  # the first is 10.5 s idle, the second 6.5 s
        third = solo_game(api, level=1, seed=3)
        error_of(api.get(f"/api/games/{first.id}"), 404)
        assert api.get(f"/api/games/{second.id}").status_code == 200
        assert len(store) == 2
        error_of(api.post("/api/games", json={"game": "friday13", **NEW_CARD}), 503)
        clock.now += 9  # the second was used 9 s ago (the GET above), the third 9 s ago too
        assert api.get(f"/api/games/{third.id}").status_code == 200  # a request keeps a game alive
        clock.now += 2  # the second: 11 s idle; the third: 2 s
        fourth = card_game(api, **{key: value for key, value in NEW_CARD.items() if key != "game"})
        error_of(api.get(f"/api/games/{second.id}"), 404)
        assert api.get(f"/api/games/{third.id}").status_code == 200
        assert api.get(f"/api/games/{fourth.id}").status_code == 200


# -- failing bots ---------------------------------------------------------------------------------------------
class Broken:
    name = "broken"

    def act(self, observation) -> int:
        raise RuntimeError("the network melted")


class Cheat:
    def __init__(self, action: object) -> None:
        self.name = "cheat"
        self.action = action

    def act(self, observation) -> object:
        return self.action


@pytest.fixture
def faulty(monkeypatch):
    """A client whose standard table also offers ``broken`` (raises), ``cheat`` (plays an action out of range),
    ``held`` (plays a card the seat does not hold) and ``text`` (answers a string)."""
    seated = sessions.make_seated

    def held() -> Cheat:
        cheat = Cheat(None)

        def act(observation) -> int:
            mask = observation["action_mask"]
            return int(next(action for action, allowed in enumerate(mask) if not allowed))

        cheat.act = act  # type: ignore[method-assign]
        return cheat

    fakes = {"broken": Broken, "cheat": lambda: Cheat(999), "held": held, "text": lambda: Cheat("3")}

    def make_seated(spec, seed, deck):
        return fakes[spec]() if spec in fakes else seated(spec, seed, deck)

    monkeypatch.setattr(sessions, "make_seated", make_seated)
    agents = {deck: list(names) for deck, names in options().card_agents.items()}
    agents["standard"] += list(fakes)
    with client(opts=Options(card_agents=agents)) as api:
        yield api


@pytest.mark.parametrize(
    ("bot", "named"),
    [("broken", "the network melted"), ("cheat", "999"), ("held", "not a legal move"), ("text", "'3'")],
)
def test_a_failing_bot_ends_its_game_and_the_server_goes_on(faulty, bot: str, named: str) -> None:
    # You in seat 0 start round 0: the bot in seat 1 fails answering your first move.
    game = card_game(faulty, players=4, rounds=1, seat=0, opponents=[bot, "random", "random"], seed=4)
    assert game.status["error"] is None
    game.move(game.legal[0])
    error = game.status["error"]
    assert error is not None
    assert bot in error and "(2)" in error
    assert named in error
    assert game.status["over"] is True
    assert game.status["your_turn"] is False
    assert api_state(faulty, game.id)["status"]["error"] == error
    moved = {"action": 0, "since": len(game.frames)}
    assert "over" in error_of(faulty.post(f"/api/games/{game.id}/moves", json=moved), 409)
    error_of(faulty.get(f"/api/games/{game.id}/hint"), 409)
    # The server goes on: other games play, including against the same bot elsewhere at the table.
    other = card_game(faulty, players=3, rounds=1, opponents=["random"], seed=4)
    other.play_out(chooser(4))
    assert other.status == {"over": True, "error": None, "your_turn": False}
    assert faulty.get("/api/options").status_code == 200


def test_a_bot_failing_before_your_first_move_ends_the_game_at_creation(faulty) -> None:
    # Seat 1: the bot in seat 0 starts round 0, during the request that creates the game.
    response = faulty.post(
        "/api/games", json={"game": "friday13", "players": 3, "seat": 1, "opponents": ["broken"], "seed": 1}
    )
    assert response.status_code == 201
    status = response.json()["status"]
    assert status["over"] is True
    assert "broken (1) failed" in status["error"]
    assert "the network melted" in status["error"]
    # The finished (broken) game's record is still a valid replay of what was played.
    replay = faulty.get(f"/api/games/{response.json()['id']}/replay")
    assert replay.status_code == 200
    record = records.from_dict(replay.json())
    assert record.moves == [[]]


def api_state(api, key: str) -> dict[str, Any]:
    response = api.get(f"/api/games/{key}")
    assert response.status_code == 200
    return response.json()


# -- hints ----------------------------------------------------------------------------------------------------
def check_hint(hint: dict[str, Any], legal: list[int], agent: str, basis: str) -> None:
    assert hint["agent"] == agent
    assert hint["basis"] == basis
    assert hint["action"] in legal
    shares = [option["share"] for option in hint["options"]]
    assert math.isclose(sum(shares), 1.0, abs_tol=1e-6)
    assert shares == sorted(shares, reverse=True)
    assert hint["options"][0]["action"] == hint["action"]
    assert hint["share"] == shares[0]
    assert {option["action"] for option in hint["options"]} <= set(legal)
    assert isinstance(hint["label"], str) and hint["label"]
    assert hint["label"] in hint["text"]


def test_a_card_hint_is_the_networks_legal_move_and_is_reproducible(api) -> None:
    game = card_game(api, players=4, rounds=1, seat=1, opponents=["random"], seed=21)
    hint = api.get(f"/api/games/{game.id}/hint").json()
    check_hint(hint, game.legal, "ppo-v4", "probability")
    assert {option["action"] for option in hint["options"]} == set(game.legal)  # a probability for every move
    assert api.get(f"/api/games/{game.id}/hint").json() == hint
    assert api_state(api, game.id)["count"] == len(game.frames)  # a hint plays nothing
    game.move(hint["action"])
    later = api.get(f"/api/games/{game.id}/hint")
    assert later.status_code == 200
    check_hint(later.json(), game.legal, "ppo-v4", "probability")


def test_a_solo_hint_comes_from_the_strongest_network(api) -> None:
    """The solo game's adviser is ``dagger-ppo-v1`` (the leaderboard's strongest at every level): a probability for
    every legal move, the same hint when asked again, nothing played."""
    game = solo_game(api, level=1, seed=21)
    hint = api.get(f"/api/games/{game.id}/hint").json()
    check_hint(hint, game.legal, "dagger-ppo-v1", "probability")
    assert {option["action"] for option in hint["options"]} == set(game.legal)
    assert api.get(f"/api/games/{game.id}/hint").json() == hint
    assert api_state(api, game.id)["count"] == 1


def test_a_german_deck_hint_comes_from_searches_and_is_reproducible(api) -> None:
    """No network plays the German deck: its adviser is ``search``, whose hint is the share of eight seeded
    searches that chose each move, the same when asked again."""
    game = card_game(api, players=3, rounds=1, deck="german", opponents=["random"], seed=21)
    hint = api.get(f"/api/games/{game.id}/hint").json()
    check_hint(hint, game.legal, "search", "searches")
    assert all(round(option["share"] * 8) == option["share"] * 8 for option in hint["options"])
    assert api.get(f"/api/games/{game.id}/hint").json() == hint


# -- the page -------------------------------------------------------------------------------------------------
def test_the_page_is_served_with_a_content_security_policy(api) -> None:
    response = api.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    policy = response.headers["content-security-policy"]
    assert "default-src 'self'" in policy
    assert "script-src" not in policy or "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "<html" in response.text.lower()


@pytest.mark.parametrize(
    ("name", "kind"),
    [("app.js", "javascript"), ("viewer.js", "javascript"), ("cards.js", "javascript"), ("style.css", "text/css")],
)
def test_static_files_are_served(api, name: str, kind: str) -> None:
    response = api.get(f"/static/{name}")
    assert response.status_code == 200
    assert kind in response.headers["content-type"]
    assert len(response.text) > 100


@pytest.mark.parametrize(
    "path",
    [
        b"/static/../record.py",
        b"/static/../sessions.py",
        b"/static/../../web/app.py",
        b"/static/%2e%2e/record.py",
        b"/static/..%2frecord.py",
        b"/static/....//record.py",
        b"/static//etc/passwd",
        b"/static/../__init__.py",
    ],
)
def test_static_files_do_not_reach_outside_their_folder(path: bytes) -> None:
    app = create_app(SessionStore(), options())
    status, body = raw_request(app, path)
    assert status in (400, 403, 404)
    assert b"import" not in body
    assert b"root:" not in body
    # The same way of asking does serve a real static file.
    assert raw_request(app, b"/static/app.js")[0] == 200
