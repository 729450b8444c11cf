"""Ratings from free-for-all games at mixed tables, fitted with openskill's Plackett-Luce model.

Table ``t`` of a run draws its size from 3-6 and that many different agents from the pool, seated in a random
order, all from ``SeedSequence(seed, (t,))``; its deal is played once per seat rotation (as in the tournament,
so each agent meets the cards of every seat), and every game is one ranking: lower bad-luck points rank
higher, equal points tie. The ratings are Plackett-Luce ``mu`` and ``sigma`` (openskill, with no drift
``tau = 0``: the agents do not change during the games) after the games in table order, so a seed reproduces
them exactly. The leaderboard's ratings table ranks by ``mu - 3 sigma`` (its main table by the ``card-4p`` score)
and shows what a ``mu`` difference means in win share at a 4-player table, from the model's own ``predict_win``.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from friday13_env.benchmark.runner import canonical_label, read_back_problem
from friday13_env.core.agent import CheckedAgent
from friday13_env.core.checks import plain_text
from friday13_env.core.extras import BENCHMARK_EXTRA, missing_extra
from friday13_env.core.options import available_cpus, count_option
from friday13_env.core.pool import ordered_results
from friday13_env.core.specs import AgentSpec, first_repeat, spec_problem
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS

TABLES_PER_UNIT = 4
RATINGS_FORMAT = "friday13-ratings"
MAX_COMMAND = 2_000
"""The most characters of the command a ratings file records, which the leaderboard prints."""
MAX_TABLES = 10_000
"""The most tables of a run, and of a ratings file: reading one fits its games again (at most 6 a table, about
0.1 ms each), so a file of more, or of tables with more games than their seat rotations, is refused unread."""
MAX_AGENTS = 1_000
"""The most agents of a run's pool, and of a ratings file: every agent of a file is checked and rated, so a file of
more (hundreds of thousands of names fit in the size cap) is refused before any of them is."""
MAX_POINTS = 10_000
"""The most bad-luck points of one seat in one game a ratings file may hold, far above any real game's (the shipped
file's most is 88): a larger integer could not even be converted to a float for the fit."""


@dataclass(frozen=True)
class TableUnit:
    """Tables ``first .. first + count - 1`` of a ratings run."""

    agents: tuple[AgentSpec, ...]
    seed: int
    first: int
    count: int
    deck: str = "standard"
    num_rounds: int = 4


def table_lineup(agents: Sequence[AgentSpec], seed: int, table: int) -> tuple[AgentSpec, ...]:
    """The agents of table ``table`` in seat order: a size from 3-6 (at most the pool), distinct agents."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(table,)))
    size = int(rng.integers(MIN_PLAYERS, min(MAX_PLAYERS, len(agents)) + 1))
    return tuple(agents[i] for i in rng.permutation(len(agents))[:size])


def play_tables(unit: TableUnit) -> list[dict[str, Any]]:
    """Each table's lineup and every game's points by lineup position (a module-level function, for a pool)."""
    from friday13_env.friday13.aec import raw_env
    from friday13_env.friday13.evaluation.duplicate import Chunk, build_agents, deal_seed, play_deal, seatings

    tables = []
    for table in range(unit.first, unit.first + unit.count):
        lineup = table_lineup(unit.agents, unit.seed, table)
        chunk = Chunk(table, 0, lineup, unit.deck, unit.num_rounds, unit.seed, table, 1)
        built = build_agents(chunk)
        env = raw_env(num_players=len(lineup), deck=unit.deck, num_rounds=unit.num_rounds)
        labels = [spec.label for spec in lineup]
        seed = deal_seed(unit.seed, len(lineup), table)
        games = play_deal(env, [CheckedAgent(built[label]) for label in labels], seatings(labels), seed)
        env.close()
        tables.append({"lineup": labels, "points": games})
    return tables


def fit(tables: Sequence[dict[str, Any]], agents: Sequence[str]) -> dict[str, dict[str, float]]:
    """Plackett-Luce ratings after every game of ``tables`` in order: ``{agent: {mu, sigma, ordinal, games}}``."""
    model = _model()
    ratings = {name: model.rating(name=name) for name in agents}
    games = dict.fromkeys(agents, 0)
    for table in tables:
        lineup = table["lineup"]
        for points in table["points"]:
            teams = model.rate([[ratings[name]] for name in lineup], ranks=[float(p) for p in points])
            for name, (rating,) in zip(lineup, teams, strict=True):
                ratings[name] = rating
                games[name] += 1
    return {
        name: {"mu": r.mu, "sigma": r.sigma, "ordinal": r.mu - 3 * r.sigma, "games": games[name]}
        for name, r in ratings.items()
    }


def win_share_of_difference(differences: Sequence[float], sigma: float) -> list[float]:
    """The model's chance that an agent ``d`` above three equal opponents wins a 4-player game, for each ``d``."""
    model = _model()
    shares = []
    for difference in differences:
        others = [[model.rating(mu=25.0, sigma=sigma)] for _ in range(3)]
        shares.append(float(model.predict_win([[model.rating(mu=25.0 + difference, sigma=sigma)], *others])[0]))
    return shares


def _model() -> Any:
    try:
        from openskill.models import PlackettLuce
    except ModuleNotFoundError as error:
        missing_extra(error, "the benchmark's ratings", BENCHMARK_EXTRA)
        raise
    return PlackettLuce(tau=0.0)


@dataclass(frozen=True)
class RatingsPool:
    """A pool ``check_ratings`` checked: each agent's spec with its fingerprint, in order."""

    fingerprints: Mapping[AgentSpec, str]


def check_ratings(agents: Sequence[str | AgentSpec], workers: int | None = None) -> RatingsPool:
    """The pool as specs, each built once, with its fingerprint at the standard deck (``runner.entrant_fingerprint``,
    as a result records it: the leaderboard shows a rating only beside results of an agent that plays the same); an
    error before any game for a bad spec, an agent that fails at the fingerprint positions, a short, repeated or too
    large pool (over ``MAX_AGENTS``: a run never writes a file it would refuse to read), a bad worker count, or a
    missing openskill."""
    from friday13_env.friday13.agents import REGISTRY

    if workers is not None:
        count_option("workers", workers, takes="a positive int")
    if len(agents) > MAX_AGENTS:
        raise ValueError(
            f"ratings take at most {MAX_AGENTS:,} agents (a ratings file holds no more), got {len(agents):,}"
        )
    specs = tuple(REGISTRY.checked_canonical(agent) for agent in agents)  # as the results name them
    labels = [spec.label for spec in specs]
    for spec in specs:  # a run never writes a file it would refuse to read, or read as other agents
        if (problem := spec_problem(spec.label)) is not None:
            raise ValueError(f"agent spec: {problem}")
        if (problem := read_back_problem("friday13", spec)) is not None:
            raise ValueError(
                f"agent spec: the checkpoint file {problem} so that its name holds no ':' and give that name"
            )
    repeat = first_repeat(labels)
    if repeat is not None:
        index, first = repeat
        typed = [agent.label if isinstance(agent, AgentSpec) else agent.strip() for agent in agents]
        spelled = (
            f" ({typed[first]!r} and {typed[index]!r}: one agent once its options are sorted and its defaults left out)"
            if typed[first] != typed[index]
            else ""
        )
        raise ValueError(
            f"agent {labels[index]!r} is listed twice, in {labels}{spelled}; list each agent once "
            f"(ratings need at least {MIN_PLAYERS} different agents)"
        )
    if len(labels) < MIN_PLAYERS:
        raise ValueError(f"ratings need at least {MIN_PLAYERS} different agents, got {labels}")
    from friday13_env.benchmark.runner import entrant_fingerprint

    fingerprints = {spec: entrant_fingerprint("friday13", spec, "standard") for spec in specs}
    _model()
    return RatingsPool(fingerprints)


def check_tables(tables: object) -> int:
    """``tables`` if it is an int from 1 to ``MAX_TABLES`` (a run never writes a file it would refuse to read), else
    a ``ValueError`` naming the range."""
    count = count_option("tables", tables, takes=f"a positive int, at most {MAX_TABLES:,}")
    if count > MAX_TABLES:
        raise ValueError(f"tables must be 1 to {MAX_TABLES:,} (a ratings file holds no more), got {count}")
    return count


def processes_for(workers: int | None) -> int:
    """The processes a run plays on: ``workers``, at most the CPUs this process may use (all of them if None)."""
    return min(available_cpus(), workers or available_cpus())


def run_ratings(
    agents: Sequence[str | AgentSpec] | RatingsPool, tables: int, seed: int = 0, workers: int | None = None
) -> dict[str, Any]:
    """Play ``tables`` mixed tables of ``agents`` (or of the pool ``check_ratings`` gave) and fit their ratings; the
    result is JSON-ready."""
    if isinstance(agents, RatingsPool):
        pool = agents
        if workers is not None:  # (check_ratings checks it for a pool it checks)
            count_option("workers", workers, takes="a positive int")
    else:
        pool = check_ratings(agents, workers)
    specs = tuple(pool.fingerprints)
    check_tables(tables)
    count_option("seed", seed, minimum=0, takes="a non-negative int")
    labels = [spec.label for spec in specs]
    processes = processes_for(workers)
    units = (
        TableUnit(specs, seed, first, min(TABLES_PER_UNIT, tables - first))
        for first in range(0, tables, TABLES_PER_UNIT)
    )
    fingerprints = {spec.label: fingerprint for spec, fingerprint in pool.fingerprints.items()}
    start = time.perf_counter()
    played = [table for _, unit_tables in ordered_results(play_tables, units, processes) for table in unit_tables]
    from friday13_env.benchmark.runner import provenance

    return {
        "format": RATINGS_FORMAT,
        "format_version": 1,
        "agents": labels,
        "fingerprints": fingerprints,
        "tables": tables,
        "seed": seed,
        "model": "openskill PlackettLuce, tau=0, games in table order",
        "ratings": fit(played, labels),
        "provenance": provenance(processes, time.perf_counter() - start, 0),
        "games": played,
    }


def read_ratings(path: str | Path) -> dict[str, Any]:
    """A ratings file whose ratings are what its games give: every field the leaderboard prints checked, and the
    ratings fitted again from the games (this package's model) and compared; a ``ValueError`` names the file."""
    from friday13_env.benchmark.runner import read_json

    data = read_json(path, "ratings file", RATINGS_FORMAT)
    try:
        problem = _ratings_problem(data)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as error:
        problem = f"a field is missing or of the wrong kind ({error!r})"
    if problem is not None:
        raise ValueError(f"ratings file {path}: {problem}")
    return data


def _ratings_problem(data: dict[str, Any]) -> str | None:
    """What is wrong in a ratings file, or None; the checks that bound the work (the number of tables, the games
    of each) come before its games are fitted again."""

    agents, games = data["agents"], data["games"]
    if not isinstance(agents, list) or len(agents) > MAX_AGENTS:
        count = f", not {len(agents):,}" if isinstance(agents, list) else ""
        return f"its agents must be a list of at most {MAX_AGENTS:,} agents{count}"
    for agent in agents:
        if not isinstance(agent, str) or spec_problem(agent):
            return f"its agent {agent!r:.100}: {spec_problem(agent) if isinstance(agent, str) else 'not a text'}"
    known = set(agents)
    if len(known) != len(agents) or len(agents) < MIN_PLAYERS:
        return f"its agents must be at least {MIN_PLAYERS} different specs"
    labels = [canonical_label("friday13", agent) for agent in agents]
    if (repeat := first_repeat(labels)) is not None:  # an earlier release's file: specs recorded as typed
        index, first = repeat
        return (
            f"its agents {agents[first]!r} and {agents[index]!r} are one agent ({labels[index]!r}: its options "
            "sorted and its defaults left out), rated as two; run friday13 ratings again, listing each agent once"
        )
    if "fingerprints" not in data:
        return "it records no fingerprints (how each agent played): run friday13 ratings again with this package"
    fingerprints = data["fingerprints"]
    if not isinstance(fingerprints, dict) or set(fingerprints) != known:
        return "its fingerprints must name exactly its agents"
    for agent, fingerprint in fingerprints.items():
        if not (isinstance(fingerprint, str) and re.fullmatch(r"[0-9a-f]{16}", fingerprint)):
            return f"its fingerprint of {agent} must be 16 hex digits, not {fingerprint!r:.40}"
    if not isinstance(games, list):
        return "its games must be a list of tables"
    if len(games) > MAX_TABLES:
        return f"it holds {len(games):,} tables, over the {MAX_TABLES:,} a ratings run plays"
    for index, table in enumerate(games):
        problem = _table_problem(index, table, known)
        if problem is not None:
            return problem
    tables, seed = data["tables"], data["seed"]
    if type(tables) is not int or tables != len(games) or type(seed) is not int or seed < 0:
        return "its table count and seed must be those of its games"
    if not (isinstance(data["model"], str) and plain_text(data["model"], 200)):
        return "its model must be plain text"
    command = data["provenance"]["command"]
    if not (command is None or (isinstance(command, str) and plain_text(command, MAX_COMMAND))):
        return f"its command must be 1-{MAX_COMMAND} characters without | ` or controls"
    fitted, recorded = fit(games, agents), data["ratings"]
    if not isinstance(recorded, dict) or set(recorded) != set(fitted):
        return "its ratings must name exactly its agents"
    for agent, rating in fitted.items():
        found = recorded[agent]
        close = all(
            isinstance(found[key], float) and math.isclose(found[key], rating[key], rel_tol=1e-9)
            for key in ("mu", "sigma", "ordinal")
        )
        if not close or type(found["games"]) is not int or found["games"] != rating["games"]:
            return f"the rating of {agent} is not what its games give ({rating})"
    return None


def _table_problem(index: int, table: object, agents: set[str]) -> str | None:
    """What is wrong in table ``index`` of a ratings file, or None: its lineup must be 3-6 different agents of the
    file (``agents``, the set made once for every table), and it must hold one game per seat rotation of that lineup
    (how ``play_tables`` plays a deal), each one count of points (an int, 0 to ``MAX_POINTS``) per seat."""
    from friday13_env.friday13.evaluation.duplicate import seatings

    shape = f"its games must be tables of {MIN_PLAYERS}-{MAX_PLAYERS} of its agents, with their points per game"
    if not isinstance(table, dict) or not isinstance(table.get("lineup"), list):
        return shape
    lineup, points = table["lineup"], table.get("points")
    if (
        not MIN_PLAYERS <= len(lineup) <= MAX_PLAYERS
        or not all(isinstance(agent, str) for agent in lineup)
        or len(set(lineup)) != len(lineup)
        or not set(lineup) <= agents
        or not isinstance(points, list)
    ):
        return shape
    rotations = len(seatings(lineup))
    if len(points) != rotations:
        return (
            f"table {index} holds {len(points)} games, not the {rotations} of its lineup's seat rotations "
            "(a deal is played once per rotation)"
        )
    if not all(
        isinstance(game, list)
        and len(game) == len(lineup)
        and all(type(p) is int and 0 <= p <= MAX_POINTS for p in game)
        for game in points
    ):
        return shape
    return None
