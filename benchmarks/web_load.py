"""Load test of ``friday13 serve`` on loopback: the latency of a move, the bots' answers included, under many players.

A benchmark: run it alone on the machine (this project's machine has 2 cores, and the server, its bots and the
simulated players all share them, so any other job skews the figures). The target: a p95 move latency under
100 ms with network opponents (``ppo-v4``, the default), for players who think before they move (``--think``, 1 s by
default). ``--think 0`` measures the server flat out instead: every player sends its next move as soon as the last
is answered, so the latency is then mostly the wait in the queue (players / requests per second).

The script starts the server itself (``python -m friday13_env.cli serve --no-browser`` on a free loopback port),
waits until ``/api/options`` answers, and stops it at the end and on errors; Ctrl-C (or SIGTERM) ends the run early
with the figures so far (exit code 130 or 143). ``--sessions`` simulated players (asyncio, an ``httpx.AsyncClient``
with one connection each, as each person has a browser) create a game, play random legal moves from the last frame's
``legal`` (a seeded generator per player) until it is over, leave it and start the next, for ``--seconds``: card
games at 4 players (a random seat, ``--opponents`` in every other one), and a share ``--solo-share`` of solo games
at a random level. A move's latency is the client's wall time of its ``POST /api/games/{id}/moves``, so in the card
game it includes the bots' answers. The players' own CPU time is reported beside the server's: httpx costs about 2
ms of CPU a request, and on a small machine the load generator competes with the server for the cores.

Every response is checked to belong to the session that asked, and a leak across sessions counts as an error:
the table is the one the game started with, the frames continue the session's own (``since`` is the one sent,
``count`` is what the session had seen plus the frames sent, and the first new frame is the move just sent),
and in the card game every other seat's hand and the dummy are null and legal moves come only on the player's
own turn. Errors (the exit code is 1 if there is any): a non-2xx answer, an exception, a failed check, or a game
ended by a bot's failure.

Run: ``python -m benchmarks.web_load`` (50 players for 60 s against ``ppo-v4``); add ``--json OUT`` to keep the
figures with the command line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
import numpy as np

from benchmarks.arguments import NON_NEGATIVE, POSITIVE, SEED, count_up_to
from friday13_env.core.files import atomic_write_text
from friday13_env.friday13.evaluation.report import check_output_path
from friday13_env.web.sessions import card_agent_names

MAX_SESSIONS = 1_000
"""The most simulated players: each keeps a connection (a file descriptor here and one in the server, whose default
limit is 1,024 a process) and a task; a load beyond it measures the machine's limits, not the server."""
REPOSITORY = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
CARD, SOLO = "friday13", "friday"
PLAYERS = 4
"""Players at a card table (the person and three bots)."""
SHOWN_ERRORS = 5
"""Error messages kept for the report (all errors are counted)."""
ERROR_PAUSE = 0.2
"""Seconds a player waits after an error before its next game, so that a failing server is not hammered."""
STOP_WAIT = 10.0
"""Seconds the server has to shut down after SIGTERM before it is killed."""
ROWS = {
    "card move": "card move (bots answer)",
    "solo move": "solo move",
    "card new": "new card game",
    "solo new": "new solo game",
}
"""The latency rows of the report: the key in ``Tally.latencies`` and its label."""
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""Signals that end the run early: the players stop, the server is stopped, the figures so far are shown."""


class Abort(Exception):
    """The run cannot go on (the server did not start, or refused the settings); ``code`` is the exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class Refused(Exception):
    """A non-2xx answer."""


class Leak(Exception):
    """An answer that does not belong to the session that asked, or contradicts its own history."""


@dataclass
class Tally:
    """What the players measured (one event loop, so no locks)."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: {key: [] for key in ROWS})
    started: dict[str, int] = field(default_factory=lambda: {CARD: 0, SOLO: 0})
    finished: dict[str, int] = field(default_factory=lambda: {CARD: 0, SOLO: 0})
    requests: int = 0
    errors: int = 0
    messages: list[str] = field(default_factory=list)

    def error(self, message: str) -> None:
        self.errors += 1
        if len(self.messages) < SHOWN_ERRORS:
            self.messages.append(message)


@dataclass
class Game:
    """One session as its player knows it: what it asked for and the frames it has seen."""

    kind: str
    key: str
    table: dict[str, Any]
    you: int | None
    seen: int = 0
    legal: list[int] = field(default_factory=list)
    over: bool = False


# -- the server ----------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def server_command(port: int, max_sessions: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "friday13_env.cli",
        "serve",
        "--no-browser",
        "--host",
        HOST,
        "--port",
        str(port),
        "--max-sessions",
        str(max_sessions),
    ]


@contextmanager
def running(command: list[str], log: IO[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    """The server as a subprocess (its output to ``log``), always stopped on leaving: SIGTERM (uvicorn shuts
    down gracefully), then SIGKILL after ``STOP_WAIT`` seconds. Its own session, so that a Ctrl-C reaches only
    this script, which then stops it."""
    process = subprocess.Popen(command, cwd=REPOSITORY, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield process
    finally:
        handlers = {signum: signal.signal(signum, signal.SIG_IGN) for signum in STOP_SIGNALS}  # stop it for sure
        try:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(STOP_WAIT)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        finally:
            for signum, handler in handlers.items():
                signal.signal(signum, handler)


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of process ``pid`` (all its threads) from ``/proc``; ``None`` where there is none."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


async def wait_ready(
    client: httpx.AsyncClient, server: subprocess.Popen[bytes], timeout: float, stop: asyncio.Event
) -> dict[str, Any]:
    """``/api/options`` once the server answers it."""
    end = time.monotonic() + timeout
    while True:
        if stop.is_set():
            raise Abort("interrupted before the server answered", 130)
        if server.poll() is not None:
            raise Abort(f"the server exited with code {server.returncode} before it answered")
        try:
            response = await client.get("/api/options", timeout=2.0)
            if response.status_code == 200:
                options: dict[str, Any] = response.json()
                return options
        except httpx.TransportError:
            pass
        if time.monotonic() > end:
            raise Abort(f"the server did not answer /api/options within {timeout:g} s")
        await asyncio.sleep(0.1)


# -- a player ------------------------------------------------------------------------------------------------
async def call(
    client: httpx.AsyncClient, tally: Tally, method: str, path: str, body: dict[str, Any] | None = None
) -> tuple[Any, float]:
    """The JSON answer of one request and its wall time in seconds; ``Refused`` for a non-2xx answer."""
    started = time.perf_counter()
    response = await client.request(method, path, json=body)
    elapsed = time.perf_counter() - started
    tally.requests += 1
    if not response.is_success:
        shown = re.sub(r"^/api/games/[^/]+", "/api/games/{id}", path)
        raise Refused(f"{method} {shown} -> {response.status_code}: {response.text[:200]}")
    return (response.json() if response.content else None), elapsed


def check(game: Game, answer: dict[str, Any], since: int, action: int | None) -> None:
    """Take in ``answer`` (to a request with ``since``, after the move ``action`` if not ``None``) as the next
    part of ``game``: a ``Leak`` unless it belongs to that session and continues what it has seen."""
    if answer["game"] != game.kind or answer["table"] != game.table:
        raise Leak(f"a {game.kind} session got the table of another game: {answer['table']}")
    frames, count = answer["frames"], answer["count"]
    if answer["since"] != since or since != game.seen or count != since + len(frames) or not frames:
        raise Leak(
            f"frames out of step: the session had seen {game.seen}, asked since={since}, got since={answer['since']}"
            f" count={count} with {len(frames)} frames"
        )
    if action is not None:
        move = frames[0]["move"]
        if move is None or move["action"] != action or (game.you is not None and move["seat"] != game.you):
            raise Leak(f"the first new frame is not the move just sent ({action} by seat {game.you}): {move}")
    if game.you is not None:
        you = game.you
        for frame in frames:
            hands = frame["hands"]
            others = [seat for seat, hand in enumerate(hands) if seat != you and hand is not None]
            if len(hands) != PLAYERS or others or frame["dummy"] is not None:
                raise Leak(f"seat {you} was shown the hands of seats {others} (or the dummy)")
            if hands[you] is None or sum(hands[you]) != frame["hand_sizes"][you]:
                raise Leak(f"seat {you}'s own hand {hands[you]} does not match its size {frame['hand_sizes'][you]}")
            if frame["current"] != you and frame["legal"]:
                raise Leak(f"seat {you} was shown legal moves on seat {frame['current']}'s turn")
    status, last = answer["status"], frames[-1]
    if status["error"]:
        raise Refused(f"the game ended with an error: {status['error']}")
    over = bool(last["game_over"] if game.kind == CARD else last["done"])
    if status["over"] != over or (not over and not (status["your_turn"] and last["legal"])):
        raise Leak(f"status {status} does not fit the last frame (over {over}, legal {last['legal']})")
    game.seen, game.legal, game.over = count, list(last["legal"]), over


async def new_game(
    client: httpx.AsyncClient, tally: Tally, rng: np.random.Generator, settings: argparse.Namespace, levels: list[int]
) -> Game:
    seed = int(rng.integers(2**62))
    you: int | None = None
    if rng.random() < settings.solo_share:
        level = int(rng.choice(levels))
        body: dict[str, Any] = {"game": SOLO, "level": level, "seed": seed}
    else:
        you = int(rng.integers(PLAYERS))
        body = {"game": CARD, "players": PLAYERS, "seat": you, "opponents": [settings.opponents], "seed": seed}
    kind = body["game"]
    tally.started[kind] += 1
    answer, elapsed = await call(client, tally, "POST", "/api/games", body)
    tally.latencies["card new" if kind == CARD else "solo new"].append(elapsed)
    table = answer["table"]
    if kind == CARD:
        labels = ["you" if seat == you else f"{settings.opponents} ({seat + 1})" for seat in range(PLAYERS)]
        if table["you"] != you or table["players"] != PLAYERS or table["seats"] != labels:
            raise Leak(f"asked for seat {you} against {settings.opponents}, got the table {table}")
    elif table["level"] != body["level"]:
        raise Leak(f"asked for level {body['level']}, got the table {table}")
    game = Game(kind, answer["id"], table, you)
    check(game, answer, 0, None)
    return game


def connect(port: int, timeout: float) -> httpx.AsyncClient:
    """A client of the server with one connection: each player has its own, as each person has a browser."""
    return httpx.AsyncClient(
        base_url=f"http://{HOST}:{port}",
        timeout=timeout,
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        trust_env=False,  # loopback: never through a proxy named in the environment
    )


async def player(
    index: int,
    client: httpx.AsyncClient,
    tally: Tally,
    stop: asyncio.Event,
    settings: argparse.Namespace,
    levels: list[int],
) -> None:
    """Play games until ``stop``; every error is counted and the game left."""
    rng = np.random.default_rng([settings.seed, index])
    async with client:
        while not stop.is_set():
            game: Game | None = None
            try:
                game = await new_game(client, tally, rng, settings, levels)
                row = "card move" if game.kind == CARD else "solo move"
                while not game.over and not stop.is_set():
                    action = int(rng.choice(game.legal))
                    if settings.think > 0:  # a person's pace: 0.5 to 1.5 times --think between moves
                        await asyncio.sleep(settings.think * rng.uniform(0.5, 1.5))
                        if stop.is_set():
                            break
                    since = game.seen
                    path = f"/api/games/{game.key}/moves"
                    answer, elapsed = await call(client, tally, "POST", path, {"action": action, "since": since})
                    tally.latencies[row].append(elapsed)
                    check(game, answer, since, action)
                if game.over:
                    tally.finished[game.kind] += 1
            except Exception as error:  # every failure is a finding: count it, go on with a new game
                tally.error(f"player {index}: {type(error).__name__}: {error}")
                await asyncio.sleep(ERROR_PAUSE)
            if game is not None:
                try:
                    await call(client, tally, "DELETE", f"/api/games/{game.key}")
                except Exception as error:
                    tally.error(f"player {index}: leaving: {type(error).__name__}: {error}")


def on_stop(stop: asyncio.Event, interrupted: list[str]) -> None:
    """``stop`` set (and the signal's name kept) on Ctrl-C or SIGTERM, where the loop can catch signals."""
    loop = asyncio.get_running_loop()

    def caught(signum: int) -> None:
        interrupted.append(signal.Signals(signum).name)
        stop.set()

    for signum in STOP_SIGNALS:
        with suppress(NotImplementedError, RuntimeError):  # not on this platform: a KeyboardInterrupt then
            loop.add_signal_handler(signum, caught, signum)


async def load(settings: argparse.Namespace, server: subprocess.Popen[bytes], port: int) -> dict[str, Any]:
    """Run the players against the started server; the figures of the report (so far, if interrupted)."""
    stop = asyncio.Event()
    interrupted: list[str] = []
    on_stop(stop, interrupted)
    async with connect(port, settings.timeout) as client:
        options = await wait_ready(client, server, settings.startup_timeout, stop)
    allowed = options[CARD]["agents"]["standard"]
    if settings.opponents not in allowed:
        raise Abort(f"--opponents {settings.opponents!r} cannot sit at a standard table; choose from {allowed}", 2)
    levels = list(options[SOLO]["levels"])
    tally = Tally()
    # Every client is made before the clock starts: making one costs milliseconds of CPU, which would otherwise
    # be counted in the first requests of the players started before it.
    clients = [connect(port, settings.timeout) for _ in range(settings.sessions)]
    server_cpu = cpu_seconds(server.pid)
    client_cpu = time.process_time()
    started = time.perf_counter()
    players = [
        asyncio.create_task(player(index, client, tally, stop, settings, levels))
        for index, client in enumerate(clients)
    ]
    end = started + settings.seconds
    while not stop.is_set() and time.perf_counter() < end:
        if server.poll() is not None:
            tally.error(f"the server exited with code {server.returncode} during the run")
            break
        await asyncio.sleep(min(0.2, max(0.0, end - time.perf_counter())))
    stop.set()
    if interrupted:  # no waiting for the moves in flight
        for task in players:
            task.cancel()
    await asyncio.gather(*players, return_exceptions=True)
    elapsed = time.perf_counter() - started
    client_cpu = time.process_time() - client_cpu
    server_cpu_end = cpu_seconds(server.pid)
    server_used = None if server_cpu is None or server_cpu_end is None else server_cpu_end - server_cpu
    figures = report(settings, tally, elapsed, server_used, client_cpu)
    figures["interrupted"] = interrupted[0] if interrupted else None
    return figures


# -- the report ----------------------------------------------------------------------------------------------
def summary(seconds: list[float]) -> dict[str, Any]:
    if not seconds:
        return {"n": 0, "p50_ms": None, "p95_ms": None, "p99_ms": None, "max_ms": None}
    ms = np.asarray(seconds) * 1e3
    p50, p95, p99 = np.percentile(ms, [50, 95, 99])
    return {"n": len(ms), "p50_ms": float(p50), "p95_ms": float(p95), "p99_ms": float(p99), "max_ms": float(ms.max())}


def report(
    settings: argparse.Namespace, tally: Tally, elapsed: float, server_cpu: float | None, client_cpu: float
) -> dict[str, Any]:
    cpus = os.cpu_count() or 1
    return {
        "command": shlex.join(sys.orig_argv),
        "settings": {key: value for key, value in vars(settings).items() if key != "json"},
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": cpus,
        "usable_cpus": usable_cpus(),
        "seconds": elapsed,
        "games_started": tally.started,
        "games_finished": tally.finished,
        "moves": {CARD: len(tally.latencies["card move"]), SOLO: len(tally.latencies["solo move"])},
        "requests": tally.requests,
        "requests_per_second": tally.requests / elapsed,
        "latency": {key: summary(values) for key, values in tally.latencies.items()},
        "server_cpu_seconds": server_cpu,
        "server_cpu_share": None if server_cpu is None else server_cpu / (elapsed * cpus),
        "client_cpu_seconds": client_cpu,
        "errors": tally.errors,
        "error_messages": tally.messages,
    }


def show(figures: dict[str, Any]) -> None:
    settings = figures["settings"]
    started, finished, moves = figures["games_started"], figures["games_finished"], figures["moves"]
    print(
        f"friday13 serve on {HOST}: {settings['sessions']} players for {figures['seconds']:.1f} s, card games at "
        f"{PLAYERS} players against {settings['opponents']}, {settings['solo_share']:.0%} solo games, "
        f"{settings['think']:g} s thinking time per move"
    )
    print(f"CPUs: {figures['cpus']} (usable: {figures['usable_cpus']}), Python {figures['python']}")
    width = max(len(label) for label in ROWS.values())
    print(f"| {'request':<{width}} | {'n':>7} | {'p50 ms':>8} | {'p95 ms':>8} | {'p99 ms':>8} | {'max ms':>8} |")
    print(f"|{'-' * (width + 2)}|{'-' * 9}|{'-' * 10}|{'-' * 10}|{'-' * 10}|{'-' * 10}|")
    for key, label in ROWS.items():
        row = figures["latency"][key]
        cells = ["-" if row[name] is None else f"{row[name]:.1f}" for name in ("p50_ms", "p95_ms", "p99_ms", "max_ms")]
        print(f"| {label:<{width}} | {row['n']:>7} | " + " | ".join(f"{cell:>8}" for cell in cells) + " |")
    print(
        f"games finished: card {finished[CARD]}, solo {finished[SOLO]} (started: card {started[CARD]}, "
        f"solo {started[SOLO]}); moves: card {moves[CARD]}, solo {moves[SOLO]}"
    )
    print(f"requests: {figures['requests']} ({figures['requests_per_second']:.1f}/s)")
    if figures["server_cpu_seconds"] is not None:
        print(
            f"CPU time: server {figures['server_cpu_seconds']:.1f} s ({figures['server_cpu_share']:.0%} of "
            f"{figures['cpus']} CPUs), load generator {figures['client_cpu_seconds']:.1f} s"
        )
    print(f"errors: {figures['errors']}")
    if figures.get("interrupted"):
        print(f"interrupted by {figures['interrupted']}: the figures of the {figures['seconds']:.1f} s before it")
    for message in figures["error_messages"]:
        print(f"  {message}")


def tail(log: IO[bytes], lines: int = 20) -> str:
    log.flush()
    log.seek(0)
    return "\n".join(log.read().decode(errors="replace").splitlines()[-lines:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sessions",
        type=count_up_to(MAX_SESSIONS),
        default=50,
        help=f"concurrent simulated players, 1 to {MAX_SESSIONS:,} (default 50)",
    )
    parser.add_argument("--seconds", type=POSITIVE, default=60.0, help="how long the players play (default 60)")
    parser.add_argument(
        "--opponents", default="ppo-v4", help="the agent in every bot seat of the card games (default ppo-v4)"
    )
    parser.add_argument(
        "--solo-share",
        type=float,
        default=0.2,
        help="share of new games that are solo, at a random level (default 0.2)",
    )
    parser.add_argument(
        "--think",
        type=NON_NEGATIVE,
        default=1.0,
        help="seconds a player thinks before a move, drawn from 0.5 to 1.5 times this (default 1.0, a person's pace; "
        "0: flat out, every player sends its next move as soon as the last is answered)",
    )
    parser.add_argument("--seed", type=SEED, default=0, help="seed of the players' generators and deals (default 0)")
    parser.add_argument(
        "--max-sessions", type=int, default=100, help="the server's --max-sessions (default 100, as the server)"
    )
    parser.add_argument("--port", type=int, default=0, help="the server's port (default 0: a free one)")
    parser.add_argument("--timeout", type=POSITIVE, default=30.0, help="seconds one request may take (default 30)")
    parser.add_argument(
        "--startup-timeout", type=POSITIVE, default=120.0, help="seconds the server may take to answer (default 120)"
    )
    parser.add_argument("--json", metavar="OUT", help="also write the figures and the command line to OUT (JSON)")
    args = parser.parse_args()
    if not 0.0 <= args.solo_share <= 1.0 or args.max_sessions < 1:
        parser.error("--max-sessions must be positive, --solo-share in 0..1")
    if not 0 <= args.port < 65536:
        parser.error(f"--port must be in 0..65535, got {args.port}")
    problem = None if args.json is None else check_output_path(Path(args.json))
    if problem is not None:  # found now, not once the load has run for --seconds
        parser.error(f"argument --json: {problem}")
    standard = card_agent_names()["standard"]  # the names the server offers (it is asked again once it answers)
    if args.opponents not in standard:
        parser.error(f"argument --opponents: {args.opponents!r} cannot sit at a standard table; choose from {standard}")
    port = args.port or free_port()
    command = server_command(port, args.max_sessions)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # outside the event loop: as Ctrl-C
    with tempfile.TemporaryFile() as log:
        try:
            with running(command, log) as server:
                figures = asyncio.run(load(args, server, port))
        except Abort as error:
            print(f"web_load: {error}\nserver command: {shlex.join(command)}\nserver output:\n{tail(log)}")
            return error.code
        except KeyboardInterrupt:  # where the event loop cannot catch signals, or before it runs
            print("web_load: interrupted; the server is stopped")
            return 130
        figures["server_command"] = shlex.join(command)
        show(figures)
        if figures["errors"]:
            output = tail(log)
            if output:
                print(f"server output (last lines):\n{output}")
    if args.json:
        atomic_write_text(args.json, json.dumps(figures, indent=1, allow_nan=False) + "\n")
        print(f"wrote {args.json}")
    if figures["interrupted"]:
        return 128 + signal.Signals[figures["interrupted"]].value
    return 1 if figures["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
