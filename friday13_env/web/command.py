"""``friday13 serve`` (play both games in a browser) and ``friday13 replay`` (a replay file as an HTML page)."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import os
import re
import socket
import sys
import threading
import webbrowser
from pathlib import Path
from typing import TextIO

from friday13_env.core.checks import printable
from friday13_env.core.extras import WEB_EXTRA, missing_extra
from friday13_env.core.specs import integer_argument, range_argument, shown
from friday13_env.friday13.evaluation.report import check_output_path
from friday13_env.web import record, replay_html

SERVE_DESCRIPTION = """Start a local web server and open the page: play Friday the 13th (3-6 players, either deck)
against any agents of the registry and the zoo, or Friday (solo) at levels 1-4, with hints. Finished games
can be downloaded as replays. Needs the web extra: pip install "friday13-env[web]"."""
SERVE_EXAMPLES = """examples:
  friday13 serve                      # http://127.0.0.1:8013, opened in your browser
  friday13 serve --port 9000 --no-browser"""
REPLAY_DESCRIPTION = """Write a recorded game (a replay file from `friday13 evaluate --replays DIR`,
`friday13 benchmark --replays DIR` or the web page) as one self-contained HTML file that steps through
the game move by move; it opens from disk, with no server and no network."""
DEFAULT_PORT = 8013
MAX_SESSIONS = 10_000
"""The most games ``--max-sessions`` may keep at once: each holds its game and its record in memory."""
MAX_IDLE_MINUTES = 7 * 24 * 60
"""The longest ``--idle-minutes`` (a week): a game kept longer is one nobody comes back to."""
DEFAULT_REQUEST_TIMEOUT = 10.0
"""Seconds a connection has to deliver a whole request from when it opens or its last answer (``--request-timeout``)."""
REQUEST_TIMEOUT_RANGE = (0.1, 3600.0)


def request_timeout_argument(text: str) -> float:
    """A number of seconds in ``REQUEST_TIMEOUT_RANGE``, written in ASCII digits (not ``nan``, ``inf`` or ``1e3``)."""
    low, high = REQUEST_TIMEOUT_RANGE
    wrong = argparse.ArgumentTypeError(f"must be a number of seconds in {low:g}..{high:g}, got {shown(text)}")
    if not re.fullmatch(r"[0-9]{1,6}(\.[0-9]{0,6})?|\.[0-9]{1,6}", text.strip()):
        raise wrong
    seconds = float(text)
    if not low <= seconds <= high:
        raise wrong
    return seconds


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    parser.add_argument("--port", type=integer_argument, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument(
        "--max-sessions",
        type=range_argument(1, MAX_SESSIONS),
        default=100,
        help=f"games kept at once (default 100, at most {MAX_SESSIONS:,})",
    )
    parser.add_argument(
        "--idle-minutes",
        type=range_argument(1, MAX_IDLE_MINUTES),
        default=60,
        help=f"a game is dropped after this many minutes without a request (default 60, at most {MAX_IDLE_MINUTES:,})",
    )
    parser.add_argument(
        "--request-timeout",
        type=request_timeout_argument,
        default=DEFAULT_REQUEST_TIMEOUT,
        metavar="SECONDS",
        help="a connection that has not sent a whole request this many seconds after it opened or after its last "
        f"answer is closed (default {DEFAULT_REQUEST_TIMEOUT:g}; "
        f"{REQUEST_TIMEOUT_RANGE[0]:g}..{REQUEST_TIMEOUT_RANGE[1]:g})",
    )
    parser.add_argument("--no-browser", action="store_true", help="do not open the page in a browser")


def listening_sockets(host: str, port: int) -> list[socket.socket]:
    """Sockets listening at ``port`` on each address ``host`` names, bound as asyncio's ``create_server`` (what
    uvicorn would call) binds them: reusing the address on POSIX, an IPv6 socket IPv6 only, an address family the
    machine lacks skipped. An ``OSError`` (the port in use, an address not this machine's, a name that does not
    resolve) leaves none open."""
    sockets: list[socket.socket] = []
    skipped: OSError | None = None
    try:
        for family, kind, protocol, _, address in dict.fromkeys(
            socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        ):
            listening = socket.socket(family, kind, protocol)
            sockets.append(listening)
            if os.name == "posix" and sys.platform != "cygwin":
                listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
                listening.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                listening.bind(address)
            except OSError as error:
                if error.errno != errno.EADDRNOTAVAIL:
                    raise
                sockets.pop().close()  # e.g. localhost's ::1 on a machine without IPv6
                skipped = skipped or error
                continue
            listening.listen()
        if not sockets:
            raise skipped or OSError(errno.EADDRNOTAVAIL, f"{host!r} names no address")
    except BaseException:
        for listening in sockets:
            listening.close()
        raise
    return sockets


def every_address_loopback(sockets: list[socket.socket]) -> str | None:
    """Where a browser on this machine reaches a server listening on every address, or None if it listens on none:
    told by the addresses the sockets were bound to, however ``--host`` spelled them (``0``, ``::``, ``[::0]``), and
    the loopback of a family one of them listens on (``::`` alone listens on IPv6 only, so ``::1``, not
    ``127.0.0.1``, where another program may be)."""
    unspecified = {
        listening.family for listening in sockets if ipaddress.ip_address(listening.getsockname()[0]).is_unspecified
    }
    if not unspecified:
        return None
    return "127.0.0.1" if socket.AF_INET in unspecified else "::1"


def unbracketed(host: str) -> str | None:
    """``--host`` without the brackets around an IPv6 address (``[::1]``: ``::1``), or ``None`` for a bracket
    anywhere else (an unclosed one, brackets around anything but an IPv6 address)."""
    if host.startswith("[") and host.endswith("]"):
        inside = host[1:-1]
        try:
            ipaddress.IPv6Address(inside)
        except ValueError:
            return None
        return inside
    return None if "[" in host or "]" in host else host


def run_serve(args: argparse.Namespace, parser: argparse.ArgumentParser, input_stream: TextIO, output: TextIO) -> int:
    if not args.host.strip():
        parser.error(
            f"argument --host: empty ({args.host!r}); give an address such as 127.0.0.1 (this machine only, the "
            "default) or 0.0.0.0 for every address"
        )
    if not 0 < args.port < 65536:
        parser.error(f"--port must be in 1..65535, got {args.port}")
    try:
        import uvicorn

        from friday13_env.web.app import LOOPBACK_NAMES, create_app, deadline_protocol
        from friday13_env.web.sessions import SessionStore
    except ModuleNotFoundError as error:
        if missing_extra(error, "friday13 serve", WEB_EXTRA):
            parser.error(str(error))
        raise
    bare = unbracketed(args.host)
    if bare is None:
        parser.error(
            f"argument --host: {printable(args.host)} is not an address or a host name (brackets go around an IPv6 "
            "address, as [::1])"
        )
    try:  # bound before the address is printed or a browser sent there: a busy port is an error, not another's page
        sockets = listening_sockets(bare, args.port)
    except UnicodeError:  # a name the IDNA codec refuses: an empty label (a..b) or one over 63 characters
        parser.error(f"argument --host: {printable(args.host)} is not a host name (a label is empty or too long)")
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            busy = f"port {args.port} on {args.host} is in use; stop what uses it or choose another --port"
            parser.error(f"argument --port: {busy}")
        parser.error(f"cannot listen on {args.host} port {args.port}: {error.strerror or error}")
    loopback = every_address_loopback(sockets)
    hosts = None if loopback else LOOPBACK_NAMES | {bare}  # any name reaches a server on every address
    app = create_app(SessionStore(args.max_sessions, args.idle_minutes * 60.0), hosts=hosts)
    host = loopback or bare
    url = f"http://{f'[{host}]' if ':' in host else host}:{args.port}/"
    try:
        output.write(f"friday13-env: open {url} (Ctrl-C stops the server)\n")
        output.flush()
        if not args.no_browser:
            threading.Timer(1.0, webbrowser.open, args=(url,)).start()
        # Only the h11 protocol, with a deadline for each request (never httptools, even where it is installed).
        http = deadline_protocol(args.request_timeout)
        config = uvicorn.Config(app, host=bare, port=args.port, log_level="warning", http=http)
        uvicorn.Server(config).run(sockets=sockets)
    except KeyboardInterrupt:  # as uvicorn.run: Ctrl-C stops the server quietly
        pass
    finally:
        for listening in sockets:
            listening.close()
    return 0


def add_replay_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", metavar="GAME.json", help="a replay file")
    parser.add_argument("--html", metavar="OUT.html", help="the page to write (default: GAME.html beside the file)")


def run_replay(args: argparse.Namespace, parser: argparse.ArgumentParser, input_stream: TextIO, output: TextIO) -> int:
    source = Path(args.game)
    if source.name in ("", ".."):  # "", ".", "/", "..": no file is named, and no page can be named beside it
        parser.error(f"argument GAME.json: {args.game!r} names no file; give a replay file such as game.json")
    if args.html is not None and not args.html.strip():
        parser.error(f"argument --html: empty ({args.html!r}); give a page to write, such as game.html")
    target = Path(args.html) if args.html is not None else source.with_suffix(".html")
    shown_target = printable(str(target))  # a downloaded file's name never drives the terminal
    try:
        same = target.resolve() == source.resolve()
    except (OSError, RuntimeError) as error:  # a symlink loop (RuntimeError before Python 3.13)
        parser.error(f"{printable(args.game)} or --html {shown_target} cannot be followed: {printable(str(error))}")
    if same:
        parser.error(f"--html {shown_target} would overwrite the replay file itself")
    problem = check_output_path(target)
    if problem is not None:  # checked before the replay is read and replayed
        parser.error(f"argument --html: {problem}")
    try:
        game = record.load(source)
    except record.ReplayError as error:
        parser.error(str(error))
    replay_html.write(game, target)
    output.write(f"wrote {shown_target} ({replay_html.title(game)})\n")
    return 0
