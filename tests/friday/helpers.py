"""Cards and moves shared by the hand-built Friday scenario tests (rules, abilities, pirates).

Cards are named as the scenarios use them; a hazard/knowledge card is named after the side that matters
in the tests, with the other side in a comment.
"""

from __future__ import annotations

import numpy as np

from friday13_env.core.agent import Agent
from friday13_env.friday.engine import apply_action
from friday13_env.friday.env import FridayEnv, observation_dict
from friday13_env.friday.scenario import find_card, find_cards
from friday13_env.friday.state import State

# Starting and aging cards with several copies: lists of card ids.
WEAK, FOCUSED, DISTRACTED = find_cards("weak"), find_cards("focused"), find_cards("distracted")
STUPID = find_cards("stupid")
# Single cards: starting (genius +2, eating +2 life), aging (hungry -1 life), knowledge (books: step -1).
GENIUS, EATING, HUNGRY, BOOKS = (find_card(name) for name in ("genius", "eating", "hungry", "books"))
# Hazard sides.
WILD = find_card("vision", 3)  # wild animals: free 4, values 4/7/11
CANNIBALS = find_card("weapon", 4)  # cannibals: free 5, values 5/9/14


def play(state: State, *moves: int) -> State:
    """Apply a sequence of actions (each must be legal) with a fixed-seed generator."""
    rng = np.random.default_rng(0)
    for move in moves:
        apply_action(state, move, rng)
    return state


def assert_plays_only_legal_moves(agent: Agent, level: int, seed: int) -> dict:
    """Play one whole game of ``agent`` at ``level``, checking every chosen action against the mask;
    returns the last ``info``."""
    env = FridayEnv(level=level, illegal_action="raise")
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        action = agent.act(observation_dict(obs, info))
        assert type(action) is int and info["action_mask"][action] == 1
        obs, _, done, _, info = env.step(action)
    assert not info["illegal_action"] and isinstance(info["won"], bool)
    return info
