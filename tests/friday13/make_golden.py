"""Record the golden playthroughs of ``friday13_v0``: ``python -m tests.friday13.make_golden``.

``tests/friday13/test_golden.py`` replays the same seeded games and demands identical steps, so any change
to dealing, rules, observations, masks or rewards shows up. Regenerate only when such a change is
intended, and bump the environment version (``friday13_v0`` -> ``v1``) with it, so that published
results stay comparable.

Observations are integral floats; each one is stored as a single string of ints to keep the file
small and its diffs readable.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from friday13_env.friday13.aec import raw_env
from tests.conftest import choose

GOLDEN_PATH = Path(__file__).parent / "golden_friday13_v0.json"

GAMES: dict[str, dict[str, Any]] = {
    "4p-standard-points": {"num_players": 4, "deck": "standard", "reward": "points", "seed": 2026},
    "3p-german-relative-1round": {
        "num_players": 3,
        "deck": "german",
        "reward": "relative",
        "num_rounds": 1,
        "seed": 13,
    },
}


def ints(vector: np.ndarray) -> str:
    """A vector of integral values as one space-separated string; refuses anything fractional."""
    as_int = vector.astype(np.int64)
    if not np.array_equal(as_int, vector):
        raise ValueError(f"expected integral values, got {vector.tolist()}")
    return " ".join(map(str, as_int.tolist()))


def record_game(seed: int, **options: Any) -> dict[str, Any]:
    """Every step of one seeded game through ``raw_env``, moves drawn from a Generator seeded alike."""
    aec = raw_env(**options)
    aec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = []
    for agent in aec.agent_iter():
        observation, reward, terminated, truncated, _ = aec.last()
        action = None if terminated or truncated else choose(observation["action_mask"], rng)
        aec.step(action)
        steps.append(
            {
                "agent": agent,
                "action": action,
                "reward": reward,
                "observation": ints(observation["observation"]),
                "mask": "".join(map(str, observation["action_mask"].tolist())),
                "rewards": {name: aec.rewards[name] for name in aec.agents},
            }
        )
    assert aec.game is not None
    return {"options": {"seed": seed, **options}, "steps": steps, "final_scores": aec.game.scores}


def record_all() -> dict[str, Any]:
    return {
        "env": raw_env.metadata["name"],
        "games": {name: record_game(**dict(config)) for name, config in GAMES.items()},
    }


def main() -> None:
    GOLDEN_PATH.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN_PATH.write_text(json.dumps(record_all(), indent=1) + "\n")
    print(f"wrote {GOLDEN_PATH} ({GOLDEN_PATH.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
