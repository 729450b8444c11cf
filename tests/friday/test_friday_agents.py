"""The solo game's agents (protocol, registry, zoo, option checks) and the evaluation helpers and tool."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from friday13_env.core.agent import Agent
from friday13_env.core.mlp import PolicyAgent
from friday13_env.core.stats import t_quantile_975, wilson_interval
from friday13_env.core.zoo import model_card
from friday13_env.friday import agents
from friday13_env.friday.actions import NUM_ACTIONS
from friday13_env.friday.agents import HeuristicAgent, RandomAgent, SearchAgent, load, make, names, options_of
from friday13_env.friday.encoding import OBS_SIZE
from friday13_env.friday.env import FridayEnv, observation_dict
from friday13_env.friday.evaluation import evaluate, format_table, mean_interval, play_game
from tests.friday.helpers import assert_plays_only_legal_moves
from tests.scripts import load_training_script

NAMES = ["dagger-ppo-v1", "dagger-v1", "heuristic", "random", "search"]
ZOO_POLICY = Path(agents.__file__).parents[1] / "zoo" / "dagger-v1.npz"


# -- protocol and registry --------------------------------------------------------------------------


def test_names_list_the_registered_agents_and_the_zoo():
    assert names() == NAMES
    assert options_of("search") == ["budget", "horizon", "margin", "model", "rollout_samples"]
    assert options_of("heuristic") == ["model", "samples"] and options_of("dagger-v1") == ["greedy"]


@pytest.mark.parametrize("name", NAMES)
def test_every_name_plays_a_full_legal_game_with_no_options(name):
    agent = make(name)
    assert isinstance(agent, Agent) and agent.name == name
    assert_plays_only_legal_moves(agent, level=1, seed=2)


@pytest.mark.parametrize("agent", [RandomAgent(0), HeuristicAgent(0, samples=4)])
def test_agents_only_choose_legal_actions(agent):
    assert_plays_only_legal_moves(agent, level=2, seed=5)


def test_specs_and_keyword_options_build_the_same_agent():
    agent = make("search:budget=16", seed=0)
    assert isinstance(agent, SearchAgent) and agent.policy.budget == 16
    assert make("search", seed=0, budget=16).options == agent.options
    assert make("heuristic:samples=2", seed=0).samples == 2


def test_agents_are_deterministic_given_a_seed():
    env = FridayEnv(level=1)
    for name in ("random", "heuristic:samples=2"):
        first = play_game(env, make(name, seed=3), seed=9)
        assert play_game(env, make(name, seed=3), seed=9) == first


def test_the_reset_hook_reseeds_like_a_new_agent():
    env = FridayEnv(level=1)
    agent = make("heuristic:samples=2", seed=0)
    play_game(env, agent, seed=1)
    agent.reset(7)
    assert play_game(env, agent, seed=4) == play_game(env, make("heuristic:samples=2", seed=7), seed=4)


def test_zoo_policy_is_the_core_policy_agent_read_once():
    agent = make("dagger-v1")
    assert type(agent) is PolicyAgent and agent.greedy
    assert make("dagger-v1", seed=3).policy is agent.policy, "one read of the file"
    path = agents.REGISTRY.policy_path("dagger-v1")
    assert load(path).policy is agent.policy and load(path).name == "dagger-v1"
    assert make("dagger-v1:greedy=false", seed=1).greedy is False
    card = model_card("friday13_env.friday", "dagger-v1")
    assert "68.4% [65.5, 71.2]" in card and "python training/train_friday.py" in card and "Cost per move" in card


def test_unknown_agents_and_options_are_rejected_with_the_allowed_ones():
    known = r"known agents: \['dagger-ppo-v1', 'dagger-v1', 'heuristic'"
    with pytest.raises(ValueError, match=r"unknown Friday agent 'x'; " + known):
        make("x")
    expected = r"agent 'search' has no option\(s\) \['budgit'\]; its options: \['budget', 'horizon', 'margin'"
    with pytest.raises(ValueError, match=expected):
        make("search", seed=0, budgit=3)
    with pytest.raises(ValueError, match="empty agent spec"):
        make("")
    with pytest.raises(ValueError, match="an agent spec must be a string"):
        make(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed must be None or a non-negative int"):
        make("random", seed=-1)


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("search", {"budget": "8"}, r"budget must be an integer from 1 to 10,000, got '8'"),
        ("search", {"budget": 2.5}, r"budget must be an integer from 1 to 10,000, got 2.5"),
        ("search", {"budget": True}, r"budget must be an integer from 1 to 10,000, got True"),
        ("search:budget=x", {}, r"budget must be an integer from 1 to 10,000, got 'x'"),
        ("search", {"horizon": 0}, r"horizon must be an integer >= 1, got 0"),
        ("search", {"rollout_samples": None}, r"rollout_samples must be an integer from 1 to 10,000, got None"),
        ("search", {"margin": "big"}, r"margin must be a finite number, got 'big'"),
        ("search", {"margin": float("nan")}, r"margin must be a finite number, got nan"),
        ("search", {"model": "x"}, r"model must be a WinModel or None"),
        ("heuristic", {"samples": "8"}, r"samples must be an integer from 1 to 10,000, got '8'"),
        ("heuristic:samples=2.0", {}, r"samples must be an integer from 1 to 10,000, got 2.0"),
        ("heuristic", {"greedy": "no"}, r"agent 'heuristic' has no option\(s\) \['greedy'\]"),
        ("dagger-v1", {"greedy": "no"}, r"greedy must be True or False, got 'no'"),
        ("dagger-v1:greedy=1", {}, r"greedy must be True or False, got 1"),
    ],
)
def test_bad_option_values_are_clear_value_errors(spec, options, message):
    with pytest.raises(ValueError, match=message):
        make(spec, seed=0, **options)


def test_agents_reject_observations_that_are_not_the_env_dict():
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    mask[:2] = 1
    good = np.zeros(OBS_SIZE, dtype=np.float32)
    for name in ("heuristic", "search", "dagger-v1"):
        agent = make(name, seed=0)
        with pytest.raises(ValueError, match="observation dict"):
            agent.act(good)  # type: ignore[arg-type]  # the old act(obs, mask) style
        with pytest.raises(ValueError, match=rf"expected an observation vector of shape \({OBS_SIZE},\)"):
            agent.act({"observation": good[:-1], "action_mask": mask})
        with pytest.raises(ValueError, match="non-finite"):
            agent.act({"observation": np.full(OBS_SIZE, np.nan, dtype=np.float32), "action_mask": mask})
        with pytest.raises(ValueError, match="no legal action"):
            agent.act({"observation": good, "action_mask": np.zeros(NUM_ACTIONS, dtype=np.int8)})
    with pytest.raises(ValueError, match="no legal action"):
        RandomAgent(0).act({"observation": good, "action_mask": np.zeros(NUM_ACTIONS, dtype=np.int8)})


def test_register_adds_an_agent_every_tool_then_accepts(monkeypatch):
    monkeypatch.setattr(agents.REGISTRY, "_factories", dict(agents.REGISTRY._factories))

    class FirstLegal:
        name = "first_legal"

        def __init__(self, seed: int | None = None) -> None:
            pass

        def act(self, observation) -> int:
            return int(np.flatnonzero(observation["action_mask"])[0])

    agents.register("first_legal", FirstLegal)
    assert "first_legal" in names() and evaluate("first_legal", level=1, games=1).agent == "first_legal"
    with pytest.raises(ValueError, match="already registered"):
        agents.register("random", RandomAgent)


# -- evaluation -------------------------------------------------------------------------------------


def test_wilson_interval_known_values_stay_in_0_1():
    five = wilson_interval(5, 10)
    assert (five.value, round(five.low, 4), round(five.high, 4)) == (0.5, 0.2366, 0.7634)
    zero, every = wilson_interval(0, 1000), wilson_interval(7, 7)
    assert zero.low == 0.0 and round(zero.high, 4) == 0.0038 and every.high == 1.0 and every.low < 1.0
    for trials in (1, 2, 3, 10, 1000):
        for successes in {0, 1, trials - 1, trials}:
            interval = wilson_interval(successes, trials)
            assert 0.0 <= interval.low <= interval.value <= interval.high <= 1.0
    with pytest.raises(ValueError, match="trials must be positive"):
        wilson_interval(0, 0)
    with pytest.raises(ValueError, match=r"successes must be in 0\.\.3"):
        wilson_interval(4, 3)


def test_t_quantile_and_mean_interval():
    assert t_quantile_975(9) == pytest.approx(2.2622, abs=2e-3)
    assert t_quantile_975(30) == pytest.approx(2.0423, abs=1e-4)
    interval = mean_interval([1.0, 2.0, 3.0, 4.0])
    half = t_quantile_975(3) * np.std([1, 2, 3, 4], ddof=1) / 2
    assert (interval.value, interval.low, interval.high) == pytest.approx((2.5, 2.5 - half, 2.5 + half))


def test_evaluate_is_reproducible_and_formats():
    first = evaluate("random", level=3, games=6, seed=4)
    second = evaluate(RandomAgent(1), level=3, games=6, seed=4)  # the reset hook: the same games
    untimed = {"ms_per_decision": 0.0}
    assert replace(first, **untimed) == replace(second, **untimed) and first.games == 6 and 0 <= first.wins <= 6
    assert first.ms_per_decision > 0
    assert "random" in format_table([first]) and "win rate" in format_table([first])
    with pytest.raises(ValueError, match="games must be a positive int, at most 1,000,000, got 0"):
        evaluate("random", level=1, games=0)
    with pytest.raises(ValueError, match="seed must be a non-negative int, got -1"):
        evaluate("random", level=1, games=1, seed=-1)


def test_evaluate_builds_one_agent_per_game_from_the_spec():
    by_spec = evaluate("heuristic:samples=2", level=1, games=2, seed=0)
    by_agent = evaluate(HeuristicAgent(samples=2), level=1, games=2, seed=0)
    assert by_spec.agent == "heuristic:samples=2" and by_agent.agent == "heuristic"
    assert (by_spec.wins, by_spec.mean_score) == (by_agent.wins, by_agent.mean_score)


class IllegalMover:
    """Plays the first action the mask forbids: every move illegal."""

    name = "illegal-mover"

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"] == 0)[0])


def test_evaluate_refuses_an_illegal_move_naming_the_agent_instead_of_scoring_a_loss():
    with pytest.raises(ValueError, match=r"agent 'illegal-mover' played an illegal move: illegal action 2 in phase "):
        evaluate(IllegalMover(), level=1, games=1)


@pytest.mark.parametrize("illegal_action", ["end", "raise"])
def test_play_game_refuses_an_illegal_move_under_either_env_setting(illegal_action):
    env = FridayEnv(illegal_action=illegal_action)
    with pytest.raises(ValueError, match=r"agent 'illegal-mover' played an illegal move: illegal action 2\b"):
        play_game(env, IllegalMover(), seed=0)


class Nameless:
    def act(self, observation):
        return 0


class Actless:
    name = "actless"
    act = 3


@pytest.mark.parametrize("agent", [None, 3, Nameless(), Actless(), ["random"]])
def test_evaluate_checks_the_agent_before_playing(agent, monkeypatch):
    monkeypatch.setattr(FridayEnv, "reset", lambda *args, **kwargs: pytest.fail("played"))
    message = r"agent must be an agent spec \(a string such as 'search:budget=16', or an AgentSpec\) or an object"
    with pytest.raises(ValueError, match=message + r" with a name and an act\(observation\) method, got "):
        evaluate(agent, level=1, games=1)


@pytest.mark.parametrize("seed", [1.5, True, -2, "3"])
@pytest.mark.parametrize("loader", [load, agents.load_policy_agent])
def test_loading_a_policy_refuses_bad_seeds(loader, seed):
    with pytest.raises(ValueError, match=r"seed must be None or a non-negative int, got "):
        loader(ZOO_POLICY, seed=seed)


@pytest.mark.parametrize("path", [3, None, b"policy.npz", ["policy.npz"]])
@pytest.mark.parametrize("loader", [load, agents.load_policy_agent])
def test_loading_a_policy_refuses_a_path_that_is_not_one(loader, path):
    with pytest.raises(ValueError, match=r"a checkpoint path must be a str or .*, got "):
        loader(path)


def test_observation_dict_is_what_agents_take():
    env = FridayEnv()
    obs, info = env.reset(seed=0)
    observation = observation_dict(obs, info)
    assert observation["observation"] is obs and observation["action_mask"] is info["action_mask"]


# -- the evaluation tool ----------------------------------------------------------------------------


@pytest.fixture
def evaluate_cli():
    return load_training_script("evaluate_friday")


def test_cli_writes_json_and_markdown_creating_folders(evaluate_cli, tmp_path, capsys):
    out, table = tmp_path / "a" / "b" / "eval.json", tmp_path / "c" / "eval.md"
    argv = ["--agents", "random", "--levels", "1", "--games", "3", "--json", str(out), "--markdown", str(table)]
    assert evaluate_cli.main(argv) == 0
    data = json.loads(out.read_text())
    assert data["seed"] == 0 and data["results"][0]["games"] == 3
    rate = data["results"][0]["win_rate"]
    assert 0.0 <= rate["low"] <= rate["value"] <= rate["high"] <= 1.0
    rows = table.read_text().splitlines()
    assert rows[2].startswith("| agent | level | games |")
    assert rows[4].startswith("| random | 1 | 3 | 0.0% [0.0, 56.1] |")
    assert "random" in capsys.readouterr().out
    assert sorted(p.name for p in out.parent.iterdir()) == ["eval.json"], "no temporary file left behind"


def test_cli_takes_specs_and_the_search_budget(evaluate_cli):
    args = evaluate_cli.parse_args(["--agents", "search", "search:budget=3", "dagger-v1", "--search-budget", "2"])
    assert [spec.label for spec in args.specs] == ["search:budget=2", "search:budget=3", "dagger-v1"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--games", "0"], "--games: .*must be a positive integer, got '0'"),
        (["--games", "-5"], "--games: .*must be a positive integer, got '-5'"),
        (["--seed", "-1"], "--seed: .*must be a non-negative integer, got '-1'"),
        (["--agents", "nosuch"], "--agents nosuch: unknown Friday agent 'nosuch'"),
        (["--agents", "search:budget=x"], "--agents search:budget=x: search option budget must be an integer"),
        (["--agents", "missing/policy.npz"], "--agents missing/policy.npz: no policy checkpoint"),
        (["--json", "/proc/friday/x.json"], "--json /proc/friday/x.json: cannot write there"),
        (["--markdown", "/proc/x.md"], "--markdown /proc/x.md: cannot write there"),
        (["--levels", "5"], "--levels: invalid choice"),
    ],
)
def test_cli_rejects_bad_arguments_before_playing(evaluate_cli, monkeypatch, capsys, argv, message):
    def no_games(*args, **kwargs):
        raise AssertionError("a game was played")

    monkeypatch.setattr(evaluate_cli, "play_level", no_games)
    with pytest.raises(SystemExit) as exit_info:
        evaluate_cli.main(["--agents", "random", "--games", "2", *argv])
    assert exit_info.value.code == 2
    assert re.search(message, capsys.readouterr().err)


def test_cli_rejects_a_directory_as_output(evaluate_cli, tmp_path: Path, capsys):
    with pytest.raises(SystemExit):
        evaluate_cli.parse_args(["--agents", "random", "--json", str(tmp_path)])
    assert "--json" in capsys.readouterr().err
