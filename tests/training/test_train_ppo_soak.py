"""training/train_ppo.py killed for real: SIGKILL at seeded random moments (some while a checkpoint is being written)
never leaves a run that ``--resume`` cannot continue or that lost more than one checkpoint interval; SIGTERM saves the
run and ``--resume`` goes on from it. Subprocesses of a tiny run (slow: CI's slow job runs them)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from friday13_env import agents
from tests.scripts import PLAIN_PPO_RECIPE, REPOSITORY

torch = pytest.importorskip("torch", reason="the training extra is not installed")
pytestmark = pytest.mark.slow

CHECKPOINT_EVERY = 128
FLAGS = [
    "--num-tables", "8", "--num-steps", "8", "--minibatch-size", "32", "--hidden-sizes", "8", "--players", "3", "4",
    "--eval-every", "0", "--snapshot-every", "192", "--max-snapshots", "2", "--checkpoint-every", str(CHECKPOINT_EVERY),
    "--torch-threads", "1", "--no-progress", *PLAIN_PPO_RECIPE,
]  # fmt: skip
"""One rollout is 8 x 8 = 64 timesteps: a checkpoint every second rollout."""


def start(run_dir: Path, *flags: str) -> subprocess.Popen[str]:
    command = [sys.executable, str(REPOSITORY / "training" / "train_ppo.py"), "--run-dir", str(run_dir), *FLAGS, *flags]
    return subprocess.Popen(command, cwd=REPOSITORY, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def resume_to(run_dir: Path, total: int) -> subprocess.CompletedProcess[str]:
    """``--resume`` the run to ``total`` timesteps, to its end."""
    script = str(REPOSITORY / "training" / "train_ppo.py")
    command = [sys.executable, script, "--run-dir", str(run_dir), "--resume", "--total-timesteps", str(total)]
    return subprocess.run(command, cwd=REPOSITORY, capture_output=True, text=True, timeout=300)


def recorded(run_dir: Path) -> int:
    """The timesteps ``progress.json`` records (0 before the first checkpoint)."""
    try:
        return int(json.loads((run_dir / "progress.json").read_text())["timesteps"])
    except FileNotFoundError:
        return 0


def wait_for(process: subprocess.Popen[str], event: Callable[[], bool], limit: float = 60.0) -> None:
    """Poll ``event`` (about every half millisecond) until it holds or the process ends."""
    ends = time.monotonic() + limit
    while process.poll() is None and not event() and time.monotonic() < ends:
        time.sleep(0.0005)


def writing(run_dir: Path) -> bool:
    """A checkpoint is being written: a temporary file, or the new checkpoint not yet in ``last.pt``'s place (the
    run directory may not exist yet: a loaded machine can take seconds to start the script)."""
    if not run_dir.is_dir():
        return False
    return (run_dir / "next.pt").exists() or any(path.suffix == ".tmp" for path in run_dir.iterdir())


def check_files(run_dir: Path) -> None:
    """What the next ``--resume`` reads: the record, a checkpoint of its timesteps (``last.pt``, or ``next.pt`` that
    the resume puts in its place), the snapshots it names; and a policy that ``agents.load`` plays."""
    progress = json.loads((run_dir / "progress.json").read_text())
    states = [
        torch.load(run_dir / name, weights_only=True) for name in ("last.pt", "next.pt") if (run_dir / name).exists()
    ]
    assert progress["timesteps"] in [state["timesteps"] for state in states], (progress["timesteps"], len(states))
    assert all((run_dir / "snapshots" / f"{name}.npz").is_file() for name in progress["snapshots"])
    agents.load(str(run_dir / "policy.npz"))


def test_sigkill_at_random_moments_never_costs_more_than_a_checkpoint_interval(tmp_path: Path) -> None:
    """Ten kills: after a seeded random time, while a checkpoint file is being written, or right after the record
    changed. Each resume goes on (no process ends with an error), the record never goes back, and the run ends with
    a policy ``agents.load`` plays."""
    run_dir = tmp_path / "run"
    rng = np.random.default_rng(43)
    highest = 0
    for kill in range(10):
        resuming = (run_dir / "progress.json").exists()
        process = start(run_dir, "--total-timesteps", "1000000", *(["--resume"] if resuming else []))
        before = recorded(run_dir)
        moment = kill % 3
        if moment == 0:
            wait_for(process, lambda: False, limit=float(rng.uniform(2.0, 8.0)))
        elif moment == 1:
            wait_for(process, lambda: writing(run_dir))
        else:
            mtime = (run_dir / "progress.json").stat().st_mtime_ns if resuming else 0

            def changed(mtime: int = mtime) -> bool:
                return (run_dir / "progress.json").exists() and (run_dir / "progress.json").stat().st_mtime_ns != mtime

            wait_for(process, changed)
        assert process.poll() is None, process.communicate()  # still training: it did not stop with an error
        process.send_signal(signal.SIGKILL)
        process.communicate()
        now = recorded(run_dir)
        assert now >= before and now >= highest - CHECKPOINT_EVERY, (kill, before, now, highest)
        highest = max(highest, now)
        if now:
            check_files(run_dir)
    total = str(recorded(run_dir) + 256)
    finished = resume_to(run_dir, int(total))
    assert finished.returncode == 0, finished.stderr
    assert recorded(run_dir) == int(total) and not (run_dir / "next.pt").exists()
    assert not [path.name for path in run_dir.iterdir() if path.suffix == ".tmp"]
    agents.load(str(run_dir / "policy.npz"))


def test_sigterm_saves_the_run_and_resume_goes_on_from_it(tmp_path: Path) -> None:
    """SIGTERM after the first checkpoint: exit status 143, one line naming the checkpoint saved (no traceback), whose
    timesteps ``last.pt`` and the record share; ``--resume`` continues from there to the end."""
    run_dir = tmp_path / "run"
    process = start(run_dir, "--total-timesteps", "1000000")
    wait_for(process, lambda: recorded(run_dir) >= CHECKPOINT_EVERY)
    time.sleep(0.3)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, err
    saved = recorded(run_dir)
    assert err.strip().splitlines()[-1] == (
        f"stopped by SIGTERM: the checkpoint at {saved:,} timesteps is in {run_dir}: --resume goes on from it"
    )
    assert "Traceback" not in err
    assert torch.load(run_dir / "last.pt", weights_only=True)["timesteps"] == saved
    resumed = resume_to(run_dir, saved + 128)
    assert resumed.returncode == 0, resumed.stderr
    assert recorded(run_dir) == saved + 128
