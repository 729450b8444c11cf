"""The solo evaluation and the solo benchmark seed each game's agent from a key of its own, never with the deal's
seed: an agent seeded like the deal draws the numbers that shuffled it, and a search agent's first sampled future
would be the game's real order of cards."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from friday13_env.benchmark import runner
from friday13_env.benchmark.play import solo_game_seed
from friday13_env.core.agent import Observation
from friday13_env.friday.agents import make
from friday13_env.friday.env import FridayEnv
from friday13_env.friday.evaluation import agent_seed, evaluate, game_seed, play_game
from tests.benchmark.helpers import SOLO_CELLS, small_suite


class SeedRecorder:
    """Plays the first legal action and notes every seed its ``reset`` hook is given."""

    name = "seed-recorder"

    def __init__(self) -> None:
        self.seeds: list[int | None] = []

    def reset(self, seed: int | None = None) -> None:
        self.seeds.append(seed)

    def act(self, observation: Observation) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_the_agent_seed_starts_a_stream_other_than_the_deals() -> None:
    """The environment draws the deal from ``np_random`` seeded with the game's seed; an agent seeded with that same
    number would draw the same numbers (the flaw), one seeded with ``agent_seed`` of it draws others."""
    for game in range(20):
        deal = game_seed(1, game)
        env_draws = gym.utils.seeding.np_random(deal)[0].random(4)
        np.testing.assert_array_equal(np.random.default_rng(deal).random(4), env_draws)  # the old seeding's copy
        assert not np.array_equal(np.random.default_rng(agent_seed(deal)).random(4), env_draws)
    deals = [game_seed(seed, game) for seed in range(3) for game in range(50)]
    assert len({agent_seed(deal) for deal in deals}) == len(deals)


def test_the_evaluation_seeds_an_agent_object_apart_from_the_deal() -> None:
    recorder = SeedRecorder()
    evaluate(recorder, level=1, games=4, seed=5)
    assert recorder.seeds == [agent_seed(game_seed(5, game)) for game in range(4)]


def test_the_evaluation_of_a_spec_plays_each_game_with_the_agent_of_its_own_seed() -> None:
    """A randomised agent: each game is the one a separately built agent of ``agent_seed`` plays on that deal."""
    result = evaluate("random", level=1, games=3, seed=2)
    env = FridayEnv(level=1)
    scores = []
    for game in range(3):
        deal = game_seed(2, game)
        scores.append(play_game(env, make("random", seed=agent_seed(deal)), deal)[1])
    assert result.mean_score.value == np.mean(scores)


def test_the_solo_benchmark_seeds_the_agent_apart_from_the_deal() -> None:
    suite = small_suite(SOLO_CELLS, deals=2)
    recorder = SeedRecorder()
    runner.run_benchmark(recorder, suite, workers=1)
    split = suite.split("test")
    deals = [solo_game_seed(split.seed, cell.level, game) for cell in suite.cells for game in range(2)]
    assert recorder.seeds[0] == 0, "built with seed 0 before the games, as every entrant is"
    assert sorted(recorder.seeds[1:]) == sorted(agent_seed(deal) for deal in deals)
