"""``best_response.py --record`` after a review of the canonical agent specs (0.28.0): a target typed in any form that
canonicalises (``ppo-v4:greedy=True``, ``majority: open_min=4``, ``majority:open_min=04``) is recorded under its
canonical form instead of refused, and a checkpoint file named like a spec with options (``majority:open_min=4``),
which the table's reader would take for ``majority``, is refused before any training."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import ModuleType

import pytest

from friday13_env.friday13.agents import REGISTRY
from tests.scripts import load_training_script

pytest.importorskip("torch", reason="the training extra is not installed")


@pytest.fixture
def script() -> ModuleType:
    load_training_script("train_ppo")  # best_response imports it as a module, as it does when run from training/
    return load_training_script("best_response")


@pytest.mark.parametrize(
    ("typed", "recorded"),
    [
        ("ppo-v4:greedy=True", "ppo-v4"),
        ("majority: open_min=4", "majority:open_min=4"),
        ("majority:open_min=04", "majority:open_min=4"),
    ],
)
def test_record_accepts_a_target_that_canonicalises(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, typed: str, recorded: str
) -> None:
    """A target the run records in canonical form is no ``--record`` problem: the table names that form."""
    monkeypatch.chdir(tmp_path)
    argv = ["--target", typed, "--run-dir", str(tmp_path / "run"), "--record", str(tmp_path / "gaps.json")]
    assert script.parse_args(argv).target == recorded


def test_record_refuses_a_checkpoint_named_like_a_spec_with_options(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkpoint file ``majority:open_min=4`` is trained against, but the table's reader takes that text as
    ``majority`` with an option: ``--record`` refuses it before any training, naming the checkpoint."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(REGISTRY.policy_path("ppo-v4"), tmp_path / "majority:open_min=4")
    argv = ["--target", "majority:open_min=4", "--run-dir", str(tmp_path / "run"), "--record", "gaps.json"]
    with pytest.raises(SystemExit) as stop:
        script.parse_args(argv)
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert "--record" in error and ("rename" in error or "checkpoint" in error)


def test_record_errors_names_the_checkpoint(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``record_errors`` itself reports the file named like a spec (the check ``--resume`` runs too)."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(REGISTRY.policy_path("ppo-v4"), tmp_path / "majority:open_min=4")
    args = script.Args(target="majority:open_min=4", record="gaps.json", run_dir=str(tmp_path / "run"))
    problems = script.record_errors(args)
    assert any("rename" in problem or "checkpoint" in problem for problem in problems), problems


def test_record_accepts_a_plainly_named_checkpoint(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint ``mine.npz`` is recorded under its name."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(REGISTRY.policy_path("ppo-v4"), tmp_path / "mine.npz")
    argv = ["--target", "mine.npz", "--run-dir", str(tmp_path / "run"), "--record", "gaps.json"]
    assert script.parse_args(argv).target == "mine.npz"


def test_without_such_a_file_the_target_is_the_registered_agent(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No file of that name in the working folder: ``majority:open_min=4`` is ``majority`` with the option, recorded."""
    monkeypatch.chdir(tmp_path)
    argv = ["--target", "majority:open_min=4", "--run-dir", str(tmp_path / "run"), "--record", "gaps.json"]
    assert script.parse_args(argv).target == "majority:open_min=4"
