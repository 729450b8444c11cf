"""Gymnasium environment for Friday: a thin adapter over :mod:`friday13_env.friday.engine`.

``FridayEnv(level=1, render_mode=None, reward_mode="score")``

* Action space: ``Discrete(129)`` (its ``sample()`` returns a legal action); see
  :mod:`friday13_env.friday.actions` for the table. Only some actions are legal in each state: use
  :meth:`FridayEnv.action_masks` (sb3-contrib MaskablePPO) or ``info["action_mask"]`` (int8).
  An illegal action raises ``ValueError`` listing the legal ones.
* Observation space: ``Box(-1, 1, (OBS_SIZE,), float32)``; layout and decoder in
  :mod:`friday13_env.friday.encoding`.
* Reward: 0 until the end, then the rulebook's final score (``reward_mode="score"``, default) or
  1/0 for a win/loss (``reward_mode="win"``, an optional alternative objective, off by default).
* ``info``: ``action_mask``, ``phase``, ``life``, ``step`` always; ``won`` and ``score`` at the end.
* Episodes always terminate (every fight and every step are finite); there is no truncation.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from friday13_env.friday import engine
from friday13_env.friday.actions import NUM_ACTIONS
from friday13_env.friday.encoding import OBS_SIZE, encode
from friday13_env.friday.levels import check_level
from friday13_env.friday.render import render_text
from friday13_env.friday.state import State

REWARD_MODES = ("score", "win")


class LegalDiscrete(spaces.Discrete):
    """``Discrete`` whose ``sample()`` draws a *legal* action of the environment's current state.

    Illegal actions raise, so a plain uniform sample would be useless (and would break generic tools
    such as the Gymnasium and SB3 environment checkers); an explicit ``mask`` still takes precedence.
    """

    def __init__(self, n: int, env: FridayEnv) -> None:
        super().__init__(n)
        self._env = env

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        """Uniform over the legal actions (all actions before ``reset`` or after the end)."""
        state = self._env.state
        if mask is None and probability is None and state is not None and not state.done:
            mask = engine.action_mask(state)
        return super().sample(mask=mask, probability=probability)


class FridayEnv(gym.Env[np.ndarray, int]):
    """Friday, the solo deck-builder, as a single-agent Gymnasium environment."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "name": "Friday-v0"}

    def __init__(self, level: int = 1, render_mode: str | None = None, reward_mode: str = "score") -> None:
        self.level = check_level(level)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of None, 'ansi', 'human', got {render_mode!r}")
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")
        self.render_mode = render_mode
        self.reward_mode = reward_mode
        self.action_space = LegalDiscrete(NUM_ACTIONS, self)
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(OBS_SIZE,), dtype=np.float32)
        self.state: State | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Start a new game; ``options={"level": n}`` switches the level for this and later games."""
        super().reset(seed=seed)
        if options and "level" in options:
            self.level = check_level(options["level"])
        self.state = engine.new_game(self.level, self.np_random)
        if self.render_mode == "human":
            self.render()
        return encode(self.state), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Apply one action; the reward is non-zero only when the game ends."""
        state = self._require_state()
        if state.done:
            raise ValueError("step() called after the game ended; call reset() first")
        engine.apply_action(state, int(action), self.np_random)
        reward = 0.0
        if state.done:
            reward = float(engine.final_score(state)) if self.reward_mode == "score" else float(bool(state.won))
        if self.render_mode == "human":
            self.render()
        return encode(state), reward, state.done, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Boolean mask of legal actions (the hook MaskablePPO looks for)."""
        return engine.action_mask(self._require_state()).astype(bool)

    def render(self) -> str | None:
        """``ansi``: return the text; ``human``: print it."""
        if self.render_mode is None:
            return None
        text = render_text(self._require_state())
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _require_state(self) -> State:
        """The running game; using the environment before ``reset`` is a usage error."""
        if self.state is None:
            raise ValueError("call reset() before using the environment")
        return self.state

    def _info(self) -> dict[str, Any]:
        """Mask and a few readable facts; result and score once the game is over."""
        state = self._require_state()
        info: dict[str, Any] = {
            "action_mask": engine.action_mask(state),
            "phase": state.phase.name,
            "life": state.life,
            "step": state.step,
        }
        if state.done:
            info["won"] = bool(state.won)
            info["score"] = engine.final_score(state)
        return info


def deprecated_friday_v0(**kwargs: Any) -> FridayEnv:
    """``gymnasium.make("friday13_env/Friday-v0")``: the old id of ``FridaySolo-v0``, kept for old code."""
    warnings.warn(
        "friday13_env/Friday-v0 is deprecated: use friday13_env/FridaySolo-v0 (the same environment)",
        DeprecationWarning,
        stacklevel=2,
    )
    return FridayEnv(**kwargs)
