"""Plot training runs' learning curves: win rate against the baselines over training steps or wall-clock seconds.

Usage: ``python training/plot_curve.py runs/ppo --out docs/ppo_curve.png`` (``--x seconds`` for time to a
strength; several run directories, with ``--labels``, share one figure to compare recipes).
Reads each run's ``progress.json`` (written by ``train_ppo.py``, ``best_response.py`` or ``finetune_ppo.py``), so a
resumed run plots as one curve; one line per ``--eval-opponents`` agent, named by its spec. The record is checked as
``--resume`` checks it (no NaN, every point a win rate from 0 to 1 against the first point's baselines, at timesteps
that never go back): a damaged one is refused, naming the file and the point. The equal-share line is 1 / the table
size the runs were evaluated at, read from their records. The image is written atomically.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from friday13_training.runs import load_progress, win_rate_curve_problem

from friday13_env.core.files import atomic_write
from friday13_env.core.specs import path_argument, shown
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS
from friday13_env.friday13.evaluation.report import check_output_path

UNRECORDED_EVAL_PLAYERS = 4
"""The table size of the evaluations of a run whose record has no ``eval_players``: ``finetune_ppo.py``'s (which
evaluates at 4 players) and ``train_ppo.py``'s before ``--eval-players``."""


def read_curve(progress_file: Path, x: str = "timesteps") -> tuple[list[dict[str, Any]], int]:
    """The run's evaluations, oldest first, and the table size they were played at (``eval_players``); a
    ``ValueError`` that names the file if it is missing or damaged (``load_progress``, ``win_rate_curve_problem``,
    the point named), or if a point lacks ``x`` (a run of a release before 0.11.0 has no seconds)."""
    try:
        progress = load_progress(progress_file, {"args": {}, "timesteps": 0, "curve": []})
    except FileNotFoundError:
        run_dir = progress_file.parent
        raise ValueError(f"{progress_file} does not exist: is {run_dir} a train_ppo.py run directory?") from None
    except ValueError as error:
        raise ValueError(f"{progress_file} is damaged: {error}") from None
    curve = progress["curve"]
    if not curve:
        raise ValueError(f"{progress_file} holds no evaluations yet (--eval-every 0?)")
    opponents = [key for key in curve[0] if key not in AXES]
    problem = (
        win_rate_curve_problem(progress, opponents) if opponents else f"curve point 0 {shown(curve[0])} has no win rate"
    )
    if problem:
        raise ValueError(f"{progress_file} is damaged: {problem}")
    players = progress["args"].get("eval_players", UNRECORDED_EVAL_PLAYERS)
    if type(players) is not int or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(
            f"{progress_file} is damaged: eval_players {shown(players)} (allowed: a table size from {MIN_PLAYERS} to "
            f"{MAX_PLAYERS})"
        )
    if missing := [point["timesteps"] for point in curve if x not in point]:
        raise ValueError(
            f"{progress_file}: the evaluations at {missing[:3]} timesteps have no {x} (written before 0.11.0 recorded "
            f"them; --x timesteps plots them)"
        )
    return curve, players


def table_size(run_dirs: Sequence[Path], sizes: Sequence[int], given: int | None) -> int:
    """The table size the runs were evaluated at (``sizes``, each run's), whose equal share the figure draws; a
    ``ValueError`` where the runs differ (one line cannot be every run's equal share) or ``--players`` (``given``)
    is another."""
    if len(set(sizes)) > 1:
        each = ", ".join(f"{run_dir}: {size}" for run_dir, size in zip(run_dirs, sizes, strict=True))
        raise ValueError(
            f"the runs were evaluated at different table sizes ({each}), whose equal shares differ: plot them apart"
        )
    if given is not None and given != sizes[0]:
        raise ValueError(
            f"--players {given}: {run_dirs[0]} was evaluated at {sizes[0]} players (its record's eval_players); "
            f"leave --players out, or give {sizes[0]}"
        )
    return sizes[0]


LINE_STYLES = ("-", "--", ":", "-.")
AXES = {
    "timesteps": "training timesteps (as the run counts them)",
    "seconds": "wall-clock seconds of the run (its evaluations included)",
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "run_dirs", type=path_argument, nargs="+", help="train_ppo.py run directories (one line per baseline each)"
    )
    parser.add_argument(
        "--out",
        type=path_argument,
        required=True,
        help="where to write the image: its suffix names a format matplotlib writes",
    )
    parser.add_argument("--x", choices=sorted(AXES), default="timesteps", help="what the horizontal axis counts")
    parser.add_argument("--labels", nargs="+", help="a name for each run in the legend (default: the folder names)")
    parser.add_argument(
        "--players",
        type=int,
        help="table size of the evaluations, for the 1/n line (default: the runs' own, as their records say; one "
        "given must be it)",
    )
    args = parser.parse_args(argv)
    if args.players is not None and not MIN_PLAYERS <= args.players <= MAX_PLAYERS:
        parser.error(f"--players must be in {MIN_PLAYERS}..{MAX_PLAYERS}, got {args.players}")
    labels = args.labels or [run_dir.name for run_dir in args.run_dirs]
    if len(labels) != len(args.run_dirs):
        parser.error(f"--labels: {len(labels)} given for {len(args.run_dirs)} run directories (allowed: one per run)")
    try:  # as evaluate's --plot: a writable path, in a format matplotlib writes (it needs matplotlib)
        problem = check_output_path(args.out, plot=True)
    except ImportError as error:
        parser.error(str(error))
    if problem:
        parser.error(f"--out: {problem}")
    try:
        curves, sizes = zip(*(read_curve(run_dir / "progress.json", args.x) for run_dir in args.run_dirs), strict=True)
        players = table_size(args.run_dirs, sizes, args.players)
    except ValueError as error:
        parser.error(str(error))
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4))
    axes = figure.subplots()
    colours: dict[str, str] = {}  # one colour per baseline, one line style per run
    lines: list[Any] = []
    names: list[str] = []
    for index, (label, curve) in enumerate(zip(labels, curves, strict=True)):
        where = [point[args.x] for point in curve]
        for opponent in [key for key in curve[0] if key not in AXES]:
            rates = [point[opponent] for point in curve]  # (read_curve: every point has the first one's columns)
            name = f"vs {players - 1} x {opponent}"
            name = name if len(curves) == 1 else f"{label}: {name}"
            colour = colours.setdefault(opponent, f"C{len(colours)}")
            style = LINE_STYLES[index % len(LINE_STYLES)]
            shown_as = name.replace("$", r"\$")  # as written: a "$" would start mathtext, which may not parse
            lines += axes.plot(where, rates, marker="o", markersize=4, color=colour, linestyle=style, label=shown_as)
            names.append(shown_as)
    names.append(f"equal seat (1/{players})")
    lines.append(axes.axhline(1 / players, linestyle="--", color="grey", label=names[-1]))
    axes.set_xlabel(AXES[args.x])
    axes.set_ylabel(f"{players}-player win rate")
    axes.set_ylim(0, 1)
    axes.legend(lines, names)  # given, not read from the lines: matplotlib leaves out labels that start with "_"
    axes.grid(alpha=0.3)
    figure.tight_layout()
    atomic_write(args.out, lambda handle: figure.savefig(handle, dpi=120, format=args.out.suffix[1:].lower()))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
