"""Gymnasium environment for Friday: a thin adapter over :mod:`friday13_env.friday.engine`.

``gymnasium.make("friday13_env/FridaySolo-v0", level=1, render_mode=None, reward="score",
illegal_action="end")`` or ``FridayEnv(...)`` directly (``friday13_env/Friday-v0`` is a deprecated
alias of the same environment).

* Action space: ``Discrete(129)`` (its ``sample()`` returns a legal action); see
  :mod:`friday13_env.friday.actions` for the table. Only some actions are legal in each state: use
  :meth:`FridayEnv.action_masks` (sb3-contrib MaskablePPO) or ``info["action_mask"]`` (int8).
  ``step`` takes a Python int, a numpy integer or a 0-d integer array; anything else (a float, a
  string, a bool, ``None``) and any number outside 0..128 is a ``ValueError`` naming the legal
  actions. A legal-range but illegal action follows PettingZoo's wrapped-environment convention by
  default (``illegal_action="end"``): the episode terminates with ``ILLEGAL_ACTION_PENALTY[reward]``
  (the score floor ``MIN_SCORE`` = -150 for ``reward="score"``, -1 for ``reward="win"``, so it is
  never better than playing on) and ``info["illegal_action"] = True``; ``illegal_action="raise"``
  raises a ``ValueError`` naming the legal actions instead.
* Misuse of its state is a ``RuntimeError`` (as in the card game): using it before ``reset`` (rendering only
  with a render mode), stepping after the episode ended, and stepping after an exception raised while a move
  was being applied, ``KeyboardInterrupt`` included (the environment then refuses every step until ``reset``). A
  rejected action (a ``ValueError``) changes nothing, and the episode goes on.
* Observation space: ``Box(-1, 1, (OBS_SIZE,), float32)``; layout and decoder in
  :mod:`friday13_env.friday.encoding`. Agents take ``{"observation": obs, "action_mask": mask}``
  (:func:`observation_dict`).
* Reward: 0 until the end, then the rulebook's final score (``reward="score"``, default) or 1/0 for
  a win/loss (``reward="win"``, an optional alternative objective).
* ``info``: ``action_mask``, ``phase``, ``life``, ``step``, ``illegal_action`` always; ``won`` and
  ``score`` at the end. Every termination shows the phase ``GAME_OVER`` (in ``info`` and the observation), one by
  an illegal action too, though the game's own state stays as it was; a truncated episode shows the game where it
  stands (the observation a learner bootstraps from), and its renderings list no legal action.
* Rendering: ``"ansi"`` (text), ``"human"`` (prints the text), ``"rgb_array"`` (a uint8 image of the
  same, drawn with numpy only; see :func:`friday13_env.friday.render.render_rgb`); with ``render_mode=None``
  ``render()`` renders nothing and returns ``None``, as in Gymnasium.
* Seeding: ``reset(seed=...)`` takes ``None`` or a non-negative int (numpy integers too); it seeds the deal
  and, from a key of its own (``ACTION_SAMPLER_KEY``), the action space, so ``action_space.sample()`` rollouts
  are reproducible.
* Episodes end with the game. One position, reachable in principle but never met in play, lets a game go on for
  ever: two exchange cards trading each other over an empty Robinson stack, discard pile and aging stack (a card
  exchanged away is drawn straight back, unused). So an episode that reaches ``MAX_DECISIONS`` decisions without
  ending is truncated (``truncated=True``, reward 0); no other episode is.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from friday13_env.core import checks
from friday13_env.core.checks import as_action, check_choice
from friday13_env.core.registry import check_seed
from friday13_env.core.seeds import seed_reset
from friday13_env.core.spaces import LegalDiscrete
from friday13_env.friday import engine
from friday13_env.friday.actions import NUM_ACTIONS
from friday13_env.friday.encoding import OBS_SIZE, OBSERVATION_LAYOUT, encode
from friday13_env.friday.levels import check_level
from friday13_env.friday.render import RENDER_MODES, render_rgb, render_text
from friday13_env.friday.state import Phase, State

REWARD_MODES = ("score", "win")
ILLEGAL_ACTION_MODES = ("end", "raise")
RESET_OPTIONS = ("level",)
ILLEGAL_ACTION_PENALTY: dict[str, float] = {"score": float(engine.MIN_SCORE), "win": -1.0}
"""Reward of an illegal action under ``illegal_action="end"``, per reward mode: no worse a result exists."""
MAX_DECISIONS = 10_000
"""Decisions after which an episode that has not ended is truncated: far above the longest game measured
(docs/friday.md, ``benchmarks/solo_game_lengths.py``), so only a player that keeps two exchange cards trading each
other ever reaches it."""
ILLEGAL_ACTION_NOTE = "Episode ended by an illegal action"
"""The last line of a rendering after an illegal action ended the episode (which then lists no legal action)."""


def observation_dict(observation: np.ndarray, info: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """What an agent's ``act`` takes: ``{"observation": observation, "action_mask": info["action_mask"]}``."""
    return {"observation": observation, "action_mask": info["action_mask"]}


class FridayEnv(gym.Env[np.ndarray, int]):
    """Friday, the solo deck-builder, as a single-agent Gymnasium environment (see the module doc)."""

    metadata: ClassVar[dict[str, Any]] = {  # type: ignore[misc]  # gymnasium declares it per instance
        "render_modes": list(RENDER_MODES),
        "render_fps": 4,
        "name": "FridaySolo-v0",
    }

    def __init__(
        self,
        level: int = 1,
        render_mode: str | None = None,
        reward: str | None = None,
        illegal_action: str = "end",
        *,
        reward_mode: str | None = None,
    ) -> None:
        """``reward=None`` is ``"score"``; ``reward_mode=`` is its deprecated name, refused together with it (even
        ``reward="score"``), so that neither silently overrides the other."""
        if reward_mode is not None:
            warnings.warn("reward_mode= is deprecated: use reward= (same values)", DeprecationWarning, stacklevel=2)
            if reward is not None:
                raise ValueError("give reward= (reward_mode= is its deprecated name), not both")
            reward = reward_mode
        reward = "score" if reward is None else reward
        self.level = check_level(level)
        check_choice("render_mode", render_mode, (None, *RENDER_MODES))
        check_choice("reward", reward, REWARD_MODES)
        check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        self.render_mode = render_mode
        self.reward = reward
        self.illegal_action = illegal_action
        self._legal_space = LegalDiscrete(NUM_ACTIONS)
        self.action_space = self._legal_space  # type: ignore[assignment]  # Space[np.int64]
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(OBS_SIZE,), dtype=np.float32)
        self.layout = OBSERVATION_LAYOUT
        """Named views of an observation: ``env.unwrapped.layout.views(observation)``."""
        self.state: State | None = None
        self._ended = False
        """The episode is over: the game ended, an illegal action ended it, or it was truncated."""
        self._decisions = 0
        """Steps taken in this episode (``MAX_DECISIONS``)."""
        self._illegal = False
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        """Legal actions now (int8), computed once after each reset and move; all zero once ended."""
        self._failure: str | None = None
        """Why the environment refuses to step: an exception raised inside ``step``, until ``reset``."""

    @property
    def reward_mode(self) -> str:
        """Deprecated name of :attr:`reward`."""
        return self.reward

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Start a new game; ``options={"level": n}`` switches the level for this and later games.

        ``seed``: ``None`` or a non-negative int (a numpy integer counts as the same int), else a ``ValueError``
        before anything changes. It seeds the deal and, from a key of its own, the action space's sampler.
        """
        check_seed(seed)
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"reset options must be a dict such as {{'level': 2}} or None, got {options!r}")
        unknown = sorted(map(str, set(options or {}) - set(RESET_OPTIONS)))
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; allowed: {list(RESET_OPTIONS)}")
        level = check_level(options["level"]) if options and "level" in options else self.level
        seed_reset(self, seed)
        self.level = level
        self.state = engine.new_game(self.level, self.np_random)
        self._ended = self._illegal = False
        self._failure = None
        self._decisions = 0
        self._update_mask(self.state)
        if self.render_mode == "human":
            self.render()
        return encode(self.state), self._info()

    def step(self, action: int | np.integer | np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Apply one action; the reward is non-zero only when the episode ends (see the module doc).

        A ``RuntimeError`` before ``reset``, after the episode ended and after an exception raised while a
        move was being applied (the game may be half updated); a rejected action (a ``ValueError``, nothing
        played) leaves the environment as it was, ready for the next step.
        """
        if self._failure is not None:
            raise RuntimeError(f"step() refused: an earlier step() raised {self._failure}; call reset() first")
        state = self._require_state()
        if self._ended:
            raise RuntimeError("step() called after the episode ended; call reset() first")
        move = self._checked_action(state, action)
        if not self._mask[move] and self.illegal_action == "raise":
            raise ValueError(f"illegal action {move} in phase {state.phase.name}; {engine.legal_text(state)}")
        try:
            return self._step(state, move)
        except BaseException as error:  # Ctrl-C (KeyboardInterrupt) mid-move leaves it half played just as well
            self._failure = repr(error)
            raise

    def _step(self, state: State, move: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if not self._mask[move]:  # illegal_action="end"
            self._ended = self._illegal = True
            reward = ILLEGAL_ACTION_PENALTY[self.reward]
        else:
            engine.apply_action(state, move, self.np_random)
            self._ended = state.done
            reward = 0.0
            if state.done:
                reward = float(engine.final_score(state)) if self.reward == "score" else float(bool(state.won))
        self._decisions += 1
        truncated = not self._ended and self._decisions >= MAX_DECISIONS
        terminated = self._ended
        self._ended |= truncated
        self._update_mask(state)
        if self.render_mode == "human":
            self.render()
        return self._observation(state), reward, terminated, truncated, self._info()

    def _observation(self, state: State) -> np.ndarray:
        """``encode(state)``, except that after an illegal action ended the episode its phase is ``GAME_OVER``, as at
        every other end (the game itself is left as it was: nothing was played)."""
        observation = encode(state)
        if self._illegal:
            phase = OBSERVATION_LAYOUT.views(observation)["phase"]
            phase[:] = 0.0
            phase[Phase.GAME_OVER] = 1.0
        return observation

    def _checked_action(self, state: State, action: object) -> int:
        """``action`` as an int in the action space, or a ``ValueError`` naming the legal actions."""
        return as_action(
            action,
            NUM_ACTIONS,
            engine.ACTION_TYPE_MESSAGE,
            "action {action} is not in the action space Discrete({n}); {legal}",
            legal=lambda: engine.legal_text(state),
        )

    def _update_mask(self, state: State) -> None:
        """Recompute the stored legal mask after a reset or a move (all zero once the episode ended)."""
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8) if self._ended else engine.action_mask(state)
        self._legal_space.legal_mask = None if self._ended else self._mask

    def action_masks(self) -> np.ndarray:
        """Boolean mask of legal actions (the hook MaskablePPO looks for); all False once the episode ended."""
        self._require_state()
        return self._mask.astype(bool)

    def render(self) -> str | np.ndarray | None:
        """``ansi``: return the text; ``human``: print it; ``rgb_array``: return a (H, W, 3) uint8 image.

        With ``render_mode=None`` nothing is rendered and ``None`` returned, with a warning (Gymnasium's convention),
        even before ``reset``; in the other modes rendering before ``reset`` is a ``RuntimeError``.
        """
        if self.render_mode is None:
            checks.no_render_mode()
            return None
        state = self._require_state()
        ended = ILLEGAL_ACTION_NOTE if self._illegal else None
        if self._ended and not self._illegal and not state.done:
            ended = f"Episode truncated after {self._decisions:,} decisions"
        if self.render_mode == "rgb_array":
            return render_rgb(state, ended, game_over=self._illegal)
        text = render_text(state, ended, game_over=self._illegal)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _require_state(self) -> State:
        """The running game; using the environment before ``reset`` is a ``RuntimeError`` (misuse, not a bad value)."""
        if self.state is None:
            raise RuntimeError("the environment must be reset() before it is used")
        return self.state

    def _info(self) -> dict[str, Any]:
        """Mask and a few readable facts; result and score once the episode is over."""
        state = self._require_state()
        info: dict[str, Any] = {
            "action_mask": self._mask.copy(),
            "phase": Phase.GAME_OVER.name if self._illegal else state.phase.name,
            "life": state.life,
            "step": state.step,
            "illegal_action": self._illegal,
        }
        if self._illegal:
            info["won"] = False
            info["score"] = engine.MIN_SCORE
        elif state.done:
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
