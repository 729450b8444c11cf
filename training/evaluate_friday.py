"""Evaluate baseline agents and trained policies on Friday (the solo deck-builder).

Example::

    python training/evaluate_friday.py --agents random heuristic --levels 1 2 3 4 \\
        --games 1000 --seed 0 --json friday_eval.json

    python training/evaluate_friday.py --agents random heuristic checkpoints/friday_level1.npz --levels 1

    python training/evaluate_friday.py --agents search --search-budget 8 --levels 1 4 --games 200 \
        --json results/friday_search.json --markdown results/friday_search.md

Prints win rate (Wilson 95% CI), mean score (Student-t 95% CI) and seconds per decision per agent and
level; ``--json`` / ``--markdown`` also write them to files. Results are deterministic for a given seed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from friday13_env.core.policy import CheckpointError
from friday13_env.friday.agents import Agent, make_agent
from friday13_env.friday.evaluation import evaluate, format_markdown, format_table, results_to_json


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["random", "heuristic"],
        help="random, heuristic, search, or the path of a trained policy checkpoint (.npz), "
        "e.g. checkpoints/friday_level1.npz",
    )
    parser.add_argument("--search-budget", type=int, default=8, help="search: sampled futures per candidate move")
    parser.add_argument("--levels", nargs="+", type=int, default=[1, 2, 3, 4], choices=[1, 2, 3, 4])
    parser.add_argument("--games", type=int, default=1000, help="games per agent and level")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write the results to this JSON file")
    parser.add_argument("--markdown", default=None, help="write the results table (Markdown) to this file")
    args = parser.parse_args(argv)
    for name in args.agents:
        try:
            build_agent(name, args)
        except (ValueError, CheckpointError) as error:
            parser.error(f"--agents {name}: {error}")
    return args


def build_agent(name: str, args: argparse.Namespace) -> Agent:
    """The agent called ``name``, with the command line's options for the agents that take them."""
    options = {"budget": args.search_budget} if name == "search" else {}
    return make_agent(name, args.seed, **options)


def main(argv: list[str] | None = None) -> int:
    """Run the evaluation, print the table, optionally save JSON."""
    args = parse_args(argv)
    results = []
    for name in args.agents:
        for level in args.levels:
            start = time.perf_counter()
            results.append(evaluate(build_agent(name, args), level, args.games, args.seed))
            print(f"{name} level {level}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    print(format_table(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results_to_json(results, args.seed), handle, indent=2)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as handle:
            handle.write(format_markdown(results, args.seed) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
