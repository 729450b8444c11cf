"""The result files the leaderboard reads, each checked before one of its figures is shown.

A result is cited by its numbers and its agent's name, so every figure the page shows must follow from the file's
own rows and the suite this package ships: the suite's header exactly, a complete run, the agent's spec (plain text,
and the file's name); for an anchor, or any agent this package builds by a name without options, the fingerprint it
plays with here (and a zoo policy's checkpoint hash); the rows' shape and range; each cell's figures and the
aggregate's values computed again from the rows, and the aggregate's intervals from the same seeded bootstrap (to a
tenth of their width: scipy may resample a little differently in another version); the cost and provenance fields
the page prints, within what a run can have. Counts are ints (``True`` and ``40.0`` are not), and a file whose name
holds a control character is refused unread. A file that fails is a ``ValueError`` naming it and what is wrong,
never a traceback or a silently wrong row.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from friday13_env.benchmark.play import METRICS
from friday13_env.benchmark.runner import (
    canonical_label,
    entrant_fingerprint,
    file_sha256,
    installed_version,
    normalisers,
    number_rows,
    read_json,
    registry_of,
    rows_problem,
    score_cells,
)
from friday13_env.benchmark.scores import aggregate
from friday13_env.benchmark.suite import Suite
from friday13_env.core.checks import finite_number, has_control_character, plain_text
from friday13_env.core.specs import shown, spec_problem
from friday13_env.core.stats import Interval

MAX_MACHINE_TEXT = 300
"""The most characters of a result's machine text, which the page prints."""


def result_name(spec: str) -> str:
    """The file name of an agent's result: its spec with anything but letters, digits, ``.``, ``_``, ``-`` as ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", spec) + ".json"


def split_result_name(spec: str, split: str) -> str:
    """The file name of an agent's result on ``split``: ``result_name``'s for the test split, whose results the
    leaderboard shows, with the split before ``.json`` for any other (``majority.dev.json``)."""
    name = result_name(spec)
    return name if split == "test" else name.replace(".json", f".{split}.json")


def read_result(path: Path, known: Mapping[str, Suite]) -> tuple[Suite, str, dict[str, Any]]:
    """A result file of one of the ``known`` suites (by id), every field the page uses checked: its suite, split and
    content, or a ``ValueError`` that names the file."""
    name = f"{path.parent.name}/{path.name}"
    if has_control_character(name):  # never printed raw: a terminal acts on them
        raise ValueError(f"{path.parent.parent}: result file {shown(name)}'s name holds control characters; rename it")
    data = read_json(path, "benchmark result")
    try:
        suite, split = _suite_of(data, path, known)
        problem = _content_problem(data, path, suite, split)
    except (KeyError, TypeError, AttributeError, IndexError) as error:
        problem = f"a field is missing or of the wrong kind ({error!r})"
    if problem is not None:
        raise ValueError(f"{path}: {problem}")
    return suite, split, data


def _suite_of(data: dict[str, Any], path: Path, known: Mapping[str, Suite]) -> tuple[Suite, str]:
    header = data.get("suite")
    if not isinstance(header, dict) or not isinstance(header.get("id"), str):
        raise ValueError(f"{path}: a benchmark result without its suite")
    suite = known.get(header["id"])
    if suite is None:
        raise ValueError(f"{path}: suite {shown(header['id'])} is not one this package ships ({sorted(known)})")
    split = header.get("split")
    if not isinstance(split, str) or split not in suite.splits:
        raise ValueError(f"{path}: split {shown(split)} is not one of suite {suite.id}'s ({sorted(suite.splits)})")
    if header.get("name") != suite.name or type(header.get("version")) is not int or header["version"] != suite.version:
        raise ValueError(f"{path}: its suite name and version disagree with its id {suite.id}")
    if header.get("deals_sha256") != suite.deals_sha256[split]:
        raise ValueError(f"{path}: its deals are not suite {suite.id}'s frozen deals")
    extra = sorted(set(header) - {"name", "version", "id", "split", "deals_sha256"})
    if extra:
        raise ValueError(f"{path}: its suite holds fields a result's does not: {shown(extra)}")
    if path.parent.name != suite.id:
        raise ValueError(f"{path}: a {suite.id} result in the folder of another suite")
    return suite, split


RESULT_FIELDS = frozenset(
    {"format", "format_version", "suite", "agent", "complete", "cells", "normalised", "cost", "provenance", "rows"}
)
"""The fields of a result file (``runner``'s ``_assemble``): a file with others is refused, not read and kept."""
AGENT_FIELDS = frozenset({"spec", "fingerprint", "checkpoint_sha256"})
PROVENANCE_FIELDS = frozenset(
    {
        "package_version", "python", "numpy", "scipy", "openskill", "machine", "platform", "date", "workers",
        "elapsed_s", "elapsed_note", "resumed_units", "command",
    }
)  # fmt: skip
"""The fields of a result's agent and provenance (``runner.provenance``); an older release's may lack some."""
MAX_PROVENANCE_TEXT = 10_000
"""The most characters of a provenance text (a command line, a platform): a run's are far shorter."""


def _fields_problem(data: dict[str, Any]) -> str | None:
    """Fields no run writes, at the top, in the agent or in the provenance, or a provenance text past
    ``MAX_PROVENANCE_TEXT``: a file that holds them is refused (they were read and kept until the page was written,
    so a folder of such files filled the memory)."""
    for where, found, allowed in (
        ("it", data, RESULT_FIELDS),
        ("its agent", data["agent"], AGENT_FIELDS),
        ("its provenance", data["provenance"], PROVENANCE_FIELDS),
    ):
        if extra := sorted(set(found) - allowed):
            return f"{where} holds fields a result does not: {shown(extra)}"
    for key, value in data["provenance"].items():
        if isinstance(value, str) and len(value) > MAX_PROVENANCE_TEXT:
            return f"its provenance's {key} is longer than {MAX_PROVENANCE_TEXT:,} characters"
    return None


def _content_problem(data: dict[str, Any], path: Path, suite: Suite, split: str) -> str | None:
    """What is wrong in a result of ``suite``'s ``split`` beyond its header, or None."""
    if data.get("complete") is not True:
        return "not a complete run"
    if (problem := _fields_problem(data)) is not None:
        return problem
    agent = data["agent"]
    spec = agent["spec"]
    if not isinstance(spec, str) or spec_problem(spec):
        return f"its agent spec: {spec_problem(spec) if isinstance(spec, str) else shown(spec)}"
    expected = split_result_name(spec, split)
    if path.name != expected:
        return f"the result of agent {spec!r} in a file of another name (expected {expected} for the {split} split)"
    if not isinstance(agent["fingerprint"], str) or not isinstance(agent["checkpoint_sha256"], str | None):
        return "its agent's fingerprint and checkpoint hash must be texts"
    anchor = canonical_label(suite.game, spec)  # search:budget=22000 (an earlier release's) is the anchor search
    if anchor in suite.anchors and agent["fingerprint"] != suite.anchors[anchor]:
        return f"anchor {anchor!r} played with fingerprint {agent['fingerprint']!r}, not the suite's"
    rows, problem = _rows(data["rows"], suite, split)
    if problem is not None:
        return problem
    if not same_json(data["cells"], score_cells(suite, split, rows)):
        return "its cells are not what its rows give"
    return (
        _identity_problem(agent, suite)
        or _aggregate_problem(data["normalised"], suite, split, rows, _interval_tolerance(data["provenance"]))
        or _cost_problem(data["cost"], data["provenance"])
    )


def same_json(found: object, expected: object) -> bool:
    """Whether ``found`` (read from a file) is ``expected`` as JSON writes it: ``True`` is not ``1`` there, nor
    ``40.0`` ``40``, as they are to Python's ``==``."""
    return json.dumps(found, sort_keys=True) == json.dumps(expected, sort_keys=True)


def _identity_problem(agent: dict[str, Any], suite: Suite) -> str | None:
    """For an agent this package builds by name with no options (a registered agent or a zoo policy), its options'
    defaults spelled out included (``canonical_label``: the page shows that row as the agent's): does the file say it
    is that agent as this package plays it? Its fingerprint must be the one that agent gives here, and a zoo
    policy's checkpoint hash that of the zoo's file, else the row would credit it with another agent's games. A spec
    with other options, a checkpoint path or a ``module:factory`` is not built (a file must not make the page run a
    search of any budget, or a user's code)."""
    spec = canonical_label(suite.game, agent["spec"])
    registry = registry_of(suite.game)
    if spec not in registry.names():
        return None
    zoo = registry.zoo()
    if spec in zoo and agent["checkpoint_sha256"] != file_sha256(zoo[spec]):
        return f"its checkpoint hash {shown(agent['checkpoint_sha256'])} is not the checkpoint of zoo policy {spec}"
    try:
        played = _fingerprint(suite.game, spec, suite.cells[0].deck)
    except ValueError as error:  # an agent that cannot sit at the suite's deck (a network of another deck)
        return f"its agent {spec} cannot play this suite: {error}"
    if agent["fingerprint"] != played:
        return (
            f"its fingerprint {shown(agent['fingerprint'])} is not how {spec} plays in this package ({played}): "
            "another agent's games, or another version's"
        )
    return None


@cache
def _fingerprint(game: str, spec: str, deck: str) -> str:
    """The behaviour fingerprint of a registered agent or zoo policy as ``runner.check_agent`` takes it (seed 0, the
    suite's first deck), computed once per process."""
    return entrant_fingerprint(game, registry_of(game).check(spec), deck)


def _rows(found: object, suite: Suite, split: str) -> tuple[list[np.ndarray], str | None]:
    """Each cell's rows as an array, or the problem: rows of finite numbers only (a text ``"1.0"`` or a boolean is
    refused, not converted), one per deal, win shares in [0, 1], margins at most ``runner.MAX_MARGIN`` in size."""
    deals = suite.split(split).deals
    if not isinstance(found, list) or len(found) != len(suite.cells):
        return [], f"its rows must be a list of {len(suite.cells)} cells"
    rows = []
    for cell, cell_rows in zip(suite.cells, found, strict=True):
        array = number_rows(cell_rows, deals)
        if array is None:
            return [], (
                f"cell {cell.name}'s rows are not numbers, or not {deals} rows of {len(METRICS)}: a row holds "
                f"{len(METRICS)} finite numbers (not texts or booleans)"
            )
        if problem := rows_problem(array, f"cell {cell.name}"):
            return [], problem
        rows.append(array)
    return rows, None


def _aggregate_problem(found: object, suite: Suite, split: str, rows: list[np.ndarray], tolerance: float) -> str | None:
    """The normalised IQM and mean against what the rows give: each value exactly, each interval's ends within
    ``tolerance`` of its width of the seeded bootstrap computed again here (``_interval_tolerance``: scipy may resample
    a little differently in another version; an interval narrowed, widened or dropped is refused)."""
    references = normalisers(suite)
    if references is None:
        return None if found is None else "a normalised score, where the suite has no references"
    if not isinstance(found, dict) or set(found) != {"iqm", "mean"}:
        return "its normalised score must hold the iqm and the mean"
    recomputed = aggregate([r[:, 0] for r in rows], *references, suite.split(split).seed)
    for name, expected in recomputed.items():
        interval = found[name]
        if not isinstance(interval, dict) or interval.get("value") != expected.value:
            return f"its normalised {name} is not what its rows give ({expected.value!r})"
        if not _interval_matches((interval.get("low"), interval.get("high")), expected, tolerance):
            shown_ends = "undefined" if math.isnan(expected.low) else f"[{expected.low:.4f}, {expected.high:.4f}]"
            return f"its normalised {name}'s interval is not what its rows give ({shown_ends})"
    return None


INTERVAL_TOLERANCE = 0.1
"""How far, as a share of the interval's width, a file's aggregate interval's ends may lie from the bootstrap
computed again from its rows, where the file was made with another scipy (or does not say which)."""


def _interval_tolerance(provenance: object) -> float:
    """0 (the same bootstrap, to float rounding) for a file made with the scipy installed here, which its provenance
    names; else ``INTERVAL_TOLERANCE``."""
    made_with = provenance.get("scipy") if isinstance(provenance, dict) else None
    return 0.0 if made_with is not None and made_with == installed_version("scipy") else INTERVAL_TOLERANCE


def _interval_matches(ends: tuple[object, object], expected: Interval, tolerance: float) -> bool:
    if math.isnan(expected.low) or math.isnan(expected.high):  # a cell of one deal: no interval
        return ends == (None, None)
    low, high = (finite_number(end) for end in ends)
    if low is None or high is None:
        return False
    slack = tolerance * (expected.high - expected.low) + 1e-12
    return abs(low - expected.low) <= slack and abs(high - expected.high) <= slack


MAX_DECISIONS = 10**15
"""The most moves a result may count: no run of any suite makes more (a unit makes at most ``MAX_UNIT_DECISIONS``)."""
MAX_MILLISECONDS_PER_MOVE = 3_600_000.0
"""An hour per move: above it, a cost no agent's run has."""
MAX_ELAPSED_SECONDS = 10.0**9
"""About 30 years: above it, no run's time."""
MAX_WORKERS = 1 << 20
"""The most processes a result may say it used."""


def _cost_problem(cost: dict[str, Any], provenance: dict[str, Any]) -> str | None:
    """The cost and provenance fields the page prints: counts and durations a run can have (a bool is no count)."""
    ms_per_move, decisions = cost["ms_per_move"], cost["decisions"]
    if not (type(decisions) is int and 0 <= decisions <= MAX_DECISIONS):
        return f"its cost's decisions must be a count of 0 to {MAX_DECISIONS:,}"
    if not (ms_per_move is None if decisions == 0 else _at_most(ms_per_move, MAX_MILLISECONDS_PER_MOVE)):
        return (
            f"its cost per move must be a number of milliseconds from 0 to {MAX_MILLISECONDS_PER_MOVE:,.0f} (none "
            "without decisions)"
        )
    if not _at_most(provenance["elapsed_s"], MAX_ELAPSED_SECONDS):
        return f"its provenance's elapsed seconds must be a number from 0 to {MAX_ELAPSED_SECONDS:,.0f}"
    workers = provenance["workers"]
    if not (type(workers) is int and 1 <= workers <= MAX_WORKERS):
        return f"its provenance's workers must be a count of 1 to {MAX_WORKERS:,}"
    if not (isinstance(provenance["machine"], str) and plain_text(provenance["machine"], MAX_MACHINE_TEXT)):
        return f"its provenance's machine must be 1-{MAX_MACHINE_TEXT} characters without | ` or controls"
    return None


def _at_most(value: object, most: float) -> bool:
    number = finite_number(value)
    return number is not None and 0 <= number <= most
