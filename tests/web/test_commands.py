"""``friday13 replay`` and ``friday13 serve``'s option checks, through the console command's ``main``."""

from __future__ import annotations

import io
import json
import socket
from pathlib import Path

import numpy as np
import pytest

from friday13_env.cli import main
from friday13_env.friday13 import engine
from friday13_env.friday13.engine import Rules
from friday13_env.web import record


def played(path: Path, seats: list[str] | None = None) -> record.CardRecord:
    """A finished one-round game of three seats (``seats``, or ann, bob and cy) saved at ``path``."""
    rng = np.random.default_rng(7)
    rules = Rules(num_players=3, num_rounds=1)
    state = engine.new_game(rules, rng)
    game = record.new_card_record(rules, seats or ["ann", "bob", "cy"], {"command": "test"})
    game.start_round(state)
    while not state.round_over:
        action = int(rng.choice(engine.legal_actions(state)))
        engine.play(state, action)
        game.move(action)
    record.save(game, path)
    return game


def run_command(*argv: str) -> tuple[int, str]:
    """``friday13 ARGV``'s exit code (2 for a usage error) and what it wrote to its output."""
    output = io.StringIO()
    try:
        code = main(list(argv), io.StringIO(), output)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, output.getvalue()


def test_replay_writes_a_page_that_holds_every_frame(tmp_path: Path) -> None:
    game = played(tmp_path / "game.json")
    code, output = run_command("replay", str(tmp_path / "game.json"), "--html", str(tmp_path / "out.html"))
    assert code == 0
    assert "wrote" in output and "out.html" in output
    page = (tmp_path / "out.html").read_text(encoding="utf-8")
    start = page.index('<script type="application/json" id="replay-data">') + len(
        '<script type="application/json" id="replay-data">'
    )
    data = json.loads(page[start : page.index("</script>", start)])
    assert data["table"]["seats"] == ["ann", "bob", "cy"]
    assert len(data["frames"]) == 1 + len(game.moves[0])
    assert data["frames"][-1]["round_end"] is not None
    # Nothing to fetch, so it opens from disk: the only address in it is the SVG namespace, a name, never loaded;
    # and its policy forbids loading anything at all.
    assert "://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "default-src 'none'" in page


def test_replay_writes_beside_the_file_by_default(tmp_path: Path) -> None:
    played(tmp_path / "game.json")
    assert run_command("replay", str(tmp_path / "game.json"))[0] == 0
    assert (tmp_path / "game.html").is_file()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not json", "is not JSON"),
        (b'{"format": "something else"}', "not a replay"),
    ],
)
def test_replay_refuses_a_bad_file_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    assert run_command("replay", str(path), "--html", str(tmp_path / "out.html"))[0] == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out.html").exists()


def test_replay_refuses_a_missing_file_and_overwriting_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_command("replay", str(tmp_path / "missing.json"))[0] == 2
    assert "missing.json cannot be read" in capsys.readouterr().err
    played(tmp_path / "game.json")
    assert run_command("replay", str(tmp_path / "game.json"), "--html", str(tmp_path / "game.json"))[0] == 2
    assert "would overwrite the replay file itself" in capsys.readouterr().err
    record.load(tmp_path / "game.json")  # untouched


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--port", "0"], "--port must be in 1..65535"),
        (["--port", "70000"], "--port must be in 1..65535"),
        (["--max-sessions", "0"], "--max-sessions: must be an integer in 1..10000, got '0'"),
        (["--max-sessions", "99999999999999999999"], "--max-sessions: must be an integer in 1..10000"),
        (["--idle-minutes", "-5"], "--idle-minutes: must be an integer in 1..10080, got '-5'"),
        (["--idle-minutes", "10081"], "--idle-minutes: must be an integer in 1..10080"),
    ],
)
def test_serve_refuses_bad_options_before_starting(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert run_command("serve", "--no-browser", *argv)[0] == 2
    assert message in capsys.readouterr().err


class BoundTo:
    """A listening socket's stand-in, bound to ``host`` (what ``every_address_loopback`` reads of it)."""

    def __init__(self, host: str) -> None:
        self.family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.host = host

    def getsockname(self) -> tuple[str, int]:
        return self.host, 8013

    def close(self) -> None:
        pass


@pytest.mark.parametrize(
    ("host", "url", "hosts"),
    [
        ("127.0.0.1", "http://127.0.0.1:8013/", {"127.0.0.1", "localhost", "::1"}),
        ("::1", "http://[::1]:8013/", {"127.0.0.1", "localhost", "::1"}),
        ("0.0.0.0", "http://127.0.0.1:8013/", None),
        ("::", "http://[::1]:8013/", None),
        ("192.168.1.5", "http://192.168.1.5:8013/", {"127.0.0.1", "localhost", "::1", "192.168.1.5"}),
    ],
)
def test_serve_prints_an_address_a_browser_opens_and_answers_only_its_own_names(
    monkeypatch: pytest.MonkeyPatch, host: str, url: str, hosts: set[str] | None
) -> None:
    """An IPv6 address is written in brackets; a server on one address answers only the names that reach it (on
    every address, ``0.0.0.0``, any name may). Nothing is bound (an address may not be this machine's)."""
    pytest.importorskip("uvicorn")
    import uvicorn

    from friday13_env.web import command

    served: list[object] = []
    monkeypatch.setattr(command, "listening_sockets", lambda host, port: [BoundTo(host)])
    monkeypatch.setattr(uvicorn.Server, "run", lambda server, sockets=None: served.append(server.config.app))
    code, output = run_command("serve", "--no-browser", "--host", host)
    assert code == 0 and f"open {url} " in output
    assert served[0].state.hosts == (None if hosts is None else frozenset(hosts))  # type: ignore[attr-defined]


def test_the_command_says_its_version(capsys: pytest.CaptureFixture[str]) -> None:
    import friday13_env

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"friday13-env {friday13_env.__version__}\n"
