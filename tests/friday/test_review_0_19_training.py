"""A review of the solo game (release 0.19.0), ``training/train_friday.py``'s part: each test here failed before
its fix. The script took sizes, rewards, workers and levels that failed (or silently skewed the run) only after its
folder was made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from friday13_env.core import options

pytest.importorskip("torch", reason="the training extra is not installed")

from tests.scripts import load_training_script as load_script


# -- 3, 4, 7, 10, 11: train_friday.py's checks before any work ----------------------------------------------------
def no_work(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("the run started: its flags were not refused")


def refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *flags: str) -> str:
    """The error of ``train_friday.py`` with ``flags``, which must come before the run folder exists (either stage
    starting is a failure, not a run)."""
    train = load_script("train_friday")
    monkeypatch.setattr(train, "distill", no_work)
    monkeypatch.setattr(train, "ppo", no_work)
    run_dir = tmp_path / "run"
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(run_dir), "--no-progress", *flags])
    assert not run_dir.exists()
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--total-timesteps", "1000000", "--num-envs", "1000000", "--n-steps", "100000"],
            "--num-envs 1000000 x --n-steps 100000: ",
        ),
        (
            ["--distill-iterations", "12", "--distill-games", "50000"],
            "--distill-iterations 12 x --distill-games 50000: ",
        ),
        (["--eval-games", "1000001"], "--eval-games: must be at least 1 and at most 1,000,000, got 1,000,001"),
    ],
)
def test_sizes_past_the_memory_bound_are_refused_before_the_run_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, flags: list[str], message: str
) -> None:
    error = refused(tmp_path, capsys, monkeypatch, *flags)
    assert message in error
    if " x " in message:
        assert "GiB" in error and "allowed: at most 16 GiB" in error


def test_the_memory_bound_leaves_the_recorded_recipes_alone() -> None:
    train = load_script("train_friday")
    assert train.labels_memory(12, 500) < 4 << 30, "today's default and dagger-v1's rounds"
    assert train.rollout_memory(64, 128) < 1 << 30 and train.rollout_memory(8, 512) < 1 << 30  # PPO's, dagger-v1's


@pytest.mark.parametrize(
    "flags",
    [
        ["--reward-scale", "1e300"],
        ["--win-bonus", "1e300"],
        ["--reward-scale", "3", "--win-bonus", "200"],
        ["--win-bonus=-1e6"],
    ],
)
def test_rewards_past_the_bound_are_refused_before_the_run_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, flags: list[str]
) -> None:
    error = refused(tmp_path, capsys, monkeypatch, "--total-timesteps", "1000000", *flags)
    assert "--reward-scale x (|--win-bonus| + 200) must be at most 1,000" in error


def test_a_diverged_stage_2_says_no_checkpoint_was_saved_when_none_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    train = load_script("train_friday")
    monkeypatch.setattr(train, "update", lambda *args, **kwargs: {"value_loss": float("nan")})
    run_dir = tmp_path / "run"
    flags = [
        "--run-dir", str(run_dir), "--distill-iterations", "0", "--workers", "1", "--num-envs", "2", "--n-steps", "8",
        "--batch-size", "16", "--n-epochs", "1", "--hidden-sizes", "16", "--eval-every", "0", "--no-progress",
        "--levels", "1", "--total-timesteps", "64",
    ]  # fmt: skip
    with pytest.raises(SystemExit) as stop:
        train.main(flags)
    message = str(stop.value)
    assert "stage 2 diverged at 0 timesteps" in message and "no checkpoint was saved" in message
    assert "the checkpoint on disk is kept" not in message and not (run_dir / "last.pt").exists()


def test_more_workers_than_cpus_run_as_many_as_the_cpus(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--workers 1024`` spawned 1,024 processes on a 2-core machine; the evaluation already capped its own."""
    train = load_script("train_friday")
    monkeypatch.setattr(options, "available_cpus", lambda: 2)  # what pool_size reads
    assert train.worker_count(train.parse_args(["--workers", "3"])) == 2
    assert "--workers 3: 2 process(es), one per game or CPU at most" in capsys.readouterr().err
    assert train.worker_count(train.parse_args(["--workers", "2", "--distill-games", "1"])) == 1
    capsys.readouterr()
    assert train.worker_count(train.parse_args(["--workers", "2"])) == 2 and not capsys.readouterr().err


def test_repeated_levels_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    error = refused(tmp_path, capsys, monkeypatch, "--levels", "1", "1", "1", "4")
    assert "--levels: 1 1 1 4 repeats a value; list each one once" in error


def test_rounds_never_share_deals_and_keep_their_seeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    train = load_script("train_friday")
    error = refused(tmp_path, capsys, monkeypatch, "--distill-games", "100001", "--distill-iterations", "1")
    assert "--distill-games 100001: a round deals at most 100,000 games" in error
    args = train.parse_args(["--run-dir", str(tmp_path / "run"), "--distill-games", "3", "--seed", "2"])
    seeds = [[task.seed for task in train.iteration_tasks(args, iteration, None)] for iteration in (0, 1)]
    assert seeds == [[250_000_000, 250_000_001, 250_000_002], [250_100_000, 250_100_001, 250_100_002]]
