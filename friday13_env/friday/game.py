"""Friday, the solo deck-builder, as a :class:`~friday13_env.core.game.Game`: where each of its pieces lives."""

from __future__ import annotations

from friday13_env.core.game import Game
from friday13_env.core.stats import Interval
from friday13_env.friday import engine
from friday13_env.friday.agents import REGISTRY
from friday13_env.friday.evaluation import evaluate as evaluate_level
from friday13_env.friday.levels import LEVELS
from friday13_env.friday.policy import ENV_VERSION
from friday13_env.friday.render import RENDER_MODES


def evaluate(spec: str, num_games: int, seed: int) -> dict[str, Interval]:
    """The win rate of ``spec`` at each level, ``num_games`` games each."""
    return {f"level {level}": evaluate_level(spec, level, num_games, seed).win_rate for level in LEVELS}


GAME = Game(
    key="friday",
    title="Friday",
    env_id="friday13_env/FridaySolo-v0",
    env_version=ENV_VERSION,
    engine=engine,
    agents=REGISTRY,
    evaluate=evaluate,
    render_modes=tuple(RENDER_MODES),
)
