"""A user's agent whose ``act`` raises (``sys.exit`` included) ends ``evaluate``, ``evaluate_friday`` and ``play`` with
one line naming the agent and what it raised, and a failing exit status: never a traceback from inside the game, and
never a run that exits 0 with no result (``benchmark`` and ``ratings`` do the same: tests/benchmark)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.training.test_working_folder_agents import run_script

FAILING_AGENTS = """\
class Raiser:
    name = "raiser"

    def __init__(self, seed=None):
        pass

    def act(self, observation):
        raise RuntimeError("boom in act")


class Exiter:
    name = "exiter"

    def __init__(self, seed=None):
        pass

    def act(self, observation):
        raise SystemExit(0)
"""
RAISED = {"Raiser": "raised RuntimeError: boom in act", "Exiter": "raised SystemExit: 0"}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "failing.py").write_text(FAILING_AGENTS)
    return tmp_path


def one_line_failure(done: subprocess.CompletedProcess[str], label: str, raised: str) -> None:
    assert done.returncode != 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert f"agent {label!r} {raised}" in done.stderr or f"({label.split(':')[0]}) {raised}" in done.stdout


@pytest.mark.parametrize("agent", ["Raiser", "Exiter"])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_evaluate_stops_with_one_line(folder: Path, agent: str, workers: str) -> None:
    flags = ["--focus", f"failing:{agent}", "--vs", "random", "--games", "8", "--workers", workers, "--no-progress"]
    done = run_script(folder, "evaluate.py", *flags, "--json", "out.json")
    one_line_failure(done, agent.lower(), RAISED[agent])
    assert "in seat player_" in done.stderr
    assert not (folder / "out.json").exists()


@pytest.mark.parametrize("agent", ["Raiser", "Exiter"])
def test_evaluate_friday_stops_with_one_line(folder: Path, agent: str) -> None:
    done = run_script(folder, "evaluate_friday.py", "--agents", f"failing:{agent}", "--levels", "1", "--games", "2")
    one_line_failure(done, agent.lower(), RAISED[agent])


@pytest.mark.parametrize("agent", ["Raiser", "Exiter"])
def test_play_stops_with_one_line(folder: Path, agent: str) -> None:
    command = [sys.executable, "-m", "friday13_env.friday13.play", "--opponents", f"failing:{agent}", "--seat", "3",
               "--seed", "1"]  # fmt: skip
    done = subprocess.run(command, cwd=folder, input="", capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert f"player_0 ({agent.lower()}) {RAISED[agent]}. The game cannot go on." in done.stdout  # the first to play
    assert "Traceback" not in done.stderr
