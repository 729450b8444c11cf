"""Fixtures shared by the benchmark tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from friday13_env.benchmark import command, ratings
from friday13_env.benchmark.suite import get_suite
from tests.benchmark.helpers import made_result, write


@pytest.fixture
def fake_ratings(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """``run_ratings`` as the command calls it, recording its arguments and returning a small result unplayed."""
    pytest.importorskip("openskill")
    calls: list[dict[str, Any]] = []

    def run_ratings(plan: Any, tables: int, seed: int = 0, workers: int | None = None) -> dict[str, Any]:
        calls.append({"plan": plan, "tables": tables, "seed": seed, "workers": workers})
        rating = {"mu": 25.0, "sigma": 8.0, "ordinal": 1.0, "games": 0}
        ratings_of = {spec.label: rating for spec in plan.fingerprints}
        return {"format": ratings.RATINGS_FORMAT, "format_version": 1, "ratings": ratings_of}

    monkeypatch.setattr(command, "run_ratings", run_ratings)
    return calls


@pytest.fixture
def quick_results(tmp_path: Path) -> Path:
    """A results folder of ``random``'s and ``search``'s (made-up) results on the quick card suite."""
    pytest.importorskip("scipy")
    results = tmp_path / "results"
    for index, spec in enumerate(["random", "search"]):
        write(results, made_result(get_suite("card-4p-quick"), spec, seed=index))
    return results
