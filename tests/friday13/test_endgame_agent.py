"""The ``endgame`` agent: a policy early in a round, ``search`` for its last cards, and clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from friday13_env import agents, raw_env
from friday13_env.core.checkpoint import CheckpointError, save_policy
from friday13_env.friday13.agents import EndgameSearchAgent
from friday13_env.friday13.agents.base import Observation, deck_of, legal_actions
from friday13_env.friday13.agents.endgame import DEFAULT_POLICY
from friday13_env.friday13.agents.policy import policy_metadata
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import observation_layout
from friday13_env.friday13.evaluation.duplicate import play_game

SMALL_BUDGET = 300
SHIPPED = agents.REGISTRY.zoo()["ensemble-v1"]
SHIPPED_POLICY = agents.load(SHIPPED)
TINY = "<a valid tiny policy>"


def tiny_policy(path: Path, deck: str = "standard") -> Path:
    """A random one-hidden-layer policy with valid metadata: the endgame agent needs no trained one here."""
    size, actions = observation_layout(get_deck(deck)).size, get_deck(deck).num_actions
    rng = np.random.default_rng(0)
    metadata = policy_metadata(deck, "relu", [8], "a random policy for tests")
    weights = [rng.normal(size=(size, 8)), rng.normal(size=(8, actions))]
    save_policy(path, weights, [np.zeros(8), np.zeros(actions)], np.ones(size), metadata)
    return path


class Recorder:
    """Stands in for the policy or the search: records that it was asked, plays the lowest legal action."""

    def __init__(self, calls: list[str], label: str) -> None:
        self.calls, self.label = calls, label

    def act(self, observation: Observation) -> int:
        self.calls.append(self.label)
        return int(legal_actions(observation)[0])

    def decide(self, vector: np.ndarray, legal: np.ndarray) -> int:
        """The policy's entry for an observation the ``endgame`` agent has already checked."""
        self.calls.append(self.label)
        return int(legal[0])

    def check_deck(self, deck: object) -> None:
        """The tiny policy plays the table's deck."""


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
    # margin=1 always searches: the default margins skip the search where the policy is sure (tested below).
    policy = str(tiny_policy(tmp_path / "tiny.npz"))
    agent = agents.make("endgame", seed=0, policy=policy, cards=cards, margin=1, first_margin=None)
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
    # first_margin=None gates the first searched move by margin too (the default is 0.2 instead).
    agent = agents.make("endgame", seed=0, policy=str(SHIPPED), margin=margin, first_margin=first_margin)
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
        (
            {"policy": "no/such.npz"},
            ValueError,
            r"endgame option policy: 'no/such.npz' is neither a zoo policy \['ensemble-v1'",
        ),
        ({"policy": "ensemble-v9"}, ValueError, "endgame option policy: 'ensemble-v9' is neither a zoo policy"),
        ({"policy": 5}, ValueError, "endgame option policy must be a zoo name or a checkpoint path, got 5"),
        ({"policy": ""}, ValueError, "endgame option policy must be a zoo name or a checkpoint path"),
        ({"policy": TINY, "cards": 0}, ValueError, "endgame option cards must be an int >= 1"),
        ({"policy": TINY, "cards": 2.5}, ValueError, "endgame option cards must be an int >= 1"),
        ({"policy": TINY, "budget": 0}, ValueError, "endgame option budget must be a positive int"),
        ({"policy": TINY, "budget": "600"}, ValueError, r"endgame option budget must be a positive int.*got '600'"),
        ({"policy": TINY, "objective": "fun"}, ValueError, r"endgame option objective must be one of \['rank', 'rel"),
        ({"policy": TINY, "cards": "3"}, ValueError, "endgame option cards must be an int >= 1"),
        ({"policy": TINY, "margin": 1.5}, ValueError, r"endgame option margin must be a number in \[0, 1\]"),
        ({"policy": TINY, "margin": -0.1}, ValueError, r"endgame option margin must be a number in \[0, 1\]"),
        ({"policy": TINY, "margin": "high"}, ValueError, r"endgame option margin must be a number in \[0, 1\]"),
        ({"policy": TINY, "first_margin": 2}, ValueError, r"endgame option first_margin must be a number in \[0, 1\]"),
        (
            {"policy": TINY, "first_margin": "x"},
            ValueError,
            r"endgame option first_margin must be a number in \[0, 1\]",
        ),
        ({"policy": TINY, "margin": float("nan")}, ValueError, r"endgame option margin must be a number in \[0, 1\]"),
        ({"policy": TINY, "depth": 2}, ValueError, r"agent 'endgame' has no option\(s\) \['depth'\]"),
    ],
)
def test_bad_options_raise_clearly(tmp_path: Path, options: dict, error: type, message: str) -> None:
    if options.get("policy") == TINY:
        options = {**options, "policy": str(tiny_policy(tmp_path / "tiny.npz"))}
    with pytest.raises(error, match=message):
        agents.make("endgame", **options)


def test_with_no_options_it_plays_the_zoo_policy_with_the_chosen_setting() -> None:
    agent = agents.make("endgame", seed=0)
    assert DEFAULT_POLICY == "ensemble-v1"
    assert agent.policy.name == "ensemble-v1"
    assert agent.policy.policy.fingerprint() == SHIPPED_POLICY.policy.fingerprint()
    assert (agent.search.budget, agent.margin, agent.first_margin, agent.cards) == (600, 0.5, 0.2, 3)
    assert agents.make("endgame:policy=ensemble-v1,budget=300").search.budget == 300


def test_a_policy_option_ending_in_npz_is_an_option_not_a_file_path(tmp_path: Path) -> None:
    path = tiny_policy(tmp_path / "x.npz")
    agent = agents.make(f"endgame:policy={path}", seed=0)
    assert agent.name == "endgame"
    assert agent.policy.name == str(path)


def test_a_malformed_observation_is_a_clear_value_error() -> None:
    agent = agents.make("endgame", seed=0, budget=SMALL_BUDGET)
    observation = play(agents.make("cautious"), seed=1)[0][0]
    nan = observation["observation"].copy()
    nan[0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        agent.act({**observation, "observation": nan})
    with pytest.raises(ValueError, match="matches no deck"):
        agent.act({**observation, "observation": observation["observation"][:-2]})


def test_a_policy_of_the_solo_game_is_refused() -> None:
    from friday13_env.friday.agents import REGISTRY as SOLO_REGISTRY

    solo = SOLO_REGISTRY.zoo()["dagger-v1"]
    with pytest.raises(CheckpointError, match=r"it is a '.*' policy; Friday the 13th plays 'friday13_v0' policies"):
        agents.make("endgame", policy=str(solo))
    with pytest.raises(ValueError, match="endgame option policy: 'dagger-v1' is neither a zoo policy"):
        agents.make("endgame", policy="dagger-v1")  # the solo game's zoo is not this game's


def test_options_are_listed_by_the_registry() -> None:
    assert agents.options_of("endgame") == ["budget", "cards", "first_margin", "margin", "objective", "policy"]
