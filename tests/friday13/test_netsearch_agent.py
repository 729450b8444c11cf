"""The ``netsearch`` agent: its batched worlds are the real position, its rollouts are the policy's own play on the
rules engine, and it is a well-behaved agent (options, seeds, legal full games)."""

from __future__ import annotations

import numpy as np
import pytest

from friday13_env import agents, raw_env
from friday13_env.friday13.agents.netsearch import NetSearchAgent, play_out, worlds_batch
from friday13_env.friday13.agents.search import MAX_WORLDS, WorldSampler, outcomes
from friday13_env.friday13.agents.table import Table
from friday13_env.friday13.batched.agents import BatchedPolicy
from friday13_env.friday13.batched.encoding import encode_observations
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import encode_observation
from friday13_env.friday13.engine import Rules, legal_actions, new_game, next_round, play
from friday13_env.friday13.evaluation.duplicate import play_game

POLICY = agents.make("ppo-v4")


def positions(num_players: int, seed: int, games: int, deck: str = "standard", num_rounds: int = 4) -> list:
    """One position in play (a copy) from every round of ``games`` random games at a table of ``num_players``, each
    after a random number of the round's plays (later rounds have scores)."""
    rng = np.random.default_rng(seed)
    rules = Rules(num_players=num_players, deck=get_deck(deck), num_rounds=num_rounds)
    found = []
    for _ in range(games):
        state = new_game(rules, rng)
        while not state.game_over:
            if state.round_over:
                next_round(state, rng)
            for _ in range(int(rng.integers(state.plays_left))):
                play(state, int(rng.choice(legal_actions(state))))
            found.append(state.copy())
            while not state.round_over:
                play(state, int(rng.choice(legal_actions(state))))
    return found


def true_world(state) -> np.ndarray:
    """The position's real hands as ``WorldSampler`` lays a world out: relative seats from the player to move, then
    the dummy hand (zeros without one)."""
    n, me = state.rules.num_players, state.current
    hands = [state.hands[(me + offset) % n] for offset in range(n)]
    dummy = state.dummy if state.dummy is not None else [0] * len(state.hands[0])
    return np.array([[*hands, dummy]])


def table_of(state) -> Table:
    deck = state.rules.deck
    return Table.decode(deck, encode_observation(state, state.current), np.array(legal_actions(state)), "test")


def greedy_round(state, first: int) -> list[int]:
    """The round's points (relative seats from the player to move) after it plays ``first`` and the policy plays
    every seat greedily from then on, card by card on the rules engine."""
    me, n = state.current, state.rules.num_players
    state = state.copy()
    play(state, first)
    while not state.round_over:
        legal = np.array(legal_actions(state))
        play(state, POLICY.decide(encode_observation(state, state.current), legal))
    points = state.last_round_points
    return [points[(me + offset) % n] for offset in range(n)]


@pytest.mark.parametrize(
    ("num_players", "deck", "num_rounds"),
    [
        (3, "standard", 4),
        (4, "standard", 4),
        (5, "german", 4),
        (6, "standard", 4),
        (3, "german", 1),
        (4, "standard", 7),
    ],
)
def test_a_world_of_the_real_hands_is_the_real_position(num_players: int, deck: str, num_rounds: int) -> None:
    """Every row of the batch shows the observer exactly its own observation: the batch is the position, in every
    block (hand, piles, unseen, captured, sizes, round, scores, previews), in every round, for both decks."""
    for state in positions(num_players, seed=num_players, games=2, deck=deck, num_rounds=num_rounds):
        table = table_of(state)
        batch = worlds_batch(table, true_world(state), seed=0)
        rows = np.arange(batch.num_games)
        seen = encode_observations(batch, rows, np.zeros_like(rows))
        assert np.array_equal(seen, np.tile(encode_observation(state, state.current), (rows.size, 1)))


@pytest.mark.parametrize("num_players", [3, 4, 6])
def test_the_rollouts_are_the_policys_own_play_on_the_rules_engine(num_players: int) -> None:
    """Each legal move played out in the real world by the batch gives the round points that the scalar engine gives
    when the same policy plays every seat card by card."""
    policy = BatchedPolicy(POLICY.policy, "ppo-v4")
    for state in positions(num_players, seed=10 + num_players, games=1):
        table = table_of(state)
        batch = worlds_batch(table, true_world(state), seed=0)
        points = play_out(batch, table.legal, policy, np.random.default_rng(0))[:num_players]
        for row, move in enumerate(table.legal):
            assert points[:, row].tolist() == greedy_round(state, move)


def in_world(state, world: np.ndarray):
    """A copy of ``state`` whose hidden hands are ``world``'s (``WorldSampler``'s layout: relative seats, then the
    dummy hand)."""
    n, me = state.rules.num_players, state.current
    state = state.copy()
    for offset in range(n):
        state.hands[(me + offset) % n] = world[offset].tolist()
    if state.dummy is not None:
        state.dummy = world[n].tolist()
    return state


@pytest.mark.parametrize(("objective", "last_round"), [("rank", True), ("rank", False), ("relative", True)])
def test_each_move_is_valued_by_the_mean_outcome_of_its_rollouts_in_the_sampled_worlds(
    objective: str, last_round: bool
) -> None:
    """``search``'s values, recomputed on the rules engine: the agent's own worlds (the same seeded stream), each move
    played out card by card by the policy in each of them, the outcome of each finished round (the win share in the
    last round with ``rank``, relative points otherwise) averaged over the worlds; the move with the best mean is
    played."""
    found = positions(4, seed=21, games=1, num_rounds=3)
    state = next(s for s in found if (table_of(s).rounds_left == 1) == last_round and len(legal_actions(s)) > 2)
    table = table_of(state)
    worlds = 3
    hands = WorldSampler(table).sample(np.random.default_rng(5), worlds)  # the agent's first draws, with seed 5
    agent = NetSearchAgent(seed=5, worlds=worlds, objective=objective)
    chosen, values = agent.search(table)
    final_round = last_round and objective == "rank"
    expected = {
        move: float(
            np.mean(
                [
                    outcomes(np.array(greedy_round(in_world(state, world), move)), np.array(table.scores), final_round)
                    for world in hands
                ]
            )
        )
        for move in table.legal
    }
    assert values == pytest.approx(expected, abs=1e-12)
    assert chosen == max(expected, key=expected.__getitem__)


def test_options_are_checked_before_the_policy_is_read() -> None:
    for worlds in (0, MAX_WORLDS + 1, 1.5, True, "8"):
        with pytest.raises(ValueError, match=f"worlds.*1..{MAX_WORLDS}"):
            NetSearchAgent(worlds=worlds, policy="no-such-policy")
    with pytest.raises(ValueError, match="objective must be one of"):
        NetSearchAgent(objective="best", policy="no-such-policy")
    with pytest.raises(ValueError, match="option policy must be a zoo name or a checkpoint path"):
        NetSearchAgent(policy="")
    with pytest.raises(ValueError, match="netsearch option policy"):
        NetSearchAgent(policy="no-such-policy")


def play_one(agent: object, num_players: int, seed: int) -> list[int]:
    env = raw_env(num_players=num_players)
    others = [agents.make("ppo-v4", seed=seat) for seat in range(num_players - 1)]
    return play_game(env, [agent, *others], seed)


@pytest.mark.parametrize("num_players", [3, 6])
def test_plays_whole_legal_games_and_the_same_seed_plays_the_same_game(num_players: int) -> None:
    moves: list[list[int]] = [[], []]
    for run in range(2):
        agent = agents.make("netsearch:worlds=4", seed=7)
        act = agent.act
        agent.act = lambda observation, run=run, act=act: moves[run].append(act(observation)) or moves[run][-1]
        play_one(agent, num_players, seed=3)
    assert moves[0] == moves[1] and len(moves[0]) > 10


def test_reset_plays_as_a_new_agent_with_that_seed() -> None:
    state = positions(4, seed=1, games=1)[0]
    observation = {
        "observation": encode_observation(state, state.current),
        "action_mask": np.isin(np.arange(state.rules.deck.num_actions), legal_actions(state)).astype(np.int8),
    }
    fresh = [NetSearchAgent(seed=5, worlds=2).search(table_of(state))[1] for _ in range(2)]
    used = NetSearchAgent(seed=9, worlds=2)
    used.act(observation)
    used.reset(5)
    assert fresh[0] == fresh[1] == used.search(table_of(state))[1]
