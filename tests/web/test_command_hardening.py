"""``friday13 serve`` binds its port before it says where to go or opens a browser, and refuses an empty host;
``friday13 replay`` refuses a page it cannot write before it reads the replay. Each a clean error, exit code 2."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request
import webbrowser
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from friday13_env.web import record
from tests.web.test_commands import run_command

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The addresses a browser was asked to open (none is opened), at once rather than a second later."""
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *args, **kwargs: opened.append(url))
    monkeypatch.setattr(threading, "Timer", _ImmediateTimer)
    return opened


class _ImmediateTimer:
    def __init__(self, interval: float, function: Any, args: Any = (), kwargs: Any = None) -> None:
        self.call = lambda: function(*args, **(kwargs or {}))

    def start(self) -> None:
        self.call()


@pytest.fixture
def no_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting a server fails the test."""

    def served(*args: object, **kwargs: object) -> None:
        raise AssertionError("a server was started")

    monkeypatch.setattr(uvicorn, "run", served)
    monkeypatch.setattr(uvicorn.Server, "run", served)


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port another program listens on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield int(other.getsockname()[1])


def test_serve_on_a_busy_port_is_a_clean_error_with_no_address_and_no_browser(
    busy_port: int, browser: list[str], no_server: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """The port is bound first: taken, the command exits 2 naming it, without printing an address to open or
    opening a browser on the other program's server."""
    code, printed = run_command("serve", "--host", "127.0.0.1", "--port", str(busy_port))
    assert code == 2
    assert "open" not in printed and browser == []
    assert f"port {busy_port} on 127.0.0.1 is in use; stop what uses it or choose another --port" in (
        capsys.readouterr().err
    )


def test_serve_on_an_address_that_is_not_this_machines_is_a_clean_error(
    browser: list[str], no_server: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, printed = run_command("serve", "--host", "no-such-host.invalid", "--port", str(_free_port()))
    assert code == 2 and printed == "" and browser == []
    assert "cannot listen on no-such-host.invalid port" in capsys.readouterr().err


@pytest.mark.parametrize("host", ["", " ", "\t"])
def test_serve_refuses_an_empty_host(
    host: str, browser: list[str], no_server: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty ``--host`` would listen on every address while the address printed has no host: refused, saying
    which hosts to give."""
    code, printed = run_command("serve", "--host", host, "--port", str(_free_port()))
    assert code == 2 and printed == "" and browser == []
    error = capsys.readouterr().err
    assert f"argument --host: empty ({host!r}); give an address such as 127.0.0.1" in error, error
    assert "0.0.0.0 for every address" in error


def test_serve_serves_on_the_port_it_bound_and_frees_it(monkeypatch: pytest.MonkeyPatch, browser: list[str]) -> None:
    """A real server on a free loopback port: it prints the address, the browser is sent there, the page answers
    there, and once stopped the port is free again."""
    servers: list[Any] = []
    run = uvicorn.Server.run

    def recorded(self: Any, sockets: Any = None) -> None:
        servers.append(self)
        run(self, sockets=sockets)

    monkeypatch.setattr(uvicorn.Server, "run", recorded)
    port = _free_port()
    result: list[tuple[int, str]] = []
    thread = threading.Thread(
        target=lambda: result.append(run_command("serve", "--host", "127.0.0.1", "--port", str(port))), daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 20
    while not (servers and servers[0].started):
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}/"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.status == 200
    finally:
        servers[0].should_exit = True
        thread.join(timeout=10)
    assert result == [(0, f"friday13-env: open {url} (Ctrl-C stops the server)\n")]
    assert browser == [url]
    with socket.socket() as again:  # no listener is left (the closed connection may wait in TIME_WAIT: reuse it)
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))
        again.listen()


# -- friday13 replay --------------------------------------------------------------------------------------


@pytest.fixture
def game(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A replay file the command must not read: the output is checked first."""
    path = tmp_path / "game.json"
    path.write_text("{}")
    monkeypatch.setattr(record, "load", lambda source: pytest.fail("the replay was read"))
    return path


def test_replay_refuses_a_folder_as_its_page(game: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    assert run_command("replay", str(game), "--html", str(folder))[0] == 2
    assert f"argument --html: {folder} is a folder; give a file name" in capsys.readouterr().err
    assert list(folder.iterdir()) == []


def test_replay_refuses_a_page_under_a_file(game: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "file.py"
    script.write_text("print()")
    assert run_command("replay", str(game), "--html", str(script / "x.html"))[0] == 2
    assert f"argument --html: cannot create the folder {script}: {script} is a file" in capsys.readouterr().err
    assert script.read_text() == "print()"


def test_replay_refuses_a_page_where_nothing_can_be_written(game: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not Path("/proc").is_dir():
        pytest.skip("no /proc here")
    assert run_command("replay", str(game), "--html", "/proc/nope.html")[0] == 2
    assert "argument --html: cannot write /proc/nope.html: " in capsys.readouterr().err
