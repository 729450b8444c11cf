"""Defects a hostile review of the web part found (0.27.0), each pinned here: requests waiting for one busy game
held the server's shared worker threads (so one client stalled every other game), ``Host`` headers that are not a
host and port were answered, and ``serve --host`` and ``replay --html`` took or crashed on spellings they should
refuse."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed")

import anyio.to_thread

from friday13_env.web.app import MAX_WAITING, _host_name, _locked
from friday13_env.web.sessions import RequestError, SoloSession
from tests.web.test_commands import played, run_command
from tests.web.test_review_0_16 import loopback_client


def test_requests_waiting_for_a_busy_game_hold_no_worker_thread_and_are_bounded() -> None:
    """While one request of a game works (a bot's move can take seconds), the others for that game wait without a
    thread of the pool every game shares; more than ``MAX_WAITING`` at once are refused with a 429 at once."""
    session = SoloSession.from_request({"game": "friday", "level": 1, "seed": 0})
    release = threading.Event()

    async def scenario() -> tuple[int, int, list[object]]:
        limiter = anyio.to_thread.current_default_thread_limiter()
        first = asyncio.ensure_future(_locked(session, release.wait))
        await asyncio.sleep(0.1)
        queued = [asyncio.ensure_future(_locked(session, lambda: "done")) for _ in range(MAX_WAITING - 1)]
        await asyncio.sleep(0.1)
        threads = int(limiter.borrowed_tokens)
        try:
            await _locked(session, lambda: "one too many")
            status = 0
        except RequestError as error:
            status = error.status
        release.set()
        return threads, status, list(await asyncio.gather(first, *queued))

    threads, status, results = anyio.run(scenario)
    assert threads == 1  # the working request's alone
    assert status == 429
    assert results == [True, *["done"] * (MAX_WAITING - 1)]
    assert session.waiting == 0  # every place given back


@pytest.mark.parametrize(
    "host",
    [
        "evil.example@127.0.0.1",
        "user:pw@localhost",
        "127.0.0.1/evil",
        "127.0.0.1?x",
        "127.0.0.1#x",
        "127.0.0.1:notaport",
        "127.0.0.1:99999",
        "127.0.0.1:0",
        "[::1",
    ],
)
def test_a_malformed_host_header_is_refused(host: str) -> None:
    assert _host_name(host) is None
    with loopback_client() as api:
        response = api.get("/api/options", headers={"host": host})
        assert response.status_code == 400, response.text


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost:8000", "[::1]:8000", "LOCALHOST"])
def test_a_well_formed_host_header_still_names_the_host(host: str) -> None:
    assert _host_name(host) in ("127.0.0.1", "localhost", "::1")


@pytest.mark.parametrize("host", ["a..b", "x" * 64 + ".example", "127.0.0.1]", "[::1", "[127.0.0.1]", "a[b"])
def test_serve_refuses_a_host_that_is_no_address_or_name(host: str) -> None:
    code, _ = run_command("serve", "--no-browser", "--port", "1", "--host", host)
    assert code == 2


def test_replay_refuses_an_empty_html_name(tmp_path: Path) -> None:
    played(tmp_path / "game.json")
    code, _ = run_command("replay", str(tmp_path / "game.json"), "--html", "")
    assert code == 2
    assert not (tmp_path / "game.html").exists()


def test_replay_refuses_a_symlink_loop_with_a_usage_error(tmp_path: Path) -> None:
    played(tmp_path / "game.json")
    (tmp_path / "loop.json").symlink_to(tmp_path / "loop.json")
    (tmp_path / "loop.html").symlink_to(tmp_path / "loop.html")
    assert run_command("replay", str(tmp_path / "loop.json"))[0] == 2
    assert run_command("replay", str(tmp_path / "game.json"), "--html", str(tmp_path / "loop.html"))[0] == 2


def test_a_refused_html_target_is_shown_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A replay's own (downloaded) name picks the default page name: refused, it is shown escaped, as everywhere."""
    name = "\x1b[31m" + "0" * 247 + ".js"  # its .html sibling is too long a name for the file system
    played(tmp_path / name)
    code, _ = run_command("replay", str(tmp_path / name))
    assert code == 2
    assert "\x1b" not in capsys.readouterr().err
