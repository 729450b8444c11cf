"""A user's agent named ``module:factory`` is found in the folder the command runs in, by the training scripts as by
the ``friday13`` command (docs/agents.md): a script's own ``sys.path`` starts at ``training/``, not there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.benchmark.test_user_agent import MY_AGENTS
from tests.scripts import TRAINING

SOLO_AGENT = '''\
import numpy as np


class MySoloAgent:
    """The lowest legal action, always."""

    name = "my-solo-agent"

    def __init__(self, seed=None):
        pass

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])
'''


def run_script(folder: Path, script: str, *flags: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(TRAINING / script), *flags]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=300)


def test_evaluate_plays_an_agent_from_the_working_folder(tmp_path: Path) -> None:
    (tmp_path / "my_agents.py").write_text(MY_AGENTS)
    done = run_script(tmp_path, "evaluate.py", "--focus", "my_agents:MyAgent", "--vs", "random", "--games", "4",
                      "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "my_agents:MyAgent" in done.stdout


def test_evaluate_friday_plays_an_agent_from_the_working_folder(tmp_path: Path) -> None:
    (tmp_path / "my_solo.py").write_text(SOLO_AGENT)
    done = run_script(tmp_path, "evaluate_friday.py", "--agents", "my_solo:MySoloAgent", "--levels", "1",
                      "--games", "2")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "my_solo:MySoloAgent" in done.stdout


def test_finetune_finds_an_opponents_module_in_the_working_folder(tmp_path: Path) -> None:
    """``--opponents`` is checked before anything is built: a factory missing from the user's module is refused as
    missing from that module, which the script found, not as a module it cannot find."""
    pytest.importorskip("sb3_contrib")
    (tmp_path / "my_agents.py").write_text(MY_AGENTS)
    flags = ["--opponents", "my_agents:Missing", "--run-dir", str(tmp_path / "run")]
    done = run_script(tmp_path, "finetune_ppo.py", *flags)
    assert done.returncode == 2
    assert "my_agents:Missing" in done.stderr
    assert "No module named" not in done.stderr, done.stderr
    assert "has no attribute 'Missing'" in done.stderr


def test_a_file_named_as_an_installed_module_is_not_imported(tmp_path: Path) -> None:
    """The working folder joins ``sys.path`` last: a ``tqdm.py`` lying there (the evaluation's progress bar imports
    ``tqdm``) is not what runs, in the ``friday13`` command or in a training script."""
    pytest.importorskip("tqdm")
    marker = tmp_path / "planted-module-ran"
    (tmp_path / "tqdm.py").write_text(f"open({str(marker)!r}, 'w').close()\nraise SystemExit(9)\n")
    friday13 = Path(sys.executable).parent / "friday13"
    for command in (
        [str(friday13), "evaluate", "--agents", "random", "cautious", "--games", "4"],
        [sys.executable, str(TRAINING / "evaluate.py"), "--agents", "random", "cautious", "--games", "4"],
    ):
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert not marker.exists(), command
