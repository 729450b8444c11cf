"""Play agents against each other on duplicate deals and report win rates with 95% intervals.

Every deal is replayed with the agents rotated through every seat, and the intervals are computed
over deals (see docs/evaluation.md). Agents are specs: a registered name (random, cautious,
majority, search), a checkpoint path, or name:key=value,... for options (search:budget=200).

Examples:
  # the README figure: each agent against three copies of each other agent, 4 players
  python training/evaluate.py --matrix --agents random cautious majority search --games 2000 \\
      --workers 2 --json results/matrix.json --markdown results/matrix.md --plot results/matrix.png
  # one agent against copies of each opponent, at every table size
  python training/evaluate.py --focus checkpoints/ppo.zip --vs random cautious --players 3 4 5 6
  # one mixed table, seats filled with the listed agents in order (then rotated)
  python training/evaluate.py --agents random cautious majority search
"""

from __future__ import annotations

import argparse
from pathlib import Path

from friday13_env.friday13.evaluation import Matchup, evaluate, focus_matchups, matrix_matchups, parse_spec
from friday13_env.friday13.evaluation.report import (
    format_text,
    plot_win_rates,
    require_matplotlib,
    write_json,
    write_markdown,
)
from friday13_env.friday13.evaluation.tournament import check_config


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--agents", nargs="+", metavar="SPEC", help="agents of one mixed table, or of the --matrix")
    who.add_argument("--focus", metavar="SPEC", help="the agent to measure against copies of each --vs agent")
    parser.add_argument("--vs", nargs="+", metavar="SPEC", help="opponents of --focus, one matchup each")
    parser.add_argument("--matrix", action="store_true", help="with --agents: every agent vs copies of every other")
    parser.add_argument("--players", nargs="+", type=int, default=[4], metavar="N", help="table sizes (default 4)")
    parser.add_argument("--games", type=int, default=400, help="at least this many games per matchup and table size")
    parser.add_argument("--seed", type=int, default=0, help="master seed: deals and agent seeds derive from it")
    parser.add_argument("--workers", type=int, default=1, help="processes to play on (results do not depend on it)")
    parser.add_argument("--deck", default="standard", help="standard or german")
    parser.add_argument("--rounds", type=int, default=4, help="rounds per game")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the results as JSON")
    parser.add_argument("--markdown", type=Path, metavar="PATH", help="write the results as Markdown tables")
    parser.add_argument("--plot", type=Path, metavar="PATH", help="plot win rates with intervals (needs matplotlib)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def matchups_from(args: argparse.Namespace) -> list[Matchup]:
    """The matchups the arguments ask for; a ``ValueError`` for a bad combination or spec."""
    if args.focus is not None:
        if not args.vs:
            raise ValueError("--focus needs --vs with at least one opponent")
        if args.matrix:
            raise ValueError("--matrix goes with --agents, not --focus")
        return focus_matchups(parse_spec(args.focus), [parse_spec(spec) for spec in args.vs])
    if args.vs:
        raise ValueError("--vs goes with --focus; use --agents alone for a mixed table")
    specs = [parse_spec(spec) for spec in args.agents]
    return matrix_matchups(specs) if args.matrix else [Matchup.table(*specs)]


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        matchups = matchups_from(args)
        check_config(matchups, args.games, args.players, args.workers, args.deck, args.rounds, seed=args.seed)
        if args.plot is not None:
            require_matplotlib()
    except (ValueError, ImportError) as error:
        parser.error(str(error))
    for path in (args.json, args.markdown, args.plot):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)

    result = evaluate(
        matchups,
        args.games,
        args.players,
        seed=args.seed,
        workers=args.workers,
        deck=args.deck,
        num_rounds=args.rounds,
        progress=not args.no_progress,
    )

    print(format_text(result))
    games = sum(matchup.games for matchup in result.matchups)
    deals = sum(matchup.deals for matchup in result.matchups)
    print(f"{games} games ({deals} deals) in {result.elapsed_s:.1f} s on {args.workers} worker(s)")
    if args.json is not None:
        write_json(result, args.json)
        print(f"wrote {args.json}")
    if args.markdown is not None:
        write_markdown(result, args.markdown)
        print(f"wrote {args.markdown}")
    if args.plot is not None:
        plot_win_rates(result, args.plot)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
