"""What a game of this package provides: the template both games fill in, and a third one would.

A game is a rules core that knows nothing of RL (an engine of free functions over a state object), its
observation as a ``Layout`` of named blocks, thin environments over the engine (a Gymnasium single-agent view,
and a PettingZoo AEC environment when several players sit at the table), agents by name in a ``Registry`` (a
batched form beside each where the game has a batched engine), a zoo of trained policies with model cards, an
evaluation, and renderers. ``Game`` names each piece once, so that what serves every game (the conformance
tests, benchmarks, a web page) reaches them the same way; each game declares its own in ``<game>/game.py`` and
``friday13_env.games`` lists them. ``docs/adding-a-game.md`` walks through writing one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium as gym

from friday13_env.core.registry import Registry
from friday13_env.core.stats import Interval

Evaluation = Callable[[str, int, int], dict[str, Interval]]
"""``evaluate(agent_spec, num_games, seed)``: the game's standard measure of one agent, as named 95% intervals
(the same seed plays the same deals, whatever the agent)."""


@dataclass(frozen=True)
class Game:
    """One game: where its pieces live and how to reach each of them."""

    key: str
    """Its package under ``friday13_env`` (``friday13``, ``friday``), and so where its ``zoo/`` folder lies."""
    title: str
    env_id: str
    """The Gymnasium id of its single-agent environment (``gymnasium.make(env_id)``)."""
    env_version: str
    """The tag of its observations, actions and rewards; policy checkpoints record it."""
    engine: ModuleType
    """The rules core: ``new_game``, ``legal_actions(state)``, ``action_mask(state)`` and the move function."""
    agents: Registry
    evaluate: Evaluation
    render_modes: tuple[str, ...]
    make_aec: Callable[..., Any] | None = None
    """The PettingZoo AEC environment of a game for several players (``None`` for a solo game)."""

    @property
    def package(self) -> str:
        return f"friday13_env.{self.key}"

    def make_env(self, **options: Any) -> gym.Env:
        """Its single-agent environment with ``options`` (every option checked by the environment)."""
        return gym.make(self.env_id, **options)

    def zoo(self) -> dict[str, Path]:
        """Its shipped policies: ``{name: NAME.npz}``, each with its model card ``NAME.md`` beside it."""
        return self.agents.zoo()
