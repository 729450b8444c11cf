"""A review of 0.27.0: what a user's agent raises in its ``reset(seed)`` hook is named as what its ``act`` raises
(an ``AgentRaisedError`` naming the agent), in the card game's and the solo game's evaluations and environments."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from friday13_env.core import zoo as zoo_module
from friday13_env.core.agent import AgentRaisedError, Observation, reseeded
from friday13_env.friday.evaluation import evaluate as evaluate_friday
from friday13_env.friday13.evaluation import Matchup, evaluate


class FailsOnReset:
    """A user's agent whose per-episode hook fails."""

    name = "fails-on-reset"

    def reset(self, seed: int | None = None) -> None:
        raise KeyError("no such table")

    def act(self, observation: Observation) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_reseeded_names_the_agent_and_the_hook() -> None:
    with pytest.raises(
        AgentRaisedError, match=r"agent 'fails-on-reset' raised KeyError: 'no such table' in its reset\(seed=3\)"
    ):
        reseeded(FailsOnReset(), 3)


def test_the_card_game_evaluation_names_an_agent_whose_reset_fails() -> None:
    with pytest.raises(AgentRaisedError, match=r"agent 'fails-on-reset' raised KeyError"):
        evaluate([Matchup.versus(FailsOnReset(), "random")], num_games=4, num_players=4, seed=0)


def test_the_solo_evaluation_names_an_agent_whose_reset_fails() -> None:
    with pytest.raises(AgentRaisedError, match=r"agent 'fails-on-reset' raised KeyError"):
        evaluate_friday(FailsOnReset(), level=1, games=1, seed=0)


def test_the_single_agent_env_names_an_opponent_whose_reset_fails() -> None:
    env = gym.make("friday13_env/Friday13-v0", num_players=3, opponents=[FailsOnReset(), "random"])
    with pytest.raises(AgentRaisedError, match=r"agent 'fails-on-reset' raised KeyError"):
        env.reset(seed=0)


@pytest.fixture
def zoo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A model zoo folder standing in for the installed package's (nothing is written into the real one)."""
    folder = tmp_path / "friday13" / "zoo"
    folder.mkdir(parents=True)
    (folder / "ppo-v9.npz").write_bytes(b"a policy")
    monkeypatch.setattr(zoo_module, "zoo_folders", lambda: [folder])
    return folder


def test_the_card_games_commands_never_write_into_the_model_zoo(zoo: Path) -> None:
    from friday13_env.cli import main

    for flag in ("--json", "--markdown"):
        with pytest.raises(SystemExit) as stopped:
            main(["evaluate", "--focus", "random", "--vs", "random", "--games", "4", flag, str(zoo / "ppo-v9.npz")])
        assert stopped.value.code == 2
    assert (zoo / "ppo-v9.npz").read_bytes() == b"a policy"


def test_the_training_scripts_refuse_an_export_into_the_model_zoo(
    zoo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    from tests.scripts import load_training_script, refused

    script = load_training_script("train_ppo")
    argv = ["--run-dir", str(tmp_path / "run"), "--export", str(zoo / "new-v1.npz")]
    refused(capsys, script.parse_args, argv, "in the model zoo of the installed package")
    assert sorted(path.name for path in zoo.iterdir()) == ["ppo-v9.npz"]
