"""What a training run shows while it runs: the console's lines, a progress bar, TensorBoard, the learning curve.

Shared by the training scripts, so that their learning curves and evaluation lines read the same.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from friday13_training.script_args import atomic_write_text


def tensorboard(run_dir: Path) -> Any:
    """A TensorBoard writer in ``run_dir/tb``, or None when tensorboard is not installed."""
    folder = tensorboard_dir(run_dir)
    if folder is None:
        return None
    from torch.utils.tensorboard import SummaryWriter

    return SummaryWriter(folder)


def tensorboard_dir(run_dir: Path) -> str | None:
    """``run_dir/tb``, where a run's TensorBoard logs go, or None when tensorboard is not installed: a run then goes
    on without them (Stable-Baselines3 given a folder without tensorboard raises an ``ImportError``)."""
    try:
        import torch.utils.tensorboard  # noqa: F401 - it imports tensorboard, or fails
    except ImportError:
        return None
    return str(run_dir / "tb")


def progress_bar(show: bool, total: int, done: int) -> Any:
    """A tqdm bar of ``total`` steps that starts at ``done``, or None when not ``show``n."""
    if not show:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="step", unit_scale=True, smoothing=0.1)


def steps_per_second(steps: int, seconds: float) -> str:
    """Steps per second in words, or that none was measured (no step, or no time on the clock)."""
    return f"{steps / seconds:,.0f} steps/s" if steps and seconds > 0 else "no rate measured"


def write_curve(
    run_dir: Path, curve: Sequence[Mapping[str, Any]], fieldnames: Sequence[str], lineterminator: str = "\n"
) -> None:
    """The learning curve's points as ``run_dir/learning_curve.csv``, one column per field, atomically."""
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=list(fieldnames), lineterminator=lineterminator)
    writer.writeheader()
    writer.writerows(curve)
    atomic_write_text(run_dir / "learning_curve.csv", table.getvalue())


def print_win_rates(steps: int, rates: Mapping[str, Any], players: int = 4) -> None:
    """The console's line for a periodic evaluation: the win rate at a table of ``players`` against copies of each
    baseline."""
    summary = ", ".join(f"{name} {win_rate}" for name, win_rate in rates.items())
    print(f"[eval @ {steps:,} steps] {players}-player win rate vs {players - 1} copies of: {summary}", flush=True)
