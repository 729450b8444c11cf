"""``friday13 benchmark``: list the suites, or play one for an agent and write its result file.

Every check runs before the first game (the suite, the agent built once, the frozen deals and anchors, the
output path, a partial file of another run); a run stopped by Ctrl-C keeps its finished units in
``OUT.partial``, and the same command continues it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from friday13_env.benchmark.leaderboard import (
    LEADERBOARD,
    RATINGS_FILE,
    RESULTS_FOLDER,
    format_interval,
    generate,
    result_name,
)
from friday13_env.benchmark.ratings import check_ratings, processes_for, run_ratings
from friday13_env.benchmark.runner import execute, partial_path, prepare
from friday13_env.benchmark.suite import SPLITS, Suite, suites
from friday13_env.core.files import atomic_write_text, clashing_outputs, run_writing
from friday13_env.core.specs import non_negative_argument, positive_argument
from friday13_env.friday13.evaluation.command import STDOUT, add_replay_arguments, checked_replays, overwritten_agent
from friday13_env.friday13.evaluation.report import check_output_path

DESCRIPTION = "Play a frozen benchmark suite with an agent; print its scores and write a result file."
EXAMPLES = """\
Examples:
  friday13 benchmark --list
  friday13 benchmark --agent ppo-v4 --suite card-4p-quick
  friday13 benchmark --agent my_agents:MyAgent --suite card-4p      # a factory of your own
  friday13 benchmark --agent search --suite friday-levels            # the solo game's agents
  friday13 benchmark --agent search --suite friday-levels --replays results/replays
Results go to results/benchmark/SUITE-vN/AGENT.json unless --out says otherwise (see docs/benchmark.md).
--replays DIR also saves games as replay files, one per game: every seat rotation of the first --replay-deals
deals of each card-game cell (DIR/01-4p-AGENT-cautious-deal0-shift2.json: cell index, players, agents, deal,
seat shift), the first --replay-deals games of each solo level (DIR/level2-game0.json); with --split dev the
names start with dev-. `friday13 replay FILE --html OUT.html` renders one as a page.
"""


DEFAULT_SPLIT = "test"
RUN_OPTIONS = ("split", "workers", "out", "overwrite", "replays", "replay_deals")
"""The options of a run besides ``--agent`` and ``--suite``, which ``--list`` refuses rather than ignores."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--list", action="store_true", help="list the suites and exit")
    parser.add_argument("--agent", metavar="SPEC", help="an agent spec as agents.make takes it, or module:factory")
    parser.add_argument("--suite", metavar="NAME", help="the suite to play (see --list)")
    parser.add_argument(
        "--split", choices=SPLITS, help=f"{DEFAULT_SPLIT} (reported figures; the default) or dev (tuning)"
    )
    parser.add_argument("--workers", type=positive_argument, help="processes (default: every usable CPU)")
    parser.add_argument("--out", type=Path, metavar="PATH", help="result file (default under results/benchmark/)")
    parser.add_argument("--overwrite", action="store_true", help="replace a complete result file at --out")
    add_replay_arguments(parser, "card-game cell (or games of each solo level)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def default_out(suite: Suite, spec: str, split: str) -> Path:
    name = result_name(spec)
    return RESULTS_FOLDER / suite.id / (name if split == "test" else name.replace(".json", f".{split}.json"))


def format_suites() -> str:
    lines = []
    for suite in suites().values():
        games = suite.games_per_cell("test")
        lines.append(f"{suite.name} (v{suite.version}, {suite.game}): {suite.title}")
        lines.append(
            f"    {len(suite.cells)} cells, {sum(games)} test games: " + ", ".join(c.name for c in suite.cells)
        )
    return "\n".join(lines)


def format_result(result: dict[str, Any]) -> str:
    """The result as a text table: each cell, then the aggregate and the cost."""
    lines = [f"{result['agent']['spec']} on {result['suite']['id']} ({result['suite']['split']} split)"]
    second = "score" if "score" in result["cells"][0] else "margin"
    lines.append(f"{'cell':<38} {'games':>6} {'win share':>22} {second:>24} {'normalised':>24}")
    for cell in result["cells"]:
        normalised = "-" if cell["normalised"] is None else format_interval(cell["normalised"], 2)
        lines.append(
            f"{cell['name']:<38} {cell['games']:>6} {format_interval(cell['win_share'], 3):>22} "
            f"{format_interval(cell[second], 2):>24} {normalised:>24}"
        )
    if result["normalised"] is not None:
        for name in ("iqm", "mean"):
            lines.append(
                f"normalised score, {name.upper()} over cells: {format_interval(result['normalised'][name], 3)}"
            )
    cost = result["cost"]["ms_per_move"]
    lines.append(f"cost: {'-' if cost is None else f'{cost:.3f}'} ms per move; {result['provenance']['elapsed_s']} s")
    return "\n".join(lines)


def run(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    _input: TextIO | None = None,
    output: TextIO | None = None,
) -> int:
    out = sys.stdout if output is None else output
    if args.list:
        given = [
            f"--{name.replace('_', '-')}"
            for name in ("agent", "suite", *RUN_OPTIONS)
            if getattr(args, name) not in (None, False)
        ]
        if given:
            options = ", ".join(f"--{name.replace('_', '-')}" for name in RUN_OPTIONS)
            parser.error(f"--list takes no --agent or --suite, nor an option of a run ({options}); got {given[0]}")
        print(format_suites(), file=out)
        return 0
    if not args.agent or not args.suite:
        parser.error("give --agent SPEC and --suite NAME (or --list)")
    return run_writing(lambda written: _run(args, parser, out, written))


def check_out(path: Path, parser: argparse.ArgumentParser) -> None:
    """``--out`` can be written (its folders created), or argparse's error (exit 2) saying why, before any work."""
    problem = check_output_path(path)
    if problem is not None:
        parser.error(f"argument --out: {problem}")


def note_capped_workers(asked: int | None, used: int) -> None:
    """On stderr, as ``friday13 evaluate`` does: ``--workers`` asked for more processes than the ``used`` ones."""
    if asked is not None and used < asked:
        print(f"--workers {asked}: capped at {used}, the CPUs this process may use", file=sys.stderr)


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser, out: TextIO, written: list[str]) -> None:
    split = DEFAULT_SPLIT if args.split is None else args.split
    try:
        suite = suites().get(args.suite)
        if suite is None:
            parser.error(f"argument --suite: unknown suite {args.suite!r}; suites: {sorted(suites())}")
        if args.out == STDOUT:
            parser.error("argument --out: a benchmark writes a file (and OUT.partial as it plays), not stdout (-)")
        path = args.out if args.out is not None else default_out(suite, args.agent, split)
        check_out(path, parser)
        overwritten = overwritten_agent([args.agent], [path, partial_path(path)])
        if overwritten is not None:
            parser.error(overwritten)
        if path.exists() and not args.overwrite:
            parser.error(f"argument --out: {path} holds a complete result; --overwrite replaces it")
        replays = checked_replays(
            args,
            parser,
            {"command": "friday13 benchmark", "suite": suite.id, "split": split},
            prefix="" if split == DEFAULT_SPLIT else f"{split}-",
        )
        clash = clashing_outputs({"--out": path}, {} if replays is None else {"--replays": replays.folder})
        if clash is not None:
            parser.error(clash)
        plan = prepare(args.agent, suite, split=split, workers=args.workers, out=path, replays=replays)
    except (ValueError, ModuleNotFoundError) as error:
        parser.error(str(error))
    note_capped_workers(args.workers, plan.processes)
    resuming = partial_path(path).exists()
    if resuming:
        print(f"continuing the partial run in {partial_path(path)}", file=out)
    if replays is not None:
        replays.folder.mkdir(parents=True, exist_ok=True)
        written.append(f"replays in {replays.folder}")  # saved as the units are played
    with _progress_bar(not args.no_progress) as update:
        result = execute(plan, update)
    written.append(str(path))
    print(format_result(result), file=out)
    print(f"wrote {path}", file=out)
    if replays is not None:
        unit = "game(s) of each level" if suite.game == "friday" else "deal(s) of each cell"
        print(f"saved the games of the first {replays.deals} {unit} in {replays.folder}", file=out)


class _progress_bar:
    """A tqdm bar of games when tqdm is installed and wanted, else nothing."""

    def __init__(self, enabled: bool) -> None:
        self.bar: Any = None
        self.enabled = enabled

    def __enter__(self) -> Any:
        def update(done: int, total: int) -> None:
            if self.bar is None and self.enabled:
                try:
                    from tqdm import tqdm
                except ImportError:
                    self.enabled = False
                    return
                self.bar = tqdm(total=total, initial=done, unit="game", dynamic_ncols=True)
            elif self.bar is not None:
                self.bar.update(done - self.bar.n)

        return update

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()


RATINGS_DESCRIPTION = "Rate agents from free-for-all games at mixed 3-6 player tables (openskill Plackett-Luce)."
LEADERBOARD_DESCRIPTION = "Write docs/leaderboard.md from the result files, or --check that it matches them."


def add_ratings_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agents", nargs="+", metavar="SPEC", help="the pool (default: every card-game agent and zoo policy)"
    )
    parser.add_argument("--tables", type=positive_argument, default=400, help="tables to play (default 400)")
    parser.add_argument("--seed", type=non_negative_argument, default=0, help="seed of the tables (default 0)")
    parser.add_argument("--workers", type=positive_argument, help="processes (default: every usable CPU)")
    parser.add_argument(
        "--out",
        type=Path,
        default=RESULTS_FOLDER / RATINGS_FILE,
        help="result file, - for stdout (default %(default)s)",
    )


def run_ratings_command(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    _input: TextIO | None = None,
    output: TextIO | None = None,
) -> int:
    out = sys.stdout if output is None else output
    from friday13_env.friday13.agents import names

    to_stdout = args.out == STDOUT
    if not to_stdout:
        check_out(args.out, parser)
    notes = sys.stderr if to_stdout else out  # stdout holds the result file alone, as `evaluate --json -` does

    def body(written: list[str]) -> None:
        try:
            plan = check_ratings(args.agents or names(), args.workers)
        except (ValueError, ModuleNotFoundError) as error:
            parser.error(str(error))
        note_capped_workers(args.workers, processes_for(args.workers))
        result = run_ratings(plan, args.tables, args.seed, args.workers)
        text = json.dumps(result, indent=1) + "\n"
        if to_stdout:
            out.write(text)
            out.flush()
            written.append("stdout")
        else:
            atomic_write_text(args.out, text)
            written.append(str(args.out))
        for agent, rating in sorted(result["ratings"].items(), key=lambda item: -item[1]["ordinal"]):
            print(f"{agent:<20} mu {rating['mu']:6.2f}  sigma {rating['sigma']:5.2f}", file=notes)
        if not to_stdout:
            print(f"wrote {args.out}", file=out)

    return run_writing(body)


def add_leaderboard_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", type=Path, default=RESULTS_FOLDER, help="result folder (default %(default)s)")
    parser.add_argument("--out", type=Path, default=LEADERBOARD, help="the page (default %(default)s)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the page differs from what the files give")


def run_leaderboard_command(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    _input: TextIO | None = None,
    output: TextIO | None = None,
) -> int:
    out = sys.stdout if output is None else output
    current = ""
    if args.check:  # the page is only read: it must be a file, if it is there
        if args.out.is_dir():
            parser.error(f"argument --out: {args.out} is a folder; give a file name")
        try:
            current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        except (OSError, UnicodeDecodeError) as error:
            parser.error(f"argument --out: cannot read {args.out}: {getattr(error, 'strerror', None) or error}")
    else:
        check_out(args.out, parser)
    try:
        page = generate(args.results)
    except (ValueError, ModuleNotFoundError) as error:
        parser.error(str(error))
    if args.check:
        if current != page:
            print(f"{args.out} differs from what {args.results} gives; run `friday13 leaderboard`", file=out)
            return 1
        print(f"{args.out} matches {args.results}", file=out)
        return 0
    atomic_write_text(args.out, page)
    print(f"wrote {args.out}", file=out)
    return 0
