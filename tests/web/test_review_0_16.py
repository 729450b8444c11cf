"""Defects found in the 0.16 review of the web package: malformed ``Host``/``Origin`` headers, host names in
capitals, routes that skipped the ``Host`` check, hints and buttons naming identical solo choices differently,
``friday13 replay`` with no file name, solo replays of agents read as "You", records too long to load, seat
names that collide, and a ``since`` ahead of the game."""

from __future__ import annotations

import json
import shutil
import subprocess
import warnings
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette")

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message=".*httpx.*", category=UserWarning)
    from starlette.testclient import TestClient

from friday13_env.friday import engine as solo_engine
from friday13_env.friday13.engine import Rules
from friday13_env.web import record, views
from friday13_env.web.app import LOOPBACK_NAMES, create_app
from friday13_env.web.sessions import SessionStore, SoloSession
from tests.web.helpers import Game, client, create, options
from tests.web.test_commands import run_command


def error_of(response: Any, status: int) -> str:
    """The error of a refused request, after checking its status and JSON shape."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    message = response.json()["error"]
    assert isinstance(message, str) and message
    return message


def loopback_client(hosts: frozenset[str] = LOOPBACK_NAMES, base_url: str = "http://127.0.0.1:8013") -> TestClient:
    return TestClient(create_app(SessionStore(5, 600), options(), hosts=hosts), base_url=base_url)


# -- 1. a malformed Host or Origin is a 400 / 403, never a 500 ----------------------------------------------
@pytest.mark.parametrize("host", ["[", "[::1", "a]b", "[zz]", "]"])
def test_a_malformed_host_is_refused_like_another_host(host: str) -> None:
    with loopback_client() as api:
        message = error_of(api.get("/api/games/x", headers={"host": host}), 400)
        assert "this server is not" in message and "127.0.0.1" in message  # names the names it answers to
        error_of(api.post("/api/games", json={"game": "friday"}, headers={"host": host}), 400)


@pytest.mark.parametrize("origin", ["http://[", "http://[::1", "http://a]b", "http://[zz]"])
def test_a_malformed_origin_is_refused_like_another_site(origin: str) -> None:
    with client() as api:
        assert "another site" in error_of(
            api.post("/api/games", json={"game": "friday"}, headers={"origin": origin}), 403
        )
        # A request that changes nothing does not look at the Origin.
        assert api.get("/api/options", headers={"origin": origin}).status_code == 200


# -- 2. host names compare without regard to case -----------------------------------------------------------
def test_a_server_named_in_capitals_answers_its_name_in_any_case() -> None:
    with loopback_client(LOOPBACK_NAMES | {"VM"}, "http://VM:8013") as api:
        assert create(api, game="friday", level=1)["id"]
        for host in ("vm:8013", "Vm", "LOCALHOST:8013"):
            assert api.post("/api/games", json={"game": "friday"}, headers={"host": host}).status_code == 201
        error_of(api.get("/api/options", headers={"host": "vms:8013"}), 400)


def test_serve_with_a_host_in_capitals_answers_requests_to_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """``friday13 serve --host VM``: the browser sends ``Host: vm:8013`` (or ``VM:8013``), and both are served."""
    uvicorn = pytest.importorskip("uvicorn")
    from friday13_env.web import command

    served: list[Any] = []
    monkeypatch.setattr(command, "listening_sockets", lambda host, port: [])
    monkeypatch.setattr(uvicorn.Server, "run", lambda server, sockets=None: served.append(server.config.app))
    assert run_command("serve", "--no-browser", "--host", "VM")[0] == 0
    with TestClient(served[0], base_url="http://VM:8013") as api:
        assert api.post("/api/games", json={"game": "friday"}).status_code == 201
        assert api.post("/api/games", json={"game": "friday"}, headers={"host": "vm:8013"}).status_code == 201


# -- 3. every route checks the Host -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("GET", "/api/options"),
        ("GET", "/static/app.js"),
        ("GET", "/static/nope.js"),
        ("GET", "/api/nope"),
        ("HEAD", "/"),
        ("POST", "/api/games"),
    ],
)
def test_every_route_refuses_another_host(method: str, path: str) -> None:
    with loopback_client() as api:
        assert api.get("/api/options").status_code == 200  # its own name is served
        response = api.request(method, path, headers={"host": "evil.example:8013"})
        assert response.status_code == 400
        if method != "HEAD":
            assert "this server is not 'evil.example:8013'" in error_of(response, 400)


def test_the_page_and_its_files_are_served_to_its_own_names() -> None:
    with loopback_client() as api:
        for host in ("127.0.0.1:8013", "localhost:8013", "[::1]:8013"):
            assert api.get("/", headers={"host": host}).status_code == 200
            assert api.get("/static/viewer.js", headers={"host": host}).status_code == 200


# -- 4. a hint names a choice as its button does ------------------------------------------------------------
TWIN_MOVES = [1, 0, 0, 3, 71, 1, 0, 3, 70]
"""Level 1, seed 0: after these moves the first two choices (two identical hazards) read alike."""


def test_identical_choices_each_get_a_distinguishing_label() -> None:
    state = solo_engine.new_game(1, rng := np.random.default_rng(0))
    for action in TWIN_MOVES:
        solo_engine.apply_action(state, action, rng)
    legal = solo_engine.legal_actions(state)
    plain = [views.choice_label(state, action) for action in legal]
    assert plain[0] == plain[1]
    labels = views.distinct_labels(state, legal)
    assert len(set(labels)) == len(labels)
    assert labels[0] != plain[0] and labels[1] != plain[1]  # neither twin keeps the bare text
    assert labels[0].startswith(plain[0]) and labels[1].startswith(plain[1])


def test_a_solo_hint_labels_its_move_and_options_as_the_buttons() -> None:
    with client() as api:
        game = Game(api, create(api, game="friday", level=1, seed=0))
        for action in TWIN_MOVES:
            game.move(action)
        buttons = {choice["action"]: choice["label"] for choice in game.frames[-1]["choices"]}
        hint = api.get(f"/api/games/{game.id}/hint").json()
        assert hint["label"] == buttons[hint["action"]]
        assert f"would play {buttons[hint['action']]}:" in hint["text"]
        assert {option["action"]: option["label"] for option in hint["options"]} == buttons
        # The move, once played, is named as its button was.
        chosen = game.legal[0]
        game.move(chosen)
        assert game.frames[-1]["move"]["text"] == buttons[chosen]


def test_a_replayed_solo_game_names_its_moves_as_the_live_game() -> None:
    session = SoloSession(1, 0)
    for action in [*TWIN_MOVES, 0, 0]:
        session.move(action)
    assert views.solo_frames(session.record()) == session.frames


# -- 5. friday13 replay with no file name -------------------------------------------------------------------
@pytest.mark.parametrize("game", ["", ".", "/", ".."])
def test_replay_of_no_file_name_is_a_usage_error(game: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_command("replay", game)[0] == 2
    error = capsys.readouterr().err
    assert "argument GAME.json" in error and repr(game) in error and "Traceback" not in error


# -- 6 and 8. the viewer's script: the solo player's name, unique seat names ---------------------------------
FAKE_DOM = """
class FakeNode {
  constructor(tag) { this.tag = tag; this.children = []; this.attrs = {}; this.textContent = ""; this.className = ""; }
  setAttribute(key, value) { this.attrs[key] = value; }
  appendChild(child) { this.children.push(child); return child; }
  append(...children) { children.forEach((child) => this.appendChild(child)); }
  replaceChildren(...children) { this.children = children; }
  addEventListener() {}
}
const document = { createElement: (tag) => new FakeNode(tag), createElementNS: (ns, tag) => new FakeNode(tag) };
function texts(node) { return [node.textContent, ...node.children.flatMap(texts)].filter((text) => text); }
"""


def run_viewer(script: str) -> Any:
    """What ``script`` prints (JSON), run by Node after the page's ``cards.js`` and ``viewer.js`` on a fake DOM."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs Node.js to run the viewer's script")
    static = resources.files("friday13_env.web").joinpath("static")
    code = "\n".join(
        [FAKE_DOM, *(static.joinpath(name).read_text(encoding="utf-8") for name in ("cards.js", "viewer.js")), script]
    )
    done = subprocess.run([node, "-"], input=code, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def solo_texts(player: str, won: bool) -> list[str]:
    """Every text the viewer draws for the last frame of a solo game played by ``player``."""
    game = record.SoloRecord(1, 0, player)
    state = solo_engine.new_game(1, rng := np.random.default_rng(0))
    for _ in range(12):
        action = solo_engine.legal_actions(state)[0]
        solo_engine.apply_action(state, action, rng)
        game.move(action)
    view = views.record_view(game)
    frame = {**view["frames"][-1], "done": True, "won": won, "score": 7}
    script = f"""
const box = new FakeNode("div");
renderSoloFrame(box, {json.dumps(view["table"])}, {json.dumps(frame)}, {{}});
console.log(JSON.stringify(texts(box)));
"""
    return list(run_viewer(script))


@pytest.mark.parametrize("won", [True, False])
def test_a_solo_replay_names_the_agent_that_played_it(won: bool) -> None:
    texts = solo_texts("dagger-ppo-v1", won)
    assert any(text.startswith("dagger-ppo-v1: ") for text in texts), texts
    assert not any("You" in text for text in texts), texts
    if won:
        assert any("dagger-ppo-v1 won! Score 7" in text for text in texts), texts


def test_your_own_solo_game_still_reads_you() -> None:
    texts = solo_texts(views.YOU, True)
    assert any(text.startswith("You: ") for text in texts), texts
    assert any("You won! Score 7" in text for text in texts), texts


SEAT_LISTS = [
    ["a (seat 3)", "x", "a", "a"],
    ["a", "a", "a (seat 1)"],
    ["a (seat 2)", "a", "a", "b"],
    ["you", "random (2)", "random (3)"],
    ["x", "x", "y", "y", "z", "z"],
    ["a (seat 2) (seat 1)", "a (seat 2)", "a", "a"],
]


@pytest.mark.parametrize("seats", SEAT_LISTS)
def test_seat_names_are_unique(seats: list[str]) -> None:
    names = views.seat_names(seats)
    assert len(set(names)) == len(names), names
    assert all(name.startswith(label) for name, label in zip(names, seats, strict=True))
    if len(set(seats)) == len(seats):
        assert names == seats  # distinct labels are shown as they are


def test_the_viewer_names_seats_as_the_server() -> None:
    script = f"console.log(JSON.stringify({json.dumps(SEAT_LISTS)}.map(seatNames)));"
    assert run_viewer(script) == [views.seat_names(seats) for seats in SEAT_LISTS]


# -- 7. a record is refused when built or saved with a label too long to load --------------------------------
def test_a_solo_record_with_a_long_player_label_is_refused_when_built() -> None:
    with pytest.raises(ValueError, match=r"'player'.*at most 80 characters"):
        record.SoloRecord(1, 0, "my-agent " + "x" * 80)
    with pytest.raises(ValueError, match=r"'source'.*at most 80 characters"):
        record.SoloRecord(1, 0, "me", source={"note": "x" * 81})
    record.SoloRecord(1, 0, "x" * record.MAX_LABEL)  # exactly the limit is fine


def test_a_record_changed_to_a_long_label_is_refused_when_saved(tmp_path: Path) -> None:
    solo = record.SoloRecord(1, 0, "me")
    solo.player = "p" * 81
    with pytest.raises(ValueError, match=r"'player'.*at most 80 characters"):
        record.save(solo, tmp_path / "solo.json")
    card = record.new_card_record(Rules(num_players=3), ["ann", "bob", "cy"])
    card.seats[1] = "b" * 81
    with pytest.raises(ValueError, match=r"'seats'.*at most 80 characters"):
        record.save(card, tmp_path / "card.json")
    card.seats[1] = "bob"
    card.source["x" * 81] = "y"
    with pytest.raises(ValueError, match=r"'source'.*at most 80 characters"):
        record.save(card, tmp_path / "card.json")
    assert not list(tmp_path.iterdir())  # nothing was written


def test_a_saved_solo_record_loads(tmp_path: Path) -> None:
    game = record.SoloRecord(1, 0, "x" * record.MAX_LABEL, source={"made by": "a test"})
    assert record.load(record.save(game, tmp_path / "solo.json")) == game


# -- 9. a since that is not the game's frame count is a 409 -------------------------------------------------
@pytest.mark.parametrize("ahead", [1, 5, 10**9])
def test_a_move_for_a_position_ahead_of_the_game_is_a_conflict(ahead: int) -> None:
    with client() as api:
        game = Game(api, create(api, game="friday", level=1, seed=1))
        since = len(game.frames) + ahead
        response = api.post(f"/api/games/{game.id}/moves", json={"action": game.legal[0], "since": since})
        message = error_of(response, 409)
        assert f"frame {len(game.frames)}" in message and str(since) in message
        assert response.json()["legal"] == game.legal
        assert api.get(f"/api/games/{game.id}").json()["count"] == len(game.frames)  # nothing was played
