"""The web review of 0.18: each test names the defect it pins down.

A replay file's labels could hold terminal escapes, which ``friday13 replay`` printed raw; the page's own file
under ``/static/`` came without the security headers of ``/``; and a full server built a game before refusing it
when two requests came at once (the room was checked, then the game built, then the room taken).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from friday13_env.friday13.engine import Rules
from friday13_env.web import record
from tests.web.test_commands import played, run_command

HOSTILE_LABELS = ["\x1b[2J\x1b[31mowned", "bell\x07", "new\nline", "c1 \x9b2J", "del\x7f"]


def played_file(path: Path) -> dict[str, Any]:
    """A finished one-round game of three seats saved at ``path``; its JSON form."""
    played(path)
    return json.loads(path.read_text())


# -- 4. control characters in a replay's labels ---------------------------------------------------------------


@pytest.mark.parametrize("label", HOSTILE_LABELS)
@pytest.mark.parametrize("where", ["seats", "source key", "source value"])
def test_defect_4_a_replay_label_with_control_characters_is_refused_and_never_printed(
    tmp_path: Path, label: str, where: str
) -> None:
    """``friday13 replay`` printed the page's title, seat labels included: an escape in a hostile file reached the
    terminal."""
    path = tmp_path / "game.json"
    data = played_file(path)
    if where == "seats":
        data["seats"][1] = label
    elif where == "source key":
        data["source"] = {label: "x"}
    else:
        data["source"] = {"command": label}
    path.write_text(json.dumps(data))
    with pytest.raises(record.ReplayError, match="control character"):
        record.load(path)
    code, printed = run_command("replay", str(path), "--html", str(tmp_path / "out.html"))
    assert code == 2
    assert label not in printed and "\x1b" not in printed
    assert not (tmp_path / "out.html").exists()


def test_defect_4_a_solo_replays_player_with_control_characters_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "solo.json"
    solo = record.SoloRecord(1, 5, "You", [], {"made by": "test"})
    record.save(solo, path)
    data = json.loads(path.read_text())
    data["player"] = "\x1b]0;title\x07"
    path.write_text(json.dumps(data))
    with pytest.raises(record.ReplayError, match="control character"):
        record.load(path)


@pytest.mark.parametrize("label", HOSTILE_LABELS)
def test_defect_4_no_record_is_made_or_saved_with_a_label_load_would_refuse(tmp_path: Path, label: str) -> None:
    rules = Rules(num_players=3, num_rounds=1)
    with pytest.raises(ValueError, match="control character"):
        record.new_card_record(rules, ["ann", label, "cy"])
    solo = record.SoloRecord(1, 5, "You", [], {"made by": "test"})
    solo.player = label
    with pytest.raises(ValueError, match="control character"):
        record.save(solo, tmp_path / "solo.json")
    assert not (tmp_path / "solo.json").exists()


def test_defect_4_plain_labels_still_load(tmp_path: Path) -> None:
    """Agent specs as seat labels (options, paths, a space, a pipe) are no control characters."""
    path = tmp_path / "game.json"
    data = played_file(path)
    data["seats"] = ["search:budget=600", "my agents/ppo|v2.npz", "Ünïcode ✓"]
    path.write_text(json.dumps(data))
    assert record.load(path).seats == data["seats"]


# -- 13. and 14. the server ------------------------------------------------------------------------------------


def web() -> Any:
    """The test client helpers (Starlette is the web extra: these tests skip without it)."""
    pytest.importorskip("starlette")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*httpx.*", category=UserWarning)
        from tests.web import helpers
    return helpers


@pytest.mark.parametrize(
    "path", ["/", "/static/index.html", "/static/app.js", "/api/options", "/static/missing.js", "/nowhere"]
)
def test_defect_13_every_response_carries_the_security_headers(path: str) -> None:
    """``/`` sent them; the same page as ``/static/index.html`` did not, so another site could frame it."""
    helpers = web()
    from friday13_env.web.app import SECURITY_HEADERS

    with helpers.client() as api:
        response = api.get(path)
    for header, value in SECURITY_HEADERS.items():
        assert response.headers.get(header) == value, (path, header)


def test_defect_13_a_server_error_carries_the_security_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    helpers = web()
    from starlette.testclient import TestClient

    from friday13_env.web import sessions
    from friday13_env.web.app import create_app

    app = create_app(sessions.SessionStore(5, 600), helpers.options())
    with TestClient(app, raise_server_exceptions=False) as api:
        game = helpers.create(api, game="friday", level=1, seed=1)

        def broken(self: object, since: int = 0) -> dict[str, Any]:
            raise KeyError("bug")

        monkeypatch.setattr(sessions.Session, "state", broken)
        response = api.get(f"/api/games/{game['id']}")
    assert response.status_code == 500
    assert response.headers.get("X-Frame-Options") == "DENY"


def test_defect_14_a_game_being_built_holds_its_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """The room was checked, the game built (seconds, for a network's agents), then the room taken: requests that
    came together all passed the check and all built a game on a full server."""
    helpers = web()
    from friday13_env.web import sessions

    store = sessions.SessionStore(max_sessions=1, idle_seconds=600)
    build = sessions.SoloSession.from_request
    seen: list[str] = []

    def building(cls: type, body: Any) -> Any:
        with pytest.raises(sessions.StoreFull), store.reserved():  # another request finds no room, and builds nothing
            pass
        seen.append("refused")
        return build(body)

    monkeypatch.setattr(sessions.SoloSession, "from_request", classmethod(building))
    with helpers.client(store) as api:
        helpers.create(api, game="friday", level=1)
        assert seen == ["refused"] and len(store) == 1
        response = api.post("/api/games", json={"game": "friday", "level": 1})
        assert response.status_code == 503
        assert seen == ["refused"]  # the full server built nothing


def test_defect_14_a_failed_build_gives_its_place_back() -> None:
    helpers = web()
    from friday13_env.web import sessions

    store = sessions.SessionStore(max_sessions=1, idle_seconds=600)
    with helpers.client(store) as api:
        for _ in range(3):
            response = api.post("/api/games", json={"game": "friday", "level": 99})
            assert response.status_code == 422  # refused while it is built
        assert len(store) == 0
        helpers.create(api, game="friday", level=1)
        assert len(store) == 1


def test_defect_14_a_reservation_keeps_one_game() -> None:
    from friday13_env.web import sessions

    store = sessions.SessionStore(max_sessions=2, idle_seconds=600)
    with store.reserved() as keep:
        key = keep(sessions.SoloSession(1, seed=1))
        with pytest.raises(RuntimeError, match="once"):
            keep(sessions.SoloSession(1, seed=2))
    assert store.get(key) is not None and len(store) == 1
    store.remove(key)
    with store.reserved(), store.reserved(), pytest.raises(sessions.StoreFull), store.reserved():
        pass
    with store.reserved(), store.reserved():  # the places given back: room for two again
        pass
