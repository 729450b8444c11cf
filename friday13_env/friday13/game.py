"""Friday the 13th as a :class:`~friday13_env.core.game.Game`: where each of its pieces lives."""

from __future__ import annotations

from typing import Any

from friday13_env.core.game import Game
from friday13_env.core.stats import Interval
from friday13_env.friday13 import engine
from friday13_env.friday13.agents import REGISTRY
from friday13_env.friday13.agents.policy import ENV_VERSION
from friday13_env.friday13.evaluation import evaluate as evaluate_matchups
from friday13_env.friday13.evaluation import focus_matchups
from friday13_env.friday13.render import RENDER_MODES

BASELINES = ("random", "cautious", "majority")
"""The standard measure's opponents: three copies of each at a 4-player table."""


def evaluate(spec: str, num_games: int, seed: int) -> dict[str, Interval]:
    """The win rate of ``spec`` against three copies of each baseline at 4 players, on duplicate deals."""
    result = evaluate_matchups(focus_matchups(spec, BASELINES), num_games, 4, seed=seed)
    return {
        f"vs 3 x {matchup.opponents[0]}": matchup.stats(str(matchup.focus)).win_rate.interval
        for matchup in result.matchups
    }


def make_aec(**options: Any) -> Any:
    """The PettingZoo AEC environment (``friday13_env.env``), imported on first use."""
    from friday13_env.friday13.aec import env

    return env(**options)


GAME = Game(
    key="friday13",
    title="Friday the 13th",
    env_id="friday13_env/Friday13-v0",
    env_version=ENV_VERSION,
    engine=engine,
    agents=REGISTRY,
    evaluate=evaluate,
    render_modes=tuple(RENDER_MODES),
    make_aec=make_aec,
)
