"""``SelfPlayTables``: the caller plays every seat of N batched tables.

The reference is the scalar AEC environment (``aec.raw_env``) dealt the *same cards*: every deal a
``GameBatch`` makes is recorded (a spy on ``GameBatch._deal``) and ``engine.deal`` is replaced so
that the scalar game of table ``t`` is dealt table ``t``'s cards. Scalar agents choose every move at
both; the batched tables must then show the scalar observation of the player to move, its mask and
seat, and give every seat the scalar rewards, round and game ends and final scores.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np
import pytest

from friday13_env.friday13 import agents, engine
from friday13_env.friday13.aec import raw_env
from friday13_env.friday13.agents import Agent, RandomAgent
from friday13_env.friday13.batched import selfplay
from friday13_env.friday13.batched.engine import MAX_SEATS
from friday13_env.friday13.batched.selfplay import SelfPlayTables, Turn
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import observation_layout, state_layout
from friday13_env.friday13.engine import IllegalActionError
from tests.friday13.batch_deals import DealLog, ScalarDeals, assert_same_arrays, batch_snapshot

SEAT_AGENTS = ("cautious", "majority", "random")


@pytest.fixture
def scalar_deals(deal_log: DealLog, monkeypatch: pytest.MonkeyPatch) -> ScalarDeals:
    """``engine.deal``, dealing the scalar games the batch's recorded deals."""
    deals = ScalarDeals(deal_log)
    monkeypatch.setattr(engine, "deal", deals)
    return deals


def assert_same_turns(first: Turn, second: Turn) -> None:
    for field in dataclasses.fields(Turn):
        np.testing.assert_array_equal(getattr(first, field.name), getattr(second, field.name), err_msg=field.name)


def padded(values: list[float] | list[int]) -> list[float]:
    return [*map(float, values), *[0.0] * (MAX_SEATS - len(values))]


# -- replay ------------------------------------------------------------------------------------------
class ScalarTable:
    """One table's current game on the scalar AEC environment, with a scalar agent in every seat."""

    def __init__(self, deals: ScalarDeals, table: int, n: int, options: dict[str, Any], seed: int) -> None:
        self.raw = raw_env(num_players=n, **options)
        deals.table = table
        self.raw.reset(seed=0)  # dealt the batch's cards
        self.agents: list[Agent] = [
            RandomAgent(seed=seed + seat) if name == "random" else agents.make(name)
            for seat, name in enumerate(SEAT_AGENTS[(table + seat) % len(SEAT_AGENTS)] for seat in range(n))
        ]

    @property
    def game(self) -> engine.GameState:
        assert self.raw.game is not None
        return self.raw.game


def replay(
    deals: ScalarDeals, *, num_tables: int, seed: int, num_steps: int, check_states: bool = True, **options: Any
) -> tuple[int, set[int]]:
    """Play ``SelfPlayTables`` and the scalar game of each table with the same scalar agents' moves and compare
    every ``Turn`` with the scalar games; returns the number of games that ended and the table sizes seen."""
    tables = SelfPlayTables(num_tables, seed=seed, **options)
    turn = tables.reset(seed=seed)
    deals.batch = tables.batch
    scalar_options = {key: options[key] for key in ("deck", "num_rounds", "reward") if key in options}
    scalars = [
        ScalarTable(deals, table, int(turn.num_players[table]), scalar_options, seed) for table in range(num_tables)
    ]
    assert deals.log.pending(tables.batch) == {}
    assert not turn.rewards.any() and not turn.round_over.any() and not turn.game_over.any()
    games_ended = 0
    sizes: set[int] = set()
    for step in range(num_steps):
        actions = np.empty(num_tables, dtype=np.int64)
        states = tables.states() if check_states else None
        for table, scalar in enumerate(scalars):
            game = scalar.game
            seat = game.current
            observation = scalar.raw.observe(f"player_{seat}")
            assert turn.seats[table] == seat
            assert turn.num_players[table] == game.rules.num_players
            np.testing.assert_array_equal(turn.observations[table], observation["observation"])
            np.testing.assert_array_equal(turn.masks[table], observation["action_mask"].astype(bool))
            if states is not None:
                np.testing.assert_array_equal(states[table], scalar.raw.state())
            actions[table] = scalar.agents[seat].act(observation)
            sizes.add(game.rules.num_players)
        turn = tables.step(actions)
        for table, scalar in enumerate(scalars):
            deals.table = table
            scalar.raw.step(int(actions[table]))
            game = scalar.game
            names = scalar.raw.possible_agents
            info = scalar.raw.infos[names[0]]
            assert turn.rewards[table].tolist() == padded([scalar.raw.rewards[name] for name in names]), step
            assert turn.round_over[table] == info["round_over"]
            assert turn.game_over[table] == game.game_over
            expected_scores = padded(game.scores) if game.game_over else [0.0] * MAX_SEATS
            assert turn.final_scores[table].tolist() == expected_scores
            if game.game_over:
                games_ended += 1
                scalars[table] = ScalarTable(deals, table, int(turn.num_players[table]), scalar_options, seed + step)
        assert deals.log.pending(tables.batch) == {}
    return games_ended, sizes


REPLAY_CASES = [
    # (num_players, deck, reward, num_rounds, seed)
    (3, "standard", "points", 4, 0),
    (4, "german", "points", 2, 1),
    (5, "standard", "relative", 2, 2),
    (6, "german", "win", 2, 3),
    ([3, 4, 5, 6], "standard", "points", 1, 4),
    ([3, 4, 5, 6], "german", "relative", 1, 5),
    ([3, 5, 6], "standard", "win", 1, 6),
    ([3, 4, 5, 6], "german", "rival", 2, 7),
]


@pytest.mark.parametrize(("num_players", "deck", "reward", "num_rounds", "seed"), REPLAY_CASES)
def test_playing_every_seat_with_scalar_agents_reproduces_the_scalar_games(
    scalar_deals: ScalarDeals, num_players: int | list[int], deck: str, reward: str, num_rounds: int, seed: int
) -> None:
    """Observation, mask and seat of the player to move, every seat's reward (each reward mode), round and game
    ends and final scores equal the scalar AEC game's on the same deals, new games included."""
    ended, sizes = replay(
        scalar_deals, num_tables=8, seed=seed, num_steps=480, check_states=False,
        num_players=num_players, deck=deck, reward=reward, num_rounds=num_rounds,
    )  # fmt: skip
    assert ended >= 8
    assert sizes == ({num_players} if isinstance(num_players, int) else set(num_players))


def test_states_are_the_scalar_global_states(scalar_deals: ScalarDeals) -> None:
    """``states()`` is ``encode_state`` of every table's game (every hand, absolute seats), at every step."""
    ended, _ = replay(
        scalar_deals, num_tables=6, seed=7, num_steps=120, num_players=[3, 4, 6], deck="german", num_rounds=1
    )
    assert ended >= 6
    tables = SelfPlayTables(5, num_players=[3, 6], seed=0)
    tables.reset(seed=0)
    states = tables.states()
    assert states.shape == (5, state_layout(get_deck("standard")).size) and states.dtype == np.float32


@pytest.mark.parametrize("reward", ["points", "relative", "rival", "win"])
def test_mixed_sizes_cover_every_size_and_padded_seats_get_nothing(reward: str) -> None:
    """With sizes [3, 4, 5, 6] every size is dealt; seats beyond a game's size never get a reward; ended games
    report every seat's total, zeros beyond the table; the rewards follow their mode."""
    tables = SelfPlayTables(64, num_players=[3, 4, 5, 6], reward=reward, num_rounds=1, seed=8)
    turn = tables.reset(seed=8)
    deck = get_deck("standard")
    assert turn.observations.shape == (64, observation_layout(deck).size) and turn.observations.dtype == np.float32
    assert turn.masks.shape == (64, deck.num_actions) and turn.masks.dtype == bool
    assert turn.rewards.shape == turn.final_scores.shape == (64, MAX_SEATS)
    rng = np.random.default_rng(0)
    sizes: set[int] = set()
    ended_sizes: set[int] = set()
    for _ in range(80):
        played = turn.num_players.copy()
        sizes.update(played.tolist())
        turn = tables.step(tables.batch.random_actions(rng))
        beyond = np.arange(MAX_SEATS)[None, :] >= played[:, None]
        assert not turn.rewards[beyond].any()
        assert not turn.final_scores[beyond].any()
        assert not turn.final_scores[~turn.game_over].any()
        assert not turn.rewards[~turn.round_over].any()
        over = np.flatnonzero(turn.game_over)
        ended_sizes.update(played[over].tolist())
        rounds = np.flatnonzero(turn.round_over)
        if reward == "points":
            assert (turn.rewards[rounds] <= 0).all()
        elif reward == "relative":
            np.testing.assert_allclose(turn.rewards[rounds].sum(axis=1), 0.0, atol=1e-9)  # zero-sum
        elif reward == "rival":  # one round: the margin of its points over the best rival's
            for row in over:
                scores = turn.final_scores[row, : played[row]].tolist()
                margins = [min(scores[:seat] + scores[seat + 1 :]) - own for seat, own in enumerate(scores)]
                assert turn.rewards[row, : played[row]].tolist() == margins
        else:
            present = ~beyond[over]
            scores = np.where(present, turn.final_scores[over], np.iinfo(np.int64).max)
            np.testing.assert_array_equal(turn.rewards[over], scores == scores.min(axis=1, keepdims=True))
    assert sizes == ended_sizes == {3, 4, 5, 6}


def test_reset_with_a_seed_is_reproducible() -> None:
    """The same seed (in the constructor or ``reset``) gives the same deals and, with the same moves, the same
    turns; ``reset()`` without a seed deals new games; another seed other games."""

    def play(tables: SelfPlayTables, first: Turn, steps: int = 60) -> list[Turn]:
        turns = [first]
        for _ in range(steps):
            turns.append(tables.step(np.argmax(turns[-1].masks, axis=1)))
        return turns

    one = SelfPlayTables(6, num_players=[3, 4, 5, 6], reward="relative", seed=9)
    two = SelfPlayTables(6, num_players=[3, 4, 5, 6], reward="relative", seed=9)
    first = play(one, one.reset(seed=10))
    for turns in (play(two, two.reset(seed=10)), play(one, one.reset(seed=10))):
        for a, b in zip(first, turns, strict=True):
            assert_same_turns(a, b)
    unseeded = [SelfPlayTables(6, num_players=[3, 4, 5, 6], seed=11) for _ in range(2)]
    assert_same_turns(unseeded[0].reset(), unseeded[1].reset())  # the constructor's seed drives reset() too
    again = one.reset()
    assert not np.array_equal(again.observations, first[0].observations)
    other = one.reset(seed=12)
    assert not np.array_equal(other.observations, first[0].observations)


def test_illegal_actions_raise_and_change_nothing() -> None:
    """A card the player to move does not hold is an ``IllegalActionError`` naming the table and its legal actions;
    out-of-range, non-integer and wrongly shaped actions are ValueErrors too; no table plays anything."""
    tables = SelfPlayTables(4, num_players=[3, 5], seed=13)
    twin = SelfPlayTables(4, num_players=[3, 5], seed=13)
    turn = tables.reset(seed=13)
    twin.reset(seed=13)
    legal = np.argmax(turn.masks, axis=1)
    illegal = legal.copy()
    illegal[2] = np.flatnonzero(~turn.masks[2])[0]
    legal_list = np.flatnonzero(turn.masks[2]).tolist()
    before = batch_snapshot(tables)
    with pytest.raises(IllegalActionError, match=rf"in game 2: .*legal actions: {re.escape(str(legal_list))}"):
        tables.step(illegal)
    num_actions = turn.masks.shape[1]
    for bad, error in [
        (np.full(4, num_actions), IllegalActionError),
        (np.full(4, -1), IllegalActionError),
        (legal.astype(np.float64), IllegalActionError),
        (legal[:3], ValueError),
        (legal[:, None], ValueError),
    ]:
        with pytest.raises(error):
            tables.step(bad)
    assert_same_arrays(before, batch_snapshot(tables))
    assert_same_turns(tables.step(legal), twin.step(legal))


def test_an_exception_after_the_engine_played_locks_the_tables_until_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception part-way through ``step`` (after the cards were played: an interrupt, say) leaves the tables
    refusing ``step``, naming the failure, until ``reset``; a refused action (nothing played) does not."""
    tables = SelfPlayTables(4, num_players=[3, 5], seed=14)
    turn = tables.reset(seed=14)
    with pytest.raises(IllegalActionError):
        tables.step(np.full(4, -1))
    turn = tables.step(np.argmax(turn.masks, axis=1))  # still usable
    encode = selfplay.encode_observations

    def interrupted(*args: Any, **kwargs: Any) -> np.ndarray:
        raise KeyboardInterrupt("interrupted mid-step")

    monkeypatch.setattr(selfplay, "encode_observations", interrupted)
    with pytest.raises(KeyboardInterrupt):
        tables.step(np.argmax(turn.masks, axis=1))
    monkeypatch.setattr(selfplay, "encode_observations", encode)
    locked = r"an earlier step\(\) raised KeyboardInterrupt: interrupted mid-step; .*call reset\(\)"
    with pytest.raises(RuntimeError, match=locked):
        tables.step(np.argmax(turn.masks, axis=1))
    turn = tables.reset()
    tables.step(np.argmax(turn.masks, axis=1))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_tables": 0}, r"in 1\.\.1048576, got 0"),
        ({"num_players": 7}, r"num_players must be one of \[3, 4, 5, 6\]"),
        ({"num_players": [3, 8]}, r"num_players must be one of \[3, 4, 5, 6\]"),
        ({"deck": "french"}, r"unknown deck 'french'; allowed values: \['german', 'standard'\]"),
        ({"reward": "score"}, r"unknown reward mode 'score'; allowed values: \['points', 'relative', 'rival', 'win'\]"),
        ({"num_rounds": 0}, r"num_rounds must be a positive int"),
    ],
)
def test_bad_options_are_refused(kwargs: dict[str, Any], message: str) -> None:
    """Bad sizes, decks, reward modes and round counts are ValueErrors naming the allowed values."""
    with pytest.raises(ValueError, match=message):
        SelfPlayTables(**{"num_tables": 2, **kwargs})
