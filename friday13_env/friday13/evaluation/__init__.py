"""Tournaments between agents: duplicate deals, seat rotation and confidence intervals.

``evaluate(matchups, num_games, num_players, seed=..., workers=...)`` plays matchups such as
``Matchup.versus("search:budget=200", "random")`` (one agent against copies of another) and
returns an ``EvaluationResult``; ``evaluate_agent(agent, ["random", "cautious"])`` is the quick,
in-process version for training loops. ``report`` turns results into tables, files and plots.
See ``docs/evaluation.md`` for the method.
"""

from friday13_env.core.stats import Estimate
from friday13_env.friday13.evaluation.results import AgentStats, EvaluationResult, MatchupResult
from friday13_env.friday13.evaluation.specs import AgentSpec, Matchup, focus_matchups, matrix_matchups, parse_spec
from friday13_env.friday13.evaluation.tournament import evaluate, evaluate_agent

__all__ = [
    "AgentSpec",
    "AgentStats",
    "Estimate",
    "EvaluationResult",
    "Matchup",
    "MatchupResult",
    "evaluate",
    "evaluate_agent",
    "focus_matchups",
    "matrix_matchups",
    "parse_spec",
]
