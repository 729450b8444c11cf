"""Run a suite for one agent: checks first, then the units on every core, resumable, then one result file.

Before any game: the suite's deals are generated again and must hash to the frozen digest, the anchors must
play as their fingerprints say, and the agent is built once (a factory that raises, a policy of the other
deck, an unknown spec: an error here). While it plays, every finished unit goes into ``OUT.partial`` (its
``complete`` is false); an interrupted run started again with the same ``out`` continues from it. Only a
finished run writes ``OUT``, with ``complete: true``, and removes the partial file. ``OUT`` and ``OUT.partial`` are
checked to be writable files before any game, so that no run ends, every game played, by failing to write them. An
agent whose answer at a fingerprint position is not a legal ``int`` is refused before any game; an illegal move that
the probes did not meet is the environment's error, raised at that move.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import math
import platform
import shlex
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from friday13_env import __version__
from friday13_env.benchmark.fingerprints import behaviour_fingerprint, deals_digest
from friday13_env.benchmark.play import METRICS, SECOND_METRIC, Unit, UnitResult, play_unit, units
from friday13_env.benchmark.scores import aggregate, cell_interval, normalised_interval, scipy_stats
from friday13_env.benchmark.suite import NORMALISERS, Suite, definition_problems, get_suite
from friday13_env.core.agent import Agent, reseeded
from friday13_env.core.checks import finite_number, is_duration
from friday13_env.core.files import atomic_write_text, file_sha256, read_capped
from friday13_env.core.options import available_cpus, count_option
from friday13_env.core.pool import ordered_results
from friday13_env.core.registry import Registry
from friday13_env.core.specs import FACTORY, AgentSpec, Entrant, entrant_label, recorded_spec, shown, spec_problem
from friday13_env.friday13.evaluation.report import check_output_path

if TYPE_CHECKING:
    from friday13_env.friday13.evaluation.duplicate import ReplaySaving

RESULT_FORMAT = "friday13-benchmark-result"
RESULT_FORMAT_VERSION = 1
MAX_RESULT_BYTES = 8 * 1024 * 1024
"""A result or partial file larger than this is refused unread (the shipped ones hold under 150 KB)."""
MAX_UNIT_SECONDS = 1e6
"""The most seconds of ``act`` calls a unit of a partial file may hold (about 11.6 days for 4 deals, minutes per
move): more is a damaged or hostile file, whose cost per move could reach infinity and fail the result's writing
after every game."""
MAX_UNIT_DECISIONS = 10**9
"""The most moves a unit of a partial file may hold (a unit's 4 deals make thousands): more is a damaged file."""


def registry_of(game: str) -> Registry:
    from friday13_env.games import game as get_game

    return get_game(game).agents


def canonical_label(game: str, spec: str) -> str:
    """The canonical label (``Registry.canonical``) of a spec as a result or a ratings file records it
    (``recorded_spec``: no file is looked up): the name under which the pages show that agent, whatever order an
    earlier release recorded its options in."""
    return registry_of(game).canonical(recorded_spec(spec)).label


def read_back_problem(game: str, recorded: str | AgentSpec) -> str | None:
    """Why the agent ``recorded`` names (an entrant's spec, or an agent object's name), which a run would record and
    file its result under by its label, is not the agent a reader of that result takes the label for
    (``canonical_label``: the text parsed without looking at files, its options sorted, its defaults left out), or
    None. The run parses an existing checkpoint file's name whole (``sub/pol:greedy=true``, ``majority:open_min=4``)
    and takes an agent object's name as it is (``mcts:sims=100,c=1.4``); a reader takes either text as a spec, so the
    result would be filed under one name and shown under another, or shown as another agent's row (a checkpoint file
    named ``majority:open_min=4`` is not that ``majority``). The message names both and says what to do: rename it."""
    label = recorded.label if isinstance(recorded, AgentSpec) else recorded
    read = registry_of(game).canonical(recorded_spec(label))
    if read.label != label:
        return (
            f"{label!r} would be recorded under that name, but a reader of its result takes that text as the spec "
            f"{read.label!r} (its options sorted, its defaults left out) and shows it so; rename it"
        )
    if isinstance(recorded, AgentSpec) and read != recorded:
        return (
            f"{label!r} would be recorded under that name, but a reader of its result takes that text as agent "
            f"{read.name!r} with options {dict(read.options)}, and would show this result as that agent's; rename it"
        )
    return None


def check_agent(suite: Suite, agent: str | Entrant, workers: int) -> tuple[Entrant, dict[str, Any]]:
    """The agent as an entrant, built once at every deck of the suite, with what identifies it. A spec is taken in
    its canonical form (``Registry.canonical``: options sorted, defaults left out), which the result records and is
    filed under, so one agent typed two ways has one result; a label that would read back as another
    (``read_back_problem``: a checkpoint file whose name holds options) is refused before the file is read."""
    registry = registry_of(suite.game)
    if isinstance(agent, str | AgentSpec):
        spec = registry.checked_canonical(agent)
        entrant: Entrant = spec
        problem = spec_problem(spec.label)  # the page refuses a file of a spec it cannot print
        if problem is not None:
            raise ValueError(f"agent spec: {problem}")
        problem = read_back_problem(suite.game, spec)
        if problem is not None:
            raise ValueError(
                f"agent spec: the checkpoint file {problem} so that its name holds no ':' (e.g. "
                f"{spec.label.replace(':', '_')!r}) and give that name"
            )
    elif isinstance(agent, Agent):
        if workers > 1:
            raise ValueError(f"agent object {agent.name!r} cannot be sent to worker processes; use workers=1 or a spec")
        entrant = agent
        _check_object_name(agent.name, registry, suite)
    else:
        raise ValueError(f"expected an agent spec or an agent object, got {shown(agent)}")
    built = _build(suite, entrant)
    checkpoint = None
    if isinstance(entrant, AgentSpec) and (entrant.name in registry.zoo() or entrant.name.endswith(".npz")):
        checkpoint = file_sha256(registry.policy_path(entrant.name))
    fingerprint = behaviour_fingerprint(built, suite.game, _decks(suite)[0])
    if isinstance(entrant, AgentSpec) and FACTORY.match(entrant.name):
        again = behaviour_fingerprint(_build(suite, entrant), suite.game, _decks(suite)[0])
        if again != fingerprint:
            raise ValueError(
                f"agent {entrant_label(entrant)} plays differently when built twice with seed 0 (fingerprints "
                f"{fingerprint} and {again}): its play is not set by its seed, so its result could be neither "
                "reproduced nor resumed; draw every random choice from a generator seeded with the seed it is given"
            )
    identity = {"spec": entrant_label(entrant), "fingerprint": fingerprint, "checkpoint_sha256": checkpoint}
    return entrant, identity


def _check_object_name(name: object, registry: Registry, suite: Suite) -> None:
    """An agent object's name is what its result is filed and shown under: text the pages can print (checked here,
    not after the games), no name of an agent this package builds (a registered agent, with options or not, or a
    zoo policy), whose row would credit that agent and give a command that plays it, and a name that reads back as
    itself (``read_back_problem``: ``mcts:sims=100,c=1.4`` is shown as ``mcts:c=1.4,sims=100``)."""
    if not isinstance(name, str):
        raise ValueError(f"agent object's name: {shown(name)} is not a text")
    problem = spec_problem(name)
    if problem is not None:
        raise ValueError(f"agent object's name: {problem}")
    if recorded_spec(name).name in registry.names():
        which = f"an anchor of suite {suite.name!r}" if name in suite.anchor_names else "an agent this package builds"
        raise ValueError(
            f"agent object {name!r} has the name of {which} ({registry.game} agents: {registry.names()}); give it "
            "another name, so that its results are not filed as that agent's"
        )
    if registry.builds(recorded_spec(name).name):
        raise ValueError(
            f"agent object {name!r} names an agent this package builds from a file or a factory (a checkpoint path "
            "or module:factory), whose row would give a command that plays that agent; give it another name"
        )
    problem = read_back_problem(suite.game, name)
    if problem is not None:
        raise ValueError(
            f"agent object {problem} {canonical_label(suite.game, name)!r} (or give it a name without ':'), "
            "so that its result is filed under the name it is shown by"
        )


def _decks(suite: Suite) -> list[str]:
    return list(dict.fromkeys(cell.deck for cell in suite.cells))


def _build(suite: Suite, entrant: Entrant) -> Agent:
    """The agent built with seed 0 (an agent object re-seeded with 0 by its ``reset(seed)`` hook, if it has one),
    checked against every deck of the suite (the card game)."""
    if not isinstance(entrant, AgentSpec):
        reseeded(entrant, 0)
    built = [built_at(suite.game, entrant, deck) for deck in _decks(suite)]
    return built[0]


def built_at(game: str, entrant: Entrant, deck: str) -> Agent:
    """``entrant`` as it plays ``game`` at a table of ``deck``, built with seed 0 (a spec; an object as it is, seated
    at the card game's table); the agent a fingerprint is taken of."""
    if game == "friday":
        return registry_of("friday").make(entrant, seed=0) if isinstance(entrant, AgentSpec) else entrant
    from friday13_env.friday13.agents.seating import make_seated

    return make_seated(entrant, 0, deck)


def entrant_fingerprint(game: str, entrant: Entrant, deck: str) -> str:
    """How ``entrant`` plays ``game`` at ``deck``'s table, built as ``built_at`` builds it: the fingerprint a result
    (its suite's first deck) and a ratings file (the standard deck) record."""
    return behaviour_fingerprint(built_at(game, entrant, deck), game, deck)


def check_suite(suite: Suite, split: str) -> str:
    """The split's deal digest, after checking it and every anchor's fingerprint against the frozen suite."""
    digest = deals_digest(suite, split)
    if digest != suite.deals_sha256[split]:
        raise ValueError(
            f"suite {suite.id}: the {split} deals this installation generates hash to {digest[:16]}..., not the "
            f"frozen {suite.deals_sha256[split][:16]}...: the dealing code changed, and results would not compare"
        )
    registry = registry_of(suite.game)
    for anchor, expected in suite.anchors.items():
        found = behaviour_fingerprint(registry.make(anchor, seed=0), suite.game, _decks(suite)[0])
        if found != expected:
            raise ValueError(
                f"suite {suite.id}: anchor {anchor!r} plays differently from the suite's (fingerprint {found}, "
                f"frozen {expected}): its results would not compare"
            )
    return digest


@dataclass(frozen=True)
class Plan:
    """A checked benchmark run: what ``prepare`` found and ``execute`` plays."""

    suite: Suite
    split: str
    entrant: Entrant
    header: dict[str, Any]
    processes: int
    out: Path | None
    replays: ReplaySaving | None = None
    """Where the units played save the games of each cell's first deals (units resumed from a partial file
    are not played again, so their games are not saved)."""

    @property
    def partial_path(self) -> Path | None:
        return None if self.out is None else partial_path(self.out)


PARTIAL_SUFFIX = ".partial"
"""What ``partial_path`` adds to the result's name: the longest name a run writes is its result's with this."""


def partial_path(out: str | Path) -> Path:
    """Where a run writing ``out`` keeps its finished units until it is complete."""
    return Path(str(out) + PARTIAL_SUFFIX)


def prepare(
    agent: str | Entrant,
    suite: str | Suite,
    *,
    split: str = "test",
    workers: int | None = None,
    out: str | Path | None = None,
    replays: ReplaySaving | None = None,
) -> Plan:
    """Every check of a run, before any game: the suite, split, worker count, agent, deals and anchors.

    ``out`` (where the result goes; ``OUT.partial`` holds the finished units until then) must be a path where both
    can be written as files: a folder, a path below a file or a folder that cannot be written in is a ``ValueError``
    here, not after the games. ``replays`` (checked by its caller) saves the games of each cell's first deals as
    replay files."""
    out_path = None if out is None else checked_out(out)
    suite = suite if isinstance(suite, Suite) else get_suite(suite)
    problems = definition_problems(suite)
    if problems:
        raise ValueError(f"suite {suite.name!r}: " + "; ".join(problems))
    suite.split(split)
    processes = available_cpus() if workers is None else count_option("workers", workers, takes="a positive int")
    entrant, identity = check_agent(suite, agent, processes)
    if suite.references:
        scipy_stats()  # the aggregate needs the benchmark extra: missing, that is an error now, not after the games
    digest = check_suite(suite, split)
    header = {
        "format": RESULT_FORMAT,
        "format_version": RESULT_FORMAT_VERSION,
        "suite": {"name": suite.name, "version": suite.version, "id": suite.id, "split": split, "deals_sha256": digest},
        "agent": identity,
    }
    plan = Plan(suite, split, entrant, header, min(processes, available_cpus()), out_path, replays)
    if plan.partial_path is not None:
        done = _resume(plan.partial_path, header, planned_units(suite, split, entrant), suite.game)  # an error now
        if done and not isinstance(entrant, AgentSpec) and not callable(getattr(entrant, "reset", None)):
            raise ValueError(
                f"{plan.partial_path}: agent object {entrant.name!r} has no reset(seed) hook, so its play depends on "
                "the games it played before this process: continuing the partial run would not give the run it "
                "began; delete the partial file to play every unit here, or give the agent reset(seed)"
            )
    return plan


def checked_out(out: object) -> Path:
    """``out`` as a path where a run can write its result and keep ``OUT.partial``, or a ``ValueError`` saying why
    not (nothing is created). A partial file that exists but is not a regular file is refused unread, as
    ``read_json`` refuses it."""
    if not isinstance(out, str | Path):
        raise ValueError(f"out must be a path (a str or a pathlib.Path) of the result file, not {shown(out)}")
    path = Path(out)
    partial = partial_path(path)
    problem = check_output_path(path, suffix=PARTIAL_SUFFIX)  # the words of `friday13 benchmark --out`'s own check
    if problem is not None:  # first: a name too long to look up would make the checks below raise
        raise ValueError(f"out {problem}")
    if partial.exists() and not partial.is_file():
        raise ValueError(f"partial benchmark file {partial} is not a regular file; not read")
    problem = check_output_path(partial)
    if problem is not None:
        raise ValueError(f"out {problem}")
    return path


def run_benchmark(
    agent: str | Entrant,
    suite: str | Suite,
    *,
    split: str = "test",
    workers: int | None = None,
    out: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    replays: ReplaySaving | None = None,
) -> dict[str, Any]:
    """Play ``suite``'s ``split`` with ``agent`` and return the result (also written to ``out`` when given).

    ``agent`` is anything the game's ``agents.make`` takes, ``"module:factory"`` included, or an agent object
    (then ``workers`` must be 1). ``workers`` defaults to every usable core. ``progress(done, total)`` is called
    with games played. With ``out``, finished units are kept in ``OUT.partial`` and a second call continues.
    ``replays`` saves the games of each cell's first deals as replay files; the result is the same without it.
    """
    return execute(prepare(agent, suite, split=split, workers=workers, out=out, replays=replays), progress)


def execute(plan: Plan, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Play what ``prepare`` checked, continuing from its partial file, and write the result."""
    suite, split, header = plan.suite, plan.split, plan.header
    planned = planned_units(suite, split, plan.entrant)
    done = {} if plan.partial_path is None else _resume(plan.partial_path, header, planned, suite.game)
    resumed_units = len(done)
    games = suite.games_per_cell(split)
    total = sum(games)
    games_per_deal = [cell_games // suite.split(split).deals for cell_games in games]
    played = sum(games_per_deal[cell] * len(result.rows) for (cell, _), result in done.items())
    if progress is not None:
        progress(played, total)
    start = time.perf_counter()
    todo = (unit for unit in units(suite, split, plan.entrant, plan.replays) if _key(unit) not in done)
    for unit, unit_result in ordered_results(play_unit, todo, plan.processes):
        done[_key(unit)] = unit_result
        played += games_per_deal[unit.cell_index] * unit.count
        if plan.partial_path is not None:
            atomic_write_text(plan.partial_path, _dumps({**header, "complete": False, "units": _units_json(done)}))
        if progress is not None:
            progress(played, total)
    result = _assemble(suite, split, header, done, plan.processes, time.perf_counter() - start, resumed_units)
    if plan.out is not None and plan.partial_path is not None:
        atomic_write_text(plan.out, _dumps(result))
        plan.partial_path.unlink(missing_ok=True)
    return result


UnitKey = tuple[int, int]
"""A unit's cell index and first deal; ``"CELL:FIRST"`` in a partial file."""


def _key(unit: Unit) -> UnitKey:
    return unit.cell_index, unit.first


def _units_json(done: dict[UnitKey, UnitResult]) -> dict[str, Any]:
    return {
        f"{cell}:{first}": {"rows": r.rows.tolist(), "act_seconds": r.act_seconds, "decisions": r.decisions}
        for (cell, first), r in done.items()
    }


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, allow_nan=False) + "\n"


def read_json(path: str | Path, what: str, expected: str = RESULT_FORMAT) -> dict[str, Any]:
    """A result, partial, ratings or exploitability file as a dict, or a ``ValueError`` naming the file and why not.

    Only a regular file is opened (not a device, a pipe or a folder, a link to one included), and no more than
    ``MAX_RESULT_BYTES`` of it is read; JSON's NaN and Infinity, nesting too deep to parse and an integer of more
    digits than Python converts are refused, and so is an object that gives a key twice."""
    path = Path(path)
    raw = read_capped(path, MAX_RESULT_BYTES, what)
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_not_a_number, object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError) as error:  # ValueError: a JSONDecodeError, a UnicodeDecodeError, or an
        reason = "nested too deeply" if isinstance(error, RecursionError) else error  # integer of over 4,300 digits
        raise ValueError(f"{what} {path} is not JSON: {reason}") from error
    if not isinstance(data, dict) or data.get("format") != expected:
        raise ValueError(f"{what} {path} is not a {expected} file (its format is not {expected!r})")
    version = data.get("format_version")
    if type(version) is not int or version != RESULT_FORMAT_VERSION:  # True == 1 to Python, not in a file
        raise ValueError(
            f"{what} {path} has format version {shown(version)}; this package reads {RESULT_FORMAT_VERSION}"
        )
    return data


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: a key given twice (which one would a reader take?) is refused."""
    data = dict(pairs)
    if len(data) < len(pairs):
        repeated = sorted(key for key, count in Counter(key for key, _ in pairs).items() if count > 1)
        raise ValueError(f"an object repeats the key(s) {repeated[:5]}")
    return data


def _not_a_number(token: str) -> float:
    """JSON's ``NaN`` and ``Infinity`` tokens, which no result holds (they are written with ``allow_nan=False``)."""
    raise json.JSONDecodeError(f"{token} is not a number a result holds", token, 0)


def _resume(path: Path, header: dict[str, Any], planned: dict[UnitKey, int], game: str) -> dict[UnitKey, UnitResult]:
    """The units a partial file holds, if it was made by this very run (same suite, split, deals and agent: the same
    fingerprint and checkpoint, its spec the same once in canonical form, as an earlier release recorded it as typed;
    the next unit's write records it as this run does): each
    one of the ``planned`` units (``{(cell, first deal): deals}``) with its rows (``rows_problem``: win shares in
    [0, 1], margins at most ``MAX_MARGIN`` in size), its time (at most ``MAX_UNIT_SECONDS``) and its count of moves
    (at most ``MAX_UNIT_DECISIONS``), whose sums give a finite cost per move; anything else is a damaged file,
    refused before a game is played."""
    if not path.exists():
        return {}
    data = read_json(path, "partial benchmark file")
    for part in ("suite", "agent"):
        if data.get(part) != header[part] and not (part == "agent" and _same_agent(data[part], header[part], game)):
            raise ValueError(
                f"{path} is a partial run of another {part} ({shown(data.get(part), 200)}, this run: "
                f"{shown(header[part], 200)}); delete it or choose another --out"
            )
    done = {}
    try:
        for key, unit in data["units"].items():
            cell, colon, first = key.partition(":")
            if not (colon and cell.isdigit() and first.isdigit()) or (int(cell), int(first)) not in planned:
                raise ValueError(f"unit {key!r} is not one of this run's")
            count = planned[int(cell), int(first)]
            rows = number_rows(unit["rows"], count)
            if rows is None:
                raise ValueError(
                    f"unit {key} has rows that are not {count} rows of {len(METRICS)} finite numbers (texts and "
                    "booleans are not numbers)"
                )
            if problem := rows_problem(rows, f"unit {key}"):
                raise ValueError(problem)
            done[int(cell), int(first)] = UnitResult(rows, _unit_seconds(key, unit), _unit_decisions(key, unit))
        seconds = math.fsum(result.act_seconds for result in done.values())
        decisions = sum(result.decisions for result in done.values())
        if not math.isfinite(seconds) or (decisions and not math.isfinite(1000.0 * seconds / decisions)):
            raise ValueError(f"its units' {seconds:g} s over {decisions} moves give no finite cost per move")
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise ValueError(f"{path} is a damaged partial benchmark file ({error}); delete it to start again") from error
    return done


def _same_agent(recorded: object, identity: dict[str, Any], game: str) -> bool:
    """Whether a partial file's agent identity (``recorded``) is ``identity`` once its spec is in canonical form
    (``canonical_label``): the same fingerprint, checkpoint and fields, an earlier release's spec as typed allowed."""
    if not isinstance(recorded, dict) or recorded.keys() != identity.keys():
        return False
    spec = recorded.get("spec")
    if not isinstance(spec, str) or spec_problem(spec) is not None:  # spec_problem refuses a spec of spaces only
        return False
    return {**recorded, "spec": canonical_label(game, spec)} == identity


def _unit_seconds(key: str, unit: dict[str, Any]) -> float:
    """A partial file's unit's seconds of ``act`` calls: a number (not a bool or a text), 0 to ``MAX_UNIT_SECONDS``."""
    seconds = unit["act_seconds"]
    if not is_duration(seconds):
        raise ValueError(f"unit {key} has no time in seconds")
    if seconds > MAX_UNIT_SECONDS:
        raise ValueError(f"unit {key} took {seconds:g} s of moves, over the {MAX_UNIT_SECONDS:g} s a unit can take")
    return float(seconds)


def _unit_decisions(key: str, unit: dict[str, Any]) -> int:
    """A partial file's unit's count of moves: an int (not a bool or a float), 0 to ``MAX_UNIT_DECISIONS``."""
    decisions = unit["decisions"]
    if type(decisions) is not int:
        raise ValueError(f"unit {key} has no count of moves")
    if decisions < 0:
        raise ValueError(f"unit {key} has a negative count of moves")
    if decisions > MAX_UNIT_DECISIONS:
        raise ValueError(f"unit {key} has {shown(decisions)} moves, over the {MAX_UNIT_DECISIONS:,} a unit can make")
    return decisions


def number_rows(value: object, count: int) -> np.ndarray | None:
    """``value`` as a ``(count, len(METRICS))`` float array if it is a list of ``count`` lists of ``len(METRICS)``
    finite numbers, ints or floats, else None: texts, booleans, None or integers too large for a float are not
    numbers, and are never converted (``np.asarray`` would read ``"1.0"`` and ``True`` as 1.0)."""
    if not isinstance(value, list) or len(value) != count:
        return None
    rows = []
    for row in value:
        if not isinstance(row, list) or len(row) != len(METRICS):
            return None
        numbers = [finite_number(item) for item in row]
        if any(number is None for number in numbers):
            return None
        rows.append(numbers)
    return np.asarray(rows, dtype=np.float64).reshape(count, len(METRICS))


MAX_MARGIN = 10_000.0
"""The most a row's second figure (a margin of bad-luck points, a solo score) may be in size: far beyond what any
game of either scores, and small enough that every sum and bootstrap of a result's rows stays finite."""


def rows_problem(rows: np.ndarray, where: str) -> str | None:
    """Why ``number_rows``'s array cannot be a result's rows (win shares outside [0, 1], a margin or score larger
    than ``MAX_MARGIN``), or ``None``."""
    if rows[:, 0].min() < 0 or rows[:, 0].max() > 1:
        return f"{where} has win shares outside [0, 1]"
    if np.abs(rows[:, 1]).max() > MAX_MARGIN:
        largest = np.abs(rows[:, 1]).max()
        return f"{where} has a margin or score of {largest:.3g} in size (allowed: at most {MAX_MARGIN:,.0f})"
    return None


def planned_units(suite: Suite, split: str, entrant: Entrant) -> dict[UnitKey, int]:
    """``{(cell, first deal): deals}`` of every unit of a run."""
    return {_key(unit): unit.count for unit in units(suite, split, entrant)}


def cell_rows(suite: Suite, done: dict[UnitKey, UnitResult]) -> list[np.ndarray]:
    """Each cell's per-deal rows, in deal order."""
    cells: list[list[np.ndarray]] = [[] for _ in suite.cells]
    for cell, first in sorted(done):
        cells[cell].append(done[cell, first].rows)
    return [np.concatenate(parts) for parts in cells]


def _assemble(
    suite: Suite,
    split: str,
    header: dict[str, Any],
    done: dict[UnitKey, UnitResult],
    workers: int,
    elapsed: float,
    resumed_units: int,
) -> dict[str, Any]:
    rows = cell_rows(suite, done)
    act_seconds = sum(result.act_seconds for result in done.values())
    decisions = sum(result.decisions for result in done.values())
    cells, scores = score(suite, split, rows)
    return {
        **header,
        "complete": True,
        "cells": cells,
        "normalised": scores,
        "cost": {
            "ms_per_move": 1000.0 * act_seconds / decisions if decisions else None,
            "decisions": decisions,
        },
        "provenance": provenance(workers, elapsed, resumed_units),
        "rows": [r.tolist() for r in rows],
    }


def score(suite: Suite, split: str, rows: list[np.ndarray]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Each cell's figures, and the normalised aggregate where the suite has its references (else ``None``)."""
    cells = score_cells(suite, split, rows)
    references = normalisers(suite)
    if references is None:
        return cells, None
    found = aggregate([r[:, 0] for r in rows], *references, suite.split(split).seed)
    return cells, {name: interval.to_dict() for name, interval in found.items()}


def normalisers(suite: Suite) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """The win shares per cell that score 0 and 1 (``random``'s, ``search``'s), or None before they were measured."""
    if not all(name in suite.references for name in NORMALISERS):
        return None
    return suite.references["random"], suite.references["search"]


def score_cells(suite: Suite, split: str, rows: list[np.ndarray]) -> list[dict[str, Any]]:
    """Each cell's deals, games, mean win share and second metric with their Student-t intervals, and its
    normalised win share where the suite has its references."""
    references = normalisers(suite)
    cells = []
    for index, (cell, cell_games) in enumerate(zip(suite.cells, suite.games_per_cell(split), strict=True)):
        win = cell_interval(rows[index][:, 0], (0.0, 1.0))
        entry = {
            "name": cell.name,
            "deals": len(rows[index]),
            "games": cell_games,
            "win_share": win.to_dict(),
            SECOND_METRIC[suite.game]: cell_interval(rows[index][:, 1]).to_dict(),
            "normalised": None,
        }
        if references is not None:
            low, high = references[0][index], references[1][index]
            entry["normalised"] = normalised_interval(win, low, high).to_dict()
        cells.append(entry)
    return cells


def rescored(result: dict[str, Any], suite: Suite) -> dict[str, Any]:
    """``result`` with its cells and aggregate computed again from its rows, with ``suite``'s references: how a
    suite's own normalisers get their scores once their results have become the references."""
    rows = [np.asarray(cell, dtype=np.float64) for cell in result["rows"]]
    cells, scores = score(suite, result["suite"]["split"], rows)
    return {**result, "cells": cells, "normalised": scores}


def provenance(workers: int, elapsed: float, resumed_units: int) -> dict[str, Any]:
    """Where and when a result was made (none of it enters the scores)."""
    return {
        "package_version": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        **{library: installed_version(library) for library in STATISTICS_LIBRARIES},
        "machine": f"{platform.machine()}, {_processor()}, {available_cpus()} usable CPUs",
        "platform": platform.platform(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "workers": workers,
        "elapsed_s": round(elapsed, 3),
        "elapsed_note": "this session only" if resumed_units else "the whole run",
        "resumed_units": resumed_units,
        "command": shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv and sys.argv[0] else None,
    }


STATISTICS_LIBRARIES = ("scipy", "openskill")
"""What computes a result's aggregate intervals (scipy's bootstrap) and the ratings (openskill): named in its
provenance, since another version can give other intervals and ratings from the same games."""


def installed_version(library: str) -> str | None:
    try:
        return importlib.metadata.version(library)
    except importlib.metadata.PackageNotFoundError:
        return None


def _processor() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown processor"


def reproduces(first: dict[str, Any], second: dict[str, Any]) -> bool:
    """Whether two results of one suite and agent agree on everything measured (not on time, place or cost)."""
    keys = ("suite", "agent", "cells", "normalised", "rows")
    return all(first.get(key) == second.get(key) for key in keys)
