"""Plot training runs' learning curves: win rate against the baselines over training steps or wall-clock seconds.

Usage: ``python training/plot_curve.py runs/ppo --out docs/ppo_curve.png`` (``--x seconds`` for time to a
strength; several run directories, with ``--labels``, share one figure to compare recipes).
Reads each run's ``progress.json`` (written by ``train_ppo.py``), so a resumed run plots as one curve;
one line per ``--eval-opponents`` agent, named by its spec. The image is written atomically.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from friday13_env.core.files import atomic_write
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS
from friday13_env.friday13.evaluation.report import check_output_path


def read_curve(progress_file: Path, x: str = "timesteps") -> list[dict[str, Any]]:
    """The run's evaluations, oldest first; a ``ValueError`` that names the file if it is missing or damaged, or if
    a point lacks ``x`` (a run of a release before 0.11.0 has no seconds)."""
    try:
        progress = json.loads(progress_file.read_text())
    except FileNotFoundError:
        run_dir = progress_file.parent
        raise ValueError(f"{progress_file} does not exist: is {run_dir} a train_ppo.py run directory?") from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"{progress_file} is damaged ({error})") from error
    curve = progress.get("curve") if isinstance(progress, dict) else None
    if not isinstance(curve, list) or not all(
        isinstance(point, dict) and isinstance(point.get("timesteps"), int) for point in curve
    ):
        raise ValueError(f"{progress_file} is damaged: no list of evaluations under 'curve'")
    if not curve:
        raise ValueError(f"{progress_file} holds no evaluations yet (--eval-every 0?)")
    if missing := [point["timesteps"] for point in curve if not isinstance(point.get(x), int | float)]:
        raise ValueError(
            f"{progress_file}: the evaluations at {missing[:3]} timesteps have no {x} (written before 0.11.0 recorded "
            f"them; --x timesteps plots them)"
        )
    return curve


LINE_STYLES = ("-", "--", ":", "-.")
AXES = {
    "timesteps": "training timesteps (as the run counts them)",
    "seconds": "wall-clock seconds of the run (its evaluations included)",
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "run_dirs", type=Path, nargs="+", help="train_ppo.py run directories (one line per baseline each)"
    )
    parser.add_argument(
        "--out", type=Path, required=True, help="where to write the image: its suffix names a format matplotlib writes"
    )
    parser.add_argument("--x", choices=sorted(AXES), default="timesteps", help="what the horizontal axis counts")
    parser.add_argument("--labels", nargs="+", help="a name for each run in the legend (default: the folder names)")
    parser.add_argument("--players", type=int, default=4, help="table size of the evaluations (for the 1/n line)")
    args = parser.parse_args(argv)
    if not MIN_PLAYERS <= args.players <= MAX_PLAYERS:
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
        curves = [read_curve(run_dir / "progress.json", args.x) for run_dir in args.run_dirs]
    except ValueError as error:
        parser.error(str(error))
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4))
    axes = figure.subplots()
    colours: dict[str, str] = {}  # one colour per baseline, one line style per run
    for index, (label, curve) in enumerate(zip(labels, curves, strict=True)):
        where = [point[args.x] for point in curve]
        for opponent in [key for key in curve[0] if key not in AXES]:
            rates = [point.get(opponent, float("nan")) for point in curve]  # nan: a point without this column
            name = f"vs {args.players - 1} x {opponent}"
            name = name if len(curves) == 1 else f"{label}: {name}"
            colour = colours.setdefault(opponent, f"C{len(colours)}")
            style = LINE_STYLES[index % len(LINE_STYLES)]
            axes.plot(where, rates, marker="o", markersize=4, color=colour, linestyle=style, label=name)
    axes.axhline(1 / args.players, linestyle="--", color="grey", label=f"equal seat (1/{args.players})")
    axes.set_xlabel(AXES[args.x])
    axes.set_ylabel(f"{args.players}-player win rate")
    axes.set_ylim(0, 1)
    axes.legend()
    axes.grid(alpha=0.3)
    figure.tight_layout()
    atomic_write(args.out, lambda handle: figure.savefig(handle, dpi=120, format=args.out.suffix[1:].lower()))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
