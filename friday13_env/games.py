"""The games of this package, each declared as a :class:`friday13_env.core.game.Game`.

``game("friday13")`` imports one game's declaration on first use (the card game's AEC environment needs
PettingZoo, the solo game does not); ``GAME_KEYS`` lists them in order.
"""

from __future__ import annotations

from importlib import import_module

from friday13_env.core.game import Game

GAME_KEYS = ("friday13", "friday")


def game(key: str) -> Game:
    """The declaration of the game ``key`` (one of ``GAME_KEYS``)."""
    if key not in GAME_KEYS:
        raise ValueError(f"unknown game {key!r}; allowed values: {list(GAME_KEYS)}")
    declared = import_module(f"friday13_env.{key}.game").GAME
    if not isinstance(declared, Game):
        raise TypeError(
            f"friday13_env.{key}.game.GAME is a {type(declared).__name__}, not a friday13_env.core.game.Game"
        )
    if declared.key != key:
        raise ValueError(
            f"friday13_env.{key}.game.GAME declares the key {declared.key!r}; a game's key is its package, {key!r}"
        )
    return declared


def all_games() -> list[Game]:
    return [game(key) for key in GAME_KEYS]
