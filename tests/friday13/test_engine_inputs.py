"""Bad input to the batched engine's entry points (issue 43): game indices, uniforms, seeds and rounds.

Every method of ``GameBatch`` that takes ``games`` (and the batched encoders and agents' table reader,
which take them too) goes through one index check; every batched entry point that takes a seed goes
through one seed check; every way to start a game goes through ``Rules``' bound on ``num_rounds``. Each
refusal is a ``ValueError`` naming the allowed values, raised before anything changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import friday13_env  # noqa: F401  (registers the Gymnasium ids)
from friday13_env import raw_env
from friday13_env.friday13.batched.agents import TableBatch
from friday13_env.friday13.batched.encoding import encode_observations, encode_states
from friday13_env.friday13.batched.engine import GameBatch, IllegalActionError
from friday13_env.friday13.batched.selfplay import SelfPlayTables
from friday13_env.friday13.batched.vector_env import Friday13VectorEnv
from friday13_env.friday13.engine import MAX_ROUNDS, Rules, new_game
from friday13_env.friday13.evaluation.specs import Matchup
from friday13_env.friday13.evaluation.tournament import check_config
from tests.friday13.test_batched_engine import assert_fresh_deal, assert_unchanged, snapshot

NUM_GAMES = 4
GameCall = Callable[[GameBatch, Any], object]
"""A call that takes game indices: a batch method, or a batched encoder or reader."""

GAME_CALLS: dict[str, GameCall] = {
    "step": lambda batch, games: batch.step(np.zeros(np.shape(games), dtype=np.int64), games),
    "reset_games": lambda batch, games: batch.reset_games(games),
    "load_states": lambda batch, games: batch.load_states(
        [new_game(Rules(), np.random.default_rng(0)) for _ in np.atleast_1d(games)], games
    ),
    "current_hands": lambda batch, games: batch.current_hands(games),
    "legal_mask": lambda batch, games: batch.legal_mask(games),
    "random_actions": lambda batch, games: batch.random_actions(np.random.default_rng(0), games),
    "nth_legal_actions": lambda batch, games: batch.nth_legal_actions(np.full(np.shape(games), 0.5), games),
    "encode_observations": lambda batch, games: encode_observations(batch, games),
    "encode_states": lambda batch, games: encode_states(batch, games),
    "TableBatch.from_batch": lambda batch, games: TableBatch.from_batch(batch, games),
}
BAD_GAMES: dict[str, tuple[object, str]] = {
    "negative": (np.array([-1]), r"game indices must be in 0\.\.3, got -1"),
    "one_past_the_end": (np.array([1, NUM_GAMES]), r"game indices must be in 0\.\.3, got 4"),
    "far_out": (np.array([99]), r"game indices must be in 0\.\.3, got 99"),
    "float": (np.array([0.7]), r"games must be a 1-d array of game indices \(integers in 0\.\.3\), got float64"),
    "bool": (np.array([True, False]), r"games must be a 1-d array of game indices \(integers in 0\.\.3\), got bool"),
    "two_dimensional": (np.array([[0]]), r"games must be a 1-d array .*got int64 \(1, 1\)"),
    "scalar": (np.int64(0), r"games must be a 1-d array .*got int64 \(\)"),
}


@pytest.mark.parametrize("bad", sorted(BAD_GAMES))
@pytest.mark.parametrize("call", sorted(GAME_CALLS))
def test_every_call_taking_games_refuses_bad_indices_before_anything_changes(call: str, bad: str) -> None:
    """Negative, out-of-range, float, bool, 2-d and 0-d game indices are the same ``ValueError`` everywhere
    (not game ``-1`` counted from the end, not game 0 for ``0.7``, not numpy's bare ``IndexError``)."""
    batch = GameBatch(NUM_GAMES, 4, seed=1, autoreset=False)
    games, pattern = BAD_GAMES[bad]
    before = snapshot(batch)
    with pytest.raises(ValueError, match=pattern):
        GAME_CALLS[call](batch, games)
    assert_unchanged(batch, before)


@pytest.mark.parametrize("call", ["step", "reset_games", "load_states"])
def test_calls_that_change_games_refuse_a_repeated_game(call: str) -> None:
    batch = GameBatch(NUM_GAMES, 4, seed=2, autoreset=False)
    before = snapshot(batch)
    with pytest.raises(ValueError, match="games must not repeat a game"):
        GAME_CALLS[call](batch, np.array([2, 0, 2]))
    assert_unchanged(batch, before)


def test_reset_games_resets_exactly_the_games_named() -> None:
    """``reset_games`` with good indices (an array, a list, none at all) deals those games and no other."""
    batch = GameBatch(NUM_GAMES, 4, seed=3, autoreset=False)
    rng = np.random.default_rng(4)
    for _ in range(5):
        batch.step(batch.random_actions(rng))
    kept = {name: value[[0, 2]] for name, value in snapshot(batch).items() if isinstance(value, np.ndarray)}
    batch.reset_games([3, 1])
    assert_fresh_deal(batch, 1)
    assert_fresh_deal(batch, 3)
    for name, value in kept.items():
        np.testing.assert_array_equal(getattr(batch, name)[[0, 2]], value, err_msg=name)
    before = snapshot(batch)
    batch.reset_games(np.array([], dtype=np.int64))
    batch.reset_games([])
    assert_unchanged(batch, before)


def test_reading_calls_accept_a_repeated_game() -> None:
    """Reading the same game twice is fine (a uniform draw for one position, many times over)."""
    batch = GameBatch(NUM_GAMES, 4, seed=5, autoreset=False)
    games = np.array([1, 1, 0])
    masks = batch.legal_mask(games)
    np.testing.assert_array_equal(masks, batch.legal_mask()[[1, 1, 0]])
    assert encode_observations(batch, games).shape[0] == 3


def test_observers_must_be_integer_seats() -> None:
    """A float observer used to be cast to a seat (0.5 read seat 0's hand)."""
    batch = GameBatch(NUM_GAMES, 4, seed=5, autoreset=False)
    pattern = r"one observer \(an integer seat\) per game, shape \(1,\), got float64 \(1,\)"
    with pytest.raises(ValueError, match=pattern):
        encode_observations(batch, np.array([0]), np.array([0.5]))
    np.testing.assert_array_equal(
        encode_observations(batch, np.array([0]), np.array([2], dtype=np.int32)),
        encode_observations(batch, np.array([0]), np.array([2])),
    )


@pytest.mark.parametrize(
    ("uniforms", "pattern"),
    [
        (np.array([np.nan, 0.5, 0.5, 0.5]), r"uniforms must lie in \[0, 1\), got nan"),
        (np.array([0.5, np.inf, 0.5, 0.5]), r"uniforms must lie in \[0, 1\), got inf"),
        (np.array([0.5, 0.5, -0.0001, 0.5]), r"uniforms must lie in \[0, 1\), got -0\.0001"),
        (np.array([0.5, 0.5, 0.5, 1.0]), r"uniforms must lie in \[0, 1\), got 1\.0"),
        (np.array([0.5, 0.5, 0.5]), r"uniforms must be a float array of shape \(4,\) .*got float64 \(3,\)"),
        (np.full((4, 1), 0.5), r"uniforms must be a float array of shape \(4,\) .*got float64 \(4, 1\)"),
        (np.float64(0.5), r"uniforms must be a float array of shape \(4,\) .*got float64 \(\)"),
        (np.array(["0.5"] * 4), r"uniforms must be a float array of shape \(4,\) .*got <U3 \(4,\)"),
        (np.zeros(4, dtype=np.int64), r"uniforms must be a float array of shape \(4,\) .*got int64 \(4,\)"),
    ],
)
def test_nth_legal_actions_refuses_bad_uniforms(uniforms: np.ndarray, pattern: str) -> None:
    """NaN (which passed the old range check and drew action 0, held or not), infinities, values outside
    [0, 1), the wrong shape and non-float dtypes are ``ValueError``s naming what is allowed."""
    batch = GameBatch(NUM_GAMES, 4, seed=6, autoreset=False)
    before = snapshot(batch)
    with pytest.raises(ValueError, match=pattern):
        batch.nth_legal_actions(uniforms)
    assert_unchanged(batch, before)


# -- seeds ------------------------------------------------------------------------------------------
BAD_SEEDS = [-1, 1.5, True, "1", [1, 2], np.float64(3.0)]
SEED_ERROR = "seed must be None or a non-negative int, got "
SEEDED: dict[str, Callable[[object], object]] = {
    "GameBatch": lambda seed: GameBatch(2, seed=seed),  # type: ignore[arg-type]
    "SelfPlayTables": lambda seed: SelfPlayTables(2, seed=seed),  # type: ignore[arg-type]
    "SelfPlayTables.reset": lambda seed: SelfPlayTables(2, seed=0).reset(seed=seed),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
@pytest.mark.parametrize("entry", sorted(SEEDED))
def test_batched_seeds_are_none_or_a_non_negative_int(entry: str, seed: object) -> None:
    """Not numpy's ``expected non-negative integer`` or ``SeedSequence expects int`` (nor a bool or a list
    taken as a seed): one message naming the allowed values."""
    with pytest.raises(ValueError, match=SEED_ERROR):
        SEEDED[entry](seed)


def test_a_refused_reseed_leaves_the_tables_as_they_were() -> None:
    tables = SelfPlayTables(2, seed=7)
    batch = tables.batch
    before = snapshot(batch)
    with pytest.raises(ValueError, match=SEED_ERROR):
        tables.reset(seed=-3)
    assert tables.batch is batch
    assert_unchanged(batch, before)


@pytest.mark.parametrize("seed", [0, np.int64(12), 2**70])
def test_good_seeds_are_accepted_and_reproducible(seed: int) -> None:
    first, second = GameBatch(3, seed=seed), GameBatch(3, seed=seed)
    np.testing.assert_array_equal(first.hands, second.hands)


# -- rounds -----------------------------------------------------------------------------------------
ROUNDS_ERROR = rf"num_rounds must be a positive int in 1\.\.{MAX_ROUNDS}, got "
STARTS: dict[str, Callable[[int], object]] = {
    "Rules": lambda rounds: Rules(num_rounds=rounds),
    "raw_env": lambda rounds: raw_env(num_rounds=rounds),
    "Friday13-v0": lambda rounds: gym.make("friday13_env/Friday13-v0", num_rounds=rounds),
    "GameBatch": lambda rounds: GameBatch(2, num_rounds=rounds),
    "SelfPlayTables": lambda rounds: SelfPlayTables(2, num_rounds=rounds),
    "Friday13VectorEnv": lambda rounds: Friday13VectorEnv(2, num_rounds=rounds),
    "check_config": lambda rounds: check_config([Matchup.versus("random", "random")], 10, [4], num_rounds=rounds),
}


@pytest.mark.parametrize("rounds", [0, MAX_ROUNDS + 1, 10**9])
@pytest.mark.parametrize("start", sorted(STARTS))
def test_num_rounds_is_bounded_everywhere_a_game_starts(start: str, rounds: int) -> None:
    """``num_rounds=10**9`` used to be accepted (a game no one could finish); every entry point goes through
    ``Rules``, whose error names the allowed range."""
    with pytest.raises(ValueError, match=ROUNDS_ERROR + str(rounds)):
        STARTS[start](rounds)


def test_the_largest_num_rounds_is_accepted_and_defaults_stay_under_it() -> None:
    assert Rules(num_rounds=MAX_ROUNDS).num_rounds == MAX_ROUNDS
    assert GameBatch(1, num_rounds=MAX_ROUNDS).num_rounds == MAX_ROUNDS
    assert Rules().num_rounds == 4 <= MAX_ROUNDS


def test_refusals_count_in_the_singular_and_the_plural() -> None:
    batch = GameBatch(2, num_players=4, seed=3, autoreset=False)
    held = batch.legal_mask(np.array([0]))[0]
    missing = int(np.flatnonzero(held == 0)[0])
    legal = int(np.flatnonzero(held)[0])
    with pytest.raises(IllegalActionError, match=r"\(1 illegal action in all, nothing played\)"):
        batch.step(np.array([missing, int(np.flatnonzero(batch.legal_mask(np.array([1]))[0])[0])]))
    while not batch.game_over[0]:
        batch.step(np.array([int(np.flatnonzero(batch.legal_mask(np.array([0]))[0])[0])]), np.array([0]))
    with pytest.raises(IllegalActionError, match=r"game 0 is over \(1 of the 1 stepped games is\)"):
        batch.step(np.array([legal]), np.array([0]))
