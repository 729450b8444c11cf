"""Fuzzing the batched environments against scalar replays of the same deals (issue 43).

``Friday13VectorEnv`` and ``SelfPlayTables`` are driven by a seeded Generator through thousands of random calls:
legal actions, illegal ones in range (under each ``illegal_action`` mode), bad input (out of range, floats, NaN,
bools, strings, wrong shapes), full and masked resets, and failures part-way through a step (an opponent whose
``act_batch`` raises, an exception after the engine played). After every call that is accepted, every table must
equal the scalar game of the same deals (``batch_deals``: observations, masks, rewards, ends, infos and the whole
table state); after every refused call nothing may have changed; after a failure the object must refuse to go on
until a full reset, and then play on exactly again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import friday13_env  # noqa: F401  (registers the Gymnasium ids)
from friday13_env.friday13 import engine
from friday13_env.friday13.aec import raw_env
from friday13_env.friday13.batched import selfplay
from friday13_env.friday13.batched.encoding import encode_states
from friday13_env.friday13.batched.engine import MAX_SEATS
from friday13_env.friday13.batched.selfplay import SelfPlayTables, Turn
from friday13_env.friday13.batched.vector_env import Friday13VectorEnv
from friday13_env.friday13.encoding import encode_state
from friday13_env.friday13.single_agent import Friday13Env
from tests.friday13.batch_deals import DealLog, FailingOpponent, ScalarDeals, assert_same_arrays, batch_snapshot

SCALAR_OPPONENTS = ["cautious", "majority", "cautious", "majority", "cautious"]
"""Clockwise from the learner; the vector env's first seat is a ``FailingOpponent``, a batched ``cautious``."""
COMPARED_INFO_KEYS = (
    "round", "round_over", "round_points", "total_points", "winner", "illegal_action", "rank", "num_players", "seat",
)  # fmt: skip
LOCKED = r"an earlier (step|reset)\(\) raised .*call reset\(\)"

BadActions = Callable[[np.ndarray, int], Any]
"""Bad input made from the legal actions ``(N,)`` and the action count."""
BAD_ACTIONS: list[BadActions] = [
    lambda legal, a: legal + a,  # out of range
    lambda legal, a: legal - legal.max() - 1,  # negative
    lambda legal, a: legal + 0.99,  # floats near a legal card
    lambda legal, a: legal.astype(np.float64),
    lambda legal, a: np.full(legal.shape, np.nan),
    lambda legal, a: legal.astype(bool),
    lambda legal, a: legal.astype(str),
    lambda legal, a: legal[:-1],
    lambda legal, a: legal[:, None],
    lambda legal, a: np.concatenate([legal, legal]),
    lambda legal, a: int(legal[0]),
]


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly drawn legal action per row (0 for a row without one)."""
    counts = masks.sum(axis=1)
    nth = (rng.random(len(masks)) * np.maximum(counts, 1)).astype(np.int64)
    ranks = np.cumsum(masks, axis=1) - 1
    return np.where(counts > 0, np.argmax(masks & (ranks == nth[:, None]), axis=1), 0)


def random_illegal(mask: np.ndarray, rng: np.random.Generator) -> int | None:
    illegal = np.flatnonzero(~mask)
    return int(rng.choice(illegal)) if illegal.size else None


# -- Friday13VectorEnv --------------------------------------------------------------------------------
class VectorReplay:
    """A ``Friday13VectorEnv`` and, for every table, the scalar ``Friday13Env`` of its current game (same deals)."""

    def __init__(
        self, log: DealLog, monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator, num_envs: int, **options: Any
    ) -> None:
        self.log, self.rng, self.num_envs = log, rng, num_envs
        self.deals = ScalarDeals(log)
        monkeypatch.setattr(engine, "deal", self.deals)
        fail_at = set(rng.choice(np.arange(1, 100_000), size=3000, replace=False).tolist())  # 1 call in 33
        self.failing = FailingOpponent(fail_at)
        env = gym.make_vec(
            "friday13_env/Friday13-v0", num_envs=num_envs, vectorization_mode="vector_entry_point",
            num_players=[3, 4, 5, 6], opponents=[self.failing, *SCALAR_OPPONENTS[1:]], **options,
        )  # fmt: skip
        assert isinstance(env, Friday13VectorEnv)
        self.env = env
        self.mode = env.autoreset_mode.value
        self.scalar_options = {
            key: options[key] for key in ("reward", "illegal_action", "num_rounds") if key in options
        }
        self.scalars: list[Friday13Env] = []
        self.ended = np.zeros(num_envs, dtype=bool)
        self.masks = np.zeros((num_envs, env.single_action_space.n), dtype=bool)
        self.expected: list[tuple[np.ndarray, dict[str, Any]]] = []
        """Each table's scalar observation and info, as last compared."""
        self.counts = dict.fromkeys(["step", "refused", "failure", "reset", "masked reset", "game end"], 0)

    # Each scalar game is dealt the table's batch deals; its opponents play the failing seat's moves as cautious.
    def start(self, table: int, infos: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
        n, seat = int(infos["num_players"][table]), int(infos["seat"][table])
        scalar = Friday13Env(num_players=n, opponents=SCALAR_OPPONENTS[: n - 1], seat=seat, **self.scalar_options)
        self.deals.table = table
        observation, info = scalar.reset(seed=0)
        if table < len(self.scalars):
            self.scalars[table] = scalar
        else:
            self.scalars.append(scalar)
        self.ended[table] = False
        return observation, info

    def check(self, observations: np.ndarray, infos: dict[str, Any], expected: list[tuple[np.ndarray, dict]]) -> None:
        """Every table shows its scalar game: observation, infos, mask and the whole table."""
        batch = self.env.batch
        states = encode_states(batch)
        for table, (observation, info) in enumerate(expected):
            np.testing.assert_array_equal(observations[table], observation)
            np.testing.assert_array_equal(infos["action_mask"][table], info["action_mask"])
            for key in COMPARED_INFO_KEYS:
                assert infos[key][table] == info[key], key
            final = infos["final_scores"][table].tolist()
            assert final == [*info["final_scores"], *[0] * (MAX_SEATS - info["num_players"])]
            np.testing.assert_array_equal(states[table], encode_state(self.scalars[table].game))
        assert self.log.pending(batch) == {}
        self.expected = expected
        self.masks = infos["action_mask"].astype(bool)
        np.testing.assert_array_equal(self.env.action_masks(), self.masks)

    def reset(self, seed: int | None) -> None:
        """A full reset (again until no opponent fails in it); every scalar game starts afresh."""
        while True:
            try:
                observations, infos = self.env.reset(seed=seed)
                break
            except RuntimeError as error:
                assert "opponent crashed" in str(error)
                self.assert_locked()
        self.deals.batch = self.env.batch
        self.log.keep_latest(self.env.batch)
        self.check(observations, infos, [self.start(table, infos) for table in range(self.num_envs)])
        self.counts["reset"] += 1

    def masked_reset(self, mask: np.ndarray) -> None:
        """A reset of the masked tables: they start afresh, the others are as they were (a mask of none is refused,
        as Gymnasium's vector environments refuse it, and changes nothing)."""
        if not mask.any():
            with pytest.raises(ValueError, match="reset_mask resets no table"):
                self.env.reset(options={"reset_mask": mask})
            return
        try:
            observations, infos = self.env.reset(options={"reset_mask": mask})
        except RuntimeError as error:
            self.recover(error)
            return
        expected = [self.start(table, infos) if mask[table] else self.expected[table] for table in range(self.num_envs)]
        self.check(observations, infos, expected)
        self.counts["masked reset"] += 1

    def recover(self, error: RuntimeError) -> None:
        """After an opponent failed: the env refuses to go on until a full reset, which then plays on exactly."""
        assert "opponent crashed" in str(error)
        self.assert_locked()
        self.reset(seed=None if self.rng.random() < 0.5 else int(self.rng.integers(1000)))

    def assert_locked(self) -> None:
        """After a failure: step, the masks and a masked reset are refused until a full reset."""
        with pytest.raises(RuntimeError, match=LOCKED):
            self.env.step(np.zeros(self.num_envs, dtype=np.int64))
        with pytest.raises(RuntimeError, match=LOCKED):
            self.env.action_masks()
        with pytest.raises(RuntimeError, match=LOCKED):
            self.env.reset(options={"reset_mask": np.ones(self.num_envs, dtype=bool)})
        self.counts["failure"] += 1

    def refused(self, actions: Any, error: type[Exception], match: str) -> None:
        """A call that must be refused with nothing changed."""
        before = batch_snapshot(self.env)
        with pytest.raises(error, match=match):
            self.env.step(actions)
        assert_same_arrays(before, batch_snapshot(self.env))
        np.testing.assert_array_equal(self.env.action_masks(), self.masks)
        self.counts["refused"] += 1

    def step(self, actions: np.ndarray) -> None:
        """A step that must be accepted (unless an opponent fails): every table against its scalar game."""
        try:
            observations, rewards, terminated, truncated, infos = self.env.step(actions)
        except RuntimeError as error:
            self.recover(error)
            return
        assert not truncated.any()
        expected = []
        for table in range(self.num_envs):
            if self.ended[table]:  # NextStep: this step starts a new game and ignores the action
                assert self.mode == "NextStep"
                observation, info = self.start(table, infos)
                reward, done = 0.0, False
            else:
                self.deals.table = table
                observation, reward, done, _, info = self.scalars[table].step(int(actions[table]))
            assert rewards[table] == reward
            assert terminated[table] == done
            self.counts["game end"] += done
            if done and self.mode == "SameStep":
                assert infos["_final_obs"][table]
                np.testing.assert_array_equal(infos["final_obs"][table], observation)
                for key in COMPARED_INFO_KEYS:
                    assert infos["final_info"][key][table] == info[key], key
                observation, info = self.start(table, infos)
            else:
                self.ended[table] = done
            expected.append((observation, info))
        self.check(observations, infos, expected)
        self.counts["step"] += 1


def fuzz_vector_env(
    log: DealLog, monkeypatch: pytest.MonkeyPatch, seed: int, num_steps: int, num_envs: int, **options: Any
) -> dict[str, int]:
    """``num_steps`` random calls; returns how many of each kind were made."""
    rng = np.random.default_rng(seed)
    replay = VectorReplay(log, monkeypatch, rng, num_envs, **options)
    replay.reset(seed=seed)
    num_actions = replay.env.single_action_space.n
    for _ in range(num_steps):
        event = rng.random()
        legal = random_legal(replay.masks, rng)
        if replay.mode == "Disabled" and replay.ended.any():
            if event < 0.2:
                replay.refused(legal, RuntimeError, "over at .* restart finished tables with reset")
            replay.masked_reset(replay.ended | (rng.random(num_envs) < 0.2))
        elif event < 0.1:
            bad = BAD_ACTIONS[int(rng.integers(len(BAD_ACTIONS)))](legal, num_actions)
            replay.refused(bad, ValueError, r"actions must be .*in 0\.\.")
        elif event < 0.13:
            replay.reset(seed=None if rng.random() < 0.5 else int(rng.integers(1000)))
        elif event < 0.16:
            replay.masked_reset(rng.random(num_envs) < 0.5)
        else:
            actions = legal.copy()
            playing = np.flatnonzero(~replay.ended)
            for table in playing[rng.random(playing.size) < 0.05]:
                illegal = random_illegal(replay.masks[table], rng)
                actions[table] = actions[table] if illegal is None else illegal
            if options.get("illegal_action") == "raise" and (actions != legal)[playing].any():
                replay.refused(actions, ValueError, "illegal action .* legal actions: .*nothing was played")
                actions = legal
            replay.step(actions)
    return replay.counts


VECTOR_CASES = [
    # (seed, autoreset_mode, illegal_action, reward, num_rounds)
    (0, "NextStep", "end", "points", 1),
    (1, "SameStep", "raise", "relative", 2),
    (2, "Disabled", "end", "rival", 1),
    (3, "NextStep", "raise", "win", 1),
]


def check_vector_env(
    log: DealLog, monkeypatch: pytest.MonkeyPatch, case: tuple[int, str, str, str, int], steps: int
) -> None:
    seed, autoreset_mode, illegal_action, reward, num_rounds = case
    counts = fuzz_vector_env(
        log, monkeypatch, seed, num_steps=steps, num_envs=4,
        autoreset_mode=autoreset_mode, illegal_action=illegal_action, reward=reward, num_rounds=num_rounds,
    )  # fmt: skip
    assert counts["step"] >= steps // 2 and counts["refused"] >= steps // 40 and counts["game end"] >= steps // 60
    assert min(counts["reset"], counts["masked reset"], counts["failure"]) >= 1


@pytest.mark.parametrize("case", VECTOR_CASES, ids=str)
def test_the_vector_env_matches_scalar_replays_under_random_calls_and_failures(
    deal_log: DealLog, monkeypatch: pytest.MonkeyPatch, case: tuple[int, str, str, str, int]
) -> None:
    """Random legal, illegal and bad actions, full and masked resets and failing opponents: every accepted call
    leaves every table equal to its scalar replay, every refused one changes nothing, every failure locks the env
    until a full reset."""
    check_vector_env(deal_log, monkeypatch, case, steps=100)


@pytest.mark.slow
@pytest.mark.parametrize("case", VECTOR_CASES, ids=str)
def test_the_vector_env_matches_scalar_replays_over_long_fuzzing(
    deal_log: DealLog, monkeypatch: pytest.MonkeyPatch, case: tuple[int, str, str, str, int]
) -> None:
    """The same, longer, from other seeds."""
    check_vector_env(deal_log, monkeypatch, (case[0] + 100, *case[1:]), steps=600)


# -- SelfPlayTables -----------------------------------------------------------------------------------
class SelfPlayReplay:
    """``SelfPlayTables`` and, for every table, the scalar AEC game of its current deal; ``encode_observations``
    raises at random calls (an exception after the engine played: an interrupt, say)."""

    def __init__(
        self, log: DealLog, monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator, num_tables: int, **options: Any
    ) -> None:
        self.log, self.rng, self.num_tables = log, rng, num_tables
        self.deals = ScalarDeals(log)
        monkeypatch.setattr(engine, "deal", self.deals)
        encode = selfplay.encode_observations
        calls = [0]

        def sometimes_interrupted(*args: Any, **kwargs: Any) -> np.ndarray:
            calls[0] += 1
            if rng.random() < 0.01:
                raise KeyboardInterrupt(f"interrupted on call {calls[0]}")
            return encode(*args, **kwargs)

        monkeypatch.setattr(selfplay, "encode_observations", sometimes_interrupted)
        self.tables = SelfPlayTables(num_tables, num_players=[3, 4, 5, 6], seed=0, **options)
        self.scalar_options = {key: options[key] for key in ("reward", "num_rounds", "deck") if key in options}
        self.scalars: list[raw_env] = []
        self.turn: Turn | None = None
        self.counts = dict.fromkeys(["step", "refused", "failure", "reset", "game end"], 0)

    def start(self, table: int, n: int) -> None:
        scalar = raw_env(num_players=n, **self.scalar_options)
        self.deals.table = table
        scalar.reset(seed=0)
        if table < len(self.scalars):
            self.scalars[table] = scalar
        else:
            self.scalars.append(scalar)

    def check(self, turn: Turn) -> None:
        """Who is to move at every table, what it sees and may play, and the whole table, as in its scalar game."""
        states = self.tables.states()
        for table, scalar in enumerate(self.scalars):
            assert scalar.game is not None
            seat = scalar.game.current
            observation = scalar.observe(f"player_{seat}")
            assert turn.seats[table] == seat and turn.num_players[table] == scalar.game.rules.num_players
            np.testing.assert_array_equal(turn.observations[table], observation["observation"])
            np.testing.assert_array_equal(turn.masks[table], observation["action_mask"].astype(bool))
            np.testing.assert_array_equal(states[table], scalar.state())
        assert self.log.pending(self.tables.batch) == {}
        self.turn = turn

    def reset(self, seed: int | None) -> None:
        """A reset (again until it is not interrupted); every scalar game starts afresh."""
        while True:
            try:
                turn = self.tables.reset(seed=seed)
                break
            except KeyboardInterrupt:
                self.assert_locked()
        self.deals.batch = self.tables.batch
        self.log.keep_latest(self.tables.batch)
        for table in range(self.num_tables):
            self.start(table, int(turn.num_players[table]))
        self.check(turn)
        self.counts["reset"] += 1

    def assert_locked(self) -> None:
        with pytest.raises(RuntimeError, match=r"an earlier (step|reset)\(\) raised KeyboardInterrupt: .*call reset"):
            self.tables.step(np.zeros(self.num_tables, dtype=np.int64))
        self.counts["failure"] += 1

    def refused(self, actions: Any) -> None:
        before = batch_snapshot(self.tables)
        with pytest.raises(ValueError):  # IllegalActionError is one
            self.tables.step(actions)
        assert_same_arrays(before, batch_snapshot(self.tables))
        self.counts["refused"] += 1

    def step(self, actions: np.ndarray) -> None:
        try:
            turn = self.tables.step(actions)
        except KeyboardInterrupt:
            self.assert_locked()
            self.reset(seed=None if self.rng.random() < 0.5 else int(self.rng.integers(1000)))
            return
        for table, scalar in enumerate(self.scalars):
            self.deals.table = table
            scalar.step(int(actions[table]))
            game = scalar.game
            assert game is not None
            names = scalar.possible_agents
            rewards = [scalar.rewards[name] for name in names]
            assert turn.rewards[table].tolist() == [*rewards, *[0.0] * (MAX_SEATS - len(names))]
            assert turn.round_over[table] == scalar.infos[names[0]]["round_over"]
            assert turn.game_over[table] == game.game_over
            scores = [*game.scores, *[0] * (MAX_SEATS - len(names))] if game.game_over else [0] * MAX_SEATS
            assert turn.final_scores[table].tolist() == scores
            if game.game_over:
                self.start(table, int(turn.num_players[table]))
                self.counts["game end"] += 1
        self.check(turn)
        self.counts["step"] += 1


def fuzz_self_play(
    log: DealLog, monkeypatch: pytest.MonkeyPatch, seed: int, num_steps: int, num_tables: int, **options: Any
) -> dict[str, int]:
    rng = np.random.default_rng(seed)
    replay = SelfPlayReplay(log, monkeypatch, rng, num_tables, **options)
    replay.reset(seed=seed)
    for _ in range(num_steps):
        assert replay.turn is not None
        masks = replay.turn.masks
        legal = random_legal(masks, rng)
        event = rng.random()
        if event < 0.1:
            replay.refused(BAD_ACTIONS[int(rng.integers(len(BAD_ACTIONS)))](legal, masks.shape[1]))
        elif event < 0.2:
            table = int(rng.integers(num_tables))
            illegal = random_illegal(masks[table], rng)
            if illegal is not None:
                replay.refused(np.where(np.arange(num_tables) == table, illegal, legal))
        elif event < 0.21:
            replay.reset(seed=None if rng.random() < 0.5 else int(rng.integers(1000)))
        else:
            replay.step(legal)
    return replay.counts


SELF_PLAY_CASES = [(10, "points", 1, "standard"), (11, "rival", 1, "german"), (12, "win", 1, "standard")]


def check_self_play(log: DealLog, monkeypatch: pytest.MonkeyPatch, case: tuple[int, str, int, str], steps: int) -> None:
    seed, reward, num_rounds, deck = case
    counts = fuzz_self_play(
        log, monkeypatch, seed, steps, num_tables=4, reward=reward, num_rounds=num_rounds, deck=deck
    )
    assert counts["step"] >= steps // 2 and counts["refused"] >= steps // 10 and counts["game end"] >= steps // 60
    assert min(counts["reset"], counts["failure"]) >= 1


@pytest.mark.parametrize("case", SELF_PLAY_CASES, ids=str)
def test_self_play_tables_match_scalar_replays_under_random_calls_and_failures(
    deal_log: DealLog, monkeypatch: pytest.MonkeyPatch, case: tuple[int, str, int, str]
) -> None:
    """Random legal, illegal and bad actions, resets and exceptions part-way through a step: every accepted step
    leaves every table equal to its scalar game, every refused one changes nothing, every failure locks the tables
    until ``reset``."""
    check_self_play(deal_log, monkeypatch, case, steps=200)


@pytest.mark.slow
@pytest.mark.parametrize("case", SELF_PLAY_CASES, ids=str)
def test_self_play_tables_match_scalar_replays_over_long_fuzzing(
    deal_log: DealLog, monkeypatch: pytest.MonkeyPatch, case: tuple[int, str, int, str]
) -> None:
    """The same, longer, from other seeds."""
    check_self_play(deal_log, monkeypatch, (case[0] + 100, *case[1:]), steps=1500)
