"""Evaluate Friday agents: win rate and mean score per level, with 95% confidence intervals.

Game ``g`` of a run with seed ``s`` resets the environment with seed ``s * 1_000_003 + g`` and the agent
with the same number, so results are reproducible and every agent faces the same deals.
Win rates get Wilson score intervals (good at rates near 0 or 1); mean scores get Student-t intervals.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from friday13_env.friday.agents import Agent
from friday13_env.friday.env import FridayEnv

Z_95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with a 95% confidence interval."""

    value: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class LevelResult:
    """Results of one agent at one level."""

    agent: str
    level: int
    games: int
    wins: int
    win_rate: Interval
    mean_score: Interval
    mean_steps: float
    ms_per_decision: float
    """Wall time per decision, agent and environment together (depends on the machine and its load)."""


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> Interval:
    """Wilson score interval for a binomial proportion."""
    if trials <= 0:
        raise ValueError(f"trials must be positive, got {trials}")
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half))


def t_quantile_975(dof: int) -> float:
    """Two-sided 95% Student-t quantile (Cornish-Fisher expansion; exact to ~1e-4 for dof >= 3)."""
    if dof <= 0:
        return math.inf
    z = Z_95
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / dof + g2 / dof**2 + g3 / dof**3


def mean_interval(values: Sequence[float]) -> Interval:
    """Mean with a Student-t 95% interval (degenerate for fewer than two values)."""
    data = np.asarray(values, dtype=np.float64)
    mean = float(data.mean())
    if len(data) < 2:
        return Interval(mean, mean, mean)
    half = t_quantile_975(len(data) - 1) * float(data.std(ddof=1)) / math.sqrt(len(data))
    return Interval(mean, mean - half, mean + half)


def game_seed(seed: int, game: int) -> int:
    """Seed of game ``game`` in a run seeded with ``seed``."""
    return seed * 1_000_003 + game


def play_game(env: FridayEnv, agent: Agent, seed: int) -> tuple[bool, int, int]:
    """Play one game; returns (won, score, number of decisions)."""
    obs, info = env.reset(seed=seed)
    agent.reset(seed)
    steps, done = 0, False
    while not done:
        obs, _, done, _, info = env.step(agent.act(obs, info["action_mask"]))
        steps += 1
    return bool(info["won"]), int(info["score"]), steps


def evaluate(
    agent: Agent, level: int, games: int, seed: int = 0, progress: Callable[[int], None] | None = None
) -> LevelResult:
    """Play ``games`` games of ``agent`` at ``level`` and summarise them."""
    if games <= 0:
        raise ValueError(f"games must be positive, got {games}")
    env = FridayEnv(level=level)
    wins, scores, steps = 0, [], []
    start = time.perf_counter()
    for game in range(games):
        won, score, n = play_game(env, agent, game_seed(seed, game))
        wins += won
        scores.append(score)
        steps.append(n)
        if progress is not None:
            progress(game + 1)
    return LevelResult(
        agent.name,
        level,
        games,
        wins,
        wilson_interval(wins, games),
        mean_interval(scores),
        float(np.mean(steps)),
        1000.0 * (time.perf_counter() - start) / max(sum(steps), 1),
    )


def format_table(results: Sequence[LevelResult]) -> str:
    """Readable table: one row per agent and level."""
    width = max([10, *(len(r.agent) for r in results)])
    header = f"{'agent':<{width}} {'level':>5} {'games':>6} {'win rate (95% CI)':>26} {'mean score (95% CI)':>28}"
    lines = [header, "-" * len(header)]
    for r in results:
        rate = f"{100 * r.win_rate.value:5.1f}% [{100 * r.win_rate.low:5.1f}, {100 * r.win_rate.high:5.1f}]"
        score = f"{r.mean_score.value:7.2f} [{r.mean_score.low:7.2f}, {r.mean_score.high:7.2f}]"
        lines.append(f"{r.agent:<{width}} {r.level:>5} {r.games:>6} {rate:>26} {score:>28}")
    return "\n".join(lines)


def format_markdown(results: Sequence[LevelResult], seed: int) -> str:
    """The results as a Markdown table (for ``results/*.md`` and the docs)."""
    lines = [
        f"Seed {seed}; win rate with a 95% Wilson interval, mean score with a 95% Student-t interval.",
        "",
        "| agent | level | games | win rate [95% CI] | mean score [95% CI] | ms / decision |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        rate = f"{100 * r.win_rate.value:.1f}% [{100 * r.win_rate.low:.1f}, {100 * r.win_rate.high:.1f}]"
        score = f"{r.mean_score.value:.2f} [{r.mean_score.low:.2f}, {r.mean_score.high:.2f}]"
        lines.append(f"| {r.agent} | {r.level} | {r.games} | {rate} | {score} | {r.ms_per_decision:.2f} |")
    return "\n".join(lines)


def results_to_json(results: Sequence[LevelResult], seed: int) -> dict:
    """JSON-serialisable summary of a run."""
    return {"seed": seed, "results": [asdict(r) for r in results]}
