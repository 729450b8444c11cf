"""What a game of this package provides: the template both games fill in, and a third one would.

A game is a rules core that knows nothing of RL (an engine of free functions over a state object), its
observation as a ``Layout`` of named blocks, thin environments over the engine (a Gymnasium single-agent view,
and a PettingZoo AEC environment when several players sit at the table), agents by name in a ``Registry`` (a
batched form beside each where the game has a batched engine), a zoo of trained policies with model cards, an
evaluation, and renderers. ``Game`` names each piece once, so that what serves every game reaches them the same
way (the conformance tests do; the benchmark and the web page still know the two games by name, so a third needs
code there); each game declares its own in ``<game>/game.py`` and ``friday13_env.games`` lists them.
``docs/adding-a-game.md`` walks through writing one.
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


ENGINE_FUNCTIONS = ("new_game", "legal_actions", "action_mask")
"""What every rules core offers by these names (the move function's name and arguments are the game's own)."""


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

    def __post_init__(self) -> None:
        """A declaration that cannot serve the tools is refused when it is made, naming the field (rather than an
        ``AttributeError`` deep inside a test)."""
        for name in ("key", "title", "env_id", "env_version"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"Game.{name} must be a non-empty str, got {getattr(self, name)!r}")
        if not self.key.isidentifier():
            raise ValueError(f"Game.key must be the game's package name under friday13_env, got {self.key!r}")
        if not isinstance(self.render_modes, tuple) or not all(isinstance(mode, str) for mode in self.render_modes):
            raise ValueError(f"Game.render_modes must be a tuple of str, got {self.render_modes!r}")
        missing = [name for name in ENGINE_FUNCTIONS if not callable(getattr(self.engine, name, None))]
        if missing:
            raise ValueError(f"Game.engine {getattr(self.engine, '__name__', self.engine)!r} lacks {missing}")
        if not isinstance(self.agents, Registry):
            raise ValueError(f"Game.agents must be the game's Registry, got {type(self.agents).__name__}")
        if not callable(self.evaluate):
            raise ValueError("Game.evaluate must be callable: evaluate(agent_spec, num_games, seed)")

    @property
    def package(self) -> str:
        return f"friday13_env.{self.key}"

    def make_env(self, **options: Any) -> gym.Env:
        """Its single-agent environment with ``options`` (every option checked by the environment)."""
        return gym.make(self.env_id, **options)

    def zoo(self) -> dict[str, Path]:
        """Its shipped policies: ``{name: NAME.npz}``, each with its model card ``NAME.md`` beside it."""
        return self.agents.zoo()
