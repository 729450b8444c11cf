"""The ``friday13`` console command; each job is a subcommand (``friday13 play ...``).

Subcommands own their options (``play.add_arguments``, ``command.add_arguments``), so ``friday13 play``
and ``python -m friday13_env.friday13.play``, ``friday13 evaluate`` and ``training/evaluate.py`` accept
exactly the same ones.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from friday13_env.friday13 import play
from friday13_env.friday13.evaluation import command as evaluate_command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="friday13", description="Friday the 13th (Reiner Knizia) for RL research.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    play_parser = commands.add_parser("play", help="play a game in the terminal against agents")
    play.add_arguments(play_parser)
    play_parser.set_defaults(run=play.run, parser=play_parser)
    evaluate_parser = commands.add_parser(
        "evaluate",
        help="play agents against each other on duplicate deals; win rates with 95%% intervals",
        description=evaluate_command.DESCRIPTION,
        epilog=evaluate_command.EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    evaluate_command.add_arguments(evaluate_parser)
    evaluate_parser.set_defaults(run=evaluate_command.run, parser=evaluate_parser)
    return parser


def main(
    argv: Sequence[str] | None = None, input_stream: TextIO | None = None, output_stream: TextIO | None = None
) -> int:
    """Entry point of ``friday13``; bad options exit with code 2 (argparse's convention)."""
    args = build_parser().parse_args(argv)
    return args.run(
        args,
        args.parser,
        sys.stdin if input_stream is None else input_stream,
        sys.stdout if output_stream is None else output_stream,
    )


if __name__ == "__main__":
    sys.exit(main())
