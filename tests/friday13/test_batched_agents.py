"""Batched agents (``friday13.batched.agents``) against the scalar agents they must equal, move for move.

Positions come from ``GameBatch`` tables played by a mix of heuristic and random moves, at every table
size and with both decks. ``cautious`` and ``majority`` must make exactly the scalar agents' moves, from
the encoded observations and from the engine's arrays alike; a network policy must give the scalar
logits and greedy moves; ``random`` must be legal and uniform; ``make_batched`` builds each from the
specs ``agents.make`` reads, and refuses what has no batched version.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from friday13_env.core.mlp import MLPPolicy
from friday13_env.core.registry import constructor_options
from friday13_env.friday13 import agents
from friday13_env.friday13.agents.policy import Friday13PolicyAgent, read_friday13_policy
from friday13_env.friday13.batched.agents import (
    BatchedAgent,
    BatchedCautious,
    BatchedMajority,
    BatchedPolicy,
    BatchedRandom,
    TableBatch,
    act,
    make_batched,
)
from friday13_env.friday13.batched.encoding import encode_observations
from friday13_env.friday13.batched.engine import GameBatch
from friday13_env.friday13.cards import CAPTURE_LIMIT, DECKS, GERMAN_DECK, STANDARD_DECK, Deck

SIZES = [3, 4, 5, 6]
HEURISTICS = ["cautious", "majority", "majority:open_min=2,keep_min=1"]
CHECKPOINT = Path(__file__).resolve().parents[2] / "checkpoints" / "search_distilled.npz"
ZOO = "ensemble-v1"


def observation_dict(observation: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
    """One row as the environment hands it to a scalar agent."""
    return {"observation": observation, "action_mask": mask.astype(np.int8)}


def positions(deck: Deck, num_players: int | list[int], games: int, steps: int, seed: int) -> Iterator[GameBatch]:
    """A batch after each of ``steps`` plays of mixed play: 40% random moves, the rest ``majority`` or
    ``cautious`` (autoreset, so every round and deal of a game comes up)."""
    batch = GameBatch(games, num_players, deck=deck, seed=seed)
    rng = np.random.default_rng(seed)
    everyone = np.arange(games)
    majority, cautious = BatchedMajority(deck), BatchedCautious(deck)
    for _ in range(steps):
        yield batch
        heuristic = np.where(
            rng.random(games) < 0.5, act(majority, batch, everyone, rng), act(cautious, batch, everyone, rng)
        )
        batch.step(np.where(rng.random(games) < 0.4, batch.random_actions(rng), heuristic))


def forced(batch: GameBatch, masks: np.ndarray) -> np.ndarray:
    """``(m,)``: every legal move of the player to move captures (computed from the deck, not the agents)."""
    deck = batch.deck
    pile = np.array([deck.action_kind_and_pile(a)[1] for a in range(deck.num_actions)])
    value = np.array([deck.kind_values[deck.action_kind_and_pile(a)[0]] for a in range(deck.num_actions)])
    captures = batch.pile_totals[:, pile] + value > CAPTURE_LIMIT
    return (captures | ~masks).all(axis=1)


def chi_square_bound(dof: int, z: float = 3.29) -> float:
    """Upper ``p ~ 0.0005`` quantile of the chi-square distribution (Wilson-Hilferty approximation)."""
    c = 2.0 / (9.0 * dof)
    return dof * (1.0 - c + z * math.sqrt(c)) ** 3


def chi_square(observed: np.ndarray, expected: np.ndarray) -> tuple[float, int]:
    """The statistic and its degrees of freedom, bins expecting fewer than 5 draws merged into one."""
    small = expected < 5
    if small.any():
        observed = np.append(observed[~small], observed[small].sum())
        expected = np.append(expected[~small], expected[small].sum())
    return float(((observed - expected) ** 2 / expected).sum()), observed.size - 1


# -- heuristics ------------------------------------------------------------------------------------
@pytest.mark.parametrize("deck", sorted(DECKS))
@pytest.mark.parametrize("num_players", SIZES)
def test_batched_heuristics_move_exactly_like_the_scalar_agents(num_players: int, deck: str) -> None:
    """On 12,288 positions per table size and deck, ``cautious``, ``majority`` and ``majority`` with options
    choose as the scalar agents (half of the positions asked of them), from observations and from the engine."""
    bots = {spec: make_batched(spec, DECKS[deck]) for spec in HEURISTICS}
    scalar = {spec: agents.make(spec) for spec in HEURISTICS}
    rng = np.random.default_rng(0)
    compared = forced_positions = 0
    differ = dict.fromkeys(("majority vs cautious", "options vs majority"), 0)
    for step, batch in enumerate(positions(DECKS[deck], num_players, games=128, steps=96, seed=num_players)):
        games = np.arange(batch.num_games)
        observations, masks = encode_observations(batch), batch.legal_mask()
        moves = {}
        for spec, bot in bots.items():
            moves[spec] = bot.act_batch(observations, masks, rng)
            np.testing.assert_array_equal(act(bot, batch, games, rng), moves[spec], err_msg=f"{spec} from the engine")
            subset = games[step % 3 :: 3]
            np.testing.assert_array_equal(act(bot, batch, subset, rng), moves[spec][subset], err_msg=f"{spec} subset")
            rows = games[step % 2 :: 2]
            expected = [scalar[spec].act(observation_dict(observations[i], masks[i])) for i in rows]
            assert moves[spec][rows].tolist() == expected, spec
        compared += rows.size
        forced_positions += int(forced(batch, masks).sum())
        differ["majority vs cautious"] += int((moves["majority"] != moves["cautious"]).sum())
        differ["options vs majority"] += int((moves[HEURISTICS[2]] != moves["majority"]).sum())
    assert compared == 96 * 64
    assert forced_positions > 400
    assert min(differ.values()) > 300, differ


def test_heuristics_read_the_dummy_share_at_three_players() -> None:
    """At 3 players the dummy hand's share shrinks ``outstanding`` (so the odds and moves use it), and the
    batched heuristics still equal the scalar ones on a mixed-size batch."""
    shared = 0
    bots = {spec: make_batched(spec, GERMAN_DECK) for spec in HEURISTICS}
    scalar = {spec: agents.make(spec) for spec in HEURISTICS}
    rng = np.random.default_rng(1)
    for batch in positions(GERMAN_DECK, [3, 4, 5, 6], games=128, steps=40, seed=3):
        table = TableBatch.from_batch(batch, np.arange(batch.num_games))
        three = batch.num_players == 3
        per_type = sum(GERMAN_DECK.omen_copies)
        taken = batch.captured[:, :, :3].sum(axis=1)
        shared += int((per_type - taken - table.outstanding)[three].any(axis=1).sum())
        assert not (per_type - taken - table.outstanding)[~three].any()
        observations, masks = encode_observations(batch), batch.legal_mask()
        for spec, bot in bots.items():
            moves = bot.act_batch(observations, masks, rng)
            rows = np.flatnonzero(three)[:16]
            assert moves[rows].tolist() == [scalar[spec].act(observation_dict(observations[i], masks[i])) for i in rows]
    assert shared > 100


@pytest.mark.parametrize("deck", sorted(DECKS))
@pytest.mark.parametrize("num_players", [*SIZES, "mixed"])
def test_table_from_the_engine_equals_the_table_read_from_observations(num_players: int | str, deck: str) -> None:
    """``TableBatch.from_batch`` equals ``TableBatch.read`` of the encoded observations, field by field, for
    every game and for a shuffled subset of games."""
    sizes = SIZES if num_players == "mixed" else num_players
    rng = np.random.default_rng(2)
    for batch in positions(DECKS[deck], sizes, games=128, steps=60, seed=4):
        for games in (np.arange(batch.num_games), rng.permutation(batch.num_games)[:40]):
            fast = TableBatch.from_batch(batch, games)
            read = TableBatch.read(encode_observations(batch, games), batch.legal_mask(games), DECKS[deck])
            assert fast.deck == read.deck == DECKS[deck]
            for field in dataclasses.fields(TableBatch):
                if field.name == "deck":
                    continue
                x, y = getattr(fast, field.name), getattr(read, field.name)
                assert x.shape == y.shape and x.shape[0] == games.size, field.name
                np.testing.assert_array_equal(x, y, err_msg=field.name)


def test_table_read_refuses_bad_input() -> None:
    """Wrong observation width, wrong mask shape and a row with no legal action are ValueErrors."""
    batch = GameBatch(4, 4, seed=0)
    observations, masks = encode_observations(batch), batch.legal_mask()
    with pytest.raises(ValueError, match="'german' deck"):
        TableBatch.read(observations, masks, GERMAN_DECK)
    with pytest.raises(ValueError, match="masks of shape"):
        TableBatch.read(observations, masks[:, :-1], STANDARD_DECK)
    masks[2] = False
    with pytest.raises(ValueError, match="needs a legal action"):
        TableBatch.read(observations, masks, STANDARD_DECK)


# -- random ----------------------------------------------------------------------------------------
def test_batched_random_plays_only_legal_moves() -> None:
    """On 12,800 positions of every table size, every drawn move is legal, and over them every action is drawn."""
    bot = make_batched("random", STANDARD_DECK)
    assert isinstance(bot, BatchedRandom)
    rng = np.random.default_rng(3)
    drawn = np.zeros(STANDARD_DECK.num_actions, dtype=np.int64)
    for batch in positions(STANDARD_DECK, SIZES, games=128, steps=100, seed=5):
        masks = batch.legal_mask()
        moves = bot.act_batch(encode_observations(batch), masks, rng)
        assert masks[np.arange(moves.size), moves].all()
        drawn += np.bincount(moves, minlength=STANDARD_DECK.num_actions)
    assert (drawn > 0).all()


def test_batched_random_is_uniform_and_seeded() -> None:
    """20,000 draws per mask (with 2, 7 and 12 legal actions) are uniform over the legal actions
    (chi-square), and a seed reproduces them; a row with no legal action is refused."""
    bot = BatchedRandom(STANDARD_DECK)
    layout_size = encode_observations(GameBatch(1, 4, seed=0)).shape[1]
    for legal in ([3, 16], [0, 2, 5, 7, 9, 14, 17], list(range(12))):
        mask = np.zeros((20_000, STANDARD_DECK.num_actions), dtype=bool)
        mask[:, legal] = True
        observations = np.zeros((20_000, layout_size), dtype=np.float32)
        moves = bot.act_batch(observations, mask, np.random.default_rng(4))
        np.testing.assert_array_equal(moves, bot.act_batch(observations, mask, np.random.default_rng(4)))
        observed = np.bincount(moves, minlength=STANDARD_DECK.num_actions)
        assert set(np.flatnonzero(observed).tolist()) == set(legal)
        statistic, dof = chi_square(observed[legal], np.full(len(legal), 20_000 / len(legal)))
        assert statistic < chi_square_bound(dof), (legal, observed[legal])
    with pytest.raises(ValueError, match="needs a legal action"):
        bot.act_batch(
            np.zeros((2, layout_size)), np.zeros((2, STANDARD_DECK.num_actions), bool), np.random.default_rng()
        )


# -- policies --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def policy_positions() -> tuple[np.ndarray, np.ndarray, list[GameBatch]]:
    """Observations and masks of 9,600 positions at mixed table sizes (standard deck), and one batch."""
    observations, masks = [], []
    last = None
    for batch in positions(STANDARD_DECK, SIZES, games=128, steps=75, seed=6):
        observations.append(encode_observations(batch))
        masks.append(batch.legal_mask())
        last = batch
    assert last is not None
    return np.concatenate(observations), np.concatenate(masks), [last]


def test_batched_policy_logits_and_greedy_moves_equal_the_scalar_policy(
    policy_positions: tuple[np.ndarray, np.ndarray, list[GameBatch]],
) -> None:
    """The zoo policy's batched logits equal ``MLPPolicy.logits`` row by row (float32 tolerance), and its
    greedy moves equal the scalar agent's wherever the two best legal logits are more than 1e-4 apart."""
    observations, masks, _ = policy_positions
    bot = make_batched(ZOO, STANDARD_DECK)
    assert isinstance(bot, BatchedPolicy) and bot.greedy and bot.name == ZOO
    scalar = agents.make(ZOO)
    assert isinstance(scalar, Friday13PolicyAgent)
    logits = bot.logits(observations)
    expected = np.array([scalar.policy.logits(row) for row in observations])
    assert logits.shape == expected.shape == (observations.shape[0], STANDARD_DECK.num_actions)
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-4)
    moves = bot.act_batch(observations, masks, np.random.default_rng(0))
    assert masks[np.arange(moves.size), moves].all()
    legal_logits = np.sort(np.where(masks, expected, -np.inf), axis=1)
    clear = (legal_logits[:, -1] - legal_logits[:, -2]) > 1e-4  # one legal action: an infinite margin
    assert clear.mean() > 0.95
    rows = np.flatnonzero(clear)
    assert moves[rows].tolist() == [scalar.act(observation_dict(observations[i], masks[i])) for i in rows]


def test_batched_policy_acts_from_the_engine_like_from_observations(
    policy_positions: tuple[np.ndarray, np.ndarray, list[GameBatch]],
) -> None:
    """``act(policy, batch, games)`` encodes the games' observations: the same moves as ``act_batch``."""
    batch = policy_positions[2][0]
    bot = make_batched(ZOO, STANDARD_DECK)
    games = np.array([5, 0, 77, 31, 100])
    expected = bot.act_batch(encode_observations(batch, games), batch.legal_mask(games), np.random.default_rng(0))
    np.testing.assert_array_equal(act(bot, batch, games, np.random.default_rng(0)), expected)


def test_sampling_policy_draws_legal_moves_reproducibly_from_its_softmax(
    policy_positions: tuple[np.ndarray, np.ndarray, list[GameBatch]],
) -> None:
    """With ``greedy=false`` the policy samples legal moves only, the same ones for the same seed, other ones
    for another; on one position 20,000 draws follow the legal softmax (chi-square)."""
    observations, masks, _ = policy_positions
    bot = make_batched(f"{ZOO}:greedy=false", STANDARD_DECK)
    assert isinstance(bot, BatchedPolicy) and not bot.greedy
    first = bot.act_batch(observations, masks, np.random.default_rng(1))
    assert masks[np.arange(first.size), first].all()
    np.testing.assert_array_equal(first, bot.act_batch(observations, masks, np.random.default_rng(1)))
    assert (first != bot.act_batch(observations, masks, np.random.default_rng(2))).sum() > 10
    greedy = make_batched(ZOO, STANDARD_DECK).act_batch(observations, masks, np.random.default_rng(1))
    assert (first != greedy).sum() > 10
    # A position with several likely moves whose legal softmax is far from uniform (so that neither a
    # uniform draw nor the greedy move passes for it).
    logits = np.where(masks, bot.logits(observations), -np.inf).astype(np.float64)
    probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    uniform = masks / masks.sum(axis=1, keepdims=True)
    distance = np.abs(probabilities - uniform).sum(axis=1) / 2
    likely = (probabilities > 0.05).sum(axis=1)
    row = int(np.argmax(np.where(distance > 0.2, likely, 0)))
    assert likely[row] >= 3 and distance[row] > 0.2
    draws = bot.act_batch(
        np.repeat(observations[row : row + 1], 20_000, axis=0),
        np.repeat(masks[row : row + 1], 20_000, axis=0),
        np.random.default_rng(3),
    )
    observed = np.bincount(draws, minlength=STANDARD_DECK.num_actions)
    assert not observed[~masks[row]].any()
    statistic, dof = chi_square(observed[masks[row]], 20_000 * probabilities[row, masks[row]])
    assert dof >= 1 and statistic < chi_square_bound(dof)


# -- make_batched ----------------------------------------------------------------------------------
def test_make_batched_builds_heuristics_from_specs() -> None:
    """Names with options build the batched heuristics with those options, for either deck."""
    cautious = make_batched("cautious", GERMAN_DECK)
    assert isinstance(cautious, BatchedCautious) and cautious.deck == GERMAN_DECK
    majority = make_batched("majority:open_min=2,keep_min=1", STANDARD_DECK)
    assert isinstance(majority, BatchedMajority) and (majority.open_min, majority.keep_min) == (2, 1)
    default = make_batched("majority", STANDARD_DECK)
    assert isinstance(default, BatchedMajority) and (default.open_min, default.keep_min) == (3, 2)
    assert isinstance(make_batched("random", GERMAN_DECK), BatchedRandom)
    for bot in (cautious, majority, default):
        assert isinstance(bot, BatchedAgent)
        assert make_batched(bot, bot.deck) is bot


def test_make_batched_builds_policies_from_every_form() -> None:
    """A zoo name, a checkpoint path (text or ``Path``, with options), an ``MLPPolicy`` and a scalar
    ``Friday13PolicyAgent`` all become a ``BatchedPolicy`` of that network."""
    zoo_agent = agents.make(ZOO)
    assert isinstance(zoo_agent, Friday13PolicyAgent)
    fingerprint = zoo_agent.policy.fingerprint()
    from_name = make_batched(ZOO, STANDARD_DECK)
    assert isinstance(from_name, BatchedPolicy) and from_name.policy.fingerprint() == fingerprint
    checkpoint = read_friday13_policy(CHECKPOINT).fingerprint()
    assert checkpoint != fingerprint
    for spec in (str(CHECKPOINT), CHECKPOINT, f"{CHECKPOINT}:greedy=false"):
        bot = make_batched(spec, STANDARD_DECK)
        assert isinstance(bot, BatchedPolicy) and bot.policy.fingerprint() == checkpoint
        assert bot.greedy == (spec != f"{CHECKPOINT}:greedy=false")
    policy = zoo_agent.policy
    assert isinstance(policy, MLPPolicy)
    from_policy = make_batched(policy, STANDARD_DECK)
    assert isinstance(from_policy, BatchedPolicy) and from_policy.policy is policy and from_policy.greedy
    from_agent = make_batched(zoo_agent, STANDARD_DECK)
    assert isinstance(from_agent, BatchedPolicy) and from_agent.policy is policy and from_agent.name == ZOO
    sampling = make_batched(agents.make(ZOO, greedy=False), STANDARD_DECK)
    assert isinstance(sampling, BatchedPolicy) and not sampling.greedy


@pytest.mark.parametrize("name", agents.REGISTRY.batched_names())
def test_each_batched_form_is_registered_with_its_agent_and_takes_its_options(name: str) -> None:
    """``register`` names the batched form beside the agent: it takes the deck, then exactly the agent's options."""
    batched = agents.REGISTRY.batched_factory(name)
    assert batched is not None and batched.name == name
    assert set(constructor_options(batched)) == {"deck", *agents.options_of(name)}
    assert isinstance(batched(STANDARD_DECK), BatchedAgent)


@pytest.mark.parametrize("name", ["search", "endgame", "search:budget=100"])
def test_make_batched_refuses_agents_without_a_batched_version(name: str) -> None:
    with pytest.raises(
        ValueError, match=r"has no batched version; batched agents: \['cautious', 'majority', 'random'\]"
    ):
        make_batched(name, STANDARD_DECK)


@pytest.mark.parametrize(
    ("spec", "pattern"),
    [
        ("nosuchagent", "unknown Friday the 13th agent 'nosuchagent'"),
        ("majority:foo=1", r"agent 'majority' has no option\(s\) \['foo'\]"),
        ("cautious:open_min=2", r"agent 'cautious' has no option\(s\) \['open_min'\]"),
        ("random:greedy=false", r"agent 'random' has no option\(s\) \['greedy'\]"),
        ("majority:open_min=0", "open_min"),
        ("majority:keep_min=1.5", "keep_min"),
        (f"{ZOO}:temperature=2", r"has no option\(s\) \['temperature'\]"),
        ("missing/policy.npz", "no policy checkpoint"),
        ("", "empty agent spec"),
    ],
)
def test_make_batched_refuses_unknown_names_and_options(spec: str, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        make_batched(spec, STANDARD_DECK)


def test_make_batched_refuses_a_policy_of_the_other_deck() -> None:
    """A standard-deck policy, in any form, at a German table (and a German heuristic at a standard one)
    is refused naming both decks."""
    zoo_agent = agents.make(ZOO)
    assert isinstance(zoo_agent, Friday13PolicyAgent)
    both = r"'standard' deck, but this table plays the 'german' deck"
    for spec in (ZOO, str(CHECKPOINT), zoo_agent.policy, zoo_agent):
        with pytest.raises(ValueError, match=both):
            make_batched(spec, GERMAN_DECK)
    with pytest.raises(ValueError, match=r"plays the 'german' deck, this table the 'standard' deck"):
        make_batched(BatchedCautious(GERMAN_DECK), STANDARD_DECK)
