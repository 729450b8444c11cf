"""Small suites for the benchmark tests: a few deals of a few cheap cells, with their digests and anchors
computed here so that ``runner.prepare``'s checks pass exactly as they do for a shipped suite."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from friday13_env.benchmark import fingerprints, runner
from friday13_env.benchmark.results import result_name
from friday13_env.benchmark.suite import SPLITS, Cell, Split, Suite, get_suite
from friday13_env.cli import main

CARD_CELLS = (
    Cell("4p-vs-random", players=4, deck="standard", opponents=("random",) * 3),
    Cell("3p-vs-cautious", players=3, deck="standard", opponents=("cautious",) * 2),
)
"""Two cheap card-game cells of different table sizes (no ``search``: it costs ~0.7 s per seat and game)."""
SOLO_CELLS = (Cell("level-1", level=1), Cell("level-3", level=3))


@cache
def anchor_fingerprint(game: str, deck: str, anchor: str) -> str:
    """An anchor's behaviour fingerprint as ``runner.check_suite`` computes it (cached: each costs a little)."""
    agent = runner.registry_of(game).make(anchor, seed=0)
    return fingerprints.behaviour_fingerprint(agent, game, deck)


def small_suite(
    cells: Sequence[Cell] = CARD_CELLS,
    deals: int = 5,
    seeds: tuple[int, int] = (11, 12),
    anchors: Sequence[str] | None = None,
    references: Mapping[str, Sequence[float]] | None = None,
    name: str = "tiny",
) -> Suite:
    """A checked suite of ``cells``: its digests and anchor fingerprints are the real ones, so it passes
    ``check_suite``. Card cells come from ``card-4p``'s settings, solo cells from ``friday-levels``'s."""
    game = "friday" if cells[0].level else "friday13"
    base = get_suite("friday-levels" if game == "friday" else "card-4p")
    if anchors is None:
        anchors = sorted({opponent for cell in cells for opponent in cell.opponents} or {"random"})
    deck = cells[0].deck
    suite = dataclasses.replace(
        base,
        name=name,
        cells=tuple(cells),
        splits={split: Split(seed, deals) for split, seed in zip(SPLITS, seeds, strict=True)},
        anchors={anchor: anchor_fingerprint(game, deck, anchor) for anchor in anchors},
        references={} if references is None else {key: tuple(values) for key, values in references.items()},
    )
    return dataclasses.replace(suite, deals_sha256={split: fingerprints.deals_digest(suite, split) for split in SPLITS})


def made_result(
    suite: Suite, spec: str = "random", split: str = "test", seed: int = 0, win: float = 0.5
) -> dict[str, Any]:
    """A result file's content for ``suite`` as ``runner`` assembles it, from made-up rows that win about ``win``
    of their deals (no game played)."""
    rng = np.random.default_rng(seed)
    deals = suite.split(split).deals
    rows = [np.column_stack([rng.random(deals) < win, rng.normal(0, 5, deals)]).astype(float) for _ in suite.cells]
    cells, normalised = runner.score(suite, split, rows)
    return {
        "format": runner.RESULT_FORMAT,
        "format_version": runner.RESULT_FORMAT_VERSION,
        "suite": {
            "name": suite.name,
            "version": suite.version,
            "id": suite.id,
            "split": split,
            "deals_sha256": suite.deals_sha256[split],
        },
        "agent": made_identity(suite, spec),
        "complete": True,
        "cells": cells,
        "normalised": normalised,
        "cost": {"ms_per_move": 0.5, "decisions": 1000},
        "provenance": runner.provenance(1, 1.0, 0),
        "rows": [r.tolist() for r in rows],
    }


def made_identity(suite: Suite, spec: str) -> dict[str, Any]:
    """The agent identity a run records: for a registered agent or zoo policy named without options, its real
    fingerprint (and the zoo file's hash), which the leaderboard checks; for any other spec a made-up one."""
    registry = runner.registry_of(suite.game)
    if spec not in registry.names():
        return {"spec": spec, "fingerprint": suite.anchors.get(spec, "0123456789abcdef"), "checkpoint_sha256": None}
    path = registry.zoo().get(spec)
    checkpoint = None if path is None else hashlib.sha256(path.read_bytes()).hexdigest()
    fingerprint = anchor_fingerprint(suite.game, suite.cells[0].deck, spec)
    return {"spec": spec, "fingerprint": fingerprint, "checkpoint_sha256": checkpoint}


def write(results: Path, data: dict[str, Any]) -> Path:
    """A result ``data`` written where the leaderboard reads it: ``results/SUITE/AGENT.json``."""
    path = results / data["suite"]["id"] / result_name(data["agent"]["spec"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))
    return path


def friday13(argv: list[str]) -> tuple[int, str]:
    """``friday13 ARGV`` in this process: its exit code and what it printed on its output."""
    output = io.StringIO()
    try:
        code = main(argv, output_stream=output)
    except SystemExit as stop:
        code = int(stop.code or 0)
    return code, output.getvalue()


def user_module(name: str, source: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fixture's body: a module ``name`` of ``source`` in ``folder``, on ``sys.path`` and forgotten afterwards;
    yields its name (for ``module:factory`` specs)."""
    (folder / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop(name, None)
    yield name
    sys.modules.pop(name, None)
