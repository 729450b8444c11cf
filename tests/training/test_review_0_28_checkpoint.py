"""0.28.0's review: a checkpoint's constants (the input scales, the type-shared actor's index tables, in the networks
and in the magnet) are the run's own, and a best response's record holding a magnet is damaged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.scripts import TINY_PPO_ROLLOUTS, load_training_script

torch = pytest.importorskip("torch", reason="the training extra is not installed")

from friday13_training.ppo_checkpoint import read_state  # noqa: E402

RUN = [*TINY_PPO_ROLLOUTS, "--hidden-sizes", "15", "15", "--actor", "type-shared", "--magnet-coef", "0.5"]
"""A run whose actor has index tables (the type-shared actor's) and whose checkpoint holds a magnet."""


def train(run_dir: Path, *flags: str) -> None:
    load_training_script("train_ppo").main(["--run-dir", str(run_dir), *RUN, *flags])


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("constants") / "run"
    train(run_dir, "--total-timesteps", "256")
    return run_dir


def changed(value: Any) -> Any:
    """An index table reversed, a scale a thousand times larger: the shape and dtype a check of those alone passes."""
    return value.flip(0) if value.dtype == torch.int64 else value * 1000


@pytest.mark.parametrize(
    ("part", "key"),
    [("magnet", "action_order"), ("magnet", "own"), ("model", "actor.action_order"), ("model", "scale")],
)
def test_resume_refuses_a_checkpoint_whose_constants_are_not_the_runs(
    run_dir: Path, tmp_path: Path, part: str, key: str
) -> None:
    """A ``last.pt`` whose networks or magnet hold another index table or input scale than the run's deck gives is
    refused on ``--resume``, naming the constant, before anything trains; the run itself still resumes."""
    copy = tmp_path / "run"
    copy.mkdir()
    for name in ("progress.json", "policy.npz", "learning_curve.csv"):
        if (run_dir / name).exists():
            (copy / name).write_bytes((run_dir / name).read_bytes())
    state: dict[str, Any] = read_state(run_dir / "last.pt", "cpu")
    assert key in state[part], sorted(state[part])
    torch.save({**state, part: {**state[part], key: changed(state[part][key])}}, copy / "last.pt")
    before = (copy / "progress.json").read_bytes()
    owner = "magnet's " if part == "magnet" else ""
    with pytest.raises(SystemExit, match=f"the {owner}constant '{key}' is not this run's"):
        train(copy, "--resume", "--total-timesteps", "384")
    assert (copy / "progress.json").read_bytes() == before
    torch.save(state, copy / "last.pt")
    train(copy, "--resume", "--total-timesteps", "384")
    assert json.loads((copy / "progress.json").read_text())["timesteps"] == 384


def test_a_best_response_whose_record_holds_a_magnet_is_damaged(tmp_path: Path) -> None:
    """A best response trains without a magnet: a record that says otherwise (hand-edited) is refused as damaged on
    ``--resume``, not answered with a flag ``best_response.py`` does not have."""
    load_training_script("train_ppo")
    script = load_training_script("best_response")
    run_dir = tmp_path / "run"
    tiny = [
        "--num-tables", "16", "--num-steps", "8", "--minibatch-size", "64", "--eval-games", "8", "--final-games", "8",
        "--eval-every", "128", "--checkpoint-every", "128", "--torch-threads", "1", "--no-progress",
    ]  # fmt: skip
    script.main(["--run-dir", str(run_dir), "--target", "cautious", "--total-timesteps", "128", *tiny])
    record = json.loads((run_dir / "progress.json").read_text())
    record["args"]["magnet_coef"] = 0.5
    (run_dir / "progress.json").write_text(json.dumps(record))
    with pytest.raises(SystemExit, match=r"progress.json is damaged: it records magnet_coef 0.5"):
        script.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "256", *tiny])
