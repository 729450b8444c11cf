"""``--run-name`` names a folder under ``runs/``: every training script refuses a name that is a path (it would write
outside ``runs/``: ``../x``, ``/tmp/x``, ``a/b``), ``.`` or ``..``, or empty, before any work, and points to
``--run-dir`` for a folder elsewhere."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.scripts import load_training_script, refused

pytest.importorskip("torch", reason="the training extra is not installed")

SCRIPTS = ["train_ppo", "best_response", "train_friday", "finetune_ppo", "train_rllib"]
BAD_NAMES = ["../escaped", "/tmp/escaped", "a/b", "..", ".", "a\\b", ""]


@pytest.mark.parametrize("script_name", SCRIPTS)
@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_run_name_that_is_a_path_is_refused(
    script_name: str, name: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if script_name in ("finetune_ppo", "train_rllib"):
        pytest.importorskip("sb3_contrib" if script_name == "finetune_ppo" else "ray.rllib")
    monkeypatch.chdir(tmp_path)
    script = load_training_script(script_name)
    extra = ["--target", "random"] if script_name == "best_response" else []
    for resume in ([], ["--resume"]):
        refused(capsys, script.parse_args, ["--run-name", name, *extra, *resume], "--run-name")
    assert list(tmp_path.iterdir()) == []  # nothing written, here or above


@pytest.mark.parametrize("script_name", ["train_ppo", "best_response"])
def test_a_plain_name_and_a_run_dir_path_are_fine(script_name: str, tmp_path: Path) -> None:
    script = load_training_script(script_name)
    extra = ["--target", "random"] if script_name == "best_response" else []
    assert script.parse_args(["--run-name", "my-run.2", *extra]).run_name == "my-run.2"
    run_dir = str(tmp_path / "a" / ".." / "b")
    assert script.parse_args(["--run-dir", run_dir, *extra]).run_dir == run_dir  # --run-dir is a path: any path


@pytest.mark.parametrize("script_name", SCRIPTS)
@pytest.mark.parametrize("name", ["", "../escaped", ".."])
def test_a_configuration_built_in_python_is_refused_the_same(script_name: str, name: str) -> None:
    """``checked_args``, which a configuration built in Python goes through (not the command line's parser), refuses
    the same names with the same words."""
    if script_name in ("finetune_ppo", "train_rllib"):
        pytest.importorskip("sb3_contrib" if script_name == "finetune_ppo" else "ray.rllib")
    script = load_training_script(script_name)
    extra = ["--target", "random"] if script_name == "best_response" else []
    args = dataclasses.replace(script.parse_args(extra), run_name=name)
    with pytest.raises(ValueError, match="--run-name"):
        script.checked_args(args)
