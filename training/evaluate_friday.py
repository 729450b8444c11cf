"""Evaluate agents on Friday (the solo deck-builder): baselines, zoo policies and trained checkpoints.

Example::

    python training/evaluate_friday.py --agents random heuristic --levels 1 2 3 4 \\
        --games 1000 --seed 0 --json friday_eval.json

    python training/evaluate_friday.py --agents random heuristic dagger-v1 runs/x/policy.npz --levels 1

    python training/evaluate_friday.py --agents search:budget=8 --levels 1 4 --games 200 --workers 2 \\
        --json results/friday_search.json --markdown results/friday_search.md

An agent is a spec, exactly as ``friday13_env.friday.agents.make`` takes it: a registered name (``random``,
``heuristic``, ``search``), a zoo name (``dagger-v1``) or a checkpoint path, with options as ``name:key=value,...``.
Prints win rate (Wilson 95% CI, inside [0, 1]), mean score (Student-t 95% CI) and milliseconds per decision per agent
and level; ``--json`` / ``--markdown`` also write them to files (parent folders are created; the paths are checked
before any game is played, and neither may be a checkpoint an agent reads, nor in the package's model zoo; each file is
written whole or not at all). Each agent and each level is listed once. Results are deterministic for a given seed,
whatever ``--workers``: each agent and level is one unit of work, played in one process. Ctrl-C or SIGTERM stops it with
one line saying what was written.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from friday13_env.core.agent import AgentRaisedError, IllegalMoveError
from friday13_env.core.checkpoint import CheckpointError
from friday13_env.core.checks import printable
from friday13_env.core.files import atomic_write_text, clashing_outputs, output_problem, run_writing
from friday13_env.core.options import pool_size
from friday13_env.core.pool import WorkerDied, ordered_results
from friday13_env.core.specs import (
    AgentSpec,
    first_repeat,
    non_negative_argument,
    overwritten_checkpoint,
    parse_spec,
    path_argument,
    positive_argument,
    positive_at_most,
    repeated_agent,
    working_folder_importable,
)
from friday13_env.core.zoo import zoo_output_problem
from friday13_env.friday.agents import REGISTRY, make, names
from friday13_env.friday.evaluation import (
    MAX_GAMES,
    LevelUnit,
    format_markdown,
    format_table,
    play_level,
    results_to_json,
)
from friday13_env.friday.levels import LEVELS


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options, every one checked before any game is played."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["random", "heuristic"],
        help=f"agent specs: {', '.join(names())}, or a checkpoint path (.npz), each optionally with options "
        "as name:key=value,... (e.g. search:budget=16)",
    )
    parser.add_argument(
        "--search-budget",
        type=positive_argument,
        default=None,
        help="budget of every plain 'search' agent (the same as search:budget=N); refused when --agents lists none",
    )
    parser.add_argument("--levels", nargs="+", type=int, default=sorted(LEVELS), choices=sorted(LEVELS))
    parser.add_argument(
        "--games",
        type=positive_at_most(MAX_GAMES),
        default=1000,
        help=f"games per agent and level (default 1000, at most {MAX_GAMES:,})",
    )
    parser.add_argument("--seed", type=non_negative_argument, default=0, help="run seed (>= 0)")
    parser.add_argument(
        "--workers",
        type=positive_argument,
        default=1,
        help="processes to play on, each one agent at one level at a time, at most the CPUs this process may use "
        "(results do not depend on it)",
    )
    parser.add_argument("--json", type=path_argument, default=None, help="write the results to this JSON file")
    parser.add_argument(
        "--markdown", type=path_argument, default=None, help="write the results table (Markdown) to this file"
    )
    args = parser.parse_args(argv)
    repeat = first_repeat(args.levels)
    if repeat is not None:
        parser.error(f"argument --levels: {args.levels[repeat[0]]} is listed twice")
    args.specs = []
    budgeted = False  # whether --search-budget reached an agent
    for text in args.agents:
        try:
            checked = REGISTRY.check(parse_spec(text))
            spec = with_search_budget(checked, args.search_budget)
            budgeted |= spec is not checked
            make(spec, seed=args.seed)  # builds it once: option values and checkpoints are checked too
        except (ValueError, CheckpointError) as error:
            parser.error(f"--agents {printable(text)}: {error}")
        args.specs.append(spec)
    if args.search_budget is not None and not budgeted:
        parser.error(
            f"argument --search-budget: {args.search_budget}: no plain 'search' agent in --agents to apply it to (it "
            "sets the budget of each 'search' without a budget of its own); list one, or drop the flag"
        )
    repeated = repeated_agent(args.agents, args.specs)  # two rows of one name, the same games played twice
    if repeated is not None:
        parser.error(f"argument --agents: {repeated}")
    for flag in ("json", "markdown"):
        path = getattr(args, flag)
        problem = output_problem(path) if path is not None else None
        if problem is not None:
            parser.error(f"--{flag} {path}: cannot write there ({problem.strerror or problem})")
    outputs = {f"--{flag}": Path(getattr(args, flag)) for flag in ("json", "markdown") if getattr(args, flag)}
    clash = clashing_outputs(outputs)
    if clash is None:
        clash = overwritten_checkpoint(args.agents, outputs.values(), REGISTRY.zoo())
    for flag, path in outputs.items():  # any file of the package's zoo, whether an agent here reads it or not
        clash = clash or zoo_output_problem(flag, path)
    if clash is not None:
        parser.error(clash)
    return args


def with_search_budget(spec: AgentSpec, budget: int | None) -> AgentSpec:
    """``search`` with ``--search-budget`` added, unless the spec sets its own budget."""
    if budget is None or spec.name != "search" or any(key == "budget" for key, _ in spec.options):
        return spec
    return AgentSpec(spec.name, (*spec.options, ("budget", budget)))


def main(argv: list[str] | None = None) -> int:
    """Run the evaluation, print the table, optionally save JSON and Markdown."""
    working_folder_importable()  # an agent spec may name a module:factory of the working folder
    args = parse_args(argv)
    return run_writing(lambda written: evaluate_and_write(args, written))


def evaluate_and_write(args: argparse.Namespace, written: list[str]) -> None:
    """Play every agent at every level, print the table, write the files asked for (each added to ``written``)."""
    units = [LevelUnit(spec, level, args.games, args.seed) for spec in args.specs for level in args.levels]
    workers = pool_size(args.workers, len(units))
    if workers < args.workers:
        print(f"--workers {args.workers}: {workers} process(es), one per unit or CPU at most", file=sys.stderr)
    results = []
    try:
        for unit, (result, seconds) in ordered_results(play_level, units, workers):
            results.append(result)
            print(f"{printable(unit.spec.label)} level {unit.level}: {seconds:.1f} s", file=sys.stderr)
    except (AgentRaisedError, IllegalMoveError, WorkerDied) as error:  # one line, not a traceback
        raise SystemExit(f"evaluate_friday.py: stopped: {error}") from error
    print(format_table(results))
    if args.json:
        atomic_write_text(args.json, json.dumps(results_to_json(results, args.seed), indent=2, allow_nan=False) + "\n")
        written.append(str(args.json))
    if args.markdown:
        atomic_write_text(args.markdown, format_markdown(results, args.seed) + "\n")
        written.append(str(args.markdown))


if __name__ == "__main__":
    raise SystemExit(main())
