"""The evaluation command: ``friday13 evaluate ...``, also ``python training/evaluate.py ...``.

Agents are named exactly as ``friday13_env.agents.make`` takes them (a registered name, a name with
options such as ``search:budget=600``, a zoo name such as ``ensemble-v1``, or a checkpoint path).
Every argument is checked before the first game: agent specs (built once, at the table's deck),
counts, the seed, and every output path (its folder must be creatable and writable), so a long run
never ends by losing its results. A bad argument is blamed on its own flag. Files are written whole
or not at all (``atomic_write``); Ctrl-C or SIGTERM ends the command with one line saying what was
written, and the exit status 128 + the signal's number.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from friday13_env.core.agent import AgentRaisedError
from friday13_env.core.checks import counted
from friday13_env.core.files import clashing_outputs, output_in_folder, output_problem, run_writing
from friday13_env.core.options import MAX_GAMES, pool_size
from friday13_env.core.pool import WorkerDied
from friday13_env.core.specs import (
    AgentSpec,
    first_repeat,
    non_negative_argument,
    overwritten_checkpoint,
    path_argument,
    positive_argument,
    positive_at_most,
    range_argument,
    repeated_agent,
)
from friday13_env.friday13 import agents
from friday13_env.friday13.agents.seating import make_seated
from friday13_env.friday13.cards import DECKS
from friday13_env.friday13.engine import MAX_PLAYERS, MAX_ROUNDS, MIN_PLAYERS, IllegalActionError
from friday13_env.friday13.evaluation.duplicate import DEFAULT_REPLAY_DEALS, SEATINGS, ReplaySaving
from friday13_env.friday13.evaluation.report import (
    check_output_path,
    format_json,
    format_markdown,
    format_text,
    plot_win_rates,
    require_matplotlib,
    write_json,
    write_markdown,
)
from friday13_env.friday13.evaluation.specs import Matchup, focus_matchups, matrix_matchups
from friday13_env.friday13.evaluation.tournament import (
    DEFAULT_CHUNK_DEALS,
    check_config,
    evaluate,
    unit_count,
)

DESCRIPTION = "Play agents against each other on duplicate deals and report win rates with 95% intervals."
EXAMPLES = """\
Every deal is replayed with the agents in every seat (every rotation of the listed order by default, every
order with --seatings permutations), and the intervals are computed
over deals (see docs/evaluation.md). Agents are specs, as agents.make takes them: a registered name
(random, cautious, majority, search, endgame), a zoo name (ensemble-v1), a checkpoint path, or
name:key=value,... for options (search:budget=600, endgame:policy=ensemble-v1,budget=300).

Examples:
  # each agent against three copies of each other agent, 4 players
  friday13 evaluate --matrix --agents random cautious majority search --games 2000 \\
      --workers 2 --json results/matrix.json --markdown results/matrix.md --plot results/matrix.png
  # one agent against copies of each opponent, at every table size
  friday13 evaluate --focus endgame --vs cautious majority --players 3 4 5 6
  # one mixed table, seats filled with the listed agents in order (then rotated)
  friday13 evaluate --agents random cautious majority search:budget=600
  # the same table at every order of its agents: its neighbours no longer decide an agent's figures
  friday13 evaluate --agents random cautious majority search:budget=600 --seatings permutations
  # also save the games of the first 2 deals of each matchup, then view one in a browser
  friday13 evaluate --focus search --vs cautious --replays results/replays
  friday13 replay results/replays/00-4p-search-cautious-deal0-shift0.json --html game.html
"""
OUTPUT_FLAGS = ("json", "markdown", "plot")
STDOUT = Path("-")
"""``--json -`` or ``--markdown -``: that output alone goes to stdout; the tables and notes go to stderr."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the evaluation command, shared by ``friday13 evaluate`` and ``training/evaluate.py``."""
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--agents", nargs="+", metavar="SPEC", help="agents of one mixed table, or of the --matrix")
    who.add_argument("--focus", metavar="SPEC", help="the agent to measure against copies of each --vs agent")
    parser.add_argument("--vs", nargs="+", metavar="SPEC", help="opponents of --focus, one matchup each")
    parser.add_argument("--matrix", action="store_true", help="with --agents: every agent vs copies of every other")
    parser.add_argument(
        "--players",
        nargs="+",
        type=positive_argument,
        default=[4],
        choices=range(MIN_PLAYERS, MAX_PLAYERS + 1),
        metavar="N",
        help=f"table sizes, {MIN_PLAYERS} to {MAX_PLAYERS} (default 4)",
    )
    parser.add_argument(
        "--games",
        type=positive_at_most(MAX_GAMES),
        default=400,
        help=f"at least this many games per matchup and table size (default 400, at most {MAX_GAMES:,})",
    )
    parser.add_argument(
        "--seed", type=non_negative_argument, default=0, help="master seed: deals and agent seeds derive from it"
    )
    parser.add_argument(
        "--workers",
        type=positive_argument,
        default=1,
        help="processes to play on, at most the CPUs this process may use and the run's units of work (4 deals "
        "each); a note says what was used (results do not depend on it)",
    )
    parser.add_argument(
        "--seatings",
        default="rotations",
        choices=sorted(SEATINGS),
        help="how each deal seats the agents: every rotation of the listed order (default; at a mixed table the "
        "figures depend on that order, since a rotation keeps who sits after whom), or every order of the agents "
        "around the table (permutations: up to n! games a deal)",
    )
    parser.add_argument("--deck", default="standard", choices=sorted(DECKS), help="deck edition (default standard)")
    parser.add_argument(
        "--rounds",
        type=range_argument(1, MAX_ROUNDS),
        default=4,
        help=f"rounds per game, 1 to {MAX_ROUNDS} (default 4)",
    )
    parser.add_argument("--json", type=path_argument, metavar="PATH", help="write the results as JSON (- for stdout)")
    parser.add_argument(
        "--markdown", type=path_argument, metavar="PATH", help="write the results as Markdown tables (- for stdout)"
    )
    parser.add_argument(
        "--plot", type=path_argument, metavar="PATH", help="plot win rates with intervals (needs matplotlib)"
    )
    add_replay_arguments(parser, "matchup and table size")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_replay_arguments(parser: argparse.ArgumentParser, per: str) -> None:
    """``--replays DIR`` and ``--replay-deals N``: shared with ``friday13 benchmark`` (``per``: what has deals)."""
    parser.add_argument(
        "--replays",
        type=path_argument,
        metavar="DIR",
        help="also save games as replay files in DIR (created if missing; files of the same name are replaced): "
        f"every game of the first --replay-deals deals of each {per}, one file per game, which "
        "`friday13 replay FILE` renders as a page; the results are the same with or without it",
    )
    parser.add_argument(
        "--replay-deals",
        type=positive_argument,
        metavar="N",
        help=f"with --replays: the deals saved per {per} (default {DEFAULT_REPLAY_DEALS})",
    )


def checked_replays(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    source: Mapping[str, str],
    prefix: str = "",
) -> ReplaySaving | None:
    """What ``--replays`` and ``--replay-deals`` ask for, ``None`` without ``--replays``; the folder must be
    creatable and writable (the command checks with ``clashing_outputs`` that it is none of its outputs).
    ``source`` goes into every record. A folder named as a suite's results folder (``card-4p-v2``, in any version:
    ``is_suite_folder``) is refused: the leaderboard reads every ``.json`` file there as a result."""
    if args.replays is None:
        if args.replay_deals is not None:
            parser.error("--replay-deals goes with --replays DIR")
        return None
    folder: Path = args.replays
    from friday13_env.benchmark.suite import is_suite_folder  # (the benchmark's command imports this module)

    if is_suite_folder(folder.name):
        parser.error(
            f"argument --replays: {folder} is named as a suite's results folder, whose .json files the leaderboard "
            "reads as results; give the replays a folder of their own"
        )
    problem = output_problem(folder, directory=True)
    if isinstance(problem, NotADirectoryError):
        parser.error(f"argument --replays: {problem.filename} is a file, not a folder")
    if problem is not None:
        parser.error(f"argument --replays: cannot write in {folder}: {problem.strerror or problem}")
    deals = DEFAULT_REPLAY_DEALS if args.replay_deals is None else args.replay_deals
    return ReplaySaving(folder, deals, prefix, tuple(source.items()))


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description=DESCRIPTION, epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_arguments(parser)
    return parser


def checked_specs(texts: Sequence[str], flag: str, deck: str, parser: argparse.ArgumentParser) -> list[AgentSpec]:
    """Each spec of one flag, checked by building its agent once: an error names the flag."""
    specs = []
    for text in texts:
        try:
            spec = agents.REGISTRY.check(text)
            make_seated(spec, 0, deck)
        except ValueError as error:
            parser.error(f"argument {flag}: {error}")
        specs.append(spec)
    return specs


def matchups_from(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[Matchup]:
    """The matchups the arguments ask for; a bad combination or spec exits through ``parser.error``."""
    if args.focus is not None:
        if not args.vs:
            parser.error("--focus needs --vs with at least one opponent")
        if args.matrix:
            parser.error("--matrix goes with --agents, not --focus")
        focus = checked_specs([args.focus], "--focus", args.deck, parser)[0]
        opponents = checked_specs(args.vs, "--vs", args.deck, parser)
        repeated = repeated_agent(args.vs, opponents)  # one agent spelt twice: two matchups of one label
        if repeated is not None:
            parser.error(f"argument --vs: {repeated}")
        return focus_matchups(focus, opponents)
    if args.vs:
        parser.error("--vs goes with --focus; use --agents alone for a mixed table")
    specs = checked_specs(args.agents, "--agents", args.deck, parser)
    repeated = repeated_agent(args.agents, specs) if args.matrix else None  # a mixed table may seat one agent twice
    if repeated is not None:
        parser.error(f"argument --agents: {repeated}")
    try:
        return matrix_matchups(specs) if args.matrix else [Matchup.table(*specs)]
    except ValueError as error:
        parser.error(f"argument --agents: {error}")


def overwritten_agent(specs: Iterable[str | None], outputs: Iterable[Path]) -> str | None:
    """Why an output would overwrite a checkpoint that an agent played here reads, or None
    (``core.specs.overwritten_checkpoint``: the file the spec or its name names, or one of its options names, such as
    ``endgame:policy=mine.npz``), with the zoo policies of either game (``ppo-v4``, ``dagger-v1``). Shared with
    ``friday13 benchmark`` and ``friday13 ratings``; checked before any game."""
    from friday13_env.friday.agents import REGISTRY as SOLO_REGISTRY

    return overwritten_checkpoint(specs, outputs, {**SOLO_REGISTRY.zoo(), **agents.REGISTRY.zoo()})


def check_outputs(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Every output path writable (folders creatable), matplotlib there for a plot (``_run`` checks that no two
    outputs meet)."""
    for flag in OUTPUT_FLAGS:
        path: Path | None = getattr(args, flag)
        if path is None:
            continue
        if flag == "plot":
            try:
                require_matplotlib()
            except ImportError as error:
                parser.error(f"argument --plot: {error}")
        problem = None if path == STDOUT and flag != "plot" else check_output_path(path, plot=flag == "plot")
        if problem is not None:
            parser.error(f"argument --{flag}: {problem}")


def capped_workers(asked: int, units: int) -> int:
    """The processes a run of ``units`` chunks plays on (``core.options.pool_size``), with a note on stderr when that is
    fewer than ``--workers`` asked for, naming what capped it: the CPUs this process may use, or the run's units of
    work. The command reports the pool it really uses, not the one asked for."""
    used = pool_size(asked, units)
    if used < asked:
        why = (
            f"as this run has {counted(units, 'unit')} of work (whole deals, up to {DEFAULT_CHUNK_DEALS} a unit)"
            if used == units
            else "the CPUs this process may use"
        )
        print(f"--workers {asked}: capped at {used}, {why}", file=sys.stderr)
    return used


def run(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    input_stream: TextIO | None = None,
    output_stream: TextIO | None = None,
) -> int:
    """Check everything, play, report (``input_stream`` is unused: the ``friday13`` subcommand signature).

    Ctrl-C or SIGTERM returns 128 + the signal's number after one line on stderr saying what was written."""
    out = sys.stdout if output_stream is None else output_stream
    return run_writing(lambda written: _run(args, parser, out, written))


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser, out: TextIO, written: list[str]) -> None:
    """``run`` without its signal handling; ``written`` collects the outputs as they are written."""
    repeat = first_repeat(args.players)
    if repeat is not None:
        parser.error(f"argument --players: {args.players[repeat[0]]} is listed twice")
    matchups = matchups_from(args, parser)
    try:
        check_config(
            matchups, args.games, args.players, args.workers, args.deck, args.rounds, seed=args.seed,
            seating_mode=args.seatings,
        )  # fmt: skip
    except ValueError as error:
        parser.error(str(error))
    check_outputs(args, parser)
    paths = {flag: getattr(args, flag) for flag in OUTPUT_FLAGS if getattr(args, flag) is not None}
    replays = checked_replays(args, parser, {"command": "friday13 evaluate"})
    clash = clashing_outputs(
        {f"--{flag}": path for flag, path in paths.items()}, {} if replays is None else {"--replays": replays.folder}
    )  # two outputs on stdout ("-") clash too
    if clash is None and replays is not None:
        named = {f"--{flag}": path for flag, path in paths.items() if path != STDOUT}
        clash = output_in_folder(named, "--replays", replays.folder)
    if clash is not None:
        parser.error(clash)
    files = [path for path in paths.values() if path != STDOUT]
    overwritten = overwritten_agent([args.focus, *(args.vs or []), *(args.agents or [])], files)
    if overwritten is not None:
        parser.error(overwritten)
    notes = sys.stderr if STDOUT in paths.values() else out  # stdout holds that output alone
    workers = capped_workers(args.workers, unit_count(matchups, args.games, args.players, seating_mode=args.seatings))
    for path in paths.values():
        if path != STDOUT:
            path.parent.mkdir(parents=True, exist_ok=True)
    if replays is not None:
        replays.folder.mkdir(parents=True, exist_ok=True)
        written.append(f"replays in {replays.folder}")  # saved as the games are played

    try:
        result = evaluate(
            matchups,
            args.games,
            args.players,
            seed=args.seed,
            workers=workers,
            deck=args.deck,
            num_rounds=args.rounds,
            progress=not args.no_progress,
            checked=True,  # check_config ran above: each agent is built once before the first game
            replays=replays,
            seating_mode=args.seatings,
        )
    except (IllegalActionError, AgentRaisedError, WorkerDied) as error:  # one line, not a traceback
        raise SystemExit(f"friday13 evaluate: stopped: {error}") from error

    print(format_text(result), file=notes)
    games = sum(matchup.games for matchup in result.matchups)
    deals = sum(matchup.deals for matchup in result.matchups)
    print(f"{games} games ({deals} deals) in {result.elapsed_s:.1f} s on {workers} worker(s)", file=notes)
    if replays is not None:
        saved = min(replays.deals, max(matchup.deals for matchup in result.matchups))  # not more than were played
        print(f"saved the games of the first {saved} deal(s) of each matchup in {replays.folder}", file=notes)
    writers = {"json": write_json, "markdown": write_markdown, "plot": plot_win_rates}
    texts = {"json": format_json, "markdown": format_markdown}
    for flag, path in paths.items():
        if path == STDOUT:
            out.write(texts[flag](result))
            out.flush()
            written.append("stdout")
        else:
            writers[flag](result, path)
            print(f"wrote {path}", file=notes)
            written.append(str(path))


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """``friday13 evaluate [options]`` as a function; bad arguments exit with code 2 (argparse's convention)."""
    parser = build_parser(prog)
    return run(parser.parse_args(argv), parser)
