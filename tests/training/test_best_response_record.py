"""training/best_response.py's result and ``--resume``, without training: the result records the games its final
evaluation played (whole deals), its JSON holds no NaN, and ``--resume`` accepts the command line that started the
run (the target however it was spelt, the warm-up of a learner from scratch, which has none)."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from friday13_training.script_args import given_flags

from friday13_env.friday13.agents import REGISTRY
from tests.scripts import load_training_script

pytest.importorskip("torch", reason="the training extra is not installed")


@pytest.fixture
def script() -> ModuleType:
    load_training_script("train_ppo")  # best_response imports it as a module, as it does when run from training/
    return load_training_script("best_response")


def finished_run(script: ModuleType, run_dir: Path, *flags: str) -> ModuleType:
    """A run folder as a finished best response leaves it, its learner ``ppo-v4`` (nothing is trained)."""
    args = script.parse_args(["--run-dir", str(run_dir), *flags])
    run_dir.mkdir()
    shutil.copy(REGISTRY.policy_path("ppo-v4"), run_dir / "policy.npz")
    ppo = script.ppo_args(args)
    progress = {"args": dataclasses.asdict(ppo), "timesteps": 128, "seconds": 1.0, "curve": []}
    (run_dir / "progress.json").write_text(json.dumps(progress))
    return args


def test_the_result_records_the_games_whole_deals_played(script: ModuleType, tmp_path: Path) -> None:
    """``--final-games 5`` at 4 players plays two whole deals: 8 games, which the result says."""
    run_dir = tmp_path / "run"
    args = finished_run(script, run_dir, "--target", "random", "--final-games", "5")
    progress = json.loads((run_dir / "progress.json").read_text())
    result = script.final_result(args, run_dir, progress, None)
    assert result["final_games"] == 8
    assert all(math.isfinite(value) for part in ("win_share", "gap") for value in result[part].values())
    assert "--final-games 5" in result["command"]  # the command as given reproduces it


def test_a_result_with_nan_is_refused_not_written(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = tmp_path / "run"
    args = finished_run(script, run_dir, "--target", "random", "--final-games", "8")
    monkeypatch.setattr(script.train_ppo, "train", lambda *_: run_dir)
    broken = {"gap": {"mean": math.nan}}
    monkeypatch.setattr(script, "final_result", lambda *_: broken)
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        script.train(args, set())
    assert not (run_dir / "best_response.json").exists()


def resumed(script: ModuleType, run_dir: Path, argv: list[str]) -> Any:
    """What ``--resume`` with ``argv`` goes on with (the command line parsed, then checked against the record)."""
    args = script.parse_args(["--run-dir", str(run_dir), "--resume", *argv])
    given = given_flags(script.Args, ["--run-dir", str(run_dir), "--resume", *argv])
    return script.resumed_args(args, given)


def test_resume_accepts_the_target_as_it_was_first_spelt(script: ModuleType, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    command = ["--target", "majority: open_min=2", "--total-timesteps", "128"]
    finished_run(script, run_dir, *command)
    assert resumed(script, run_dir, command).target == "majority:open_min=2"
    with pytest.raises(script.RunError, match="these differ: --target: the run has 'majority:open_min=2'"):
        resumed(script, run_dir, ["--target", "majority:open_min=3"])


def test_resume_of_a_run_from_scratch_accepts_its_warmup_flag(script: ModuleType, tmp_path: Path) -> None:
    """A learner from scratch has no warm-up (recorded 0) whatever ``--critic-warmup`` said; a run from the target
    still refuses another warm-up."""
    run_dir = tmp_path / "run"
    command = ["--target", "random", "--total-timesteps", "128", "--critic-warmup", "64"]
    finished_run(script, run_dir, *command)
    assert resumed(script, run_dir, command).critic_warmup == 0
    target = tmp_path / "target"
    finished_run(script, target, "--target", "ppo-v4", "--start", "target", "--total-timesteps", "128",
                 "--critic-warmup", "64")  # fmt: skip
    with pytest.raises(script.RunError, match="--critic-warmup: the run has 64, the command line 32"):
        resumed(script, target, ["--critic-warmup", "32"])
