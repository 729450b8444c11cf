"""Golden seeded playthroughs: the stored action sequences must reproduce the stored observations.

Regenerate after an intended rule or encoding change with ``python -m tests.friday.make_golden``.

The actions were chosen by the baseline agents when the file was made; replaying them needs only the
environment, so changes to the agents never break this test.
"""

from __future__ import annotations

import hashlib
import json

from friday13_env.friday.env import FridayEnv
from tests.friday.make_golden import GAMES, GOLDEN_PATH

HOW_TO_UPDATE = (
    "a golden Friday playthrough no longer reproduces. If this rule or encoding change is intended, "
    "regenerate tests/friday/friday_golden.json with `python -m tests.friday.make_golden`; otherwise it is a bug."
)


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


def test_golden_playthroughs_reproduce():
    stored = json.loads(GOLDEN_PATH.read_text(encoding="utf-8"))
    assert [{k: g[k] for k in ("agent", "level", "seed")} for g in stored] == list(GAMES), HOW_TO_UPDATE
    for game in stored:
        assert replay(game) == game, HOW_TO_UPDATE
