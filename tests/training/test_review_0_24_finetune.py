"""Defects a hostile review found in training/finetune_ppo.py (0.24.0): a run of the German deck crashed at its
first evaluation, and a ``last.zip`` whose settings differ from the run's (by accident or by hand) replaced them
on ``--resume`` while the record kept the old ones."""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.scripts import load_training_script

pytest.importorskip("sb3_contrib", reason="the training extra is not installed")

TINY = [
    "--num-envs", "2", "--no-subprocess", "--n-steps", "32", "--batch-size", "64", "--n-epochs", "1",
    "--hidden-sizes", "16", "16", "--no-progress", "--players", "3", "--init-policy", "", "--critic-warmup", "0",
]  # fmt: skip
"""One rollout is 2 x 32 = 64 timesteps."""


def test_a_german_deck_run_evaluates_at_its_own_deck(tmp_path: Path) -> None:
    """The evaluation seated the German-deck policy at a standard-deck table: a traceback at the first evaluation."""
    run_dir = tmp_path / "run"
    flags = ["--deck", "german", "--eval-every", "64", "--eval-games", "4", "--checkpoint-every", "0"]
    load_training_script("finetune_ppo").main(["--run-dir", str(run_dir), "--total-timesteps", "64", *TINY, *flags])
    progress = json.loads((run_dir / "progress.json").read_text())
    assert [point["timesteps"] for point in progress["curve"]] == [0, 64]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("finetune") / "run"
    flags = ["--eval-every", "0", "--checkpoint-every", "0"]
    load_training_script("finetune_ppo").main(["--run-dir", str(run_dir), "--total-timesteps", "64", *TINY, *flags])
    return run_dir


def rewrite_data(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Change the JSON ``data`` of the MaskablePPO zip ``path``, every other member kept."""
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    data = json.loads(members["data"])
    change(data)
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, raw in members.items():
            archive.writestr(name, raw)


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [
        ("gamma", 0.123, "gamma 0.123, the run's 0.99"),
        ("ent_coef", 7.5, "ent_coef 7.5, the run's 0.001"),
        ("n_steps", 1_000_000_000, "n_steps 1000000000, the run's 32"),
        ("max_grad_norm", 100.0, "max_grad_norm 100.0, the run's 0.5"),
        ("device", "cuda", "'device', which a MaskablePPO checkpoint of this run does not hold"),
    ],
)
def test_a_checkpoint_whose_settings_are_not_the_runs_is_refused(
    finished_run: Path, tmp_path: Path, key: str, value: object, shown: str
) -> None:
    """SB3's ``load`` sets every plain entry of the zip's ``data`` on the model: the run trained with the file's
    gamma, entropy bonus or rollout length (a rollout buffer of the file's size) while its record said otherwise."""
    run_dir = Path(shutil.copytree(finished_run, tmp_path / "run"))
    rewrite_data(run_dir / "last.zip", lambda data: data.__setitem__(key, value))
    before = (run_dir / "progress.json").read_bytes()
    with pytest.raises(SystemExit) as stopped:
        load_training_script("finetune_ppo").main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "128"])
    message = str(stopped.value)
    assert "last.zip" in message and shown in message, message
    assert (run_dir / "progress.json").read_bytes() == before
