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


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--timesteps", "0"], "--timesteps: must be at least 1, got 0"),
        (["--timesteps", "-5"], "--timesteps: must be at least 1, got -5"),
        (["--num-envs", "0"], "--num-envs: must be at least 1 and at most 1,048,576, got 0"),
        (["--eval-games", "-1"], "--eval-games: must be at least 0 and at most 1,000,000, got -1"),
        (["--seed", "-1"], "--seed: must be at least 0 and at most 4,294,967,295, got -1"),
        (["--save", "/proc/x.zip"], "--save: cannot write in /proc"),
        (["--save", "{tmp}"], "--save: {tmp} is a directory"),
        (["--opponents", "oracle"], "--opponents: unknown Friday the 13th agent 'oracle'"),
    ],
)
def test_every_flag_is_checked_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, flags: list[str], message: str
) -> None:
    """A bad flag exits with argparse's usage message naming it, before any model is built or trained."""
    example = load_training_script("sb3_vector_env")

    def no_training(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model was built before the flags were checked")

    monkeypatch.setattr(example, "MaskablePPO", no_training)
    flags = [flag.format(tmp=tmp_path) for flag in flags]
    with pytest.raises(SystemExit) as stopped:
        example.main(["--save", str(tmp_path / "model.zip"), *flags])
    assert stopped.value.code == 2
    assert message.format(tmp=tmp_path) in capsys.readouterr().err


def test_the_model_is_saved_exactly_where_save_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--save`` without ``.zip`` is written as given (SB3 alone would add the suffix), atomically."""
    example = load_training_script("sb3_vector_env")
    path = tmp_path / "runs" / "model"
    example.main(["--timesteps", "64", "--num-envs", "4", "--eval-games", "0", "--save", str(path)])
    assert sorted(p.name for p in path.parent.iterdir()) == ["model"]
    assert MaskablePPO.load(path).num_timesteps >= 64
