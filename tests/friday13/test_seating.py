"""``seat_learners``: the one seating draw of the vector environment, ``train_ppo.py``'s tables and the RLlib
adapter makes exactly the Generator calls each of them made before it was shared, so a seed seats the same players
(and training runs reproduce). The references below are those three former draws, verbatim but for names."""

from __future__ import annotations

import numpy as np
import pytest

from friday13_env.friday13.batched.engine import MAX_SEATS
from friday13_env.friday13.batched.seating import seat_learners

SEEDS = range(12)


def games_and_sizes(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Some new games (a sorted subset of 40 tables) and their sizes in 3..6."""
    rng = np.random.default_rng(1000 + seed)
    games = np.flatnonzero(rng.random(40) < 0.6)
    return games, rng.integers(3, 7, size=games.size)


def same_state(first: np.random.Generator, second: np.random.Generator) -> bool:
    """The two Generators would draw the same from now on."""
    return bool(first.bit_generator.state == second.bit_generator.state)


@pytest.mark.parametrize("high", range(2, 9))
@pytest.mark.parametrize("seed", SEEDS)
def test_integers_from_one_are_integers_from_zero_plus_one(high: int, seed: int) -> None:
    """numpy's ``integers(1, k)`` draws what ``integers(k - 1) + 1`` draws and leaves the Generator in the same
    state: the RLlib adapter's former ``integers(1, num_modules)`` is ``seat_learners``' pool index plus one."""
    first, second = np.random.default_rng(seed), np.random.default_rng(seed)
    drawn = first.integers(1, high, size=(17, MAX_SEATS))
    assert np.array_equal(drawn, second.integers(high - 1, size=(17, MAX_SEATS)) + 1)
    assert same_state(first, second)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("seat", [None, 2])
@pytest.mark.parametrize("pool_size", [None, 1, 3])
def test_the_vector_environments_draw(seed: int, seat: int | None, pool_size: int | None) -> None:
    games, n = games_and_sizes(seed)
    reference, shared = np.random.default_rng(seed), np.random.default_rng(seed)
    seats = reference.integers(n) if seat is None else np.full(games.size, seat)
    drawn = None if pool_size is None else reference.integers(pool_size, size=(games.size, MAX_SEATS))
    seating = seat_learners(shared, games, n, pool_size=pool_size, seat=seat)
    assert np.array_equal(seating.games, games) and np.array_equal(seating.learner_seats, seats)
    assert (seating.opponents is None) == (drawn is None)
    assert drawn is None or np.array_equal(seating.opponents, drawn)
    assert same_state(reference, shared)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("pool_size", [0, 1, 4])
@pytest.mark.parametrize("per_seat", [True, False])
def test_train_ppos_draw(seed: int, share: float, pool_size: int, per_seat: bool) -> None:
    games, sizes = games_and_sizes(seed)
    num_players = np.zeros(40, dtype=np.int64)
    num_players[games] = sizes
    reference, shared = np.random.default_rng(seed), np.random.default_rng(seed)
    learner = np.ones((40, MAX_SEATS), dtype=bool)
    opponent = np.zeros((40, MAX_SEATS), dtype=np.int64)
    pooled = games[reference.random(games.size) < share]
    if pooled.size and pool_size:
        n = num_players[pooled]
        learner[pooled] = np.arange(MAX_SEATS)[None, :] == reference.integers(n)[:, None]
        drawn = reference.integers(pool_size, size=(pooled.size, MAX_SEATS if per_seat else 1))
        opponent[pooled] = np.broadcast_to(drawn, (pooled.size, MAX_SEATS))

    seating = seat_learners(shared, games, num_players[games], pool_size=pool_size, share=share, per_seat=per_seat)
    seated_learner = np.ones((40, MAX_SEATS), dtype=bool)
    seated_opponent = np.zeros((40, MAX_SEATS), dtype=np.int64)
    seated_learner[seating.games] = seating.learner_mask
    assert seating.opponents is not None
    seated_opponent[seating.games] = seating.opponents
    assert np.array_equal(seated_learner, learner) and np.array_equal(seated_opponent, opponent)
    assert same_state(reference, shared)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("share", [0.0, 0.7, 1.0])
@pytest.mark.parametrize("num_modules", [1, 2, 3])
def test_the_rllib_adapters_draw(seed: int, share: float, num_modules: int) -> None:
    games, sizes = games_and_sizes(seed)
    share = share if num_modules > 1 else 0.0  # the adapter's share without opponent modules
    reference, shared = np.random.default_rng(seed), np.random.default_rng(seed)
    roles = np.zeros((40, MAX_SEATS), dtype=np.int64)
    pooled_rows = reference.random(games.size) < share
    pooled = games[pooled_rows]
    if pooled.size:
        learner_seat = reference.integers(sizes[pooled_rows])
        drawn = reference.integers(1, num_modules, size=(pooled.size, MAX_SEATS))
        roles[pooled] = np.where(np.arange(MAX_SEATS) == learner_seat[:, None], 0, drawn)

    seated = np.zeros((40, MAX_SEATS), dtype=np.int64)
    seating = seat_learners(shared, games, sizes, pool_size=num_modules - 1, share=share)
    assert seating.opponents is not None
    seated[seating.games] = np.where(seating.learner_mask, 0, seating.opponents + 1)
    assert np.array_equal(seated, roles)
    assert same_state(reference, shared)
