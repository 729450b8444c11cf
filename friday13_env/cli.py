"""The ``friday13`` console command; each job is a subcommand (``friday13 play ...``).

Subcommands own their options (``play.add_arguments``, ``command.add_arguments``), so ``friday13 play``
and ``python -m friday13_env.friday13.play``, ``friday13 evaluate`` and ``training/evaluate.py`` accept
exactly the same ones.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TextIO

from friday13_env import __version__
from friday13_env.benchmark import command as benchmark_command
from friday13_env.core.specs import working_folder_importable
from friday13_env.friday13 import play
from friday13_env.friday13.evaluation import command as evaluate_command
from friday13_env.web import command as web_command


@dataclass(frozen=True)
class Subcommand:
    """One ``friday13 NAME``: its help line, its page (description and examples), its options and its runner."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[..., int]
    description: str | None = None
    epilog: str | None = None


SUBCOMMANDS = (
    Subcommand("play", "play a game in the terminal against agents", play.add_arguments, play.run),
    Subcommand(
        "evaluate",
        "play agents against each other on duplicate deals; win rates with 95%% intervals",
        evaluate_command.add_arguments,
        evaluate_command.run,
        evaluate_command.DESCRIPTION,
        evaluate_command.EXAMPLES,
    ),
    Subcommand(
        "benchmark",
        "play a frozen benchmark suite with an agent; normalised scores and a result file",
        benchmark_command.add_arguments,
        benchmark_command.run,
        benchmark_command.DESCRIPTION,
        benchmark_command.EXAMPLES,
    ),
    Subcommand(
        "ratings",
        "rate agents from games at mixed tables",
        benchmark_command.add_ratings_arguments,
        benchmark_command.run_ratings_command,
        benchmark_command.RATINGS_DESCRIPTION,
    ),
    Subcommand(
        "leaderboard",
        "write docs/leaderboard.md from the benchmark's result files",
        benchmark_command.add_leaderboard_arguments,
        benchmark_command.run_leaderboard_command,
        benchmark_command.LEADERBOARD_DESCRIPTION,
    ),
    Subcommand(
        "serve",
        "play both games in a browser against the zoo (the web extra)",
        web_command.add_serve_arguments,
        web_command.run_serve,
        web_command.SERVE_DESCRIPTION,
        web_command.SERVE_EXAMPLES,
    ),
    Subcommand(
        "replay",
        "write a replay file as a self-contained HTML page",
        web_command.add_replay_arguments,
        web_command.run_replay,
        web_command.REPLAY_DESCRIPTION,
    ),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="friday13", description="Friday the 13th (Reiner Knizia) for RL research.")
    parser.add_argument("--version", action="version", version=f"friday13-env {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for subcommand in SUBCOMMANDS:
        sub = commands.add_parser(
            subcommand.name,
            help=subcommand.help,
            description=subcommand.description,
            epilog=subcommand.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        subcommand.add_arguments(sub)
        sub.set_defaults(run=subcommand.run, parser=sub)
    return parser


def main(
    argv: Sequence[str] | None = None, input_stream: TextIO | None = None, output_stream: TextIO | None = None
) -> int:
    """Entry point of ``friday13``; bad options exit with code 2 (argparse's convention).

    The working folder is importable (``specs.working_folder_importable``): ``--agent my_agents:MyAgent`` finds
    ``my_agents.py`` there.
    """
    working_folder_importable()
    args = build_parser().parse_args(argv)
    if output_stream is not None:
        return int(args.run(args, args.parser, sys.stdin if input_stream is None else input_stream, output_stream))
    stdout = sys.stdout
    watched = PipeOutput(stdout)
    try:
        with contextlib.redirect_stdout(watched):
            return int(args.run(args, args.parser, sys.stdin if input_stream is None else input_stream, watched))
    except ReaderLeft:  # ``friday13 ... | head``: stop quietly, as the shell's tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())  # Python's last flush goes nowhere
        return 128 + signal.SIGPIPE


class ReaderLeft(Exception):
    """Standard output's reader closed the pipe (``friday13 ... | head``)."""


class PipeOutput(io.TextIOBase):
    """Standard output, where a ``BrokenPipeError`` of a write or flush becomes ``ReaderLeft``: only the reader
    leaving stops a command quietly, never a broken pipe of an agent's own (an engine it talks to that died)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError as error:
            raise ReaderLeft from error

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError as error:
            raise ReaderLeft from error

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.stream.encoding


if __name__ == "__main__":
    sys.exit(main())
