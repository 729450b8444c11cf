"""Shared helpers of the rules and environment tests.

Scenario tests describe positions by card names (``"cat 7"``, ``"f13"``) rather than raw kind
indices, so that a reader can check them against the rulebook; these helpers translate, using the
deck's own naming so that nothing about the kind numbering is re-derived here.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from friday13_env.friday13.aec import raw_env
from friday13_env.friday13.cards import Deck


def kind(deck: Deck, name: str) -> int:
    """The card kind called ``name`` (as ``Deck.kind_name`` spells it, e.g. ``"mirror 4"``)."""
    for candidate in range(deck.num_kinds):
        if deck.kind_name(candidate) == name:
            return candidate
    raise ValueError(f"no card kind named {name!r} in the {deck.name} deck")


def action(deck: Deck, name: str) -> int:
    """The action called ``name`` (as ``Deck.action_name`` spells it, e.g. ``"f13 ladder"``)."""
    for candidate in range(deck.num_actions):
        if deck.action_name(candidate) == name:
            return candidate
    raise ValueError(f"no action named {name!r} in the {deck.name} deck")


def counts(deck: Deck, *names: str) -> list[int]:
    """A count list per card kind holding one card per name (repeat a name for copies)."""
    result = [0] * deck.num_kinds
    for name in names:
        result[kind(deck, name)] += 1
    return result


def pile(deck: Deck, *names: str) -> list[int]:
    """A pile as card kinds in play order."""
    return [kind(deck, name) for name in names]


def choose(mask: np.ndarray | list[int], rng: np.random.Generator) -> int:
    """A uniformly random legal action of a 0/1 mask."""
    legal = np.flatnonzero(np.asarray(mask))
    return int(legal[rng.integers(legal.size)])


def play_through(env: raw_env, rng: np.random.Generator) -> Iterator[tuple[str, int]]:
    """Step a reset AEC environment to the end with random legal moves, yielding (agent, action).

    Each pair is yielded *before* its step, so a test can look at the position first; finished
    agents are stepped with ``None`` as PettingZoo requires, without being yielded.
    """
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        chosen = choose(observation["action_mask"], rng)
        yield agent, chosen
        env.step(chosen)
