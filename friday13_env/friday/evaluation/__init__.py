"""Evaluate Friday agents: win rate and mean score per level, with 95% confidence intervals.

``evaluate(spec_or_agent, level, games, seed=...)`` plays the games (:mod:`.games`, which says how deals and
agents are seeded) and returns a :class:`LevelResult`; :mod:`.report` turns results into a text table,
a Markdown table or JSON (an undefined interval is printed as such, ``null`` in JSON).
"""

from friday13_env.friday.evaluation.games import (
    MAX_GAMES,
    LevelResult,
    LevelUnit,
    agent_seed,
    evaluate,
    game_seed,
    mean_interval,
    play_game,
    play_level,
)
from friday13_env.friday.evaluation.report import format_markdown, format_table, results_to_json

__all__ = [
    "MAX_GAMES",
    "LevelResult",
    "LevelUnit",
    "agent_seed",
    "evaluate",
    "format_markdown",
    "format_table",
    "game_seed",
    "mean_interval",
    "play_game",
    "play_level",
    "results_to_json",
]
