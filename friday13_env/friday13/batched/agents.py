"""Batched agents: ``random``, ``cautious``, ``majority`` and network policies deciding for many games at once.

A batched agent's ``act_batch`` takes ``(m, D)`` observations and ``(m, A)`` legal masks (what ``encode_observations``
and ``GameBatch.legal_mask`` give) and returns ``(m,)`` actions. ``cautious`` and ``majority`` make
exactly the moves of their scalar versions in :mod:`friday13_env.friday13.agents.heuristics` on every
observation: the same decisions, ties broken the same way, and the same floating-point prices (the
majority odds are read from a table that the scalar function itself fills). ``random`` is uniform
over the legal actions. A policy is any :class:`~friday13_env.core.mlp.MLPPolicy` (a zoo name, a
checkpoint path, or a frozen snapshot in memory) run as one forward pass for the whole batch.

``make_batched(spec)`` builds one from the same specs as ``agents.make`` (``"majority:open_min=2"``,
``"ensemble-v1"``, a checkpoint path): a registered name gives the batched form registered with it
(:mod:`friday13_env.friday13.agents.registry`); the search agents have none.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Protocol, runtime_checkable

import numpy as np

from friday13_env.core.agent import check_mask_values, check_observation_values
from friday13_env.core.checks import check_rng, exact_array
from friday13_env.core.mlp import MLPPolicy
from friday13_env.core.options import count_option
from friday13_env.core.specs import AgentSpec, parse_spec
from friday13_env.friday13.agents.heuristics import CLEAN_KEEP_MIN, CLEAN_OPEN_MIN, HIGH_VALUE, majority_odds
from friday13_env.friday13.agents.policy import Friday13PolicyAgent
from friday13_env.friday13.agents.registry import REGISTRY
from friday13_env.friday13.batched.encoding import encode_observations
from friday13_env.friday13.batched.engine import DUMMY_SLOT, HAND_SLOTS, GameBatch, deck_tables, nth_from_prefix
from friday13_env.friday13.cards import CAPTURE_LIMIT, FRIDAY_POINTS, NUM_PILES, OMEN_POINTS, Deck, as_deck, get_deck
from friday13_env.friday13.encoding import observation_layout
from friday13_env.friday13.engine import DUMMY_PLAYER_COUNT

SAFE_FIRST = 1 << 16
"""Added to the keys of safe moves so that they outrank every capture (those keys stay below 2,048)."""
WANTED_FIRST = 1 << 20
"""Added to the keys of ``majority``'s wanted captures so that they outrank every ``cautious`` key."""
_ODDS_RANGE = 40
"""The majority-odds table covers leads in -40..40 and outstanding cards in 0..40 (a deck type has 15)."""


@runtime_checkable
class BatchedAgent(Protocol):
    """Decides for many games at once: ``act_batch(observations, masks, rng) -> actions`` (named apart from
    the scalar agents' ``act``, so neither kind is mistaken for the other)."""

    name: str

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...


def checked_batch(observations: np.ndarray, masks: np.ndarray, agent: str, deck: Deck) -> tuple[np.ndarray, np.ndarray]:
    """``(m, D)`` observations and ``(m, A)`` boolean masks of ``deck`` for the ``act_batch`` of ``agent``, an agent
    that reads the observations, after the checks its scalar version makes of each observation
    (:func:`friday13_env.core.agent.checked_observation`): a ``ValueError`` naming the agent and the problem, before
    any work. The one check of every reading batched agent's input: the masks as ``checked_masks`` takes them, the
    observations 2-d, one row per mask row, finite and non-negative, as a table gives them.
    A handful of vectorised reductions, cheap beside the work they guard; training's heuristics read their tables
    straight from the engine (``act_table``) and skip them.
    """
    observations = np.asarray(observations)
    size = observation_layout(deck).size
    for_deck = f" for the {deck.name!r} deck"
    if observations.ndim != 2 or observations.shape[1] != size:
        raise ValueError(f"{agent}: expected observations of shape (m, {size}){for_deck}, got {observations.shape}")
    legal = checked_masks(masks, agent, observations.shape[0], deck.num_actions, for_deck)
    check_observation_values(observations, agent, nonnegative=True)
    return observations, legal


def checked_masks(
    masks: np.ndarray, agent: str, rows: int | None = None, num_actions: int | None = None, for_deck: str = ""
) -> np.ndarray:
    """``(m, A)`` masks as booleans for the ``act_batch`` of ``agent``, or a ``ValueError`` naming it: 2-d (a 1-d mask
    is not broadcast), ``rows`` rows and ``num_actions`` columns where given, only 0 and 1 in any numeric dtype (a 0.5
    is not cast to legal), and a legal action in every row (not "action 0"). ``random`` checks only these (it reads no
    observation, as its scalar version does); the agents that read them check both through ``checked_batch``."""
    masks = np.asarray(masks)
    shown_rows = "m" if rows is None else rows
    shown_actions = "A" if num_actions is None else num_actions
    if (
        masks.ndim != 2
        or (rows is not None and masks.shape[0] != rows)
        or (num_actions is not None and masks.shape[1] != num_actions)
    ):
        raise ValueError(
            f"{agent}: expected masks of shape ({shown_rows}, {shown_actions}){for_deck} (one row per observation), "
            f"got {masks.shape}"
        )
    check_mask_values(masks, agent)
    legal = masks if masks.dtype == bool else masks != 0
    playable = legal.any(axis=1)
    if not playable.all():
        raise ValueError(
            f"{agent}: every observation needs a legal action; row {int(np.argmin(playable))} of the masks has none"
        )
    return legal


@dataclass(frozen=True)
class TableBatch:
    """What the heuristics read from a batch of observations, as int arrays (observer = relative seat 0)."""

    deck: Deck
    hand: np.ndarray
    """``(m, K)`` the observer's cards."""
    pile_totals: np.ndarray
    pile_omens: np.ndarray
    """``(m, 3)`` omen cards lying in each pile."""
    pile_fridays: np.ndarray
    mine: np.ndarray
    """``(m, 4)`` the observer's captured cards by type."""
    rivals: np.ndarray
    """``(m, 4)`` the most captured cards of each type among the other seats."""
    outstanding: np.ndarray
    """``(m, 3)`` cards of each omen type still capturable this round (the scalar ``Table.outstanding``)."""
    legal: np.ndarray

    @classmethod
    def read(cls, observations: np.ndarray, masks: np.ndarray, deck: Deck, agent: str = "agent") -> TableBatch:
        """What the heuristics read from ``(m, D)`` observations of ``deck`` and their ``(m, A)`` masks, once
        ``checked_batch`` has refused what the scalar heuristics refuse (a ``ValueError`` naming ``agent``)."""
        layout = observation_layout(deck)
        observations, masks = checked_batch(observations, masks, agent, deck)

        def block(name: str) -> np.ndarray:
            shape = next(b.shape for b in layout.blocks if b.name == name)
            return np.rint(observations[:, layout.slices[name]]).astype(np.int64).reshape(-1, *shape)

        pile_cards = block("pile_cards")
        fridays = pile_cards[:, :, deck.friday_kind]
        captured = block("captured")
        unseen = block("unseen")
        per_type = sum(deck.omen_copies)
        unseen_total = unseen.sum(axis=1)
        unseen_of_type = unseen[:, : deck.friday_kind].reshape(-1, NUM_PILES, deck.num_values).sum(axis=2)
        dummy_size = unseen_total - block("hand_sizes")[:, 1:].sum(axis=1)
        has_dummy = (block("dummy")[:, 0] == 1) & (unseen_total > 0)
        share = np.where(
            has_dummy[:, None], unseen_of_type * dummy_size[:, None] // np.maximum(unseen_total, 1)[:, None], 0
        )
        return cls(
            deck=deck,
            hand=block("hand"),
            pile_totals=block("pile_totals"),
            pile_omens=pile_cards.sum(axis=2) - fridays,
            pile_fridays=fridays,
            mine=captured[:, 0],
            rivals=captured[:, 1:].max(axis=1),
            outstanding=per_type - captured[:, :, :NUM_PILES].sum(axis=1) - share,
            legal=masks,
        )

    @classmethod
    def from_batch(cls, batch: GameBatch, games: np.ndarray) -> TableBatch:
        """What the player to move in each of ``games`` would read from its observation, taken straight from
        the engine's arrays (no observation is encoded): equal to ``read`` of that observation."""
        deck = batch.deck
        games = batch.game_indices(games)
        rows = np.arange(games.size)
        current = batch.current[games]
        # Seat-major, so the reductions over seats run over whole rows.
        captured = np.ascontiguousarray(batch.captured[games].transpose(1, 0, 2))  # (seat, game, type)
        mine = captured[current, rows].astype(np.int64)
        captured[current, rows] = 0  # counts are never negative, so the rivals' most is the max over the rest
        fridays = batch.pile_cards[games, :, deck.num_values].astype(np.int64)
        hands = batch.hands.reshape(-1, deck.num_kinds)
        own = hands.take(games * HAND_SLOTS + current, axis=0).astype(np.int64)
        share = np.zeros((games.size, NUM_PILES), dtype=np.int64)
        three = np.flatnonzero(batch.num_players[games] == DUMMY_PLAYER_COUNT)
        if three.size:  # the dummy hand's expected share of the unseen cards of each type
            unseen = batch.tables.kind_counts - batch.played[games[three]] - own[three]
            unseen_total = unseen.sum(axis=1)
            by_type = unseen[:, : deck.friday_kind].reshape(-1, NUM_PILES, deck.num_values).sum(axis=2)
            dummy = batch.hand_sizes[games[three], DUMMY_SLOT]
            share[three] = by_type * dummy[:, None] // np.maximum(unseen_total, 1)[:, None]
        taken = captured[:, :, :NUM_PILES].sum(axis=0, dtype=np.int64) + mine[:, :NUM_PILES]
        return cls(
            deck=deck,
            hand=own,
            pile_totals=batch.pile_totals[games],
            pile_omens=batch.pile_sizes[games] - fridays,
            pile_fridays=fridays,
            mine=mine,
            rivals=captured.max(axis=0).astype(np.int64),
            outstanding=sum(deck.omen_copies) - taken - share,
            legal=batch.legal_mask(games),
        )

    def expected_points(self, extra: np.ndarray) -> np.ndarray:
        """``(m, 3)``: the observer's expected points from each omen type with ``extra`` more cards of it
        (the scalar ``expected_type_points``, with the same float operations)."""
        mine = self.mine[:, :NUM_PILES] + extra
        lead = mine - self.rivals[:, :NUM_PILES]
        outstanding = np.maximum(self.outstanding - extra, 0)
        odds = odds_table()[
            np.clip(lead, -_ODDS_RANGE, _ODDS_RANGE) + _ODDS_RANGE, np.minimum(outstanding, _ODDS_RANGE)
        ]
        return (mine * OMEN_POINTS) * (1.0 - odds)

    def moves(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(m, A)`` per action: whether it captures, the pile's total after it, and its capture cost."""
        tables = deck_tables(self.deck)
        pile, value = tables.action_pile, tables.action_value
        total = self.pile_totals[:, pile] + value
        captures = total > CAPTURE_LIMIT
        pile_cost = self.expected_points(self.pile_omens) - self.expected_points(np.zeros_like(self.pile_omens))
        pile_cost = pile_cost + FRIDAY_POINTS * self.pile_fridays
        return captures, np.where(captures, value, total), pile_cost[:, pile]


@cache
def odds_table() -> np.ndarray:
    """``majority_odds(lead, outstanding)`` for every small lead and outstanding count, by the scalar function."""
    leads = range(-_ODDS_RANGE, _ODDS_RANGE + 1)
    return np.array([[majority_odds(lead, out) for out in range(_ODDS_RANGE + 1)] for lead in leads])


def cautious_actions(table: TableBatch) -> np.ndarray:
    """``cautious``' move in each game: the highest safe card (omen before Friday, then the highest pile,
    then the lowest action), or, when every legal card captures, the cheapest capture (then the highest
    card, then the lowest action)."""
    return cautious_keys(table).argmax(axis=1)


def cautious_keys(table: TableBatch) -> np.ndarray:
    """``(m, A)`` ints whose row maximum is ``cautious``' move: every safe legal move outranks every capture,
    safe moves rank by (value, omen before Friday, pile total after, lower action), captures among the
    cheapest by (higher value, lower action); other moves are -1. One key and one ``argmax`` instead of
    several reductions over short rows, which numpy makes slow."""
    tables = deck_tables(table.deck)
    actions = np.arange(table.deck.num_actions)
    value = tables.action_value
    captures, total_after, cost = table.moves()
    cheapest = table.legal & (cost == cheapest_cost(table, cost)[:, None])
    forced_key = np.where(cheapest, 1024 + value * 32 - actions, -1)
    safe_key = (value * 2 + (1 - tables.action_friday)) * 1024 + total_after * 32 + (31 - actions) + SAFE_FIRST
    return np.where(table.legal & ~captures, safe_key, forced_key)


def cheapest_cost(table: TableBatch, cost: np.ndarray) -> np.ndarray:
    """``(m,)``: the lowest capture cost among the legal moves (a move's cost is its pile's, so the minimum
    is taken over the three piles that have a legal move, not over every action)."""
    tables = deck_tables(table.deck)
    on_pile = (table.legal.astype(np.float32) @ tables.action_piles) > 0  # (m, 3): a legal move goes there
    pile_cost = cost[:, tables.first_action_of_pile]
    priced = np.where(on_pile, pile_cost, np.inf)
    return np.minimum(np.minimum(priced[:, 0], priced[:, 1]), priced[:, 2])


def majority_targets(table: TableBatch) -> np.ndarray:
    """``majority``'s target type in each game: the largest lead, then the most high cards, then the most
    cards of the type in hand, then the lowest type."""
    deck = table.deck
    by_type = table.hand[:, : deck.friday_kind].reshape(-1, NUM_PILES, deck.num_values)
    high = by_type[:, :, np.asarray(deck.omen_values) >= HIGH_VALUE].sum(axis=2)
    leads = table.mine[:, :NUM_PILES] - table.rivals[:, :NUM_PILES]
    key = ((np.maximum(leads, 0) * 64 + high) * 64 + by_type.sum(axis=2)) * 4 + (NUM_PILES - np.arange(NUM_PILES))
    return key.argmax(axis=1)


def majority_actions(table: TableBatch, open_min: int = CLEAN_OPEN_MIN, keep_min: int = CLEAN_KEEP_MIN) -> np.ndarray:
    """``majority``'s move in each game: a clean capture of its target type when it is worth it (the highest
    card, then the lower action), else ``cautious``' move."""
    tables = deck_tables(table.deck)
    rows = np.arange(table.hand.shape[0])
    target = majority_targets(table)
    lead = table.mine[rows, target] - table.rivals[rows, target]
    omens = table.pile_omens[rows, target]
    clean = table.pile_fridays[rows, target] == 0
    enough = omens >= np.where(lead > 0, keep_min, open_min)
    worth = clean & enough & (lead + omens > 0)
    captures = table.pile_totals[rows, target][:, None] + tables.action_value > CAPTURE_LIMIT
    wanted = table.legal & captures & (tables.action_pile == target[:, None]) & worth[:, None]
    wanted_key = tables.action_value * 32 + (31 - np.arange(table.deck.num_actions)) + WANTED_FIRST
    return np.where(wanted, wanted_key, cautious_keys(table)).argmax(axis=1)


def nth_legal(masks: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """The ``floor(u * L)``-th legal action of each row (``L`` legal actions), the scalar rule for a uniform draw."""
    size = masks.shape[1]
    prefix = masks.astype(np.float32) @ np.triu(np.ones((size, size), dtype=np.float32))
    return nth_from_prefix(prefix, np.asarray(uniforms, dtype=np.float64))


class BatchedRandom:
    """Uniform over the legal actions of each game."""

    name = "random"

    def __init__(self, deck: Deck) -> None:
        """``deck`` is every batched form's first argument; this one plays any deck (it reads only the masks)."""

    def act_batch(self, observations: np.ndarray | None, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A uniform legal action per row of ``masks``. The observations are not read (``None`` will do); given,
        they must have one row per mask row, the one thing that says they belong to these masks."""
        rows = None
        if observations is not None:
            shape = np.shape(observations)
            if not shape:
                raise ValueError(f"{self.name}: expected observations with one row per game, got a scalar")
            rows = shape[0]
        masks = checked_masks(masks, self.name, rows)
        check_rng(rng)
        return nth_legal(masks, np.asarray(rng.random(masks.shape[0])))


class BatchedCautious:
    """``cautious`` for a batch (the scalar agent's moves exactly)."""

    name = "cautious"

    def __init__(self, deck: Deck) -> None:
        self.deck = deck

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.act_table(TableBatch.read(observations, masks, self.deck, self.name), rng)

    def act_table(self, table: TableBatch, rng: np.random.Generator) -> np.ndarray:
        """The moves for tables already read (``TableBatch.read`` or ``TableBatch.from_batch``)."""
        return cautious_actions(table)


class BatchedMajority:
    """``majority`` for a batch (the scalar agent's moves exactly), with the same options."""

    name = "majority"

    def __init__(self, deck: Deck, open_min: int = CLEAN_OPEN_MIN, keep_min: int = CLEAN_KEEP_MIN) -> None:
        takes = "an int >= 1 (clean target cards to take a pile)"
        self.deck = deck
        self.open_min = count_option("open_min", open_min, owner=self.name, takes=takes)
        self.keep_min = count_option("keep_min", keep_min, owner=self.name, takes=takes)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.act_table(TableBatch.read(observations, masks, self.deck, self.name), rng)

    def act_table(self, table: TableBatch, rng: np.random.Generator) -> np.ndarray:
        """The moves for tables already read (``TableBatch.read`` or ``TableBatch.from_batch``)."""
        return majority_actions(table, self.open_min, self.keep_min)


class BatchedPolicy:
    """A numpy network for a batch: one forward pass, then the best legal logit (or a sample of the legal softmax)."""

    def __init__(self, policy: MLPPolicy, name: str = "policy", greedy: bool = True) -> None:
        self.policy = policy
        self.name = name
        self.greedy = greedy
        self.deck = get_deck(policy.metadata.deck)

    def logits(self, observations: np.ndarray) -> np.ndarray:
        return self.policy.logits(np.asarray(observations, dtype=np.float32))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        observations, masks = checked_batch(observations, masks, self.name, self.deck)
        masked = np.where(masks, self.logits(observations), -np.inf)
        if self.greedy:
            return masked.argmax(axis=1)
        gumbel = -np.log(-np.log(rng.random(masked.shape)))
        return (masked + gumbel).argmax(axis=1)


def act(agent: BatchedAgent, batch: GameBatch, games: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``agent``'s moves for the players to move in ``games``: heuristics read the engine's arrays directly
    (``act_table``), every other agent gets the encoded observations and masks."""
    act_table = getattr(agent, "act_table", None)
    what = f"the actions batched agent {agent.name!r} answered"  # a bool in a list is refused, not read as 0 or 1
    if act_table is not None:
        table = TableBatch.from_batch(batch, games)
        checked_masks(table.legal, agent.name)  # a finished game has no move, as ``act_batch`` says
        return exact_array(act_table(table, rng), what)
    return exact_array(agent.act_batch(encode_observations(batch, games), batch.legal_mask(games), rng), what)


def make_batched(spec: str | os.PathLike[str] | AgentSpec | MLPPolicy | BatchedAgent, deck: Deck | str) -> BatchedAgent:
    """The batched agent a spec names (as ``agents.make`` reads it), a policy in memory, or a batched agent as it is,
    for a table of ``deck`` (a ``Deck`` or a deck's name, as the environments take it; anything else is a
    ``ValueError`` listing the names, before anything is built).

    A policy or batched agent made for another deck is refused, naming both decks (a batched agent says which deck it
    plays by a ``deck`` attribute, a ``Deck`` or a deck's name).
    """
    deck = as_deck(deck)
    if isinstance(spec, type):  # a class passes the protocol's check, and fails at its first move
        raise ValueError(f"{spec.__name__} is a class, not an agent: give an instance, or a spec such as 'cautious'")
    if isinstance(spec, MLPPolicy):
        return _checked_deck(BatchedPolicy(spec), deck)
    if isinstance(spec, Friday13PolicyAgent):
        return _checked_deck(BatchedPolicy(spec.policy, spec.name, greedy=spec.greedy), deck)
    if isinstance(spec, BatchedAgent) and not isinstance(spec, str | os.PathLike | AgentSpec):
        declared = getattr(spec, "deck", None)
        own = deck if declared is None else as_deck(declared, f"batched agent {spec.name!r}")
        if own != deck:
            raise ValueError(
                f"batched agent {spec.name!r} plays the {own.name!r} deck, this table the {deck.name!r} deck"
            )
        return spec
    if not isinstance(spec, str | os.PathLike | AgentSpec):
        raise ValueError(
            f"{type(spec).__name__} {getattr(spec, 'name', spec)!r} has no batched form: a batched table takes the "
            f"names {REGISTRY.batched_names()}, zoo names, .npz policies, MLPPolicy objects and batched agents "
            "(an object with act_batch); a scalar agent object plays in Friday13-v0, not in its vector form"
        )
    if isinstance(spec, os.PathLike):  # a path is always a checkpoint file, as in agents.make
        agent, label = REGISTRY.make(spec), os.fspath(spec)
    else:
        parsed = parse_spec(spec)
        batched = REGISTRY.batched_factory(parsed.name)
        if batched is not None:
            REGISTRY.check(parsed)
            built = batched(deck, **dict(parsed.options))
            built.name = parsed.label  # the spec with its options, as the scalar environment labels it
            return built
        agent, label = REGISTRY.make(parsed), parsed.label
    if not isinstance(agent, Friday13PolicyAgent):
        raise ValueError(
            f"{label!r} has no batched form: batched agents are random, cautious, majority and networks (zoo "
            "names, .npz policies)"
        )
    return _checked_deck(BatchedPolicy(agent.policy, label, greedy=agent.greedy), deck)


def _checked_deck(agent: BatchedPolicy, deck: Deck) -> BatchedPolicy:
    if agent.deck != deck:
        raise ValueError(
            f"policy {agent.name!r} was trained for the {agent.deck.name!r} deck, "
            f"but this table plays the {deck.name!r} deck"
        )
    return agent


def act_seated(
    agents: Sequence[BatchedAgent], seated: np.ndarray, batch: GameBatch, games: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """The moves at ``games``, whose players to move are agents: ``seated[game, seat]`` indexes ``agents``.

    Each agent acts once for all the games where it is to move, in the order of the indices, so the draws from
    ``rng`` follow a fixed order. An agent that answers with anything but one integer action per game in
    ``0..A - 1`` is a ``ValueError`` naming it (a float was truncated into the card below, a single action given to all
    its games, an action past the last one indexed nothing); a legal-looking card it does not hold is for the engine's
    ``step`` to refuse."""
    chosen = seated[games, batch.current[games]]
    actions = np.empty(games.size, dtype=np.int64)
    last = batch.deck.num_actions - 1
    for index in np.unique(chosen).tolist():
        which = np.flatnonzero(chosen == index)
        answer = np.asarray(act(agents[index], batch, games[which], rng))
        if answer.shape != which.shape or answer.dtype.kind not in "iu":
            raise ValueError(
                f"batched agent {agents[index].name!r} answered {answer.dtype} of shape {answer.shape} for "
                f"{which.size} games; it must give one integer action per game"
            )
        if answer.size and (answer.min() < 0 or answer.max() > last):
            bad = int(np.flatnonzero((answer < 0) | (answer > last))[0])
            raise ValueError(
                f"batched agent {agents[index].name!r} answered actions from {answer.min()} to {answer.max()} (action "
                f"{answer[bad]} in game {games[which[bad]]}); actions are in 0..{last}"
            )
        actions[which] = answer
    return actions
