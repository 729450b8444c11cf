"""The ``endgame`` agent: a policy early in a round, ``search`` for its last cards, and clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from friday13_env import agents, raw_env
from friday13_env.core.policy import CheckpointError
from friday13_env.friday13.agents import EndgameSearchAgent
from friday13_env.friday13.agents.base import Observation, deck_of, legal_actions
from friday13_env.friday13.encoding import observation_layout
from friday13_env.friday13.evaluation.duplicate import play_game
from tests.test_policy import tiny_policy

SMALL_BUDGET = 300
SHIPPED = Path(__file__).resolve().parents[1] / "checkpoints" / "ensemble_distilled.npz"
SHIPPED_POLICY = agents.load(SHIPPED)
TINY = "<a valid tiny policy>"


class Recorder:
    """Stands in for the policy or the search: records that it was asked, plays the lowest legal action."""

    def __init__(self, calls: list[str], label: str) -> None:
        self.calls, self.label = calls, label

    def act(self, observation: Observation) -> int:
        self.calls.append(self.label)
        return int(legal_actions(observation)[0])


def hand_size(observation: Observation) -> int:
    layout = observation_layout(deck_of(observation))
    return int(observation["observation"][layout.slices["hand_sizes"]][0])


class Recording:
    """Wraps an agent and keeps every observation it was shown with the move it made."""

    def __init__(self, agent: agents.Agent) -> None:
        self.agent, self.name = agent, agent.name
        self.moves: list[tuple[Observation, int]] = []

    def act(self, observation: Observation) -> int:
        action = self.agent.act(observation)
        self.moves.append((observation, action))
        return action


def play(agent: agents.Agent, seed: int, num_players: int = 4) -> list[tuple[Observation, int]]:
    """One game with ``agent`` at seat 0 and ``cautious`` elsewhere; seat 0's observations and moves."""
    recording = Recording(agent)
    others = [agents.make("cautious", seed=seat) for seat in range(1, num_players)]
    play_game(raw_env(num_players=num_players), [recording, *others], seed)
    return recording.moves


@pytest.mark.parametrize("cards", [1, 3])
def test_search_decides_exactly_the_moves_with_a_choice_from_cards_in_hand(tmp_path: Path, cards: int) -> None:
    agent = agents.make("endgame", seed=0, policy=str(tiny_policy(tmp_path / "tiny.npz")), cards=cards)
    calls: list[str] = []
    agent.policy, agent.search = Recorder(calls, "policy"), Recorder(calls, "search")  # type: ignore[assignment]
    moves = play(agent, seed=3)
    expected = [
        "search" if hand_size(observation) <= cards and legal_actions(observation).size > 1 else "policy"
        for observation, _ in moves
    ]
    assert calls == expected
    assert {"policy", "search"} <= set(calls)
    # four rounds of 13 or 12 cards: the search may take at most `cards` moves of each round
    assert 0 < calls.count("search") <= 4 * cards


def policy_margin(observation: Observation) -> float:
    """How far the shipped policy's likeliest legal move leads the next one in probability."""
    logits = SHIPPED_POLICY.policy.logits(observation["observation"])[legal_actions(observation)]
    weights = np.exp(logits - logits.max())
    probabilities = np.sort(weights / weights.sum())
    return float(probabilities[-1] - probabilities[-2])


@pytest.mark.parametrize(("margin", "first_margin"), [(0.3, None), (0.6, None), (0.5, 0.2), (0.2, 0.6)])
def test_margin_skips_the_search_exactly_where_the_policy_is_sure(margin: float, first_margin: float | None) -> None:
    """``first_margin`` gates the round's first searched move (hand of ``cards`` cards), ``margin`` the rest."""
    options = {} if first_margin is None else {"first_margin": first_margin}
    agent = agents.make("endgame", seed=0, policy=str(SHIPPED), margin=margin, **options)
    calls: list[str] = []
    agent.search = Recorder(calls, "search")  # type: ignore[assignment]
    moves = play(agent, seed=3)
    late = [
        observation
        for observation, _ in moves
        if hand_size(observation) <= agent.cards and legal_actions(observation).size > 1
    ]
    gate = {agent.cards: margin if first_margin is None else first_margin}
    searched = [policy_margin(observation) <= gate.get(hand_size(observation), margin) for observation in late]
    assert calls.count("search") == sum(searched)
    assert 0 < sum(searched) < len(late)  # this game has both: the gate decides, not the hand size alone
    sure = [observation for observation, is_searched in zip(late, searched, strict=True) if not is_searched]
    played = {id(observation): action for observation, action in moves}
    assert all(played[id(observation)] == SHIPPED_POLICY.act(observation) for observation in sure)


def test_plays_legal_moves_reproducibly_for_a_seed() -> None:
    def moves(seed: int) -> list[int]:
        agent = agents.make("endgame", seed=seed, policy=str(SHIPPED), budget=SMALL_BUDGET)
        played = play(agent, seed=11, num_players=5)
        assert all(observation["action_mask"][action] == 1 for observation, action in played)
        return [action for _, action in played]

    assert moves(1) == moves(1)


def test_early_moves_are_the_policys_own() -> None:
    agent = EndgameSearchAgent(seed=0, policy=str(SHIPPED), budget=SMALL_BUDGET)
    policy = agents.load(SHIPPED)
    for observation, action in play(agent, seed=5):
        if hand_size(observation) > agent.cards:
            assert action == policy.act(observation)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({}, ValueError, r"agent 'endgame' needs policy=<path of a Friday the 13th policy checkpoint>"),
        ({"policy": "no/such.npz"}, CheckpointError, "no policy checkpoint at 'no/such.npz'"),
        ({"policy": TINY, "cards": 0}, ValueError, "endgame option cards must be an int >= 1"),
        ({"policy": TINY, "cards": 2.5}, ValueError, "endgame option cards must be an int >= 1"),
        ({"policy": TINY, "budget": 0}, ValueError, "budget must be a positive int"),
        ({"policy": TINY, "objective": "fun"}, ValueError, r"unknown search objective 'fun'; allowed values"),
        ({"policy": TINY, "margin": 1.5}, ValueError, r"endgame option margin must be a number in \[0, 1\]"),
        ({"policy": TINY, "margin": -0.1}, ValueError, r"endgame option margin must be a number in \[0, 1\]"),
        ({"policy": TINY, "margin": "high"}, ValueError, r"endgame option margin must be a number in \[0, 1\]"),
        ({"policy": TINY, "first_margin": 2}, ValueError, r"endgame option first_margin must be a number in \[0, 1\]"),
        ({"policy": TINY, "depth": 2}, ValueError, r"agent 'endgame' has no option\(s\) \['depth'\]"),
    ],
)
def test_bad_options_raise_clearly(tmp_path: Path, options: dict, error: type, message: str) -> None:
    if options.get("policy") == TINY:
        options = {**options, "policy": str(tiny_policy(tmp_path / "tiny.npz"))}
    with pytest.raises(error, match=message):
        agents.make("endgame", **options)


def test_a_policy_of_the_solo_game_is_refused() -> None:
    solo = Path(__file__).resolve().parents[1] / "checkpoints" / "friday_level1.npz"
    with pytest.raises(CheckpointError, match="is a Friday-v0 policy, not a friday13_v0 one"):
        agents.make("endgame", policy=str(solo))


def test_options_are_listed_by_the_registry() -> None:
    assert agents.options_of("endgame") == ["budget", "cards", "first_margin", "margin", "objective", "policy"]
