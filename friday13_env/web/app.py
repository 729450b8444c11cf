"""The web server of ``friday13 serve``: a Starlette application over the sessions (needs the ``web`` extra).

The page talks JSON to a small API; the client never names a file, a checkpoint or a Python object, only
agent names from the list ``/api/options`` sends, and every request is checked before any work:

=====================================  ===================================================================
``GET /``                              the page (``static/index.html``)
``GET /api/options``                   tables, levels and the agent names the page may choose from
``POST /api/games``                    a new game: ``{"game": "friday13", "players": 4, ...}`` or
                                       ``{"game": "friday", "level": 1}``
``GET /api/games/{id}?since=k``        the game's frames from ``k`` on, as the person sees them
``POST /api/games/{id}/moves``         ``{"action": a, "since": k}``: play a move; the bots answer
``GET /api/games/{id}/hint``           the adviser's move and how sure it is
``GET /api/games/{id}/replay``         the finished game's replay file (JSON); ``.../replay.html``: its viewer
``DELETE /api/games/{id}``             leave the game
=====================================  ===================================================================

Every answer, the page's files under ``/static/`` included, carries ``SECURITY_HEADERS``. A refused request is a
4xx with ``{"error": message}`` (an illegal move also lists the legal moves); a bot
that fails ends its own game (the status says why) and the server goes on. ``friday13 serve`` serves it through
``deadline_protocol``: a connection that does not deliver a whole request in time is closed.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from friday13_env.core.extras import WEB_EXTRA, missing_extra

try:
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.datastructures import Headers, MutableHeaders
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
    from uvicorn.protocols.http.h11_impl import H11Protocol
except ModuleNotFoundError as missing:
    if not missing_extra(missing, __name__, WEB_EXTRA):
        raise
    raise missing from None

from friday13_env.web import replay_html
from friday13_env.web.record import Record
from friday13_env.web.sessions import (
    CardSession,
    Options,
    RequestError,
    Session,
    SessionStore,
    SoloSession,
    card_agent_names,
)

DIGITS = re.compile(r"[0-9]{1,6}")
"""A count as the API takes it in a query or a header: ASCII digits, not any Unicode digit (``"²".isdigit()``)."""
MAX_BODY_BYTES = 4_096
"""No request of the page is longer; a longer body is refused unread (413)."""
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}

Handler = Callable[[Request], Awaitable[Response]]


LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
"""The names a browser on this machine reaches a loopback server by (``friday13 serve``'s default host)."""


def create_app(
    store: SessionStore | None = None, options: Options | None = None, hosts: frozenset[str] | None = None
) -> Starlette:
    """The application; ``store`` holds the games (a fresh bounded store by default). With ``hosts``, a request to
    any path whose ``Host`` names another server (compared without regard to case, as host names are) is refused
    (400), so that a page whose own name was pointed at this machine (DNS rebinding) is not this server's page;
    ``friday13 serve`` gives the loopback names and its ``--host``."""
    if hosts is not None:
        hosts = frozenset(name.lower() for name in hosts)  # urlsplit gives the Host's name in lower case
    store = store if store is not None else SessionStore()
    options = options if options is not None else Options(card_agents=card_agent_names())
    page = resources.files("friday13_env.web").joinpath("static").joinpath("index.html").read_text(encoding="utf-8")

    async def index(request: Request) -> Response:
        return HTMLResponse(page)  # SecurityHeaders adds the headers, to this page and every other answer

    async def get_options(request: Request) -> Response:
        return JSONResponse(options.to_dict())

    async def create(request: Request) -> Response:
        body = await _json_body(request)
        game = body.get("game")
        if game not in ("friday13", "friday"):
            raise RequestError(f"game must be 'friday13' or 'friday', got {game!r}")
        # The place is taken before any work and held while the game is built (seconds, for a network's agents), so
        # requests that come together cannot all pass a check of the room and all build a game on a full server; a
        # build that fails gives the place back.
        with store.reserved() as keep:
            if game == "friday13":
                session: Session = await run_in_threadpool(CardSession.from_request, body, options.card_agents)
            else:
                session = await run_in_threadpool(SoloSession.from_request, body)
            key = keep(session)
        return JSONResponse({"id": key, **session.state(0)}, status_code=201)

    async def get_game(request: Request) -> Response:
        session = store.get(request.path_params["key"])
        since = _since(request.query_params.get("since", "0"))
        return JSONResponse(await _locked(session, lambda: session.state(since)))

    async def move(request: Request) -> Response:
        session = store.get(request.path_params["key"])
        body = await _json_body(request)
        unknown = sorted(set(body) - {"action", "since"})
        if unknown:
            raise RequestError(f"unknown field(s) {unknown}; a move is {{'action': a, 'since': k}}")

        def play() -> dict[str, Any]:
            if "action" not in body or "since" not in body:
                raise RequestError(
                    "a move is {'action': a, 'since': k}, k the number of frames the page has", legal=session.legal()
                )
            since, count = body["since"], len(session.frames)  # checked before the move is played
            if isinstance(since, bool) or not isinstance(since, int) or since < 0:
                raise RequestError(f"since must be a non-negative integer (the page's frame count), got {since!r}")
            if since != count:
                # The page has not seen the latest position (a second tab, a repeated request), or shows one the game
                # never reached: the move was meant for another position, where the same number may mean another move.
                where = f"has moved on since frame {since}" if since < count else f"has not reached frame {since}"
                raise RequestError(
                    f"the game {where} (it is at frame {count}); reload it and choose again", 409, legal=session.legal()
                )
            session.move(body["action"])
            return session.state(since)

        return JSONResponse(await _locked(session, play))

    async def hint(request: Request) -> Response:
        session = store.get(request.path_params["key"])
        return JSONResponse(await _locked(session, session.hint))

    async def replay(request: Request) -> Response:
        session = store.get(request.path_params["key"])
        data = await _locked(session, lambda: _finished(session).to_dict())
        return JSONResponse(data, headers={"Content-Disposition": 'attachment; filename="replay.json"'})

    async def replay_page(request: Request) -> Response:
        session = store.get(request.path_params["key"])
        html = await _locked(session, lambda: replay_html.render(_finished(session)))
        return HTMLResponse(html, headers={"Content-Disposition": 'attachment; filename="replay.html"'})

    async def leave(request: Request) -> Response:
        store.remove(request.path_params["key"])
        return Response(status_code=204)

    routes = [
        Route("/", index),
        Route("/api/options", get_options),
        Route("/api/games", _guarded(create), methods=["POST"]),
        Route("/api/games/{key}", _guarded(get_game), methods=["GET"]),
        Route("/api/games/{key}", _guarded(leave), methods=["DELETE"]),
        Route("/api/games/{key}/moves", _guarded(move), methods=["POST"]),
        Route("/api/games/{key}/hint", _guarded(hint)),
        Route("/api/games/{key}/replay", _guarded(replay)),
        Route("/api/games/{key}/replay.html", _guarded(replay_page)),
        Mount("/static", StaticFiles(packages=[("friday13_env.web", "static")]), name="static"),
    ]
    handlers = {Exception: _server_error, HTTPException: _http_error}
    checked = [Middleware(SecurityHeaders)] + ([] if hosts is None else [Middleware(HostCheck, hosts=hosts)])
    app = Starlette(routes=routes, middleware=checked, exception_handlers=handlers)  # type: ignore[arg-type]
    app.state.store = store
    app.state.hosts = hosts
    return app


class SecurityHeaders:
    """ASGI middleware that adds ``SECURITY_HEADERS`` to every HTTP answer that does not set them itself: the page at
    ``/`` and the same page as ``/static/index.html``, its files, the API and every refusal alike, so that no answer
    of this server can be framed by another site or run a script from elsewhere. (A 500 comes from outside the
    middleware; ``_server_error`` sets them itself.)"""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, with_headers)


class HostCheck:
    """ASGI middleware that refuses (a JSON 400) every HTTP request whose ``Host`` is not one of ``hosts`` (lower
    case): the page, its files and the API alike, so that no page of another name is served from this machine."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = Headers(scope=scope).get("host", "")
            if _host_name(host) not in self.hosts:
                names = ", ".join(sorted(self.hosts))
                refusal = JSONResponse({"error": f"this server is not {host[:80]!r}; it answers to {names}"}, 400)
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _host_name(host: str) -> str | None:
    """The host name of a ``Host`` header (lower case, an IPv6 address without brackets), or ``None`` when there is
    none or the header is not ``name``, ``name:port``, ``[address]`` or ``[address]:port`` with a port in 1..65535
    (user information, a path, a query or a fragment, an unclosed bracket, a port that is no number)."""
    try:
        parts = urlsplit(f"//{host}")
        port = parts.port
    except ValueError:
        return None
    if parts.username is not None or parts.path or "?" in host or "#" in host or port == 0:
        return None
    return parts.hostname


def _same_site(origin: str, host: str | None) -> bool:
    """Whether the ``Origin`` header names this server (its ``Host``); a malformed origin does not."""
    try:
        netloc = urlsplit(origin).netloc
    except ValueError:
        return False
    return host is not None and netloc.lower() == host.lower()


def _guarded(handler: Handler) -> Handler:
    """``handler`` with a ``RequestError`` turned into its 4xx/503 JSON answer, and a request that changes something
    refused (403) when a page of another site sent it (its ``Origin`` is not this server). The ``Host`` is checked
    before, for every path, by ``HostCheck``."""

    async def guarded(request: Request) -> Response:
        try:
            origin = request.headers.get("origin")
            writes = request.method not in ("GET", "HEAD")
            if writes and origin is not None and not _same_site(origin, request.headers.get("host")):
                raise RequestError(
                    f"requests from another site ({origin[:80]}) are refused: only this server's own page may change "
                    "something",
                    403,
                )
            return await handler(request)
        except RequestError as error:
            return JSONResponse({"error": str(error), **error.detail}, status_code=error.status)

    return guarded


MAX_WAITING = 8
"""Requests one game may have working or waiting at once; one more is a 429 (a page sends one at a time)."""


async def _locked(session: Session, work: Callable[[], Any]) -> Any:
    """Run ``work`` in a worker thread once the game's earlier requests are answered (one request at a time per
    game). A request waits for its turn in the event loop, holding none of the worker threads every game shares, so
    requests piling up on one busy game (a bot's move can take seconds) never stall another game; more than
    ``MAX_WAITING`` at once are refused at once."""
    if session.waiting >= MAX_WAITING:
        raise RequestError(
            f"this game already has {MAX_WAITING} requests under way; wait for their answers before sending more", 429
        )
    session.waiting += 1
    try:
        async with session.turn:
            return await run_in_threadpool(work)
    finally:
        session.waiting -= 1


async def _http_error(request: Request, error: HTTPException) -> Response:
    """An unknown path or a method a path does not take: the same JSON answer as every refused request."""
    return JSONResponse({"error": error.detail}, status_code=error.status_code, headers=error.headers)


async def _server_error(request: Request, error: Exception) -> Response:
    """Whatever escaped the checks: a JSON 500 that says so, never a page of HTML or a closed connection."""
    return JSONResponse(
        {"error": f"the server failed ({type(error).__name__}); the game may need restarting"},
        500,
        headers=SECURITY_HEADERS,  # answered outside the middleware that adds them to every other answer
    )


def _finished(session: Session) -> Record:
    if not session.over:
        raise RequestError("the replay is available when the game is over (it shows every hand)", 409)
    return session.record()


def _since(text: str) -> int:
    if not DIGITS.fullmatch(text):
        raise RequestError(f"since must be a non-negative integer, got {text[:20]!r}")
    return int(text)


async def _json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object, read only if it is short."""
    kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind != "application/json":
        # Only JSON: a form on another web site cannot post JSON without the browser asking this server first.
        raise RequestError(f"the request body must be JSON (Content-Type: application/json), got {kind!r}", 415)
    declared = request.headers.get("content-length")
    if declared is not None and (not DIGITS.fullmatch(declared) or int(declared) > MAX_BODY_BYTES):
        raise RequestError(f"a request body is at most {MAX_BODY_BYTES} bytes", 413)
    body = b""
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise RequestError(f"a request body is at most {MAX_BODY_BYTES} bytes", 413)
    except ClientDisconnect:  # the client went, or was closed for being too slow: the answer goes nowhere
        raise RequestError("the connection closed before the request body was complete", 400) from None
    try:
        data = json.loads(body or b"{}")
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise RequestError("the request body is not JSON") from None
    if not isinstance(data, dict):
        raise RequestError("the request body must be a JSON object")
    return data


class RequestDeadline(H11Protocol):
    """uvicorn's HTTP/1.1 protocol (h11), with a deadline for each request to arrive: a connection that has not
    delivered a whole request, headers and body, ``request_timeout`` seconds after it opened or after its last
    answer is closed. uvicorn itself only closes a kept connection that stays silent after an answer: a new
    connection that sends nothing, or a request sent a byte now and then (slowloris), would hold its connection
    forever, and many such clients every connection the process can open. The time the application takes to answer
    is not limited: the deadline is met once the request is in. This application keeps no connection open (no streaming,
    no long polling, no WebSocket), so a request that is not in after a few seconds is not coming."""

    request_timeout: float
    """Seconds; set by ``deadline_protocol``, which makes the class uvicorn is given."""
    _deadline: asyncio.TimerHandle | None = None
    _waiting_since: object = None
    """The request (uvicorn's cycle) that was current when the wait began: ``None`` on a new connection."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._wait()

    def on_response_complete(self) -> None:
        self._wait()  # first: a pipelined request already received starts at once, within the call below
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def _wait(self) -> None:
        self._stop_waiting()
        self._waiting_since = self.cycle
        self._deadline = self.loop.call_later(self.request_timeout, self._expired)

    def _stop_waiting(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing() or self.transport.get_protocol() is not self:  # closed, or upgraded
            return
        cycle = self.cycle
        if cycle is not self._waiting_since and not cycle.more_body:
            return  # a whole request came in time; it is answered however long that takes
        self.transport.close()  # no request, headers still coming, or a body that has not ended


def deadline_protocol(request_timeout: float) -> type[RequestDeadline]:
    """``RequestDeadline`` with its deadline set to ``request_timeout`` seconds, for ``uvicorn.Config(http=...)``."""
    if not 0 < request_timeout < float("inf"):
        raise ValueError(f"request_timeout must be a positive number of seconds, got {request_timeout!r}")
    seconds = float(request_timeout)

    class Timed(RequestDeadline):
        request_timeout = seconds

    return Timed
