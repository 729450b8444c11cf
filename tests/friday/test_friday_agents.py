"""Baseline agents and the evaluation helpers."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from friday13_env.friday.agents import HeuristicAgent, RandomAgent, make_agent
from friday13_env.friday.env import FridayEnv
from friday13_env.friday.evaluation import (
    evaluate,
    format_table,
    mean_interval,
    play_game,
    t_quantile_975,
    wilson_interval,
)
from tests.friday.helpers import assert_plays_only_legal_moves


@pytest.mark.parametrize("agent", [RandomAgent(0), HeuristicAgent(0, samples=4)])
def test_agents_only_choose_legal_actions(agent):
    assert_plays_only_legal_moves(agent, level=2, seed=5)


def test_agents_are_deterministic_given_a_seed():
    env = FridayEnv(level=1)
    for name in ("random", "heuristic"):
        first = play_game(env, make_agent(name, 3), seed=9)
        second = play_game(env, make_agent(name, 3), seed=9)
        assert first == second


def test_unknown_agent_is_rejected():
    with pytest.raises(ValueError, match=r"unknown agent 'x'; allowed: \['heuristic', 'random', 'search'\]"):
        make_agent("x")


def test_unknown_agent_option_is_rejected_with_the_allowed_ones():
    expected = (
        r"agent 'search' has no option\(s\) \['budgit'\]; "
        r"its options: \['budget', 'horizon', 'margin', 'model', 'rollout_samples'\]"
    )
    with pytest.raises(ValueError, match=expected):
        make_agent("search", 0, budgit=3)


def test_wilson_interval_known_values():
    five = wilson_interval(5, 10)
    assert (five.value, round(five.low, 4), round(five.high, 4)) == (0.5, 0.2366, 0.7634)
    zero = wilson_interval(0, 1000)
    assert zero.low == pytest.approx(0.0, abs=1e-12) and round(zero.high, 4) == 0.0038
    with pytest.raises(ValueError, match="trials must be positive"):
        wilson_interval(0, 0)


def test_t_quantile_and_mean_interval():
    assert t_quantile_975(9) == pytest.approx(2.2622, abs=2e-3)
    assert t_quantile_975(30) == pytest.approx(2.0423, abs=1e-4)
    interval = mean_interval([1.0, 2.0, 3.0, 4.0])
    half = t_quantile_975(3) * np.std([1, 2, 3, 4], ddof=1) / 2
    assert (interval.value, interval.low, interval.high) == pytest.approx((2.5, 2.5 - half, 2.5 + half))


def test_evaluate_is_reproducible_and_formats():
    first = evaluate(RandomAgent(1), level=3, games=6, seed=4)
    second = evaluate(RandomAgent(1), level=3, games=6, seed=4)
    untimed = {"ms_per_decision": 0.0}
    assert replace(first, **untimed) == replace(second, **untimed) and first.games == 6 and 0 <= first.wins <= 6
    assert first.ms_per_decision > 0
    assert "random" in format_table([first]) and "win rate" in format_table([first])


def test_cli_writes_json(tmp_path, capsys):
    script = Path(__file__).resolve().parents[2] / "training" / "evaluate_friday.py"
    spec = importlib.util.spec_from_file_location("evaluate_friday", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out, table = tmp_path / "eval.json", tmp_path / "eval.md"
    argv = ["--agents", "random", "--levels", "1", "--games", "3", "--json", str(out), "--markdown", str(table)]
    assert module.main(argv) == 0
    data = json.loads(out.read_text())
    assert data["seed"] == 0 and data["results"][0]["games"] == 3
    rows = table.read_text().splitlines()
    assert rows[2].startswith("| agent | level | games |")
    assert rows[4].startswith("| random | 1 | 3 | 0.0% [0.0, 56.1] |")
    assert "random" in capsys.readouterr().out
