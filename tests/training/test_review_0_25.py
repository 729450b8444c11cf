"""Review of 0.25.0's training scripts: a run lets go of its folder's lock when its command ends (it was held until
the process ended), whether the run finished, failed or was refused."""

from __future__ import annotations

import fcntl
import sys
from pathlib import Path

import pytest

from tests.scripts import TINY_PPO, load_training_script

pytest.importorskip("torch", reason="the training extra is not installed")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="run folders are locked with flock")


def free(folder: Path) -> bool:
    """Whether another open file of ``folder``'s lock can take it (flock's locks belong to an open file, so this
    process's own earlier one holds it against this one too)."""
    with open(folder / ".run.lock", "rb") as other:
        try:
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
    return True


def test_a_finished_run_lets_go_of_its_folders_lock(tmp_path: Path) -> None:
    train = load_training_script("train_ppo")
    run = tmp_path / "run"
    train.main(["--run-dir", str(run), "--total-timesteps", "128", *TINY_PPO])
    assert free(run)
    train.main(["--run-dir", str(run), "--resume", "--total-timesteps", "256"])  # the same process takes it again
    assert free(run)


def test_a_refused_resume_lets_go_of_its_folders_lock(tmp_path: Path) -> None:
    train = load_training_script("train_ppo")
    run = tmp_path / "run"
    train.main(["--run-dir", str(run), "--total-timesteps", "128", *TINY_PPO])
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(run), "--resume", "--total-timesteps", "256", "--learning-rate", "0.1"])
    assert free(run)


def test_a_run_keeps_the_locks_its_process_held_before_it(tmp_path: Path) -> None:
    """A caller that holds another folder's lock (``runs.lock_run``) keeps it: a command lets go of its own only."""
    from friday13_training import runs

    other = tmp_path / "other"
    other.mkdir()
    runs.lock_run(other)
    try:
        run = tmp_path / "run"
        load_training_script("train_ppo").main(["--run-dir", str(run), "--total-timesteps", "128", *TINY_PPO])
        assert free(run) and not free(other)
    finally:
        runs.release_run_locks()
    assert free(other)
