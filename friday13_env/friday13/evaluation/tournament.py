"""Run matchups as duplicate games, optionally on several processes, and summarise them.

The work is cut into chunks of consecutive deals (``duplicate.Chunk``) in a fixed order that does
not depend on the number of workers; chunks run in a ``spawn`` process pool (agents are built
inside the workers from their specs) or in this process, and their samples are put back in chunk
order. So a seed fixes the results, whatever ``workers`` is.

Chunks are made one at a time as they are played (``work_units`` is a generator) and at most
``CHUNKS_AHEAD`` per process are in flight, so the memory a run needs does not depend on the games
asked for: any run starts at once. What grows is the samples of the games played, 8 bytes per number
(3 numbers per agent and deal), which the intervals are computed from; ``MAX_GAMES`` bounds them, and
a run no machine could finish is refused rather than started.
"""

from __future__ import annotations

import math
import time
from array import array
from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import closing, nullcontext
from typing import Any

import numpy as np

from friday13_env.core.agent import check_reset_hook
from friday13_env.core.checks import check_choice
from friday13_env.core.options import MAX_GAMES, count_option, pool_size
from friday13_env.core.pool import ordered_results
from friday13_env.core.stats import Estimate, mean_interval
from friday13_env.friday13.agents import Agent
from friday13_env.friday13.agents.seating import make_seated
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.engine import Rules
from friday13_env.friday13.evaluation.duplicate import (
    METRICS,
    SEATINGS,
    Chunk,
    ReplaySaving,
    lineup_seatings,
    run_chunk,
)
from friday13_env.friday13.evaluation.results import AgentStats, EvaluationResult, MatchupResult
from friday13_env.friday13.evaluation.specs import (
    AgentSpec,
    Entrant,
    Matchup,
    check_player_count,
    entrant_label,
    focus_matchups,
)

DEFAULT_CHUNK_DEALS = 4
"""Deals per unit of work: small enough for a lively progress bar with slow (search) agents."""
CHUNKS_AHEAD = 2
"""Chunks sent to the pool per process before the oldest one's samples are awaited."""


def evaluate(
    matchups: Sequence[Matchup],
    num_games: int,
    num_players: int | Sequence[int] = 4,
    *,
    seed: int = 0,
    workers: int = 1,
    deck: str = "standard",
    num_rounds: int = 4,
    progress: bool = False,
    chunk_deals: int = DEFAULT_CHUNK_DEALS,
    checked: bool = False,
    replays: ReplaySaving | None = None,
    seating_mode: str = "rotations",
) -> EvaluationResult:
    """Play every matchup at every table size for at least ``num_games`` duplicate games.

    Games come in whole deals (one game per distinct seating of the lineup: every rotation, or with
    ``seating_mode="permutations"`` every order of the agents around the table, see ``duplicate.SEATINGS``), so
    the count is rounded up to a whole number of deals; the result reports both. ``progress`` shows a tqdm bar
    when tqdm is installed. Agent objects (rather than specs) in a matchup require ``workers=1``. ``checked`` says the
    caller has already run ``check_config`` on these arguments (as the evaluate command does), so its
    agents are not built again before the first game. At most ``available_cpus()`` processes play, and
    never more than there are chunks (``core.options.pool_size``); one plays in this process. At most ``MAX_GAMES``
    games are played per matchup and table size. ``replays`` saves the games of each
    matchup's first deals as replay files (written by the processes that play them); the results are the
    same with or without it.
    """
    counts = [num_players] if isinstance(num_players, int) else list(num_players)
    if not checked:
        check_config(matchups, num_games, counts, workers, deck, num_rounds, chunk_deals, seed, seating_mode)
    plan = [(index, matchup, matchup.lineup(n)) for n in counts for index, matchup in enumerate(matchups)]
    deals = [deal_count(lineup, num_games, seating_mode) for _, _, lineup in plan]
    games = [
        count * len(lineup_seatings(lineup, seating_mode)) for (_, _, lineup), count in zip(plan, deals, strict=True)
    ]
    chunks = [-(-count // chunk_deals) for count in deals]
    groups = [(index, lineup) for index, _, lineup in plan]
    units = work_units(groups, num_games, chunk_deals, deck, num_rounds, seed, replays, seating_mode)
    start = time.perf_counter()
    results = []
    with closing(_run_chunks(units, pool_size(workers, sum(chunks)), progress, sum(games))) as samples:
        for (_, matchup, lineup), group_chunks, group_games in zip(plan, chunks, games, strict=True):
            results.append(_summarise(matchup, lineup, _gather(samples, group_chunks), group_games))
    elapsed = time.perf_counter() - start
    return EvaluationResult(seed, deck, num_rounds, chunk_deals, tuple(results), seating_mode, elapsed)


def evaluate_agent(
    agent: Agent,
    opponents: Sequence[str | Entrant] = ("random",),
    num_games: int = 400,
    num_players: int = 4,
    *,
    seed: int = 0,
    deck: str = "standard",
    num_rounds: int = 4,
) -> dict[str, Estimate]:
    """The win rate of an in-process agent against copies of each opponent, keyed by opponent.

    For training loops: no files, no processes; ``1/num_players`` is the rate of an equal seat.
    """
    result = evaluate(
        focus_matchups(agent, opponents), num_games, num_players, seed=seed, deck=deck, num_rounds=num_rounds
    )
    return {matchup.opponents[0]: matchup.stats(agent.name).win_rate for matchup in result.matchups}


def unit_count(
    matchups: Sequence[Matchup],
    num_games: int,
    counts: Sequence[int],
    chunk_deals: int = DEFAULT_CHUNK_DEALS,
    seating_mode: str = "rotations",
) -> int:
    """The chunks (units of work) of a run: every matchup and table size's whole deals, ``chunk_deals`` a chunk, as
    ``evaluate`` cuts them (for ``core.options.pool_size`` before the run, as the evaluate command reports it)."""
    deals = (deal_count(matchup.lineup(n), num_games, seating_mode) for n in counts for matchup in matchups)
    return sum(-(-count // chunk_deals) for count in deals)


def deal_count(lineup: tuple[Entrant, ...], num_games: int, seating_mode: str = "rotations") -> int:
    """Whole deals enough for ``num_games`` games of ``lineup`` (integer arithmetic: exact for any count)."""
    return -(-num_games // len(lineup_seatings(lineup, seating_mode)))


def work_units(
    groups: Iterable[tuple[int, tuple[Entrant, ...]]],
    num_games: int,
    chunk_deals: int,
    deck: str,
    num_rounds: int,
    seed: int,
    replays: ReplaySaving | None = None,
    seating_mode: str = "rotations",
) -> Iterator[Chunk]:
    """The chunks of each ``(matchup index, lineup)`` in turn, enough whole deals for ``num_games`` games each.

    A generator: each chunk is made when it is about to be played, so the memory does not depend on
    ``num_games``.
    """
    for matchup_index, lineup in groups:
        deals = deal_count(lineup, num_games, seating_mode)
        for first in range(0, deals, chunk_deals):
            yield Chunk(
                matchup_index=matchup_index,
                index=first // chunk_deals,
                lineup=lineup,
                deck=deck,
                num_rounds=num_rounds,
                seed=seed,
                first_deal=first,
                num_deals=min(chunk_deals, deals - first),
                replays=replays,
                seating_mode=seating_mode,
            )


def check_config(
    matchups: Sequence[Matchup],
    num_games: int,
    counts: Sequence[int],
    workers: int = 1,
    deck: str = "standard",
    num_rounds: int = 4,
    chunk_deals: int = DEFAULT_CHUNK_DEALS,
    seed: int = 0,
    seating_mode: str = "rotations",
) -> None:
    """Every configuration error as a ``ValueError``, before any game or worker starts.

    ``evaluate`` calls it first; a command line calls it alone to tell bad arguments apart from
    errors raised while playing (an agent's illegal move is a ``ValueError`` too).
    """
    if not matchups:
        raise ValueError("no matchups to play")
    if not counts:
        raise ValueError("no player counts given")
    count_option("num_games", num_games, maximum=MAX_GAMES, takes=f"a positive int, at most {MAX_GAMES:,}")
    for name, value in (("workers", workers), ("chunk_deals", chunk_deals)):
        count_option(name, value, takes="a positive int")
    count_option("seed", seed, minimum=0, takes="a non-negative int")
    check_choice("seatings", seating_mode, SEATINGS)
    for n in counts:
        check_player_count(n)
        Rules(num_players=n, deck=get_deck(deck), num_rounds=num_rounds)
        for matchup in matchups:
            matchup.lineup(n)
    entrants = {entrant_label(entrant): entrant for matchup in matchups for entrant in matchup.entrants}
    for entrant in entrants.values():
        make_seated(entrant, 0, deck)  # a policy of the other deck is refused before any game
        check_reset_hook(entrant)  # an agent object's reset must take the seed each unit of games re-seeds it with
        if not isinstance(entrant, AgentSpec) and workers > 1:
            raise ValueError(
                f"agent object {entrant.name!r} cannot be sent to worker processes; use workers=1 or an agent spec"
            )


def _run_chunks(units: Iterator[Chunk], processes: int, progress: bool, games: int) -> Generator[np.ndarray]:
    """Each chunk's samples, in chunk order, played here (``processes`` 1) or in a ``spawn`` pool."""
    with _progress_bar(games, progress) as bar:
        for chunk, samples in ordered_results(run_chunk, units, processes, CHUNKS_AHEAD):
            if bar is not None:
                bar.update(chunk.games)
            yield samples


def _gather(samples: Iterator[np.ndarray], chunks: int) -> np.ndarray:
    """The next ``chunks`` chunks' samples end to end: one matchup's ``(deals, agents, METRICS)`` array.

    Kept in an ``array`` buffer as they come (8 bytes a number, no per-chunk overhead); the values and
    their order are those of concatenating the chunks, so the figures are too.
    """
    buffer = array("d")
    shape: tuple[int, ...] = ()
    for _ in range(chunks):
        part = next(samples)
        buffer.frombytes(np.ascontiguousarray(part, dtype=np.float64).tobytes())
        shape = part.shape[1:]
    return np.frombuffer(buffer, dtype=np.float64).reshape(-1, *shape)


def _progress_bar(total: int, enabled: bool) -> Any:
    """A tqdm bar counting games, or a context yielding ``None`` when disabled or tqdm is missing."""
    if enabled:
        try:
            from tqdm import tqdm
        except ImportError:
            return nullcontext(None)
        return tqdm(total=total, unit="game", dynamic_ncols=True)
    return nullcontext(None)


def metric_bounds(num_players: int) -> dict[str, tuple[float, float]]:
    """The values each metric can take at a table of ``num_players``: its intervals are clipped to them."""
    return {"win_rate": (0.0, 1.0), "points": (0.0, math.inf), "rank": (1.0, float(num_players))}


def _summarise(matchup: Matchup, lineup: tuple[Entrant, ...], samples: np.ndarray, games: int) -> MatchupResult:
    lineup_labels = [entrant_label(entrant) for entrant in lineup]
    labels = list(dict.fromkeys(lineup_labels))
    agents = []
    for column, label in enumerate(labels):
        bounds = metric_bounds(len(lineup))
        estimates = {metric: mean_interval(samples[:, column, m], bounds[metric]) for m, metric in enumerate(METRICS)}
        agents.append(AgentStats(label=label, seats=lineup_labels.count(label), **estimates))
    return MatchupResult(
        label=matchup.label,
        focus=None if matchup.focus is None else entrant_label(matchup.focus),
        opponents=tuple(dict.fromkeys(entrant_label(entrant) for entrant in matchup.others)),
        num_players=len(lineup),
        deals=samples.shape[0],
        games=games,
        agents=tuple(agents),
    )
