"""Record the golden Friday playthroughs: ``python -m tests.friday.make_golden``.

``tests/friday/test_friday_golden.py`` replays the stored action sequences and demands the same rewards,
observations (as a SHA-256 over all of them), outcome and score. Regenerate only after an intended rule
or encoding change.

The actions are chosen by the baseline agents here, when the file is made; replaying them needs only the
environment, so later changes to the agents never break the golden test.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from friday13_env.friday.agents import make
from friday13_env.friday.env import FridayEnv, observation_dict

GOLDEN_PATH = Path(__file__).with_name("friday_golden.json")
GAMES = ({"agent": "heuristic", "level": 1, "seed": 2033}, {"agent": "random", "level": 4, "seed": 7})


def record(agent: str, level: int, seed: int) -> dict[str, Any]:
    """Play a game with an agent and record everything the golden test compares."""
    env, player = FridayEnv(level=level), make(agent, seed=seed)
    obs, info = env.reset(seed=seed)
    digest = hashlib.sha256(obs.tobytes())
    actions, rewards, done = [], [], False
    while not done:
        action = player.act(observation_dict(obs, info))
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


def main() -> None:
    GOLDEN_PATH.write_text(json.dumps([record(**g) for g in GAMES], indent=1) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN_PATH} ({GOLDEN_PATH.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
