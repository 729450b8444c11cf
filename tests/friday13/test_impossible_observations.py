"""An observation no game can show is refused by every agent that reads the table (``Table.decode``), with a
``ValueError`` naming the agent and what is impossible, before it decides: ``netsearch`` used to play such a position
out and fail deep in its rollout, naming the batched engine's internals, and the heuristics played on it silently."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from friday13_env import agents, raw_env
from friday13_env.friday13.agents.table import Table
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import encode_observation, observation_layout
from friday13_env.friday13.engine import Rules, legal_actions, new_game, play

DECK = get_deck("standard")
SLICES = observation_layout(DECK).slices
AGENTS = ["cautious", "majority", "search:budget=4", "netsearch:worlds=2"]


def position() -> tuple[np.ndarray, list[int]]:
    """A 4-player position after a few plays of a seeded game: its observation and legal actions."""
    rng = np.random.default_rng(5)
    state = new_game(Rules(num_players=4, deck=DECK, num_rounds=4), rng)
    for _ in range(6):
        play(state, int(rng.choice(legal_actions(state))))
    return encode_observation(state, state.current).copy(), legal_actions(state)


def at(block: str, index: int = 0) -> int:
    return SLICES[block].start + index


def first_unheld_action(vector: np.ndarray) -> int:
    hand = vector[SLICES["hand"]]
    return next(action for action in range(DECK.friday_kind) if hand[action] == 0)


def more_unseen(vector: np.ndarray, mask: np.ndarray) -> None:
    vector[at("unseen")] += 5
    vector[at("hand_sizes", 1)] += 5


def pile_total(vector: np.ndarray, mask: np.ndarray) -> None:
    vector[at("pile_totals")] = 12 if vector[at("pile_totals")] != 12 else 11


def pile_over_the_limit(vector: np.ndarray, mask: np.ndarray) -> None:
    vector[at("pile_totals")] = 50


def unseen_short_of_the_hands(vector: np.ndarray, mask: np.ndarray) -> None:
    vector[at("hand_sizes", 2)] += 1


def no_round_left(vector: np.ndarray, mask: np.ndarray) -> None:
    vector[at("round", 1)] = 0


def too_many_rounds(vector: np.ndarray, mask: np.ndarray) -> None:
    vector[at("round", 1)] = 500


def unheld_legal(vector: np.ndarray, mask: np.ndarray) -> None:
    mask[first_unheld_action(vector)] = 1


IMPOSSIBLE: list[tuple[Callable[[np.ndarray, np.ndarray], None], str]] = [
    (more_unseen, r"\d+ cards of cat \d+ in the hand, the unseen cards and the piles; the standard deck has \d+"),
    (pile_total, r"pile 0 totals 1[12], its cards \d+"),
    (pile_over_the_limit, r"pile 0 totals 50, its cards \d+ \(a pile holds at most 13\)"),
    (unseen_short_of_the_hands, r"\d+ unseen cards, fewer than the other hands hold \(\d+\)"),
    (no_round_left, r"round 0 with 0 rounds left; a game has 1 to 100 rounds"),
    (too_many_rounds, r"round 0 with 500 rounds left; a game has 1 to 100 rounds"),
    (unheld_legal, r"the legal actions \['\w+ \d+'\] play cards the hand does not hold"),
]


@pytest.mark.parametrize("spec", AGENTS)
@pytest.mark.parametrize(("mutate", "problem"), IMPOSSIBLE, ids=[mutate.__name__ for mutate, _ in IMPOSSIBLE])
def test_an_impossible_observation_is_refused_naming_the_agent_and_the_problem(
    spec: str, mutate: Callable[[np.ndarray, np.ndarray], None], problem: str
) -> None:
    vector, legal = position()
    mask = np.zeros(DECK.num_actions, dtype=np.int8)
    mask[legal] = 1
    agent = agents.make(spec, seed=0)
    assert agent.act({"observation": vector.copy(), "action_mask": mask.copy()}) in legal  # the real one is played
    mutate(vector, mask)
    with pytest.raises(ValueError, match=rf"^{agent.name}: no table shows this observation: {problem}"):
        agent.act({"observation": vector, "action_mask": mask})


@pytest.mark.parametrize(("deck", "num_players"), [("standard", 3), ("standard", 5), ("german", 4), ("german", 6)])
def test_every_observation_of_whole_games_is_possible(deck: str, num_players: int) -> None:
    """Every observation a game shows decodes: the checks refuse nothing the rules produce (3 players: a dummy hand)."""
    decoded = 0
    for seed in range(3):
        env = raw_env(num_players=num_players, deck=deck, num_rounds=3)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for name in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            Table.read(observation, name)
            decoded += 1
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert decoded >= 300  # about 40 plays a round
