"""Plot a training run's learning curve: win rate against the baselines over training steps.

Usage: ``python training/plot_curve.py runs/ppo --out docs/ppo_curve.png``.
Reads the run's ``progress.json`` (written by ``train_ppo.py``), so a resumed run plots as one curve.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from friday13_env.friday13.evaluation.report import require_matplotlib


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="a train_ppo.py run directory")
    parser.add_argument("--out", type=Path, required=True, help="where to write the PNG")
    parser.add_argument("--players", type=int, default=4, help="table size of the evaluations (for the 1/n line)")
    args = parser.parse_args(argv)
    progress_file = args.run_dir / "progress.json"
    if not progress_file.is_file():
        parser.error(f"{progress_file} does not exist: is {args.run_dir} a train_ppo.py run directory?")
    curve = json.loads(progress_file.read_text())["curve"]
    if not curve:
        parser.error(f"{progress_file} holds no evaluations yet (--eval-every 0?)")
    require_matplotlib()
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4))
    axes = figure.subplots()
    steps = [point["timesteps"] for point in curve]
    for opponent in [key for key in curve[0] if key != "timesteps"]:
        axes.plot(steps, [point[opponent] for point in curve], marker="o", label=f"vs 3 x {opponent}")
    axes.axhline(1 / args.players, linestyle="--", color="grey", label=f"equal seat (1/{args.players})")
    axes.set_xlabel("training timesteps (learner decisions)")
    axes.set_ylabel(f"{args.players}-player win rate")
    axes.set_ylim(0, 1)
    axes.legend()
    axes.grid(alpha=0.3)
    figure.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
