"""training/train_friday.py's run folder and flags, checked before any work without training anything: a new run
refuses a folder holding a run's checkpoint, ``--resume`` refuses fewer timesteps than stage 2 has done, a tampered
``distill_final`` is damage, the critic warm-up must leave the actor something to learn (and a fresh actor has
none), and ``--seed`` is bounded."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from friday13_training.runs import MAX_SEED, RunError, read_progress

from tests.scripts import load_training_script

pytest.importorskip("torch", reason="the training extra is not installed")

TINY = [
    "--teacher", "heuristic:samples=2", "--distill-iterations", "2", "--distill-games", "2", "--workers", "1",
    "--num-envs", "2", "--n-steps", "128", "--batch-size", "128", "--hidden-sizes", "32", "32", "--eval-every", "0",
    "--no-progress", "--levels", "1", "--critic-warmup", "0",
]  # fmt: skip


@pytest.fixture
def script() -> ModuleType:
    return load_training_script("train_friday")


def untouched(*_: Any, **__: Any) -> Any:
    raise AssertionError("the run started working")


def recorded_run(script: ModuleType, run_dir: Path, timesteps: int, **fields: Any) -> dict[str, Any]:
    """A run folder as a run of ``TINY`` leaves it after its two rounds and ``timesteps`` PPO samples (the files'
    contents are never read: ``distill`` and ``ppo`` are replaced in the tests that resume it)."""
    args = script.parse_args(["--run-dir", str(run_dir), "--total-timesteps", "1024", *TINY])
    run_dir.mkdir()
    point = {"iteration": 0, "games": 2, "decisions": 10}
    progress = {"args": dataclasses.asdict(args), "timesteps": timesteps, "wall_time_s": 1.0,
                "distill": [point, {**point, "iteration": 1}], "curve": [], **fields}  # fmt: skip
    (run_dir / "progress.json").write_text(json.dumps(progress))
    (run_dir / "policy.npz").write_bytes(b"the PPO-trained policy")
    if timesteps:
        (run_dir / "last.pt").write_bytes(b"stage 2's checkpoint")
    return progress


def test_resume_refuses_fewer_timesteps_than_stage_2_has_done(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--total-timesteps 0`` once PPO has run would take the distillation-only branch and copy the distilled
    student over the PPO-trained ``policy.npz``: refused, naming the flag and the timesteps done."""
    run_dir = tmp_path / "run"
    recorded_run(script, run_dir, timesteps=512)
    monkeypatch.setattr(script, "distill", untouched)
    monkeypatch.setattr(script, "ppo", untouched)
    for total in ("0", "256"):
        with pytest.raises(SystemExit, match=r"--total-timesteps cannot be fewer than the 512 .* done"):
            script.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", total])
    assert (run_dir / "policy.npz").read_bytes() == b"the PPO-trained policy"


def test_resume_refuses_total_timesteps_0_once_stage_2_has_a_checkpoint(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run stopped in its first rollout saved ``last.pt`` at 0 timesteps: stage 2 has begun all the same."""
    run_dir = tmp_path / "run"
    recorded_run(script, run_dir, timesteps=0)
    (run_dir / "last.pt").write_bytes(b"stage 2's checkpoint at 0 timesteps")
    monkeypatch.setattr(script, "distill", untouched)
    with pytest.raises(SystemExit, match=r"--total-timesteps 0: stage 2 \(PPO\) has begun"):
        script.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "0"])
    assert (run_dir / "policy.npz").read_bytes() == b"the PPO-trained policy"


@pytest.mark.parametrize("leftover", ["last.pt", "distill/round.pt"])
def test_a_new_run_refuses_a_folder_holding_a_runs_checkpoint(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, leftover: str
) -> None:
    """Without ``progress.json`` a new run used to go on from a stale ``last.pt`` (or play over ``round.pt``). The
    error says why ``--resume`` cannot continue it either, and what to do."""
    run_dir = tmp_path / "run"
    (run_dir / leftover).parent.mkdir(parents=True)
    (run_dir / leftover).write_bytes(b"another run's checkpoint")
    monkeypatch.setattr(script, "distill", untouched)
    monkeypatch.setattr(script, "ppo", untouched)
    message = f"{run_dir} already holds a run ({leftover}) but no progress.json, which --resume needs"
    with pytest.raises(SystemExit, match=re.escape(message)):
        script.main(["--run-dir", str(run_dir), "--distill-iterations", "0", "--total-timesteps", "256", *TINY[6:]])
    assert (run_dir / leftover).read_bytes() == b"another run's checkpoint"
    assert sorted(path.name for path in run_dir.rglob("*")) == sorted({*Path(leftover).parts})


@pytest.mark.parametrize(
    "final",
    [[2, 0.5], 3, "done", {"loss": 0.5}, {"after_rounds": -1, "loss": 0.5}, {"after_rounds": "2"},
     {"after_rounds": True}, {"after_rounds": 2, "loss": "low"}, {"after_rounds": 2, "wall_s": -1},
     {"after_rounds": 2, "loss": 10**400}, {"after_rounds": 2, "wall_s": 10**400}],
)  # fmt: skip
def test_a_tampered_distill_final_is_damage(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, final: Any
) -> None:
    run_dir = tmp_path / "run"
    recorded_run(script, run_dir, timesteps=0, distill_final=final)
    monkeypatch.setattr(script, "distill", untouched)
    with pytest.raises(SystemExit, match=r"progress.json is damaged: distill_final"):
        script.main(["--run-dir", str(run_dir), "--resume"])


def test_a_sound_distill_final_is_read(script: ModuleType, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    final = {"after_rounds": 2, "loss": 0.25, "wall_s": 1.5, "eval": {"level1": 0.5}}
    fresh = {"args": {}, "timesteps": 0, "wall_time_s": 0.0, "distill": [], "curve": []}
    for value in (final, None):
        progress = recorded_run(script, run_dir, timesteps=0, distill_final=value)
        assert read_progress(run_dir / "progress.json", fresh)["distill_final"] == progress["distill_final"]
        for path in sorted(run_dir.iterdir(), reverse=True):
            path.unlink()
        run_dir.rmdir()
    with pytest.raises(RunError, match="damaged: distill_final"):
        recorded_run(script, run_dir, timesteps=0, distill_final=[])
        read_progress(run_dir / "progress.json", fresh)


def refused(script: ModuleType, capsys: pytest.CaptureFixture[str], flags: list[str], *messages: str) -> None:
    with pytest.raises(SystemExit) as stop:
        script.parse_args(flags)
    assert stop.value.code == 2
    error = capsys.readouterr().err
    for message in messages:
        assert message in error, error


def test_a_critic_warmup_covering_stage_2_is_refused(
    script: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """From a distilled or ``--distill-init`` actor, the default warm-up (200,000 samples) is longer than a short
    stage 2: the actor would never learn. Refused, naming both flags."""
    run = ["--run-dir", str(tmp_path / "run")]
    message = "--critic-warmup 200,000 is not below --total-timesteps 100,000: the actor would never learn"
    refused(script, capsys, [*run, "--total-timesteps", "100000"], message)
    refused(script, capsys, [*run, "--total-timesteps", "100000", "--distill-iterations", "0", "--distill-init",
                             "dagger-v1"], message)  # fmt: skip
    refused(script, capsys, [*run, "--total-timesteps", "5000", "--critic-warmup", "5000"], "--critic-warmup 5,000")
    args = script.parse_args([*run, "--total-timesteps", "200001"])
    assert args.critic_warmup == 200_000
    assert script.parse_args([*run, "--total-timesteps", "0"]).critic_warmup == 200_000  # no stage 2: no actor trains


def test_a_fresh_actor_has_no_critic_warmup(script: ModuleType, tmp_path: Path) -> None:
    """Stage 2 from scratch (no rounds, no ``--distill-init``) has no trained actor to keep from a fresh critic's
    noise: its warm-up is 0, as a best response from scratch has, and it is recorded so."""
    args = script.parse_args(["--run-dir", str(tmp_path / "run"), "--distill-iterations", "0",
                              "--total-timesteps", "1000"])  # fmt: skip
    assert args.critic_warmup == 0


def test_a_fresh_actors_run_resumes_with_its_original_command_line(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its record has warm-up 0; the command line that started it (the default, or any warm-up) still resumes it."""
    run_dir = tmp_path / "run"
    command = ["--run-dir", str(run_dir), "--distill-iterations", "0", "--total-timesteps", "1024", *TINY[6:]]
    command[command.index("--critic-warmup") + 1] = "5000"
    args = script.parse_args(command)
    assert args.critic_warmup == 0
    run_dir.mkdir()
    progress = {"args": dataclasses.asdict(args), "timesteps": 512, "wall_time_s": 1.0, "distill": [], "curve": []}
    (run_dir / "progress.json").write_text(json.dumps(progress))
    (run_dir / "last.pt").write_bytes(b"stage 2's checkpoint")
    resumed: list[Any] = []
    monkeypatch.setattr(script, "ppo", lambda args, *rest: resumed.append(args))
    script.main([*command, "--resume"])
    assert [args.critic_warmup for args in resumed] == [0]


def test_the_seed_is_bounded(script: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = ["--run-dir", str(tmp_path / "run")]
    refused(script, capsys, [*run, "--seed", str(MAX_SEED + 1)],
            f"--seed: must be at least 0 and at most {MAX_SEED:,}, got {MAX_SEED + 1:,}")  # fmt: skip
    assert script.parse_args([*run, "--seed", str(MAX_SEED)]).seed == MAX_SEED
