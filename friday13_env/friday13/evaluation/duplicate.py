"""Duplicate play: every deal is replayed with the agents rotated through every seat.

The environment's only randomness is the shuffle, and ``raw_env.reset(seed=s)`` re-seeds it, so a
deal seed fixes all the hands of all the rounds whatever is played. Replaying a deal with each
cyclic rotation of the seat assignment puts every agent in every seat with the same cards (for
"A against 3 copies of B" at 4 players: 4 games, A in seat 0, 1, 2 and 3), so a difference between
agents reflects skill, not the luck of the deal. A rotation keeps who sits after whom, so at a mixed table
the ``permutations`` seatings play every order of the agents around the table instead (``SEATINGS``). The
games of one deal are averaged into one sample, which is what the confidence intervals are computed over.

Games are played through ``raw_env`` directly (no PettingZoo wrappers in the hot loop); each agent
only sees ``raw_env.observe`` of its own seat. With ``Chunk.replays`` (``ReplaySaving``) the games of a
matchup's first deals are also written as replay files (``friday13_env.web.record``), each by the process
that played it; recording draws nothing from any generator, so the results are the same with or without it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from friday13_env.core.agent import checked_act
from friday13_env.core.checks import check_choice
from friday13_env.core.options import count_option
from friday13_env.core.seeds import derived_seed
from friday13_env.friday13.aec import raw_env
from friday13_env.friday13.agents import Agent
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.engine import IllegalActionError, Rules
from friday13_env.friday13.evaluation.specs import Entrant, build, entrant_label
from friday13_env.friday13.evaluation.stats import average_ranks, win_shares
from friday13_env.web.record import MAX_LABEL, CardRecord, new_card_record, save

METRICS = ("win_rate", "points", "rank")
"""The per-game numbers recorded for every agent, in the order of the last axis of ``run_chunk``."""
_DEALS_KEY = 0
_AGENTS_KEY = 1
DEFAULT_REPLAY_DEALS = 2
"""Deals per matchup (or benchmark cell) whose games ``--replays`` saves, every rotation of each."""
_FILE_LABEL = 40
"""At most this many characters of the agents' labels go into a replay file's name."""
SEATINGS: dict[str, str] = {
    "rotations": "every cyclic rotation of the listed order: each agent in every seat, its neighbours as listed",
    "permutations": (
        "every distinct order of the agents around the table: each agent in every seat beside every other, so a "
        "mixed table measures the same whatever order its agents are listed in (n! games a deal at most)"
    ),
}
"""How a deal's games seat the lineup; ``"rotations"`` is the default, and the benchmark suites' seating."""


@dataclass(frozen=True)
class ReplaySaving:
    """Save the games of the first ``deals`` deals of each matchup as replay files in ``folder``.

    File names are stable and unique within a run: ``{prefix}{matchup:02d}-{players}p-{agents}-deal{k}-shift{s}.json``
    for the card game (``Chunk.replay_path``; every seat rotation of a deal is a game, ``seating{s}`` instead of
    ``shift{s}`` under the ``permutations`` seatings); the benchmark names its solo
    games ``{prefix}{agent}-level{L}-game{g}.json``. A file of the same name from an earlier run is replaced. The
    ``source`` entries go into every record's ``source``, with the deal (or game) added.
    """

    folder: Path
    deals: int = DEFAULT_REPLAY_DEALS
    prefix: str = ""
    source: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        count_option("replay deals", self.deals, takes="a positive int")

    def saves(self, deal_index: int) -> bool:
        return deal_index < self.deals

    def path(self, *parts: str) -> Path:
        """``folder/{prefix}{part-part-...}.json``."""
        return self.folder / f"{self.prefix}{'-'.join(parts)}.json"

    def source_with(self, **extra: object) -> dict[str, str]:
        """``source`` and ``extra`` as a record's source: short strings (cut at ``MAX_LABEL`` characters)."""
        entries = {**dict(self.source), **{key: str(value) for key, value in extra.items()}}
        return {key[:MAX_LABEL]: value[:MAX_LABEL] for key, value in entries.items()}


def file_label(text: str, limit: int = _FILE_LABEL) -> str:
    """``text`` as a safe piece of a file name: runs of characters other than ``A-Za-z0-9.=+-`` become ``_``."""
    return re.sub(r"[^A-Za-z0-9.=+-]+", "_", text).strip("_.-")[:limit] or "agent"


def deal_seed(seed: int, num_players: int, deal_index: int) -> int:
    """The environment seed of deal ``deal_index``: the same for every matchup at one table size.

    Sharing the deals across matchups makes the cells of a results matrix paired as well.
    """
    return derived_seed(seed, _DEALS_KEY, num_players, deal_index)


def seatings(labels: Sequence[str], mode: str = "rotations") -> list[tuple[int, ...]]:
    """The seat assignments a deal is played with (one of ``SEATINGS``), each as the lineup position of every
    seat, without the ones that give a table already listed.

    Rotations come in shift order (shift ``k`` seats lineup position ``(s - k) mod n`` in seat ``s``): all ``n``
    when the agents differ, fewer when the lineup repeats itself (``A B A B`` needs 2, four copies of one agent
    need 1). Permutations come in lexicographic order: ``n!`` for ``n`` different agents, ``n`` for "A against
    copies of B" (the rotations' tables). The distinct tables still put every agent in every seat equally often,
    so skipping the repeats changes no expectation and saves the duplicate games.
    """
    check_choice("seatings", mode, SEATINGS)
    n = len(labels)
    if mode == "rotations":
        candidates: Iterable[tuple[int, ...]] = (tuple((seat - shift) % n for seat in range(n)) for shift in range(n))
    else:
        candidates = itertools.permutations(range(n))
    seen: set[tuple[str, ...]] = set()
    distinct = []
    for seating in candidates:
        table = tuple(labels[position] for position in seating)
        if table not in seen:
            seen.add(table)
            distinct.append(seating)
    return distinct


def lineup_seatings(lineup: Sequence[Entrant], mode: str = "rotations") -> list[tuple[int, ...]]:
    """The seatings each deal of ``lineup`` is played with: ``seatings`` of its entrants' labels."""
    return seatings([entrant_label(entrant) for entrant in lineup], mode)


def play_game(env: raw_env, seat_agents: Sequence[Agent], seed: int, record: CardRecord | None = None) -> list[int]:
    """One whole game of the deal ``seed`` with ``seat_agents[s]`` in seat ``s``: the final totals per seat.

    With ``record``, every deal and move of the game is noted in it (the environment deals a round inside
    ``step``, so a new round shows as ``game.round`` changing). An agent's illegal move is the environment's
    ``IllegalActionError``, saying which agent played it (seats rotate, so the seat alone would not tell); what an
    agent's ``act`` raises (``sys.exit`` too) is an ``AgentRaisedError`` naming it.
    """
    env.reset(seed=seed)
    game = env.game
    assert game is not None
    if record is not None:
        record.start_round(game)
    while not game.game_over:
        seat, round_index = game.current, game.round
        agent = seat_agents[seat]
        action = checked_act(agent, env.observe(env.agent_selection), f"in seat player_{seat}")
        try:
            env.step(action)
        except IllegalActionError as error:
            raise IllegalActionError(f"agent {agent.name!r} in seat player_{seat}: {error}") from error
        if record is not None:
            record.move(action)
            if game.round != round_index:
                record.start_round(game)
    return list(game.scores)


def play_deal(
    env: raw_env,
    lineup: Sequence[Agent],
    seat_plans: Sequence[tuple[int, ...]],
    seed: int,
    records: Sequence[CardRecord] | None = None,
) -> list[list[int]]:
    """The deal ``seed`` once per seating (``seatings``); each game's totals are returned by *lineup position*, not
    seat.

    With ``records``, ``records[i]`` records the game of ``seat_plans[i]``."""
    results = []
    for index, seating in enumerate(seat_plans):
        record = None if records is None else records[index]
        scores = play_game(env, [lineup[position] for position in seating], seed, record)
        by_position = [0] * len(lineup)
        for seat, position in enumerate(seating):
            by_position[position] = scores[seat]
        results.append(by_position)
    return results


@dataclass(frozen=True)
class Chunk:
    """A run of consecutive deals of one matchup at one table size: the unit of work.

    The split into chunks depends only on the deal count and ``chunk_deals``, never on the number
    of workers, and each chunk seeds its own agents, so the results do not depend on the workers.
    """

    matchup_index: int
    index: int
    lineup: tuple[Entrant, ...]
    deck: str
    num_rounds: int
    seed: int
    first_deal: int
    num_deals: int
    replays: ReplaySaving | None = None
    """Where to save the games of the matchup's first deals as replays (``None``: nowhere)."""
    seating_mode: str = "rotations"
    """How each deal seats the lineup: one of ``SEATINGS``."""

    @property
    def num_players(self) -> int:
        return len(self.lineup)

    @property
    def labels(self) -> list[str]:
        """The distinct agents of the lineup, in order of first seat."""
        return list(dict.fromkeys(entrant_label(entrant) for entrant in self.lineup))

    @property
    def seat_plans(self) -> list[tuple[int, ...]]:
        """The seatings each deal is played with (``lineup_seatings``)."""
        return lineup_seatings(self.lineup, self.seating_mode)

    @property
    def games(self) -> int:
        return self.num_deals * len(self.seat_plans)

    def agent_seed(self, label_index: int) -> int:
        return derived_seed(self.seed, _AGENTS_KEY, self.num_players, self.matchup_index, self.index, label_index)

    @property
    def _seating_key(self) -> str:
        """What a replay's name and source call the index of its seating: a rotation's shift, or its number."""
        return "shift" if self.seating_mode == "rotations" else "seating"

    def replay_path(self, deal_index: int, seating_index: int) -> Path:
        """The replay file of deal ``deal_index`` played with seating ``seating_index`` of ``seat_plans`` (for
        rotations, the shift; needs ``replays``)."""
        assert self.replays is not None
        agents = file_label("-".join(self.labels))
        stem = f"{self.matchup_index:02d}-{self.num_players}p-{agents}"
        return self.replays.path(stem, f"deal{deal_index}", f"{self._seating_key}{seating_index}")

    def new_records(self, deal_index: int, seat_plans: Sequence[tuple[int, ...]]) -> list[CardRecord] | None:
        """Empty records of the games of deal ``deal_index``, one per seating, or ``None`` when it is not saved."""
        if self.replays is None or not self.replays.saves(deal_index):
            return None
        rules = Rules(num_players=self.num_players, deck=get_deck(self.deck), num_rounds=self.num_rounds)
        lineup_labels = [entrant_label(entrant) for entrant in self.lineup]
        return [
            new_card_record(
                rules,
                [lineup_labels[position] for position in seating],
                self.replays.source_with(deal=deal_index, **{self._seating_key: index}, seed=self.seed),
            )
            for index, seating in enumerate(seat_plans)
        ]


def run_chunk(chunk: Chunk) -> np.ndarray:
    """Play a chunk with agents built from its entrants: array ``(deals, agents, METRICS)`` of per-deal means."""
    return play_chunk(chunk, build_agents(chunk))


def build_agents(chunk: Chunk) -> dict[str, Agent]:
    """The agent of each distinct entrant of a chunk, by label, seeded from the chunk."""
    built: dict[str, Agent] = {}
    for label_index, label in enumerate(chunk.labels):
        entrant = next(entrant for entrant in chunk.lineup if entrant_label(entrant) == label)
        built[label] = build(entrant, chunk.agent_seed(label_index))
    return built


def play_chunk(chunk: Chunk, built: Mapping[str, Agent]) -> np.ndarray:
    """Play a chunk's deals with ``built[label]`` for each entrant: array ``(deals, agents, METRICS)``.

    Each entry averages one agent's seats within a game (copies of an agent are one agent) and then
    the deal's seatings, so every row is one independent sample per agent.
    """
    labels = chunk.labels
    lineup_labels = [entrant_label(entrant) for entrant in chunk.lineup]
    lineup = [built[label] for label in lineup_labels]
    positions = [[p for p, name in enumerate(lineup_labels) if name == label] for label in labels]
    seat_plans = chunk.seat_plans
    env = raw_env(num_players=chunk.num_players, deck=chunk.deck, num_rounds=chunk.num_rounds)
    samples = np.empty((chunk.num_deals, len(labels), len(METRICS)))
    for row, deal_index in enumerate(range(chunk.first_deal, chunk.first_deal + chunk.num_deals)):
        records = chunk.new_records(deal_index, seat_plans)
        games = play_deal(env, lineup, seat_plans, deal_seed(chunk.seed, chunk.num_players, deal_index), records)
        for index, record in enumerate(records or ()):
            save(record, chunk.replay_path(deal_index, index))
        per_position = np.array([list(zip(win_shares(g), g, average_ranks(g), strict=True)) for g in games])
        deal_means = per_position.mean(axis=0)
        for column, seats in enumerate(positions):
            samples[row, column] = deal_means[seats].mean(axis=0)
    env.close()
    return samples
