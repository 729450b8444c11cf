"""Shared by the web tests: a client over a fresh app, and games played to the end through the HTTP API.

Importing this module needs Starlette (the ``web`` extra): each test module skips itself first when it is missing.
"""

from __future__ import annotations

import asyncio
import random
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

with warnings.catch_warnings():
    # Starlette >= 1.x warns that its TestClient will move from httpx to httpx2; httpx is what the dev extra installs.
    warnings.filterwarnings("ignore", message=".*httpx.*", category=UserWarning)
    from starlette.testclient import TestClient

from friday13_env.web.app import create_app
from friday13_env.web.sessions import Options, SessionStore, card_agent_names

_OPTIONS: Options | None = None


def options() -> Options:
    """The default options, built once (building every agent to sort them by deck takes a moment)."""
    global _OPTIONS
    if _OPTIONS is None:
        _OPTIONS = Options(card_agents=card_agent_names())
    return _OPTIONS


@contextmanager
def client(store: SessionStore | None = None, opts: Options | None = None) -> Iterator[TestClient]:
    """A test client of a fresh app; a server exception fails the test (never swallowed as a 500)."""
    with TestClient(create_app(store, opts or options())) as test_client:
        yield test_client


def create(api: TestClient, **body: Any) -> dict[str, Any]:
    """A new game (201), its id and first frames."""
    response = api.post("/api/games", json=body)
    assert response.status_code == 201, response.text
    return response.json()


class Game:
    """A game played through the API, keeping every frame the client was sent, in order."""

    def __init__(self, api: TestClient, created: dict[str, Any]) -> None:
        self.api = api
        self.id = created["id"]
        self.table = created["table"]
        self.frames: list[dict[str, Any]] = list(created["frames"])
        self.responses: list[dict[str, Any]] = [created]
        self.status = created["status"]
        assert created["count"] == len(self.frames)

    @property
    def legal(self) -> list[int]:
        return self.frames[-1]["legal"]

    def move(self, action: int) -> dict[str, Any]:
        """Play ``action``, asking for the frames not seen yet; they extend ``frames``."""
        response = self.api.post(f"/api/games/{self.id}/moves", json={"action": action, "since": len(self.frames)})
        assert response.status_code == 200, response.text
        data = response.json()
        assert data["since"] == len(self.frames)
        self.frames.extend(data["frames"])
        assert data["count"] == len(self.frames)
        self.responses.append(data)
        self.status = data["status"]
        return data

    def play_out(self, choose: Callable[[list[int]], int], limit: int = 2_000) -> None:
        """Move with ``choose(legal)`` until the game is over."""
        for _ in range(limit):
            if self.status["over"]:
                return
            assert self.status["your_turn"]
            self.move(choose(self.legal))
        raise AssertionError(f"the game did not end in {limit} moves")


def chooser(seed: int) -> Callable[[list[int]], int]:
    """A seeded uniform choice among the legal moves."""
    rng = random.Random(seed)
    return lambda legal: rng.choice(legal)


def raw_request(
    app: Any, path: bytes, method: str = "GET", headers: tuple[tuple[bytes, bytes], ...] = (), body: bytes = b""
) -> tuple[int, bytes]:
    """``method path`` sent to the application exactly as written: a path an HTTP client would normalise (``..``)
    or a header it would refuse to send. Returns the status and the body."""
    sent: list[dict[str, Any]] = []
    requested = False
    finished = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": body, "more_body": False}
        await finished.wait()  # then the client goes away, as a real one does
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            finished.set()

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path.decode("latin-1"),
        "raw_path": path,
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"testserver"), *headers],
        "client": ("127.0.0.1", 1),
        "server": ("testserver", 80),
    }
    asyncio.run(app(scope, receive, send))
    status = next(message["status"] for message in sent if message["type"] == "http.response.start")
    return status, b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")
