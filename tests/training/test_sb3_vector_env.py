"""``training/sb3_vector_env.py``: MaskablePPO trains on the native vector environment, unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scripts import load_training_script

MaskablePPO = pytest.importorskip("sb3_contrib", reason="the train extra is not installed").MaskablePPO


def test_the_sb3_example_trains_saves_and_evaluates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A short run trains on the vector env, saves a model that loads and plays legal moves, and evaluates it."""
    example = load_training_script("sb3_vector_env")
    path = tmp_path / "model.zip"
    example.main(["--timesteps", "4096", "--num-envs", "32", "--eval-games", "8", "--save", str(path)])
    output = capsys.readouterr().out
    assert f"saved {path}" in output
    assert "4-player win rate vs 3 copies of: cautious" in output and "majority" in output
    model = MaskablePPO.load(path)
    assert model.num_timesteps >= 4096
    from friday13_env import raw_env

    env = raw_env(num_players=4)
    env.reset(seed=1)
    agent = example.SB3Agent(model)
    for _name in env.agent_iter():  # the trained model plays a whole game of legal moves
        observation, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else agent.act(observation))
    assert not env.agents
