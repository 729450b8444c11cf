"""Smoke test of training/train_friday.py end to end, and of loading Friday policy checkpoints."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import numpy as np
import pytest

from friday13_env.core.checkpoint import CheckpointError, save_policy
from friday13_env.core.mlp import PolicyMetadata
from friday13_env.friday import encoding
from friday13_env.friday import policy as friday_policy
from friday13_env.friday.agents import PolicyAgent, load, make
from friday13_env.friday.env import FridayEnv
from friday13_env.friday.evaluation import play_game
from friday13_env.friday13.agents import policy as friday13_policy
from friday13_env.friday13.agents.policy import ENV_VERSION, load_policy_agent
from tests.friday.helpers import assert_plays_only_legal_moves
from tests.scripts import load_training_script as load_script

pytest.importorskip("torch", reason="the training extra is not installed")

TINY = [
    "--num-envs", "2", "--n-steps", "128", "--batch-size", "128", "--n-epochs", "1",
    "--hidden-sizes", "32", "32", "--eval-every", "512", "--eval-games", "3", "--checkpoint-every", "512",
    "--no-progress", "--levels", "1", "2", "--critic-warmup", "512",
]  # fmt: skip


DISTILL = [
    "--teacher", "heuristic:samples=2", "--distill-iterations", "2", "--distill-games", "2", "--workers", "1",
    "--distill-epochs", "2",
]  # fmt: skip


def test_distil_then_ppo_checkpoint_resume_export_and_play(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    train = load_script("train_friday")
    run_dir = tmp_path / "run"
    started = time.time()
    train.main(["--run-dir", str(run_dir), "--total-timesteps", "1024", "--win-bonus", "10", *DISTILL, *TINY])
    progress = json.loads((run_dir / "progress.json").read_text())
    assert progress["timesteps"] == 1024
    assert [point["iteration"] for point in progress["distill"]] == [0, 1]
    first, second = progress["distill"]
    assert first["student_share"] == 0 and first["agreement_before_fit"] is None  # the teacher's own games
    assert 0 < second["student_share"] < 1 and 0 <= second["agreement_before_fit"] <= 1  # beta = 0.5
    assert second["labelled"] == first["decisions"] + second["decisions"]
    assert set(first["eval"]) == {"level1", "level2"}
    assert [point["timesteps"] for point in progress["curve"]] == [0, 512, 1024]  # 0: the distilled actor
    columns = {f"{kind}_level{level}" for kind in ("win_rate", "mean_score") for level in (1, 2)}
    assert set(progress["curve"][0]) == {"timesteps", *columns}
    assert (run_dir / "last.pt").is_file() and (run_dir / "learning_curve.csv").is_file()
    assert "[distill 2/2]" in capsys.readouterr().out

    with pytest.raises(SystemExit, match="already holds a run"):
        train.main(["--run-dir", str(run_dir), "--total-timesteps", "2048", *DISTILL, *TINY])

    export = tmp_path / "exported" / "friday.npz"
    train.main(
        ["--run-dir", str(run_dir), "--total-timesteps", "1536", "--resume", "--export", str(export), *DISTILL, *TINY]
    )
    progress = json.loads((run_dir / "progress.json").read_text())
    assert progress["timesteps"] == 1536 and progress["curve"][-1]["timesteps"] == 1536
    assert len(progress["distill"]) == 2  # not distilled again
    # real seconds, not a running sum of sums (nor of rounded sums, which could exceed the time spent)
    assert 0 < progress["wall_time_s"] <= time.time() - started
    metadata = json.loads(str(np.load(export)["metadata"]))
    assert metadata["env_version"] == friday_policy.ENV_VERSION and metadata["training"]["timesteps"] == 1536

    agent = make(str(export), seed=0)
    assert isinstance(agent, PolicyAgent) and agent.name == "friday"
    env = FridayEnv(level=1)
    first_game = play_game(env, agent, seed=3)
    assert first_game[2] > 0 and play_game(env, make(str(export), seed=0), seed=3) == first_game  # greedy

    with pytest.raises(SystemExit, match=r"stage 2 \(PPO\) has begun, so no more rounds can be added"):
        train.main(["--run-dir", str(run_dir), "--total-timesteps", "2048", "--resume", *DISTILL, *TINY,
                    "--distill-iterations", "3"])  # fmt: skip

    evaluate_cli = load_script("evaluate_friday")
    assert evaluate_cli.main(["--agents", str(export), "random", "--levels", "1", "--games", "2"]) == 0
    assert "friday" in capsys.readouterr().out


def test_bad_options_are_rejected_before_training(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    train = load_script("train_friday")
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "x"), "--levels", "5"])
    assert "--levels" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="no checkpoint"):
        train.main(["--run-dir", str(tmp_path / "missing"), "--resume"])


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--n-steps", "0"], "--n-steps: must be at least 1, got 0"),
        (["--hidden-sizes", "0"], "--hidden-sizes: must be at least 1, got 0"),
        (["--gamma", "5"], "--gamma: must be above 0 and at most 1, got 5"),
        (["--learning-rate", "-1"], "--learning-rate: must be above 0 and at most 1, got -1"),
        (["--learning-rate", "1e300"], "--learning-rate: must be above 0 and at most 1, got 1e+300"),
        (["--workers", "99999999999"], "--workers: must be at least 1 and at most 1,024, got 99,999,999,999"),
        (["--reward-scale", "0"], "--reward-scale: must be above 0, got 0"),
        (["--init-sharpness", "0"], "--init-sharpness: must be at least 0.000976562 and at most 1024, got 0"),
        (["--init-sharpness", "4096"], "--init-sharpness: must be at least 0.000976562 and at most 1024, got 4096"),
        (["--critic-learning-rate", "0"], "--critic-learning-rate: must be above 0 and at most 1, got 0"),
        (["--critic-warmup", "-1"], "--critic-warmup: must be at least 0, got -1"),
        (["--batch-size", "1"], "--batch-size: must be at least 2, got 1"),
        (["--distill-games", "0"], "--distill-games: must be at least 1, got 0"),
        (["--distill-beta", "1.5"], "--distill-beta: must be at least 0 and at most 1, got 1.5"),
        (["--teacher", "oracle"], "--teacher oracle: unknown Friday agent 'oracle'"),
        (["--teacher", "search:budget=0"], "--teacher search:budget=0: search option budget must be"),
        (["--distill-iterations", "0", "--total-timesteps", "0"], "nothing to train"),
        (["--seed", "-1"], "--seed: must be at least 0 and at most 4,294,967,295, got -1"),
        (["--activation", "sigmoid"], "--activation: invalid choice"),
        (["--export", "/proc/friday/policy.npz"], "--export: cannot write in /proc"),
    ],
)
def test_every_flag_is_checked_before_training(tmp_path: Path, capsys: pytest.CaptureFixture, flags, message) -> None:
    with pytest.raises(SystemExit):
        load_script("train_friday").parse_args(["--run-dir", str(tmp_path / "run"), *flags])
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def tiny_policy(path: Path, env_version: str, **overrides) -> Path:
    deck = "standard" if env_version == ENV_VERSION else ""
    layout = friday13_policy.layout_fields(deck) if env_version == ENV_VERSION else friday_policy.layout_fields()
    fields = {"deck": deck, **layout, **overrides}
    rng = np.random.default_rng(0)
    sizes = [fields["observation_size"], 8, fields["num_actions"]]
    weights = [rng.normal(size=(a, b)).astype(np.float32) for a, b in itertools.pairwise(sizes)]
    biases = [np.zeros(b, dtype=np.float32) for b in sizes[1:]]
    metadata = PolicyMetadata(activation="relu", hidden_sizes=[8], env_version=env_version, **fields)
    save_policy(path, weights, biases, np.ones(sizes[0], dtype=np.float32), metadata)
    return path


def test_a_valid_friday_policy_plays_only_legal_moves(tmp_path: Path) -> None:
    agent = load(tiny_policy(tmp_path / "ok.npz", friday_policy.ENV_VERSION), seed=1, greedy=False)
    assert_plays_only_legal_moves(agent, level=4, seed=0)


def test_bad_checkpoints_give_clear_errors(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"not a zip file at all")
    with pytest.raises(CheckpointError, match="not a readable policy checkpoint"):
        make(str(corrupt))
    with pytest.raises(ValueError, match="no policy checkpoint"):
        make(str(tmp_path / "missing.npz"))
    with pytest.raises(CheckpointError, match="no policy checkpoint"):
        load(tmp_path / "missing.npz")
    friday13 = tiny_policy(tmp_path / "friday13.npz", ENV_VERSION)
    with pytest.raises(CheckpointError, match=r"Friday the 13th card game.*Friday plays"):
        make(str(friday13))
    wrong_layout = tiny_policy(tmp_path / "old.npz", friday_policy.ENV_VERSION, observation_size=encoding.OBS_SIZE - 1)
    with pytest.raises(CheckpointError, match="another observation/action layout"):
        make(str(wrong_layout))
    with pytest.raises(CheckpointError, match="Friday the 13th plays 'friday13_v0'"):  # and the other way round
        load_policy_agent(tiny_policy(tmp_path / "friday.npz", friday_policy.ENV_VERSION))
    with pytest.raises(SystemExit):
        load_script("evaluate_friday").parse_args(["--agents", str(corrupt)])
