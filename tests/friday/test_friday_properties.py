"""Property tests over random games: card accounting, life bounds, exact masks, copy independence."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from friday13_env.friday.actions import MAX_SLOTS, NUM_ACTIONS
from friday13_env.friday.agents import HeuristicAgent, RandomAgent
from friday13_env.friday.cards import MAX_LIFE, NUM_CARDS
from friday13_env.friday.encoding import encode
from friday13_env.friday.engine import action_mask, apply_action, legal_actions, new_game
from friday13_env.friday.levels import LEVELS
from friday13_env.friday.state import Phase, State


def check_invariants(state: State) -> None:
    """What must hold in every reachable state."""
    cards = sorted(c for zone in state.all_zones().values() for c in zone)
    assert cards == list(range(NUM_CARDS)), "every fighting card in exactly one zone"
    config = LEVELS[state.level]
    assert 0 <= state.life <= MAX_LIFE and state.life + state.reserve == config.life + config.reserve
    assert state.hidden <= set(state.robinson)
    assert state.known_top <= len(state.robinson) and state.known_bottom <= len(state.robinson)
    assert (state.fight is None) == (
        state.phase in (Phase.CHOOSE_HAZARD, Phase.LAST_HAZARD, Phase.CHOOSE_PIRATE)
    ) or state.done
    if state.fight is not None:
        assert len(state.fight.table) <= MAX_SLOTS
    assert (state.pending is not None) == (
        state.phase in (Phase.TARGET, Phase.EXTRA_DRAW, Phase.SORT_LOOK, Phase.SORT_ORDER)
    )
    obs = encode(state)
    assert obs.dtype == np.float32 and obs.min() >= -1.0 and obs.max() <= 1.0
    assert state.done == (not legal_actions(state))


def check_mask_is_exact(state: State) -> None:
    """Every masked-in action applies to a copy (leaving the original alone), every other one raises."""
    mask = action_mask(state)
    before = encode(state)
    for action in range(NUM_ACTIONS):
        trial = state.copy()
        if mask[action]:
            apply_action(trial, action, np.random.default_rng(action))
            check_invariants(trial)
        else:
            try:
                apply_action(trial, action, np.random.default_rng(action))
            except ValueError:
                continue
            raise AssertionError(f"masked-out action {action} was accepted in {state.phase.name}")
    assert np.array_equal(before, encode(state)), "copies must not share mutable parts with the original"


@settings(max_examples=24, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), level=st.integers(1, 4), heuristic=st.booleans())
def test_random_games_keep_every_invariant(seed: int, level: int, heuristic: bool) -> None:
    rng = np.random.default_rng(seed)
    agent = HeuristicAgent(seed, samples=4) if heuristic else RandomAgent(seed)
    state = new_game(level, rng)
    step = 0
    while not state.done:
        check_invariants(state)
        if step % 4 == 0:
            check_mask_is_exact(state)
        apply_action(state, agent.act({"observation": encode(state), "action_mask": action_mask(state)}), rng)
        step += 1
    check_invariants(state)
    assert state.won is not None
