"""``netsearch``: ``search`` whose sampled worlds are played out by a trained policy at every seat.

Why: ``search`` finishes each sampled world with ``majority``'s rules, far weaker than the shipped networks, so at a
table of networks it values a move by a future that will not happen. Here the rest of the round is played by a
policy (by default the zoo's ``ppo-v4``) in every seat, the observer's included: the search asks "what if I play this
card, and then everyone plays as the network would?", which is one step of policy improvement on the network.

The method is ``search``'s: each decision samples worlds (the unseen cards dealt into the other hands and the
3-player dummy hand, ``search.WorldSampler``), plays every legal move in every world (common random numbers), rolls
the round out and keeps the move with the best mean outcome (``search.outcomes``: relative points, the win share in
the last round). The rollouts run on the batched engine, one ``GameBatch`` row per (move, world), all rows in
lockstep: one observation encoding, one forward pass of the network and one engine step per card played.

The network plus search is a registry name of its own because it costs far more per move than the network alone (its
cost and strength: ``docs/agents.md``). The registry names it by entry point: this module is built on the batched
engine, whose agents are resolved through the registry.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from friday13_env.core.options import count_option
from friday13_env.core.registry import check_seed
from friday13_env.core.specs import shown
from friday13_env.core.zoo import policy_path
from friday13_env.friday13.agents.base import Observation, agent_rng, checked
from friday13_env.friday13.agents.policy import ZOO_PACKAGE, load_policy_agent
from friday13_env.friday13.agents.search import MAX_WORLDS, WorldSampler, check_objective, outcomes
from friday13_env.friday13.agents.table import Table
from friday13_env.friday13.batched.agents import BatchedPolicy, act
from friday13_env.friday13.batched.engine import DUMMY_SLOT, GameBatch
from friday13_env.friday13.cards import NUM_PILES

DEFAULT_POLICY = "ppo-v4"
"""The zoo policy that plays every seat of the rollouts."""
DEFAULT_WORLDS = 32
"""Sampled worlds per decision; every legal move is played out in each of them."""


class NetSearchAgent:
    """Determinised search with a policy's rollouts; see the module docstring for the method.

    Options: ``policy`` (a zoo name or a checkpoint path, default ``ppo-v4``), ``worlds`` (sampled worlds per decision,
    1 to ``search.MAX_WORLDS``), ``objective`` (``search``'s: ``rank`` or ``relative``). A forced move is played
    without a search.
    """

    name = "netsearch"

    def __init__(
        self,
        seed: int | None = None,
        *,
        policy: str = DEFAULT_POLICY,
        worlds: int = DEFAULT_WORLDS,
        objective: str = "rank",
    ) -> None:
        # Every option is checked before the policy file is read.
        if not isinstance(policy, str | Path) or not str(policy):
            raise ValueError(f"{self.name} option policy must be a zoo name or a checkpoint path, got {shown(policy)}")
        takes = f"an int in 1..{MAX_WORLDS} (sampled worlds per decision)"
        self.worlds = count_option("worlds", worlds, maximum=MAX_WORLDS, owner=self.name, takes=takes)
        self.objective = check_objective(objective, self.name)
        check_seed(seed)
        try:
            path = policy_path(ZOO_PACKAGE, policy)
        except ValueError as error:
            raise ValueError(f"{self.name} option policy: {error}") from error
        self.policy = load_policy_agent(path, name=str(policy))
        self.rollout_policy = BatchedPolicy(self.policy.policy, str(policy))
        self.rng = agent_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed in place, as building the agent anew with ``seed`` would (the evaluation's hook)."""
        self.rng = agent_rng(seed)

    def act(self, observation: Observation) -> int:
        deck, vector, legal = checked(observation, self.name)
        self.policy.check_deck(deck)
        if legal.size == 1:
            return int(legal[0])
        return self.search(Table.decode(deck, vector, legal, self.name))[0]

    def search(self, table: Table) -> tuple[int, dict[int, float]]:
        """The chosen action and every legal action's mean outcome (higher is better)."""
        self.policy.check_deck(table.deck)  # as in act: a table of another deck is refused, naming both
        legal = table.legal
        hands = WorldSampler(table).sample(self.rng, self.worlds)
        batch = worlds_batch(table, hands, seed=int(self.rng.integers(2**63)))
        points = play_out(batch, legal, self.rollout_policy, self.rng)
        points = points[: table.num_players].reshape(table.num_players, len(legal), self.worlds)
        final_round = table.rounds_left == 1 and self.objective == "rank"
        means = outcomes(points, np.array(table.scores), final_round).mean(axis=1)
        return legal[int(np.argmax(means))], dict(zip(legal, means.tolist(), strict=True))


def worlds_batch(table: Table, hands: np.ndarray, seed: int) -> GameBatch:
    """A ``GameBatch`` holding ``table``'s position in every world of ``hands`` once per legal move (rows move-major).

    ``hands`` (W, n + 1, K) are ``WorldSampler.sample``'s: relative seats, the observer's own in seat 0, the dummy hand
    in row n. The batch's seats are the table's relative seats (the observer is seat 0 and to move): the rules and
    the player-relative observations do not depend on where the table's seat numbers start. ``seed`` seeds the
    batch's own deals, which the rollouts never reach (they end with the round).
    """
    deck, n = table.deck, table.num_players
    rows = len(table.legal) * hands.shape[0]
    batch = GameBatch(
        rows, num_players=n, deck=deck, num_rounds=table.round_index + table.rounds_left, seed=seed, autoreset=False
    )
    tiled = np.tile(hands, (len(table.legal), 1, 1))
    batch.hands[:] = 0
    batch.hands[:, :n] = tiled[:, :n]
    if table.has_dummy:
        batch.hands[:, DUMMY_SLOT] = tiled[:, n]
    batch.hand_sizes[:] = batch.hands.sum(axis=2)
    batch.played[:] = np.array(deck.kind_counts) - np.array(table.hand) - np.array(table.unseen)
    pile_counts = np.array(table.pile_counts)
    values = deck.num_values
    for pile in range(NUM_PILES):
        batch.pile_cards[:, pile, :values] = pile_counts[pile, pile * values : (pile + 1) * values]
        batch.pile_cards[:, pile, values] = pile_counts[pile, deck.friday_kind]
    batch.pile_totals[:] = table.pile_totals
    batch.pile_sizes[:] = pile_counts.sum(axis=1)
    batch.captured[:] = 0
    batch.captured[:, :n] = table.captured
    batch.scores[:] = 0
    batch.scores[:, :n] = table.scores
    batch.round[:] = table.round_index
    batch.current[:] = 0
    batch.plays_left[:] = sum(table.hand_sizes)
    return batch


def play_out(batch: GameBatch, legal: list[int], policy: BatchedPolicy, rng: np.random.Generator) -> np.ndarray:
    """Round points (6, rows) of every seat after the observer plays ``legal[row // W]`` and ``policy`` plays every
    seat from then on to the end of the round (``W`` = rows / moves)."""
    result = batch.step(np.repeat(np.array(legal, dtype=np.int64), batch.num_games // len(legal)))
    while not result.round_over.any():  # the rows are in lockstep: every round ends at the same play
        result = batch.step(act(policy, batch, batch.game_indices(None), rng))
    return result.round_points.T
