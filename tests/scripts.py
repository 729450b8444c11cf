"""Load a training script (``training/<name>.py``, not a package) as a module, for the tests to call; play an
exported policy in a process without the training libraries."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

REPOSITORY = Path(__file__).resolve().parents[1]
TRAINING = REPOSITORY / "training"
PLAIN_PPO_RECIPE = [
    "--actor", "mlp", "--pool-share", "0.5", "--pool-draw", "seat", "--opponents", "cautious", "majority",
]  # fmt: skip
"""``train_ppo.py``'s recipe before 0.10.0 (a plain actor, half the games against a pool drawn seat by seat): the
tests of its machinery were written for it and keep it; those of today's defaults say so."""
TINY_PPO_ROLLOUTS = [
    "--num-tables", "16", "--num-steps", "8", "--minibatch-size", "64", "--eval-every", "0", "--torch-threads", "1",
    "--no-progress",
]  # fmt: skip
"""``train_ppo.py`` at its smallest: 128 card plays a rollout, no evaluations, one thread, no progress bar."""
TINY_PPO = [*TINY_PPO_ROLLOUTS, "--hidden-sizes", "16", "16", *PLAIN_PPO_RECIPE]
"""``TINY_PPO_ROLLOUTS`` with networks of 16 units a layer and ``PLAIN_PPO_RECIPE``: the run the machinery tests fork,
resume and break."""


def win_rates(curve: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A learning curve's points without their ``seconds`` (the run's clock, which no seed reproduces)."""
    return [{key: value for key, value in point.items() if key != "seconds"} for point in curve]


def load_training_script(name: str) -> ModuleType:
    """Registered in ``sys.modules`` so that worker processes can unpickle the script's job objects. ``training/`` is
    put on ``sys.path``, as Python does for a script run from there, so a script that imports another (as
    ``best_response`` imports ``train_ppo``) finds it whatever the tests loaded before."""
    if str(TRAINING) not in sys.path:
        sys.path.append(str(TRAINING))
    spec = importlib.util.spec_from_file_location(name, TRAINING / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_PLAY_WITHOUT = """
import sys
blocked = sys.argv[3:]
for name in blocked:
    sys.modules[name] = None  # any `import NAME` now raises ImportError
from friday13_env import agents, raw_env
agent = agents.load(sys.argv[1])
env = raw_env(num_players=int(sys.argv[2]))
env.reset(seed=3)
plays = 0
for _ in env.agent_iter():
    observation, _, terminated, truncated, _ = env.last()
    action = None if terminated or truncated else agent.act(observation)
    if action is not None:
        assert observation["action_mask"][action] == 1, action
        plays += 1
    env.step(action)
print(plays, type(agent.policy).__name__, any(sys.modules.get(name) is not None for name in blocked))
"""


def play_without(policy: Path, num_players: int, blocked: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Play one seeded game of ``num_players`` with ``agents.load(policy)`` at every seat, in a new process where
    the modules ``blocked`` cannot be imported. Its stdout: the card plays, the policy's class, and whether a
    blocked module got imported after all; every move is checked legal."""
    command = [sys.executable, "-c", _PLAY_WITHOUT, str(policy), str(num_players), *blocked]
    return subprocess.run(command, capture_output=True, text=True, cwd=REPOSITORY, timeout=120)


def refused(capsys: Any, parse: Any, argv: list[str], *messages: str) -> None:
    """``parse(argv)`` exits with argparse's usage error (code 2), and its message holds every one of ``messages``."""
    import pytest

    with pytest.raises(SystemExit) as stop:
        parse(argv)
    assert stop.value.code == 2
    error = capsys.readouterr().err
    for message in messages:
        assert message in error, error


def policy_arrays(source: Path | bytes) -> dict[str, np.ndarray]:
    """The arrays of a numpy policy file (its path, or its bytes), without its metadata."""
    with np.load(io.BytesIO(source) if isinstance(source, bytes) else source) as stored:
        return {key: stored[key] for key in stored.files if key != "metadata"}
