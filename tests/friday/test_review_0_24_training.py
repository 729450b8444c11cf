"""Defects a hostile review found in training/train_friday.py (0.24.0): a resume that needed files it never uses
(the ``--distill-init`` start, every round's games once stage 2 had begun), checkpoints whose optimizer settings
replaced the run's, and a ``round.pt`` whose round record was taken unchecked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from friday13_env.friday.agents import REGISTRY
from tests.friday.test_friday_dagger import small_run_flags
from tests.friday.test_friday_ppo import stage_2_flags
from tests.scripts import load_training_script as load_script

pytest.importorskip("torch", reason="the training extra is not installed")
import torch

STAGE_2 = ["--num-envs", "4", "--n-steps", "32", "--batch-size", "64", "--checkpoint-every", "128"]
"""Stage 2's size in a run of both stages: 128 samples a rollout."""


def progress_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "progress.json").read_text())


def test_a_stage_2_resume_reads_no_start_policy(tmp_path: Path) -> None:
    start = tmp_path / "start.npz"
    shutil.copy(REGISTRY.policy_path("dagger-v1"), start)
    run_dir = tmp_path / "run"
    flags = [
        "--run-dir", str(run_dir), "--distill-iterations", "0", "--distill-init", str(start), "--critic-warmup", "64",
        "--num-envs", "4", "--n-steps", "32", "--batch-size", "64", "--eval-every", "0", "--levels", "1",
        "--no-progress", "--workers", "1",
    ]  # fmt: skip
    load_script("train_friday").main([*flags, "--total-timesteps", "128"])
    start.unlink()
    load_script("train_friday").main([*flags, "--resume", "--total-timesteps", "256"])
    assert progress_of(run_dir)["timesteps"] == 256


def test_a_resume_in_stage_2_reads_no_round_games(tmp_path: Path) -> None:
    """Every round's games were read again (up to the cap of 16 GiB) and then not used, and a run whose games were
    deleted after stage 1 could not resume."""
    run_dir = tmp_path / "run"
    flags = [*small_run_flags(run_dir), "--distill-iterations", "1", "--critic-warmup", "64", *STAGE_2]
    load_script("train_friday").main([*flags, "--total-timesteps", "128"])
    (run_dir / "distill" / "games_00.npz").unlink()
    load_script("train_friday").main([*flags, "--resume", "--total-timesteps", "256"])
    assert progress_of(run_dir)["timesteps"] == 256


@pytest.mark.parametrize(("key", "value"), [("maximize", True), ("weight_decay", 0.5), ("eps", 1.0), ("amsgrad", True)])
@pytest.mark.parametrize("part", ["actor_optimizer", "critic_optimizer"])
def test_a_last_pt_with_other_adam_settings_is_refused(tmp_path: Path, part: str, key: str, value: object) -> None:
    run_dir = tmp_path / "run"
    load_script("train_friday").main(stage_2_flags(run_dir, "--total-timesteps", "128"))
    state = torch.load(run_dir / "last.pt", weights_only=True)
    state[part]["param_groups"][0][key] = value
    torch.save(state, run_dir / "last.pt")
    before = (run_dir / "progress.json").read_bytes()
    with pytest.raises(SystemExit) as stopped:
        load_script("train_friday").main(stage_2_flags(run_dir, "--resume", "--total-timesteps", "256"))
    message = str(stopped.value)
    assert f"{part}: the optimizer's parameter group 0 holds {key} {value!r}, the run's Adam" in message, message
    assert (run_dir / "progress.json").read_bytes() == before


@pytest.fixture
def stage_1_run(tmp_path: Path) -> Path:
    """Two rounds of stage 1 (a resume reads ``round.pt`` once a round is recorded)."""
    run_dir = tmp_path / "run"
    load_script("train_friday").main([*small_run_flags(run_dir), "--distill-iterations", "2"])
    return run_dir


def a_round_ahead(run_dir: Path, change: Any) -> None:
    """Make ``round.pt`` one round ahead of ``progress.json`` (a stop between their writes), then ``change`` it."""
    progress = progress_of(run_dir)
    state = torch.load(run_dir / "distill" / "round.pt", weights_only=True)
    state["point"], state["wall_time_s"] = progress["distill"].pop(), progress["wall_time_s"]
    progress.pop("distill_final", None)
    (run_dir / "progress.json").write_text(json.dumps(progress))
    change(state)
    torch.save(state, run_dir / "distill" / "round.pt")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda state: state.__setitem__("wall_time_s", "soon"), "its wall_time_s is 'soon'"),
        (lambda state: state.__setitem__("wall_time_s", float("inf")), "its wall_time_s is inf"),
        (lambda state: state.__setitem__("point", "a point"), "its round's record is 'a point', not round 1's"),
        (lambda state: state["point"].__setitem__("loss", float("nan")), "holds something other than JSON's"),
        (lambda state: state["optimizer"]["param_groups"][0].__setitem__("maximize", True), "holds maximize True"),
    ],
)
def test_a_round_checkpoint_ahead_of_the_record_is_checked_before_it_joins(
    stage_1_run: Path, change: Any, message: str
) -> None:
    a_round_ahead(stage_1_run, change)
    before = (stage_1_run / "progress.json").read_bytes()
    with pytest.raises(SystemExit) as stopped:
        load_script("train_friday").main([*small_run_flags(stage_1_run), "--distill-iterations", "2", "--resume"])
    assert "round.pt is missing, damaged or of another network" in str(stopped.value)
    assert message in str(stopped.value), stopped.value
    assert (stage_1_run / "progress.json").read_bytes() == before


def test_a_round_checkpoint_ahead_of_the_record_joins_it(stage_1_run: Path) -> None:
    """The check above refuses only a damaged record: a true one still joins (a stop between the two writes)."""
    expected = progress_of(stage_1_run)["distill"]
    a_round_ahead(stage_1_run, lambda state: None)
    load_script("train_friday").main([*small_run_flags(stage_1_run), "--distill-iterations", "2", "--resume"])
    assert progress_of(stage_1_run)["distill"] == expected
