"""``friday13 serve`` closes a connection that does not deliver a whole request in time: one that sends nothing, or
sends its request a byte at a time (slowloris), would otherwise hold its place on the server forever. Each test
talks to a real server on a loopback port through raw sockets."""

from __future__ import annotations

import argparse
import http.client
import logging
import socket
import threading
import time
import webbrowser
from collections.abc import Iterator
from typing import Any

import pytest

from tests.web.test_commands import run_command

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")

from friday13_env.web import command  # noqa: E402  (after the skip: serve needs the web extra)
from friday13_env.web.sessions import SoloSession  # noqa: E402

TIMEOUT = 0.3
"""The servers' request timeout here, in seconds: short, so that the tests are quick."""
WAIT = 5.0
"""How long a test waits for the server to close a connection before it fails."""


class Server:
    def __init__(self, port: int, server: Any) -> None:
        self.port = port
        self.server = server

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=WAIT)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    """``friday13 serve --request-timeout 0.3`` on a free loopback port, as a person starts it (no browser)."""
    servers: list[Any] = []
    run = uvicorn.Server.run

    def recorded(self: Any, sockets: Any = None) -> None:
        servers.append(self)
        run(self, sockets=sockets)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(uvicorn.Server, "run", recorded)
        patch.setattr(webbrowser, "open", lambda *args, **kwargs: None)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        argv = ("serve", "--no-browser", "--port", str(port), "--request-timeout", str(TIMEOUT))
        thread = threading.Thread(target=lambda: run_command(*argv), daemon=True)
        thread.start()
        deadline = time.monotonic() + 20
        while not (servers and servers[0].started):
            assert thread.is_alive(), "the server did not start"
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        try:
            yield Server(port, servers[0])
        finally:
            servers[0].should_exit = True
            thread.join(timeout=10)


def closed_after(connection: socket.socket, trickle: bytes = b"") -> float:
    """Seconds until the server closes ``connection`` (reading whatever it answers), while ``trickle`` is sent one
    byte every 50 ms; fails the test if it stays open for ``WAIT`` seconds."""
    start = time.monotonic()
    connection.settimeout(0.05)
    sent = 0
    while time.monotonic() - start < WAIT:
        try:
            if not connection.recv(4096):
                return time.monotonic() - start
        except TimeoutError:
            pass
        except ConnectionResetError:
            return time.monotonic() - start
        if sent < len(trickle):
            try:
                connection.sendall(trickle[sent : sent + 1])
            except (BrokenPipeError, ConnectionResetError):
                return time.monotonic() - start
            sent += 1
    raise AssertionError(f"the server kept the connection open for {WAIT} s (sent {sent} of {len(trickle)} bytes)")


def test_a_connection_that_sends_nothing_is_closed(server: Server) -> None:
    with server.connect() as idle:
        assert TIMEOUT * 0.8 <= closed_after(idle) < TIMEOUT + 1.5


def test_a_request_sent_a_byte_at_a_time_is_closed_before_it_ends(server: Server) -> None:
    """Slowloris: every byte arrives in time for an idle timeout, the request never does."""
    headers = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: " + b"x" * 200 + b"\r\n\r\n"
    with server.connect() as slow:
        assert closed_after(slow, headers) < TIMEOUT + 1.5


def test_a_body_that_never_ends_is_closed_and_logs_no_error(server: Server) -> None:
    """The application, reading the body, sees the client go: a refusal sent nowhere, not an error in the log."""
    errors = _Records()
    uvicorn_log = logging.getLogger("uvicorn.error")
    uvicorn_log.addHandler(errors)
    try:
        with server.connect() as slow:
            slow.sendall(
                b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n{"
            )
            assert closed_after(slow, b'"game": "friday"   ') < TIMEOUT + 1.5
        time.sleep(0.2)  # the application's task ends
    finally:
        uvicorn_log.removeHandler(errors)
    assert errors.messages == []


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_an_idle_connection_after_an_answer_is_closed_and_slowloris_after_one_too(server: Server) -> None:
    """The deadline starts again after each answer: a second request on the same connection must arrive in time."""
    with server.connect() as keep:
        keep.sendall(b"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += keep.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200 ")
        assert closed_after(keep, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X: y\r\n" * 40) < TIMEOUT + 1.5


def test_pages_and_requests_on_a_kept_connection_are_answered(server: Server) -> None:
    """Normal use: the page, its files and the API over one keep-alive connection, and a game made and played."""
    client = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT)
    try:
        for path in ("/", "/static/index.html", "/api/options"):
            client.request("GET", path)
            response = client.getresponse()
            assert response.status == 200, path
            response.read()
        client.request("POST", "/api/games", body=b'{"game": "friday", "level": 1}', headers=_JSON)
        response = client.getresponse()
        assert response.status == 201
        response.read()
    finally:
        client.close()


def test_an_answer_that_takes_longer_than_the_timeout_still_comes(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deadline is for the request to arrive, not for the server to answer it (a game that loads networks
    can take seconds to build)."""
    build = SoloSession.from_request

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(TIMEOUT * 3)
        return build(*args, **kwargs)

    monkeypatch.setattr(SoloSession, "from_request", slow)
    client = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT)
    try:
        started = time.monotonic()
        client.request("POST", "/api/games", body=b'{"game": "friday", "level": 2}', headers=_JSON)
        response = client.getresponse()
        assert response.status == 201, response.read()
        assert time.monotonic() - started >= TIMEOUT * 3
        response.read()
    finally:
        client.close()


def test_a_request_that_arrives_in_pieces_within_the_timeout_is_answered(server: Server) -> None:
    with server.connect() as pieces:
        for part in (b"GET /api/options HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n", b"Connection: close\r\n\r\n"):
            pieces.sendall(part)
            time.sleep(TIMEOUT / 6)
        answer = b""
        while chunk := pieces.recv(65536):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 200 ") and b'"advisers"' in answer


_JSON = {"Content-Type": "application/json"}


# -- the option ---------------------------------------------------------------------------------------------


def test_the_default_request_timeout_is_a_few_seconds() -> None:
    parser = argparse.ArgumentParser()
    command.add_serve_arguments(parser)
    assert parser.parse_args([]).request_timeout == command.DEFAULT_REQUEST_TIMEOUT == 10.0
    assert parser.parse_args(["--request-timeout", "2.5"]).request_timeout == 2.5
    assert "default 10" in parser.format_help()


@pytest.mark.parametrize("value", ["0", "-1", "0.05", "3601", "1e9", "nan", "inf", "abc", "", " ", "１"])
def test_a_bad_request_timeout_is_refused_before_the_server_starts(
    value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def served(*args: object, **kwargs: object) -> None:
        raise AssertionError("a server was started")

    monkeypatch.setattr(uvicorn.Server, "run", served)
    monkeypatch.setattr(webbrowser, "open", served)
    code, printed = run_command("serve", "--no-browser", "--port", "1", "--request-timeout", value)
    assert code == 2 and printed == ""
    error = capsys.readouterr().err
    assert "argument --request-timeout: must be a number of seconds in 0.1..3600, got " in error, error
