"""The server against a hostile or unlucky client: stale and repeated moves, requests from other sites, odd
digits, a full server, repeated hints, failures past the checks, and the solo game's choices that must never
read alike."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette")

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message=".*httpx.*", category=UserWarning)
    from starlette.testclient import TestClient

from friday13_env.friday import engine as solo_engine
from friday13_env.web import hints, sessions, views
from friday13_env.web.app import LOOPBACK_NAMES, create_app
from friday13_env.web.sessions import SessionStore, SoloSession
from tests.web.helpers import Game, client, create, options, raw_request


@pytest.fixture(scope="module")
def api():
    with client() as test_client:
        yield test_client


def card_game(api, **body: Any) -> Game:
    return Game(api, create(api, game="friday13", players=4, rounds=1, opponents=["random"], **body))


def count(api, game: Game) -> int:
    return int(api.get(f"/api/games/{game.id}").json()["count"])


def test_a_move_sent_for_an_older_position_is_refused_and_not_played(api) -> None:
    game = Game(api, create(api, game="friday", level=1, seed=3))
    first = game.legal[0]
    game.move(first)
    # A second tab (or a repeated request) that still shows the first position sends the same move again: in the
    # solo game the same number means another move now, so it must not be played.
    stale = api.post(f"/api/games/{game.id}/moves", json={"action": first, "since": 1})
    assert stale.status_code == 409
    assert "moved on" in stale.json()["error"]
    assert stale.json()["legal"] == game.legal
    assert count(api, game) == len(game.frames)


def test_the_same_move_request_twice_is_played_once(api) -> None:
    game = card_game(api, seed=5)
    body = {"action": game.legal[0], "since": len(game.frames)}
    assert api.post(f"/api/games/{game.id}/moves", json=body).status_code == 200
    assert api.post(f"/api/games/{game.id}/moves", json=body).status_code == 409
    record = api_state_frames(api, game)
    moves_by_you = [frame for frame in record if frame["move"] and frame["move"]["seat"] == 0]
    assert len(moves_by_you) == 1


def api_state_frames(api, game: Game) -> list[dict[str, Any]]:
    return list(api.get(f"/api/games/{game.id}").json()["frames"])


def test_a_move_needs_its_since(api) -> None:
    game = card_game(api, seed=6)
    refused = api.post(f"/api/games/{game.id}/moves", json={"action": game.legal[0]})
    assert refused.status_code == 422
    assert "since" in refused.json()["error"]
    assert count(api, game) == len(game.frames)


@pytest.mark.parametrize("since", ["²", "①", "٣", "1²"])
def test_digits_of_other_scripts_are_not_counts(api, since: str) -> None:
    game = card_game(api, seed=7)
    response = api.get(f"/api/games/{game.id}", params={"since": since})
    assert response.status_code == 422
    assert "since" in response.json()["error"]


def test_a_content_length_in_other_digits_is_refused() -> None:
    """``"²".isdigit()`` is true and ``int("²")`` raises: the header is refused as it is, never a 500 (asked of the
    application directly, as an HTTP client would not send such a header)."""
    app = create_app(SessionStore(5, 600), options())
    headers = ((b"content-type", b"application/json"), (b"content-length", "²".encode("latin-1")))
    status, _ = raw_request(app, b"/api/games", "POST", headers, b'{"game": "friday"}')
    assert status == 413


def test_only_json_bodies_are_read(api) -> None:
    response = api.post("/api/games", content=b'{"game": "friday"}', headers={"content-type": "text/plain"})
    assert response.status_code == 415
    assert "application/json" in response.json()["error"]


def test_requests_that_change_something_from_another_site_are_refused(api) -> None:
    foreign = {"origin": "http://evil.example"}
    response = api.post("/api/games", json={"game": "friday"}, headers=foreign)
    assert response.status_code == 403
    game = card_game(api, seed=8)
    moved = api.post(f"/api/games/{game.id}/moves", json={"action": game.legal[0], "since": 1}, headers=foreign)
    assert moved.status_code == 403
    assert api.delete(f"/api/games/{game.id}", headers=foreign).status_code == 403
    assert count(api, game) == len(game.frames)
    # The page itself sends its own origin, which is this server.
    own = api.post("/api/games", json={"game": "friday"}, headers={"origin": "http://testserver"})
    assert own.status_code == 201


def test_a_full_server_builds_no_game(monkeypatch: pytest.MonkeyPatch) -> None:
    with client(SessionStore(max_sessions=1, idle_seconds=600)) as api:
        create(api, game="friday", level=1)

        def refuse(*args: object, **kwargs: object) -> None:
            raise AssertionError("a game was built on a full server")

        monkeypatch.setattr(sessions.CardSession, "from_request", classmethod(refuse))
        monkeypatch.setattr(sessions.SoloSession, "from_request", classmethod(refuse))
        for body in ({"game": "friday13", "players": 6, "opponents": ["search"]}, {"game": "friday", "level": 4}):
            response = api.post("/api/games", json=body)
            assert response.status_code == 503
            assert "1 game already" in response.json()["error"]


def test_a_hint_is_computed_once_per_position(api, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    advise = hints.advise

    def counted(*args: Any, **kwargs: Any) -> hints.Hint:
        calls.append(args[1])
        return advise(*args, **kwargs)

    monkeypatch.setattr(hints, "advise", counted)
    game = Game(api, create(api, game="friday", level=2, seed=4))
    first = api.get(f"/api/games/{game.id}/hint").json()
    assert api.get(f"/api/games/{game.id}/hint").json() == first
    assert len(calls) == 1
    game.move(first["action"])
    api.get(f"/api/games/{game.id}/hint")
    assert len(calls) == 2


def test_a_record_hands_out_copies() -> None:
    session = SoloSession(1, seed=1)
    session.move(session.legal()[0])
    data = session.record().to_dict()
    data["moves"].append(99)
    assert session.record().moves == data["moves"][:-1]
    card = sessions.CardSession.from_request(
        {"game": "friday13", "rounds": 1, "opponents": ["random"], "seed": 1}, options().card_agents
    )
    dealt = card.record().to_dict()
    dealt["deals"][0][0][0] += 5
    dealt["moves"][0].append(3)
    assert card.record().to_dict() != dealt


def test_a_failure_past_the_checks_ends_the_game_with_its_reason(api, monkeypatch: pytest.MonkeyPatch) -> None:
    game = card_game(api, seed=9)

    def broken(*args: object, **kwargs: object) -> dict[str, Any]:
        raise RuntimeError("boom")

    monkeypatch.setattr(views, "card_move", broken)
    answer = api.post(f"/api/games/{game.id}/moves", json={"action": game.legal[0], "since": len(game.frames)})
    assert answer.status_code == 200
    status = answer.json()["status"]
    assert status["over"] is True
    assert "RuntimeError: boom" in status["error"]
    monkeypatch.undo()
    assert api.get(f"/api/games/{game.id}").status_code == 200
    assert api.get(f"/api/games/{game.id}/replay").status_code == 200


def test_an_unexpected_error_is_a_json_500(monkeypatch: pytest.MonkeyPatch) -> None:
    app = create_app(SessionStore(5, 600), options())
    with TestClient(app, raise_server_exceptions=False) as api:
        game = Game(api, create(api, game="friday", level=1, seed=1))

        def broken(self: object, since: int = 0) -> dict[str, Any]:
            raise KeyError("bug")

        monkeypatch.setattr(sessions.Session, "state", broken)
        response = api.get(f"/api/games/{game.id}")
        assert response.status_code == 500
        assert "KeyError" in response.json()["error"]


def test_a_request_to_another_host_name_is_refused() -> None:
    """With the server's host names (``friday13 serve`` gives the loopback names and its ``--host``), a request
    whose ``Host`` is another name is a JSON 400 before any work: a page whose own name was pointed at this machine
    (DNS rebinding) passes the ``Origin`` check, since its origin and host agree, but not this one."""
    app = create_app(SessionStore(5, 600), options(), hosts=LOOPBACK_NAMES)
    with TestClient(app, base_url="http://127.0.0.1:8013") as api:
        assert create(api, game="friday", level=1)["id"]
        rebound = {"host": "evil.example:8013", "origin": "http://evil.example:8013"}
        response = api.post("/api/games", json={"game": "friday", "level": 1}, headers=rebound)
        assert response.status_code == 400 and "this server is not 'evil.example:8013'" in response.json()["error"]
        assert api.get("/api/options").status_code == 200
        assert api.post("/api/games", json={"game": "friday"}, headers={"host": "[::1]:8013"}).status_code == 201
        assert api.post("/api/games", json={"game": "friday"}, headers={"host": "localhost"}).status_code == 201


@pytest.mark.parametrize(("method", "path", "status"), [("GET", "/api/nope", 404), ("PUT", "/api/games", 405)])
def test_an_unknown_path_or_method_is_a_json_error(api, method: str, path: str, status: int) -> None:
    """Every refused request is JSON with its ``error``, an unknown path or method too."""
    response = api.request(method, path)
    assert response.status_code == status and response.json()["error"]


def test_the_person_is_addressed_as_you(api) -> None:
    game = card_game(api, seed=10)
    game.move(game.legal[0])
    mine = [frame["move"]["text"] for frame in game.frames if frame["move"] and frame["move"]["seat"] == 0]
    assert mine and mine[0].startswith("you play ")


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_solo_choices_never_read_alike(level: int) -> None:
    rng = np.random.default_rng(level)
    for game in range(25):
        state = solo_engine.new_game(level, np.random.default_rng([level, game]))
        play = np.random.default_rng([level, game, 1])
        while not state.done:
            frame = views.solo_frame(state)
            labels = [choice["label"] for choice in frame["choices"]]
            assert len(set(labels)) == len(labels), labels
            assert [choice["action"] for choice in frame["choices"]] == solo_engine.legal_actions(state)
            # Favour abilities and targets, where two cards of one name are likeliest.
            legal = solo_engine.legal_actions(state)
            special = [action for action in legal if action >= 5]
            choice = int(rng.choice(special)) if special and rng.random() < 0.7 else int(rng.choice(legal))
            solo_engine.apply_action(state, choice, play)
