"""Defects a hostile review of the web surface found (0.20.0), each pinned here: the address ``serve`` sends a
browser to when it listens on every address, file names and labels that drive or fool the terminal, and a full
server's answer to a request for no game it has."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from friday13_env.core.checks import has_control_character, plain_text, printable
from friday13_env.friday13.engine import Rules
from friday13_env.web import record
from friday13_env.web.command import every_address_loopback, listening_sockets
from tests.web.test_commands import played, run_command
from tests.web.test_review_0_18_web import web


def bound(host: str) -> list[socket.socket]:
    try:
        return listening_sockets(host, 0)
    except OSError as error:  # a machine without IPv6
        pytest.skip(f"cannot listen on {host}: {error}")


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("0.0.0.0", "127.0.0.1"), ("0", "127.0.0.1"), ("::", "::1"), ("::0", "::1"), ("127.0.0.1", None)],
)
def test_a_server_on_every_address_is_opened_at_a_loopback_it_listens_on(host: str, loopback: str | None) -> None:
    """``--host ::`` listens on IPv6 only, yet the page was opened at ``127.0.0.1``, where another program may
    answer; ``--host 0`` (every IPv4 address) was not seen as every address and refused other names."""
    sockets = bound(host)
    try:
        assert every_address_loopback(sockets) == loopback
    finally:
        for listening in sockets:
            listening.close()


@pytest.mark.parametrize("text", ["\u202eevil\u202c", "ppo-v4\u200b", "\ufeffbom", "soft\xadhyphen", "\x1b[2J"])
def test_format_characters_are_never_printed_from_a_file(text: str) -> None:
    """Bidirectional overrides and zero-width characters reorder what follows or make one label pass for another:
    they are refused as control characters are, and escaped where a name must be shown."""
    assert has_control_character(text) and not plain_text(text, 200)
    assert printable(text) == repr(text)
    with pytest.raises(ValueError, match="control character"):
        record.new_card_record(Rules(num_players=3, num_rounds=1), ["ann", text, "cy"])
    assert printable("ppo-v4 (é, 中)") == "ppo-v4 (é, 中)"


def test_a_replay_files_name_never_drives_the_terminal(tmp_path: Path) -> None:
    """A downloaded file named with an escape sequence: ``replay`` names it escaped, read or not."""
    name = tmp_path / "x\x1b[2J\x1b[31mFAKE.json"
    played(name)
    code, printed = run_command("replay", str(name))
    assert code == 0 and "\x1b" not in printed and "\\x1b[2J" in printed
    broken = tmp_path / "bad\x1b]0;TITLE\x07.json"
    broken.write_text("{")
    code, _ = run_command("replay", str(broken))
    assert code == 2
    with pytest.raises(record.ReplayError) as error:
        record.load(broken)
    assert "\x1b" not in str(error.value) and "\x07" not in str(error.value)


def test_a_full_server_answers_a_request_for_no_game_with_a_422() -> None:
    """The ``game`` field is checked before a place is looked for: a full server said 503 to a request it would
    refuse anyway. Leaving a game that is not there is a 204, as the docs now say."""
    helpers = web()
    from starlette.testclient import TestClient

    from friday13_env.web import sessions
    from friday13_env.web.app import create_app

    app = create_app(sessions.SessionStore(1, 600), helpers.options())
    with TestClient(app) as api:
        helpers.create(api, game="friday", level=1, seed=1)
        full = api.post("/api/games", json={"game": "friday", "level": 1})
        assert full.status_code == 503
        bogus = api.post("/api/games", json={"game": "bogus"})
        assert bogus.status_code == 422 and "game must be 'friday13' or 'friday'" in bogus.text
        assert api.delete("/api/games/unknown").status_code == 204
