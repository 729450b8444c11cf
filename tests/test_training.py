"""End-to-end smoke test of ``training/train_ppo.py``: train, checkpoint, resume, reload, play."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from friday13_env import agents, raw_env

pytest.importorskip("sb3_contrib", reason="the training extra is not installed")

SCRIPT = Path(__file__).resolve().parents[1] / "training" / "train_ppo.py"


def load_script():
    spec = importlib.util.spec_from_file_location("train_ppo", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["train_ppo"] = module
    spec.loader.exec_module(module)
    return module


TINY = [
    "--num-envs", "2", "--workers", "1", "--n-steps", "128", "--batch-size", "128", "--n-epochs", "1",
    "--hidden-sizes", "32", "32", "--eval-every", "512", "--eval-games", "8", "--checkpoint-every", "512",
    "--self-play", "--snapshot-every", "256", "--max-snapshots", "2", "--no-progress", "--players", "3", "5",
]  # fmt: skip


def test_train_checkpoint_resume_reload_and_play(tmp_path: Path) -> None:
    train = load_script()
    run_dir = tmp_path / "run"
    started = time.time()
    train.main(["--run-dir", str(run_dir), "--total-timesteps", "1024", *TINY])
    elapsed = time.time() - started
    progress = json.loads((run_dir / "progress.json").read_text())
    assert progress["timesteps"] == 1024
    assert 0 < progress["wall_time_s"] <= elapsed + 0.1  # each checkpoint records time spent, not a running sum
    assert [point["timesteps"] for point in progress["curve"]] == [512, 1024]
    assert progress["snapshots"] == ["snapshot_768", "snapshot_1024"]  # the pool keeps the newest two
    assert (run_dir / "last.zip").is_file() and (run_dir / "learning_curve.csv").is_file()

    with pytest.raises(SystemExit, match="already holds a run"):
        train.main(["--run-dir", str(run_dir), "--total-timesteps", "2048", *TINY])

    export = tmp_path / "exported.npz"
    train.main(["--run-dir", str(run_dir), "--total-timesteps", "1536", "--resume", "--export", str(export), *TINY])
    progress = json.loads((run_dir / "progress.json").read_text())
    assert progress["timesteps"] == 1536
    assert progress["curve"][-1]["timesteps"] == 1536
    metadata = json.loads(str(np.load(export)["metadata"]))
    assert metadata["training"]["timesteps"] == 1536

    agent = agents.make(str(export), seed=0)
    env = raw_env(num_players=4)
    env.reset(seed=3)
    plays = 0
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        action = None if terminated or truncated else agent.act(observation)
        plays += action is not None
        env.step(action)
    assert plays == 200  # four rounds of the 50-card deck


def test_bad_options_are_rejected_before_training(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    train = load_script()
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "x"), "--players", "7"])
    assert "num_players must be one of" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="no checkpoint"):
        train.main(["--run-dir", str(tmp_path / "missing"), "--resume"])


def test_distillation_records_the_teacher_and_exports_a_playable_policy(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("distill_search", SCRIPT.parent / "distill_search.py")
    assert spec is not None and spec.loader is not None
    distill = importlib.util.module_from_spec(spec)
    sys.modules["distill_search"] = distill
    spec.loader.exec_module(distill)
    args = distill.parse_args(["--games", "2", "--players", "3", "--search-budget", "300", "--seed", "5"])
    data = distill.play_games(args, [11, 12])
    assert data["observations"].shape[0] == data["masks"].shape[0] == data["actions"].shape[0] > 0
    assert (data["masks"].sum(axis=1) > 1).all()  # forced moves teach nothing and are left out
    assert all(mask[action] for mask, action in zip(data["masks"], data["actions"], strict=True))
    repeat = distill.play_games(args, [11, 12])
    assert all(np.array_equal(data[key], repeat[key]) for key in data)  # seeded teacher, same data

    export = tmp_path / "distilled.npz"
    distill.main(["--games", "2", "--players", "3", "--search-budget", "300", "--workers", "1", "--epochs", "2",
                  "--hidden-sizes", "16", "--out-dir", str(tmp_path / "run"), "--export", str(export)])  # fmt: skip
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert 0.0 <= summary["agreement_with_teacher"]["validation"] <= 1.0
    agent = agents.load(export)
    env = raw_env(num_players=3)
    env.reset(seed=0)
    observation = env.observe(env.agent_selection)
    assert observation["action_mask"][agent.act(observation)] == 1
