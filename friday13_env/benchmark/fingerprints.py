"""What a suite pins so that its numbers cannot drift: the deals it generates and how its anchors play.

``deals_digest(suite, split)`` hashes every deal of a split as the environments will deal it (the card game:
each round's hands, which depend on the deal seed alone; the solo game: the shuffled decks at the start of
each game). ``behaviour_fingerprint(agent, game, deck)`` hashes an agent's answers to ``PROBE_POSITIONS``
fixed positions taken from seeded random games, with the agent seeded 0: a change to an anchor's play (a new
search budget, a retrained network, a fixed bug) changes it. A file's SHA-256 says *which* checkpoint was
played; the fingerprint says how it plays, for any agent, scripted or user-defined. It is also the run's check of
the agent's answers: each must be an integer (a Python or numpy int or a 0-d integer array, not a bool, a float or
a text) that the position's ``action_mask`` allows, or the run stops before its first game with a ``ValueError``
naming the agent, the action and the legal ones.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator

import numpy as np

from friday13_env.benchmark.suite import Suite
from friday13_env.core.agent import Agent, Observation, checked_act
from friday13_env.core.checks import as_action
from friday13_env.core.specs import shown

PROBE_POSITIONS = 120
"""Positions per fingerprint: 30 at each card-game table size 3-6, or 30 at each solo level 1-4."""
_PROBE_SEED = 20261127


def deals_digest(suite: Suite, split: str) -> str:
    """SHA-256 of every deal of ``split``, cell by cell, as the environments deal them."""
    digest = hashlib.sha256(f"{suite.game}:{suite.num_rounds}".encode())
    for cell_index in range(len(suite.cells)):
        for deal in range(suite.split(split).deals):
            digest.update(_deal_bytes(suite, split, cell_index, deal))
    return digest.hexdigest()


def _deal_bytes(suite: Suite, split: str, cell_index: int, deal: int) -> bytes:
    from friday13_env.benchmark.play import solo_game_seed

    cell = suite.cells[cell_index]
    seed = suite.split(split).seed
    if suite.game == "friday":
        from friday13_env.friday import engine

        state = engine.new_game(cell.level, np.random.default_rng(solo_game_seed(seed, cell.level, deal)))
        decks = (state.robinson, state.aging, state.hazard_stack, state.hazard_options, state.pirates)
        return repr((state.level, state.life, decks)).encode()
    from friday13_env.friday13.cards import get_deck
    from friday13_env.friday13.engine import Rules
    from friday13_env.friday13.engine import deal as deal_hands
    from friday13_env.friday13.evaluation.duplicate import deal_seed

    rules = Rules(num_players=cell.players, deck=get_deck(cell.deck), num_rounds=suite.num_rounds)
    rng = np.random.default_rng(deal_seed(seed, cell.players, deal))
    return repr([deal_hands(rules, round_index, rng) for round_index in range(suite.num_rounds)]).encode()


def behaviour_fingerprint(agent: Agent, game: str, deck: str = "standard") -> str:
    """The first 16 hex digits of the SHA-256 of ``agent``'s actions on the probe positions of ``game``; an action
    that is not a legal int is a ``ValueError`` (``legal_action``)."""
    actions = [legal_action(agent, observation) for observation in probe_positions(game, deck)]
    return hashlib.sha256(np.asarray(actions, dtype=np.int64).tobytes()).hexdigest()[:16]


def legal_action(agent: Agent, observation: Observation) -> int:
    """``agent``'s action at ``observation`` as an int, if it is one the environments take (``checks.as_action``: a
    Python or numpy integer or a 0-d integer array; not a bool, a float, even a whole one, or a text: nothing is
    converted, so ``0.7`` is not read as 0) and ``action_mask`` allows it; else a ``ValueError`` naming the agent,
    the action and the legal actions, before the run plays a game with it (an ``AgentRaisedError`` for an ``act``
    that raised). The agent is shown a copy of the position: one that writes to its arrays is judged on the mask
    it was shown, and changes neither the probe positions that follow nor the fingerprint."""
    mask = np.array(observation["action_mask"], copy=True)
    legal = np.flatnonzero(mask).tolist()
    shown_copy = {key: np.array(value, copy=True) for key, value in observation.items()}
    action = checked_act(agent, shown_copy, f"at a fingerprint position (legal actions {legal})")
    where = f"at a fingerprint position whose legal actions are {legal}: act(observation) must return one of them"
    name = shown(getattr(agent, "name", type(agent).__name__))
    try:
        value = as_action(action, len(mask), "not an integer")
    except ValueError:
        kind = f"a {type(action).__name__}, not an int"
        raise ValueError(f"agent {name} chose action {shown(action)} ({kind}) {where}") from None
    if not 0 <= value < len(mask) or not mask[value]:
        raise ValueError(f"agent {name} chose action {value} (an integer it does not allow) {where}")
    return value


def probe_positions(game: str, deck: str = "standard") -> Iterator[Observation]:
    """``PROBE_POSITIONS`` observations from seeded uniformly random play, always the same ones."""
    rng = np.random.default_rng(_PROBE_SEED)
    per_part = PROBE_POSITIONS // 4
    for part in range(4):
        yield from itertools.islice(_random_play(game, deck, part, rng), per_part)


def _random_play(game: str, deck: str, part: int, rng: np.random.Generator) -> Iterator[Observation]:
    """Observations of random games at table size ``3 + part`` (solo: level ``1 + part``), one after another."""
    if game == "friday":
        from friday13_env.friday.env import FridayEnv, observation_dict

        solo = FridayEnv(level=1 + part)
        observation, info = solo.reset(seed=_PROBE_SEED + part)
        while True:
            position = observation_dict(observation, info)
            yield position
            observation, _, done, truncated, info = solo.step(int(rng.choice(np.flatnonzero(position["action_mask"]))))
            if done or truncated:
                observation, info = solo.reset()
    from friday13_env.friday13.aec import raw_env

    env = raw_env(num_players=3 + part, deck=deck)
    env.reset(seed=_PROBE_SEED + part)
    while True:
        assert env.game is not None
        if env.game.game_over:
            env.reset()
            continue
        position = env.observe(env.agent_selection)
        yield position
        env.step(int(rng.choice(np.flatnonzero(position["action_mask"]))))
