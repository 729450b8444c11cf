"""Run matchups as duplicate games, optionally on several processes, and summarise them.

The work is cut into chunks of consecutive deals (``duplicate.Chunk``) in a fixed order that does
not depend on the number of workers; chunks run in a ``spawn`` process pool (agents are built
inside the workers from their specs) or in this process, and their samples are put back in chunk
order. So a seed fixes the results, whatever ``workers`` is.
"""

from __future__ import annotations

import math
import multiprocessing
import time
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np

from friday13_env.core.options import count_option
from friday13_env.core.stats import Estimate, mean_interval
from friday13_env.friday13.agents import Agent
from friday13_env.friday13.agents.seating import make_seated
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.engine import Rules
from friday13_env.friday13.evaluation.duplicate import METRICS, Chunk, rotations, run_chunk
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
) -> EvaluationResult:
    """Play every matchup at every table size for at least ``num_games`` duplicate games.

    Games come in whole deals (one game per distinct seat rotation), so the count is rounded up to
    a whole number of deals; the result reports both. ``progress`` shows a tqdm bar when tqdm is
    installed. Agent objects (rather than specs) in a matchup require ``workers=1``. ``checked`` says the
    caller has already run ``check_config`` on these arguments (as the evaluate command does), so its
    agents are not built again before the first game.
    """
    counts = [num_players] if isinstance(num_players, int) else list(num_players)
    if not checked:
        check_config(matchups, num_games, counts, workers, deck, num_rounds, chunk_deals, seed)
    plan = [(index, matchup, matchup.lineup(n)) for n in counts for index, matchup in enumerate(matchups)]
    groups = [_split(index, lineup, num_games, chunk_deals, deck, num_rounds, seed) for index, _, lineup in plan]
    start = time.perf_counter()
    samples = iter(list(_run_chunks([chunk for group in groups for chunk in group], workers, progress)))
    results = []
    for (_, matchup, lineup), group in zip(plan, groups, strict=True):
        mine = np.concatenate([next(samples) for _ in group])
        results.append(_summarise(matchup, lineup, mine, sum(chunk.games for chunk in group)))
    return EvaluationResult(seed, deck, num_rounds, chunk_deals, tuple(results), time.perf_counter() - start)


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


def _split(
    matchup_index: int,
    lineup: tuple[Entrant, ...],
    num_games: int,
    chunk_deals: int,
    deck: str,
    num_rounds: int,
    seed: int,
) -> list[Chunk]:
    """The chunks of one matchup at one table size: enough whole deals for ``num_games`` games."""
    deals = math.ceil(num_games / len(rotations([entrant_label(entrant) for entrant in lineup])))
    return [
        Chunk(
            matchup_index=matchup_index,
            index=first // chunk_deals,
            lineup=lineup,
            deck=deck,
            num_rounds=num_rounds,
            seed=seed,
            first_deal=first,
            num_deals=min(chunk_deals, deals - first),
        )
        for first in range(0, deals, chunk_deals)
    ]


def check_config(
    matchups: Sequence[Matchup],
    num_games: int,
    counts: Sequence[int],
    workers: int = 1,
    deck: str = "standard",
    num_rounds: int = 4,
    chunk_deals: int = DEFAULT_CHUNK_DEALS,
    seed: int = 0,
) -> None:
    """Every configuration error as a ``ValueError``, before any game or worker starts.

    ``evaluate`` calls it first; a command line calls it alone to tell bad arguments apart from
    errors raised while playing (an agent's illegal move is a ``ValueError`` too).
    """
    if not matchups:
        raise ValueError("no matchups to play")
    if not counts:
        raise ValueError("no player counts given")
    for name, value in (("num_games", num_games), ("workers", workers), ("chunk_deals", chunk_deals)):
        count_option(name, value, takes="a positive int")
    count_option("seed", seed, minimum=0, takes="a non-negative int")
    for n in counts:
        check_player_count(n)
        Rules(num_players=n, deck=get_deck(deck), num_rounds=num_rounds)
        for matchup in matchups:
            matchup.lineup(n)
    entrants = {entrant_label(entrant): entrant for matchup in matchups for entrant in matchup.entrants}
    for entrant in entrants.values():
        make_seated(entrant, 0, deck)  # a policy of the other deck is refused before any game
        if not isinstance(entrant, AgentSpec) and workers > 1:
            raise ValueError(
                f"agent object {entrant.name!r} cannot be sent to worker processes; use workers=1 or an agent spec"
            )


def _run_chunks(chunks: list[Chunk], workers: int, progress: bool) -> Iterator[np.ndarray]:
    """Each chunk's samples, in chunk order, played here or in a ``spawn`` pool."""
    with _progress_bar(sum(chunk.games for chunk in chunks), progress) as bar:
        if workers == 1:
            for chunk in chunks:
                yield run_chunk(chunk)
                if bar is not None:
                    bar.update(chunk.games)
            return
        done: dict[int, np.ndarray] = {}
        with multiprocessing.get_context("spawn").Pool(min(workers, len(chunks))) as pool:
            for index, samples in pool.imap_unordered(_run_indexed, enumerate(chunks)):
                done[index] = samples
                if bar is not None:
                    bar.update(chunks[index].games)
        yield from (done[index] for index in range(len(chunks)))


def _run_indexed(item: tuple[int, Chunk]) -> tuple[int, np.ndarray]:
    index, chunk = item
    return index, run_chunk(chunk)


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
