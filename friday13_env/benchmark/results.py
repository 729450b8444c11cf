"""The result files the leaderboard reads, each checked before one of its figures is shown.

A result is cited by its numbers, so every figure the page shows must follow from the file's own rows and the
suite this package ships: the suite's header exactly, a complete run, the agent's spec (plain text, and the file's
name) and, for an anchor, its fingerprint; the rows' shape and range; each cell's figures and the aggregate's values
computed again from the rows (the aggregate's intervals come from scipy's bootstrap, so only their order is
checked); the cost and provenance fields the page prints. A file that fails is a ``ValueError`` naming it and
what is wrong, never a traceback or a silently wrong row.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from friday13_env.benchmark.exploitability import spec_problem
from friday13_env.benchmark.play import METRICS
from friday13_env.benchmark.runner import normalisers, number_rows, read_json, score_cells
from friday13_env.benchmark.scores import aggregate_values
from friday13_env.benchmark.suite import Suite
from friday13_env.core.checks import finite_number, is_duration, plain_text
from friday13_env.core.specs import shown

MAX_MACHINE_TEXT = 300
"""The most characters of a result's machine text, which the page prints."""


def result_name(spec: str) -> str:
    """The file name of an agent's result: its spec with anything but letters, digits, ``.``, ``_``, ``-`` as ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", spec) + ".json"


def read_result(path: Path, known: Mapping[str, Suite]) -> tuple[Suite, str, dict[str, Any]]:
    """A result file of one of the ``known`` suites (by id), every field the page uses checked: its suite, split and
    content, or a ``ValueError`` that names the file."""
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
        raise ValueError(f"{path}: suite {header['id']} is not one this package ships ({sorted(known)})")
    split = header.get("split")
    if not isinstance(split, str) or split not in suite.splits:
        raise ValueError(f"{path}: split {shown(split)} is not one of suite {suite.id}'s ({sorted(suite.splits)})")
    if (header.get("name"), header.get("version")) != (suite.name, suite.version):
        raise ValueError(f"{path}: its suite name and version disagree with its id {suite.id}")
    if header.get("deals_sha256") != suite.deals_sha256[split]:
        raise ValueError(f"{path}: its deals are not suite {suite.id}'s frozen deals")
    extra = sorted(set(header) - {"name", "version", "id", "split", "deals_sha256"})
    if extra:
        raise ValueError(f"{path}: its suite holds fields a result's does not: {shown(extra)}")
    if path.parent.name != suite.id:
        raise ValueError(f"{path}: a {suite.id} result in the folder of another suite")
    return suite, split


def _content_problem(data: dict[str, Any], path: Path, suite: Suite, split: str) -> str | None:
    """What is wrong in a result of ``suite``'s ``split`` beyond its header, or None."""
    if data.get("complete") is not True:
        return "not a complete run"
    agent = data["agent"]
    spec = agent["spec"]
    if not isinstance(spec, str) or spec_problem(spec):
        return f"its agent spec: {spec_problem(spec) if isinstance(spec, str) else shown(spec)}"
    name = result_name(spec)
    if path.name != (name if split == "test" else name.replace(".json", f".{split}.json")):
        return f"the result of agent {spec!r} in a file of another name (expected {name} for the {split} split)"
    if not isinstance(agent["fingerprint"], str) or not isinstance(agent["checkpoint_sha256"], str | None):
        return "its agent's fingerprint and checkpoint hash must be texts"
    if spec in suite.anchors and agent["fingerprint"] != suite.anchors[spec]:
        return f"anchor {spec!r} played with fingerprint {agent['fingerprint']!r}, not the suite's"
    rows, problem = _rows(data["rows"], suite, split)
    if problem is not None:
        return problem
    if data["cells"] != score_cells(suite, split, rows):
        return "its cells are not what its rows give"
    return _aggregate_problem(data["normalised"], suite, rows) or _cost_problem(data["cost"], data["provenance"])


def _rows(found: object, suite: Suite, split: str) -> tuple[list[np.ndarray], str | None]:
    """Each cell's rows as an array, or the problem: rows of finite numbers only (a text ``"1.0"`` or a boolean is
    refused, not converted), one per deal, win shares in [0, 1]."""
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
        if array[:, 0].min() < 0 or array[:, 0].max() > 1:
            return [], f"cell {cell.name}'s win shares must lie in [0, 1]"
        rows.append(array)
    return rows, None


def _aggregate_problem(found: object, suite: Suite, rows: list[np.ndarray]) -> str | None:
    references = normalisers(suite)
    if references is None:
        return None if found is None else "a normalised score, where the suite has no references"
    if not isinstance(found, dict) or set(found) != {"iqm", "mean"}:
        return "its normalised score must hold the iqm and the mean"
    values = aggregate_values([r[:, 0] for r in rows], *references)
    for name, value in values.items():
        interval = found[name]
        if not isinstance(interval, dict) or interval.get("value") != value:
            return f"its normalised {name} is not what its rows give ({value!r})"
        ends = interval.get("low"), interval.get("high")
        if ends == (None, None):
            continue
        low, high = (finite_number(end) for end in ends)
        if low is None or high is None or not low <= value <= high:
            return f"its normalised {name}'s interval must hold its value"
    return None


def _cost_problem(cost: dict[str, Any], provenance: dict[str, Any]) -> str | None:
    ms_per_move, decisions = cost["ms_per_move"], cost["decisions"]
    if not (isinstance(decisions, int) and not isinstance(decisions, bool) and decisions >= 0):
        return "its cost's decisions must be a count"
    if not (ms_per_move is None if decisions == 0 else is_duration(ms_per_move)):
        return "its cost per move must be a number of milliseconds (none without decisions)"
    if not is_duration(provenance["elapsed_s"]):
        return "its provenance's elapsed seconds must be a number"
    workers = provenance["workers"]
    if not (isinstance(workers, int) and not isinstance(workers, bool) and workers >= 1):
        return "its provenance's workers must be a positive count"
    if not (isinstance(provenance["machine"], str) and plain_text(provenance["machine"], MAX_MACHINE_TEXT)):
        return f"its provenance's machine must be 1-{MAX_MACHINE_TEXT} characters without | ` or controls"
    return None
