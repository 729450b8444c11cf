"""Golden seeded playthroughs: the stored action sequences must reproduce the stored observations.

Regenerate after an intended rule or encoding change with::

    FRIDAY_REGEN_GOLDEN=1 python -m pytest tests/friday/test_friday_golden.py

The actions were chosen by the baseline agents when the file was made; replaying them needs only the
environment, so changes to the agents never break this test.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from friday13_env.friday.agents import make_agent
from friday13_env.friday.env import FridayEnv

GOLDEN = Path(__file__).with_name("friday_golden.json")
GAMES = ({"agent": "heuristic", "level": 1, "seed": 2033}, {"agent": "random", "level": 4, "seed": 7})


def record(agent: str, level: int, seed: int) -> dict:
    """Play a game with an agent and record everything the golden test compares."""
    env, player = FridayEnv(level=level), make_agent(agent, seed)
    obs, info = env.reset(seed=seed)
    digest = hashlib.sha256(obs.tobytes())
    actions, rewards, done = [], [], False
    while not done:
        action = player.act(obs, info["action_mask"])
        obs, reward, done, _, info = env.step(action)
        actions.append(action)
        rewards.append(reward)
        digest.update(obs.tobytes())
    return {
        "agent": agent,
        "level": level,
        "seed": seed,
        "actions": actions,
        "rewards": rewards,
        "obs_sha256": digest.hexdigest(),
        "won": info["won"],
        "score": info["score"],
    }


def replay(game: dict) -> dict:
    """Replay a stored action sequence and recompute the recorded outcome."""
    env = FridayEnv(level=game["level"])
    obs, _ = env.reset(seed=game["seed"])
    digest = hashlib.sha256(obs.tobytes())
    rewards = []
    for action in game["actions"]:
        obs, reward, _, _, info = env.step(action)
        rewards.append(reward)
        digest.update(obs.tobytes())
    assert env.state.done, "the stored game must end exactly after its last action"
    return {
        **game,
        "rewards": rewards,
        "obs_sha256": digest.hexdigest(),
        "won": info["won"],
        "score": info["score"],
    }


@pytest.mark.skipif(not os.environ.get("FRIDAY_REGEN_GOLDEN"), reason="set FRIDAY_REGEN_GOLDEN=1 to rewrite")
def test_regenerate_golden():
    GOLDEN.write_text(json.dumps([record(**g) for g in GAMES], indent=1) + "\n", encoding="utf-8")


def test_golden_playthroughs_reproduce():
    stored = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert [{k: g[k] for k in ("agent", "level", "seed")} for g in stored] == list(GAMES)
    for game in stored:
        assert replay(game) == game
